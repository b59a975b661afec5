"""Pieces of a word's value: ``(value, assumed)`` pairs, where value None means unknown."""

from __future__ import annotations

from collections.abc import Iterable

_MAX_VALUE_CHARS = 100_000  # a value longer than this (A="$A$A" forty times) is unknown

UNKNOWN = (None, None)
BREAK = None  # field break inside a piece list ("${arr[@]}")

def join(parts: Iterable[tuple]) -> tuple[str | None, str | None]:
    """(value, assumed) of a sequence of (value, assumed[, quoted]) pieces."""
    vals: list[str] | None = []
    asms: list[str] | None = []
    vlen = alen = 0
    for piece in parts:
        if piece is None:
            continue
        v, a = piece[0], piece[1]
        if vals is not None:
            if v is None or vlen + len(v) > _MAX_VALUE_CHARS:
                vals = None
            else:
                vals.append(v)
                vlen += len(v)
        if asms is not None:
            if a is None or alen + len(a) > _MAX_VALUE_CHARS:
                asms = None
            else:
                asms.append(a)
                alen += len(a)
    return (None if vals is None else "".join(vals), None if asms is None else "".join(asms))


# A string run by `eval`/`bash -c` is read with each piece the script does not decide written as
# `${__dslint_unknown_N}` (commands.py); text that still carries the marker after quoting is one
# of those values taken literally (inside single quotes there), so it is unknown too.
PLACEHOLDER = "__dslint_unknown_"


def known(text: str, quoted: bool = False) -> tuple:
    if PLACEHOLDER in text:
        return (None, None, quoted)
    return (text, text, quoted)
