"""Per-unit results: a run after an edit lints again only the files the edit can change.

The run cache (dslint.run.cache) replays a whole run when nothing it read changed. When a file
did change, this module keeps the rest: the files of a settings group are linted in *units*
(files linted together by one engine call), and each unit's findings are kept in
``.dslint_cache/<version>/units/``, keyed by dslint's build, the settings and the rules. A unit
is replayed only while its files are still found by the walk and each has the content it had
(same size and modification time, else the same content hash), and while everything else the
run that linted it read, listed and looked at is as it was (a *batch*: a program, a pin file, a
folder listing, a path looked for and not found). A change to a batch input lints all of that
batch's units again; a change to a linted file lints its unit again.

Why the units' findings are the run's:
- units start as the files that mention each other's config names (dslint.run.context's index):
  a launch and the configs it names are one unit; an edited or new file also brings back every
  kept unit a mention ties it to, so an edited launch that now names a config is linted with it;
- after linting, two units that hold the same file (one of their files, a document the linker
  read, a node script of a layout, a file a finding is in or would edit) are merged and linted
  again as one, so nothing is found twice or judged with half of the documents;
- a linted file that another unit only read (the layouts read the sibling node scripts of a
  folder) is that other unit's input through the file's own unit: when the file changes, its
  unit is linted again and reads the other unit's files as they are, and if it now ties to them
  (a layout, a named config) the two are merged, as above. When such a file is no longer
  linted (newly ignored), every unit of the batch that read it is linted again.

What is replayed are pickled findings, unpickled only for the report; parsed documents are not kept.
"""

from __future__ import annotations

import os
import pickle
from dataclasses import dataclass, field
from pathlib import Path

from dslint.run.cache import Recorder, _build_id, _kind, _mtime, _prepare, content_hash, read_sealed, signature, write_sealed
from dslint.run.result import RunResult

#: The layout of a unit file; another is read as no file.
_FORMAT = 2


@dataclass
class Unit:
    """Files linted together, what linting them depended on, and what it found (pickled)."""

    members: tuple[tuple[str, bool], ...]  # (display, explicit) of each file, in discovery order
    inputs: dict[str, tuple]  # its files' paths -> what they were (see _record)
    batch: str  # the run that linted it: what that run read besides the files linted (UnitStore.batches)
    own: frozenset[str]  # absolute paths it holds: its files, the documents it read, its findings' files
    nodes: frozenset[tuple]  # (its node launches' layout key, read from a script?) (_nodes)
    payload: bytes  # pickled (diagnostics, skipped, internal errors, files checked)
    order: int = 0  # the position of its first file in this run's discovery order
    _found: tuple | None = field(default=None, repr=False, compare=False)

    def found(self) -> tuple:
        if self._found is None:
            self._found = pickle.loads(self.payload)
        return self._found


class UnitStore:
    """The units of one settings group, kept across runs under a key of the settings and dslint."""

    def __init__(self, root: Path, key_parts: list[str]):
        folder = _prepare(root)
        key = content_hash("\0".join([_build_id(), os.getcwd(), *key_parts]).encode("utf-8"))
        self.path = folder / "units" / f"{key}.pickle" if folder is not None else None

    def load(self) -> tuple[list[Unit], dict[str, dict]]:
        """The units, and each batch's inputs by the batch's name."""
        if self.path is None:
            return [], {}
        data = read_sealed(self.path)
        if data is None:
            return [], {}
        try:
            version, units, batches = pickle.loads(data)
        except Exception:  # noqa: BLE001 - from another Python or dslint: lint again
            return [], {}
        return (units, batches) if version == _FORMAT and isinstance(units, list) and isinstance(batches, dict) else ([], {})

    def save(self, units: list[Unit], batches: dict[str, dict]) -> None:
        if self.path is None:
            return
        for unit in units:
            unit._found = None
        batches = {name: batches[name] for name in {unit.batch for unit in units}}
        try:
            self.path.parent.mkdir(exist_ok=True)
            data = pickle.dumps((_FORMAT, units, batches), protocol=pickle.HIGHEST_PROTOCOL)
        except (OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError):
            return
        write_sealed(self.path, data)


