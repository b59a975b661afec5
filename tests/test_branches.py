"""Which statements of a script run together (dslint/documents/shell/branches.py): the branch path of
each command, the switches, and whether every run that reaches a statement meets a group of others."""

from __future__ import annotations

from dslint.documents.shell import parse_script
from dslint.documents.shell.branches import always_with, paths
from dslint.source import SourceFile


def _script(text: str):
    return parse_script(SourceFile.from_bytes("t.sh", text.encode("utf-8")))


def _command(script, name: str, nth: int = 0):
    return [c for c in script.commands if c.basename == name][nth]


def test_branch_paths_and_switches():
    script = _script("a\nif b; then\n  c\nelif d; then\n  e\nelse\n  f\nfi\ncase $X in\n  x) g ;;\nesac\nh && i || j\n")
    kinds = [(s.kind, s.branches, s.exhaustive) for s in script.switches]
    assert kinds == [("if", 3, True), ("case", 1, False), ("&&", 1, False), ("||", 1, False)]
    branch = {c.basename: c.branch for c in script.commands}
    assert branch["a"] == () and branch["b"] == () and branch["c"] == ((0, 0),)
    assert branch["d"] == ((0, 1),) and branch["e"] == ((0, 1),) and branch["f"] == ((0, 2),)
    assert branch["g"] == ((1, 0),) and branch["h"] == () and branch["i"] == ((2, 0),) and branch["j"] == ((3, 0),)
    # a command whose exit status is tested may fail: the conditions, and each part of && / || but the last
    tested = {c.basename for c in script.commands if c.tested}
    assert tested == {"b", "d", "h", "i"}


def test_a_statement_runs_with_another_when_its_block_encloses_it():
    script = _script("e\nif x; then\n  f\n  l\nelse\n  m\nfi\nn\n")
    evidence = paths(script, _command(script, "f"))
    assert always_with(script, _command(script, "l"), evidence)  # same branch
    assert not always_with(script, _command(script, "m"), evidence)  # the other branch
    assert not always_with(script, _command(script, "n"), evidence)  # after the fi: the else branch skips f
    assert always_with(script, _command(script, "m"), paths(script, _command(script, "e")))  # before the if


def test_one_in_each_branch_of_an_exhaustive_switch_covers_what_follows():
    script = _script("if x; then\n  f\nelse\n  g\nfi\nn\ncase $Y in\n  a) h ;;\n  b) k ;;\nesac\nm\n")
    both = [*paths(script, _command(script, "f")), *paths(script, _command(script, "g"))]
    assert always_with(script, _command(script, "n"), both)
    without_default = [*paths(script, _command(script, "h")), *paths(script, _command(script, "k"))]
    assert not always_with(script, _command(script, "m"), without_default)  # no `*)`: neither may run


def test_a_function_runs_where_it_is_called():
    script = _script("setup() {\n  f\n}\nnever() {\n  g\n}\nif x; then\n  setup\n  l\nelse\n  m\nfi\n")
    evidence = paths(script, _command(script, "f"))
    assert evidence == [((0, 0),)]
    assert always_with(script, _command(script, "l"), evidence)
    assert not always_with(script, _command(script, "m"), evidence)
    assert paths(script, _command(script, "g")) == [(("function", "never"),)]  # called nowhere
