"""``--format text``: the location line, the source with a caret underline, context, summary."""

from __future__ import annotations

from dslint.diagnostics import Diagnostic, Severity
from dslint.report.common import ReportOptions, counts, location

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
        stop = max(column, end_column) - 1 if end_line == line else len(text)
        shown, begin, prefix = _window(text, column - 1)
        # The caret goes under the range in terminal cells: CJK characters take two.
        pad = _cells(prefix) + _cells(text[begin : column - 1])
        width = max(1, min(_cells(text[column - 1 : min(stop, begin + _LIMIT)]), 80))
        out.append(f"{' ' * len(gutter)} |")
        out.append(f"{gutter} | {shown}")
        out.append(f"{' ' * len(gutter)} | {' ' * pad}{_paint('^' * width, _COLORS[diagnostic.severity], options)}")
    out.extend(context_lines(diagnostic))
    for alternative in diagnostic.alternatives:
        out.append(f"  = or ({alternative.applicability}): {alternative.title}")
    return out


def context_lines(diagnostic: Diagnostic) -> list[str]:
    """The `  = ...` lines under a finding: related places, notes, help, then the fix (shared with junit)."""
    out = []
    for related in diagnostic.related:
        if related.span is not None:
            r_line, r_column = related.span.source.position(related.span.start)
            out.append(f"  = {related.span.path}:{r_line}:{r_column}: {related.message}")
        else:
            out.append(f"  = {related.message}")
    out.extend(f"  = note: {note}" for note in diagnostic.notes)
    if diagnostic.help is not None:
        out.append(f"  = help: {diagnostic.help}")
    if diagnostic.fix is not None:
        out.append(f"  = fix ({diagnostic.fix.applicability}): {diagnostic.fix.title}")
    return out


_LIMIT = 200


def _window(text: str, start: int) -> tuple[str, int, str]:
    """The part of a long line (minified JSON) that holds ``start``: (shown, its first index, prefix)."""
    if len(text) <= _LIMIT:
        return text, 0, ""
    begin = max(0, min(start - 40, len(text) - _LIMIT))
    prefix = "…" if begin else ""
    suffix = "…" if begin + _LIMIT < len(text) else ""
    return prefix + text[begin : begin + _LIMIT] + suffix, begin, prefix


def _cells(text: str) -> int:
    """Terminal columns ``text`` takes: wide (CJK) characters two, combining marks none."""
    if text.isascii():
        return len(text)
    import unicodedata

    return sum(
        0 if unicodedata.combining(char) else 2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text
    )


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
    if not options.summary:
        return "\n".join(lines[:-1]) + "\n" if lines else ""
    lines.append(summary_line(result, options))
    return "\n".join(lines) + "\n"
