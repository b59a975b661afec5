"""Which files to read: walk directories, honour excludes, keep explicit files."""

from __future__ import annotations

import fnmatch
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from dslint.documents.classify import JSON_SUFFIXES, SCRIPT_SUFFIXES, YAML_SUFFIXES

SKIP_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".nox",
        ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages", ".eggs", ".idea", ".vscode",
    }
)
CANDIDATE_SUFFIXES = JSON_SUFFIXES + YAML_SUFFIXES + SCRIPT_SUFFIXES


@dataclass(frozen=True)
class Candidate:
    path: Path  # as found on disk
    display: str  # as reported
    explicit: bool  # named on the command line (not found by walking)


class PathError(Exception):
    """A path given on the command line that does not exist or cannot be read."""


def display_path(path: Path, cwd: Path) -> str:
    try:
        return os.path.relpath(path, cwd) if path.is_absolute() else str(path)
    except ValueError:
        return str(path)


def matches(patterns: list[str], relative: str) -> bool:
    name = relative.rsplit("/", 1)[-1]
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        if fnmatch.fnmatchcase(relative, pattern) or fnmatch.fnmatchcase(name, pattern):
            return True
        if pattern.startswith("**/") and fnmatch.fnmatchcase(relative, pattern[3:]):
            return True
        if fnmatch.fnmatchcase(relative, pattern + "/*"):
            return True
    return False


def discover(paths: list[str], exclude: list[str], root: Path, cwd: Path | None = None) -> tuple[list[Candidate], list[tuple[str, str]]]:
    """Returns (candidates, skipped) where skipped holds (display path, reason)."""
    cwd = cwd or Path.cwd()
    candidates: list[Candidate] = []
    skipped: list[tuple[str, str]] = []
    seen: set[str] = set()

    def relative_to_root(path: Path) -> str:
        try:
            return Path(os.path.relpath(path.absolute(), root)).as_posix()
        except ValueError:
            return path.as_posix()

    def add(path: Path, explicit: bool) -> None:
        key = os.path.normcase(os.path.abspath(path))
        if key in seen:
            return
        seen.add(key)
        shown = display_path(path, cwd) if path.is_absolute() else path.as_posix()
        if exclude and matches(exclude, relative_to_root(path)):
            skipped.append((shown, "excluded by configuration"))
            return
        candidates.append(Candidate(path, shown, explicit))

    for given in paths:
        path = Path(given)
        if not os.path.lexists(path):
            raise PathError(f"{given}: no such file or directory")
        if path.is_dir():
            _walk(path, exclude, relative_to_root, add, skipped)
        elif path.is_file() or path.is_symlink():
            add(path, True)
        else:
            skipped.append((given, "not a regular file"))
    return candidates, skipped


def _walk(top: Path, exclude, relative_to_root, add, skipped) -> None:
    def on_error(error: OSError) -> None:
        skipped.append((str(error.filename), f"cannot read directory: {error.strerror}"))

    for directory, dirnames, filenames in os.walk(top, onerror=on_error, followlinks=False):
        keep = []
        for name in sorted(dirnames):
            child = os.path.join(directory, name)
            if name in SKIP_DIRS or os.path.exists(os.path.join(child, "pyvenv.cfg")):
                continue
            if exclude and matches(exclude, relative_to_root(Path(child))):
                continue
            keep.append(name)
        dirnames[:] = keep
        for name in sorted(filenames):
            if name.lower().endswith(CANDIDATE_SUFFIXES) or _has_shebang(os.path.join(directory, name), name):
                add(Path(directory, name), False)


def _has_shebang(path: str, name: str) -> bool:
    if "." in name:  # files with other extensions are not launch scripts
        return False
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # opening a FIFO would block
            return False
        with open(path, "rb") as handle:
            head = handle.read(64)
    except OSError:
        return False
    return head.startswith(b"#!") and b"sh" in head.split(b"\n", 1)[0]
