"""A repository's files, walked once per run: its Markdown, its shell scripts, the files that
declare its Python dependencies, and where each folder and Python module name occurs.

Hidden folders and installed environments (``node_modules``, ``site-packages``, ``venv``) are
not walked; a repository of more than ``MAX_FILES`` files is walked only that far
(``Tree.complete`` is then False, and a question about a name it lacks has no answer).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import lru_cache

MAX_FILES = 50_000
_SKIP_DIRS = frozenset({"node_modules", "__pycache__", "site-packages", "venv", ".venv", "env"})
# Python modules: sources, compiled extensions and bytecode (`name.py`, `name.cpython-311-x86_64-linux-gnu.so`).
_MODULE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\.py|\.pyc|\.pyd|\.pyi|(?:\.[\w-]+)?\.so)$")
_DEPENDENCIES = re.compile(r"(?i)^(?:requirements.*\.(?:txt|in)|.*requirements\.(?:txt|in)|setup\.py|setup\.cfg|"
                           r"pyproject\.toml|environment.*\.ya?ml|conda.*\.ya?ml|pipfile|dockerfile.*|.*\.dockerfile)$")


@dataclass
class Tree:
    root: str
    markdown: list[str] = field(default_factory=list)  # relative paths
    scripts: list[str] = field(default_factory=list)
    dependencies: list[str] = field(default_factory=list)  # requirements*, setup.py, pyproject.toml, environment.yml ...
    makefiles: list[str] = field(default_factory=list)
    python: list[str] = field(default_factory=list)  # *.py
    names: dict[str, list[str]] = field(default_factory=dict)  # folder or module name -> relative paths
    complete: bool = True

    def where(self, name: str) -> list[str]:
        """Every folder named ``name`` and every module file of that name, relative to the root."""
        return self.names.get(name, [])


@lru_cache(maxsize=64)
def tree(root: str) -> Tree:
    out = Tree(root)
    seen = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS)
        relative_folder = os.path.relpath(folder, root)
        for name in dirs:
            out.names.setdefault(name, []).append(os.path.normpath(os.path.join(relative_folder, name)))
        for file in sorted(files):
            seen += 1
            if seen > MAX_FILES:
                out.complete = False
                return out
            relative = os.path.normpath(os.path.join(relative_folder, file))
            lower = file.lower()
            if lower.endswith((".md", ".markdown")):
                out.markdown.append(relative)
            elif lower.endswith((".sh", ".bash", ".slurm", ".sbatch")):
                out.scripts.append(relative)
            elif lower.endswith(".py"):
                out.python.append(relative)
            elif lower in ("makefile", "gnumakefile") or lower.endswith(".mk"):
                out.makefiles.append(relative)
            if _DEPENDENCIES.match(file):
                out.dependencies.append(relative)
            module = _MODULE.match(file)
            if module:
                out.names.setdefault(module.group(1), []).append(relative)
    return out


def clear_cache() -> None:
    tree.cache_clear()


__all__ = ["MAX_FILES", "Tree", "clear_cache", "tree"]
