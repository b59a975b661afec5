"""Where a repository begins: the folder that holds ``.git``, else the nearest project root."""

from __future__ import annotations

import os
from functools import lru_cache


@lru_cache(maxsize=4096)  # asked for every folder above every file: once per folder is enough
def search_root(directory: str, run_root: str | None = None) -> str:
    """Where the search for pins stops: the repository root (the folder holding ``.git``); without
    one, the nearest project root (``pyproject.toml``, ``setup.py``, ``setup.cfg``); without one,
    the folder dslint runs from (its configuration's folder or the working directory) when
    ``directory`` is inside it, else ``directory`` itself."""
    found = _repository_root(directory)
    if found is not None:
        return found
    here = directory
    while True:
        if any(os.path.exists(os.path.join(here, m)) for m in ("pyproject.toml", "setup.py", "setup.cfg")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    if run_root is not None and (directory == run_root or directory.startswith(run_root.rstrip(os.sep) + os.sep)):
        return run_root
    return directory


@lru_cache(maxsize=4096)
def _repository_root(directory: str) -> str | None:
    if os.path.exists(os.path.join(directory, ".git")):
        return directory
    parent = os.path.dirname(directory)
    return None if parent == directory else _repository_root(parent)


def clear_cache() -> None:
    search_root.cache_clear()
    _repository_root.cache_clear()
