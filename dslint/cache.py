"""The persistent cache: ``.dslint_cache/`` in the folder dslint runs from, as ruff keeps ``.ruff_cache``.

It holds what a later run can reuse while the files it came from are unchanged, under a folder
per dslint version (a new dslint never reads an older one's entries):

- ``names.json``: for each launch-capable file, the config names it mentions (dslint.context),
  so that the launch context of a staged file costs a ``stat`` per file, not a read;
- ``results/``: whole runs, keyed by their settings and command, with every file they read
  (dslint.cache_results).

An entry is valid while its file's size and modification time are unchanged; when they change,
the file is read again and its content hash decides. The folder holds a ``.gitignore`` that
ignores it and a ``CACHEDIR.TAG``, so git and backup tools leave it alone. A cache that cannot be
read or written is simply not used: it never changes what dslint reports. ``--no-cache`` (or
``DSLINT_NO_CACHE=1``) turns it off; ``DSLINT_CACHE_DIR`` moves it.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from dslint import __version__

CACHE_FOLDER = ".dslint_cache"
_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This folder is a cache made by dslint; see https://bford.info/cachedir/\n"


def cache_root(cwd: Path | None = None) -> Path | None:
    """Where the cache lives, or None when it is turned off."""
    if os.environ.get("DSLINT_NO_CACHE", "").strip() not in ("", "0"):
        return None
    configured = os.environ.get("DSLINT_CACHE_DIR")
    return Path(configured) if configured else (cwd or Path.cwd()) / CACHE_FOLDER


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _prepare(root: Path) -> Path | None:
    """The version folder, made with its .gitignore and tag; None when it cannot be made."""
    folder = root / __version__
    try:
        folder.mkdir(parents=True, exist_ok=True)
        ignore = root / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# made by dslint: the cache is not part of the repository\n*\n", encoding="utf-8")
        tag = root / "CACHEDIR.TAG"
        if not tag.exists():
            tag.write_text(_TAG, encoding="utf-8")
    except OSError:
        return None
    return folder


def write_atomically(path: Path, data: bytes) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass


def signature(path: Path | str) -> tuple[int, int] | None:
    """(size, modification time in ns), or None for a file that is not there."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns


class NameIndex:
    """The config names each launch-capable file mentions, kept across runs."""

    def __init__(self, root: Path | None):
        self.folder = _prepare(root) if root is not None else None
        self.path = self.folder / "names.json" if self.folder is not None else None
        self.entries: dict[str, list] = {}
        self.changed = False
        if self.path is not None:
            try:
                loaded = json.loads(self.path.read_text(encoding="utf-8"))
                if isinstance(loaded, dict):
                    self.entries = loaded
            except (OSError, ValueError):
                pass

    def names(self, path: Path) -> frozenset[str]:
        from dslint.context import mentioned_names

        key = os.path.abspath(path)
        now = signature(key)
        if now is None:
            return frozenset()
        known = self.entries.get(key)
        if known is not None and list(now) == known[:2]:
            return frozenset(known[3])
        try:
            data = Path(key).read_bytes()
        except OSError:
            return frozenset()
        digest = content_hash(data)
        if known is not None and known[2] == digest:
            names = known[3]
        else:
            names = sorted(mentioned_names(data.decode("utf-8", "replace")))
        self.entries[key] = [now[0], now[1], digest, names]
        self.changed = True
        return frozenset(names)

    def save(self) -> None:
        if self.path is None or not self.changed:
            return
        # forget files that are gone, so the index does not grow without bound
        self.entries = {key: value for key, value in self.entries.items() if os.path.exists(key)}
        write_atomically(self.path, json.dumps(self.entries, separators=(",", ":")).encode("utf-8"))
        self.changed = False


__all__ = ["CACHE_FOLDER", "NameIndex", "cache_root", "content_hash", "signature", "write_atomically"]
