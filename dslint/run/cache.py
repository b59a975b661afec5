"""The persistent cache: ``.dslint_cache/`` in the folder dslint runs from, as ruff keeps ``.ruff_cache``.

It holds what a later run can reuse while the files it came from are unchanged, under a folder
per dslint version (a new dslint never reads an older one's entries):

- ``names.json``: for each launch-capable file, the config names it mentions (dslint.run.context),
  so that the launch context of a staged file costs a ``stat`` per file, not a read;
- ``results/``: whole runs, keyed by their settings and command, with every file they read
  (dslint.cache_results);
- ``units/``: the findings of each unit of files linted together, replayed after an edit of
  other files (dslint.run.units).

An entry is valid while its file's size and modification time are unchanged; when they change,
the file is read again and its content hash decides. The folder holds a ``.gitignore`` that
ignores it and a ``CACHEDIR.TAG``, so git and backup tools leave it alone. A cache that cannot be
read or written is simply not used: it never changes what dslint reports. ``--no-cache`` (or
``DSLINT_NO_CACHE=1``) turns it off; ``DSLINT_CACHE_DIR`` moves it.
"""

from __future__ import annotations

import os
import stat as stat_module
from functools import lru_cache
from pathlib import Path

from dslint import __version__
from dslint.source import MAX_FILE_BYTES

CACHE_FOLDER = ".dslint_cache"
_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This folder is a cache made by dslint; see https://bford.info/cachedir/\n"


def cache_root(cwd: Path | None = None, configured: str | None = None) -> Path | None:
    """Where the cache lives (``configured``: --cache-dir), or None when it is turned off."""
    if os.environ.get("DSLINT_NO_CACHE", "").strip() not in ("", "0"):
        return None
    configured = configured or os.environ.get("DSLINT_CACHE_DIR")
    return Path(configured) if configured else (cwd or Path.cwd()) / CACHE_FOLDER


def content_hash(data: bytes) -> str:
    import hashlib  # here: a run that hashes nothing (--no-cache, the one-file pre-commit run) need not load OpenSSL (2.5 ms)

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


def _secret_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "dslint" / "secret"


@lru_cache(maxsize=None)
def _secret() -> bytes | None:
    """This user's key for sealing cache files, made on first use (32 random bytes, mode 0600).

    The cache folder lives in the folder dslint runs from, so a repository can carry one (committed
    by mistake, or on purpose in a pull request a CI gate checks). Its files are pickles, and
    unpickling runs code: a file is read only when it carries this key's MAC, so only files this
    user's dslint wrote are ever unpickled. None when the key can be neither read nor made: then
    nothing is cached."""
    path = _secret_path()
    try:
        data = path.read_bytes()
        if len(data) == 32:
            return data
    except OSError:
        pass
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        secret = os.urandom(32)
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(handle, "wb") as out:
            out.write(secret)
        return secret
    except FileExistsError:  # made at the same moment by another run: read that one
        try:
            data = path.read_bytes()
            return data if len(data) == 32 else None
        except OSError:
            return None
    except OSError:
        return None


def _mac(secret: bytes, data: bytes) -> bytes:
    import hmac

    return hmac.new(secret, data, "sha256").digest()


def write_sealed(path: Path, data: bytes) -> None:
    """Write ``data`` with this user's MAC in front (see :func:`_secret`); nothing without a key."""
    secret = _secret()
    if secret is not None:
        write_atomically(path, _mac(secret, data) + data)


def read_sealed(path: Path) -> bytes | None:
    """The data of a file :func:`write_sealed` wrote with this user's key, else None (absent, cut
    short, or written by anyone or anything else)."""
    secret = _secret()
    if secret is None:
        return None
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    import hmac

    mac, data = blob[:32], blob[32:]
    return data if len(blob) >= 32 and hmac.compare_digest(mac, _mac(secret, data)) else None


