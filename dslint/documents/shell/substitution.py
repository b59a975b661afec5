"""``${...}`` that bash accepts when it reads the script but rejects when the line runs.

``bash -n`` only matches the braces of ``${...}``; what is inside is parsed when the word is
expanded (subst.c ``parameter_brace_expand``), and then ``${NUM.GPUS}``, ``${a b}``, ``${a:}``,
``${}`` stop the command with "bad substitution" (checked with bash 5.2: the command does not
run, the script goes on). Only the cases bash certainly rejects are named here, and only in
commands that certainly run: a top-level simple command (no ``if``, loop, function, ``&&``,
``||``, pipeline or here-document around it), before any top-level ``exit``.
"""

from __future__ import annotations

import re

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SPECIAL = "@*#?-$!0"
_COMPOUND = re.compile(r"\s*(?:if|for|while|until|case|select|function|coproc|\{|\(|\[\[|!)(?:\s|$)|\s*[A-Za-z_][A-Za-z0-9_]*\s*\(\s*\)")
_EXIT = re.compile(r"\s*(?:exit|return|exec\s+\S)")


def _parameter_only(text: str) -> bool:
    """``text`` is one parameter, perhaps subscripted: what may follow ``${#``."""
    if not text:
        return False
    if text[0] in _SPECIAL or text.isdigit():
        return len(text) == 1 or text.isdigit()
    found = _NAME.match(text)
    return found is not None and (found.end() == len(text) or (text[found.end()] == "[" and text.endswith("]")))


def rejected(inner: str) -> bool:
    """Does bash stop with "bad substitution" on ``${inner}``, whatever the variables hold?
    False when it accepts it or when dslint does not judge the form (``${!...}``, ``${a[...]...}``, ``@``)."""
    if inner == "":
        return True
    if inner[0] == "!":
        return False
    if inner[0] == "#" and (inner == "#" or _parameter_only(inner[1:])):
        return False
    found = _NAME.match(inner)
    if found is not None:
        name = found.group(0)
    elif inner[0].isdigit():
        name = re.match(r"\d+", inner).group(0)
    elif inner[0] in _SPECIAL:
        name = inner[0]
    else:
        return True  # `${ a}`, `${"a"}`, `${.x}`: no parameter
    rest = inner[len(name):]
    if not rest or rest[0] in "[@":
        return False
    if rest[0] == ":":
        return rest == ":"  # `${a:}`; `${a:-x}`, `${a:1}`, `${a::}` are accepted
    return rest[0] not in "-=?+#%/^,"


def _brace_end(text: str, start: int) -> int | None:
    """The index of the ``}`` that closes the ``${`` at ``start`` (quotes and nesting followed)."""
    depth, i, n = 0, start, len(text)
    quote = None
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if quote == "'":
            if ch == "'":
                quote = None
        elif ch == '"':
            quote = None if quote == '"' else '"'
        elif ch == "'" and quote is None:
            quote = "'"
        elif ch == "$" and text.startswith("${", i):
            depth += 1
            i += 2
            continue
        elif ch == "}" and quote is None:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def _expansions(text: str) -> list[tuple[int, int]]:
    """(start, end) of each outermost ``${...}`` that is expanded (not quoted with ``'``, not commented)."""
    out = []
    i, n = 0, len(text)
    double = False
    word_start = True
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            word_start = False
            continue
        if not double and ch == "'":
            end = text.find("'", i + 1)
            if end == -1:
                return out
            i, word_start = end + 1, False
            continue
        if ch == '"':
            double = not double
        elif ch == "#" and not double and word_start:
            end = text.find("\n", i)
            if end == -1:
                return out
            i = end
            continue
        elif ch == "$" and text.startswith("${", i):
            end = _brace_end(text, i)
            if end is None:
                return out
            out.append((i, end + 1))
            i, word_start = end + 1, False
            continue
        word_start = not double and ch in " \t\n;&|()<>"
        i += 1
    return out


def bad_substitutions(text: str, units: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """(start, end) of each ``${...}`` bash rejects in a command that certainly runs."""
    found = []
    for start, end in units:
        unit = text[start:end]
        if _EXIT.match(unit):
            break  # nothing after it runs
        if "${" not in unit:
            continue  # most commands: nothing to judge (the scans below read every character)
        # bash abandons the command at the first one
        bad = next(((a, b) for a, b in _expansions(unit) if rejected(unit[a + 2 : b - 1])), None)
        if bad is None:
            continue
        if _COMPOUND.match(unit) or "<<" in unit or (("|" in unit or "&&" in unit) and any(op in _outside_quotes(unit) for op in ("&&", "||", "|"))):
            continue
        found.append((start + bad[0], start + bad[1]))
    return found


def _outside_quotes(text: str) -> str:
    """``text`` without its quoted parts and comments (what is left are the operators bash sees)."""
    out, i, n = [], 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch in "'\"":
            end = text.find(ch, i + 1)
            i = n if end == -1 else end + 1
            continue
        if ch == "$" and text.startswith("${", i):
            end = _brace_end(text, i)
            i = n if end is None else end + 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def bad_substitution_message(expansion: str, version: str) -> str:
    return f"bash {version} stops this command with `{expansion}: bad substitution`"


# Why bash -n passes a bad substitution: the note of bad_substitution_message's finding.
BAD_SUBSTITUTION_NOTE = "`bash -n` reads only the braces of ${...}; the parameter is parsed when the command runs, so it never runs"
