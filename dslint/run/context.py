"""Launch context for a subset of files: the launches elsewhere in the repository that name them.

A pre-commit hook passes only the staged files. A DeepSpeed JSON edited on its own never meets
the launch script that reads it, so the checks that need both (HF's mismatch with the launch's
flags, the batch with the real world size, ZeRO with pipeline parallelism) would stay silent.
So for every config file named on the command line, dslint also reads the files of its
repository that name it (a launch script, a training YAML that names a DeepSpeed config, an
accelerate config), and the files that name those, a few steps up. They are linted with the
given files; what they produce is reported only where it involves a given file (its place or
a related place is in one), so the hook fails on the edited JSON and names the launch script.

Finding them is cheap: the walk honours .gitignore and the exclusions like any walk, and each
file's mentions of config names come from the persistent index in ``.dslint_cache/``
(dslint.run.cache), so only files that changed since the last run are read.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path

from dslint.files.suffixes import JSON_SUFFIXES, YAML_SUFFIXES

#: How many steps of "names a file that names the given one" are followed (script → YAML → JSON).
DEPTH = 3
#: What a launch may name: a config by file name (the referencing rules resolve it later).
CONFIG_SUFFIXES = JSON_SUFFIXES + YAML_SUFFIXES
_SUFFIX = re.compile(r"\.(?:json|jsonc|hjson|yaml|yml)(?![\w.])", re.IGNORECASE)
_NOT_IN_A_PATH = frozenset(" \t\n\r\f\v'\"`=:,;()<>|&\\")
_LONGEST_PATH = 4096  # a word longer than this before the suffix is no path (and the scan stays linear)


def mentioned_names(text: str) -> frozenset[str]:
    """The file names (last path part) of every config-like path a text mentions.

    Found from each config suffix backwards to the start of its word, not with a pattern that
    starts anywhere: a long run of characters with no suffix (a data file, a sparse file of
    zeros) would make that quadratic."""
    out = set()
    for match in _SUFFIX.finditer(text):
        start = match.start()
        low = max(0, start - _LONGEST_PATH)
        while start > low and text[start - 1] not in _NOT_IN_A_PATH:
            start -= 1
        out.add(text[start:match.end()].rsplit("/", 1)[-1])
    return frozenset(out)


def wants_context(candidates) -> list:
    """The candidates named on the command line whose launches may live elsewhere: configs."""
    return [c for c in candidates if c.explicit and c.display.lower().endswith(CONFIG_SUFFIXES)]


def repository_root(path: Path) -> Path:
    """Where a file's launches may be: its git work tree, else its project, else its folder."""
    from dslint.files.gitignore import find_repository

    start = Path(os.path.abspath(path)).parent
    found = find_repository(start)
    if found is not None:
        return Path(found.root)
    for folder in (start, *start.parents):
        if any((folder / marker).exists() for marker in (".git", "pyproject.toml", "setup.py", "setup.cfg")):
            return folder
    return start


def context_candidates(candidates, scopes, cwd: Path, index) -> list:
    """Files of the given configs' repositories that name them (directly or a few steps up),
    as non-explicit candidates marked ``context``; empty when no config was named."""
    from dslint.files.discovery import discover

    given = wants_context(candidates)
    if not given:
        return []
    have = {os.path.normcase(os.path.abspath(c.path)) for c in candidates}
    pool = []
    for root in sorted({repository_root(c.path) for c in given}):
        found, _ = discover([str(root)], cwd=cwd, scopes=scopes)
        pool.extend(c for c in found if os.path.normcase(os.path.abspath(c.path)) not in have)
    wanted = {c.path.name for c in given}
    added: list = []
    for _ in range(DEPTH):
        # each file joins once: taken ones leave the pool (compared by identity, not field by field)
        step, rest = [], []
        for c in pool:
            (step if wanted & index.names(c.path) else rest).append(c)
        if not step:
            break
        added.extend(step)
        wanted = {c.path.name for c in step}
        pool = rest
    index.save()
    return [replace(c, context=True) for c in added]


def involves(diagnostic, paths: set[str]) -> bool:
    """Is the finding about one of ``paths``: at it, or pointing at it?"""
    if diagnostic.span.path in paths:
        return True
    return any(r.span is not None and r.span.path in paths for r in diagnostic.related)


__all__ = ["DEPTH", "context_candidates", "involves", "mentioned_names", "repository_root", "wants_context"]
