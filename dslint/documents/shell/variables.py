"""The variable table: what each shell variable holds, strictly and as assumed.

A value is a sequence of pieces ``(value, assumed)``; ``value`` None means the script alone does
not decide it. ``join`` glues pieces, bounded so that no script makes a value grow without limit.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .model import Value
from .pieces import join

NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
ASSIGN_WORD_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?=)")
# Variables every login shell has: their "assumed" value is not the empty string.
ALWAYS_SET = frozenset(
    {
        "HOME",
        "PATH",
        "USER",
        "PWD",
        "OLDPWD",
        "HOSTNAME",
        "SHELL",
        "LANG",
        "RANDOM",
        "SECONDS",
        "LINENO",
        "BASH_SOURCE",
        "BASHPID",
        "PPID",
        "UID",
        "EUID",
        "IFS",
        "BASH",
        "BASH_VERSION",
        "HOSTTYPE",
        "OSTYPE",
        "LOGNAME",
        "TERM",
        "SHLVL",
    }
)
_MAX_VAR_PARTS = 256  # a variable built from more pieces keeps them joined into one
_MAX_ARRAY_ELEMENTS = 10_000  # a longer array (A=("${A[@]}" "${A[@]}") ...) is unknown




class Var:
    __slots__ = ("parts", "array", "exported", "unset", "span", "kind", "value", "assumed", "public")

    def __init__(self, parts, exported, span, kind, array=None, unset=False):
        self.parts = tuple(parts)  # ((value|None, assumed|None), ...)
        if len(self.parts) > _MAX_VAR_PARTS:  # bounded, however often a script doubles a variable
            self.parts = (join(self.parts),)
        if array is not None and len(array) > _MAX_ARRAY_ELEMENTS:
            array, self.parts = None, ((None, None),)
        self.array = array  # tuple of parts-tuples for indexed arrays
        self.exported = exported
        self.unset = unset
        self.span = span
        self.kind = kind
        if array is not None and not self.parts:
            self.parts = array[0] if array else ()
        self.value, self.assumed = join(self.parts)
        self.public = Value(self.value, span, kind, self.assumed)

    def same(self, other: Var) -> bool:
        return (
            self.parts == other.parts
            and self.array == other.array
            and self.exported == other.exported
            and self.unset == other.unset
        )

    def with_export(self, exported: bool) -> Var:
        return Var(self.parts, exported, self.span, self.kind, self.array, self.unset)


def unknown_var(exported: bool, span, kind: str, assumed: str | None = None) -> Var:
    return Var(((None, assumed),), exported, span, kind)


class Ctx(NamedTuple):
    function: str | None = None
    conditional: bool = False
    in_loop: bool = False
    from_eval: bool = False
    background: bool = False
    depth: int = 0
    child_shell: bool = False  # bash -c: non-exported variables of the parent are gone
    runner: object = None  # the command (eval, bash -c, sbatch --wrap) that runs the string being read


# ---------------------------------------------------------------------------------------
