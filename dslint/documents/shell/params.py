"""Parameter expansion on values already read: ``$NAME``, ``${NAME[i]}``, ``${#NAME}``, the
``${NAME:-word}`` family and ``${NAME#pattern}``, as pieces ``(value, assumed, quoted)``.

What a parameter holds comes from the variable table; the words inside ``${...}`` are expanded by
the caller (expand.py, heretext.py), which hands their pieces here.
"""

from __future__ import annotations

from .arith import parse_int
from .pieces import BREAK, join
from .quoting import remove_affix
from .variables import ALWAYS_SET, NAME_RE, Var, VarTable

DEFAULT_OPS = frozenset({":-", "-", ":=", "=", ":+", "+", ":?", "?"})
AFFIX_OPS = frozenset({"#", "##", "%", "%%"})


def special_pieces(name: str, quoted: bool) -> list:
    """Positional and special parameters: never decided by the script."""
    if name in ("@", "*"):
        return [(None, "", False)]  # any number of words, even when quoted
    if name.isdigit():
        return [(None, "", quoted)]
    if name == "#":
        return [(None, "0", quoted)]
    return [(None, None, quoted)]


def var_value_pieces(var: Var | None, name: str, quoted: bool) -> list:
    """``$NAME`` for the variable the table holds for ``name`` (None: the caller's, if any)."""
    if var is None:
        return [(None, None if name in ALWAYS_SET else "", quoted)]
    if var.unset:
        return [("", "", quoted)]
    return [(v, a, quoted) for v, a in var.parts] or [("", "", quoted)]


def param_pieces(table: VarTable, name: str, quoted: bool) -> list:
    """``$NAME`` read from the table, without recording the reference."""
    if not NAME_RE.match(name):
        return special_pieces(name, quoted)
    return var_value_pieces(table.vars.get(name), name, quoted)


def subscript_pieces(var: Var | None, name: str, index: str, quoted: bool):
    """``${NAME[index]}``: (pieces, elements, star); ``elements`` is the list of the array's
    fields for ``[@]``/``[*]`` (then pieces is None), else None."""
    if var is None:
        return [(None, None if name in ALWAYS_SET else "", quoted)], None, False
    if var.unset:
        return [], ([] if index in ("@", "*") else None), False
    if index in ("@", "*"):
        return None, (list(var.array) if var.array is not None else [var.parts]), index == "*"
    idx = parse_int(index)
    if var.array is not None and idx is not None:
        arr = var.array
        base = [(v, a, quoted) for v, a in arr[idx]] if -len(arr) <= idx < len(arr) else [("", "", quoted)]
    elif var.array is None and idx == 0:
        base = [(v, a, quoted) for v, a in var.parts]
    else:
        base = [(None, None, quoted)]
    return base, None, False


def element_pieces(elements: list, star: bool, length: bool, operated: bool, quoted: bool) -> list:
    """``${A[@]}``, ``${A[*]}`` and ``${#A[@]}``: the elements, a field each (joined by blanks
    for a quoted ``[*]``); an operator on them (``${A[@]:-x}``) is unknown."""
    if length:
        n = str(len(elements))
        return [(n, n, quoted)]
    if operated:
        return [(None, None, quoted)]
    out: list = []
    for i, el in enumerate(elements):
        if i:
            out.append((" ", " ", quoted) if star and quoted else BREAK)
        out.extend((v, a, quoted) for v, a in el)
    if not elements and quoted and not star:
        return []
    return out


def length_pieces(base: list, quoted: bool) -> list:
    """``${#NAME}``."""
    v, a = join(base)
    return [(None if v is None else str(len(v)), None if a is None else str(len(a)), quoted)]


def default_decisions(op: str, bv: str | None, ba: str | None, var: Var | None, unset_known: bool):
    """(strict, assumed): whether ``${NAME<op>word}`` gives the variable's value (True), the word
    (False), or cannot be decided (None); for ``+`` the answer is inverted (True: the empty value)."""
    colon = op.startswith(":")
    if bv is None and not unset_known:
        strict = None
    elif unset_known:
        strict = False
    elif colon:
        strict = bv != ""
    else:
        strict = True  # known value: the variable is set
    # assumed decision (caller sets nothing)
    if ba is None:
        assumed = None
    elif colon:
        assumed = ba != ""
    else:
        assumed = var is not None and not var.unset
    if op.lstrip(":") == "+":
        strict = None if strict is None else not strict
        assumed = None if assumed is None else not assumed
    return strict, assumed


def default_chosen(core: str, strict, assumed, base: list, ba: str | None, alt_pieces: list, quoted: bool):
    """(pieces or None, assumed value) that ``${NAME<op>word}`` gives, from the decisions."""
    if core == "+":
        empty = [("", "", quoted)]
        chosen_strict = None if strict is None else (empty if strict else alt_pieces)
        av = join(alt_pieces)[1]
        chosen_assumed = None if assumed is None else ("" if assumed else av)
        return chosen_strict, chosen_assumed
    chosen_strict = None if strict is None else (base if strict else alt_pieces)
    chosen_assumed = None if assumed is None else (ba if assumed else join(alt_pieces)[1])
    return chosen_strict, chosen_assumed


def affix_pieces(base: list, pattern: list, op: str, quoted: bool) -> list:
    """``${NAME#pattern}`` and the like."""
    bv, ba = join(base)
    pv, pa = join(pattern)
    rv = None if bv is None or pv is None else remove_affix(bv, pv, op)
    ra = None if ba is None or pa is None else remove_affix(ba, pa, op)
    return [(rv, ra, quoted)]
