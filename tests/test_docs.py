"""docs/rules.md: generated from the rules' docstrings, up to date, and the target of SARIF help links."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

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
