"""Which statements of a script run together: the branches of its ``if``/``case``/``&&``/``||``.

Each command and assignment has a ``branch`` path: ``((switch, branch), ...)``, the switches of
``Script.switches`` it is written in, outermost first, and which of their branches. Bash runs one
branch of a switch (or none: an ``if`` without ``else``, a ``case`` without ``*)``, the right side
of ``&&``/``||``). So a statement S surely runs on every run that reaches a statement L when S's
block encloses L's (S's path is a prefix of L's); and a group of statements covers L when, in a
block enclosing L, one of them stands in the block itself, or a switch of the block has one in
each of its branches, one of which always runs.

The statements of a function run where it is called: their paths are the call's path followed by
the path inside the body (a function called nowhere keeps a root of its own, ``("function",
name)``, so that only its own statements and the script's top level reach it).

This answers "does every run that reaches this launch also do that?" for evidence a script gives
about a launch (dslint.launch.target): evidence in one branch says nothing about a launch in
another branch, nor about a launch after the switch when the other branches lack it.
"""

from __future__ import annotations

from .model import Assignment, Command, Script

_MAX_CALL_DEPTH = 4
_MAX_PATHS = 32

Path = tuple


def paths(script: Script, statement: Command | Assignment) -> list[Path]:
    """The paths a statement runs at: one, or one per call of the function it is in."""
    return _paths(script, statement.in_function, statement.branch, 0)


def _paths(script: Script, function: str | None, branch: Path, depth: int) -> list[Path]:
    if function is None:
        return [branch]
    calls = [c for c in script.commands if c.basename == function and c.in_function != function]
    if not calls or depth >= _MAX_CALL_DEPTH:
        return [(("function", function),) + branch]
    out: list[Path] = []
    for call in calls:
        for outer in _paths(script, call.in_function, call.branch, depth + 1):
            out.append(outer + branch)
            if len(out) >= _MAX_PATHS:
                return out
    return out


def covering_block(script: Script, path: Path, evidence: list[Path]) -> Path | None:
    """The outermost block enclosing a statement at ``path`` in which every run meets one of the
    ``evidence`` statements; None when some run reaches the statement without any of them."""
    for depth in range(len(path) + 1):
        if _covers(script, path[:depth], evidence):
            return path[:depth]
    return None


def always_with(script: Script, statement: Command | Assignment, evidence: list[Path]) -> bool:
    """Whether every run that reaches ``statement`` (at each of its paths) meets the evidence."""
    return all(covering_block(script, path, evidence) is not None for path in paths(script, statement))


def _covers(script: Script, block: Path, evidence: list[Path]) -> bool:
    size = len(block)
    inside = [e for e in evidence if e[:size] == block]
    if any(len(e) == size for e in inside):
        return True
    for switch in {e[size][0] for e in inside}:
        if not isinstance(switch, int):
            continue  # the root of a function called nowhere
        written = script.switches[switch]
        if written.exhaustive and all(_covers(script, block + ((switch, b),), inside) for b in range(written.branches)):
            return True
    return False


def statement_at(script: Script, offset: int) -> Command | Assignment | None:
    """The innermost command or assignment of the script whose text holds ``offset``."""
    best = None
    for statement in (*script.assignments, *script.commands):
        span = statement.span
        if span.source is script.source and span.start <= offset < max(span.end, span.start + 1):
            if best is None or span.end - span.start < best.span.end - best.span.start:
                best = statement
    return best
