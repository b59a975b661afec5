"""The repository's own lookups of a key (dslint.evidence.project_keys), asked by DS202 for configs no launch reaches."""

from __future__ import annotations

import os
from pathlib import Path

from dslint.evidence import project_keys
from dslint.run.cache import Recorder
from dslint.config import Settings
from dslint.run.engine import Engine
from dslint.evidence.project_keys import ProjectKeys


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_every_lookup_form_counts_on_any_expression(tmp_path):
    write(tmp_path, {"a.py": 'x = load()["alpha"]\n', "b.py": 'y = cfg.data.get("beta", 1)\n',
                     "c.py": 'if "gamma" not in self.cfg:\n    pass\n', "d.py": "z = kwargs.pop('delta')\n"})
    keys = ProjectKeys(cwd=tmp_path)
    assert keys.reader(str(tmp_path), "alpha").where() == "a.py:1"
    assert keys.reader(str(tmp_path), "beta").where() == "b.py:1"
    assert keys.reader(str(tmp_path), "gamma").where() == "c.py:1"
    assert keys.reader(str(tmp_path), "delta").where() == "d.py:1"
    assert keys.reader(str(tmp_path), "epsilon") is None


def test_skipped_folders_are_not_read(tmp_path):
    lookup = 'v = cfg["lora"]\n'
    write(tmp_path, {"node_modules/p/x.py": lookup, "lib/site-packages/p/x.py": lookup, ".git/hooks/x.py": lookup,
                     "env/pyvenv.cfg": "home = /usr\n", "env/lib/x.py": lookup, "third/__pycache__/x.py": lookup})
    assert ProjectKeys(cwd=tmp_path).reader(str(tmp_path), "lora") is None


def test_only_files_holding_the_quoted_key_are_parsed(tmp_path, monkeypatch):
    write(tmp_path, {"reads.py": 'p = cfg.get("precision")\n', "other.py": "import os\n", "broken.py": "def (:\n"})
    parsed = []
    real_load = project_keys._load
    monkeypatch.setattr(project_keys, "_load", lambda path: parsed.append(path.name) or real_load(path))
    keys = ProjectKeys(cwd=tmp_path)
    assert keys.reader(str(tmp_path), "precision").where() == "reads.py:1"
    assert parsed == ["reads.py"]
    assert keys.reader(str(tmp_path), "precision").where() == "reads.py:1"  # answered from the run's memo
    assert parsed == ["reads.py"]


def test_the_files_read_are_inputs_of_a_recorded_run(tmp_path):
    write(tmp_path, {"src/train.py": 'p = cfg.get("precision")\n'})
    with Recorder() as recorder:
        ProjectKeys(cwd=tmp_path).reader(str(tmp_path), "precision")
    assert os.path.abspath(tmp_path / "src" / "train.py") in recorder.reads
    assert os.path.abspath(tmp_path / "src") in recorder.lists  # a new file there changes the answer


def test_the_memo_lasts_one_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, {"ds.json": '{"train_micro_batch_size_per_gpu": 4, "precision": "bf16"}\n',
                     "train.py": 'p = cfg.get("precision")\n'})
    engine = Engine(Settings(root=tmp_path, select=["DS202"]))
    first = engine.lint_paths([str(tmp_path)])
    assert [d.severity.label for d in first.diagnostics] == ["info"]
    (tmp_path / "train.py").write_text('p = cfg.get("dtype")\n')
    second = engine.lint_paths([str(tmp_path)])
    assert [d.severity.label for d in second.diagnostics] == ["warning"]
