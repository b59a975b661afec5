"""A consumer whose source is in the repository: a checkout of LLaMA-Factory, ms-swift or transformers.

Training repositories often carry a clone of the framework they train with
(``train/LLaMA-Factory/src/llamafactory/...``) and launch it from there, installed editable
from the clone. That clone then says two things the shipped schemas cannot: which version runs
(``src/llamafactory/extras/env.py: VERSION = "0.9.4.dev0"``) and which arguments it accepts
(the dataclasses of ``src/llamafactory/hparams/``, read with ``ast``, never imported).

Which checkout a launch runs (the rule, in order):

1. the folder the script ``cd``s into before the launch (``cd LLaMA-Factory && llamafactory-cli
   train ...``), when that folder is, or is inside, a checkout;
2. otherwise the nearest checkout above or beside the launch's files: from the folder of the
   training config, of the program file (``python src/train.py``) and of the script, each folder
   up to the repository root is looked at, and in it a checkout is either the folder itself or
   one of its immediate subfolders. The first folder with one wins.

A checkout is recognised by its import package, not by the folder's name: ``src/<package>/`` or
``<package>/`` holding ``__init__.py`` and the modules that define its arguments
(``llamafactory/hparams/``; ``swift/llm/argument/``, ``swift/arguments/`` or
``swift/llm/utils/argument.py``; ``transformers/training_args.py``). Its version is read from
the source (``extras/env.py`` VERSION, ``swift/version.py``, ``transformers/__init__.py``
``__version__``; then ``version.py``, ``setup.py`` or ``pyproject.toml``). Two different checkouts
at the same distance, or one whose version or argument modules cannot be read, are a source of
unknown version: rules that depend on the version then say at most ``info``
(dslint.evidence.versions.Verdict.severity).
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from dslint.launch.pyprogram import ArgDef, Evidence, read_modules


@dataclass(frozen=True)
class Layout:
    """How a package's checkout looks: its import names, argument modules and version files."""

    package: str  # as dslint.evidence.versions names it
    imports: tuple[str, ...]  # import package names (a renamed older one last)
    markers: tuple[str, ...]  # any of these, inside the import package, makes it a checkout
    arguments: tuple[str, ...]  # globs, inside the import package, of the modules whose dataclasses are the arguments
    versions: tuple[tuple[str, str], ...]  # (file inside the import package, variable) holding the version


LAYOUTS: dict[str, Layout] = {
    # llamafactory/hparams/parser.py parses the dataclasses of hparams/*.py; extras/env.py holds VERSION.
    "llamafactory": Layout("llamafactory", ("llamafactory", "llmtuner"), ("hparams",), ("hparams/*.py",),
                           (("extras/env.py", "VERSION"), ("__init__.py", "__version__"))),
    # ms-swift 2.x: swift/llm/utils/argument.py; 3.x: swift/llm/argument/ (Megatron-SWIFT:
    # swift/megatron/argument/); 4.x: swift/arguments/ (swift/megatron/arguments/); the
    # Seq2SeqTrainingArguments subclass in swift/trainers/arguments.py; swift/version.py.
    "ms-swift": Layout("ms-swift", ("swift",), ("llm/argument", "arguments", "llm/utils/argument.py"),
                       ("llm/argument/*.py", "llm/argument/*/*.py", "arguments/*.py", "arguments/*/*.py",
                        "llm/utils/argument.py", "trainers/arguments.py", "megatron/argument/*.py",
                        "megatron/arguments/*.py"),
                       (("version.py", "__version__"),)),
    "transformers": Layout("transformers", ("transformers",), ("training_args.py",),
                           ("training_args.py", "training_args_seq2seq.py"), (("__init__.py", "__version__"),)),
}

#: A consumer kind (dslint.launch.consumer) -> the packages whose checkouts it may run.
CONSUMER_PACKAGES = {
    "llamafactory": ("llamafactory", "transformers"), "swift": ("ms-swift", "transformers"),
    "megatron-swift": ("ms-swift", "transformers"), "megatron": ("ms-swift", "transformers"),
    "hf": ("transformers",), "trl": ("transformers",),
}


