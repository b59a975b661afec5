"""Shared machinery for the training-argument schema generators.

Each generator (``transformers``, ``trl``, ``swift``, ``llamafactory``, ``accelerate``) builds
the argument parser the consumer itself builds (transformers' ``HfArgumentParser`` over the
consumer's dataclasses) and writes down what argparse and the dataclass fields say: option
strings, types, choices, ``nargs``, defaults, help, aliases, ``--no_*`` complements and
deprecations. Nothing is copied by hand; the hand-written part of each generator is only
*which* dataclasses a command parses, and that list is read from the package where it keeps one.

Older generations (ms-swift 2.x/3.x, transformers 4.45, ...) are generated from an older copy of
the package installed with ``pip install --no-deps --target DIR`` and put first on ``sys.path``
with ``--path DIR``. Packages whose import chain reaches heavy optional dependencies that are
not installed (PIL, modelscope, vllm, ...) are imported with light stub modules for exactly those
missing top-level modules (:func:`install_stubs`); the stubs exist only inside the generator
process, never in dslint at lint time.

Schema layout (JSON Schema draft 2020-12, ``x-dslint-*`` annotations)::

    {"$schema": ..., "$id": ..., "x-dslint-package": "ms-swift", "x-dslint-version": "4.6.0",
     "x-dslint-generator": "dslint.schemagen.swift",
     "x-dslint-sets": {"sft": ["SftArguments"], ...},      # what one command parses
     "$ref": "#/$defs/<primary set>",
     "$defs": {"<set>": {"type": "object", "additionalProperties": false,
                         "properties": {"<field>": {...}}}},
     "x-dslint-reader": {...}}                              # how config files are read

Field keywords: ``type``/``enum``/``default``/``description``/``deprecated`` (plain JSON
Schema) and ``x-dslint-flags`` (option strings), ``x-dslint-nargs``, ``x-dslint-cli-type``
(what argparse converts a token with: ``float``, ``int``, ``str``, ``bool``, ``choice``,
``json``), ``x-dslint-negation`` (the ``--no_*`` complement), ``x-dslint-python-type`` (the
annotation), ``x-dslint-dataclass``, ``x-dslint-source`` (``path:line`` of the field),
``x-dslint-replaced-by`` (the field the help text says to use instead).
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import enum
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import inspect
import json
import logging
import os
import re
import subprocess
import sys
import types
import typing
import warnings
from pathlib import Path
from typing import Any, Callable, Iterable

from dslint.schemagen._declarations import field_declarations
from dslint.schemagen._json import jsonable, set_default

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "schemas"
DRAFT = "https://json-schema.org/draft/2020-12/schema"

EXIT_OK, EXIT_STALE, EXIT_MISSING, EXIT_OTHER_VERSION = 0, 1, 2, 3


# --------------------------------------------------------------------------
# Stubs for heavy optional imports (generator process only)
# --------------------------------------------------------------------------


class _StubMeta(type):
    """A class that stands for any attribute of a missing module."""

    def __getattr__(cls, name: str) -> Any:
        if name == "__version__":
            return "0.0.0"
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _stub_class(f"{cls.__qualname__}.{name}", cls.__module__)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs and (inspect.isfunction(args[0]) or inspect.isclass(args[0])):
            return args[0]  # used as a decorator: keep what it decorates
        return _stub_class(f"{cls.__qualname__}()", cls.__module__)

    def __getitem__(cls, item: Any) -> Any:
        return cls

    def __or__(cls, other: Any) -> Any:
        return typing.Union[cls, other]

    def __ror__(cls, other: Any) -> Any:
        return typing.Union[other, cls]

    def __iter__(cls):
        return iter(())

    def __len__(cls) -> int:
        return 0

    def __bool__(cls) -> bool:
        return False

    def __mro_entries__(cls, bases):
        return (cls,)


def _stub_class(name: str, module: str) -> type:
    return _StubMeta(name.rsplit(".", 1)[-1] or "Stub", (), {"__module__": module, "__qualname__": name})


class _StubModule(types.ModuleType):
    __version__ = "0.0.0"

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        value = _stub_class(name, self.__name__)
        setattr(self, name, value)
        return value


class _StubLoader(importlib.abc.Loader):
    def create_module(self, spec):
        module = _StubModule(spec.name)
        module.__path__ = []  # a package, so that submodules resolve to stubs too
        module.__dslint_stub__ = True
        return module

    def exec_module(self, module):
        return None


class _StubFinder(importlib.abc.MetaPathFinder):
    def __init__(self, names: Iterable[str]):
        self.names = set(names)
        self.used: set[str] = set()

    def find_spec(self, fullname, path=None, target=None):
        # A dotted name ("megatron.training") stubs a part that an installed package lacks.
        stubbed = next((n for n in self.names if "." in n and (fullname == n or fullname.startswith(n + "."))),
                   fullname.split(".", 1)[0])
        if stubbed not in self.names or _asked_by_find_spec():
            return None
        if fullname == stubbed:
            for finder in sys.meta_path:
                if finder is self:
                    continue
                try:
                    spec = finder.find_spec(fullname, path, target)
                except (ImportError, AttributeError, ValueError):
                    spec = None
                if spec is not None:
                    return None  # the real module is installed: use it
        elif not _is_stub(sys.modules.get(stubbed)):
            return None
        self.used.add(stubbed)
        return importlib.machinery.ModuleSpec(fullname, _StubLoader(), is_package=True)


def _is_stub(module: Any) -> bool:
    return isinstance(module, _StubModule)


def _asked_by_find_spec() -> bool:
    """True when ``importlib.util.find_spec`` asks (an "is it installed?" probe, not an import).

    Packages test optional dependencies that way (transformers' ``is_*_available``); a stub must
    not make them believe the package is there.
    """
    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "find_spec" and (code.co_filename == "<frozen importlib.util>"
                                            or code.co_filename.endswith(os.path.join("importlib", "util.py"))):
            return True
        frame = frame.f_back
    return False


_FINDER: _StubFinder | None = None


def install_stubs(names: Iterable[str]) -> _StubFinder:
    """Stub the given top-level modules, but only those that are not installed."""
    global _FINDER
    if _FINDER is None:
        _FINDER = _StubFinder(names)
        sys.meta_path.insert(0, _FINDER)
    else:
        _FINDER.names.update(names)
    return _FINDER


def stubbed() -> list[str]:
    return sorted(_FINDER.used) if _FINDER is not None else []


def prepend_path(path: str | None) -> None:
    if path:
        sys.path.insert(0, os.path.abspath(path))
        importlib.invalidate_caches()


def quiet() -> None:
    """Silence the packages' import-time chatter (logging, warnings)."""
    logging.disable(logging.WARNING)
    warnings.filterwarnings("ignore")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("DS_ACCELERATOR", "cpu")


def dist_version(dist: str) -> str:
    from importlib import metadata

    return metadata.version(dist)


# --------------------------------------------------------------------------
# Help text
# --------------------------------------------------------------------------


def _short_help(text: str | None, limit: int = 240) -> str | None:
    if not text:
        return None
    text = " ".join(str(text).split())
    if len(text) > limit:
        cut = text[:limit]
        stop = cut.rfind(". ")
        text = cut[: stop + 1] if stop > 60 else cut.rstrip() + "…"
    return text


# --------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------

_NONE = type(None)


def _type_name(tp: Any) -> str:
    if isinstance(tp, str):
        return tp
    if tp is _NONE:
        return "None"
    if isinstance(tp, type) and not typing.get_args(tp):
        return tp.__name__
    text = repr(tp).replace("typing.", "")
    return re.sub(r"\b[\w.]+\.(\w+)", r"\1", text)


#: Scalar annotations, compared by identity (an annotation need not be hashable).
_SCALAR_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"))
_COLLECTIONS = (list, tuple, set, frozenset)


def annotation_schema(tp: Any) -> dict:
    """JSON Schema of a dataclass annotation (what a value given as data must look like)."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any or tp is object:
        return {}
    if tp is _NONE:
        return {"type": "null"}
    if origin is typing.Union or (hasattr(types, "UnionType") and isinstance(tp, types.UnionType)):
        return _union_schema(args)
    if origin is typing.Literal:
        return {"enum": [jsonable(a) for a in args]}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"enum": [jsonable(m.value) for m in tp]}
    for kind, name in _SCALAR_TYPES:
        if tp is kind:
            return {"type": name}
    if origin in _COLLECTIONS or tp in _COLLECTIONS:
        return _array_schema(args)
    if origin is dict or tp is dict:
        return {"type": "object"}
    return {}


def _union_schema(args: tuple) -> dict:
    """A union: any value when a branch takes any; one ``type`` list when every branch is a plain type."""
    branches = [annotation_schema(a) for a in args]
    if any(b == {} for b in branches):
        return {}
    flat: list[dict] = []
    for branch in branches:
        for sub in branch.get("anyOf", [branch]):
            if sub not in flat:
                flat.append(sub)
    if not all(set(b) == {"type"} for b in flat):
        return {"anyOf": flat}
    kinds: list[str] = []
    for b in flat:
        kinds.extend(b["type"] if isinstance(b["type"], list) else [b["type"]])
    kinds = list(dict.fromkeys(kinds))
    return {"type": kinds[0] if len(kinds) == 1 else kinds}


def _array_schema(args: tuple) -> dict:
    schema: dict[str, Any] = {"type": "array"}
    if args and args[0] is not Ellipsis:
        item = annotation_schema(args[0])
        if item:
            schema["items"] = item
    return schema


def _cli_type(action: argparse.Action) -> str | None:
    if action.choices is not None:
        return "choice"
    kind = action.type
    if kind is None:
        return None if action.nargs == 0 else "str"
    name = getattr(kind, "__name__", "")
    if name == "string_to_bool":
        return "bool"
    if name in ("parse_choice", "choice_type"):
        return "choice"
    if kind in (int, float, str):
        return kind.__name__
    if name in ("loads",) or "json" in name.lower():
        return "json"
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return "choice"
    return name or repr(kind)


# --------------------------------------------------------------------------
# Walking an HfArgumentParser
# --------------------------------------------------------------------------

_DEPRECATED = re.compile(r"deprecat", re.I)
_USE_INSTEAD = re.compile(r"(?:use|replaced by|renamed to|in favou?r of|alias of)\s+[`'\"]?(?:--)?([A-Za-z_][A-Za-z0-9_]*)", re.I)


def _field_sources(klass: type, root: Path | None, owners: dict[str, str] | None = None) -> dict[str, str]:
    """Field name -> ``path:line`` of its declaration, searching the MRO (``owners``: -> class name)."""
    found: dict[str, str] = {}
    for base, filename, name, line in field_declarations(klass):
        found[name] = f"{_relative(filename, root)}:{line}"
        if owners is not None:
            owners[name] = base.__name__
    return found


def _relative(filename: str | None, root: Path | None) -> str:
    if not filename:
        return "?"
    path = Path(filename).resolve()
    if root is not None:
        try:
            return path.relative_to(root).as_posix()
        except ValueError:
            pass
    parts = path.parts
    for marker in ("site-packages", "dist-packages"):
        if marker in parts:
            return "/".join(parts[parts.index(marker) + 1:])
    return path.name


def _resolved_fields(klass: type) -> list[tuple[dataclasses.Field, Any]]:
    """(field, resolved annotation) of every ``init`` field."""
    try:
        hints = typing.get_type_hints(klass)
    except Exception:  # noqa: BLE001  (stubs or forward references: keep the raw annotations)
        hints = {}
    return [(f, hints.get(f.name, f.type)) for f in dataclasses.fields(klass) if f.init]


def parser_schema(parser: argparse.ArgumentParser, dataclass_types: list[type], *, root: Path | None,
                  skip_dests: Iterable[str] = ()) -> dict:
    """Object schema of everything ``parser`` accepts, annotated from the dataclass fields."""
    fields = _parsed_fields(dataclass_types, root)
    props: dict[str, dict] = {}
    negations: dict[str, list[str]] = {}
    skip = set(skip_dests) | {"help"}
    for action in parser._actions:  # argparse has no public list
        if action.dest in skip or not action.option_strings:
            continue
        if isinstance(action, argparse._StoreFalseAction):  # the --no_* complement
            negations.setdefault(action.dest, []).extend(action.option_strings)
            continue
        if action.dest in props:
            flags = props[action.dest]["x-dslint-flags"]
            flags.extend(s for s in action.option_strings if s not in flags)
            continue
        props[action.dest] = _action_prop(action, fields)
    for dest, flags in negations.items():
        if dest in props:
            props[dest]["x-dslint-negation"] = flags
    # replaced-by must name a real field
    for prop in props.values():
        if prop.get("x-dslint-replaced-by") not in props:
            prop.pop("x-dslint-replaced-by", None)
    return {"type": "object", "additionalProperties": False, "properties": dict(sorted(props.items()))}


@dataclasses.dataclass
class _ParsedFields:
    """The dataclass fields behind a parser's options, by name (the first dataclass that has one wins)."""

    fields: dict[str, tuple[type, dataclasses.Field, Any]]  # name -> (dataclass, field, resolved annotation)
    sources: dict[str, str]  # name -> path:line
    owners: dict[str, str]  # name -> the class that declares it


def _parsed_fields(dataclass_types: list[type], root: Path | None) -> _ParsedFields:
    out = _ParsedFields({}, {}, {})
    for klass in dataclass_types:
        src = _field_sources(klass, root, out.owners)
        for f, hint in _resolved_fields(klass):
            out.fields.setdefault(f.name, (klass, f, hint))
            if f.name in src:
                out.sources.setdefault(f.name, src[f.name])
    return out


def _action_prop(action: argparse.Action, parsed: _ParsedFields) -> dict:
    """One option's schema: the field's annotation, default and help when a field is behind it."""
    prop: dict[str, Any] = {}
    info = parsed.fields.get(action.dest)
    help_text = action.help
    if info is not None:
        klass, f, hint = info
        prop.update(annotation_schema(hint))
        prop["x-dslint-python-type"] = _type_name(hint)
        prop["x-dslint-dataclass"] = parsed.owners.get(f.name, klass.__name__)
        help_text = f.metadata.get("help") if isinstance(f.metadata, typing.Mapping) else None
    if action.choices is not None:
        choices = [jsonable(c) for c in action.choices]
        prop.pop("type", None)
        prop.pop("anyOf", None)
        prop["enum"] = choices
    default = action.default if info is None else _field_default(info[1])
    if default is not argparse.SUPPRESS:
        set_default(prop, default)
    if action.required:
        prop["x-dslint-required"] = True
    prop["x-dslint-flags"] = list(action.option_strings)
    if action.nargs is not None:
        prop["x-dslint-nargs"] = action.nargs if isinstance(action.nargs, str) else int(action.nargs)
    cli = _cli_type(action)
    if cli:
        prop["x-dslint-cli-type"] = cli
    _describe(prop, help_text, action.dest)
    if action.dest in parsed.sources:
        prop["x-dslint-source"] = parsed.sources[action.dest]
    return prop


def _field_default(f: dataclasses.Field) -> Any:
    """The field's default; ``argparse.SUPPRESS`` when it has none (or its factory fails)."""
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
        try:
            return f.default_factory()  # type: ignore[misc]
        except Exception:  # noqa: BLE001
            return argparse.SUPPRESS
    return argparse.SUPPRESS


def _describe(prop: dict, help_text: Any, dest: str) -> None:
    """The description from the help text, and a deprecation (with its replacement) it states."""
    description = _short_help(help_text)
    if description:
        prop["description"] = description
    if help_text and _DEPRECATED.search(str(help_text)):
        prop["deprecated"] = True
        match = _USE_INSTEAD.search(str(help_text))
        if match and match.group(1) != dest:
            prop["x-dslint-replaced-by"] = match.group(1)


def dataclass_schema(klass: type, *, root: Path | None) -> dict:
    """Object schema of a plain dataclass read with ``klass(**data)`` (no argparse)."""
    owners: dict[str, str] = {}
    src = _field_sources(klass, root, owners)
    props: dict[str, dict] = {}
    for f, hint in _resolved_fields(klass):
        prop = annotation_schema(hint)
        prop["x-dslint-python-type"] = _type_name(hint)
        prop["x-dslint-dataclass"] = owners.get(f.name, klass.__name__)
        default: Any = dataclasses.MISSING
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
            default = f.default_factory()  # type: ignore[misc]
        if default is dataclasses.MISSING:
            prop["x-dslint-required"] = True
        else:
            set_default(prop, default)
        help_text = f.metadata.get("help") if f.metadata else None
        if _short_help(help_text):
            prop["description"] = _short_help(help_text)
        if f.name in src:
            prop["x-dslint-source"] = src[f.name]
        props[f.name] = prop
    return {"type": "object", "additionalProperties": False, "properties": dict(sorted(props.items()))}


def _share_fields(sets: dict[str, dict]) -> dict[str, dict]:
    """Store each distinct field schema once (``$defs["field:<name>"]``) and refer to it.

    The sets of one package repeat most fields (ms-swift's sft/pt/rlhf/export, the Megatron
    sets); sharing keeps the files small and quick to load.
    """
    defs: dict[str, dict] = {}
    by_text: dict[str, str] = {}
    for set_schema in sets.values():
        props = set_schema["properties"]
        for name, prop in props.items():
            text = json.dumps(prop, sort_keys=True)
            ref = by_text.get(text)
            if ref is None:
                ref = f"field:{name}"
                n = 1
                while ref in defs:
                    n += 1
                    ref = f"field:{name}:{n}"
                defs[ref] = prop
                by_text[text] = ref
            props[name] = {"$ref": f"#/$defs/{ref}"}
    return defs


def document(*, package: str, version: str, generator: str, title: str, sets: dict[str, dict],
             members: dict[str, list[str]], primary: str, extra: dict | None = None) -> dict:
    stats = {name: len(s["properties"]) for name, s in sets.items()}
    fields = _share_fields(sets)
    sets = {**sets, **fields}
    schema: dict[str, Any] = {
        "$schema": DRAFT,
        "$id": f"urn:dslint:schema:{package}-{version}",
        "title": title,
        "description": (f"Generated by {generator} from {package} {version}; do not edit by hand. "
                        "Each $defs entry is what one command's argument parser accepts "
                        "(x-dslint-sets lists its dataclasses)."),
        "$ref": f"#/$defs/{primary}",
        "x-dslint-package": package,
        "x-dslint-version": version,
        "x-dslint-generator": generator,
        "x-dslint-sets": members,
        "$defs": sets,
        "x-dslint-stats": stats,
    }
    if extra:
        schema.update(extra)
    return schema


def render(schema: dict) -> str:
    return json.dumps(schema, indent=0, sort_keys=True, ensure_ascii=False) + "\n"


def _diff_summary(old: str, new: str, limit: int = 40) -> str:
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), "committed", "regenerated",
                                      n=0, lineterm=""))
    head = lines[:limit]
    more = f"\n... ({len(lines) - limit} more diff lines)" if len(lines) > limit else ""
    return "\n".join(head) + more


