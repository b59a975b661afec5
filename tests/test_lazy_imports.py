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

# The modules ``dslint check`` imported (those Python started with aside), with the diagnostics printed as JSON.
PROBE = """
import json, sys
started = set(sys.modules)
from dslint.cli import main
try:
    main(["check", "--no-config", "--exit-zero", "--format", "json", *sys.argv[1:]])
except SystemExit:
    pass
sys.stderr.write(json.dumps(sorted(set(sys.modules) - started)))
"""


def imported(cwd: Path, *paths: str) -> set[str]:
    return _probe(cwd, *paths)[1]


def _probe(cwd: Path, *paths: str) -> tuple[dict, set[str]]:
    """(the JSON report, the modules imported) of ``dslint check`` in a fresh process."""
    run = subprocess.run([sys.executable, "-c", PROBE, *paths], cwd=cwd, capture_output=True, text=True, timeout=120)
    report = json.loads(run.stdout)
    assert report["diagnostics"] is not None
    return report, set(json.loads(run.stderr))


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
    assert {"dslint.documents.shell.walker", "dslint.documents.shell", "dslint.rules.shell", "dslint.launch.link"} <= modules


@pytest.mark.parametrize("command", [["rules"], ["rule", "DS101"]])
def test_rules_and_rule_pages_from_the_index(tmp_path, command):
    run = subprocess.run([sys.executable, "-m", "dslint", *command], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "DS101" in run.stdout


# ---- what a one-file run may import at all ------------------------------------------------------
# Each run below imports no module outside an allowed set: dslint's modules for reading its kind
# of file, running the engine and printing the report; the rule modules of the rules that can
# apply to that kind (from the rule index, so a new rule of the kind is allowed by its target and
# kinds) and their helpers; the standard library less what such a run has no use for; and the
# third-party parsers of its kind.

# What every run may import of dslint besides rules.
_CORE = {
    "dslint", "dslint.cli", "dslint.cli.check", "dslint.cli.common", "dslint.cli.info", "dslint.config", "dslint.diagnostics",
    "dslint.source", "dslint.values", "dslint.schemas", "dslint.rule", "dslint.rule_index", "dslint.facts", "dslint.targets",
    "dslint.run", "dslint.run.progress", "dslint.run.workspace", "dslint.run.engine", "dslint.run.result", "dslint.run.suppressions",
    "dslint.run.context", "dslint.run.cache", "dslint.run.split", "dslint.files", "dslint.files.discovery", "dslint.files.gitignore",
    "dslint.files.suffixes", "dslint.files.roots", "dslint.documents", "dslint.documents.classify", "dslint.documents.model",
    "dslint.documents.sniff", "dslint.documents.edits", "dslint.report", "dslint.report.common", "dslint.report.json_format",
    "dslint.evidence", "dslint.evidence.versions", "dslint.evidence.pins",
}
# A standalone DeepSpeed config: its reader, and what DeepSpeed rules work out without a launch.
_DEEPSPEED_ONLY = {"dslint.documents.json_doc", "dslint.documents.treesitter", "dslint.launch", "dslint.launch.named",
                   "dslint.launch.deepspeed_batch", "dslint.launch.args", "dslint.launch.target",
                   "dslint.evidence.keyhistory"}  # the releases that read the config's keys
# Standard-library modules none of these runs uses: hashing and pickling are the cache's (a run
# with --no-cache neither reads nor writes it), tempfile and random come only with
# importlib.resources (the grammar packages' highlight queries), tomllib only with a pyproject.toml.
_UNUSED_STDLIB = {"hashlib", "_hashlib", "_blake2", "pickle", "_pickle", "tempfile", "random", "importlib.resources", "tomllib",
                  "subprocess", "email", "http", "urllib.request", "xml", "unittest", "logging", "asyncio", "multiprocessing"}


def _rule_modules(applies) -> set[str]:
    """The modules of the indexed rules for which ``applies(target, kinds)`` holds, with their packages."""
    from dslint.rule_index import RULES

    out = set()
    for _code, _name, _severity, target, kinds, _consumers, _facts, _fixable, module, _summary in RULES:
        if applies(target, kinds):
            parts = module.split(".")
            out.update(".".join(parts[:n]) for n in range(2, len(parts) + 1))
    return out


def _outside(modules: set[str], dslint_allowed: set[str], third_party: tuple[str, ...], unused=_UNUSED_STDLIB) -> list[str]:
    """The modules of ``modules`` outside the allowed set."""
    out = []
    for module in sorted(modules):
        top = module.split(".")[0]
        if top == "dslint":
            helper = module.startswith("dslint.rules.") and module.rsplit(".", 1)[-1].startswith("_")
            if module not in dslint_allowed and not helper:
                out.append(module)
        elif top in third_party or top.startswith("_cython") or top == "cython_runtime":
            continue
        elif top not in sys.stdlib_module_names or any(module == u or module.startswith(u + ".") for u in unused):
            out.append(module)
    return out


def test_a_deepspeed_config_imports_only_its_reader_and_its_rules(tmp_path):
    (tmp_path / "ds.json").write_text(DEEPSPEED_JSON)
    modules = imported(tmp_path, "--no-cache", "ds.json")
    rules = _rule_modules(lambda target, kinds: target in ("deepspeed", "suppressions") or
                          (target == "document" and (not kinds or "deepspeed-json" in kinds)))
    assert "dslint.rules.batch" in modules  # the rule that judges it
    assert _outside(modules, _CORE | _DEEPSPEED_ONLY | rules, ("tree_sitter", "tree_sitter_json")) == []


def test_a_training_yaml_imports_no_script_reader(tmp_path):
    (tmp_path / "train.yaml").write_text("model_name_or_path: Qwen/Qwen2.5-7B\nstage: sft\ndo_train: true\nfinetuning_type: lora\n"
                                         "per_device_train_batch_size: 2\ngradient_accumulation_steps: 4\nlearning_rate: 1.0e-4\nbf16: true\n")
    modules = imported(tmp_path, "--no-cache", "train.yaml")
    rules = _rule_modules(lambda target, kinds: target != "document" or not kinds or "training-yaml" in kinds)
    # a training YAML is a launch: the linker, the program readers and the framework readers are its own
    launches = {m for m in modules if m.startswith(("dslint.launch", "dslint.frameworks"))} | {"dslint.documents.yaml_doc"}
    # the consumer's own start-up checks (DS723) and the releases its arguments narrow to
    launches |= {"dslint.evidence.argnames", "dslint.evidence.startup_checks"}
    assert "dslint.launch.link" in launches and not any(m.startswith("dslint.documents.shell") for m in modules)
    assert _outside(modules, _CORE | launches | rules, ("yaml",)) == []


def test_a_run_replayed_from_the_cache_imports_no_reader_engine_or_rule(tmp_path):
    (tmp_path / "ds.json").write_text(DEEPSPEED_JSON)
    first, _ = _probe(tmp_path, "ds.json")
    again, modules = _probe(tmp_path, "ds.json")
    assert again == first and first["diagnostics"]
    replay = {"dslint", "dslint.cli", "dslint.cli.check", "dslint.cli.common", "dslint.cli.info", "dslint.run", "dslint.run.progress",
              "dslint.run.cache", "dslint.run.result", "dslint.rule", "dslint.rule_index", "dslint.diagnostics", "dslint.source",
              "dslint.schemas", "dslint.report", "dslint.report.common", "dslint.report.json_format"}
    unused = _UNUSED_STDLIB - {"hashlib", "_hashlib", "_blake2", "pickle", "_pickle"}  # what the cache is read with
    assert _outside(modules, replay, (), unused) == []
