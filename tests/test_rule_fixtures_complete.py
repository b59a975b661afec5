"""Every rule, built in or added later, has fixture cases that pass, fail and (if fixable) fix."""

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


SECTIONS = {"what": "## What it checks", "why": "## Why it matters", "example": "## Example", "fixed": "Use instead"}


@pytest.mark.parametrize("found", [r for r in load_rules()[0] if r.origin != "acme"], ids=lambda r: r.code)
def test_rule_page_has_what_why_example_and_fix(found):
    missing = [name for name, heading in SECTIONS.items() if heading not in found.doc]
    assert not missing, f"{found.code} {found.name}: rule page lacks {missing}"
