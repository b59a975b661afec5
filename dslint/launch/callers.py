"""How a script is called: the documented calls in the repository's Markdown and the other scripts
that run it, with the variables each call sets for it.

A launch script that reads ``$NPROC_PER_NODE`` without setting it expects its caller to set it:
the README's ``NPROC_PER_NODE=8 bash train.sh``, an ``export NPROC_PER_NODE=8`` earlier in the same
code block, or another script that sets it and runs ``bash train.sh``. Only then is what the
script leaves unset known to be set when the launch runs.

Read as text, never run. A call is a line of a Markdown code block (fenced, or an inline code
span), of another shell script or of a Makefile whose words name the script (``bash scripts/train.sh``,
``./train.sh``, ``source train.sh``: a word that is the script's file name or ends in
``/<name>``). What it sets is what the text could set, counted generously, since a variable
counted as set silences a finding rather than making one: ``NAME=`` on the line or before it in
the same block or script, ``export NAME``, ``read``/``for``/``declare``/``local`` of it; a script
that sources another file or evals a string, and a Python file that names the script (a
``subprocess`` call with its own environment), may set anything (``Call.unknown``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from dslint.files.tree import tree

_MAX_BYTES = 1_000_000  # a Markdown file or script larger than this is not read
#: Launchers that run their command once per rank (MPI, SLURM's srun, Cray's aprun, IBM's jsrun).
RANK_LAUNCHERS = frozenset({"mpirun", "mpiexec", "orterun", "srun", "aprun", "jsrun"})
_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE = re.compile(r"`([^`\n]+)`")
_SOURCES = re.compile(r"(?:^|[;&|(]\s*|\bthen\s+|\bdo\s+)(?:source|\.)\s+\S|\beval\b")


@dataclass(frozen=True)
class Call:
    """One place that runs the script: a line of a Markdown code block or of another script."""

    path: str  # the file, as given to ``calls_of`` (relative to the repository root)
    line: int
    sets: frozenset  # the variables the call (or what comes before it there) may set
    unknown: bool = False  # the caller sources a file or evals a string: it may set anything
    # The launcher that starts the script once per rank (``mpirun -np 8 bash train.sh``,
    # ``srun bash train.sh``): each copy is one process of a job whose size that launcher sets.
    ranks: str | None = None

    def may_set(self, name: str) -> bool:
        return self.unknown or name in self.sets

    def where(self) -> str:
        return f"{self.path}:{self.line}"


# Text that may set a variable, counted generously: ``NAME=``/``NAME+=``; every word after
# ``export``/``declare``/``local``/``readonly``/``typeset``/``read``/``mapfile``; ``for NAME in``;
# ``printf -v NAME``; ``getopts spec NAME``.
_ASSIGNED = re.compile(r"(?:^|[\s;&|(`'\"=,])([A-Za-z_][A-Za-z0-9_]*)\+?=")
_LISTED = re.compile(r"\b(?:export|declare|local|readonly|typeset|read|mapfile|readarray)\b([^;&|\n]*)")
_SINGLE = re.compile(r"\bfor\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\b|\bprintf\s+-v\s+([A-Za-z_][A-Za-z0-9_]*)"
                     r"|\bgetopts\s+\S+\s+([A-Za-z_][A-Za-z0-9_]*)")
_IDENTIFIER = re.compile(r"(?<![\w$-])([A-Za-z_][A-Za-z0-9_]*)")


def names_set(text: str) -> set[str]:
    """Every variable name the text may set."""
    out = {m.group(1) for m in _ASSIGNED.finditer(text)}
    for match in _LISTED.finditer(text):
        out.update(_IDENTIFIER.findall(match.group(1)))
    for match in _SINGLE.finditer(text):
        out.update(group for group in match.groups() if group)
    return out


def may_set_anything(text: str) -> bool:
    """The shell text sources a file or evals a string: it may set any variable."""
    return bool(_SOURCES.search(text))


def _names_script(word: str, name: str) -> bool:
    """Whether a word of a call names the script file ``name`` (``train.sh``, ``./x/train.sh``)."""
    word = word.strip("\"'();&|")
    return word == name or word.endswith("/" + name)


def _logical_lines(lines: list[str]) -> list[tuple[int, str]]:
    """Lines with backslash continuations joined: (first line number, text)."""
    out: list[tuple[int, str]] = []
    pending: list[str] = []
    start = 0
    for number, line in enumerate(lines, 1):
        if not pending:
            start = number
        stripped = line.rstrip()
        if stripped.endswith("\\"):
            pending.append(stripped[:-1])
            continue
        pending.append(line)
        out.append((start, " ".join(pending)))
        pending = []
    if pending:
        out.append((start, " ".join(pending)))
    return out


_COMMENT = re.compile(r"(?:^|\s)#.*$")


def _calls_in_lines(path: str, lines: list[tuple[int, str]], name: str) -> list[Call]:
    """Calls of ``name`` among shell lines run in order (one code block, or one script)."""
    out: list[Call] = []
    before: set[str] = set()
    unknown = False
    for number, text in lines:
        code = _COMMENT.sub("", text)
        words = code.split()
        at = next((i for i, w in enumerate(words) if _names_script(w, name)), None)
        if at is not None:
            ranks = next((os.path.basename(w) for w in words[:at] if os.path.basename(w) in RANK_LAUNCHERS), None)
            out.append(Call(path, number, frozenset(before | names_set(code)), unknown, ranks))
        before |= names_set(code)
        unknown = unknown or bool(_SOURCES.search(code))
    return out


def _markdown_calls(path: str, text: str, name: str) -> list[Call]:
    """Calls in a Markdown file: each fenced code block is one shell session; an inline code span one line."""
    out: list[Call] = []
    block: list[str] | None = None
    first = 0
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        if _FENCE.match(line):
            if block is None:
                block, first = [], number + 1
            else:
                shifted = [(first + n - 1, t) for n, t in _logical_lines(block)]
                out += _calls_in_lines(path, shifted, name)
                block = None
            continue
        if block is not None:
            block.append(line)
            continue
        for span in _INLINE.findall(line):
            out += _calls_in_lines(path, [(number, span)], name)
    if block:  # an unclosed fence runs to the end of the file
        shifted = [(first + n - 1, t) for n, t in _logical_lines(block)]
        out += _calls_in_lines(path, shifted, name)
    return out


def _read(path: str) -> str | None:
    try:
        if os.path.getsize(path) > _MAX_BYTES:
            return None
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


_WORD = re.compile(r"[^\s'\"`;&|()<>=]+")


@lru_cache(maxsize=8)
def _mentions(root: str) -> dict[str, tuple[str, ...]]:
    """Each script's file name -> the files of the repository whose text names it, read once per
    repository and run: a script's callers are then looked for only in those (asking every file
    for every launch was quadratic in the repository's size)."""
    found = tree(root)
    names = {os.path.basename(p) for p in found.scripts}
    out: dict[str, list[str]] = {}
    for relative in (*found.markdown, *found.scripts, *found.makefiles, *found.python):
        text = _read(os.path.join(root, relative))
        if text is None:
            continue
        for name in {w.rsplit("/", 1)[-1] for w in _WORD.findall(text)} & names:
            out.setdefault(name, []).append(relative)
    return {name: tuple(paths) for name, paths in out.items()}


