"""Applying fixes: merge edits per file, write atomically, re-lint until nothing changes.

A file is never fixed while it has a syntax error. Writes go to a temporary file in the same
directory that then replaces the original, keeping its permissions, owner, BOM and newline
style; only the bytes the edits name change. A file with other hard links, or whose owner this
process cannot give a new file, is written in place instead, so that the links and the owner
stay. A file that changed since it was read (an editor saved it while dslint ran) is not
written: the edit would be lost. A file that cannot be written is reported, and the others are
still written.
"""

from __future__ import annotations

import difflib
import os
import stat
import tempfile
from collections import Counter
from dataclasses import dataclass, field

from dslint.diagnostics import SAFE, Diagnostic, Edit, Fix
from dslint.documents.edits import apply_edits
from dslint.source import SourceFile

MAX_PASSES = 10


@dataclass
class FilePlan:
    source: SourceFile
    edits: list[Edit] = field(default_factory=list)
    fixes: list[tuple[Diagnostic, Fix]] = field(default_factory=list)

    def new_text(self) -> str:
        return apply_edits(self.source.text, [_with_newlines(e, self.source.newline) for e in self.edits])


def _with_newlines(edit: Edit, newline: str) -> Edit:
    if newline == "\n" or "\n" not in edit.content:
        return edit
    content = edit.content.replace("\r\n", "\n").replace("\n", newline)
    return Edit(edit.source, edit.start, edit.end, content)


def plan_fixes(diagnostics: list[Diagnostic], documents, unsafe: bool) -> dict[int, FilePlan]:
    """Choose the fixes to apply in one pass: whole fixes only, no overlapping edits."""
    broken = {id(doc.source) for doc in documents if doc.problems}
    plans: dict[int, FilePlan] = {}
    taken: dict[int, list[tuple[int, int]]] = {}
    for diagnostic in diagnostics:
        fix = diagnostic.fix
        if fix is None or (fix.applicability != SAFE and not unsafe) or not fix.edits:
            continue
        if any(id(e.source) in broken or not e.source.path for e in fix.edits):
            continue
        if any(_overlaps(taken.get(id(e.source), []), e) for e in fix.edits):
            continue  # applied in a later pass, after a re-lint
        for edit in fix.edits:
            taken.setdefault(id(edit.source), []).append((edit.start, edit.end))
            plans.setdefault(id(edit.source), FilePlan(edit.source)).edits.append(edit)
        first = plans[id(fix.edits[0].source)]
        first.fixes.append((diagnostic, fix))
    return plans


def _overlaps(ranges: list[tuple[int, int]], edit: Edit) -> bool:
    for start, end in ranges:
        if edit.start < end and start < edit.end:
            return True
        if edit.start == edit.end == start or (start == end == edit.start):
            return True  # two insertions at one point: order would be ambiguous
    return False


class Changed(Exception):
    """The file's bytes are no longer the ones that were linted."""


