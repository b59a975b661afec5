"""Large runs on two processes (dslint/run/split.py) report exactly what one process reports.

Each test lints the same tree both ways and compares everything a user sees: the findings
(place, code, severity, message, related places, fixes), the skipped files in order, the
internal errors and the number of files. The split is forced on small trees by lowering its
thresholds; the worker is a real fork.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dslint.run import split
from dslint.config import Settings
from dslint.run.engine import Engine

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or not sys.platform.startswith("linux"), reason="the split forks (Linux)")

DS_BAD = '{"train_batch_size": 16, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8}\n'
DS_GOOD = '{"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1, "zero_optimization": {"stage": 2}}\n'
DS_TYPO = '{"train_micro_batch_size_per_gpu": 2, "zero_optimisation": {"stage": 2}}\n'
DS_SUPPRESSED = '{\n  // dslint: disable=DS201\n  "zero_optimisation": {"stage": 2},\n  "train_micro_batch_size_per_gpu": 2\n}\n'
SWIFT_JSON = '{"model": "Qwen/Qwen2.5-7B-Instruct", "tuner_type": "lora", "deepspeed": "ds/named.json", "per_device_train_batch_size": 1}\n'


def _seen(result) -> dict:
    def where(span):
        if span is None:
            return None
        line, column = span.source.position(span.start)
        return (span.path, line, column)

    return {
        "diagnostics": [
            (where(d.span), d.code, d.severity.value, d.message, list(d.notes), d.help,
             [(r.message, where(r.span)) for r in d.related],
             None if d.fix is None else (d.fix.title, d.fix.applicability, [(e.source.path, e.start, e.end, e.content) for e in d.fix.edits]))
            for d in result.diagnostics
        ],
        "skipped": list(result.skipped),
        "internal_errors": [(e.where, e.message) for e in result.internal_errors],
        "files": result.files,
    }


def _both_ways(root: Path, monkeypatch, *paths: str) -> tuple[dict, dict]:
    monkeypatch.chdir(root)
    monkeypatch.setattr(split, "THRESHOLD", 1)
    monkeypatch.setattr(split, "MIN_SHARE", 1)
    monkeypatch.setattr(split, "workers_allowed", lambda: True)
    calls = []
    real_split, real_take = split.lint_split, split.Adoptable.take

    def recording_split(engine, candidates, share, result):
        calls.append([c.display for c in share])
        return real_split(engine, candidates, share, result)

    def recording_take(self, real):
        listed, document = real_take(self, real)
        ADOPTED.extend([document.path] if document is not None else [])
        return listed, document

    ADOPTED.clear()
    monkeypatch.setattr(split, "lint_split", recording_split)
    monkeypatch.setattr(split.Adoptable, "take", recording_take)
    one = Engine(Settings(root=root)).lint_paths(list(paths) or ["."])
    assert calls == []
    two = Engine(Settings(root=root)).lint_paths(list(paths) or ["."], split=True)
    assert len(calls) == 1 and calls[0], "the run was not split"
    return _seen(one), _seen(two)


ADOPTED: list[str] = []  # files the last split run read here because a launch named them


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


LINKED_TREE = {
    # a DeepSpeed config a launch names: adopted, judged with the launch's world size (4 × 8 × 2 = 64)
    "ds/named.json": DS_BAD,
    "ds/alone.json": DS_BAD,  # standalone: judged by the worker
    "ds/typo.json": DS_TYPO,
    "ds/suppressed.json": DS_SUPPRESSED,  # the suppression is judged where the file is linted
    "ds/good.json": DS_GOOD,
    "ds/package.json": '{"name": "web", "version": "1.0.0"}\n',  # not a DeepSpeed config: skipped
    "ds/broken.json": '{"train_batch_size": 8,,}\n',
    "swift/sft.json": SWIFT_JSON,  # a training config in the worker's share: handed back
    "scripts/train.sh": "deepspeed --num_gpus 2 train.py --deepspeed ../ds/named.json\n",
    "scripts/web.sh": "deepspeed --num_gpus 2 train.py --deepspeed ../ds/package.json\n",  # names a skipped file
    "scripts/swift.sh": "NPROC_PER_NODE=2 swift sft ../swift/sft.json\n",
    "train.yaml": "model_name_or_path: m\nlearning_rate: 1e-4\ndeepspeed: ds/typo.json\nper_device_train_batch_size: 1\n",
}


def test_a_linked_tree_is_reported_the_same(tmp_path, monkeypatch):
    _tree(tmp_path, LINKED_TREE)
    one, two = _both_ways(tmp_path, monkeypatch)
    assert one == two
    said = [(d[0][0], d[1], " ".join([d[3], *d[4]])) for d in two["diagnostics"]]  # the headline and its notes

    def has(path, code, words):
        return any(p == path and c == code and words in m for p, c, m in said)

    assert has("ds/named.json", "DS101", "world size 2")  # adopted: judged with the launch
    assert sorted(ADOPTED) == ["ds/named.json", "ds/typo.json"]
    assert has("ds/alone.json", "DS101", "every world size")  # the worker's, standalone
    assert has("ds/named.json", "DS250", "ms-swift")  # the handed-back training JSON was linked
    assert has("ds/package.json", "DS202", "'name'")  # skipped as listed, read for the launch
    assert has("ds/suppressed.json", "DS004", "DS201")  # suppressions judged by the worker
    assert ("ds/package.json", "JSON, but neither a DeepSpeed config nor training arguments") in two["skipped"]


def test_the_adopted_file_is_linted_once(tmp_path, monkeypatch):
    _tree(tmp_path, LINKED_TREE)
    one, two = _both_ways(tmp_path, monkeypatch)
    named = [d for d in two["diagnostics"] if d[0][0] == "ds/named.json"]
    assert len(named) == len(set(map(json.dumps, named)))
    assert one["files"] == two["files"]


def test_explicit_files_and_a_symlink(tmp_path, monkeypatch):
    _tree(tmp_path, LINKED_TREE)
    (tmp_path / "ds" / "link.json").symlink_to(tmp_path / "ds" / "named.json")
    one, two = _both_ways(tmp_path, monkeypatch, "scripts/train.sh", "ds/link.json", "ds/named.json", "ds/alone.json")
    assert one == two


@pytest.mark.parametrize("stage", ["before handing back", "while linting"])
def test_a_failing_worker_changes_nothing(tmp_path, monkeypatch, stage):
    _tree(tmp_path, LINKED_TREE)
    parent = os.getpid()
    if stage == "before handing back":
        def broken(self, candidate, result, data=None):
            if os.getpid() != parent:
                raise RuntimeError("worker broke while reading")
            return real_read(self, candidate, result, data)

        real_read = Engine.read
        monkeypatch.setattr(Engine, "read", broken)
    else:
        def broken(self, documents, result=None, overrides=None, **kwargs):
            if os.getpid() != parent:
                raise RuntimeError("worker broke while linting")
            return real_lint(self, documents, result, overrides, **kwargs)

        real_lint = Engine.lint_documents
        monkeypatch.setattr(Engine, "lint_documents", broken)
    one, two = _both_ways(tmp_path, monkeypatch)
    assert one == two
    assert one["diagnostics"]


def test_small_runs_and_workers_1_stay_on_one_process(tmp_path, monkeypatch):
    _tree(tmp_path, {"a.json": DS_BAD})
    monkeypatch.chdir(tmp_path)
    from dslint.files.discovery import discover

    candidates, _ = discover(["."], [], tmp_path)
    assert split.worker_share(candidates) == []  # below THRESHOLD
    monkeypatch.setattr(split, "THRESHOLD", 1)
    monkeypatch.setattr(split, "MIN_SHARE", 1)
    monkeypatch.setenv("DSLINT_WORKERS", "1")
    assert split.worker_share(candidates) == []


def test_the_corpus_is_reported_the_same(corpus):
    """The real thing: the CLI over the shared corpus, split (its default above 300 files) and not."""
    from dslint.files.discovery import discover

    candidates, _ = discover([str(corpus)], [], corpus, cwd=corpus)
    if not split.workers_allowed():
        pytest.skip("one CPU here: the CLI would not split")
    assert len(split.worker_share(candidates)) > split.MIN_SHARE  # so the first run below is split
    env = dict(os.environ, NO_COLOR="1")
    env.pop("DSLINT_WORKERS", None)
    command = [sys.executable, "-m", "dslint", "check", "--no-config", "--format", "json", "-v", "."]
    two = subprocess.run(command, cwd=corpus, env=env, capture_output=True, text=True, check=False)
    one = subprocess.run(command, cwd=corpus, env=dict(env, DSLINT_WORKERS="1"), capture_output=True, text=True, check=False)
    assert two.returncode == one.returncode == 1
    assert two.stdout == one.stdout
    assert two.stderr == one.stderr
    assert one.stdout.count('"code"') > 100


def test_split_does_not_import_the_engine():
    """The engine imports dslint.run.split; split reads and lints through the engine object it is
    given (Engine.read, Engine.lint_documents), so that there is no import circle."""
    import ast

    tree = ast.parse(Path(split.__file__).read_text(encoding="utf-8"))
    runtime_imports = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            node.body = []  # annotations only
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            runtime_imports.add(node.module)
        elif isinstance(node, ast.Import):
            runtime_imports.update(alias.name for alias in node.names)
    assert "dslint.run.engine" not in runtime_imports
