"""Syntax problems: where tree-sitter-bash could not parse the script, in words bash would use."""

from __future__ import annotations

import bisect
import re

from dslint.documents.model import ParseProblem
from dslint.source import Span

from .model import Script

_RESERVED_STRAYS = frozenset({"then", "else", "elif", "fi", "do", "done", "esac", "in", "}"})

_CLOSERS = {
    "if": "fi",
    "case": "esac",
    "for": "done",
    "while": "done",
    "until": "done",
    "select": "done",
    "{": "}",
    "(": ")",
    "$(": ")",
    "[[": "]]",
    "do": "done",
    "then": "fi",
    "elif": "fi",
    "else": "fi",
}


def _unbalanced_quote(text: str) -> int | None:
    """Offset of a quote that is never closed, scanning as bash does (roughly)."""
    state = None
    start = 0
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if state is None:
            if ch == "\\":
                i += 2
                continue
            if ch == "#" and (i == 0 or text[i - 1] in " \t\n;"):
                end = text.find("\n", i)
                i = n if end == -1 else end
                continue
            if ch in "'\"`":
                state, start = ch, i
        elif state == "'":
            if ch == "'":
                state = None
        else:
            if ch == "\\":
                i += 2
                continue
            if ch == state:
                state = None
        i += 1
    return start if state is not None else None


def _problem_message(
    text: str, first_child_type: str | None, to_eof: bool = True, line_rest: str = ""
) -> tuple[str, int]:
    """Message for an ERROR node and the offset (within its text) the problem starts at."""
    placeholder = re.search(r"<[^<>\s][^<>\n]*>", text)
    if placeholder is None and text.lstrip().startswith("<"):
        found = re.match(r"\s*(<[^<>\s][^<>\n]*>)", line_rest)
        if found is not None:
            return (
                f"`{found.group(1)[:60]}` looks like a placeholder that was never filled in: bash reads "
                f"`<` and `>` as redirections and stops with a syntax error",
                found.start(1),
            )
    if placeholder is not None:
        return (
            f"`{placeholder.group(0)[:60]}` looks like a placeholder that was never filled in: bash reads `<` and "
            f"`>` as redirections and stops with a syntax error",
            placeholder.start(),
        )
    quote_at = _unbalanced_quote(text) if to_eof else None
    if quote_at is not None:
        q = text[quote_at]
        kind = {"'": "single-quoted string", '"': "double-quoted string", "`": "backquoted command"}[q]
        return (
            f"unterminated {kind}: bash reads to the end of the file looking for the closing {q} "
            f"(unexpected EOF while looking for matching `{q}')",
            quote_at,
        )
    stripped = text.lstrip()
    lead = len(text) - len(stripped)
    token = stripped.split(None, 1)[0] if stripped else ""
    if first_child_type in _CLOSERS:
        closer = _CLOSERS[first_child_type]
        return (
            f"`{first_child_type}` without a matching `{closer}`: bash stops with "
            f'"syntax error: unexpected end of file"',
            lead,
        )
    if stripped.startswith("$(("):
        return ("invalid arithmetic expression: bash stops with a syntax error in the expression", lead)
    if stripped.startswith("${"):
        return ('bad parameter expansion: bash stops with "bad substitution"', lead)
    if token in ("<", ">", "<<", ">>", "|", "&", ";", ")", "(", "&&", "||", ";;"):
        return (f"bash stops here: syntax error near unexpected token `{token}'", lead)
    if stripped.endswith("\\") and not stripped.endswith("\\\\"):
        return ("line continuation with nothing after it", len(text.rstrip()) - 1)
    return (f"cannot parse the script from `{token[:40]}` on; bash probably stops here with a syntax error", lead)


_QUERY = None
_QUERY_TEXT = """
(comment) @comment
(string) @string (raw_string) @string (ansi_c_string) @string (translated_string) @string
(heredoc_redirect) @heredoc
(command name: (command_name (word) @name))
(ERROR) @error
(MISSING) @missing
"""


def _query():
    global _QUERY
    if _QUERY is None:
        import tree_sitter
        import tree_sitter_bash

        _QUERY = tree_sitter.Query(tree_sitter.Language(tree_sitter_bash.language()), _QUERY_TEXT)
    return _QUERY


def collect_problems(script: Script, tree, data: bytes) -> list[tuple[int, int]]:
    """ERROR/MISSING nodes and stray reserved words; returns the byte ranges that are not code
    (comments, multi-line strings, here-document bodies)."""
    import tree_sitter

    source = script.source
    cho = source.char_offset
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
    for node in captures.get("name", ()):
        word = data[node.start_byte : node.end_byte].decode("utf-8", "replace")
        if word in _RESERVED_STRAYS:
            script.problems.append(
                ParseProblem(
                    Span(source, cho(node.start_byte), cho(node.end_byte)),
                    f"bash stops here: syntax error near unexpected token `{word}'",
                )
            )
    if not tree.root_node.has_error:
        return excluded
    # one problem per outermost ERROR node; MISSING nodes outside them
    errors = sorted(captures.get("error", ()), key=lambda n: (n.start_byte, -n.end_byte))
    outer: list = []
    for node in errors:
        if outer and node.start_byte < outer[-1].end_byte:
            continue
        outer.append(node)
    for node in outer:
        text = data[node.start_byte : node.end_byte].decode("utf-8", "replace")
        first = node.children[0].type if node.children else None
        if first == "ERROR" and node.children[0].children:
            first = node.children[0].children[0].type
        to_eof = not data[node.end_byte :].strip()
        eol = data.find(b"\n", node.start_byte)
        line_rest = data[node.start_byte : len(data) if eol == -1 else eol].decode("utf-8", "replace")
        message, rel = _problem_message(text, first, to_eof, line_rest)
        start = node.start_byte + len(text[:rel].encode("utf-8"))
        script.problems.append(ParseProblem(Span(source, cho(start), cho(node.end_byte)), message))
    starts = [n.start_byte for n in outer]
    for node in captures.get("missing", ()):
        k = bisect.bisect_right(starts, node.start_byte) - 1
        if k >= 0 and node.start_byte < outer[k].end_byte:
            continue
        what = node.type
        opener = {"fi": "if", "done": "do", "esac": "case", "}": "{", ")": "(", "]]": "[[", "`": "`"}.get(what)
        hint = f" to close the `{opener}`" if opener and opener != what else ""
        script.problems.append(
            ParseProblem(
                Span(source, cho(node.start_byte), cho(node.end_byte)),
                f'missing `{what}`{hint}: bash stops with "syntax error: unexpected end of file"',
            )
        )
    return excluded


# ---------------------------------------------------------------------------------------
# continuation traps (on the raw text, as bash reads it)
# ---------------------------------------------------------------------------------------
