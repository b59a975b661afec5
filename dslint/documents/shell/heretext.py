"""The expansion of text that is not parsed into a tree: here-document bodies.

``$VAR``, ``${VAR...}`` and ``$((...))`` are read from the variable table; ``$(...)`` and
backquotes are unknown.
"""

from __future__ import annotations

import re

from .arith import arith_on_table
from .params import param_pieces
from .pieces import UNKNOWN, join
from .quoting import unquote_dq
from .variables import VarTable

_NAME_AFTER_DOLLAR = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]")


def expand_text(table: VarTable, text: str, depth: int = 0) -> tuple[str | None, str | None]:
    """Expand a here-document body (``$VAR``, ``${VAR...}``, ``$((...))``; ``$(...)`` is unknown)."""
    return join(expand_text_parts(table, text, depth))


def expand_text_parts(table: VarTable, text: str, depth: int = 0) -> list[tuple]:
    """``expand_text`` as pieces ``(value, assumed)``: the known text around unknown values."""
    return [(value, assumed) for value, assumed, _start, _end in expand_located(table, text, depth)]


def expand_located(table: VarTable, text: str, depth: int = 0) -> list[tuple]:
    """``expand_text`` as pieces ``(value, assumed, start, end)``, each with the range of ``text``
    it comes from: a literal run, or one expansion (``$X``, ``${X:-d}``, ``$((...))``, ``$(...)``)."""
    parts: list[tuple] = []
    i, n = 0, len(text)
    lit_start = 0

    def literal(end: int) -> None:
        if end > lit_start:
            lit = unquote_dq(text[lit_start:end], "$`\\")
            parts.append((lit, lit, lit_start, end))

    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n:
            i += 2
            continue
        if ch == "`":
            literal(i)
            end = text.find("`", i + 1)
            start, i = i, n if end == -1 else end + 1
            parts.append((None, None, start, i))
            lit_start = i
            continue
        if ch != "$" or i + 1 >= n:
            i += 1
            continue
        piece, after = _dollar(table, text, i, depth)
        if piece is None:
            i += 1  # a `$` that expands nothing: its text stays in the literal being read
            continue
        literal(i)
        parts.append((piece[0], piece[1], i, after))
        i = lit_start = after
    literal(n)
    if not parts:
        parts.append(("", "", 0, 0))
    return parts


def _dollar(table: VarTable, text: str, i: int, depth: int) -> tuple[tuple | None, int]:
    """(the value of the expansion at ``text[i] == "$"``, where the text after it starts);
    (None, i + 1) when the `$` starts no expansion."""
    n = len(text)
    nxt = text[i + 1]
    if text.startswith("$((", i):
        end = text.find("))", i + 3)
        if end == -1:
            return (None, None), n
        inner = text[i + 3 : end]
        iv, ia = expand_text(table, inner, depth + 1) if depth < 8 else UNKNOWN
        return arith_on_table(table, iv, ia), end + 2
    if nxt == "(":
        return (None, None), _closing(text, i + 1, "(", ")") + 1
    if nxt == "{":
        j = _closing(text, i + 1, "{", "}")
        return expand_braced(table, text[i + 2 : j], depth), j + 1
    m = _NAME_AFTER_DOLLAR.match(text[i + 1 :])
    if not m:
        return None, i + 1
    return join(param_pieces(table, m.group(0), True)), i + 1 + len(m.group(0))


def _closing(text: str, j: int, opening: str, closing: str) -> int:
    """The index of the bracket that closes the one at ``text[j]`` (the end of the text if none)."""
    level, n = 0, len(text)
    while j < n:
        if text[j] == opening:
            level += 1
        elif text[j] == closing:
            level -= 1
            if level == 0:
                break
        j += 1
    return j


def expand_braced(table: VarTable, inner: str, depth: int) -> tuple[str | None, str | None]:
    m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)(?::?[-=+?])?", inner)
    if not m:
        return UNKNOWN
    name = m.group(1)
    rest = inner[len(name) :]
    base = join(param_pieces(table, name, True))
    if not rest:
        return base
    om = re.match(r"(:?[-=+?])", rest)
    if not om or depth > 8:
        return UNKNOWN
    op = om.group(1)
    word = expand_text(table, rest[len(op) :], depth + 1)
    var = table.vars.get(name)
    colon = op.startswith(":")
    out = []
    for mode in (0, 1):
        b = base[mode]
        if b is None and not (var is not None and var.unset):
            out.append(None)
            continue
        is_set = var is not None and not var.unset
        use_base = (b != "") if colon else is_set
        if op.lstrip(":") == "+":
            out.append(word[mode] if use_base else "")
        elif op.lstrip(":") == "?":
            out.append(b if use_base else None)
        else:
            out.append(b if use_base else word[mode])
    return (out[0], out[1])
