"""Diagnostics → output. One module per format; each exposes ``render(result, options) -> str``."""

from __future__ import annotations

from dataclasses import dataclass

from dslint.diagnostics import Diagnostic, Severity

FORMATS = ("text", "concise", "json", "sarif", "github", "junit")


@dataclass
class ReportOptions:
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


def render(fmt: str, result, options: ReportOptions, statistics: bool = False) -> str:
    if statistics:
        from dslint.report import concise

        return concise.render_statistics(fmt, result, options)
    if fmt == "json":
        from dslint.report import json_format

        return json_format.render(result, options)
    if fmt in ("concise", "sarif", "github", "junit"):
        from importlib import import_module

        return import_module(f"dslint.report.{fmt}").render(result, options)
    from dslint.report import text

    return text.render(result, options)
