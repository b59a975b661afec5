"""Rules on two processes for large runs.

Parsing is not split: a parsed document costs more to send between processes (pickle) than to
parse. The rules are: after linking, the process forks once; the worker runs every other
(rule, target) pair and sends back its diagnostics, in which each source file is named by the
identity it has in both processes (a fork copies the memory, addresses included), not copied.
If the worker fails in any way, this process runs its share itself.

Used above ``THRESHOLD`` documents, with more than one CPU and ``os.fork`` (Linux);
``DSLINT_WORKERS=1`` turns it off. benchmarks/run.py measures the effect.
"""

from __future__ import annotations

import io
import os
import pickle
import sys

from dslint.source import SourceFile

THRESHOLD = 300  # documents; below it the fork and the pickling cost more than they save


def worth_it(documents: int) -> bool:
    if documents < THRESHOLD or os.environ.get("DSLINT_WORKERS") == "1":
        return False
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False  # macOS: fork after system frameworks load is unsafe
    try:
        return len(os.sched_getaffinity(0)) > 1
    except (AttributeError, OSError):
        return (os.cpu_count() or 1) > 1


def _sources(documents, work) -> dict[int, SourceFile]:
    """Every source file a finding may point into, by identity."""
    found: dict[int, SourceFile] = {}

    def add(document):
        source = getattr(document, "source", None)
        if isinstance(source, SourceFile):
            found[id(source)] = source

    for document in documents:
        add(document)
    for _, target in work:
        add(getattr(target, "document", None))
        add(getattr(target, "origin", None))
        for reference in getattr(target, "references", ()) or ():
            add(getattr(reference, "document", None))
        deepspeed = getattr(target, "deepspeed", None)
        if deepspeed is not None:
            add(getattr(deepspeed, "document", None))
    return found


class _Pickler(pickle.Pickler):
    def __init__(self, file, known: dict[int, SourceFile]):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.known = known

    def persistent_id(self, obj):
        if type(obj) is SourceFile and id(obj) in self.known:
            return id(obj)
        return None


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, known: dict[int, SourceFile]):
        super().__init__(file)
        self.known = known

    def persistent_load(self, pid):
        return self.known[pid]


def _each(run_pairs, indexed, result):
    """Each pair's diagnostics with its place in the work list, so that the merged list has the
    sequential order (the engine keeps the first of identical diagnostics)."""
    out, failed = [], set()
    for index, pair in indexed:
        raw, pair_failed = run_pairs([pair], result)
        out.append((index, raw))
        failed |= pair_failed
    return out, failed


def _merge(*parts):
    return [diagnostic for _, raw in sorted((item for part in parts for item in part), key=lambda item: item[0]) for diagnostic in raw]


def run_split(run_pairs, documents, work, result):
    """``run_pairs(pairs, result) -> (raw, failed)`` over ``work``, half of it in a forked worker."""
    known = _sources(documents, work)
    indexed = list(enumerate(work))
    mine, theirs = indexed[0::2], indexed[1::2]
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return run_pairs(work, result)
    if pid == 0:  # the worker: its share, then straight out (no atexit, no flushing of inherited buffers)
        status = 0
        try:
            os.close(read_end)
            from dslint.engine import RunResult

            own = RunResult()
            raw, failed = _each(run_pairs, theirs, own)
            buffer = io.BytesIO()
            _Pickler(buffer, known).dump((raw, failed, own.internal_errors))
            data = buffer.getvalue()
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(data)
        except BaseException:  # noqa: BLE001 - any failure: the parent runs this share itself
            status = 1
        finally:
            os._exit(status)
    os.close(write_end)
    raw, failed = _each(run_pairs, mine, result)
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    try:
        if status != 0:
            raise RuntimeError("worker failed")
        their_raw, their_failed, their_errors = _Unpickler(io.BytesIO(data), known).load()
    except Exception:  # noqa: BLE001
        their_raw, their_failed = _each(run_pairs, theirs, result)
        their_errors = []
    result.internal_errors.extend(their_errors)
    return _merge(raw, their_raw), failed | their_failed