def write_atomic(path: str, data: bytes, expected: bytes | None = None) -> None:
    """Replace the file's content with ``data``; ``expected``: the bytes it must still hold (else Changed).

    OSError when it cannot be written. The owner, group, mode and hard links stay."""
    target = os.path.realpath(path)
    info = os.stat(target)
    if expected is not None:
        with open(target, "rb") as handle:
            current = handle.read()
        if current == data:  # written already, through another name of the same file (a hard link)
            return
        if current != expected:
            raise Changed(path)
    if info.st_nlink > 1 or not _can_own(info):
        _write_in_place(target, data)
        return
    directory = os.path.dirname(target) or "."
    handle, temporary = tempfile.mkstemp(prefix=".dslint-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        if (info.st_uid, info.st_gid) != _owner_of(temporary):
            os.chown(temporary, info.st_uid, info.st_gid)
        os.chmod(temporary, stat.S_IMODE(info.st_mode))
        os.replace(temporary, target)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def _can_own(info: os.stat_result) -> bool:
    """Can a file this process creates be given the original's owner and group?"""
    if not hasattr(os, "geteuid"):
        return True
    return os.geteuid() == 0 or (info.st_uid == os.geteuid() and info.st_gid in (os.getegid(), *os.getgroups()))


def _owner_of(path: str) -> tuple[int, int]:
    info = os.stat(path)
    return info.st_uid, info.st_gid


def _write_in_place(target: str, data: bytes) -> None:
    """Rewrite the file itself (its inode): hard links and the owner stay, at the cost of atomicity."""
    with open(target, "r+b") as out:
        out.write(data)
        out.truncate()
        out.flush()
        os.fsync(out.fileno())


def unified_diff(source: SourceFile, new_text: str) -> str:
    before, after = _lines(source.text), _lines(new_text)
    out = []
    for line in difflib.unified_diff(before, after, fromfile=f"a/{source.path}", tofile=f"b/{source.path}"):
        out.append(line)
        if not line.endswith("\n"):  # a last line without a newline, marked as diff(1) and git do
            out.append("\n\\ No newline at end of file\n")
    return "".join(out)


def _lines(text: str) -> list[str]:
    """Lines with their endings, split at "\\n" only (str.splitlines also splits at \\u2028, \\x0c, ...)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


@dataclass
class FixOutcome:
    result: object  # the RunResult after the last pass
    applied: list[tuple[str, str, str]] = field(default_factory=list)  # (path, code, title)
    diffs: list[str] = field(default_factory=list)
    converged: bool = True
    not_written: list[tuple[str, str]] = field(default_factory=list)  # (path, why): changed meanwhile, or unwritable
    unwritable: bool = False  # a file could not be written (exit 2)
    fixed: dict[str, bytes] = field(default_factory=dict)  # path -> its bytes after the fixes, for every changed file
    stdin_text: bytes | None = None  # fixing standard input: the text to print, fixed or as it came


def fix_paths(lint, unsafe: bool, write: bool) -> FixOutcome:
    """``lint(overrides)`` runs the engine with some files' bytes replaced; repeat until no fix applies.

    Every pass works in memory; files are written once at the end (or diffed with
    ``write=False``), so an interrupted run never leaves a half-fixed file.
    """
    outcome = FixOutcome(result=None)
    overrides: dict[str, bytes] = {}
    originals: dict[str, SourceFile] = {}
    reported: Counter | None = None  # the fixes of the findings the first pass reports, not yet applied
    first: Counter = Counter()
    for _ in range(MAX_PASSES):
        result = lint(overrides)
        outcome.result = result
        changed = False
        if reported is None:
            reported = Counter(_fix_key(d) for d in result.diagnostics if d.fix is not None)
            first = Counter(reported)
        # Only fixes of findings the run reports: a later pass applies those an overlap deferred,
        # never one of a finding that an earlier fix revealed (the user has not seen it).
        chosen = [d for d in result.diagnostics if d.fix is not None and reported[_fix_key(d)] > 0]
        for plan in plan_fixes(chosen, result.documents, unsafe).values():
            new_text = plan.new_text()
            if new_text == plan.source.text:
                continue
            for diagnostic, _fix in plan.fixes:
                reported[_fix_key(diagnostic)] -= 1
            originals.setdefault(plan.source.path, plan.source)
            overrides[plan.source.path] = plan.source.to_bytes(new_text)
            outcome.applied.extend((plan.source.path, d.code, f.title) for d, f in plan.fixes)
            changed = True
        if not changed:
            break
    else:
        outcome.converged = False
    if outcome.converged and outcome.applied:
        # a fix after which its finding is still there as often as before fixes nothing
        after = Counter(_fix_key(d) for d in outcome.result.diagnostics if d.fix is not None)
        outcome.converged = not any(after[key] >= count for key, count in first.items() if reported[key] < count)
    if not outcome.converged:
        # A fix that keeps changing the file is a bug in a rule: write nothing, report it.
        outcome.converged = False
        outcome.result = lint({})
        outcome.applied = []
        return outcome
    for path, data in overrides.items():
        original = originals[path]
        if data == original.to_bytes():
            continue
        outcome.fixed[path] = data
        if write and path == "-":  # standard input, fixed in memory: the caller prints it
            continue
        if write:
            _write(outcome, path, data, original.to_bytes())
        else:
            new_text = SourceFile.from_bytes(path, data).text
            outcome.diffs.append(unified_diff(original, new_text))
    return outcome


def _fix_key(diagnostic: Diagnostic) -> tuple[str, str, str]:
    """A finding's fix as the passes of one run see it: positions move as edits are made, the
    file, the rule and what the fix says it does stay."""
    return diagnostic.path, diagnostic.code, diagnostic.fix.title


def _write(outcome: FixOutcome, path: str, data: bytes, read: bytes) -> None:
    """Write one fixed file; what cannot be written is noted, and its fixes are no longer counted as applied."""
    try:
        write_atomic(path, data, expected=read)
        return
    except Changed:
        outcome.not_written.append((path, "it changed while dslint ran; not fixed, run again"))
    except OSError as error:
        outcome.not_written.append((path, f"cannot write it: {error.strerror or error}"))
        outcome.unwritable = True
    outcome.applied = [entry for entry in outcome.applied if entry[0] != path]
    outcome.fixed.pop(path, None)