def lint_group(engine, candidates: list, skipped: list[tuple[str, str]], root: Path, key_parts: list[str]) -> RunResult:
    """What ``engine.lint_found(candidates, skipped)`` reports, reusing the units whose inputs are unchanged."""
    from dslint.run.cache import NameIndex

    store = UnitStore(root, key_parts)
    keys = [(c.display, c.explicit) for c in candidates]
    by_member = dict(zip(keys, candidates))
    position = {key: index for index, key in enumerate(keys)}
    linted = {os.path.abspath(c.path) for c in candidates}
    checker = _Checker(linted)
    previous, batches = store.load()
    kept: dict[int, Unit] = {}
    for unit in previous:
        if (unit.batch in batches and all(member in by_member for member in unit.members) and checker.unchanged(unit.inputs)
                and checker.batch(unit.batch, batches[unit.batch])):
            unit.order = min(position[m] for m in unit.members)
            kept[id(unit)] = unit
    neighbours = _mentions(candidates, keys, NameIndex(root))
    pending = _pending(keys, kept, neighbours)
    queue = _components([k for k in keys if k in pending], neighbours)
    done = list(kept.values())
    results: dict[int, RunResult] = {}
    batch = content_hash(os.urandom(16))
    with Recorder(root) as recorder:
        while queue:
            fresh = []
            for members in queue:
                unit, result = _lint_unit(engine, [by_member[m] for m in members], batch)
                unit.order = min(position[m] for m in unit.members)
                results[id(unit)] = result
                fresh.append(unit)
            # units that hold the same file or may hold nodes of one job are one unit, linted again as one
            queue, retied = [], set()
            for joined in _ties(done + fresh):
                if len(joined) > 1:
                    queue.append(sorted({m for unit in joined for m in unit.members}, key=position.__getitem__))
                    retied.update(id(unit) for unit in joined)
            done = [unit for unit in done + fresh if id(unit) not in retied]
            for key in retied:
                results.pop(key, None)
    if results:
        batches[batch] = _inputs(recorder, linted)
    replayed = [unit for unit in done if id(unit) not in results]
    _note(replayed, batches)
    merged = _assemble(done, results, skipped, engine)
    if results or len(done) != len(previous):
        store.save([unit for unit in done if not unit.found()[2]], batches)  # a unit with an internal error runs again
    return merged


def _note(replayed: list[Unit], batches: dict[str, dict]) -> None:
    """The inputs of the replayed units, for the run cache of this command (dslint.run.cache)."""
    from dslint.run.cache import note_inputs

    noted: dict[str, tuple] = {}
    for inputs in [unit.inputs for unit in replayed] + [batches[name] for name in {unit.batch for unit in replayed}]:
        for path, record in inputs.items():
            if record[0] == "read":
                noted[path] = ("read", record[2], record[1][0] if record[1] is not None else None)
            else:
                noted.setdefault(path, (record[0], None, None))
    note_inputs(noted)


def _mentions(candidates: list, keys: list, index) -> dict:
    """Each file's neighbours: the files whose name it mentions, and those that mention its name
    (dslint.run.context's index: a stat per file while it is unchanged)."""
    by_name: dict[str, list] = {}
    for key, candidate in zip(keys, candidates):
        by_name.setdefault(candidate.path.name, []).append(key)
    neighbours: dict = {key: set() for key in keys}
    for key, candidate in zip(keys, candidates):
        for name in index.names(candidate.path):
            for other in by_name.get(name, ()):
                if other != key:
                    neighbours[key].add(other)
                    neighbours[other].add(key)
    index.save()
    return neighbours


