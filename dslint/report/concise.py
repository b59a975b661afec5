"""``--format concise``: one line per diagnostic and the summary; and ``--statistics``.

``path:line:col: CODE [severity] message`` (no source, related places or fixes), coloured
like the text format when writing to a terminal without ``NO_COLOR``.
"""

from __future__ import annotations

import json

from dslint.diagnostics import Diagnostic
from dslint.report.common import ReportOptions, location
from dslint.report.text import _COLORS, _paint, summary_line


def render_diagnostic(diagnostic: Diagnostic, options: ReportOptions) -> str:
    line, column, _, _ = location(diagnostic)
    severity = _paint(diagnostic.severity.label, _COLORS[diagnostic.severity], options)
    code = _paint(diagnostic.code, "1", options)
    message = diagnostic.message.replace("\r", "\\r").replace("\n", "\\n")
    return f"{diagnostic.path}:{line}:{column}: {code} [{severity}] {message}"


def render(result, options: ReportOptions) -> str:
    lines = [render_diagnostic(d, options) for d in result.diagnostics]
    if options.summary:
        lines.append(summary_line(result, options))
    return "\n".join(lines) + "\n" if lines else ""


# ---- --statistics ----------------------------------------------------------------------


def statistics(result) -> list[dict]:
    """Per rule that fired: code, name, count, fixable count; most frequent first."""
    rows: dict[str, dict] = {}
    for diagnostic in result.diagnostics:
        row = rows.setdefault(diagnostic.code, {"code": diagnostic.code, "name": diagnostic.name, "count": 0, "fixable": 0})
        row["count"] += 1
        if diagnostic.fix is not None:
            row["fixable"] += 1
    return sorted(rows.values(), key=lambda r: (-r["count"], r["code"]))


def render_statistics(fmt: str, result, options: ReportOptions) -> str:
    """``--statistics``: a table (or with ``--format json`` a JSON array) instead of diagnostics."""
    rows = statistics(result)
    if fmt == "json":
        return json.dumps(rows, indent=2) + "\n"
    if not rows:
        return summary_line(result, options) + "\n" if options.summary else ""
    count_width = max(len(str(r["count"])) for r in rows)
    code_width = max(len(r["code"]) for r in rows)
    name_width = max(len(r["name"]) for r in rows)
    lines = []
    for r in rows:
        fixable = f"{r['fixable']} fixable" if r["fixable"] else ""
        lines.append(f"{r['count']:>{count_width}}  {_paint(r['code'].ljust(code_width), '1', options)}  {r['name']:<{name_width}}  {fixable}".rstrip())
    return "\n".join(lines) + "\n"
