"""Rule behaviour from fixture files: tests/rules/<CODE>.yaml holds pass, fail and fix cases.

Each case writes its files into a temporary directory, lints them with only that rule
selected, and compares the diagnostics (line, column, fragments of the message, its notes and
its help) and, when the case names one, the file content after `--fix` (and `--unsafe-fixes`).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest
import yaml

from dslint.config import Setting, Settings
from dslint.run.engine import Engine
from dslint.fix.apply import fix_paths
from dslint.rule import load_rules
from headlines import LINE_LIMIT, record

CASES_DIR = Path(__file__).parent / "rules"


def _cases():
    for path in sorted(CASES_DIR.glob("*.yaml")):
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
        for case in spec["cases"]:
            yield pytest.param(spec["rule"], case, id=f"{path.stem}-{case['name']}")


def _settings(rule: str, case: dict, root: Path) -> Settings:
    # `also_select`: other rules to run beside the one under test (their findings are not compared).
    settings = Settings(select=[rule, *case.get("also_select", [])], root=root)
    if "world_size" in case:
        settings.world_size = Setting(case["world_size"], "--world-size on the command line")
    if "deepspeed_version" in case:
        settings.deepspeed_version = Setting(str(case["deepspeed_version"]), "deepspeed-version in the test case")
    if "target" in case:
        settings.target = Setting(case["target"], "target in the test case")
    if "hardware" in case:
        settings.hardware = Setting(case["hardware"], "hardware in the test case")
    if "device_memory" in case:
        from dslint.explain.memory import parse_size

        settings.device_memory = Setting(parse_size(case["device_memory"]), "--device-memory in the test case")
    if "settings" in case:  # any other setting, spelled as in [tool.dslint]
        from dslint.config import apply_table

        apply_table(settings, case["settings"], "the test case")
    return settings


# `launched_by: deepspeed`: the DeepSpeed config of the case is read by a plain deepspeed.initialize
# program (which passes no optimizer of its own, so DeepSpeed builds the config's), started by the
# deepspeed launcher on one GPU.
# deepspeed launcher on one GPU, one launch per JSON file of the case.
LAUNCHERS = {
    "deepspeed": ("deepspeed --num_gpus 1 train.py --deepspeed --deepspeed_config {config}\n",
                  "import deepspeed\n\nengine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())\n"),
}


def _write(root: Path, case: dict) -> list[str]:
    files = dict(case.get("files") or {case.get("file", "ds.json"): case["input"]})
    if case.get("launched_by") in LAUNCHERS:
        line, program = LAUNCHERS[case["launched_by"]]
        files.setdefault("run.sh", "".join(line.format(config=name) for name in sorted(files) if name.endswith(".json")))
        files.setdefault("train.py", program)
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("utf-8"))
    return sorted(files)


@pytest.mark.parametrize("rule,case", list(_cases()))
def test_rule_case(rule, case, tmp_path, monkeypatch, request):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, case)
    engine = Engine(_settings(rule, case, tmp_path))
    result = engine.lint_paths(["."])
    assert not result.internal_errors, result.internal_errors
    found = [d for d in result.diagnostics if d.code == rule or d.name == rule]
    record(request.config, "fixture cases", [d.message for d in found])
    for diagnostic in found:
        assert len(diagnostic.message) <= LINE_LIMIT, f"the headline is longer than a terminal line: {diagnostic.message}"
    expected = case.get("expect", [])
    assert len(found) == len(expected), [f"{d.path}:{d.span.source.position(d.span.start)} {d.code} {d.message}" for d in found]
    for diagnostic, want in zip(found, expected):
        assert diagnostic.code == rule or diagnostic.name == rule
        line, column = diagnostic.span.source.position(diagnostic.span.start)
        if "path" in want:
            assert diagnostic.path == want["path"]
        assert (line, column) == (want["line"], want["column"]), diagnostic.message
        for fragment in _as_list(want.get("message", [])):
            assert fragment in diagnostic.message
        for fragment in _as_list(want.get("note", [])):
            assert any(fragment in note for note in diagnostic.notes), diagnostic.notes
        for fragment in _as_list(want.get("help", [])):
            assert diagnostic.help is not None and fragment in diagnostic.help, diagnostic.help
        if "severity" in want:
            assert diagnostic.severity.label == want["severity"], diagnostic.message
        if "fix" in want:
            assert (diagnostic.fix.applicability if diagnostic.fix else None) == want["fix"]
        for fragment in _as_list(want.get("related", [])):
            assert any(fragment in r.message for r in diagnostic.related), diagnostic.related
    for diagnostic in found:
        made = {f.applicability for f in [diagnostic.fix, *diagnostic.alternatives] if f is not None}
        declared = _declared(diagnostic.code)
        assert made <= set(declared.fix_applicabilities), \
            f"{declared.code} declares fix={declared.fix!r} but made a {'/'.join(sorted(made))} fix: {diagnostic.message}"
    for key, unsafe in (("fixed", False), ("fixed_unsafe", True)):
        if key not in case:
            continue
        _write(tmp_path, case)
        outcome = fix_paths(lambda overrides: engine.lint_paths(["."], overrides), unsafe=unsafe, write=True)
        assert outcome.converged
        for name, text in _as_files(case, key).items():
            assert (tmp_path / name).read_text(encoding="utf-8") == text
        again = fix_paths(lambda overrides: engine.lint_paths(["."], overrides), unsafe=unsafe, write=True)
        assert not again.applied, "fixing must be idempotent"


@lru_cache(maxsize=None)
def _declared(code: str):
    return next(r for r in load_rules()[0] if r.code == code)


def _as_list(value):
    return value if isinstance(value, list) else [value]


def _as_files(case: dict, key: str) -> dict:
    value = case[key]
    if isinstance(value, dict):
        return value
    return {case.get("file", "ds.json"): value}
