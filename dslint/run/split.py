"""Large runs on two processes: the JSON files on a forked worker, everything else here.

Why JSON: a DeepSpeed config is linted on its own unless a launch names it, and launches live
in scripts and training YAML. So the worker reads the JSON files and lints every DeepSpeed
config among them as a standalone file (parsing, document rules, standalone DeepSpeed rules,
suppressions), while this process reads the scripts and YAML, links the launches and runs
their rules. Only finished diagnostics cross between the processes; parsed documents never do
(pickling one costs more than parsing it).

The result equals a run on one process:
- a JSON file the worker finds to be something a launch is made of (a training config) is
  handed back before linking and read here instead;
- a JSON file that a launch here names is "adopted": read here exactly as a listed file is,
  linted here with its launch, and whatever the worker said about it is dropped;
- if the worker fails in any way, this process lints its share itself.
Both read files with ``Engine.read`` (``dslint.documents.read_candidate``) and lint with
``Engine.lint_documents``; new results are of the type of the one they are given, so that this
module never imports the engine that imports it.
One difference remains, for a file listed twice through a symlink under a JSON and a non-JSON
name: a launch naming it reads the non-JSON listing here even where one process would read
the later of the two.

Used from ``dslint check`` above ``THRESHOLD`` files with at least ``MIN_SHARE`` JSON files,
on Linux with more than one CPU; ``DSLINT_WORKERS=1`` turns it off. The fork happens before
anything is parsed, while the heap is small (a fork after parsing pays for copying the pages
that reference counting touches). benchmarks/run.py measures the effect.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Protocol

from dslint.documents.model import ACCELERATE, SCRIPT, TRAINING_JSON, TRAINING_YAML, Document
from dslint.files.discovery import Candidate
from dslint.files.suffixes import JSON_SUFFIXES

# The engine imports this module, never the other way round: what this module asks of the
# engine and of its results is written here.
RunResult = Any  # a dslint.run.engine.RunResult; new ones are made as type(result)(...)


class Engine(Protocol):
    def read(self, candidate: Candidate, result: RunResult) -> Document | None: ...

    def lint_documents(self, documents: list[Document], result: RunResult, adopt: Any = None) -> RunResult: ...

    def lint_candidates(self, candidates: list[Candidate], result: RunResult) -> RunResult: ...

THRESHOLD = 300  # files in the run
MIN_SHARE = 50  # JSON files; below that the worker saves less than it costs
LINKED_KINDS = (SCRIPT, TRAINING_YAML, TRAINING_JSON, ACCELERATE)  # what linking reads


def workers_allowed() -> bool:
    if os.environ.get("DSLINT_WORKERS") == "1":
        return False
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False  # macOS: fork after system frameworks load is unsafe
    try:
        return len(os.sched_getaffinity(0)) > 1
    except (AttributeError, OSError):
        return (os.cpu_count() or 1) > 1


def worker_share(candidates: list[Candidate]) -> list[Candidate]:
    """The candidates the worker reads; empty when a split is not worth it here."""
    if len(candidates) < THRESHOLD or not workers_allowed():
        return []
    share = [c for c in candidates if c.path.suffix.lower() in JSON_SUFFIXES]
    return share if len(share) >= MIN_SHARE else []


class Adoptable:
    """The worker's files, by real path, for the linker: a launch that names one reads it here."""

    def __init__(self, share: list[Candidate], read: Callable[[Candidate], Document | None]):
        self._share = share
        self._read = read
        self._by_real: dict[str, Candidate] | None = None
        self.taken: set[str] = set()  # display paths whose worker results are void

    def take(self, real: str) -> tuple[bool, Document | None]:
        """(was it the worker's, the document as a listed file reads); (False, None) otherwise."""
        if self._by_real is None:
            self._by_real = {}
            for candidate in self._share:  # one file listed twice (a symlink): the later one, as on one process
                self._by_real[os.path.realpath(candidate.path)] = candidate
        candidate = self._by_real.pop(real, None)
        if candidate is None:
            return False, None
        self.taken.add(candidate.display)
        return True, self._read(candidate)


# ---- the pipe: length-prefixed pickles ------------------------------------------------------
# (pickle and struct are imported here, not at the top: every run imports this module to ask
# whether to split, and a one-file pre-commit run should not pay for them)


