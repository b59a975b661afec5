"""Shell launch scripts read statically: commands, their words and the environment they see.

Nothing here runs anything. ``parse_script`` parses the text with tree-sitter-bash and walks
the statements in order, keeping a table of shell variables so that every word of every
command gets the value bash would give it, when that value can be known from the file alone.

Rules of the evaluation:

* A value is known only when the script itself decides it. Anything that comes from outside
  the file (the caller's environment, ``$1``, ``read``, ``$(nvidia-smi ...)``, loop variables,
  ``~``) is unknown: ``value`` is ``None``. Nothing is guessed.
* Besides the strict value, every word and variable carries ``assumed``: the value it has when
  the caller sets none of the variables the script leaves open and passes no arguments
  (``${NPROC:-8}`` is unknown, assumed ``"8"``). Rules can use it for softer findings.
* ``if``/``case`` branches and the right side of ``&&``/``||`` run on copies of the table; a
  variable whose branches disagree is unknown afterwards. Variables assigned in a loop body are
  unknown in the body and after it.
* Unquoted expansions are split into fields as bash does (``$ARGS`` with ``ARGS="--a 1"``
  gives two words); an unquoted expansion whose value is unknown keeps one word with
  ``may_split`` set, because it may stand for any number of words.
* Exported variables (``export``, ``declare -x``, ``set -a``) and prefix assignments
  (``VAR=x cmd``, ``env VAR=x cmd``) form a command's ``environment``; plain assignments are
  only ``shell_vars``. A variable the caller had already exported stays exported after a plain
  assignment, which a static reader cannot see: rules should word findings accordingly.

Positions are ``Span`` character ranges; words produced by ``eval``/``bash -c`` point at the
string that was evaluated.
"""

from __future__ import annotations

from dslint.source import SourceFile

from .launchers import LAUNCH_ENV_VARS, LAUNCHER_NAMES, is_launch_env_var, is_launcher_name
from .model import Assignment, Command, FunctionDef, Heredoc, Script, Trap, Value, VarRef, Word, split_word
from .problems import collect_problems
from .traps import env_after_command, find_traps
from .treesitter import parser
from .variables import Ctx
from .walker import Walker

__all__ = [
    "Word",
    "Assignment",
    "Value",
    "Command",
    "Trap",
    "Heredoc",
    "FunctionDef",
    "VarRef",
    "Script",
    "parse_script",
    "split_word",
    "LAUNCHER_NAMES",
    "is_launcher_name",
    "LAUNCH_ENV_VARS",
    "is_launch_env_var",
]


def parse_script(source: SourceFile) -> Script:
    """Read a shell script statically. Never raises for bad input; problems are reported."""
    script = Script(source=source)
    data = source.utf8
    tree = parser().parse(data)
    # bash accepts a `\` at the very end of the file; tree-sitter does not. Parse a copy with
    # that backslash turned into a space (same length, so every offset stays valid).
    if tree.root_node.has_error:
        end = len(data.rstrip())
        if end and data[end - 1 : end] == b"\\" and (end - len(data[:end].rstrip(b"\\"))) % 2 == 1:
            buf = bytearray(data)
            buf[end - 1] = 0x20
            patched = bytes(buf)
            patched_tree = parser().parse(patched)
            if not patched_tree.root_node.has_error or _count_errors(patched_tree) < _count_errors(tree):
                data, tree = patched, patched_tree
    walker = Walker(script, data)
    walker._ctx = Ctx()
    walker._literal = True
    walker.block(tree.root_node.children, Ctx())
    excluded = collect_problems(script, tree, data)
    script.problems.sort(key=lambda p: (p.span.start, p.span.end))
    find_traps(script, excluded)
    env_after_command(script, walker)
    script.continuation_traps.sort(key=lambda t: (t.span.start, t.code_name))
    return script


def _count_errors(tree) -> int:
    count = 0
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            count += 1
            continue
        if node.has_error:
            stack.extend(node.children)
    return count