@dataclass
class Source:
    """A checkout of ``package`` that a launch runs, what it says, and why dslint chose it."""

    package: str
    root: Path  # the checkout (the folder holding src/<package> or <package>)
    version: str | None
    version_at: Evidence | None  # the file and line the version was read from
    chosen: str  # why this checkout: "the checkout the script cd's into (cd X at run.sh:3)", "the checkout nearest cfg.yaml"
    fields: dict[str, ArgDef] = field(default_factory=dict)  # every init field of the argument dataclasses
    problem: str | None = None  # why the version or the arguments could not be read

    @property
    def readable(self) -> bool:
        return self.version is not None and self.problem is None

    def describe(self, display=str) -> str:
        """``VERSION in train/LLaMA-Factory/src/llamafactory/extras/env.py:3, the checkout the script cd's into (cd LLaMA-Factory at run.sh:2)``."""
        if self.readable and self.version_at is not None:
            return f"{self.version_at.text} in {self.version_at.where()}, {self.chosen}"
        return f"{self.chosen} at {display(self.root)}: {self.problem or 'its version could not be read'}"


# --------------------------------------------------------------------------------------------
# Recognising a checkout
# --------------------------------------------------------------------------------------------


@lru_cache(maxsize=4096)  # asked for every folder above every launch: once per (folder, package)
def _package_dir(folder: str, package: str) -> str | None:
    """The import package of a ``package`` checkout rooted at ``folder``, or None."""
    layout = LAYOUTS[package]
    for name in layout.imports:
        for candidate in (os.path.join(folder, "src", name), os.path.join(folder, name)):
            if not os.path.isfile(os.path.join(candidate, "__init__.py")):
                continue
            if any(os.path.exists(os.path.join(candidate, marker)) for marker in layout.markers):
                return candidate
    return None


@lru_cache(maxsize=4096)
def _checkouts_at(folder: str, package: str) -> tuple[str, ...]:
    """Checkouts at ``folder``: the folder itself, else those among its immediate subfolders."""
    if _package_dir(folder, package) is not None:
        return (folder,)
    try:
        children = sorted(e.path for e in os.scandir(folder) if e.is_dir(follow_symlinks=False)
                          and not e.name.startswith("."))
    except OSError:
        return ()
    return tuple(c for c in children if _package_dir(c, package) is not None)


def _containing(folder: str, package: str, stop: str) -> str | None:
    """The checkout that ``folder`` is inside (or is), looking up to ``stop``."""
    here = folder
    while True:
        if _package_dir(here, package) is not None:
            return here
        parent = os.path.dirname(here)
        if here == stop or parent == here or not here.startswith(stop):
            return None
        here = parent


def locate(package: str, starts: list[tuple[Path, str]], workdir: tuple[Path, str] | None, stop: Path,
           display=str) -> Source | None:
    """The checkout of ``package`` a launch runs (see the module's rule), or None.

    ``starts``: (folder, what it is) of the launch's files, strongest first; ``workdir``: the
    folder the script cd's into and the evidence; ``stop``: the repository root.
    """
    top = os.path.realpath(stop)  # real paths on both sides: a symlinked folder is still inside the repository
    if workdir is not None:
        found = _containing(os.path.realpath(workdir[0]), package, top)
        if found is not None:
            return _read(package, found, f"the checkout the script cd's into ({workdir[1]})", display)
    if workdir is not None:
        starts = [(workdir[0], f"the folder the script cd's into ({workdir[1]})"), *starts]
    for folder, what in starts:
        here = os.path.realpath(folder)
        while True:
            found = _checkouts_at(here, package)
            if len(found) == 1:
                return _read(package, found[0], f"the checkout nearest {what}", display)
            if len(found) > 1:
                shown = ", ".join(display(Path(f)) for f in found[:3])
                return Source(package, Path(found[0]), None, None, f"the checkouts nearest {what}",
                              problem=f"several side by side ({shown}): which one runs is not said")
            parent = os.path.dirname(here)
            if here == top or parent == here or not here.startswith(top):
                break
            here = parent
    return None


