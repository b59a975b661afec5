"""The integrations shipped in the repository root: pre-commit hooks and the GitHub Action.

The slow tests install dslint for real, the way users get it: ``pre-commit try-repo`` builds a
virtual environment and pip-installs this repository into it, and the action's install step
does the same into ``$RUNNER_TEMP``. Both install a snapshot of the working tree (committed in
a temporary git repository), so uncommitted changes are what is tested and a clean checkout
works too. They need network access to PyPI for dslint's dependencies.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
HOOKS = ROOT / ".pre-commit-hooks.yaml"
ACTION = ROOT / "action.yml"

BROKEN = '{"train_batch_size": "32", "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8}\n'
FIXED = '{"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8}\n'
# Only these rules are run, so that rules added later do not change what the tests expect.
RULES = "DS101,DS102"
MISMATCH = '{"train_batch_size": 48, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8}\n'
CLEAN = '{"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8}\n'

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed: pre-commit and the snapshot repository need it")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_", "DSLINT_")) and k != "NO_COLOR"}
    env["NO_COLOR"] = "1"
    env.update(extra)
    return env


def _git(cwd: Path, *args: str) -> str:
    run = subprocess.run(
        ["git", "-c", "user.name=dslint tests", "-c", "user.email=tests@example.invalid", "-c", "commit.gpgsign=false", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=_env(),
    )
    assert run.returncode == 0, f"git {' '.join(args)} failed: {run.stderr}"
    return run.stdout


def _snapshot(destination: Path) -> Path:
    """This repository's working tree as it is now (ignored files left out), committed in a new repository."""
    if (ROOT / ".git").exists():
        listing = _git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
        names = [name for name in listing.split("\0") if name]
    else:  # an unpacked source tree without git metadata
        skip = {"__pycache__", ".pytest_cache", ".hypothesis", ".venv", "build", "dist", ".ruff_cache"}
        names = [
            p.relative_to(ROOT).as_posix()
            for p in ROOT.rglob("*")
            if p.is_file() and not skip & set(p.relative_to(ROOT).parts) and not any(part.endswith(".egg-info") for part in p.parts)
        ]
    for name in names:
        source = ROOT / name
        if not source.is_file():  # deleted in the working tree, still in the index
            continue
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    _git(destination, "init", "-q")
    _git(destination, "add", "-A")
    _git(destination, "commit", "-q", "--no-verify", "-m", "snapshot of the working tree")
    return destination


# ---- pre-commit ------------------------------------------------------------------------------


def test_pre_commit_hooks_are_declared():
    hooks = {hook["id"]: hook for hook in yaml.safe_load(HOOKS.read_text(encoding="utf-8"))}
    assert set(hooks) == {"dslint", "dslint-fix"}
    assert hooks["dslint"]["entry"] == "dslint check --force-exclude --"  # a file named -x.json stays a file
    assert hooks["dslint-fix"]["entry"] == "dslint check --force-exclude --fix --"
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["types"] == ["text"]
        assert hook["require_serial"] is True
    assert "require_serial" in HOOKS.read_text(encoding="utf-8").split("- id:")[0], "the choice of require_serial is explained"


@pytest.mark.parametrize("name, passed", [
    ("ds_config.json", True), ("configs/zero3.JSON", True), ("conf.hjson", True), ("conf.jsonc", True), ("train.yaml", True),
    ("a/b.yml", True), ("run.sh", True), ("run.bash", True), ("job.slurm", True), ("jobs/train.sbatch", True), ("scripts/train", True),
    ("README.md", False), ("train.py", False), (".envrc", False), ("data.csv", False),
])
def test_the_hooks_pass_every_name_dslint_reads(name, passed):
    """pre-commit matches `files` with re.search; identify gives no `shell` type to .slurm, .sbatch or a non-executable script."""
    from dslint.files.discovery import CANDIDATE_SUFFIXES

    for hook in yaml.safe_load(HOOKS.read_text(encoding="utf-8")):
        assert bool(re.search(hook["files"], name)) is passed, (hook["id"], name)
    suffix = "." + name.rsplit(".", 1)[-1].lower() if "." in name.rsplit("/", 1)[-1] else ""
    if suffix in CANDIDATE_SUFFIXES:
        assert passed


def _readme_pre_commit_config() -> str:
    (body,) = [body for lang, body in _integration_blocks() if lang == "yaml" and "repos:" in body]
    return body