def output_name(package: str, version: str, current: bool) -> Path:
    if current:
        return SCHEMA_DIR / f"{package}.schema.json"
    major_minor = ".".join(version.split(".")[:2])
    return SCHEMA_DIR / f"{package}-{major_minor}.schema.json"


def main(argv: list[str] | None, *, package: str, module: str, build: Callable[[], dict],
         installed_version: Callable[[], str], doc: str, current_major_minor: str | None = None) -> int:
    """Command line shared by the generators.

    ``--path DIR`` puts an older ``pip install --no-deps --target DIR`` copy first on sys.path.
    Without ``--output``, the file is ``schemas/<package>.schema.json`` for the current
    generation and ``schemas/<package>-<major.minor>.schema.json`` for an older one.
    ``--check`` exits 0 when the file is up to date, 1 when stale, 2 when the package is not
    importable, 3 when the installed version is not the one the file was made from.
    """
    parser = argparse.ArgumentParser(prog=f"python -m {module}", description=doc.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed schema differs")
    parser.add_argument("--output", "-o", help="where to write ('-' for stdout)")
    parser.add_argument("--path", help="a --target directory holding another version of the package")
    parser.add_argument("--current", action="store_true",
                        help="write schemas/<package>.schema.json even for an older version")
    args = parser.parse_args(argv)
    if os.environ.get("PYTHONHASHSEED") != "0":
        # Help texts built from sets (ms-swift's "choices: [...]") must not change from run to run.
        env = dict(os.environ, PYTHONHASHSEED="0")
        cli = sys.argv[1:] if argv is None else list(argv)
        return subprocess.call([sys.executable, "-m", module, *cli], env=env)
    prepend_path(args.path)
    quiet()
    try:
        version = installed_version()
    except Exception as exc:  # noqa: BLE001
        print(f"error: {package} is not installed: {exc}", file=sys.stderr)
        return EXIT_MISSING
    is_current = args.current or (current_major_minor is not None and version.startswith(current_major_minor))
    target = Path(args.output) if args.output else output_name(package, version, is_current)
    if args.check and target.exists():
        old = target.read_text(encoding="utf-8")
        try:
            old_version = json.loads(old).get("x-dslint-version")
        except ValueError:
            old_version = None
        if old_version and old_version != version:
            print(f"{target}: made from {package} {old_version}, installed is {version}; cannot compare")
            return EXIT_OTHER_VERSION
    try:
        text = render(build())
    except ImportError as exc:
        print(f"error: cannot import {package}: {exc}", file=sys.stderr)
        return EXIT_MISSING
    if args.check:
        old = target.read_text(encoding="utf-8") if target.exists() else ""
        if old == text:
            print(f"{target}: up to date")
            return EXIT_OK
        print(f"{target}: out of date; run python -m {module}\n{_diff_summary(old, text)}")
        return EXIT_STALE
    if args.output == "-":
        sys.stdout.write(text)
        return EXIT_OK
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    print(f"wrote {target} ({package} {version}; stubbed: {', '.join(stubbed()) or 'nothing'})")
    return EXIT_OK
