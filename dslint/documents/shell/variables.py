"""The variable table: what each shell variable holds, strictly and as assumed.

A value is a sequence of pieces ``(value, assumed)``; ``value`` None means the script alone does
not decide it. ``join`` glues pieces, bounded so that no script makes a value grow without limit.
``VarTable`` is the walker's state: the expansion, assignment and command readers are given it.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .model import Assignment, Script, Value
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
    subshell: bool = False  # ( ... ) or one part of a pipeline: its cd does not outlive it
    runner: object = None  # the command (eval, bash -c, sbatch --wrap) that runs the string being read
    branch: tuple = ()  # ((switch number, branch number), ...): the if/case/&&/|| branches it is in
    tested: bool = False  # a condition: its exit status is tested, so it may fail


def record_assignment(script: Script, a: Assignment, ctx: Ctx) -> Assignment:
    """Add an assignment to the script, with where it stands (function, branch, loop, eval)."""
    a.in_function = ctx.function
    a.conditional = ctx.conditional
    a.in_loop = ctx.in_loop
    a.from_eval = ctx.from_eval
    a.branch = ctx.branch
    script.assignments.append(a)
    return a


class VarTable:
    """The variables at the statement being read: copy on write, with a log of the names written
    in each open branch (so that branches can be joined), and the shell state that decides how
    an assignment is exported (``set -a``, the ``local`` names of the functions being read)."""

    def __init__(self):
        self.vars: dict[str, Var] = {}
        self.owned = True  # whether self.vars may be written in place
        self.logs: list[set[str]] = []  # names written, one set per open branch
        self.allexport = False
        self.locals: list[set[str]] = []
        self.func_assigns: dict[str, tuple[frozenset, frozenset]] = {}  # function -> (assigns, exports)

    def share(self) -> dict:
        """The current table, which the caller keeps: the next write copies it first."""
        self.owned = False
        return self.vars

    def use(self, table: dict) -> None:
        self.vars = table
        self.owned = False

    def own(self, table: dict) -> None:
        """Make a table nobody else keeps the current one."""
        self.vars = table
        self.owned = True

    def set_var(self, name: str, var: Var) -> None:
        if not self.owned:
            self.vars = dict(self.vars)
            self.owned = True
        self.vars[name] = var
        if self.logs:
            self.logs[-1].add(name)

    def exported(self, name: str) -> bool:
        """Whether an assignment to ``name`` now is exported: it was, or ``set -a`` is on."""
        old = self.vars.get(name)
        return bool(old and old.exported and not old.unset) or self.allexport

    def make_unknown(self, name: str, span, export: bool = False) -> None:
        exported = export or self.exported(name)
        self.set_var(name, unknown_var(exported, span, "assignment"))

    def end_log(self, propagate: bool = True) -> set[str]:
        names = self.logs.pop()
        if propagate and self.logs:
            self.logs[-1].update(names)
        return names

    def merge(self, base: dict, branches: list[dict], names: set[str]) -> None:
        """Make the table the join of the branches; ``names`` are the variables any branch wrote."""
        changed = {}
        for name in names:
            got = [b.get(name) for b in branches]
            first = got[0]
            if all(g is first for g in got):
                if first is not base.get(name):
                    changed[name] = first
                continue
            if first is not None and all(g is not None and g.same(first) for g in got):
                changed[name] = first
                continue
            changed[name] = _disagreeing(name, got, base.get(name))
        if not changed:
            self.use(base)
            return
        result = dict(base)
        for name, var in changed.items():
            if var is None:
                result.pop(name, None)
            else:
                result[name] = var
        self.own(result)


def _disagreeing(name: str, got: list, old: Var | None) -> Var:
    """A variable the branches leave different: unknown, exported when any branch exports it,
    assumed when every branch assumes the same value."""
    exported = any(g is not None and g.exported for g in got)
    setters = [g for g in got if g is not None and g is not old]
    span = setters[-1].span if setters else None
    kind = setters[-1].kind if setters else "assignment"
    assumed_vals = set()
    for g in got:
        if g is None:
            assumed_vals.add(None if name in ALWAYS_SET else "")
        elif g.unset:
            assumed_vals.add("")
        else:
            assumed_vals.add(g.assumed)
    assumed = assumed_vals.pop() if len(assumed_vals) == 1 else None
    return unknown_var(exported, span, kind, assumed)
