"""The JSON Schemas dslint ships (generated from the real packages; see dslint/schemagen).

In a source or editable checkout they live in the top-level ``schemas/`` folder; an installed
wheel carries the same files as package data. Rules read them through ``load_schema``, which
caches each schema for the run; nothing here imports deepspeed or transformers.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

SUFFIX = ".schema.json"


def schema_dirs() -> list[Path]:
    here = Path(__file__).resolve().parent
    return [here.parent / "schemas", here / "schemas"]


def available() -> list[str]:
    names: set[str] = set()
    for directory in schema_dirs():
        if directory.is_dir():
            names.update(p.name[: -len(SUFFIX)] for p in directory.glob(f"*{SUFFIX}"))
    return sorted(names, key=lambda name: name + SUFFIX)  # file-name order: "x-1.0" before "x"


def schema_path(name: str) -> Path | None:
    for directory in schema_dirs():
        candidate = directory / f"{name}{SUFFIX}"
        if candidate.is_file():
            return candidate
    return None


def data_path(filename: str) -> Path | None:
    """Another data file shipped beside the schemas (e.g. deepspeed-versions.json)."""
    for directory in schema_dirs():
        candidate = directory / filename
        if candidate.is_file():
            return candidate
    return None


@lru_cache(maxsize=None)
def load_schema(name: str) -> dict:
    path = schema_path(name)
    if path is None:
        raise FileNotFoundError(f"dslint ships no schema named {name!r} (available: {', '.join(available()) or 'none'})")
    import json  # here: a run replayed from the cache asks only where the schemas are (its build id)

    return json.loads(path.read_text(encoding="utf-8"))
