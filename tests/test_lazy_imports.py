"""Imports are lazy: a run imports what its files need, and the rules it makes from the index
(dslint/rule_index.py) are the rules their modules define.

Nothing here is timed: what a run imports is counted instead (benchmarks/run.py times runs).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dslint.rule import load_rules

DEEPSPEED_JSON = '{"train_batch_size": 48, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8}\n'
SCRIPT = "#!/bin/bash\ndeepspeed --num_gpus 8 train.py --deepspeed ds.json --per_device_train_batch_size 4\n"

# A module imported by ``dslint check``, after the run, with the diagnostics printed as JSON.
PROBE = """
import json, sys
from dslint.cli import main
try:
    main(["check", "--no-config", "--exit-zero", "--format", "json", *sys.argv[1:]])
except SystemExit:
    pass
sys.stderr.write(json.dumps(sorted(sys.modules)))
"""


def imported(cwd: Path, *paths: str) -> set[str]:
    run = subprocess.run([sys.executable, "-c", PROBE, *paths], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert json.loads(run.stdout)["diagnostics"] is not None
    return set(json.loads(run.stderr))


def _describe(rule) -> tuple:
    return (rule.code, rule.name, rule.severity, rule.target, rule.kinds, rule.consumers, rule.fix, rule.module,
            rule.summary, rule.origin, rule.doc)


def test_indexed_rules_are_the_rules_their_modules_define():
    lazy, lazy_errors = load_rules()
    eager, eager_errors = load_rules(lazy=False)
    assert lazy_errors == eager_errors
    assert [_describe(r) for r in lazy] == [_describe(r) for r in eager]


def test_an_indexed_rule_runs_its_modules_check(tmp_path):
    from dslint.config import Settings
    from dslint.run.engine import Engine

    (tmp_path / "ds.json").write_text(DEEPSPEED_JSON)
    lazy = Engine(Settings(root=tmp_path)).lint_paths([str(tmp_path / "ds.json")])
    eager_rules, _ = load_rules(lazy=False)
    eager = Engine(Settings(root=tmp_path), rules=eager_rules).lint_paths([str(tmp_path / "ds.json")])
    assert [(d.code, d.message) for d in lazy.diagnostics] == [(d.code, d.message) for d in eager.diagnostics]
    assert "DS101" in {d.code for d in lazy.diagnostics}


def test_a_deepspeed_config_imports_no_script_reader_and_no_launch_rules(tmp_path):
    (tmp_path / "ds.json").write_text(DEEPSPEED_JSON)
    modules = imported(tmp_path, "ds.json")
    assert "dslint.rules.batch" in modules  # the rule that judges it
    for module in ("tree_sitter_bash", "dslint.documents.shell", "dslint.launch.link", "dslint.launch.consumer", "dslint.frameworks",
                   "dslint.rules.shell", "dslint.rules.training_args", "dslint.rules.npu", "yaml", "click"):
        assert module not in modules, f"a run on one DeepSpeed JSON imported {module}"


def test_a_script_imports_the_script_reader(tmp_path):
    (tmp_path / "ds.json").write_text(DEEPSPEED_JSON)
    (tmp_path / "train.sh").write_text(SCRIPT)
    modules = imported(tmp_path, "train.sh")
    assert {"tree_sitter_bash", "dslint.documents.shell", "dslint.rules.shell", "dslint.launch.link"} <= modules


@pytest.mark.parametrize("command", [["rules"], ["rule", "DS101"]])
def test_rules_and_rule_pages_from_the_index(tmp_path, command):
    run = subprocess.run([sys.executable, "-m", "dslint", *command], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "DS101" in run.stdout