def test_the_readme_hook_is_the_shipped_hook():
    (repo,) = yaml.safe_load(_readme_pre_commit_config())["repos"]
    assert repo["repo"] == "local"
    (hook,) = repo["hooks"]
    (shipped,) = [h for h in yaml.safe_load(HOOKS.read_text(encoding="utf-8")) if h["id"] == hook["id"]]
    assert hook["language"] == "system"  # the dslint installed where you commit
    for key in ("entry", "types", "files", "require_serial"):
        assert hook[key] == shipped[key], key
    assert "world-size" not in _readme_pre_commit_config()


HOOK_PROJECT = {
    "dslint.toml": 'exclude = ["third_party"]\n',
    "configs/ds_config.json": MISMATCH,
    "configs/zero2.json": '{"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 4, "fp16": {"enabled": true},\n'
                          ' "zero_optimization": {"stage": 2}}\n',
    "scripts/train.sh": "#!/bin/bash\ntorchrun --nproc_per_node 8 train.py --deepspeed configs/zero2.json --bf16 True \\\n"
                        "    --per_device_train_batch_size 2 --gradient_accumulation_steps 4 --output_dir out\n",
    "scripts/job.slurm": "#!/bin/bash\n#SBATCH --nodes=1\ndeepspeed --num_gpus 8 pretrain.py \\ \n    --deepspeed_config configs/ds_config.json\n",
    "third_party/vendor.json": MISMATCH,
    "data/train.json": "[" + ",".join(['{"instruction": "x", "output": "y"}'] * 3000) + "]\n",
}


@needs_git
def test_the_readme_pre_commit_snippet_works_verbatim(tmp_path):
    """The README's .pre-commit-config.yaml, as written, in a fresh repository, with an installed dslint:
    the hook fails with the findings `dslint check .` reports, .slurm scripts included."""
    pytest.importorskip("pre_commit", reason="pre-commit is a test dependency: pip install -e '.[test]'")
    project = tmp_path / "project"
    project.mkdir()
    _git(project, "init", "-q")
    (project / ".pre-commit-config.yaml").write_text(_readme_pre_commit_config(), encoding="utf-8")
    for name, text in HOOK_PROJECT.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text, encoding="utf-8")
    _git(project, "add", "-A")
    path = _dslint_on_path(tmp_path)
    env = _env(PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), PRE_COMMIT_COLOR="never", PATH=path)

    hook = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=600)
    assert hook.returncode == 1, hook.stdout + hook.stderr
    check = subprocess.run(["dslint", "check", "."], cwd=project, env=env, capture_output=True, text=True, timeout=600)
    assert check.returncode == 1 and check.stdout.startswith("configs/ds_config.json:1:22: DS101 ")
    assert check.stdout in hook.stdout, hook.stdout  # the same report, word for word
    assert "scripts/job.slurm:3:" in check.stdout  # passed by the hook's `files`: the space after a backslash
    assert "DS301" in check.stdout or "DS4" in check.stdout  # fp16 config under --bf16: the launch was linked
    assert "third_party" not in hook.stdout and "data/train.json" not in hook.stdout

    # staged one at a time, as a commit usually is: the same findings for that file
    only = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--files", "configs/ds_config.json", "--color", "never"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=600)
    alone = subprocess.run(["dslint", "check", "configs/ds_config.json"], cwd=project, env=env, capture_output=True, text=True)
    assert only.returncode == 1 and alone.stdout in only.stdout


@needs_git
def test_the_hook_reads_a_file_whose_name_starts_with_a_dash(tmp_path):
    """pre-commit appends the staged names to the entry: `-x.json` is a file to the hook, not an
    option (the entry ends with `--`). A clean one passes; a broken one is reported by its name."""
    pytest.importorskip("pre_commit", reason="pre-commit is a test dependency: pip install -e '.[test]'")
    project = tmp_path / "project"
    project.mkdir()
    _git(project, "init", "-q")
    (project / ".pre-commit-config.yaml").write_text(_readme_pre_commit_config(), encoding="utf-8")
    (project / "-x.json").write_text(CLEAN, encoding="utf-8")
    (project / "dslint.toml").write_text(f"select = {json.dumps(RULES.split(','))}\n", encoding="utf-8")
    _git(project, "add", "-A")
    env = _env(PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), PRE_COMMIT_COLOR="never", PATH=_dslint_on_path(tmp_path))

    def hook() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"],
                              cwd=project, env=env, capture_output=True, text=True, timeout=600)

    passed = hook()
    assert passed.returncode == 0 and "Passed" in passed.stdout, passed.stdout + passed.stderr
    (project / "-x.json").write_text(BROKEN, encoding="utf-8")
    _git(project, "add", "-A")
    failed = hook()
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "-x.json:1:22: DS102 [error]" in failed.stdout, failed.stdout


