"""Which argument names each release of ms-swift, transformers, TRL and LLaMA-Factory had, read from its wheel.

Usage::

    python -m dslint.schemagen.argument_names --wheels DIR --download   # fetch the wheels into DIR, then write
    python -m dslint.schemagen.argument_names --wheels DIR              # write schemas/<package>-names.json
    python -m dslint.schemagen.argument_names --wheels DIR --check      # exit 1 if a shipped file is stale

The argument schemas (``schemas/<package>[-X.Y].schema.json``) are generated from a few
releases only; a release between two of them was described by its neighbours, and a name both
lacked was taken as absent from it. These files record, for every release dslint knows
(schemas/releases.json), the *names* its argument dataclasses define: nothing else (types,
choices and defaults still come from the schemas). Each wheel is read statically: its
``.py`` files are parsed with ``ast``, never imported or built.

What is read, per package (:data:`PACKAGES`):

- ms-swift: every class in a module whose path names ``argument`` (``swift/llm/argument/``,
  ``swift/arguments/``, ``swift/trainers/arguments.py``, ``swift/megatron/argument(s)/``,
  ``swift/llm/utils/argument.py`` in 2.x);
- transformers: ``training_args.py`` and ``training_args_seq2seq.py`` (TrainingArguments,
  Seq2SeqTrainingArguments). One wheel per minor version, its newest patch release: a patch
  release is described by its minor (fields are not added in patch releases);
- TRL: every ``*_config.py`` (``trl/trainer/``, and ``trl/experimental/`` from 1.x);
- LLaMA-Factory: ``llamafactory/hparams/*.py``.

A class's names are the annotated assignments of its body (a dataclass's fields) and those of
its base classes, followed by name through the wheel (a mixin in another module). A base from
another package (``transformers.Seq2SeqTrainingArguments``, ``trl.GRPOConfig``) is recorded by
that package's name in ``inherits``: its names are then every name that package's own file
records in any release. This is a statically collected superset: a module's helper classes
count too, and the inherited names of every release of the other package count. It errs on
the side of accepting a name, which is the right side: dslint says a release lacks a name only
when no class this reader sees defines it.

The file stores the first release's names and, for each later release, what it added and
removed, so it stays small. A release whose wheel could not be read is not listed: dslint then
describes it as before (by the schemas around it).
"""

from __future__ import annotations

import argparse
import ast
import builtins
import fnmatch
import json
import re
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

from dslint.evidence.argnames import decode  # noqa: F401  (the reader of what encode writes)
from dslint.schemagen._hfargs import SCHEMA_DIR

EXIT_OTHER_WHEELS = 3  # --check: the folder's wheels are not the ones the file was made from


@dataclass(frozen=True)
class Package:
    name: str  # the distribution name (releases.json, versions.py)
    patterns: tuple[str, ...]  # fnmatch patterns of the modules whose classes are read
    by_minor: bool = False  # one wheel per minor version describes its patch releases
    # what its command line always parses besides its own classes (ms-swift, TRL and
    # LLaMA-Factory parse transformers' Seq2SeqTrainingArguments, some through a name assigned
    # at run time that no static reader follows: ``BaseTrainingArguments = ...``)
    parses: tuple[str, ...] = ()

    @property
    def output(self) -> Path:
        return SCHEMA_DIR / f"{self.name}-names.json"


PACKAGES: dict[str, Package] = {
    "ms-swift": Package("ms-swift", ("swift/*argument*.py",), parses=("transformers",)),
    "transformers": Package("transformers", ("transformers/training_args.py", "transformers/training_args_seq2seq.py"),
                            by_minor=True),
    "trl": Package("trl", ("trl/*_config.py",), parses=("transformers",)),
    "llamafactory": Package("llamafactory", ("llamafactory/hparams/*.py",), parses=("transformers",)),
}

#: Packages whose names a release may inherit through a base class (``inherits``).
HISTORIES = tuple(PACKAGES)


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


# ---- one wheel -----------------------------------------------------------------------------


_CLASS = re.compile(r"^[ \t]*class[ \t]+([A-Za-z_]\w*)", re.MULTILINE)


