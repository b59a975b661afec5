"""The run cache (.dslint_cache/): an unchanged run is reported again without linting; any change runs again."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from programs import HF_TRAINER

LAUNCH = "torchrun --nproc_per_node 4 train.py --deepspeed ds.json --per_device_train_batch_size 2\n"
MISMATCH = '{"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2}}\n'


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "train.sh").write_text(LAUNCH)
    (tmp_path / "ds.json").write_text(MISMATCH)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DSLINT_CACHE_DIR", raising=False)  # the cache where dslint runs, as users get it
    monkeypatch.delenv("DSLINT_NO_CACHE", raising=False)
    return tmp_path


def check(*args: str, expect_lint: bool | None = None, monkeypatch=None) -> tuple[int, str]:
    """Run `dslint check` in this process; with ``expect_lint``, assert whether it linted or replayed."""
    from dslint import cli
    from dslint.run import workspace

    calls = []
    if monkeypatch is not None:
        original = workspace.find
        monkeypatch.setattr(workspace, "find", lambda *a, **k: calls.append(a) or original(*a, **k))
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exit_:
        cli.main(["check", "--format", "json", "--select", "DS301,DS601,DS303", *args])
    if expect_lint is not None:
        assert bool(calls) is expect_lint, "linted" if calls else "replayed"
    return exit_.value.code, out.getvalue()


def codes(report: str) -> list[str]:
    return sorted(d["code"] for d in json.loads(report)["diagnostics"])


def test_an_unchanged_run_is_replayed_with_the_same_report(project, monkeypatch):
    first = check(".", expect_lint=True, monkeypatch=monkeypatch)
    assert codes(first[1]) == ["DS301"]
    assert check(".", expect_lint=False, monkeypatch=monkeypatch) == first
    assert (project / ".dslint_cache" / ".gitignore").read_text().splitlines()[-1] == "*"


def test_a_changed_file_runs_again(project, monkeypatch):
    check(".", monkeypatch=monkeypatch)
    (project / "train.sh").write_text("NPROC_PER_NODE=8 \\\n\n" + LAUNCH)
    status, report = check(".", expect_lint=True, monkeypatch=monkeypatch)
    assert codes(report) == ["DS301", "DS601"]


def test_a_new_file_in_a_walked_folder_runs_again(project, monkeypatch):
    check(".", monkeypatch=monkeypatch)
    (project / "more.sh").write_text("deepspeed train.py --deepspeed --deepspeed_config missing.json\n")
    status, report = check(".", expect_lint=True, monkeypatch=monkeypatch)
    assert "DS303" in codes(report)


def test_a_file_that_appears_where_dslint_looked_for_it_runs_again(project, monkeypatch):
    """train.py was missing (HF Trainer only assumed: a warning); once it is there, an error."""
    severity = lambda report: [d["severity"] for d in json.loads(report)["diagnostics"]]  # noqa: E731
    assert severity(check(".", monkeypatch=monkeypatch)[1]) == ["warning"]
    (project / "train.py").write_text(HF_TRAINER)
    assert severity(check(".", expect_lint=True, monkeypatch=monkeypatch)[1]) == ["error"]


def test_changed_settings_run_again(project, monkeypatch):
    check(".", monkeypatch=monkeypatch)
    (project / "dslint.toml").write_text('ignore = ["DS301"]\n')
    assert codes(check(".", expect_lint=True, monkeypatch=monkeypatch)[1]) == []


def test_other_options_are_another_run(project, monkeypatch):
    check(".", monkeypatch=monkeypatch)
    check(".", "--world-size", "4", expect_lint=True, monkeypatch=monkeypatch)
    check(".", expect_lint=False, monkeypatch=monkeypatch)


def test_a_damaged_cache_is_not_used(project, monkeypatch):
    check(".", monkeypatch=monkeypatch)
    for entry in (project / ".dslint_cache").rglob("*.pickle"):
        entry.write_bytes(b"not a pickle")
    assert codes(check(".", expect_lint=True, monkeypatch=monkeypatch)[1]) == ["DS301"]


@pytest.mark.parametrize("how", ["--no-cache", "DSLINT_NO_CACHE"])
@pytest.mark.parametrize("path", [".", "ds.json"])  # a named config also reads its launch context
def test_the_cache_can_be_turned_off(project, monkeypatch, how, path):
    args = ["--no-cache", path] if how == "--no-cache" else [path]
    if how == "DSLINT_NO_CACHE":
        monkeypatch.setenv("DSLINT_NO_CACHE", "1")
    assert codes(check(*args, monkeypatch=monkeypatch)[1]) == ["DS301"]
    check(*args, expect_lint=True, monkeypatch=monkeypatch)
    assert not (project / ".dslint_cache").exists()  # nothing read from it, nothing written


def test_fixing_never_uses_the_cache(project, monkeypatch):
    (project / "train.py").write_text(HF_TRAINER)
    check(".", monkeypatch=monkeypatch)
    status, _ = check("--fix", ".", expect_lint=True, monkeypatch=monkeypatch)
    assert json.loads((project / "ds.json").read_text())["train_micro_batch_size_per_gpu"] == "auto"


def test_the_cache_folder_is_never_linted(project):
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSLINT_")}
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-m", "dslint", "check", "-v", "--exit-zero", "."], cwd=project, capture_output=True,
                              text=True, env=env, timeout=120)
        assert ".dslint_cache" not in proc.stdout + proc.stderr


def test_a_config_named_alone_is_replayed_too(project, monkeypatch):
    """The launch context reads the name index in the cache folder; that never counts as a change."""
    (project / "train.py").write_text(HF_TRAINER)
    first = check("ds.json", expect_lint=True, monkeypatch=monkeypatch)
    assert codes(first[1]) == ["DS301"]
    assert check("ds.json", expect_lint=False, monkeypatch=monkeypatch) == first


def _documents(project):
    return sorted((project / ".dslint_cache").glob("*/documents/*.pickle"))


def test_a_context_launch_is_parsed_once_while_its_config_changes(project, monkeypatch):
    """The launch script read for a named config's context is kept parsed; each edit of the config
    is linted against it again, with the same findings as a run that parses it afresh."""
    from dslint.documents import shell

    assert codes(check("ds.json")[1]) == ["DS301"]
    kept = _documents(project)
    assert len(kept) == 1  # train.sh: the config named on the command line is never kept

    parsed = []
    original = shell.parse_script
    monkeypatch.setattr(shell, "parse_script", lambda *a, **k: parsed.append(a) or original(*a, **k))
    (project / "ds.json").write_text(MISMATCH.replace("4", "8"))
    with_cache = check("ds.json")
    assert parsed == [] and codes(with_cache[1]) == ["DS301"]
    assert with_cache == check("--no-cache", "ds.json")
    assert len(parsed) == 1


def test_an_edited_launch_is_parsed_again(project, monkeypatch):
    check("ds.json")
    (project / "train.sh").write_text(LAUNCH.replace("--per_device_train_batch_size 2", "--per_device_train_batch_size 4"))
    assert codes(check("ds.json")[1]) == []  # the launch now agrees with the config
    assert len(_documents(project)) == 2


def test_a_damaged_document_is_read_again(project):
    check("ds.json")
    for kept in _documents(project):
        kept.write_bytes(b"not a pickle")
    (project / "ds.json").write_text(MISMATCH.replace("4", "8"))
    assert codes(check("ds.json")[1]) == ["DS301"]


def test_a_launch_that_starts_naming_the_config_runs_again(project, monkeypatch):
    """A script that did not name the config is answered from the reference index without being
    opened; when it is edited to name it, the named config's run is not replayed."""
    (project / "train.sh").write_text("echo nothing here\n")
    check("--fail-on", "error", "ds.json")  # another run reads train.sh into the reference index
    assert codes(check("ds.json", monkeypatch=monkeypatch)[1]) == []
    assert codes(check("ds.json", expect_lint=False, monkeypatch=monkeypatch)[1]) == []
    (project / "train.sh").write_text(LAUNCH)
    assert codes(check("ds.json", expect_lint=True, monkeypatch=monkeypatch)[1]) == ["DS301"]


