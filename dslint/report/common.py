"""What every format shares: the options, a diagnostic's position, the counts by severity."""

from __future__ import annotations

from dataclasses import dataclass

from dslint.diagnostics import Diagnostic, Severity


@dataclass
class ReportOptions:
    """How a report is written."""

    color: bool = False
    show_source: bool = True
    fixed: int = 0  # how many fixes --fix applied
    fix_hint: bool = True
    summary: bool = True  # the closing "Found ..." / "All checks passed" line (off with --quiet)


def location(diagnostic: Diagnostic) -> tuple[int, int, int, int]:
    """1-based (line, column, end_line, end_column), columns in characters, end exclusive."""
    source = diagnostic.span.source
    line, column = source.position(diagnostic.span.start)
    end_line, end_column = source.position(diagnostic.span.end)
    return line, column, end_line, end_column


def counts(diagnostics: list[Diagnostic]) -> dict[str, int]:
    out = {"errors": 0, "warnings": 0, "infos": 0, "fixable": 0}
    for diagnostic in diagnostics:
        out[{Severity.ERROR: "errors", Severity.WARNING: "warnings", Severity.INFO: "infos"}[diagnostic.severity]] += 1
        if diagnostic.fix is not None:
            out["fixable"] += 1
    return out