# --------------------------------------------------------------------------------------------
# Reading a checkout
# --------------------------------------------------------------------------------------------


def _read(package: str, root: str, chosen: str, display) -> Source:
    layout = LAYOUTS[package]
    directory = Path(_package_dir(root, package) or root)
    version, at = _version(directory, Path(root), layout, display)
    files = sorted({p for pattern in layout.arguments for p in directory.glob(pattern) if p.is_file()})
    source = Source(package, Path(root), version, at, chosen)
    if version is None:
        source.problem = "its version could not be read"
    if not files:
        source.problem = source.problem or f"no argument modules under {display(directory)}"
        return source
    program = read_modules(files, lambda p: display(Path(p)))
    for cls in program.classes.values():
        if cls.is_dataclass:
            for definition in cls.fields:
                if definition.init:  # HfArgumentParser skips `field(init=False)` (hf_argparser.py: `if not field.init`)
                    source.fields.setdefault(definition.name, definition)
    if program.unreadable:
        source.problem = source.problem or f"{program.unreadable[0]} could not be read as Python"
    return source


def _version(directory: Path, root: Path, layout: Layout, display) -> tuple[str | None, Evidence | None]:
    for relative, variable in layout.versions:
        found = _assigned_string(directory / relative, variable)
        if found is not None:
            return found[0], Evidence(display(directory / relative), found[1], variable)
    for path, variable in ((directory / "version.py", "__version__"), (root / "version.py", "__version__")):
        found = _assigned_string(path, variable)
        if found is not None:
            return found[0], Evidence(display(path), found[1], variable)
    found = _setup_version(root / "setup.py")
    if found is not None:
        return found[0], Evidence(display(root / "setup.py"), found[1], "setup(version=...)")
    found = _pyproject_version(root / "pyproject.toml")
    if found is not None:
        return found[0], Evidence(display(root / "pyproject.toml"), found[1], "version")
    return None, None


_RELEASE = re.compile(r"^v?\d+(?:\.\d+)+")


def _parsed(path: Path) -> ast.Module | None:
    try:
        if not path.is_file() or path.stat().st_size > 1_000_000:
            return None
        return ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def _assigned_string(path: Path, variable: str) -> tuple[str, int] | None:
    """A module-level ``variable = "1.2.3"`` (or annotated) that names a release."""
    tree = _parsed(path)
    if tree is None:
        return None
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == variable for t in targets):
            value = node.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str) and _RELEASE.match(value.value):
                return value.value.lstrip("v"), node.lineno
    return None


def _setup_version(path: Path) -> tuple[str, int] | None:
    tree = _parsed(path)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (getattr(node.func, "id", None) or getattr(node.func, "attr", None)) == "setup":
            for keyword in node.keywords:
                value = keyword.value
                if keyword.arg == "version" and isinstance(value, ast.Constant) and isinstance(value.value, str) \
                        and _RELEASE.match(value.value):
                    return value.value.lstrip("v"), value.lineno
    return None


def _pyproject_version(path: Path) -> tuple[str, int] | None:
    try:
        if not path.is_file() or path.stat().st_size > 1_000_000:
            return None
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    table = None
    for number, line in enumerate(lines, 1):
        header = re.match(r"^\s*\[([^\]]+)\]\s*$", line)
        if header:
            table = header.group(1).strip()
            continue
        match = re.match(r'^\s*version\s*=\s*["\']([^"\']+)["\']', line)
        if match and table in ("project", "tool.poetry") and _RELEASE.match(match.group(1)):
            return match.group(1).lstrip("v"), number
    return None


def clear_cache() -> None:
    _package_dir.cache_clear()
    _checkouts_at.cache_clear()


__all__ = ["CONSUMER_PACKAGES", "LAYOUTS", "Source", "clear_cache", "locate"]
