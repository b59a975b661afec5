"""``--format json``: one object, a stable contract for CI tools (version 1)."""

from __future__ import annotations

import json

from dslint.diagnostics import Diagnostic, Edit, Fix, Related
from dslint.report.common import ReportOptions, counts, location

SCHEMA_VERSION = 1


def edit_dict(edit: Edit) -> dict:
    start_line, start_column = edit.source.position(edit.start)
    end_line, end_column = edit.source.position(edit.end)
    return {
        "path": edit.source.path,
        "start_line": start_line,
        "start_column": start_column,
        "end_line": end_line,
        "end_column": end_column,
        "content": edit.content,
    }


def fix_dict(fix: Fix | None) -> dict | None:
    if fix is None:
        return None
    return {"applicability": fix.applicability, "title": fix.title, "edits": [edit_dict(e) for e in fix.edits]}


def related_dict(related: Related) -> dict:
    if related.span is None:
        return {"path": None, "line": None, "column": None, "message": related.message}
    line, column = related.span.source.position(related.span.start)
    return {"path": related.span.path, "line": line, "column": column, "message": related.message}


def detail_dict(diagnostic: Diagnostic) -> dict:
    """What the headline leaves out: the notes (the consumer's evidence) and the help (what to do
    when no fix does it). Always present; ``notes`` may be empty and ``help`` null."""
    return {"notes": list(diagnostic.notes), "help": diagnostic.help}


def diagnostic_dict(diagnostic: Diagnostic) -> dict:
    line, column, end_line, end_column = location(diagnostic)
    return {
        "path": diagnostic.path,
        "line": line,
        "column": column,
        "end_line": end_line,
        "end_column": end_column,
        "code": diagnostic.code,
        "name": diagnostic.name,
        "severity": diagnostic.severity.label,
        "message": diagnostic.message,
        "detail": detail_dict(diagnostic),
        "related": [related_dict(r) for r in diagnostic.related],
        "fix": fix_dict(diagnostic.fix),
    }


def render(result, options: ReportOptions) -> str:
    summary = {"files": result.files, **counts(result.diagnostics)}
    payload = {"version": SCHEMA_VERSION, "diagnostics": [diagnostic_dict(d) for d in result.diagnostics], "summary": summary}
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