@lru_cache(maxsize=256)
def _calls(root: str, script: str) -> tuple[Call, ...]:
    name = os.path.basename(script)
    found = tree(root)
    naming = set(_mentions(root).get(name, ())) if name in {os.path.basename(p) for p in found.scripts} else None
    out: list[Call] = []

    def candidates(paths):
        return [p for p in paths if naming is None or p in naming]

    for relative in candidates(found.markdown):
        text = _read(os.path.join(root, relative))
        if text is not None and name in text:
            out += _markdown_calls(relative, text, name)
    for relative in candidates((*found.scripts, *found.makefiles)):
        full = os.path.join(root, relative)
        if os.path.realpath(full) == script:
            continue
        text = _read(full)
        if text is not None and name in text:
            out += _calls_in_lines(relative, _logical_lines(text.splitlines()), name)
    for relative in candidates(found.python):  # a Python caller (subprocess with env=...) may set anything
        text = _read(os.path.join(root, relative))
        if text is not None and re.search(rf"(?<![\w.-]){re.escape(name)}\b", text):
            line = text[: text.index(name)].count("\n") + 1
            out.append(Call(relative, line, frozenset(), unknown=True))
    return tuple(out)


def calls_of(script: str | Path, root: str | Path) -> tuple[Call, ...]:
    """The calls of ``script`` in the repository at ``root``: documented ones and other scripts'."""
    return _calls(os.path.realpath(root), os.path.realpath(script))


def clear_cache() -> None:
    _mentions.cache_clear()
    _calls.cache_clear()


__all__ = ["Call", "calls_of", "clear_cache", "may_set_anything", "names_set"]
