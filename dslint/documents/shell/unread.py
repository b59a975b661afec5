"""Where tree-sitter-bash could not read a script that bash accepts, and which text is not code.

bash's verdict on the syntax comes from ``syntax.check``; tree-sitter's grammar is only dslint's
reader. Where it fails on a script bash accepts, the walker still reads the rest (tree-sitter
recovers), and the part it skipped is reported as an ``Unread`` fact, never as an error.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from dslint.source import Span

_QUERY = None
_QUERY_TEXT = """
(comment) @comment
(string) @string (raw_string) @string (ansi_c_string) @string (translated_string) @string
(heredoc_redirect) @heredoc
(ERROR) @error
(MISSING) @missing
"""


@dataclass(frozen=True)
class Unread:
    """A part of the script dslint's reader skipped: values and commands in it are not known."""

    span: Span
    text: str  # its first line, shortened


def _query():
    global _QUERY
    if _QUERY is None:
        import tree_sitter

        from dslint.documents.treesitter import language

        _QUERY = tree_sitter.Query(language("bash"), _QUERY_TEXT)
    return _QUERY


def read_tree(source, tree, data: bytes) -> tuple[list[tuple[int, int]], list[Unread]]:
    """(byte ranges that are not code: comments, multi-line strings, here-document bodies;
    the parts tree-sitter could not read: one per outermost ERROR node, and MISSING nodes)."""
    import tree_sitter

    captures = tree_sitter.QueryCursor(_query()).captures(tree.root_node)
    excluded: list[tuple[int, int]] = []
    for node in captures.get("comment", ()):
        excluded.append((node.start_byte, node.end_byte))
    for node in captures.get("string", ()):
        if b"\n" in data[node.start_byte : node.end_byte]:
            excluded.append((node.start_byte, node.end_byte))
    for node in captures.get("heredoc", ()):
        body_start = None
        end = node.end_byte
        for child in node.children:
            if child.type == "heredoc_body":
                body_start = child.start_byte
            elif child.type == "heredoc_end":
                end = child.end_byte
        if body_start is not None:
            excluded.append((data.rfind(b"\n", 0, body_start) + 1, end))
    if not tree.root_node.has_error:
        return excluded, []
    cho = source.char_offset
    errors = sorted(captures.get("error", ()), key=lambda n: (n.start_byte, -n.end_byte))
    outer: list = []
    for node in errors:
        if outer and node.start_byte < outer[-1].end_byte:
            continue
        outer.append(node)
    unread = []
    for node in outer:
        text = data[node.start_byte : node.end_byte].decode("utf-8", "replace").strip()
        unread.append(Unread(Span(source, cho(node.start_byte), cho(node.end_byte)), _first_line(text)))
    starts = [n.start_byte for n in outer]
    for node in captures.get("missing", ()):
        k = bisect.bisect_right(starts, node.start_byte) - 1
        if k >= 0 and node.start_byte < outer[k].end_byte:
            continue
        line_start = data.rfind(b"\n", 0, node.start_byte) + 1
        text = data[line_start : node.start_byte].decode("utf-8", "replace").strip()
        unread.append(Unread(Span(source, cho(line_start), cho(node.start_byte)), _first_line(text)))
    unread.sort(key=lambda u: u.span.start)
    return excluded, unread


def _first_line(text: str) -> str:
    line = text.split("\n", 1)[0].strip()
    return line if len(line) <= 60 and "\n" not in text else line[:57].rstrip() + "..."