def _pending(keys: list, kept: dict[int, Unit], neighbours: dict) -> set:
    """The files to lint: those of no kept unit, and the kept units a mention ties to one of them
    (an edited launch that now names a config, a new config a launch names), step by step."""
    unit_of = {member: unit for unit in kept.values() for member in unit.members}
    pending = {key for key in keys if key not in unit_of}
    todo = list(pending)
    while todo:
        for other in neighbours[todo.pop()]:
            unit = unit_of.get(other)
            if unit is not None and id(unit) in kept:
                del kept[id(unit)]
                fresh = [m for m in unit.members if m not in pending]
                pending.update(fresh)
                todo.extend(fresh)
    return pending


def _components(keys: list, neighbours: dict) -> list[list]:
    """The files that mention each other's names (by file name), together, in discovery order:
    a launch and the configs it names are linted as one from the start."""
    wanted, seen, out = set(keys), set(), []
    place = {key: index for index, key in enumerate(keys)}
    for key in keys:
        if key in seen:
            continue
        seen.add(key)
        group, todo = [], [key]
        while todo:
            current = todo.pop()
            group.append(current)
            for other in neighbours[current]:
                if other in wanted and other not in seen:
                    seen.add(other)
                    todo.append(other)
        out.append(sorted(group, key=place.__getitem__) if len(group) > 1 else group)
    return out


def _lint_unit(engine, members: list, batch: str) -> tuple[Unit, RunResult]:
    result = engine.lint_found(members, [])
    own = {os.path.abspath(c.path) for c in members}
    own.update(os.path.abspath(d.source.path) for d in result.documents if not d.source.virtual and d.source.origin is None)
    for layout in result.layouts:  # node launches of one job: a sibling node script read from its folder
        own.update(os.path.abspath(node.document.source.path) for node in layout.nodes if not node.document.source.virtual)
    for diagnostic in result.diagnostics:
        own.update(os.path.abspath(path) for path in _paths(diagnostic))
    found = (result.diagnostics, result.skipped, result.internal_errors, result.files)
    inputs = {path: _record(path) for path in sorted({os.path.abspath(c.path) for c in members})}
    unit = Unit(tuple((c.display, c.explicit) for c in members), inputs, batch, frozenset(own), _nodes(result),
                pickle.dumps(found, protocol=pickle.HIGHEST_PROTOCOL))
    unit._found = found
    return unit, result


def _nodes(result: RunResult) -> frozenset[tuple]:
    """The node launches that may be nodes of another unit's job: each with the key the layouts
    group them by (dslint.launch.layout.layouts), and whether it is a launch in a script. A
    script's layout reads the other node scripts of its folder itself (sibling_nodes), whichever
    unit holds them; an accelerate config or a training config's launch is grouped only with
    the nodes of its own run, so it ties its unit to every unit with a node of the same key."""
    from dslint.documents.model import SCRIPT

    out = set()
    for layout in result.layouts:
        if layout.alone:
            continue
        for node in layout.nodes:
            port = node.master_port.value if node.master_port is not None else None
            key = repr((node.folder, node.launcher, node.program, node.node_count, port))
            out.add((key, node.plan is not None and node.document.kind == SCRIPT))
    return frozenset(out)