class _Marker:
    """A pickle that, when loaded, writes a file: what a cache someone else wrote could do."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_a_cache_file_this_user_did_not_seal_is_never_unpickled(tmp_path, monkeypatch):
    import pickle
    import subprocess
    import sys

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    monkeypatch.delenv("DSLINT_CACHE_DIR", raising=False)  # the cache where dslint runs, as users get it
    monkeypatch.delenv("DSLINT_NO_CACHE", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    (project / "ds.json").write_text('{"train_batch_size": 3, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1}')
    (project / "run.sh").write_text("deepspeed --num_gpus 2 train.py --deepspeed ds.json\n")

    def run(*flags):
        return subprocess.run([sys.executable, "-m", "dslint", *flags, "."], cwd=project, capture_output=True, text=True).stdout

    first = run()
    files = [p for p in (project / ".dslint_cache").rglob("*.pickle")]
    assert files, "the run stored its results"
    marker = tmp_path / "ran"
    for path in files:  # what a repository could carry in its .dslint_cache
        path.write_bytes(pickle.dumps(_Marker(marker)))
    assert run() == first == run("--no-cache")
    assert not marker.exists()


def test_sealed_files_read_back_only_with_the_key_that_wrote_them(tmp_path, monkeypatch):
    from dslint.run import cache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "a"))
    cache._secret.cache_clear()
    target = tmp_path / "x.pickle"
    cache.write_sealed(target, b"data")
    assert cache.read_sealed(target) == b"data"
    assert oct((tmp_path / "a" / "dslint" / "secret").stat().st_mode & 0o777) == "0o600"
    target.write_bytes(target.read_bytes()[:-1] + b"X")  # changed after it was written
    assert cache.read_sealed(target) is None
    cache.write_sealed(target, b"data")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "b"))  # another user's key
    cache._secret.cache_clear()
    assert cache.read_sealed(target) is None
    cache._secret.cache_clear()
