"""``--format sarif``: SARIF 2.1.0 (OASIS), as read by GitHub code scanning and IDE viewers.

One run; ``tool.driver.rules`` describes every rule that was run (not only those that fired),
so ``ruleIndex`` and the rule pages are available to viewers. Regions use dslint's positions:
1-based lines and columns counted in Unicode code points (``columnKind``), ends exclusive.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import quote

from dslint import __version__
from dslint.diagnostics import Diagnostic, Edit, Fix, Related, Severity
from dslint.report.common import ReportOptions, location

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SARIF_VERSION = "2.1.0"
INFORMATION_URI = "https://github.com/dslint/dslint"
RULES_DOC_URI = "https://github.com/dslint/dslint/blob/main/docs/rules.md"
SRCROOT = "%SRCROOT%"

LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def rule_anchor(code: str, name: str) -> str:
    """The anchor of a rule's section in ``docs/rules.md``: ``ds101-batch-size-mismatch``.

    This is the anchor GitHub derives from a heading ``## DS101 batch-size-mismatch``; the
    docs generator must use this function (or write that heading) so links keep working.
    """
    return f"{code.lower()}-{name}"


def rule_help_uri(code: str, name: str) -> str:
    return f"{RULES_DOC_URI}#{rule_anchor(code, name)}"


def artifact_uri(path: str) -> tuple[str, str | None]:
    """(uri, uriBaseId): relative to the working directory (``%SRCROOT%``) when possible."""
    cwd = os.getcwd()
    absolute = os.path.abspath(path)
    try:
        relative = os.path.relpath(absolute, cwd)
    except ValueError:  # another drive on Windows
        relative = None
    if relative is not None and relative != ".." and not relative.startswith(".." + os.sep):
        return quote(Path(relative).as_posix()), SRCROOT
    return Path(absolute).as_uri(), None


def _artifact_location(path: str) -> dict:
    uri, base = artifact_uri(path)
    out = {"uri": uri}
    if base is not None:
        out["uriBaseId"] = base
    return out


def _region(source, start: int, end: int) -> dict:
    start_line, start_column = source.position(start)
    end_line, end_column = source.position(end)
    return {"startLine": start_line, "startColumn": start_column, "endLine": end_line, "endColumn": end_column}


def descriptor(rule) -> dict:
    """A ``reportingDescriptor`` for one rule."""
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary or rule.name},
        "fullDescription": {"text": rule.doc or rule.summary or rule.name},
        "helpUri": rule_help_uri(rule.code, rule.name),
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"fixable": rule.fixable},
    }


def _fallback_descriptor(diagnostic: Diagnostic) -> dict:
    """For a diagnostic whose rule is not in the run's rule list (should not happen)."""
    return {
        "id": diagnostic.code,
        "name": diagnostic.name,
        "shortDescription": {"text": diagnostic.name},
        "helpUri": rule_help_uri(diagnostic.code, diagnostic.name),
        "defaultConfiguration": {"level": LEVELS[diagnostic.severity]},
    }


def _related(index: int, related: Related) -> dict:
    out: dict = {"id": index, "message": {"text": related.message}}
    if related.span is not None:
        out["physicalLocation"] = {
            "artifactLocation": _artifact_location(related.span.path),
            "region": _region(related.span.source, related.span.start, related.span.end),
        }
    return out


def _fix(fix: Fix) -> dict:
    by_path: dict[str, list[Edit]] = {}
    for edit in fix.edits:
        by_path.setdefault(edit.source.path, []).append(edit)
    changes = []
    for path, edits in by_path.items():
        replacements = [
            {"deletedRegion": _region(e.source, e.start, e.end), "insertedContent": {"text": e.content}}
            for e in sorted(edits, key=lambda e: (e.start, e.end))
        ]
        changes.append({"artifactLocation": _artifact_location(path), "replacements": replacements})
    return {
        "description": {"text": f"{fix.title} ({fix.applicability})"},
        "artifactChanges": changes,
        "properties": {"applicability": fix.applicability},
    }


def message_dict(diagnostic: Diagnostic) -> dict:
    """The result's message: the headline as the first sentence, the notes and the help after it.

    GitHub code scanning shows ``text`` as the alert's title and only its first sentence where
    space is short; viewers that render ``markdown`` (SARIF 2.1.0 §3.11.4) get one line each.
    """
    if not diagnostic.notes and diagnostic.help is None:
        return {"text": diagnostic.message}
    details = [f"Note: {_sentence(note)}" for note in diagnostic.notes]
    if diagnostic.help is not None:
        details.append(f"Help: {_sentence(diagnostic.help)}")
    return {
        "text": " ".join([_sentence(diagnostic.message), *details]),
        "markdown": "\n\n".join([_markdown(_sentence(diagnostic.message)), *(_markdown(d) for d in details)]),
    }


def _sentence(text: str) -> str:
    return text if text.endswith((".", "?", "!")) else f"{text}."


def _markdown(text: str) -> str:
    """Plain text as markdown that shows the same characters."""
    return "".join(f"\\{char}" if char in _MARKDOWN_SPECIAL else char for char in text)


_MARKDOWN_SPECIAL = set("\\`*_{}[]<>()#+-!|~")


def result_dict(diagnostic: Diagnostic, rule_index: int) -> dict:
    line, column, end_line, end_column = location(diagnostic)
    out: dict = {
        "ruleId": diagnostic.code,
        "ruleIndex": rule_index,
        "level": LEVELS[diagnostic.severity],
        "message": message_dict(diagnostic),
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": _artifact_location(diagnostic.path),
                    "region": {"startLine": line, "startColumn": column, "endLine": end_line, "endColumn": end_column},
                }
            }
        ],
    }
    if diagnostic.related:
        out["relatedLocations"] = [_related(i, r) for i, r in enumerate(diagnostic.related, start=1)]
    fixes = [diagnostic.fix] if diagnostic.fix is not None else []
    fixes += diagnostic.alternatives
    if fixes:
        out["fixes"] = [_fix(f) for f in fixes]
    return out


def render(result, options: ReportOptions) -> str:
    rules = list(getattr(result, "rules", None) or [])
    descriptors = [descriptor(r) for r in rules]
    index = {r.code: i for i, r in enumerate(rules)}
    results = []
    for diagnostic in result.diagnostics:
        if diagnostic.code not in index:
            index[diagnostic.code] = len(descriptors)
            descriptors.append(_fallback_descriptor(diagnostic))
        results.append(result_dict(diagnostic, index[diagnostic.code]))
    run = {
        "tool": {
            "driver": {
                "name": "dslint",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": descriptors,
            }
        },
        "originalUriBaseIds": {SRCROOT: {"uri": Path(os.getcwd()).as_uri().rstrip("/") + "/"}},
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    log = {"$schema": SCHEMA_URI, "version": SARIF_VERSION, "runs": [run]}
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"
