"""``docs/rules.md``: every built-in rule's page, generated from the rules' docstrings; and
``dslint/rule_index.py``, the rules' metadata, from which a run makes the built-in rules
without importing their modules (dslint.rule.load_rules).

Regenerate both after adding or changing a rule, from the repository root::

    python -m dslint.docs            # writes docs/rules.md and dslint/rule_index.py
    python -m dslint.docs --check    # exit 1 if either is out of date (what the tests check)

``dslint rules --format markdown`` prints the same pages for every installed rule, plugins
included (this file documents the built-in ones only). Each rule's section
heading is ``## DS101 batch-size-mismatch``, whose GitHub anchor is
``report.sarif.rule_anchor(code, name)``: the SARIF ``helpUri`` of every rule points there.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from dslint.report.sarif import rule_anchor

RULES_MD = Path(__file__).resolve().parent.parent / "docs" / "rules.md"
RULES_INDEX = Path(__file__).resolve().parent / "rule_index.py"
REGENERATE = "python -m dslint.docs"

_HEADING = re.compile(r"^(#{1,5}) ")


def builtin_rules() -> list:
    """The rules dslint itself ships (plugins installed alongside are not documented here)."""
    from dslint.rule import load_rules

    rules, _ = load_rules(lazy=False)
    return [r for r in rules if r.module == "dslint" or r.module.startswith("dslint.")]


def render(rules) -> str:
    out = [
        f"<!-- Generated from the rules' docstrings by `{REGENERATE}`; do not edit by hand. -->",
        "",
        "# dslint rules",
        "",
        "Every rule dslint ships. `dslint rules` lists them and `dslint rule CODE` prints one page in",
        "the terminal; select and ignore them by code, code prefix or name (see the README).",
        "",
        "| code | name | severity | fixable | summary |",
        "|---|---|---|---|---|",
    ]
    for r in rules:
        summary = r.summary.replace("|", "\\|")
        out.append(f"| [{r.code}](#{rule_anchor(r.code, r.name)}) | {r.name} | {r.severity.label} | {'yes' if r.fixable else ''} | {summary} |")
    for r in rules:
        out += [
            "",
            f"## {r.code} {r.name}",
            "",
            f"Code `{r.code}` · name `{r.name}` · default severity: {r.severity.label} · fixable: {'yes' if r.fixable else 'no'}",
            "",
            _demote(r.doc.strip()) if r.doc.strip() else "_No documentation._",
        ]
    return "\n".join(out) + "\n"


def render_index(rules) -> str:
    """dslint/rule_index.py: one row per built-in rule (what dslint.rule.load_rules reads)."""
    from dslint.rule import index_rows

    out = [
        f"# Generated from the built-in rules by `{REGENERATE}`; do not edit by hand.",
        "# A run makes the built-in rules from these rows and imports a rule's module only when the rule",
        "# runs or its page is read (dslint.rule.load_rules). tests/test_docs.py checks that it is current.",
        "# (code, name, severity, target, kinds, consumers, facts, fixable, module, summary)",
        "RULES = (",
    ]
    out += [f"    {row!r}," for row in index_rows(rules)]
    out.append(")")
    return "\n".join(out) + "\n"


def _demote(markdown: str) -> str:
    """Headings inside a rule's page sit one level below the rule's own ``##`` heading."""
    lines = []
    fenced = False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and _HEADING.match(line):
            line = "#" + line
        lines.append(line)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    rules = builtin_rules()
    generated = {RULES_MD: render(rules), RULES_INDEX: render_index(rules)}
    if args == ["--check"]:
        stale = [path for path, text in generated.items() if (path.read_text(encoding="utf-8") if path.is_file() else "") != text]
        for path in stale:
            print(f"{path} is out of date; regenerate it with `{REGENERATE}`", file=sys.stderr)
        return 1 if stale else 0
    if args:
        print(f"usage: {REGENERATE} [--check]", file=sys.stderr)
        return 2
    for path, text in generated.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