class Wheel:
    """The argument names one release's wheel defines, read with ``ast``."""

    def __init__(self, package: Package, version: str, files: dict[str, str]):
        self.package = package
        self.version = version
        self.files = files
        self.inherits: set[str] = set()
        self.unresolved: set[str] = set()  # bases found neither in the wheel nor in another package's import
        # class name -> the modules that define a class of that name (a cheap scan; parsed on demand)
        self._where: dict[str, list[str]] = {}
        for path, text in files.items():
            for match in _CLASS.finditer(text):
                self._where.setdefault(match.group(1), []).append(path)
        self._trees: dict[str, ast.Module | None] = {}
        self.names = self._read()

    @classmethod
    def from_file(cls, package: Package, archive: Path) -> "Wheel":
        version = archive.name.split("-")[1]
        files = {}
        with zipfile.ZipFile(archive) as wheel:
            for info in wheel.infolist():
                if info.filename.endswith(".py") and not info.is_dir():
                    files[info.filename] = wheel.read(info).decode("utf-8", errors="replace")
        return cls(package, version, files)

    def _tree(self, path: str) -> ast.Module | None:
        if path not in self._trees:
            try:
                self._trees[path] = ast.parse(self.files[path])
            except (SyntaxError, ValueError):
                self._trees[path] = None
        return self._trees[path]

    def _selected(self) -> list[str]:
        return sorted(p for p in self.files if any(fnmatch.fnmatchcase(p, pattern) for pattern in self.package.patterns))

    def _read(self) -> frozenset[str]:
        names: set[str] = set()
        seen: set[tuple[str, str]] = set()
        for path in self._selected():
            tree = self._tree(path)
            if tree is None:
                continue
            for node in tree.body:
                if isinstance(node, ast.ClassDef):
                    self._collect(path, node, names, seen)
        return frozenset(names)

    def _collect(self, path: str, node: ast.ClassDef, names: set[str], seen: set[tuple[str, str]]) -> None:
        if (path, node.name) in seen:
            return
        seen.add((path, node.name))
        names.update(_fields(node))
        imports = _imports(self._tree(path))
        for base in node.bases:
            origin = _base_origin(base, imports)
            if origin is None or self._from_other_package(origin.module):
                continue
            where_all = self._defining(origin.original, path, origin.module)
            if not where_all:
                self.unresolved.add(f"{path}:{node.name}({origin.name})")
            for where in where_all:
                for found in self._classes_named(where, origin.original):
                    self._collect(where, found, names, seen)

    def _from_other_package(self, module: str | None) -> bool:
        """A base imported from another package is not followed; one dslint knows is recorded in ``inherits``."""
        root = module.split(".")[0] if module else None
        if not root or root == _import_root(self.package):
            return False
        if root in _IMPORT_ROOTS:
            self.inherits.add(_IMPORT_ROOTS[root])
        return True

    def _classes_named(self, path: str, name: str) -> list[ast.ClassDef]:
        tree = self._tree(path)
        return [node for node in (tree.body if tree is not None else ()) if isinstance(node, ast.ClassDef) and node.name == name]

    def _defining(self, name: str, path: str, module: str | None) -> list[str]:
        """The modules that define class ``name``: the one ``module`` names when that is one, else every module."""
        where = self._where.get(name, [])
        if module and not module.startswith("."):
            exact = [p for p in where if p[:-3].replace("/", ".") in (module, module + ".__init__")]
            if exact:
                return exact
        if path in where and module is None:
            return [path]
        return where


@dataclass(frozen=True)
class _BaseOrigin:
    """Where a base class written in a class statement comes from."""

    name: str  # as written (the attribute of ``module.Name``)
    module: str | None  # the module it is imported from (relative ones keep their dots); None: this file
    original: str  # its name in that module


def _base_origin(base: ast.expr, imports: dict[str, tuple[str, str]]) -> _BaseOrigin | None:
    """The origin of a base, or None for a base not to follow (an expression, ``Generic``, a builtin)."""
    name = base.attr if isinstance(base, ast.Attribute) else base.id if isinstance(base, ast.Name) else None
    if name is None or name == "Generic" or (hasattr(builtins, name) and name not in imports):
        return None
    origin = imports.get(name)
    if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name):
        origin = (imports.get(base.value.id, (base.value.id, base.value.id))[0], name)
    module, original = origin if origin else (None, name)
    return _BaseOrigin(name, module, original)