@pytest.mark.slow
@needs_git
def test_pre_commit_try_repo_check_then_fix(tmp_path):
    """The check hook fails on a broken config, the fix hook repairs it (and fails: it changed a file), then check passes."""
    pytest.importorskip("pre_commit", reason="pre-commit is a test dependency: pip install -e '.[test]'")
    hooks_repo = _snapshot(tmp_path / "dslint-repo")
    project = tmp_path / "project"
    project.mkdir()
    _git(project, "init", "-q")
    (project / "ds_config.json").write_text(BROKEN, encoding="utf-8")
    (project / "dslint.toml").write_text(f"select = {json.dumps(RULES.split(','))}\n", encoding="utf-8")
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "--no-verify", "-m", "a broken DeepSpeed config")
    env = _env(PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), PRE_COMMIT_COLOR="never")

    def try_repo(hook: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "try-repo", str(hooks_repo), hook, "--all-files", "--color", "never"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )

    check = try_repo("dslint")
    assert check.returncode == 1, check.stdout + check.stderr
    assert "ds_config.json:1:22: DS102 [error] train_batch_size is a string ('32')" in check.stdout, check.stdout
    assert (project / "ds_config.json").read_text(encoding="utf-8") == BROKEN

    fix = try_repo("dslint-fix")
    assert fix.returncode == 1, fix.stdout + fix.stderr  # pre-commit fails a hook that modified files
    assert "files were modified by this hook" in fix.stdout, fix.stdout
    assert (project / "ds_config.json").read_text(encoding="utf-8") == FIXED

    _git(project, "add", "-A")  # as a user stages the fixes (pre-commit stashes unstaged changes)
    again = try_repo("dslint")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Passed" in again.stdout


@needs_git
def test_pre_commit_fails_on_a_single_staged_config_and_names_its_launch(tmp_path):
    """Pre-commit passes only the staged JSON: dslint still reads the launch that names it (issue 13)."""
    pytest.importorskip("pre_commit", reason="pre-commit is a test dependency: pip install -e '.[test]'")
    from programs import HF_TRAINER

    hooks_repo = _snapshot(tmp_path / "dslint-repo")
    project = tmp_path / "project"
    (project / "scripts").mkdir(parents=True)
    (project / "configs").mkdir()
    _git(project, "init", "-q")
    (project / "scripts" / "train.sh").write_text(
        "torchrun --nproc_per_node 4 train.py --deepspeed configs/ds.json --bf16 True --per_device_train_batch_size 2\n")
    (project / "train.py").write_text(HF_TRAINER)
    config = project / "configs" / "ds.json"
    config.write_text('{"bf16": {"enabled": "auto"}, "train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}}\n')
    (project / "dslint.toml").write_text('select = ["DS301"]\n')
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "--no-verify", "-m", "a launch and its config")
    config.write_text('{"fp16": {"enabled": true}, "train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}}\n')
    _git(project, "add", "configs/ds.json")  # the only staged file
    env = _env(PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), PRE_COMMIT_COLOR="never")
    hook = subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(hooks_repo), "dslint", "--color", "never"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=900)
    assert hook.returncode == 1, hook.stdout + hook.stderr
    assert "configs/ds.json:1:22: DS301 [error]" in hook.stdout, hook.stdout
    assert "scripts/train.sh:1:50:" in hook.stdout, hook.stdout  # the launch that reads it, in a related line


# ---- the GitHub Action -------------------------------------------------------------------------


def _action() -> dict:
    return yaml.safe_load(ACTION.read_text(encoding="utf-8"))


def _step(name: str) -> dict:
    (step,) = [s for s in _action()["runs"]["steps"] if s["name"] == name]
    return step


def _expand(value: str, inputs: dict[str, str], action_path: Path) -> str:
    """Evaluate the only expressions the action uses: ``${{ inputs.NAME }}``, ``${{ github.action_path }}`` and
    ``${{ github.action_repository }}``."""

    def one(match: re.Match) -> str:
        expression = match.group(1).strip()
        if expression == "github.action_path":
            return str(action_path)
        if expression == "github.action_repository":
            return "dslint/dslint"
        assert expression.startswith("inputs."), expression
        return inputs[expression[len("inputs.") :]]

    return re.sub(r"\$\{\{(.*?)\}\}", one, value)


def _inputs(**given: str) -> dict[str, str]:
    values = {name: spec.get("default", "") for name, spec in _action()["inputs"].items()}
    values.update({name.replace("_", "-"): value for name, value in given.items()})
    return values


