"""docs/rules.md: generated from the rules' docstrings, up to date, and the target of SARIF help links."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dslint.docs import REGENERATE, RULES_INDEX, RULES_MD, builtin_rules, render, render_index
from dslint.report.sarif import RULES_DOC_URI, rule_anchor

ROOT = Path(__file__).resolve().parents[1]


def github_anchors(markdown: str) -> list[str]:
    """The anchors GitHub gives the headings of a Markdown file.

    GitHub's algorithm: take the heading's text, lowercase it, drop every character that is
    not a letter, a digit, a space, `-` or `_`, turn spaces into `-`; a repeated anchor gets
    `-1`, `-2`, ... Headings inside fenced code blocks are not headings.
    """
    anchors: list[str] = []
    seen: dict[str, int] = {}
    fenced = False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if fenced or not match:
            continue
        text = re.sub(r"[^\w\- ]", "", match.group(1).lower()).replace(" ", "-")
        if text in seen:
            seen[text] += 1
            anchors.append(f"{text}-{seen[text]}")
        else:
            seen[text] = 0
            anchors.append(text)
    return anchors


def test_github_anchor_algorithm():
    assert github_anchors("## DS101 batch-size-mismatch\n") == ["ds101-batch-size-mismatch"]
    assert github_anchors("# A `code`, (x)!\n## a code x\n## a code x\n```\n# not a heading\n```\n") == ["a-code-x", "a-code-x-1", "a-code-x-2"]


def test_rules_md_is_up_to_date():
    assert RULES_MD == ROOT / "docs" / "rules.md"
    current = RULES_MD.read_text(encoding="utf-8") if RULES_MD.is_file() else ""
    assert current == render(builtin_rules()), f"docs/rules.md is out of date: run `{REGENERATE}` in {ROOT} and commit the result"


def test_rule_index_is_up_to_date():
    """dslint/rule_index.py, from which runs make the built-in rules without importing them."""
    assert RULES_INDEX == ROOT / "dslint" / "rule_index.py"
    current = RULES_INDEX.read_text(encoding="utf-8") if RULES_INDEX.is_file() else ""
    assert current == render_index(builtin_rules()), f"dslint/rule_index.py is out of date: run `{REGENERATE}` in {ROOT} and commit the result"


def test_every_builtin_rule_has_a_section():
    text = RULES_MD.read_text(encoding="utf-8")
    anchors = set(github_anchors(text))
    for r in builtin_rules():
        assert f"\n## {r.code} {r.name}\n" in text, f"{r.code} has no section in docs/rules.md: run `{REGENERATE}`"
        assert rule_anchor(r.code, r.name) in anchors
        assert r.doc.strip(), f"{r.code} has no docstring, so no documentation page"


def test_sarif_help_uris_resolve_to_headings(tmp_path):
    """Every helpUri in a SARIF log points at docs/rules.md and at an anchor one of its headings has."""
    run = subprocess.run(
        [sys.executable, "-m", "dslint", "check", "--no-config", "--format", "sarif", "."],
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    descriptors = json.loads(run.stdout)["runs"][0]["tool"]["driver"]["rules"]
    builtin = {r.code for r in builtin_rules()}
    assert builtin <= {d["id"] for d in descriptors}
    anchors = set(github_anchors(RULES_MD.read_text(encoding="utf-8")))
    for descriptor in descriptors:
        if descriptor["id"] not in builtin:
            continue  # a plugin's rule is documented by its plugin
        page, _, fragment = descriptor["helpUri"].partition("#")
        assert page == RULES_DOC_URI and RULES_DOC_URI.endswith("/docs/rules.md")
        assert fragment in anchors, f"{descriptor['id']}: #{fragment} is not a heading anchor in docs/rules.md (run `{REGENERATE}`)"


def test_regenerate_command_reports_staleness(tmp_path, monkeypatch):
    import dslint.docs as docs

    stale = tmp_path / "rules.md"
    stale.write_text("old\n", encoding="utf-8")
    monkeypatch.setattr(docs, "RULES_MD", stale)
    assert docs.main(["--check"]) == 1
    assert docs.main([]) == 0
    assert docs.main(["--check"]) == 0
    assert stale.read_text(encoding="utf-8") == render(builtin_rules())


def test_rules_markdown_format_documents_installed_rules():
    run = subprocess.run([sys.executable, "-m", "dslint", "rules", "--format", "markdown"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    for r in builtin_rules():
        assert f"\n## {r.code} {r.name}\n" in run.stdout
    assert "\n### What it checks\n" in run.stdout  # headings of a page sit below the rule's heading


def _repository(tmp_path):
    (tmp_path / "dslint" / "rules" / "launch").mkdir(parents=True)
    (tmp_path / "dslint" / "rules" / "batch.py").write_text("")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[project.entry-points."dslint.rules"]\n'
                                             'core = "dslint.rules.core"\n\n[tool.x]\n')
    return tmp_path


def test_new_rule_writes_a_module_that_defines_the_rule_and_its_fixture(tmp_path):
    import importlib.util

    from dslint.docs import new_rule
    from dslint.rule import rules_in_module

    root = _repository(tmp_path)
    written = new_rule("DS999", "nothing-yet", "launch", "launch", root=root)
    module, fixture = root / "dslint/rules/launch/nothing_yet.py", root / "tests/rules/DS999.yaml"
    assert written == [module, fixture]
    spec = importlib.util.spec_from_file_location("nothing_yet", module)
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    (found,) = rules_in_module(loaded)
    assert (found.code, found.name, found.target, found.severity.label) == ("DS999", "nothing-yet", "launch", "warning")
    assert all(heading in found.doc for heading in ("## What it checks", "## Why it matters", "## Example", "Use instead"))
    assert list(found.run(None, None)) == []
    cases = yaml.safe_load(fixture.read_text())
    assert cases["rule"] == "DS999" and [bool(c["expect"]) for c in cases["cases"]] == [False, True]
    assert all(c["file"] == "train.sh" for c in cases["cases"])


def test_new_rule_in_a_new_family_makes_a_package_with_its_entry_point(tmp_path):
    from dslint.docs import new_rule

    root = _repository(tmp_path)
    new_rule("DS998", "fresh-check", "fresh", "deepspeed", severity="error", root=root)
    assert (root / "dslint/rules/fresh/__init__.py").is_file()
    text = (root / "pyproject.toml").read_text()
    assert 'core = "dslint.rules.core"\nfresh = "dslint.rules.fresh"\n\n[tool.x]' in text
    assert "def fresh_check(use, context):" in (root / "dslint/rules/fresh/fresh_check.py").read_text()


@pytest.mark.parametrize("code, name, family, target, why", [
    ("DS101", "again", "launch", "launch", "already taken"),
    ("DS999", "Bad_Name", "launch", "launch", "kebab-case"),
    ("DS999", "fine-name", "batch", "deepspeed", "is one module"),
    ("DS999", "fine-name", "launch", "everything", "rule target"),
])
def test_new_rule_refuses_what_it_cannot_write(tmp_path, code, name, family, target, why):
    from dslint.docs import new_rule

    root = _repository(tmp_path)
    with pytest.raises(ValueError, match=why):
        new_rule(code, name, family, target, root=root)
    assert not (root / "tests").exists()


def test_new_rule_overwrites_nothing(tmp_path):
    from dslint.docs import new_rule

    root = _repository(tmp_path)
    new_rule("DS999", "nothing-yet", "launch", "launch", root=root)
    (root / "tests/rules/DS997.yaml").write_text("mine")
    with pytest.raises(ValueError, match="exists"):
        new_rule("DS997", "other-name", "launch", "launch", root=root)
    assert (root / "tests/rules/DS997.yaml").read_text() == "mine"
