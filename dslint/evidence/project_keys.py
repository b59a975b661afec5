"""Does the repository's own Python code look a key up by its literal name?

A DeepSpeed JSON often carries keys for the project as well as for DeepSpeed: the training
script loads the JSON, reads ``cfg.get("precision")`` or ``"lora" in cfg`` from the dict, and
passes it on to ``deepspeed.initialize``. For a config a launch reaches, the launched program
answers (``Program.keys_read``). For a config no launch reaches there is no program to ask, so the
repository's Python files are: any ``x["k"]``, ``x.get("k")``/``.pop``/``.setdefault`` or
``"k" in x`` on any expression counts (``dslint.launch.pyprogram._keys_read``).

This is asked only when a rule has a key to ask about, and kept cheap: one walk of the
repository per run (skipping what discovery skips), each file's text read once, and a file is
parsed only when its text holds the key in quotes. Files are read through ``open`` and folders
listed through ``os.scandir``, so a recording run (dslint.run.cache.Recorder) notes them as inputs
and its cache is invalidated when one changes.
"""

from __future__ import annotations

import os
from pathlib import Path

from dslint.launch.pyprogram import MAX_FILE_BYTES, Evidence, _keys_read, _load

#: At most this many Python files (and bytes) of one repository are read and kept for the run;
#: past either, a key not found yet is not found.
MAX_FILES = 5000
MAX_TOTAL_BYTES = 100_000_000


class ProjectKeys:
    """Per run: the Python files of each repository, their text, and the answers already given."""

    def __init__(self, cwd: Path | None = None):
        self.cwd = cwd or Path.cwd()
        self._files: dict[str, list[tuple[str, bytes]]] = {}
        self._answers: dict[tuple[str, str], Evidence | None] = {}

    def reader(self, root: str, key: str) -> Evidence | None:
        """The first place (by path, then line) under ``root`` whose code looks up ``key``."""
        answer_key = (root, key)
        if answer_key in self._answers:
            return self._answers[answer_key]
        quoted = (f'"{key}"'.encode(), f"'{key}'".encode())
        found = None
        for path, text in self._python_files(root):
            if not any(q in text for q in quoted):
                continue  # the cheap test first: no quoted key, no lookup of it
            tree = _load(Path(path))
            if tree is None:
                continue
            lines = sorted(line for name, line in _keys_read(tree) if name == key)
            if lines:
                found = Evidence(self._display(path), lines[0], f"looks up the key '{key}'")
                break
        self._answers[answer_key] = found
        return found

    def _python_files(self, root: str) -> list[tuple[str, bytes]]:
        files = self._files.get(root)
        if files is None:
            self._files[root] = files = list(_read_python_files(root))
        return files

    def _display(self, path: str) -> str:
        try:
            return os.path.relpath(path, self.cwd)
        except ValueError:
            return path


def _read_python_files(root: str):
    from dslint.files.discovery import SKIP_DIRS

    count = total = 0
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith(".")
                             and not os.path.exists(os.path.join(directory, d, "pyvenv.cfg")))
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            count += 1
            if count > MAX_FILES:
                return
            path = os.path.join(directory, name)
            try:
                with open(path, "rb") as handle:
                    text = handle.read(MAX_FILE_BYTES + 1)
            except OSError:
                continue
            if len(text) <= MAX_FILE_BYTES:
                total += len(text)
                if total > MAX_TOTAL_BYTES:
                    return
                yield path, text
