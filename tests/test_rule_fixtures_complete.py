"""Every rule, built in or added later, has fixture cases that pass, fail and (if fixable) fix."""

import os
from pathlib import Path

import pytest
import yaml

from dslint.rule import load_rules

CASES = Path(__file__).parent / "rules"
# Rules whose failing input cannot be written as fixture text; each is tested elsewhere.
ELSEWHERE = {"DS003": "tests/test_bad_input.py (symlink loops, oversized and unreadable files)"}


@pytest.mark.parametrize("found", [r for r in load_rules()[0] if r.origin != "acme"], ids=lambda r: r.code)
def test_rule_has_pass_fail_and_fix_cases(found):
    if found.code in ELSEWHERE:
        assert Path(__file__).with_name("test_bad_input.py").read_text().count("DS003") >= 2
        return
    path = CASES / f"{found.code}.yaml"
    assert path.is_file(), f"{found.code} {found.name} has no fixture file {path.name}"
    cases = yaml.safe_load(path.read_text(encoding="utf-8"))["cases"]
    assert any(not case.get("expect") for case in cases), f"{path.name}: no passing case"
    assert any(case.get("expect") for case in cases), f"{path.name}: no failing case"
    if found.fixable:
        assert any("fixed" in case or "fixed_unsafe" in case for case in cases), f"{path.name}: fixable rule without a fix case"


@pytest.mark.parametrize("found", [r for r in load_rules()[0] if r.origin != "acme" and r.code not in ELSEWHERE], ids=lambda r: r.code)
def test_rule_fixtures_make_every_fix_the_rule_declares(found, tmp_path):
    """`fix="safe"`, `"unsafe"` or `"safe or unsafe"` (what `dslint rules` shows) is what the rule's
    fixtures make, fixes and alternatives together: a kind no fixture makes is not declared, and a
    rule without the declaration makes no fix (tests/test_rules.py holds each case to it)."""
    from test_rules import _settings, _write

    from dslint.run.engine import Engine

    spec = yaml.safe_load((CASES / f"{found.code}.yaml").read_text(encoding="utf-8"))
    made: set[str] = set()
    cwd = os.getcwd()
    for index, case in enumerate(spec["cases"]):
        root = tmp_path / str(index)
        root.mkdir()
        _write(root, case)
        os.chdir(root)
        try:
            result = Engine(_settings(spec["rule"], case, root)).lint_paths(["."])
        finally:
            os.chdir(cwd)
        made |= {f.applicability for d in result.diagnostics if d.code == found.code
                 for f in [d.fix, *d.alternatives] if f is not None}
    assert made == set(found.fix_applicabilities), \
        f"{found.code} declares fix={found.fix!r}; its fixtures make {'/'.join(sorted(made)) or 'no'} fixes"


SECTIONS = {"what": "## What it checks", "why": "## Why it matters", "example": "## Example", "fixed": "Use instead"}


@pytest.mark.parametrize("found", [r for r in load_rules()[0] if r.origin != "acme"], ids=lambda r: r.code)
def test_rule_page_has_what_why_example_and_fix(found):
    missing = [name for name, heading in SECTIONS.items() if heading not in found.doc]
    assert not missing, f"{found.code} {found.name}: rule page lacks {missing}"
