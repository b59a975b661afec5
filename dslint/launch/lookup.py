"""Finding the files a launch names, for the linker (dslint.launch.link).

A relative name is looked up in the folder the script cd's into before the launch (where bash
looks first; dslint.launch.prior), then relative to the naming file's folder, each folder above it up to the
repository root, and the working directory (dslint.launch.named.candidate_paths). A file found
is read once per run: the run's own documents, a listed file another process reads (adopted),
the fixer's edited and unwritten text, or the file on disk up to ``MAX_LINKED_BYTES``.
"""

from __future__ import annotations

import os
from pathlib import Path

from dslint.documents import Skipped, read_document
from dslint.documents.model import DEEPSPEED, TRAINING_YAML, Document
from dslint.launch.named import candidate_paths
from dslint.launch.named import repository_root as _repository_root
from dslint.launch.plan import Reference, Sourced
from dslint.launch.prior import launch_folder
from dslint.source import Span

MAX_LINKED_BYTES = 2 * 1024 * 1024


def display(path: Path, cwd: Path) -> str:
    try:
        return os.path.relpath(path, cwd)
    except ValueError:
        return str(path)


def real_path(path: str) -> str | None:
    if not path or path == "-" or path.startswith("<"):
        return None
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return None


class Files:
    """The files of one linking run: those listed, and those read because a launch names them."""

    def __init__(self, documents: list[Document], cwd: Path, overrides: dict[str, bytes], adopt=None):
        self.cwd = cwd
        self.overrides = overrides  # display path -> bytes: the fixer's edited, unwritten files
        self.adopt = adopt  # listed files another process reads (dslint.run.split.Adoptable)
        self.by_path: dict[str, Document] = {}
        # id(script source) -> the script's document, for the files it writes (Written)
        self.writers: dict[int, Document] = {id(doc.source): doc for doc in documents if doc.written}
        for doc in documents:
            real = real_path(doc.source.path)
            if real:
                self.by_path[real] = doc
        self.loaded: list[Document] = []  # documents read because something links to them
        self.roots: dict[Path, Path | None] = {}  # folder → its repository root (root)
        self._found_roots: dict[Path, Path] = {}  # folder → _repository_root(folder)

    def display(self, path: Path) -> str:
        return display(path, self.cwd)

    def candidates(self, raw: str, base: Path) -> list[Path]:
        return candidate_paths(raw, base, self.cwd, self._root_of(base))

    def root(self, base: Path) -> Path | None:
        if base not in self.roots:
            root = self._root_of(base)
            self.roots[base] = None if root == Path(root.anchor or "/") else root
        return self.roots[base]

    def _root_of(self, base: Path) -> Path:
        """Asked for every file every launch of a folder names: the folders above are looked at once a run."""
        found = self._found_roots.get(base)
        if found is None:
            found = self._found_roots[base] = _repository_root(base)
        return found

    def repository(self, base: Path) -> Path:
        """The repository a launch's script is in: its root, else the folder dslint runs in when the
        script is under it, else the script's folder."""
        root = self.root(base)
        if root is not None:
            return root
        here = base.resolve() if base.exists() else base
        return self.cwd if here == self.cwd or self.cwd in here.parents else here

    def workdir(self, doc: Document, command, base: Path) -> tuple[Sourced | None, str | None]:
        """(the folder the script cd's into before ``command``, when it names one; why a relative path
        the launch names cannot be judged: the folder is not known, or outside the repository)."""
        moved = launch_folder(doc.script, command, base, self.root(base) or base)
        if moved is None:
            return None, None
        said = f"{moved.evidence.text} at {moved.evidence.where()}"
        if moved.path is None:
            return None, f"the launch runs in the folder `{said}` goes to, which dslint cannot name"
        repository = self.repository(base)
        inside = moved.path == repository or repository in moved.path.parents
        return Sourced(moved.path, said), None if inside else f"the launch runs in {moved.path}, outside the repository ({said})"

    def resolve(self, role: str, raw: str | None, span: Span, base: Path, expect: str, assumed: str | None = None,
                workdir: Path | None = None) -> Reference:
        """``workdir``: the folder the script cd's into before the launch, where bash looks first."""
        reference = Reference(role=role, raw=raw, span=span, assumed=assumed)
        if raw is None or not raw.strip():
            return reference
        written, known = self.written(raw, span)
        if written is not None:
            reference.written = written
            reference.assumed = None  # the script decides the name, where it writes the file
            reference.document = written.document(expect) if known else None
            if reference.document is not None and all(doc is not reference.document for doc in self.loaded):
                self.loaded.append(reference.document)
            return reference
        first = [Path(os.path.normpath(workdir / raw.strip()))] if workdir is not None and not os.path.isabs(raw.strip()) else []
        return self.first_file(reference, first + self.candidates(raw.strip(), base), expect)

    def written(self, raw: str, span: Span) -> tuple[object, bool]:
        """(the file the naming script writes before this point with a here-document, when the
        launch names it, or None; whether its text is the one the launch reads).

        The same path, and (when a part of it is the caller's) the same words. The last write
        before the launch is what it reads; when that write is conditional (in an ``if``/``case``
        branch, after ``&&``) and another one is there too, which one ran is the script's run-time
        choice, so the file is there but its text is not known."""
        script = self.writers.get(id(span.source))
        if script is None:
            return None, False
        wanted = os.path.normpath(raw.strip())
        said = span.text.strip().strip("\"'")
        writes = []
        for written in script.written:
            name = written.name
            if written.at >= span.start or name is None or os.path.normpath(name.strip()) != wanted:
                continue
            if written.target.value is None and written.target.raw.strip().strip("\"'") != said:
                continue
            writes.append(written)
        if not writes:
            return None, False
        last = writes[-1]
        if last.template is not None and last.source is None:
            self._fill(last, Path(span.source.path).parent)
        return last, not (last.conditional and len(writes) > 1)

    def _fill(self, written, base: Path) -> None:
        """A template that ``sed`` fills in: found as a launch's file would be, from the script's folder."""
        name = written.template_name
        if not name:
            return
        for candidate in self.candidates(name.strip(), base):
            if candidate.is_file():
                document = self.load(candidate, DEEPSPEED if name.lower().endswith(".json") else TRAINING_YAML)
                if document is not None and document.source.text:
                    written.fill(document)
                return

    def first_file(self, reference: Reference, candidates: list[Path], expect: str) -> Reference:
        """The first of ``candidates`` that is a file, loaded into ``reference``; every path looked at in ``tried``."""
        for candidate in candidates:
            shown = self.display(candidate)
            if shown in reference.tried:
                continue
            reference.tried.append(shown)
            if candidate.is_file():
                reference.document = self.load(candidate, expect)
                if reference.document is None:
                    reference.tried[-1] += " (found, but not readable as a config)"
                return reference
        return reference

    def load(self, path: Path, expect: str) -> Document | None:
        real = os.path.realpath(path)
        if real in self.by_path:
            return self.by_path[real]
        if self.adopt is not None:
            listed, document = self.adopt.take(real)
            if listed and document is not None:  # read here as the listed file it is
                self.by_path[real] = document
                self.loaded.append(document)
                return document
        display = self.display(path)
        try:
            if display in self.overrides:
                data = self.overrides[display]
            elif os.path.getsize(path) > MAX_LINKED_BYTES:
                return None
            else:
                data = path.read_bytes()
        except OSError:
            return None
        try:
            document = read_document(display, data, expect=expect)
        except Skipped:
            return None
        except Exception:  # noqa: BLE001 - a linked file must not break the launch it belongs to
            return None
        self.by_path[real] = document
        self.loaded.append(document)
        return document

    def text(self, raw: str, base: Path) -> str | None:
        """The text of the first file ``raw`` names (a hostfile); None when none is found or it cannot be read."""
        for candidate in self.candidates(raw, base):
            if candidate.is_file():
                try:
                    return candidate.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    return None
        return None
