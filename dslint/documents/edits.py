"""Building text edits that keep a file valid for its consumer.

Rules describe a fix as edits; these helpers know the syntax around a value (JSON commas,
YAML lines) so that a rule can say "remove this key" without caring about punctuation.
"""

from __future__ import annotations

import json

from dslint.diagnostics import Edit
from dslint.documents.model import Entry, Mapping, Node


def replace_value(node: Node, new_value) -> Edit:
    """Replace a JSON/YAML scalar with ``new_value`` written as JSON (valid YAML flow too)."""
    return Edit.replace(node.span, json.dumps(new_value))


def rename_key(entry: Entry, new_key: str) -> Edit:
    text = entry.key_span.text
    quote = text[:1] if text[:1] in ('"', "'") else ""
    return Edit.replace(entry.key_span, f"{quote}{new_key}{quote}")


def remove_json_entry(mapping: Mapping, entry: Entry) -> Edit:
    """Remove ``"key": value`` from a JSON object together with the comma that separates it."""
    source = entry.key_span.source
    text = source.text
    start, end = entry.key_span.start, entry.value.span.end
    after = _skip_blanks(text, end, mapping.span.end)
    if after < len(text) and text[after] == ",":
        # "a": 1, <- remove through the comma, and the whole line if nothing else is on it
        cut_end = after + 1
        line_start = _line_start_if_blank_before(text, start)
        if line_start is not None:
            rest = _skip_inline_space(text, cut_end)
            if rest < len(text) and text[rest] in "\r\n":
                return Edit(source, line_start, _after_newline(text, rest), "")
        return Edit(source, start, _skip_inline_space(text, cut_end), "")
    # Last entry: remove the comma before it (if any) up to the end of the value.
    before = _skip_blanks_back(text, start, mapping.span.start)
    if before > mapping.span.start and text[before - 1] == ",":
        return Edit(source, before - 1, end, "")
    line_start = _line_start_if_blank_before(text, start)
    if line_start is not None:
        rest = _skip_inline_space(text, end)
        if rest < len(text) and text[rest] in "\r\n":
            return Edit(source, line_start, _after_newline(text, rest), "")
    return Edit(source, start, end, "")


def _skip_blanks(text: str, pos: int, limit: int) -> int:
    while pos < limit and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _skip_blanks_back(text: str, pos: int, limit: int) -> int:
    while pos > limit and text[pos - 1] in " \t\r\n":
        pos -= 1
    return pos


def _skip_inline_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    return pos


def _line_start_if_blank_before(text: str, pos: int) -> int | None:
    line_start = text.rfind("\n", 0, pos) + 1
    return line_start if not text[line_start:pos].strip() else None


def _after_newline(text: str, pos: int) -> int:
    if text.startswith("\r\n", pos):
        return pos + 2
    if text.startswith("\n", pos):
        return pos + 1
    return pos


def apply_edits(text: str, edits: list[Edit]) -> str:
    """Apply non-overlapping edits (offsets into ``text``); overlapping ones are the caller's problem."""
    out = []
    cursor = 0
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        out.append(text[cursor : edit.start])
        out.append(edit.content)
        cursor = edit.end
    out.append(text[cursor:])
    return "".join(out)