def write_atomically(path: Path, data: bytes) -> None:
    import tempfile  # only when something is written: the replayed run writes nothing

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
    """(size, modification time in ns) of a regular file, or None for anything else.

    A FIFO, socket or device is never a launch: reading one would block or never end.
    """
    try:
        info = os.stat(path)
    except OSError:
        return None
    if not stat_module.S_ISREG(info.st_mode):
        return None
    return info.st_size, info.st_mtime_ns


class NameIndex:
    """The config names each launch-capable file mentions, kept across runs."""

    def __init__(self, root: Path | None):
        self.folder = _prepare(root) if root is not None else None
        self.path = self.folder / "names.json" if self.folder is not None else None
        self.entries: dict[str, list] = {}
        self.changed = False
        self._answered: dict[str, frozenset[str]] = {}
        if self.path is not None:
            import json

            try:
                loaded = json.loads(self.path.read_text(encoding="utf-8"))
                if isinstance(loaded, dict):
                    self.entries = loaded
            except (OSError, ValueError):
                pass

    def names(self, path: Path) -> frozenset[str]:
        from dslint.run.context import mentioned_names

        key = os.path.abspath(path)
        # the answer depends on the file's content even when it comes from the index unread
        depends_on(key)
        answered = self._answered.get(key)
        if answered is not None:  # asked again in the same run (each step up the references asks)
            return answered
        self._answered[key] = found = self._names(key, mentioned_names)
        return found

    def _names(self, key: str, mentioned_names) -> frozenset[str]:
        now = signature(key)
        if now is None or now[0] > MAX_FILE_BYTES:
            return frozenset()  # a file dslint does not read names nothing
        known = self.entries.get(key)
        if known is not None and list(now) == known[:2]:
            return frozenset(known[3])
        try:
            data = Path(key).read_bytes()
        except OSError:
            return frozenset()
        if self.path is None:  # no cache: nothing is kept, so nothing needs its hash
            return frozenset(mentioned_names(data.decode("utf-8", "replace")))
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
        import json

        write_atomically(self.path, json.dumps(self.entries, separators=(",", ":")).encode("utf-8"))
        self.changed = False


__all__ = ["CACHE_FOLDER", "DocumentCache", "NameIndex", "cache_root", "content_hash", "signature", "write_atomically"]


# --------------------------------------------------------------------------------------------
# Whole runs
# --------------------------------------------------------------------------------------------


@lru_cache(maxsize=None)
def _build_id() -> str:
    """This dslint: its version and the size and time of each of its files (an edited checkout
    of one version must not reuse what another edit found)."""
    import dslint
    from dslint.schemas import schema_dirs

    parts = [__version__]
    folders = [Path(dslint.__file__).parent, *schema_dirs()]
    for folder in folders:
        for directory, _, names in os.walk(folder):
            for name in sorted(names):
                if name.endswith((".py", ".json")):
                    found = signature(os.path.join(directory, name))
                    if found is not None:
                        parts.append(f"{name}:{found[0]}:{found[1]}")
    return content_hash("\n".join(parts).encode("utf-8"))