def _send(fd: int, payload) -> None:
    import pickle
    import struct

    data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(struct.pack("<Q", len(data)) + data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _receive(fd: int):
    """The next message, or None when the worker is gone."""
    import pickle
    import struct

    head = _read_exactly(fd, 8)
    if head is None:
        return None
    (size,) = struct.unpack("<Q", head)
    body = _read_exactly(fd, size)
    return None if body is None else pickle.loads(body)


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunks, missing = [], size
    while missing:
        chunk = os.read(fd, min(missing, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        missing -= len(chunk)
    return b"".join(chunks)


# ---- the run ------------------------------------------------------------------------------


def _work(engine: Engine, share: list[Candidate], fd: int, result: RunResult) -> None:
    """The worker: read the share, hand back what linking needs, lint the rest on its own (into ``result``, empty)."""
    documents = [(c, engine.read(c, result)) for c in share]
    _send(fd, [c.display for c, d in documents if d is not None and d.kind in LINKED_KINDS])
    own = [d for _, d in documents if d is not None and d.kind not in LINKED_KINDS]
    linted = engine.lint_documents(own, result)
    _send(fd, (linted.diagnostics, linted.skipped, linted.internal_errors, [d.path for d in own]))


def lint_split(engine: Engine, candidates: list[Candidate], share: list[Candidate], result: RunResult) -> RunResult:
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return engine.lint_candidates(candidates, result)
    if pid == 0:  # the worker: its share, then straight out (no atexit, no flushing of inherited buffers)
        status = 0
        try:
            os.close(read_end)
            _work(engine, share, write_end, type(result)())
        except BaseException:  # noqa: BLE001 - any failure: the parent lints this share itself
            status = 1
        finally:
            os._exit(status)
    os.close(write_end)
    try:
        return _lead(engine, candidates, share, result, read_end)
    finally:
        os.close(read_end)
        os.waitpid(pid, 0)


def _lead(engine: Engine, candidates: list[Candidate], share: list[Candidate], result: RunResult, fd: int) -> RunResult:
    fresh = type(result)(skipped=list(result.skipped), plugin_errors=list(result.plugin_errors))
    in_share = {id(c) for c in share}
    documents = [d for d in (engine.read(c, result) for c in candidates if id(c) not in in_share) if d is not None]
    handed = _safe_receive(fd)
    if handed is None:  # the worker failed before reading its share: a run on one process
        documents += [d for d in (engine.read(c, result) for c in share) if d is not None]
        return _in_candidate_order(engine.lint_documents(documents, result), candidates)
    by_display = {c.display: c for c in share}
    back = [by_display[display] for display in handed]
    documents += [d for d in (engine.read(c, result) for c in back) if d is not None]
    handed_back = {id(c) for c in back}
    adoptable = Adoptable([c for c in share if id(c) not in handed_back], lambda c: engine.read(c, result))
    engine.lint_documents(documents, result, adopt=adoptable)
    finished = _safe_receive(fd)
    if finished is None:  # the worker failed while linting (rare): start again on one process
        return engine.lint_candidates(candidates, fresh)
    _take_worker_results(result, finished, adoptable.taken)
    return _in_candidate_order(result, candidates)


def _take_worker_results(result: RunResult, finished, void: set[str]) -> None:
    """Add what the worker found to ``result``, less what it said of files a launch here adopted."""
    diagnostics, skipped, internal_errors, paths = finished
    result.diagnostics = sorted(result.diagnostics + [d for d in diagnostics if d.span.source.path not in void],
                                key=lambda d: d.sort_key())
    result.skipped += [(path, reason) for path, reason in skipped if path not in void]
    result.internal_errors += [e for e in internal_errors if not any(e.where == p or e.where.endswith(" on " + p) for p in void)]
    result.files += sum(1 for path in paths if path not in void)


def _safe_receive(fd: int):
    try:
        return _receive(fd)
    except Exception:  # noqa: BLE001 - a broken message is a failed worker
        return None


def _in_candidate_order(result: RunResult, candidates: list[Candidate]) -> RunResult:
    """Skipped files in the order a run on one process reports them (discovery order)."""
    order = {c.display: index for index, c in enumerate(candidates)}
    result.skipped.sort(key=lambda item: order.get(item[0], -1))
    return result
