"""Suppression comments: their one grammar, the lines each one covers, and where a new one goes.

``# dslint: disable=CODE[,CODE...]`` (or ``//`` in hjson) covers its own line; on a line of its
own it covers the next line too, and when that line starts a command continued with ``\\``
(a launch script), every line of that command: a comment cannot go inside such a command,
because bash ends the command at it. ``# dslint: disable-file=CODE`` covers the whole file.
The engine filters findings with ``Suppressions``; ``--add-noqa`` (dslint/fix/noqa.py) writes
comments in the same grammar, reading existing ones with ``DIRECTIVE``.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field

from dslint.source import SourceFile, Span
from dslint.targets import SuppressedCode, SuppressionComment

DIRECTIVE = re.compile(r"(?:#|//)\s*dslint:\s*(disable-file|disable)\s*=\s*([A-Za-z0-9_\-]+(?:\s*,\s*[A-Za-z0-9_\-]+)*)")
_CODE_TOKEN = re.compile(r"[A-Za-z0-9_\-]+")


def continued_lines(document) -> frozenset[int]:
    """Lines of a launch script that end in a `\\` continuing the command (empty for other files)."""
    script = getattr(document, "script", None) if document is not None else None
    return frozenset(getattr(script, "continued_lines", ()) or ())


def command_lines(line: int, continued: Collection[int]) -> tuple[int, int]:
    """(first, last) line of the `\\`-continued command that ``line`` belongs to."""
    first = line
    while first - 1 in continued:
        first -= 1
    last = line
    while last in continued:
        last += 1
    return first, last


@dataclass
class Suppressions:
    """The suppression comments of one file; ``covers`` says which of their codes match a finding."""

    comments: list[SuppressionComment] = field(default_factory=list)
    _line_comments: dict[int, list[SuppressionComment]] = field(default_factory=dict, repr=False)
    _file_comments: list[SuppressionComment] = field(default_factory=list, repr=False)

    @classmethod
    def scan(cls, source: SourceFile, continued: Collection[int] = ()) -> "Suppressions":
        """``continued``: the lines that end in a continuing `\\` (``continued_lines``)."""
        found = cls()
        text = source.text
        if "dslint:" not in text:
            return found
        for match in DIRECTIVE.finditer(text):
            base = match.start(2)
            codes = [SuppressedCode(m.group(0), Span(source, base + m.start(), base + m.end())) for m in _CODE_TOKEN.finditer(match.group(2))]
            comment = SuppressionComment(Span(source, match.start(), match.end()), Span(source, match.start(2), match.end(2)), codes)
            found.comments.append(comment)
            if match.group(1) == "disable-file":
                comment.whole_file = True
                found._file_comments.append(comment)
                continue
            line, _ = source.position(match.start())
            lines = [line]
            if not text[source.line_start(line) : match.start()].strip():  # on its own line: the next command too
                _, last = command_lines(line + 1, continued)
                lines.extend(range(line + 1, last + 1))
            comment.lines = tuple(lines)
            for covered in lines:
                found._line_comments.setdefault(covered, []).append(comment)
        return found

    def covers(self, diagnostic, line: int) -> list[tuple[SuppressionComment, SuppressedCode]]:
        """The (comment, code) entries that suppress ``diagnostic`` on ``line``; empty if none does."""
        matched = []
        for comment in (*self._file_comments, *self._line_comments.get(line, ())):
            matched.extend((comment, code) for code in comment.codes if code.matches(diagnostic.code, diagnostic.name))
        return matched