class Recorder:
    """Every file a run reads, every folder it lists and every path it looks at, while active.

    A run reads files through many modules (the walk, the linker, the static reading of
    programs, pin files, settings files), and a path that was not there is as much an input as
    one that was (a train.py created later turns an assumed consumer into an established one).
    So the recorder notes what passes through ``open``, ``os.stat``/``lstat``, ``os.listdir`` and
    ``os.scandir`` (which ``os.walk``, ``os.path`` and ``pathlib`` use), outside dslint's own
    files and the Python installation.
    """

    def __init__(self, cache: Path | None = None):
        import sys

        import dslint

        self.reads: set[str] = set()
        self.signed: set[str] = set()
        self.lists: set[str] = set()
        self.looks: set[str] = set()
        own = [os.path.dirname(os.path.abspath(dslint.__file__)), sys.prefix, sys.base_prefix, sys.exec_prefix]
        if cache is not None:  # the cache's own files (the name index) change with every run
            own.append(os.path.abspath(cache))
        self._skip = tuple(os.path.join(p, "") for p in own if p)
        self._kept: dict[str, str | None] = {}
        self._saved = None
        self.known: dict[str, tuple] = {}  # read files whose content hash is known (note_inputs)

    def _keep(self, path) -> str | None:
        if isinstance(path, int):
            return None
        try:
            text = os.fsdecode(path)
        except TypeError:
            return None
        try:
            return self._kept[text]
        except KeyError:
            pass
        absolute = os.path.abspath(text)
        if absolute.startswith(self._skip) or absolute.startswith(("/proc/", "/dev/", "/sys/")):
            absolute = None
        if len(self._kept) < 100_000:  # the same paths are looked at again and again (a walk, then the linker)
            self._kept[text] = absolute
        return absolute

    def __enter__(self) -> "Recorder":
        import builtins
        import io

        saved = self._saved = (builtins.open, io.open, os.stat, os.lstat, os.listdir, os.scandir)
        open_, _, stat, lstat, listdir, scandir = saved

        def opened(file, mode="r", *args, **kwargs):
            if "r" in mode and not any(flag in mode for flag in "wax+"):
                kept = self._keep(file)
                if kept is not None:
                    self.reads.add(kept)
            return open_(file, mode, *args, **kwargs)

        def looked(function):
            def wrapper(path, *args, **kwargs):
                kept = self._keep(path)
                if kept is not None:
                    self.looks.add(kept)
                return function(path, *args, **kwargs)
            return wrapper

        def listed(function):
            def wrapper(path=".", *args, **kwargs):
                kept = self._keep(path)
                if kept is not None:
                    self.lists.add(kept)
                return function(path, *args, **kwargs)
            return wrapper

        builtins.open = io.open = opened
        os.stat, os.lstat = looked(stat), looked(lstat)
        os.listdir, os.scandir = listed(listdir), listed(scandir)
        _RECORDING.append(self)
        return self

    def __exit__(self, *exc) -> None:
        import builtins
        import io

        builtins.open, io.open, os.stat, os.lstat, os.listdir, os.scandir = self._saved
        if self in _RECORDING:
            _RECORDING.remove(self)

    def inputs(self) -> dict[str, tuple]:
        """What each recorded path was, to compare with later: a read file's content hash, a listed
        folder's modification time, and for anything only looked at, whether it was there and what."""
        out: dict[str, tuple] = {}
        for path in self.reads:  # first: an edit is most often found here, and cheaply by size
            if path in self.known:
                out[path] = self.known[path]
                continue
            try:
                with open(path, "rb") as handle:
                    data = handle.read()
                out[path] = ("read", content_hash(data), len(data))
            except OSError:
                out[path] = ("read", None, None)
        return self.add_looked(out)

    def add_looked(self, out: dict[str, tuple]) -> dict[str, tuple]:
        """``out`` with what was not read but stat'ed, listed or looked for (what it was then)."""
        for path in self.signed:
            out.setdefault(path, ("signed", signature(path)))
        for path in self.lists:
            out.setdefault(path, ("list", _mtime(path)))
        for path in self.looks:
            out.setdefault(path, ("look", _kind(path)))
        return out


_RECORDING: list[Recorder] = []


def depends_on(path: str) -> None:
    """Tell the recording run (if any) that its outcome depends on this file's content, which was
    not opened (its size and modification time stand for it: the reference index's answers)."""
    if _RECORDING:
        kept = _RECORDING[-1]._keep(path)
        if kept is not None:
            _RECORDING[-1].signed.add(kept)


def note_inputs(paths: dict[str, tuple[str, str | None, int | None]]) -> None:
    """Tell the recording runs that results replayed here (dslint.run.units) stand on these paths,
    as if this run had used them: (how, content hash, size), how being "read", "signed", "list" or
    "look"; a read file's hash and size are those just checked, so it is not read again to store."""
    for recorder in _RECORDING:
        sets = {"read": recorder.reads, "signed": recorder.signed, "list": recorder.lists, "look": recorder.looks}
        for path, (how, digest, size) in paths.items():
            kept = recorder._keep(path)
            if kept is not None and how in sets:
                sets[how].add(kept)
                if how == "read" and digest is not None:
                    recorder.known[kept] = ("read", digest, size)