_IMPORT_ROOTS = {"transformers": "transformers", "trl": "trl", "swift": "ms-swift", "llamafactory": "llamafactory"}


def _import_root(package: Package) -> str:
    return next(root for root, name in _IMPORT_ROOTS.items() if name == package.name)


def _fields(node: ast.ClassDef) -> set[str]:
    """The annotated names of a class body (also inside ``if``/``try`` blocks of the body).

    A ``field(init=False)`` and a ``ClassVar`` are no arguments: HfArgumentParser makes an
    argument only of a dataclass field with ``init`` (hf_argparser.py, ``if not field.init``).
    """
    out: set[str] = set()
    stack = list(node.body)
    while stack:
        statement = stack.pop()
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            if not _not_an_argument(statement):
                out.add(statement.target.id)
        elif isinstance(statement, (ast.If, ast.Try)):
            stack.extend(statement.body + statement.orelse + getattr(statement, "finalbody", []))
            for handler in getattr(statement, "handlers", []):
                stack.extend(handler.body)
    return out


def _not_an_argument(statement: ast.AnnAssign) -> bool:
    annotation = statement.annotation
    target = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    if isinstance(target, (ast.Name, ast.Attribute)) and (getattr(target, "id", None) or getattr(target, "attr", None)) == "ClassVar":
        return True
    value = statement.value
    if isinstance(value, ast.Call) and getattr(value.func, "id", getattr(value.func, "attr", None)) == "field":
        return any(k.arg == "init" and isinstance(k.value, ast.Constant) and k.value.value is False for k in value.keywords)
    return False


def _imports(tree: ast.Module | None) -> dict[str, tuple[str, str]]:
    """local name -> (module, name in that module), for the module-level imports of a file (and
    those inside its top-level ``if``/``try`` blocks). Relative modules keep their dots."""
    out: dict[str, tuple[str, str]] = {}
    if tree is None:
        return out
    stack = list(tree.body)
    while stack:
        statement = stack.pop()
        if isinstance(statement, ast.ImportFrom):
            module = "." * statement.level + (statement.module or "")
            for alias in statement.names:
                out[alias.asname or alias.name] = (module, alias.name)
        elif isinstance(statement, ast.Import):
            for alias in statement.names:
                out[alias.asname or alias.name.split(".")[0]] = (alias.name if alias.asname else alias.name.split(".")[0], "")
        elif isinstance(statement, (ast.If, ast.Try)):
            stack.extend(statement.body + statement.orelse + getattr(statement, "finalbody", []))
            for handler in getattr(statement, "handlers", []):
                stack.extend(handler.body)
    return out


# ---- the history of one package --------------------------------------------------------------


def releases_to_read(package: Package, known: list[str]) -> list[str]:
    """The releases whose wheels are read: every known one, or the newest patch of each minor."""
    if not package.by_minor:
        return list(known)
    newest: dict[tuple[int, ...], str] = {}
    for version in sorted(known, key=_key):
        newest[_key(version)[:2]] = version
    return [newest[minor] for minor in sorted(newest)]


def encode(package: Package, wheels: list[Wheel]) -> dict:
    """The file's content: the first release's names and, for each later one, what changed."""
    rows = []
    previous: frozenset[str] = frozenset()
    inherits: set[str] = set()
    for wheel in sorted(wheels, key=lambda w: _key(w.version)):
        row: dict = {"version": wheel.version}
        added, removed = sorted(wheel.names - previous), sorted(previous - wheel.names)
        if added or not rows:
            row["added"] = added
        if removed:
            row["removed"] = removed
        rows.append(row)
        previous = wheel.names
        inherits |= wheel.inherits
    return {
        "$comment": (f"The argument names of each {package.name} release dslint read "
                     f"({'the newest patch release of each minor version, which describes the minor' if package.by_minor else 'every release'}"
                     "): the first release's names, then what each release added and removed. Written by "
                     "python -m dslint.schemagen.argument_names from the releases' wheels (read with ast, never imported); "
                     "a superset: see the module's doc."),
        "package": package.name,
        "by": "minor" if package.by_minor else "release",
        "modules": list(package.patterns),
        "inherits": sorted((inherits | set(package.parses)) - {package.name}),
        "releases": rows,
    }