def _run_step(name: str, cwd: Path, inputs: dict[str, str], env: dict[str, str], action_path: Path = ROOT) -> subprocess.CompletedProcess:
    step = _step(name)
    step_env = {key: _expand(str(value), inputs, action_path) for key, value in step.get("env", {}).items()}
    return subprocess.run(
        ["bash", "-c", step["run"]],
        cwd=cwd,
        env={**env, **step_env},
        capture_output=True,
        text=True,
        timeout=900,
    )


def _dslint_on_path(tmp_path: Path) -> str:
    """A PATH whose `dslint` is this interpreter's dslint (the action's install step puts one there)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "dslint"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m dslint "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    return f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"


def test_action_structure():
    action = _action()
    assert action["name"] == "dslint" and action["description"]
    assert set(action["inputs"]) == {"paths", "args", "sarif-file", "version"}
    assert action["inputs"]["paths"]["default"] == "."
    for name in ("args", "sarif-file", "version"):
        assert action["inputs"][name]["default"] == "" and action["inputs"][name]["required"] is False
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    assert [s["name"] for s in steps] == ["Install dslint", "Run dslint"]
    for step in steps:
        assert step["shell"] == "bash"
        assert "${{" not in step["run"], "inputs reach the scripts through env, never as text inside them"
    install = _step("Install dslint")
    assert install["env"]["DSLINT_ACTION_PATH"] == "${{ github.action_path }}"
    assert '"$DSLINT_ACTION_PATH"' in install["run"] and "pip install" in install["run"]
    assert 'echo "$venv/bin" >> "$GITHUB_PATH"' in install["run"]


def test_action_run_step_with_sarif(tmp_path):
    project = tmp_path / "project"
    (project / "configs").mkdir(parents=True)
    (project / "configs" / "ds.json").write_text(MISMATCH, encoding="utf-8")
    env = _env(GITHUB_ACTIONS="true", PATH=_dslint_on_path(tmp_path))

    run = _run_step("Run dslint", project, _inputs(sarif_file="reports/dslint.sarif"), env)
    assert run.returncode == 1, run.stderr
    assert "::error file=configs/ds.json,line=1,col=22," in run.stdout  # annotations: the github format
    log = json.loads((project / "reports" / "dslint.sarif").read_text(encoding="utf-8"))
    assert log["version"] == "2.1.0"
    assert "DS101" in [r["ruleId"] for r in log["runs"][0]["results"]]

    (project / "configs" / "ds.json").write_text(CLEAN, encoding="utf-8")
    run = _run_step("Run dslint", project, _inputs(sarif_file="reports/dslint.sarif", paths="configs", args=f"--select {RULES} --fail-on error"), env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert json.loads((project / "reports" / "dslint.sarif").read_text(encoding="utf-8"))["runs"][0]["results"] == []


def test_action_run_step_without_sarif_and_with_bad_args(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "ds.json").write_text(MISMATCH, encoding="utf-8")
    env = _env(GITHUB_ACTIONS="true", PATH=_dslint_on_path(tmp_path))

    run = _run_step("Run dslint", project, _inputs(args=f"--select {RULES} --exit-zero"), env)
    assert run.returncode == 0 and "::error file=ds.json" in run.stdout, run.stderr
    # no SARIF unless asked (the run cache, as ruff's, is a folder of its own that ignores itself)
    assert sorted(p.name for p in project.iterdir() if p.name != ".dslint_cache") == ["ds.json"]

    run = _run_step("Run dslint", project, _inputs(args="--no-such-option"), env)
    assert run.returncode == 2, run.stdout + run.stderr


@pytest.mark.slow
@needs_git
def test_action_installs_a_working_dslint(tmp_path):
    """The install step builds dslint from the action's path into a venv: a real, non-editable install.

    The installed package must carry the shipped schemas (`dslint schema` from outside the
    repository), and the run step must work with it.
    """
    action_path = _snapshot(tmp_path / "action")
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    github_path = tmp_path / "github-path"
    github_path.write_text("", encoding="utf-8")
    python_dir = str(Path(sys.executable).parent)  # a python3 of a supported version, as on the runner
    env = _env(RUNNER_TEMP=str(runner_temp), GITHUB_PATH=str(github_path), PATH=f"{python_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    outside = tmp_path / "elsewhere"
    outside.mkdir()

    install = _run_step("Install dslint", outside, _inputs(), env, action_path=action_path)
    assert install.returncode == 0, install.stdout + install.stderr
    (bin_dir,) = github_path.read_text(encoding="utf-8").split()
    assert Path(bin_dir) == runner_temp / "dslint-venv" / "bin"
    assert "dslint 0." in install.stdout

    located = subprocess.run([f"{bin_dir}/python", "-c", "import dslint; print(dslint.__file__)"], cwd=outside, capture_output=True, text=True, env=_env())
    assert located.stdout.startswith(str(runner_temp)), located.stdout + located.stderr  # not this checkout
    distribution = subprocess.run([f"{bin_dir}/python", "-c", "from importlib import metadata; print(metadata.version('dslint-launch'))"],
                                  cwd=outside, capture_output=True, text=True, env=_env())
    assert distribution.returncode == 0 and distribution.stdout.startswith("0."), distribution.stderr  # installed under its own name

    shipped = sorted((ROOT / "schemas").glob("*.schema.json"))
    assert shipped, "schemas/ holds no *.schema.json"
    listing = subprocess.run([f"{bin_dir}/dslint", "schema"], cwd=outside, capture_output=True, text=True, env=_env())
    assert listing.returncode == 0, listing.stderr
    assert [line.split()[0] for line in listing.stdout.splitlines()] == [p.name[: -len(".schema.json")] for p in shipped]
    for schema in shipped:
        name = schema.name[: -len(".schema.json")]
        printed = subprocess.run([f"{bin_dir}/dslint", "schema", name], cwd=outside, capture_output=True, env=_env())
        assert printed.returncode == 0, printed.stderr
        assert printed.stdout == schema.read_bytes()

    project = tmp_path / "project"
    project.mkdir()
    (project / "ds.json").write_text(MISMATCH, encoding="utf-8")
    run_env = _env(GITHUB_ACTIONS="true", PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    run = _run_step("Run dslint", project, _inputs(sarif_file="dslint.sarif", args=f"--select {RULES}"), run_env)
    assert run.returncode == 1 and run.stdout.startswith("::error file=ds.json,line=1,col=22,"), run.stdout + run.stderr
    assert [r["ruleId"] for r in json.loads((project / "dslint.sarif").read_text(encoding="utf-8"))["runs"][0]["results"]] == ["DS101"]


def test_the_action_installs_a_ref_of_its_own_repository_never_the_index_project():
    """The package index's "dslint" is another project: the version input names a ref of this
    repository, installed from there under this project's own distribution name."""
    install = _step("Install dslint")
    assert install["env"]["DSLINT_ACTION_REPOSITORY"] == "${{ github.action_repository }}"
    assert '"dslint-launch @ git+https://github.com/$DSLINT_ACTION_REPOSITORY@$DSLINT_VERSION"' in install["run"]
    assert not re.search(r"\bdslint==|install[^\n]*[\s\"']dslint[\s\"']", install["run"])
    assert 'name = "dslint-launch"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def test_no_readme_line_installs_another_project():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    installs = [line for line in readme.splitlines() if "pip install" in line]
    assert installs
    assert not [line for line in installs if re.search(r"pip install\s+(-U\s+)?[\"']?dslint(?![-\w])", line)]
    refs = re.findall(r"uses: dslint/dslint@(\S+)", readme)
    assert refs == ["main"]  # a ref this repository has (it has no release tags yet)


