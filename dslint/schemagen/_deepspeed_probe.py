"""The recording probe of the DeepSpeed schema generator: which keys ``DeepSpeedConfig`` reads.

``DeepSpeedConfig`` runs on a dict that logs every key looked up in it, with the default passed
to ``.get``; keys only tested for presence are re-run with a value present until no new key
turns up. A read's source is the first frame outside this module (so the dict classes, the
recorder and the probe runner stay together here).
"""

from __future__ import annotations

import copy
import logging
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable

from dslint.schemagen._deepspeed_common import relative
from dslint.schemagen._json import Unrepresentable, jsonable

_PROBE_BASE = {"train_micro_batch_size_per_gpu": 1}
_PROBE_TRIALS = ("<dict>", "x")  # values tried for keys only tested for presence
_PROBE_MAX_DEPTH = 5
_GET_HELPERS = {"get_scalar_param", "get_list_param", "get_dict_param"}




class Read:
    __slots__ = ("kinds", "defaults", "source")

    def __init__(self) -> None:
        self.kinds: set[str] = set()
        self.defaults: list[Any] = []
        self.source: str | None = None


class _Recorder:
    def __init__(self) -> None:
        self.reads: dict[tuple[str, ...], Read] = {}
        self._this_file = __file__

    def _caller(self) -> str | None:
        frame = sys._getframe(2)
        while frame is not None:
            code = frame.f_code
            if code.co_filename != self._this_file and code.co_name not in _GET_HELPERS:
                return relative(code.co_filename, frame.f_lineno)
            frame = frame.f_back
        return None

    def note(self, path: tuple[str, ...], kind: str, default: Any = Unrepresentable) -> None:
        read = self.reads.get(path)
        if read is None:
            read = self.reads[path] = Read()
        read.kinds.add(kind)
        if read.source is None:
            src = self._caller()
            if src and not src.startswith(("pydantic", "typing")):
                read.source = src
        if default is not Unrepresentable:
            try:
                value = jsonable(default)
            except Unrepresentable:
                value = {"x-dslint-default-python": repr(default)}
            if value not in read.defaults:
                read.defaults.append(value)


class _ProbeKeys:
    def __init__(self, owner: "_ProbeDict") -> None:
        self._owner = owner

    def __contains__(self, key: object) -> bool:
        return self._owner.__contains__(key)

    def __iter__(self):
        self._owner._rec.note(self._owner._path, "iter")
        return iter(list(dict.keys(self._owner)))

    def __len__(self) -> int:
        return dict.__len__(self._owner)