def render(data: dict) -> str:
    """One release a line: the file diffs well when a release is added."""
    head = {k: v for k, v in data.items() if k != "releases"}
    lines = ["{"] + [f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}," for k, v in head.items()]
    lines.append('  "releases": [')
    rows = [f"    {json.dumps(row, ensure_ascii=False)}" for row in data["releases"]]
    lines.append(",\n".join(rows))
    lines += ["  ]", "}"]
    return "\n".join(lines) + "\n"


# ---- command line ------------------------------------------------------------------------------


def known(package: Package) -> list[str]:
    data = json.loads((SCHEMA_DIR / "releases.json").read_text(encoding="utf-8"))
    return sorted(data["packages"][package.name], key=_key)


def download(package: Package, folder: Path) -> list[str]:
    """Fetch the wheels :func:`releases_to_read` names that ``folder`` lacks; the versions that have none."""
    from dslint.schemagen.downloads import download_release_file, wheel_name

    folder.mkdir(parents=True, exist_ok=True)
    missing = []
    for version in releases_to_read(package, known(package)):
        name = wheel_name(package.name, version)
        if not (folder / name).is_file() and not download_release_file(package.name, name, folder):
            missing.append(version)
    return missing


def read_folder(package: Package, folder: Path) -> list[Wheel]:
    from dslint.schemagen.downloads import wheel_name

    out = []
    for version in releases_to_read(package, known(package)):
        path = folder / wheel_name(package.name, version)
        if path.is_file():
            out.append(Wheel.from_file(package, path))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dslint.schemagen.argument_names", description=__doc__.split("\n")[0])
    parser.add_argument("--wheels", required=True, type=Path, help="folder of the wheels (downloaded with --download)")
    parser.add_argument("--package", choices=sorted(PACKAGES), action="append", help="only this package (repeatable)")
    parser.add_argument("--download", action="store_true", help="fetch the missing wheels from PyPI first (sha256 checked)")
    parser.add_argument("--check", action="store_true", help="exit 1 if a shipped names file is stale")
    args = parser.parse_args(argv)
    status = 0
    for name in args.package or sorted(PACKAGES):
        package = PACKAGES[name]
        if args.download:
            missing = download(package, args.wheels)
            if missing:
                print(f"{name}: no wheel for {', '.join(missing)}: those releases are not recorded", file=sys.stderr)
        wheels = read_folder(package, args.wheels)
        if not wheels:
            print(f"{name}: no wheel in {args.wheels}", file=sys.stderr)
            status = max(status, 1)
            continue
        status = write_or_check(name, package.output, render(encode(package, wheels)), wheels, args.check, status)
    return status


def write_or_check(name: str, output: Path, text: str, wheels: list, check: bool, status: int) -> int:
    """Write a generated file, or with ``check`` compare it with the shipped one: the run's status
    after this file (1: out of date; EXIT_OTHER_WHEELS: made from other wheels than the folder's)."""
    if not check:
        output.write_text(text, encoding="utf-8")
        print(f"wrote {output} ({len(wheels)} releases)")
        return status
    shipped = json.loads(output.read_text(encoding="utf-8"))
    read = [w.version for w in sorted(wheels, key=lambda w: _key(w.version))]
    if [row["version"] for row in shipped["releases"]] != read:
        print(f"{name}: made from other wheels than the folder's ({len(read)} read)")
        return max(status, EXIT_OTHER_WHEELS)
    stale = text != output.read_text(encoding="utf-8")
    print(f"{name}: {'out of date' if stale else 'up to date'}")
    return 1 if stale and status != EXIT_OTHER_WHEELS else status


if __name__ == "__main__":
    raise SystemExit(main())
