"""``--format text``: the location line, the source with a caret underline, context, summary."""

from __future__ import annotations

from dslint.diagnostics import Diagnostic, Severity
from dslint.report import ReportOptions, counts, location

_COLORS = {Severity.ERROR: "31", Severity.WARNING: "33", Severity.INFO: "36"}


def _paint(text: str, code: str, options: ReportOptions) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if options.color else text


def render_diagnostic(diagnostic: Diagnostic, options: ReportOptions) -> list[str]:
    line, column, end_line, end_column = location(diagnostic)
    severity = _paint(diagnostic.severity.label, _COLORS[diagnostic.severity], options)
    head = f"{diagnostic.path}:{line}:{column}: {_paint(diagnostic.code, '1', options)} [{severity}] {diagnostic.message}"
    out = [head]
    source = diagnostic.span.source
    if options.show_source and source.text:
        text = source.line_text(line).replace("\t", " ")
        gutter = str(line)
        if end_line == line:
            width = max(1, end_column - column)
        else:
            width = max(1, len(text) - column + 1)
        out.append(f"{' ' * len(gutter)} |")
        out.append(f"{gutter} | {_clip(text)}")
        out.append(f"{' ' * len(gutter)} | {' ' * (column - 1)}{_paint('^' * min(width, 80), _COLORS[diagnostic.severity], options)}")
    for related in diagnostic.related:
        if related.span is not None:
            r_line, r_column = related.span.source.position(related.span.start)
            out.append(f"  = {related.span.path}:{r_line}:{r_column}: {related.message}")
        else:
            out.append(f"  = {related.message}")
    if diagnostic.fix is not None:
        out.append(f"  = fix ({diagnostic.fix.applicability}): {diagnostic.fix.title}")
    for alternative in diagnostic.alternatives:
        out.append(f"  = or ({alternative.applicability}): {alternative.title}")
    return out


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def summary_line(result, options: ReportOptions) -> str:
    tally = counts(result.diagnostics)
    files = f"{result.files} file{'s' if result.files != 1 else ''}"
    parts = []
    for key, label in (("errors", "error"), ("warnings", "warning"), ("infos", "info")):
        if tally[key]:
            parts.append(f"{tally[key]} {label}{'s' if tally[key] != 1 and label != 'info' else ''}")
    if options.fixed:
        fixed = f"Fixed {options.fixed} problem{'s' if options.fixed != 1 else ''}. "
    else:
        fixed = ""
    if not parts:
        return f"{fixed}All checks passed ({files} checked)."
    line = f"{fixed}Found {', '.join(parts)} in {files}."
    safe = sum(1 for d in result.diagnostics if d.fix is not None and d.fix.applicability == "safe")
    unsafe = sum(1 for d in result.diagnostics if d.fix is not None and d.fix.applicability == "unsafe")
    if options.fix_hint and safe:
        line += f" {safe} fixable with `dslint --fix`."
    if options.fix_hint and unsafe:
        line += f" {unsafe} more with `dslint --fix --unsafe-fixes`."
    return line


def render(result, options: ReportOptions) -> str:
    lines: list[str] = []
    for diagnostic in result.diagnostics:
        lines.extend(render_diagnostic(diagnostic, options))
        lines.append("")
    lines.append(summary_line(result, options))
    return "\n".join(lines) + "\n"