class _ProbeDict(dict):
    """A dict that records which keys DeepSpeed looks up in it."""

    def __init__(self, rec: _Recorder, path: tuple[str, ...], data: dict | None = None) -> None:
        super().__init__()
        self._rec = rec
        self._path = path
        for key, value in (data or {}).items():
            self[key] = value

    def _sub(self, key: Any) -> tuple[str, ...]:
        return self._path + (str(key),)

    def __bool__(self) -> bool:  # sections like expert_parallel return early when empty
        return True

    def get(self, key: Any, default: Any = None) -> Any:
        self._rec.note(self._sub(key), "get", default)
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        if isinstance(default, dict):
            return _ProbeDict(self._rec, self._sub(key), default)
        return default

    def __contains__(self, key: object) -> bool:
        self._rec.note(self._sub(key), "in")
        return dict.__contains__(self, key)

    def __getitem__(self, key: Any) -> Any:
        self._rec.note(self._sub(key), "getitem")
        return dict.__getitem__(self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        if isinstance(value, dict) and not isinstance(value, _ProbeDict):
            value = _ProbeDict(self._rec, self._sub(key), value)
        dict.__setitem__(self, key, value)

    def pop(self, key: Any, *default: Any) -> Any:
        self._rec.note(self._sub(key), "pop")
        return dict.pop(self, key, *default)

    def keys(self):  # type: ignore[override]
        return _ProbeKeys(self)

    def items(self):  # type: ignore[override]
        self._rec.note(self._path, "iter")
        return dict.items(self)

    def values(self):  # type: ignore[override]
        self._rec.note(self._path, "iter")
        return dict.values(self)

    def __iter__(self):
        self._rec.note(self._path, "iter")
        return dict.__iter__(self)

    def __copy__(self) -> "_ProbeDict":
        clone = _ProbeDict(self._rec, self._path)
        dict.update(clone, self)
        return clone

    copy = __copy__

    def __deepcopy__(self, memo: dict) -> dict:
        return copy.deepcopy(dict(self), memo)


def _run_probe(present: dict[tuple[str, ...], Any]) -> tuple[_Recorder, BaseException | None]:
    from deepspeed.runtime.config import DeepSpeedConfig

    rec = _Recorder()
    root = _ProbeDict(rec, ())
    for key, value in _PROBE_BASE.items():
        dict.__setitem__(root, key, value)
    for path in sorted(present, key=lambda p: (len(p), p)):
        parent: Any = root
        for depth, key in enumerate(path[:-1]):
            if not dict.__contains__(parent, key):  # parent was only a transient .get default
                dict.__setitem__(parent, key, _ProbeDict(rec, path[:depth + 1]))
            parent = dict.__getitem__(parent, key)
            if not isinstance(parent, dict):
                return rec, TypeError(f"{'.'.join(path[:depth + 1])} is not a dict")
        value = present[path]
        if value == "<dict>":
            value = _ProbeDict(rec, path)
        dict.__setitem__(parent, path[-1], value)
    try:
        DeepSpeedConfig(root)
    except Exception as exc:  # noqa: BLE001 - any failure means "this trial value is not accepted"
        return rec, exc
    return rec, None


def under(path: tuple[str, ...], prefixes: Iterable[tuple[str, ...]]) -> bool:
    return any(path[:len(p)] == p for p in prefixes)


def probe_reads(strict_paths: set[tuple[str, ...]], removed_paths: set[tuple[str, ...]]
                ) -> tuple[dict[tuple[str, ...], Read], set[tuple[str, ...]]]:
    """Discover every key DeepSpeedConfig reads.  Returns (reads, section paths)."""
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        rec, exc = _run_probe({})
        if exc is not None:
            raise RuntimeError(f"DeepSpeedConfig rejected the probe config: {exc!r}")
        found = _Discovery(dict(rec.reads))
        while True:
            candidates = sorted(p for p, r in found.reads.items()
                                if _worth_a_trial(found, p, r, strict_paths, removed_paths))
            if not candidates:
                break
            for path in candidates:
                found.tried.add(path)
                _try_values(found, path)
        return found.reads, found.sections | _implied_sections(found.reads)
    finally:
        logging.disable(previous)


@dataclass
class _Discovery:
    """What the probe runs have found so far."""

    reads: dict[tuple[str, ...], Read]
    present: dict[tuple[str, ...], Any] = field(default_factory=dict)  # the trial values kept in the config
    sections: set[tuple[str, ...]] = field(default_factory=set)  # keys a dict value opened
    tried: set[tuple[str, ...]] = field(default_factory=set)


def _worth_a_trial(found: _Discovery, path: tuple[str, ...], read: Read, strict_paths: set[tuple[str, ...]],
                   removed_paths: set[tuple[str, ...]]) -> bool:
    """A key only tested for presence (or read with a None default) may hide keys read when it is there."""
    if path in found.tried or path in found.present or len(path) > _PROBE_MAX_DEPTH:
        return False
    if tuple(_PROBE_BASE) == path or under(path, strict_paths) or path in removed_paths:
        return False
    return bool(read.kinds & {"in", "getitem", "pop"}
                or (None in read.defaults and not any(isinstance(d, dict) for d in read.defaults)))


def _try_values(found: _Discovery, path: tuple[str, ...]) -> None:
    """Run the probe with each trial value at ``path``; the first one DeepSpeed accepts is judged."""
    for trial in _PROBE_TRIALS:
        trial_rec, exc = _run_probe({**found.present, path: trial})
        if exc is None:
            _judge_trial(found, path, trial, trial_rec.reads)
            return


def _judge_trial(found: _Discovery, path: tuple[str, ...], trial: Any, trial_reads: dict[tuple[str, ...], Read]) -> None:
    """Keep the trial value when it opened a section or made DeepSpeed read a new key."""
    opened = trial == "<dict>" and any(len(q) > len(path) and q[:len(path)] == path for q in trial_reads)
    if not opened and all(q in found.reads for q in trial_reads):
        return
    found.present[path] = trial
    if opened:
        found.sections.add(path)
    for q, r in trial_reads.items():
        if q not in found.reads:
            found.reads[q] = r
            continue
        known = found.reads[q]
        known.kinds |= r.kinds
        known.defaults.extend(d for d in r.defaults if d not in known.defaults)


def _implied_sections(reads: dict[tuple[str, ...], Read]) -> set[tuple[str, ...]]:
    """Keys iterated or read with a dict default, and every key's parent, are sections."""
    out: set[tuple[str, ...]] = set()
    for path, read in reads.items():
        if "iter" in read.kinds or any(isinstance(d, dict) for d in read.defaults):
            out.add(path)
        if len(path) > 1:
            out.add(path[:-1])
    return out