def _mtime(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def _kind(path: str) -> str | None:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return "dir" if stat_module.S_ISDIR(mode) else "file" if stat_module.S_ISREG(mode) else "other"


def unchanged(inputs: dict[str, tuple]) -> bool:
    """Is every recorded input as it was? (In recorded order: the read files come first.)"""
    for path, (how, was, *size) in inputs.items():
        if how == "read" and size and size[0] is not None:
            try:
                if os.stat(path).st_size != size[0]:
                    return False
            except OSError:
                return False
        if how == "look":
            if _kind(path) != was:
                return False
        elif how == "list":
            if _mtime(path) != was:
                return False
        elif how == "signed":
            if signature(path) != was:
                return False
        else:
            try:
                with open(path, "rb") as handle:
                    now = content_hash(handle.read())
            except OSError:
                now = None
            if now != was:
                return False
    return True


class DocumentCache:
    """Parsed documents by content, display name and dslint build: for the files a launch
    context reads (dslint.run.context), which stay the same while the config they name changes."""

    #: Larger files are read as usual: launch scripts and training configs are small.
    LIMIT = 256 * 1024

    def __init__(self, root: Path | None):
        folder = _prepare(root) if root is not None else None
        self.folder = folder / "documents" if folder is not None else None

    def bytes_of(self, path: Path) -> bytes | None:
        found = signature(path)
        if self.folder is None or found is None or found[0] > self.LIMIT:
            return None
        try:
            with open(path, "rb") as handle:
                return handle.read(self.LIMIT + 1)
        except OSError:
            return None

    def key(self, display: str, data: bytes) -> str:
        return content_hash(b"\0".join([_build_id().encode("utf-8"), display.encode("utf-8", "surrogateescape"), data]))

    def load(self, key: str):
        import pickle

        data = read_sealed(self.folder / f"{key}.pickle")
        if data is None:
            return None
        try:
            return pickle.loads(data)
        except Exception:  # noqa: BLE001 - from another Python or dslint: read the file again
            return None

    def store(self, key: str, document) -> None:
        import pickle

        try:
            self.folder.mkdir(exist_ok=True)
            data = pickle.dumps(document, protocol=pickle.HIGHEST_PROTOCOL)
        except (OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError):
            return
        write_sealed(self.folder / f"{key}.pickle", data)


class RunCache:
    """One cached run per command: its key, what it read, and what it reported."""

    def __init__(self, root: Path | None, key_parts: list[str]):
        self.folder = _prepare(root) if root is not None else None
        key = content_hash("\0".join([_build_id(), os.getcwd(), *key_parts]).encode("utf-8")) if self.folder else ""
        self.path = self.folder / "runs" / f"{key}.pickle" if self.folder is not None else None

    def load(self):
        """The stored run when every input is unchanged, else None."""
        import pickle

        if self.path is None:
            return None
        data = read_sealed(self.path)
        if data is None:
            return None
        import io

        try:
            handle = io.BytesIO(data)
            # the inputs first, and the findings only when they are still what was read
            if not unchanged(pickle.load(handle)):
                return None
            return pickle.load(handle)
        except Exception:  # noqa: BLE001 - from another Python or dslint: run again
            return None

    def store(self, recorder: Recorder, payload) -> None:
        import pickle

        if self.path is None:
            return
        try:
            self.path.parent.mkdir(exist_ok=True)
            data = (pickle.dumps(recorder.inputs(), protocol=pickle.HIGHEST_PROTOCOL)
                    + pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL))
        except (OSError, pickle.PicklingError, TypeError, AttributeError):
            return
        write_sealed(self.path, data)
