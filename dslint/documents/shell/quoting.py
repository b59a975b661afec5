"""Quote removal, ANSI-C strings and glob patterns, as bash applies them to a word."""

from __future__ import annotations

import fnmatch
import re

def unquote_word(text: str) -> str:
    """Backslash removal for an unquoted word: a backslash escapes any character."""
    return _remove_backslashes(text, None)


def unquote_dq(text: str, escapable: str = '$`"\\') -> str:
    """Backslash processing inside double quotes (and here-documents, with ``"`` not special)."""
    return _remove_backslashes(text, escapable)


def _remove_backslashes(text: str, escapable: str | None) -> str:
    """Drop line continuations and the backslash before an escapable character (None: any)."""
    if "\\" not in text:
        return text
    out = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n:
            nxt = text[i + 1]
            if nxt == "\n":
                i += 2
                continue
            if nxt == "\r" and i + 2 < n and text[i + 2] == "\n":
                i += 3
                continue
            if escapable is None or nxt in escapable:
                out.append(nxt)
                i += 2
                continue
        out.append(ch)
        i += 1
    return "".join(out)


_ANSI_SIMPLE = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "e": "\x1b",
    "E": "\x1b",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def ansi_c(text: str) -> str:
    out = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch != "\\" or i + 1 >= n:
            out.append(ch)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[nxt])
            i += 2
        elif nxt == "x":
            m = re.match(r"[0-9a-fA-F]{1,2}", text[i + 2 :])
            if m:
                out.append(chr(int(m.group(0), 16)))
                i += 2 + len(m.group(0))
            else:
                out.append("\\x")
                i += 2
        elif nxt in "01234567":
            m = re.match(r"[0-7]{1,3}", text[i + 1 :])
            out.append(chr(int(m.group(0), 8) & 0xFF))
            i += 1 + len(m.group(0))
        else:
            out.append("\\" + nxt)
            i += 2
    return "".join(out)


def _glob_regex(pattern: str, shortest: bool) -> re.Pattern | None:
    try:
        rx = fnmatch.translate(pattern)
    except Exception:  # noqa: BLE001 - fnmatch accepts everything
        return None
    if shortest:
        rx = rx.replace(".*", ".*?")
    try:
        return re.compile(rx, re.S)
    except re.error:
        return None


def remove_affix(value: str, pattern: str, op: str) -> str | None:
    if not any(c in pattern for c in "*?["):
        if op in ("#", "##"):
            return value[len(pattern) :] if value.startswith(pattern) else value
        return value[: len(value) - len(pattern)] if pattern and value.endswith(pattern) else value
    rx = _glob_regex(pattern, shortest=False)
    if rx is None:
        return None
    n = len(value)
    if op == "#":
        order = range(0, n + 1)
    elif op == "##":
        order = range(n, -1, -1)
    elif op == "%":
        order = range(n, -1, -1)
    else:
        order = range(0, n + 1)
    for k in order:
        if op in ("#", "##"):
            if rx.match(value[:k]):
                return value[k:]
        else:
            if rx.match(value[k:]):
                return value[:k]
    return value


# ---------------------------------------------------------------------------------------
# bash arithmetic, on text (tree-sitter's arithmetic trees get unary minus precedence wrong)
# ---------------------------------------------------------------------------------------
