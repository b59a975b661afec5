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

import re

from dslint.documents.model import ParseProblem
from dslint.source import SourceFile, Span

from .launchers import LAUNCH_ENV_VARS, LAUNCHER_NAMES, is_launch_env_var, is_launcher_name
from .model import Assignment, Command, FunctionDef, Heredoc, Redirect, RuntimeFailure, Script, Trap, Value, VarRef, Word, split_word
from .unread import Unread
from .slurm import SbatchJob, read_directives
from .variables import Ctx, unknown_var

# The reader itself (tree-sitter, the bash grammar, the walker) is imported by parse_script: a
# document kept parsed in .dslint_cache/ comes back with the model alone.

__all__ = [
    "Word",
    "Assignment",
    "Value",
    "Command",
    "Trap",
    "Heredoc",
    "Redirect",
    "FunctionDef",
    "VarRef",
    "Script",
    "Unread",
    "SbatchJob",
    "parse_script",
    "syntax_problem",
    "split_word",
    "LAUNCHER_NAMES",
    "is_launcher_name",
    "LAUNCH_ENV_VARS",
    "is_launch_env_var",
]


def parse_script(source: SourceFile) -> Script:
    """Read a shell script statically. Never raises for bad input; problems are reported."""
    from .substitution import BAD_SUBSTITUTION_NOTE, bad_substitution_message, bad_substitutions
    from .syntax import BASH_VERSION, check
    from .traps import env_after_command, find_traps
    from dslint.documents.treesitter import parser
    from .unread import read_tree
    from .walker import Walker

    script = Script(source=source)
    data = source.utf8
    tree = parser("bash").parse(data)
    # bash accepts a `\` at the very end of the file; tree-sitter does not. Parse a copy with
    # that backslash turned into a space (same length, so every offset stays valid).
    if tree.root_node.has_error:
        end = len(data.rstrip())
        if end and data[end - 1 : end] == b"\\" and (end - len(data[:end].rstrip(b"\\"))) % 2 == 1:
            buf = bytearray(data)
            buf[end - 1] = 0x20
            patched = bytes(buf)
            patched_tree = parser("bash").parse(patched)
            if not patched_tree.root_node.has_error or _count_errors(patched_tree) < _count_errors(tree):
                data, tree = patched, patched_tree
    units: list[tuple[int, int]] = []
    complaint = check(source.text, units, script.unended_heredocs)
    excluded, unread = read_tree(source, tree, data)
    if complaint is not None:
        script.problems.append(syntax_problem(source, complaint))
    else:
        for start, end in bad_substitutions(source.text, units):
            script.runtime_failures.append(
                RuntimeFailure(Span(source, start, end), bad_substitution_message(source.text[start:end], BASH_VERSION), BAD_SUBSTITUTION_NOTE)
            )
        if unread:
            # bash accepts what tree-sitter could not read: blank those commands out and read the rest
            data, tree, unread = _read_around(source, data, units)
            excluded = read_tree(source, tree, data)[0]
            failed = [(f.span.start, f.span.end) for f in script.runtime_failures]
            # a command bash abandons (bad substitution) is reported as that, not as unread
            script.unread = [u for u in unread if not any(u.span.start <= a < u.span.end for a, _ in failed)]
    walker = Walker(script, data)
    script.sbatch = read_directives(source)
    if script.sbatch is not None:  # sbatch's variables, as the directives ask (its command line may override them)
        for name, (value, directive) in script.sbatch.variables().items():
            walker.table.vars[name] = unknown_var(True, directive.span, "sbatch", value)
    walker.block(tree.root_node.children, Ctx())
    find_traps(script, excluded)
    env_after_command(script, walker.events)
    script.continuation_traps.sort(key=lambda t: (t.span.start, t.code_name))
    return script


def _read_around(source: SourceFile, data: bytes, units):
    """Blank out (keeping newlines and offsets) each top-level command that tree-sitter cannot
    read on its own, and parse again, so that every other command is read.
    Returns (data, tree, the commands left unread)."""
    from dslint.documents.treesitter import parser

    ascii_text = len(data) == len(source.text)

    def to_byte(offset: int) -> int:
        return offset if ascii_text else len(source.text[:offset].encode("utf-8"))

    blank = bytearray(data)
    unread: list[Unread] = []
    for start, end in units:
        lo, hi = to_byte(start), to_byte(end)
        if parser("bash").parse(data[lo:hi]).root_node.has_error:
            blank[lo:hi] = bytes(b if b in (0x0A, 0x0D) else 0x20 for b in blank[lo:hi])
            text = source.text[start:end].strip().split("\n", 1)[0]
            unread.append(Unread(Span(source, start, end), text if len(text) <= 60 else text[:57].rstrip() + "..."))
    patched = bytes(blank)
    return patched, parser("bash").parse(patched), unread


_PLACEHOLDER = re.compile(r"<[^<>\s][^<>\n]*>")


def syntax_problem(source: SourceFile, complaint) -> ParseProblem:
    """bash's complaint (a syntax.Complaint), at the line bash names (the whole line, without its indentation)."""
    from .syntax import BASH_VERSION

    line = min(complaint.line, source.line_count)
    start, end = source.line_start(line), source.line_end(line)
    text = source.text[start:end]
    lead = len(text) - len(text.lstrip(" \t"))
    placeholder = _PLACEHOLDER.search(text) if complaint.token is not None else None
    note = None
    if placeholder is not None:
        note = f"`{placeholder.group(0)[:40]}` reads as redirections: a placeholder never filled in?"
    return ParseProblem(Span(source, start + lead, end), f"bash {BASH_VERSION}: {complaint.message}", note)


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

