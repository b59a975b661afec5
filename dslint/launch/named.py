"""Files named by relative paths in other files, resolved without a launch: where a path written in
a config may point, and which DeepSpeed configs an accelerate config names. Kept apart from
``dslint.launch.link`` so that a run on configs alone does not import the launch reader."""

from __future__ import annotations

import os
from pathlib import Path

from dslint.documents.model import ACCELERATE, Document, Mapping, Scalar
from dslint.source import Span


def candidate_paths(raw: str, base: Path, cwd: Path, root: Path | None = None) -> list[Path]:
    """Where a relative path written in a file may point: from the file's folder, each folder above
    it up to the repository root, and the working directory (the launch's folder is not known).
    ``root``: ``repository_root(base)``, when the caller has it already."""
    if os.path.isabs(raw):
        return [Path(raw)]
    out = [base / raw]
    root = repository_root(base) if root is None else root
    directory = base
    while directory != directory.parent and directory != root:
        directory = directory.parent
        out.append(directory / raw)
    out.append(cwd / raw)
    unique, seen = [], set()
    for path in out:
        key = os.path.normpath(str(path))
        if key not in seen:
            seen.add(key)
            unique.append(Path(key))
    return unique


def accelerate_named(documents: list[Document], cwd: Path | None = None) -> dict[str, Span]:
    """DeepSpeed configs that an accelerate config names (``deepspeed_config.deepspeed_config_file``):
    real path → the span of the name. Whatever program runs, accelerate's DeepSpeedPlugin reads
    such a config (accelerate/utils/dataclasses.py DeepSpeedPlugin.__post_init__), so it is
    accelerate's even when no launch script in the run names the accelerate config."""
    cwd = (cwd or Path.cwd()).resolve()
    named: dict[str, Span] = {}
    for doc in documents:
        if doc.kind != ACCELERATE or doc.mapping is None:
            continue
        section = doc.mapping.get("deepspeed_config")
        entry = section.entry("deepspeed_config_file") if isinstance(section, Mapping) else None
        if entry is None or not isinstance(entry.value, Scalar) or not isinstance(entry.value.value, str) or not entry.value.value.strip():
            continue
        for candidate in candidate_paths(entry.value.value.strip(), Path(doc.source.path).parent, cwd):
            if candidate.is_file():
                named.setdefault(os.path.realpath(candidate), entry.value.span)
                break
    return named


def repository_root(start: Path) -> Path:
    directory = start.resolve() if start.exists() else start
    for candidate in (directory, *directory.parents):
        if (candidate / ".git").exists() or (candidate / "pyproject.toml").exists():
            return candidate
    return Path(directory.anchor or "/")