def _ties(units: list[Unit]) -> list[list[Unit]]:
    """The units, grouped: two that hold the same file (one of their files, a document, a
    finding's file) are tied, and so are two with nodes one layout may group where one of them is
    not found by reading sibling scripts (_nodes)."""
    parent = list(range(len(units)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict = {}
    for index, unit in enumerate(units):
        for path in unit.own:
            parent[root(index)] = root(first.setdefault(path, index))
    by_key: dict[str, list[int]] = {}
    for index, unit in enumerate(units):
        for key, _ in unit.nodes:
            by_key.setdefault(key, []).append(index)
    for index, unit in enumerate(units):
        for key, script in unit.nodes:
            if not script:
                for other in by_key[key]:
                    parent[root(other)] = root(index)
    groups: dict[int, list[Unit]] = {}
    for index, unit in enumerate(units):
        groups.setdefault(root(index), []).append(unit)
    return list(groups.values())


def _paths(diagnostic) -> list[str]:
    paths = [diagnostic.span.source.path]
    paths += [r.span.source.path for r in diagnostic.related if r.span is not None]
    for fix in [diagnostic.fix, *diagnostic.alternatives]:
        if fix is not None:
            paths += [edit.source.path for edit in fix.edits]
    return paths


def _assemble(units: list[Unit], results: dict[int, RunResult], skipped: list[tuple[str, str]], engine) -> RunResult:
    """One result of the units' findings, as one engine run over all their files reports them."""
    from dslint.diagnostics import Diagnostic

    merged = RunResult(skipped=list(skipped), plugin_errors=list(engine.plugin_errors), rules=list(engine.rules))
    kept: dict[tuple, object] = {}
    for unit in sorted(units, key=lambda u: u.order):
        diagnostics, unit_skipped, internal_errors, files = unit.found()
        for diagnostic in diagnostics:
            identity = (diagnostic.span.source.path, diagnostic.span.start, diagnostic.span.end, diagnostic.code, diagnostic.message)
            kept.setdefault(identity, diagnostic)
        merged.skipped += unit_skipped
        merged.internal_errors += internal_errors
        merged.files += files
        fresh = results.get(id(unit))
        if fresh is not None:
            merged.documents += fresh.documents
            merged.plans += fresh.plans
            merged.layouts += fresh.layouts
    merged.diagnostics = sorted(kept.values(), key=Diagnostic.sort_key)
    return merged


# ---- inputs ----------------------------------------------------------------------------------


def _record(path: str) -> tuple:
    """A read file: ("read", (size, mtime), content hash, kind)."""
    found, digest = signature(path), None
    if found is not None:
        try:
            with open(path, "rb") as handle:
                digest = content_hash(handle.read())
        except OSError:
            found = None
    return ("read", found, digest, _kind(path))


def _inputs(recorder: Recorder, linted: set[str]) -> dict[str, tuple]:
    """What a batch of units read, listed and looked at, less the content of the files it lints:
    each of those is an input of its own unit only (the module's docstring says why), and of the
    batch only as long as some unit lints it."""
    out: dict[str, tuple] = {}
    for path in recorder.reads:
        out[path] = ("linted", None) if path in linted else _record(path)
    return recorder.add_looked(out)


class _Checker:
    """Is a recorded input unchanged? Each path is asked once per run, whichever units share it."""

    def __init__(self, linted: set[str]):
        self.linted = linted  # the files this run lints (their content is their units' input)
        self._answers: dict[tuple, bool] = {}
        self._batches: dict[str, bool] = {}

    def batch(self, name: str, inputs: dict[str, tuple]) -> bool:
        if name not in self._batches:
            self._batches[name] = self.unchanged(inputs)
        return self._batches[name]

    def unchanged(self, inputs: dict[str, tuple]) -> bool:
        for path, record in inputs.items():
            key = (path, record)
            answer = self._answers.get(key)
            if answer is None:
                answer = self._answers[key] = path in self.linted if record[0] == "linted" else _same(path, record)
            if not answer:
                return False
        return True


def _same(path: str, record: tuple) -> bool:
    how, was, *rest = record
    if how == "read":
        now = signature(path)
        if now is None or was is None:  # not a regular file (or none): what is there decides
            return now == was and _kind(path) == rest[1]
        if now == was:  # size and modification time unchanged: the content hash stands
            return True
        if now[0] != was[0]:
            return False
        try:
            with open(path, "rb") as handle:
                return content_hash(handle.read()) == rest[0]
        except OSError:
            return False
    if how == "look":
        return _kind(path) == was
    if how == "list":
        return _mtime(path) == was
    if how == "signed":
        return signature(path) == was
    return False