# ---- the README's snippets ----------------------------------------------------------------------


def _integration_blocks() -> list[tuple[str, str]]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Integrations\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```(\w+)\n(.*?)```", section, re.DOTALL)


def test_readme_integration_snippets_match_the_shipped_files():
    blocks = _integration_blocks()
    yamls = [yaml.safe_load(body) for lang, body in blocks if lang == "yaml"]
    (pre_commit,) = [y for y in yamls if "repos" in y]
    (workflow,) = [y for y in yamls if "jobs" in y]
    hook_ids = {hook["id"] for hook in yaml.safe_load(HOOKS.read_text(encoding="utf-8"))}
    assert {hook["id"] for repo in pre_commit["repos"] for hook in repo["hooks"]} <= hook_ids
    steps = workflow["jobs"]["dslint"]["steps"]
    (ours,) = [s for s in steps if s["uses"].startswith("dslint/dslint@")]
    assert set(ours["with"]) <= set(_action()["inputs"])
    (upload,) = [s for s in steps if s["uses"].startswith("github/codeql-action/upload-sarif@")]
    assert upload["with"]["sarif_file"] == ours["with"]["sarif-file"]
    (settings,) = [json.loads(body) for lang, body in blocks if lang == "json"]
    (entry,) = settings["json.schemas"]
    assert (ROOT / entry["url"]).is_file()
    assert {"**/ds_config*.json", "**/zero*.json", "**/deepspeed*.json"} <= set(entry["fileMatch"])
