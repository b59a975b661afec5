"""``docs/rules.md``: every built-in rule's page, generated from the rules' docstrings; and
``dslint/rule_index.py``, the rules' metadata, from which a run makes the built-in rules
without importing their modules (dslint.rule.load_rules).

Regenerate both after adding or changing a rule, from the repository root::

    python -m dslint.docs            # writes docs/rules.md and dslint/rule_index.py
    python -m dslint.docs --check    # exit 1 if either is out of date (what the tests check)

Start a rule (README, "Adding a rule")::

    python -m dslint.docs new-rule DS424 zero-stage-name --family parallelism --target deepspeed

writes the rule's module, ``dslint/rules/<family>/<name>.py`` (a new family becomes a package
with its entry point in pyproject.toml), and its fixture, ``tests/rules/<CODE>.yaml``, both with
TODO where the rule's facts go; it overwrites nothing.

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
        "| code | name | severity | fix | summary |",
        "|---|---|---|---|---|",
    ]
    for r in rules:
        summary = r.summary.replace("|", "\\|")
        out.append(f"| [{r.code}](#{rule_anchor(r.code, r.name)}) | {r.name} | {r.severity.label} | {r.fix or ''} | {summary} |")
    for r in rules:
        out += [
            "",
            f"## {r.code} {r.name}",
            "",
            f"Code `{r.code}` · name `{r.name}` · default severity: {r.severity.label} · fix: {r.fix or 'none'}",
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
        "# (code, name, severity, target, kinds, consumers, facts, fix, module, summary)",
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


# What a new rule's fixture names its input, by the rule's target.
_FIXTURE_FILE = {"deepspeed": "ds.json", "launch": "train.sh", "layout": "node0.sh", "document": "config.yaml"}
_TEMPLATE = '''"""{code} {name}: TODO one line, what the rule finds."""

from __future__ import annotations

from dslint.diagnostics import Finding
from dslint.rule import rule


@rule("{code}", "{name}", severity="{severity}", target="{target}")
def {function}({argument}, context):
    """TODO one line, what the rule finds: the summary `dslint rules` prints.

    ## What it checks
    TODO the condition, in the terms of the program that reads the file.

    ## Why it matters
    TODO what the launch does (the error it raises, the value it drops), with the upstream source
    line: package/file.py:LINE at the releases that have it.

    ## Example
    ```
    TODO a launch or config the rule reports
    ```
    Use instead:
    ```
    TODO the same, fixed
    ```

    ## Fix safety
    TODO no fix, or why the fix is right for every reader of the file (a rule with fixes declares
    them in @rule: fix="safe", "unsafe" or "safe or unsafe").
    """
    # TODO yield Finding(span, "a headline that fits one line", note="the evidence: file and line")
    return ()
'''
_FIXTURE = '''rule: {code}
cases:
  - name: TODO what the rule accepts
    file: {file}
    input: |
      TODO
    expect: []

  - name: TODO what the rule reports
    file: {file}
    input: |
      TODO
    expect:
      - {{line: 1, column: 1, message: "TODO a fragment of the headline"}}
'''


def new_rule(code: str, name: str, family: str, target: str, severity: str = "warning", root: Path | None = None) -> list[Path]:
    """Write a new rule's module and fixture under ``root`` (the repository); return what was written.

    Refuses (ValueError) what the rule API refuses, a code or module that exists, and a family
    that is a single module (a family of several rules is a package of one-rule modules)."""
    from dslint.rule import rule as declare

    declare(code, name, severity=severity, target=target)(lambda target, context: ())  # the API's own checks
    root = Path(__file__).resolve().parent.parent if root is None else root
    if not re.fullmatch(r"[a-z][a-z0-9_]*", family):
        raise ValueError(f"family {family!r} must be a Python module name")
    if any(row[0] == code for row in _index_rows()):
        raise ValueError(f"rule code {code} is already taken")
    rules = root / "dslint" / "rules"
    if (rules / f"{family}.py").is_file():
        raise ValueError(f"family {family} is one module (dslint/rules/{family}.py): make it a package of one-rule modules first")
    module = rules / family / f"{name.replace('-', '_')}.py"
    fixture = root / "tests" / "rules" / f"{code}.yaml"
    for path in (module, fixture):
        if path.exists():
            raise ValueError(f"{path} exists")
    written = []
    if not (rules / family).is_dir():
        (rules / family).mkdir(parents=True)
        init = rules / family / "__init__.py"
        init.write_text(f'"""Rules of the {family} family: one module per rule."""\n', encoding="utf-8")
        written.append(init)
        written += _add_entry_point(root / "pyproject.toml", family)
    argument = {"deepspeed": "use", "document": "document", "suppressions": "suppressions"}.get(target, target if target != "launch" else "plan")
    module.write_text(_TEMPLATE.format(code=code, name=name, severity=severity, target=target,
                                       function=name.replace("-", "_"), argument=argument), encoding="utf-8")
    fixture.parent.mkdir(parents=True, exist_ok=True)
    fixture.write_text(_FIXTURE.format(code=code, file=_FIXTURE_FILE.get(target, "input.txt")), encoding="utf-8")
    return written + [module, fixture]


def _index_rows() -> tuple:
    from dslint.rule_index import RULES

    return RULES


def _add_entry_point(pyproject: Path, family: str) -> list[Path]:
    """A new family's line in ``[project.entry-points."dslint.rules"]``, after the group's last line."""
    if not pyproject.is_file():
        return []
    lines = pyproject.read_text(encoding="utf-8").splitlines(keepends=True)
    header = '[project.entry-points."dslint.rules"]'
    start = next((i for i, line in enumerate(lines) if line.strip() == header), None)
    if start is None:
        return []
    end = start + 1
    while end < len(lines) and lines[end].strip() and not lines[end].startswith("["):
        end += 1
    lines.insert(end, f'{family} = "dslint.rules.{family}"\n')
    pyproject.write_text("".join(lines), encoding="utf-8")
    return [pyproject]


def _new_rule_command(args: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog=f"{REGENERATE} new-rule", description="Start a rule: its module and its fixture.")
    parser.add_argument("code")
    parser.add_argument("name")
    parser.add_argument("--family", required=True, help="the rule family (a package under dslint/rules/)")
    parser.add_argument("--target", required=True, help="document, deepspeed, launch, layout or suppressions")
    parser.add_argument("--severity", default="warning")
    options = parser.parse_args(args)
    try:
        written = new_rule(options.code, options.name, options.family, options.target, options.severity)
    except ValueError as error:
        print(f"new-rule: {error}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path}")
    print(f"next: write the check and the fixture cases, run `{REGENERATE}`, then "
          f"`pytest tests/test_rules.py -k {options.code}`" + (" (reinstall: the family's entry point is new)"
                                                              if any(p.name == "pyproject.toml" for p in written) else ""))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["new-rule"]:
        return _new_rule_command(args[1:])
    rules = builtin_rules()
    generated = {RULES_MD: render(rules), RULES_INDEX: render_index(rules)}
    if args == ["--check"]:
        stale = [path for path, text in generated.items() if (path.read_text(encoding="utf-8") if path.is_file() else "") != text]
        for path in stale:
            print(f"{path} is out of date; regenerate it with `{REGENERATE}`", file=sys.stderr)
        return 1 if stale else 0
    if args:
        print(f"usage: {REGENERATE} [--check] | {REGENERATE} new-rule CODE NAME --family F --target T", file=sys.stderr)
        return 2
    for path, text in generated.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
