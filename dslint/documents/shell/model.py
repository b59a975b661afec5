"""What a shell script is to dslint: commands with their words, assignments, here-documents.

These are the public results of reading a script (``parse_script``); every position is a ``Span``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from dslint.documents.model import ParseProblem
from dslint.source import SourceFile, Span

from .pieces import PLACEHOLDER, join

_PLACEHOLDER_RE = re.compile(r"\$\{%s\d+\}" % PLACEHOLDER)


def span_text(span: Span | None) -> str:
    return "?" if span is None else span.where()


@dataclass(eq=False, repr=False)
class Word:
    """One word of a command as bash passes it to the program.

    ``value`` is the string after quote removal and expansion, or None when any part of it
    is unknown. ``parts`` keeps the pieces: ``(value, assumed)`` pairs where an unknown piece
    has value None. ``literal`` is True when the source text contains no expansion at all.
    """

    span: Span
    raw: str
    value: str | None
    literal: bool = True
    assumed: str | None = None
    may_split: bool = False
    parts: tuple = ()

    def __post_init__(self) -> None:
        if PLACEHOLDER in self.raw:  # a piece of an eval'd string the script does not decide
            self.raw = _PLACEHOLDER_RE.sub("…", self.raw)

    @property
    def known(self) -> bool:
        return self.value is not None

    @property
    def prefix(self) -> str:
        """The known text at the start of the word (all of it when the word is known)."""
        if self.value is not None:
            return self.value
        out = []
        for piece in self.parts:
            if piece[0] is None:
                break
            out.append(piece[0])
        return "".join(out)

    def __repr__(self) -> str:
        extra = "" if self.value == self.raw else f" value={self.value!r}"
        if self.value is None and self.assumed is not None:
            extra += f" assumed={self.assumed!r}"
        return f"Word({self.raw!r}{extra} @{span_text(self.span)})"


@dataclass(eq=False, repr=False)
class Assignment:
    """``NAME=value`` wherever it is written. ``value`` is None for ``export NAME``."""

    name: str
    name_span: Span
    value: Word | None
    span: Span
    exported: bool
    kind: str  # "prefix" | "export" | "plain" | "default"
    in_function: str | None = None
    conditional: bool = False
    in_loop: bool = False
    from_eval: bool = False
    branch: tuple = ()  # the branches it is written in (dslint.documents.shell.branches)

    def __repr__(self) -> str:
        val = None if self.value is None else self.value.value
        exported = " exported" if self.exported else ""
        return f"Assignment({self.name}={val!r} {self.kind}{exported} @{span_text(self.span)})"


@dataclass(frozen=True, repr=False)
class Value:
    """A variable as one command sees it. ``value`` None means unknown."""

    value: str | None
    span: Span | None  # where it was set (None when it only comes from the caller)
    source_kind: str  # "assignment" | "export" | "prefix" | "default" | "caller-env" | "sbatch"
    assumed: str | None = None

    def __repr__(self) -> str:
        return f"Value({self.value!r} {self.source_kind} @{span_text(self.span)})"


@dataclass(eq=False, repr=False)
class Command:
    """A simple command after wrappers (``nohup``, ``env``, ``exec``, ``time`` ...) are peeled off."""

    span: Span
    name: Word
    args: list[Word]
    env: list[Assignment]  # its own prefix assignments (and those of an `env` wrapper)
    in_function: str | None = None
    conditional: bool = False
    in_loop: bool = False
    from_eval: bool = False
    background: bool = False
    branch: tuple = ()  # the branches it is written in (dslint.documents.shell.branches)
    tested: bool = False  # its exit status is tested (an if/while condition, left of && or ||): it may fail
    wrappers: list[Word] = field(default_factory=list)
    clears_env: bool = False  # env -i / exec -c: nothing but `env` reaches the program
    runner: "Command | None" = None  # the eval / bash -c / sbatch --wrap whose string this command is in
    # In a subshell (`( ... )`, a part of a pipeline) or a child shell (`bash -c`): a `cd` there
    # does not move the commands after it.
    subshell: bool = False
    # (variable table, extra env, unset names, clears, child shell); read lazily
    _scope: tuple | None = field(default=None, repr=False)
    _environment: dict | None = field(default=None, repr=False)
    _shell_vars: dict | None = field(default=None, repr=False)

    @property
    def environment(self) -> dict[str, Value]:
        """Every variable the program gets in its environment: exported ones and prefix assignments."""
        if self._environment is None:
            env: dict[str, Value] = {}
            if self._scope is not None:
                table, extra, unsets, clears, _child = self._scope
                if not clears:
                    env = {n: v.public for n, v in table.items() if v.exported and not v.unset}
                for n in unsets:
                    env.pop(n, None)
                for n, value in extra:
                    env[n] = value
            self._environment = env
        return self._environment

    @property
    def shell_vars(self) -> dict[str, Value]:
        """Variables set in the shell but not exported: the program does not see them."""
        if self._shell_vars is None:
            out: dict[str, Value] = {}
            if self._scope is not None:
                table, _extra, _unsets, _clears, child = self._scope
                if not child:
                    out = {n: v.public for n, v in table.items() if not v.exported and not v.unset}
            self._shell_vars = out
        return self._shell_vars

    @property
    def argv(self) -> list[Word]:
        return [self.name, *self.args]

    @property
    def basename(self) -> str | None:
        """File name of the program (``/usr/bin/python3`` -> ``python3``), None when unknown."""
        if self.name.value is None:
            return None
        return os.path.basename(self.name.value)

    def __repr__(self) -> str:
        words = " ".join(w.raw if w.value is None else w.value for w in self.argv)
        return f"Command({words!r} @{span_text(self.span)})"


@dataclass(eq=False, repr=False)
class Trap:
    """A place where bash reads the text differently from how it looks: facts, worded by the rules."""

    code_name: str  # the rule name that reports it (rules/shell.py)
    span: Span
    harmless: bool = False  # bash already does what the text shows; only its look misleads
    orphans: str | None = None  # the line that runs as a separate command instead of as arguments
    lost_env: bool = False  # the `VAR=value \` lines before a blank line set only shell variables
    word: str | None = None  # env-after-command: the `VAR=value` word written after the command name
    names: tuple[str, ...] = ()  # the variables concerned
    command: str | None = None  # the launcher's basename
    command_line: int | None = None  # the launcher's line (env-not-exported)
    continued: bool = False  # env-not-exported: the assignments lack the `\` that would continue them

    def __repr__(self) -> str:
        return f"Trap({self.code_name} @{span_text(self.span)})"


@dataclass(eq=False, repr=False)
class Heredoc:
    """A here-document: ``cat > ds.json <<EOF ... EOF``."""

    span: Span  # the body
    target: Word | None  # the file it is written to, when there is one
    value: str | None  # the body after expansion (None when any part is unknown)
    delimiter: str
    expanded: bool  # False for <<'EOF' (body taken literally)
    command: Command | None = None
    # the body as pieces (value, assumed, start, end) with offsets into the file, when every
    # character of it stands in the file as read (heredoc_located); None otherwise
    located: tuple | None = None

    def __repr__(self) -> str:
        tgt = None if self.target is None else self.target.value
        return f"Heredoc(-> {tgt!r} @{span_text(self.span)})"


@dataclass(eq=False, repr=False)
class Redirect:
    """A file a redirection writes: ``cmd > f``, ``>> f``, ``&> f``, ``>| f``, or a bare ``> f``."""

    span: Span  # the redirection
    target: Word
    command: Command | None  # None for a bare redirection or one of a compound statement
    in_function: str | None = None
    append: bool = False  # >> (adds to what the file holds)
    heredoc: bool = False  # the file a here-document is written to (Script.heredocs has its text)
    # every command of the pipeline whose output it is, in order (the command alone outside a pipeline)
    pipeline: tuple = ()

    def __repr__(self) -> str:
        return f"Redirect(-> {self.target.value if self.target.known else self.target.raw!r} @{span_text(self.span)})"


@dataclass(eq=False, repr=False)
class FunctionDef:
    """A shell function a script defines."""

    name: str
    span: Span
    assigns: frozenset = frozenset()  # global variables the body sets

    def __repr__(self) -> str:
        return f"FunctionDef({self.name} @{span_text(self.span)})"


@dataclass(eq=False, repr=False)
class VarRef:
    """``$NAME`` / ``${NAME...}`` in a word. ``set_in_script`` is False when only the caller can set it."""

    name: str
    span: Span
    set_in_script: bool

    def __repr__(self) -> str:
        return f"VarRef({self.name} @{span_text(self.span)})"


@dataclass(frozen=True)
class RuntimeFailure:
    """Text bash accepts (``bash -n`` is silent) but that certainly fails when the line runs."""

    span: Span
    message: str  # bash's complaint, e.g. "bash 5.2 cannot parse the string `eval` runs: ..."
    note: str | None = None  # why bash -n does not see it


@dataclass(frozen=True)
class Switch:
    """Statements of which at most one branch runs: an ``if`` (with its ``elif``/``else``), a
    ``case``, or the right side of ``&&``/``||`` (one branch, which may not run)."""

    kind: str  # "if" | "case" | "&&" | "||"
    span: Span
    branches: int  # the branches written
    exhaustive: bool  # one of them always runs (an ``else``, a ``*)`` pattern)


@dataclass(eq=False)
class Script:
    """What a shell script does, as far as the launches go."""

    source: SourceFile
    commands: list[Command] = field(default_factory=list)
    assignments: list[Assignment] = field(default_factory=list)
    problems: list[ParseProblem] = field(default_factory=list)
    continuation_traps: list[Trap] = field(default_factory=list)
    heredocs: list[Heredoc] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)  # the files redirections write, in source order
    functions: dict[str, FunctionDef] = field(default_factory=dict)
    references: list[VarRef] = field(default_factory=list)
    runtime_failures: list[RuntimeFailure] = field(default_factory=list)
    unread: list = field(default_factory=list)  # parts tree-sitter skipped although bash accepts them (unread.Unread)
    continued_lines: set[int] = field(default_factory=set)  # lines whose `\` continues the command onto the next
    unended_heredocs: list[tuple[int, str, bool]] = field(default_factory=list)  # (line of the `<<`, delimiter, the file ends it)
    sbatch: object = None  # the #SBATCH directives (slurm.SbatchJob), when the script has any
    # (start, end) of strings run by eval/bash -c whose words could be placed only at the whole string
    unmapped: list[tuple[int, int]] = field(default_factory=list)
    # every if/case/&&/|| switch, indexed by the numbers of the statements' ``branch`` paths
    switches: list[Switch] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.source.path


def split_word(word: Word, sep: str = "=") -> tuple[str, Word] | None:
    """Split ``--flag=value`` at the first ``sep`` inside the word's known leading text.

    Returns (text before sep, Word for the rest) or None when the separator is not in the
    known part of the word.
    """
    before: list[str] = []
    rest_parts: list[tuple] = []
    found = False
    for v, a in word.parts or ((word.value, word.assumed),):
        if found:
            rest_parts.append((v, a))
            continue
        if v is None:
            return None
        if sep in v:
            k = v.index(sep)
            before.append(v[:k])
            tail = v[k + len(sep) :]
            rest_parts.append((tail, tail))
            found = True
        else:
            before.append(v)
    if not found:
        return None
    left = "".join(before)
    value, assumed = join(rest_parts)
    span = word.span
    raw = word.raw
    cut = raw.find(sep)
    if word.literal and (span.end - span.start) == len(raw) and cut != -1 and raw.startswith(left):
        vspan = Span(span.source, span.start + cut + len(sep), span.end)
        vraw = raw[cut + len(sep) :]
    elif cut != -1 and raw[:cut] == left and (span.end - span.start) == len(raw):
        vspan = Span(span.source, span.start + cut + len(sep), span.end)
        vraw = raw[cut + len(sep) :]
    else:
        vspan, vraw = span, raw
    return left, Word(vspan, vraw, value, word.literal, assumed, word.may_split and value is None, tuple(rest_parts))
