"""Generate ``schemas/deepspeed.schema.json`` from an installed ``deepspeed``.

Usage::

    python -m dslint.schemagen.deepspeed            # (re)write the schema
    python -m dslint.schemagen.deepspeed --check    # exit 1 if the file is stale
    python -m dslint.schemagen.deepspeed --output -  # print to stdout

The output is a JSON Schema (draft 2020-12) of a DeepSpeed config dict, with
``x-dslint-*`` annotations for the things plain JSON Schema cannot say.

Where the facts come from
-------------------------
* **Strict sections** (pydantic models with ``extra="forbid"``): the models are
  imported from deepspeed and their ``model_fields`` are walked recursively
  (types, defaults, bounds, aliases, deprecations, validators).  Only the list
  of models and the config key each one is read from is written by hand
  (:data:`STRICT_SECTIONS`, :data:`STRICT_CONTAINERS`).
* **dict.get keys** (top-level scalars and the lax sections): found by running
  ``DeepSpeedConfig`` on a recording dict that logs every key DeepSpeed looks
  up, with the default it passes to ``.get``.  Keys that are only tested for
  presence are then re-run with a value present (a dict, then a string) until
  no new key turns up, so nested lax sections are discovered too.
* **Removed keys**: the tables of removed keys in ``deepspeed/runtime/config.py``.

Only this generator imports deepspeed.  The linter reads the committed JSON.

Custom keywords (all optional, all prefixed ``x-dslint-``)
----------------------------------------------------------
``x-dslint-deepspeed-version``  root: the deepspeed version the file was made from.
``x-dslint-lax``                object: DeepSpeed ignores unknown keys here silently.
``x-dslint-strict``             object: pydantic model; unknown keys raise.
``x-dslint-drops-auto``         model: a value of exactly ``"auto"`` is removed before
                                validation, so the field default applies.
``x-dslint-unchecked``          key read with ``dict.get``; DeepSpeed does not check
                                its type (``type`` is what the default suggests).
``x-dslint-alias-of``           this property is another spelling of the named one.
``x-dslint-aliases``            the other spellings of this property.
``x-dslint-alias-conflict``     ``"error"``: giving both spellings raises;
                                ``"ignored"``: the alias is ignored when both are given.
``x-dslint-replaced-by``        deprecated key: the key that replaces it.
``x-dslint-set-new-param``      deprecated key: whether its value is copied to the
                                replacement (false: the old key has no effect).
``x-dslint-removed``            key whose mere presence raises ``DeepSpeedConfigError``.
``x-dslint-removed-message``    the error message DeepSpeed raises for it.
``x-dslint-values``             values DeepSpeed's code accepts for an unchecked key.
``x-dslint-case-insensitive``   ``x-dslint-values`` are compared case-insensitively.
``x-dslint-validators``         names of pydantic validators with extra checks.
``x-dslint-python-type``        the Python type when it has no JSON equivalent.
``x-dslint-default-python``     repr of a default that JSON cannot hold.
``x-dslint-source``             ``deepspeed/<file>.py:<line>`` where the key is read/declared.
``x-dslint-values-source``      where the accepted values (``x-dslint-values``) come from.
``x-dslint-presence-checked``   DeepSpeed tests the key for presence (no ``.get`` default).
``x-dslint-passthrough``        the section's keys are handed on as given.
"""

from __future__ import annotations

import argparse
import ast
import copy
import difflib
import enum
import importlib
import importlib.util
import inspect
import json
import logging
import math
import pathlib
import re
import sys
import textwrap
import types
import typing
from pathlib import Path
from typing import Any, Callable, Iterable

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "schemas" / "deepspeed.schema.json"
DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "urn:dslint:schema:deepspeed-config"

# --------------------------------------------------------------------------
# Hand-listed facts: which pydantic models exist and where they are read from.
# Everything inside a model is discovered from the model itself.
# --------------------------------------------------------------------------

#: config path -> (module, class).  The path is a dotted key path in the config.
STRICT_SECTIONS: dict[str, tuple[str, str]] = {
    "zero_optimization": ("deepspeed.runtime.zero.config", "DeepSpeedZeroConfig"),
    "fp16": ("deepspeed.runtime.precision_config", "DeepSpeedFP16Config"),
    "bf16": ("deepspeed.runtime.precision_config", "DeepSpeedBF16Config"),
    "comms_logger": ("deepspeed.comm.config", "CommsLoggerConfig"),
    "hybrid_engine": ("deepspeed.runtime.config", "HybridEngineConfig"),
    "compile": ("deepspeed.compile.config", "CompileConfig"),
    "tensor_parallel": ("deepspeed.runtime.tensor_parallel.config", "TPTrainingConfig"),
    "weight_quantization": ("deepspeed.inference.config", "WeightQuantConfig"),
    "timers.throughput": ("deepspeed.utils.config", "DeepSpeedThroughputTimerConfig"),
}

#: Models whose *fields* are each a top-level section (monitor backends).
STRICT_CONTAINERS: list[tuple[str, str]] = [
    ("deepspeed.monitor.config", "DeepSpeedMonitorConfig"),
]

#: Top-level aliases read by plain code: alias -> (canonical key, constant holding
#: the alias name, what happens when both are given).
TOP_LEVEL_ALIASES: dict[str, tuple[str, tuple[str, str], str]] = {
    "bfloat16": ("bf16", ("deepspeed.runtime.precision_config", "BFLOAT16_OLD"), "ignored"),
}

#: Tables of removed keys: (config path of the section, module, attribute).
REMOVED_TABLES: list[tuple[str, str, str]] = [
    ("", "deepspeed.runtime.config", "_REMOVED_TOP_LEVEL_CONFIG_KEYS"),
    ("zero_optimization", "deepspeed.runtime.config", "_REMOVED_ZERO_CONFIG_KEYS"),
]

#: Keys read outside ``DeepSpeedConfig._initialize_params`` (so the probe cannot
#: see them): path -> (default, module whose source reads it, text to locate, note).
EXTRA_READS: dict[str, tuple[Any, str, str, str]] = {
    "sequence_parallel_size": (
        None, "deepspeed.runtime.config", '"sequence_parallel_size"',
        "Read raw: divides the world size used by the batch-size check when no mpu is given; "
        "with data_parallel_size it builds a DP x SP mesh in deepspeed.initialize."),
    "data_parallel_size": (
        None, "deepspeed", '"data_parallel_size"',
        "Read raw by deepspeed.initialize together with sequence_parallel_size to build a mesh."),
    "allgather_size": (
        5e8, "deepspeed.runtime.zero.config", '"allgather_size"',
        "Read only when zero_optimization is a boolean (legacy format)."),
    "pipeline.use_reentrant": (
        None, "deepspeed.runtime.pipe.engine", "'use_reentrant'",
        "Read by the pipeline engine; None means true."),
}

#: Sections whose defaults come from a function returning the default dict.
DEFAULT_DICT_PROVIDERS: dict[str, tuple[str, str]] = {
    "pipeline": ("deepspeed.runtime.config", "get_pipeline_config"),
}

#: Sections DeepSpeed hands on whole without reading their keys: path -> note.
OPAQUE_SECTIONS: dict[str, str] = {
    "datastates_ckpt": "The whole dict is handed to the DataStates checkpoint engine.",
    "optimizer.params": "Passed as keyword arguments to the optimizer constructor.",
    "scheduler.params": "Passed as keyword arguments to the LR scheduler constructor.",
}

_PROBE_BASE = {"train_micro_batch_size_per_gpu": 1}
_PROBE_TRIALS = ("<dict>", "x")  # values tried for keys only tested for presence
_PROBE_MAX_DEPTH = 5
_GET_HELPERS = {"get_scalar_param", "get_list_param", "get_dict_param"}


class _Unrepresentable(Exception):
    pass


# --------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------


def _ds_root() -> Path:
    import deepspeed  # noqa: PLC0415  (imported only by the generator)

    return Path(deepspeed.__file__).resolve().parent.parent


def _rel(filename: str | None, line: int | None) -> str | None:
    if not filename:
        return None
    try:
        rel = Path(filename).resolve().relative_to(_ds_root()).as_posix()
    except ValueError:
        return None
    return f"{rel}:{line}" if line else rel


def _module_file(modname: str) -> str | None:
    spec = importlib.util.find_spec(modname)
    return spec.origin if spec else None


def _find_line(modname: str, needle: str) -> str | None:
    """``file:line`` of the first line of a module's source containing ``needle``."""
    path = _module_file(modname)
    if not path:
        return None
    for lineno, text in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if needle in text:
            return _rel(path, lineno)
    return _rel(path, None)


def _import(modname: str, attr: str, default: Any = None) -> Any:
    try:
        return getattr(importlib.import_module(modname), attr)
    except (ImportError, AttributeError):
        return default


def _jsonable(value: Any) -> Any:
    """Convert a Python default to JSON, or raise :class:`_Unrepresentable`."""
    from pydantic import BaseModel  # noqa: PLC0415

    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, enum.Enum):
        return _jsonable(value.value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _Unrepresentable(repr(value))
        return value
    if isinstance(value, pathlib.PurePath):
        return str(value)
    if isinstance(value, BaseModel):
        return _jsonable(value.model_dump())
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_jsonable(v) for v in value), key=repr)
    if type(value).__module__ == "torch" and type(value).__name__ == "dtype":
        return str(value)
    raise _Unrepresentable(repr(value))


def _set_default(schema: dict, value: Any) -> None:
    try:
        schema["default"] = _jsonable(value)
    except _Unrepresentable as exc:
        schema["x-dslint-default-python"] = str(exc)


def _type_of_default(value: Any) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return None


# --------------------------------------------------------------------------
# Pydantic model walk
# --------------------------------------------------------------------------

_SIMPLE_TYPES: dict[Any, str] = {bool: "boolean", int: "integer", float: "number", str: "string",
                                 type(None): "null"}


class _ModelWalker:
    def __init__(self) -> None:
        self.defs: dict[str, dict] = {}
        self._names: dict[type, str] = {}
        self.stats = {"models": 0, "fields": 0, "aliases": 0, "deprecated": 0}

    # -- naming -----------------------------------------------------------
    def ref(self, model: type) -> dict:
        return {"$ref": f"#/$defs/{self.walk(model)}"}

    def walk(self, model: type) -> str:
        if model in self._names:
            return self._names[model]
        name = model.__name__
        taken = {n for m, n in self._names.items() if m is not model}
        if name in taken:
            name = f"{model.__module__}.{model.__name__}"
        self._names[model] = name
        self.defs[name] = {}  # placeholder against recursion
        self.defs[name] = self._model_schema(model)
        return name

    # -- types ------------------------------------------------------------
    def type_schema(self, ann: Any) -> dict:
        from pydantic import BaseModel  # noqa: PLC0415

        origin = typing.get_origin(ann)
        args = typing.get_args(ann)
        if ann in _SIMPLE_TYPES:
            return {"type": _SIMPLE_TYPES[ann]}
        if ann is typing.Any or ann is object:
            return {"x-dslint-python-type": "object"}
        if origin is typing.Annotated:
            return self.type_schema(args[0])
        if origin is typing.Literal:
            return self._enum_schema([_jsonable(a) for a in args])
        if origin in (typing.Union, types.UnionType):
            parts = [self.type_schema(a) for a in args]
            if all(set(p) == {"type"} for p in parts):
                flat: list[str] = []
                for p in parts:
                    for t in p["type"] if isinstance(p["type"], list) else [p["type"]]:
                        if t not in flat:
                            flat.append(t)
                return {"type": flat[0] if len(flat) == 1 else flat}
            return {"anyOf": parts}
        if isinstance(ann, type) and issubclass(ann, enum.Enum):
            values: list[Any] = []
            for member in ann:  # aliases are skipped by enum iteration
                v = _jsonable(member.value)
                if v not in values:
                    values.append(v)
            schema = self._enum_schema(values)
            schema["x-dslint-python-type"] = f"{ann.__module__}.{ann.__qualname__}"
            return schema
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            return self.ref(ann)
        if isinstance(ann, type) and issubclass(ann, pathlib.PurePath):
            return {"type": "string", "x-dslint-python-type": "pathlib.Path"}
        container = origin or ann
        if container in (list, tuple, set, frozenset):
            schema: dict[str, Any] = {"type": "array"}
            item_args = [a for a in args if a is not Ellipsis]
            if container is tuple and len(item_args) > 1 and Ellipsis not in args:
                schema["prefixItems"] = [self.type_schema(a) for a in item_args]
            elif item_args:
                schema["items"] = self.type_schema(item_args[0])
            return schema
        if container is dict:
            schema = {"type": "object"}
            if len(args) == 2 and args[1] is not typing.Any:
                schema["additionalProperties"] = self.type_schema(args[1])
            return schema
        name = getattr(ann, "__qualname__", None) or repr(ann)
        module = getattr(ann, "__module__", "")
        return {"x-dslint-python-type": f"{module}.{name}" if module else name}

    @staticmethod
    def _enum_schema(values: list[Any]) -> dict:
        schema: dict[str, Any] = {"enum": values}
        kinds = {_type_of_default(v) for v in values}
        if len(kinds) == 1 and None not in kinds:
            schema["type"] = kinds.pop()
        return schema

    # -- fields -----------------------------------------------------------
    @staticmethod
    def _constraints(field: Any) -> dict:
        out: dict[str, Any] = {}
        for meta in field.metadata:
            for attr, key in (("gt", "exclusiveMinimum"), ("ge", "minimum"), ("lt", "exclusiveMaximum"),
                              ("le", "maximum"), ("multiple_of", "multipleOf")):
                value = getattr(meta, attr, None)
                if value is not None:
                    out[key] = _jsonable(value)
            for attr, key in (("min_length", "minLength"), ("max_length", "maxLength")):
                value = getattr(meta, attr, None)
                if value is not None:
                    out[key] = value
        return out

    @staticmethod
    def _field_lines(model: type) -> dict[str, str]:
        """Field name -> ``file:line`` of its declaration, searching the MRO."""
        found: dict[str, str] = {}
        for klass in reversed(model.__mro__):
            if "__annotations__" not in klass.__dict__:
                continue
            try:
                lines, start = inspect.getsourcelines(klass)
                filename = inspect.getsourcefile(klass)
            except (OSError, TypeError):
                continue
            tree = ast.parse(textwrap.dedent("".join(lines)))
            body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
            for node in body:
                if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                    found[node.target.id] = _rel(filename, start + node.lineno - 1) or ""
        return found

    def _model_schema(self, model: type) -> dict:
        from deepspeed.runtime.config_utils import DeepSpeedConfigModel  # noqa: PLC0415

        self.stats["models"] += 1
        config = getattr(model, "model_config", {}) or {}
        extra = config.get("extra")
        by_name = bool(config.get("populate_by_name") or config.get("validate_by_name"))
        by_alias = config.get("validate_by_alias", True)
        decorators = model.__pydantic_decorators__
        field_validators: dict[str, list[str]] = {}
        for vname, dec in decorators.field_validators.items():
            for fname in dec.info.fields:
                field_validators.setdefault(fname, []).append(vname)
        lines = self._field_lines(model)
        try:
            model_src = _rel(inspect.getsourcefile(model), inspect.getsourcelines(model)[1])
        except (OSError, TypeError):
            model_src = None

        props: dict[str, dict] = {}
        conflicts: list[dict] = []
        required: list[str] = []
        deprecated_pairs: list[tuple[str, str]] = []
        for fname, field in model.model_fields.items():
            self.stats["fields"] += 1
            prop = self.type_schema(field.annotation)
            prop.update(self._constraints(field))
            if field.default_factory is not None:
                _set_default(prop, field.default_factory())
            elif not field.is_required():
                _set_default(prop, field.default)
            else:
                required.append(fname)
            kind = "strict" if extra == "forbid" else "pydantic"
            prop["description"] = f"{model.__name__}.{fname} ({kind} pydantic field)."
            if lines.get(fname):
                prop["x-dslint-source"] = lines[fname]
            if fname in field_validators:
                prop["x-dslint-validators"] = sorted(field_validators[fname])
            if field.exclude:
                prop["x-dslint-internal"] = True
                prop["description"] += " Excluded from serialization: set by DeepSpeed at run time."
            extra_info = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
            if extra_info.get("deprecated") or getattr(field, "deprecated", None):
                self.stats["deprecated"] += 1
                prop["deprecated"] = True
                new_param = extra_info.get("new_param") or None
                set_new = bool(extra_info.get("set_new_param", True))
                prop["x-dslint-replaced-by"] = new_param
                prop["x-dslint-set-new-param"] = set_new if new_param else False
                if new_param and set_new:
                    deprecated_pairs.append((fname, new_param))
            alias = field.validation_alias if isinstance(field.validation_alias, str) else field.alias
            if alias and alias != fname and by_alias:
                self.stats["aliases"] += 1
                alias_prop = copy.deepcopy(prop)
                alias_prop["x-dslint-alias-of"] = fname
                alias_prop["x-dslint-alias-conflict"] = "error"
                alias_prop["description"] = f"Alias of {model.__name__}.{fname}; giving both spellings is an error."
                props[alias] = alias_prop
                if by_name:
                    prop["x-dslint-aliases"] = [alias]
                    props[fname] = prop
                    conflicts.append({"not": {"required": sorted([alias, fname])},
                                      "x-dslint-conflict": "alias"})
            else:
                props[fname] = prop

        # A deprecated field given together with its replacement raises.
        for old, new in deprecated_pairs:
            new_leaf = new.split(".")[-1] if "." in new else new
            spellings = [new_leaf] + list(props.get(new_leaf, {}).get("x-dslint-aliases", []))
            for spelling in spellings:
                if spelling in props:
                    conflicts.append({"not": {"required": sorted([old, spelling])},
                                      "x-dslint-conflict": "deprecated"})

        schema: dict[str, Any] = {
            "type": "object",
            "properties": props,
            "x-dslint-model": f"{model.__module__}.{model.__qualname__}",
        }
        if extra == "forbid":
            schema["additionalProperties"] = False
            schema["x-dslint-strict"] = True
        else:
            schema["additionalProperties"] = True
            schema["x-dslint-lax"] = True
        if issubclass(model, DeepSpeedConfigModel):
            schema["x-dslint-drops-auto"] = True
        if required:
            schema["required"] = required
        if conflicts:
            conflicts.sort(key=lambda c: json.dumps(c, sort_keys=True))
            schema["allOf"] = conflicts
        if decorators.model_validators:
            schema["x-dslint-validators"] = sorted(decorators.model_validators)
        if model_src:
            schema["x-dslint-source"] = model_src
        schema["description"] = (f"{model.__name__}: pydantic model; "
                                 + ("unknown keys raise a ValidationError." if extra == "forbid"
                                    else "unknown keys are accepted."))
        return schema


# --------------------------------------------------------------------------
# dict.get probe
# --------------------------------------------------------------------------


class _Read:
    __slots__ = ("kinds", "defaults", "source")

    def __init__(self) -> None:
        self.kinds: set[str] = set()
        self.defaults: list[Any] = []
        self.source: str | None = None


class _Recorder:
    def __init__(self) -> None:
        self.reads: dict[tuple[str, ...], _Read] = {}
        self._this_file = __file__

    def _caller(self) -> str | None:
        frame = sys._getframe(2)
        while frame is not None:
            code = frame.f_code
            if code.co_filename != self._this_file and code.co_name not in _GET_HELPERS:
                return _rel(code.co_filename, frame.f_lineno)
            frame = frame.f_back
        return None

    def note(self, path: tuple[str, ...], kind: str, default: Any = _Unrepresentable) -> None:
        read = self.reads.get(path)
        if read is None:
            read = self.reads[path] = _Read()
        read.kinds.add(kind)
        if read.source is None:
            src = self._caller()
            if src and not src.startswith(("pydantic", "typing")):
                read.source = src
        if default is not _Unrepresentable:
            try:
                value = _jsonable(default)
            except _Unrepresentable:
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
    from deepspeed.runtime.config import DeepSpeedConfig  # noqa: PLC0415

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


def _under(path: tuple[str, ...], prefixes: Iterable[tuple[str, ...]]) -> bool:
    return any(path[:len(p)] == p for p in prefixes)


def probe_reads(strict_paths: set[tuple[str, ...]], removed_paths: set[tuple[str, ...]]
                ) -> tuple[dict[tuple[str, ...], _Read], set[tuple[str, ...]]]:
    """Discover every key DeepSpeedConfig reads.  Returns (reads, section paths)."""
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        present: dict[tuple[str, ...], Any] = {}
        rec, exc = _run_probe(present)
        if exc is not None:
            raise RuntimeError(f"DeepSpeedConfig rejected the probe config: {exc!r}")
        reads = dict(rec.reads)
        sections: set[tuple[str, ...]] = set()
        tried: set[tuple[str, ...]] = set()
        while True:
            candidates = sorted(
                p for p, r in reads.items()
                if p not in tried and p not in present and len(p) <= _PROBE_MAX_DEPTH
                and tuple(_PROBE_BASE) != p and not _under(p, strict_paths) and p not in removed_paths
                and (r.kinds & {"in", "getitem", "pop"} or (None in r.defaults and not any(
                    isinstance(d, dict) for d in r.defaults))))
            if not candidates:
                break
            for path in candidates:
                tried.add(path)
                for trial in _PROBE_TRIALS:
                    trial_rec, exc = _run_probe({**present, path: trial})
                    if exc is not None:
                        continue
                    children = [q for q in trial_rec.reads if len(q) > len(path) and q[:len(path)] == path]
                    new = [q for q in trial_rec.reads if q not in reads]
                    if (trial == "<dict>" and children) or new:
                        present[path] = trial
                        if trial == "<dict>" and children:
                            sections.add(path)
                        for q, r in trial_rec.reads.items():
                            if q not in reads:
                                reads[q] = r
                            else:
                                reads[q].kinds |= r.kinds
                                for d in r.defaults:
                                    if d not in reads[q].defaults:
                                        reads[q].defaults.append(d)
                    break
        for path, read in reads.items():
            if "iter" in read.kinds or any(isinstance(d, dict) for d in read.defaults):
                sections.add(path)
            if len(path) > 1:
                sections.add(path[:-1])
        return reads, sections
    finally:
        logging.disable(previous)


# --------------------------------------------------------------------------
# Values that DeepSpeed's code validates for unchecked keys
# --------------------------------------------------------------------------


def _dtype_strings() -> list[str]:
    dtype_enum = _import("deepspeed.runtime.config", "DtypeEnum")
    out: list[str] = []
    for member in dtype_enum or []:
        for value in getattr(member, "_all_values", ()):
            if isinstance(value, str) and value not in out:
                out.append(value)
    return out


def _accepted(fn: Callable[[Any], Any], candidates: list[str]) -> list[str]:
    ok: list[str] = []
    for value in candidates:
        try:
            fn(value)
        except Exception:  # noqa: BLE001
            continue
        if value not in ok:
            ok.append(value)
    return ok


def _comm_dtype_values(key: str) -> dict:
    fn = _import("deepspeed.runtime.config", "get_communication_data_type")
    if fn is None:
        return {}
    lower = _accepted(lambda v: fn({key: v}, key, None), [s.lower() for s in _dtype_strings()])
    upper_ok = bool(lower) and bool(_accepted(lambda v: fn({key: v}, key, None), [lower[0].upper()]))
    return {"x-dslint-values": lower, "x-dslint-case-insensitive": upper_ok,
            "x-dslint-values-source": _find_line("deepspeed.runtime.config", "def get_communication_data_type")}


def _const_values(modname: str, attr: str, case_insensitive: bool, needle: str | None = None) -> dict:
    values = _import(modname, attr)
    if not values:
        return {}
    out = {"x-dslint-values": [_jsonable(v) for v in values], "x-dslint-case-insensitive": case_insensitive}
    src = _find_line(modname, needle or attr)
    if src:
        out["x-dslint-values-source"] = src
    return out


def _dtype_values(note: str) -> dict:
    values = _dtype_strings()
    if not values:
        return {}
    return {"x-dslint-values": values, "x-dslint-case-insensitive": False, "x-dslint-checked-at": note,
            "x-dslint-values-source": _find_line("deepspeed.runtime.config", "class DtypeEnum")}


VALIDATED_KEYS: dict[str, Callable[[], dict]] = {
    "communication_data_type": lambda: _comm_dtype_values("communication_data_type"),
    "seq_parallel_communication_data_type": lambda: _comm_dtype_values("seq_parallel_communication_data_type"),
    "gradient_allreduce_op": lambda: _const_values(
        "deepspeed.runtime.constants", "GRADIENT_ALLREDUCE_OP_SUPPORTED", True),
    "checkpoint.tag_validation": lambda: _const_values(
        "deepspeed.runtime.constants", "CHECKPOINT_TAG_VALIDATION_MODES", True),
    "checkpoint.writer.type": lambda: _const_values(
        "deepspeed.runtime.model_checkpointing.constants", "CHECKPOINT_WRITER_TYPES", True),
    "checkpoint.writer.data_parallel": lambda: _const_values(
        "deepspeed.runtime.model_checkpointing.constants", "CHECKPOINT_DATA_PARALLEL_UNITS", True),
    "checkpoint.parallel_write.pipeline_stage": lambda: {
        "x-dslint-values": [True, False], "x-dslint-case-insensitive": False,
        "x-dslint-values-source": _find_line("deepspeed.runtime.config", "if par_write_pipeline in [True, False]")},
    "torch_autocast.dtype": lambda: _dtype_values("parse"),
    "data_types.grad_accum_dtype": lambda: _dtype_values("initialize"),
    "data_types.param_dtype": lambda: _dtype_values("initialize"),
    "data_types.buffer_dtype": lambda: _dtype_values("initialize"),
    "data_types.keep_in_fp32_modules": lambda: {
        "anyOf": [{"const": "auto"}, {"type": "array", "items": {"type": "string"}}],
        "x-dslint-values-source": _find_line("deepspeed.runtime.config", "KEEP_IN_FP32_MODULES_DEFAULT and not")},
}


# --------------------------------------------------------------------------
# Assembly
# --------------------------------------------------------------------------


def _removed_messages() -> dict[tuple[str, ...], tuple[str, str | None]]:
    out: dict[tuple[str, ...], tuple[str, str | None]] = {}
    for section, modname, attr in REMOVED_TABLES:
        table = _import(modname, attr, {}) or {}
        prefix = tuple(section.split(".")) if section else ()
        for key, message in table.items():
            out[prefix + (key,)] = (str(message), _find_line(modname, f'"{key}"'))
    return out


def _replacement_from_message(message: str) -> list[str]:
    match = re.search(r"\bUse (.*?) instead", message)
    return re.findall(r"'([A-Za-z0-9_.]+)'", match.group(1)) if match else []


def _removed_schema(path: tuple[str, ...], message: str, source: str | None) -> dict:
    schema: dict[str, Any] = {
        "not": {},
        "deprecated": True,
        "x-dslint-removed": True,
        "x-dslint-removed-message": message,
        "description": f"Removed: any value of {'.'.join(path)} raises DeepSpeedConfigError at parse time.",
    }
    replacements = _replacement_from_message(message)
    if replacements:
        schema["x-dslint-replaced-by"] = replacements[0] if len(replacements) == 1 else replacements
    if source:
        schema["x-dslint-source"] = source
    return schema


def _unchecked_schema(path: tuple[str, ...], read: _Read | None) -> dict:
    schema: dict[str, Any] = {
        "x-dslint-unchecked": True,
        "description": f"{'.'.join(path)}: read with dict.get; DeepSpeed does not type-check it.",
    }
    defaults = [d for d in (read.defaults if read else []) if not isinstance(d, dict)]
    chosen = next((d for d in defaults if d is not None), None)
    if defaults:
        schema["default"] = chosen
        if len(defaults) > 1:
            schema["x-dslint-defaults"] = defaults
        kind = None if chosen == "auto" else _type_of_default(chosen)  # "auto" is a sentinel
        if kind:
            schema["type"] = "number" if kind == "integer" and isinstance(chosen, float) else kind
    if read is not None and read.source:
        schema["x-dslint-source"] = read.source
    if read is not None and not defaults:
        schema["x-dslint-presence-checked"] = True
    validated = VALIDATED_KEYS.get(".".join(path))
    if validated is not None:
        extra = {k: v for k, v in validated().items() if v is not None}
        if "anyOf" in extra:
            schema.pop("type", None)
        schema.update(extra)
    return schema


def _lax_object(path: tuple[str, ...], read: _Read | None) -> dict:
    schema: dict[str, Any] = {
        "type": "object",
        "additionalProperties": True,
        "x-dslint-lax": True,
        "properties": {},
        "description": f"{'.'.join(path)}: lax section read with dict.get; unknown keys are ignored silently.",
    }
    if read is not None and read.source:
        schema["x-dslint-source"] = read.source
    if read is not None and "iter" in read.kinds:
        schema["x-dslint-passthrough"] = True
        schema["description"] += " Every key is passed on as given."
    return schema


def _insert(root_props: dict, path: tuple[str, ...], leaf: dict, lax_defs: dict) -> None:
    """Place ``leaf`` at ``path`` inside lax objects, creating them as needed."""
    props = root_props
    for depth in range(len(path) - 1):
        key = path[depth]
        node = props.get(key)
        if node is None:
            raise KeyError(path[:depth + 1])
        if "$ref" in node and node["$ref"].startswith("#/$defs/lax."):
            node = lax_defs[node["$ref"][len("#/$defs/"):]]
        props = node.setdefault("properties", {})
    props.setdefault(path[-1], leaf)


def build_schema() -> dict:
    """Import deepspeed and build the schema dict (deterministic)."""
    import deepspeed  # noqa: PLC0415

    walker = _ModelWalker()
    properties: dict[str, dict] = {}
    lax_defs: dict[str, dict] = {}
    sections_index: dict[str, dict] = {}

    # -- strict sections -------------------------------------------------
    strict: dict[tuple[str, ...], type] = {}
    for dotted, (modname, cls) in STRICT_SECTIONS.items():
        model = _import(modname, cls)
        if model is not None:
            strict[tuple(dotted.split("."))] = model
    for modname, cls in STRICT_CONTAINERS:
        container = _import(modname, cls)
        for fname, field in (container.model_fields.items() if container is not None else []):
            ann = field.annotation
            if isinstance(ann, type) and hasattr(ann, "model_fields"):
                strict[(field.alias or fname,)] = ann
    aliases: dict[str, tuple[str, str]] = {}
    for alias, (canonical, (modname, attr), conflict) in TOP_LEVEL_ALIASES.items():
        name = _import(modname, attr, alias)
        if (canonical,) in strict:
            aliases[name] = (canonical, conflict)
    strict_paths = set(strict) | {(a,) for a in aliases}

    removed = _removed_messages()
    reads, section_paths = probe_reads(strict_paths, set(removed))

    for path in strict_paths:
        if path not in reads:
            raise RuntimeError(f"deepspeed {deepspeed.__version__} never reads '{'.'.join(path)}'; "
                               "update STRICT_SECTIONS in dslint/schemagen/deepspeed.py")

    def strict_prop(path: tuple[str, ...], model: type) -> dict:
        prop = walker.ref(model)
        prop["x-dslint-strict"] = True
        prop["description"] = f"{'.'.join(path)}: strict section ({model.__name__})."
        read = reads.get(path)
        if read is not None and read.source:
            prop["x-dslint-source"] = read.source
        sections_index[".".join(path)] = {"kind": "strict", "def": walker.walk(model)}
        return prop

    # -- top level and lax sections from the probe ------------------------
    all_paths = sorted(set(reads) | section_paths, key=lambda p: (len(p), p))
    for path in all_paths:
        if not path or (_under(path, strict_paths) and path not in strict_paths):
            continue
        if path in removed:
            continue
        read = reads.get(path)
        if path in strict:
            leaf = strict_prop(path, strict[path])
            if path == ("zero_optimization",):  # legacy boolean format, see EXTRA_READS
                leaf = {"anyOf": [leaf, {"type": "boolean", "deprecated": True,
                                         "description": "Legacy format: true means stage 1, false stage 0."}],
                        "x-dslint-strict": True, "description": leaf["description"]}
        elif len(path) == 1 and path[0] in aliases:
            canonical, conflict = aliases[path[0]]
            leaf = strict_prop(path, strict[(canonical,)])
            leaf["x-dslint-alias-of"] = canonical
            leaf["x-dslint-alias-conflict"] = conflict
            leaf["description"] = (f"{path[0]}: old spelling of {canonical}; read only when "
                                   f"{canonical} is absent.")
            sections_index[path[0]]["alias-of"] = canonical
        elif path in section_paths or any(p[:len(path)] == path for p in strict_paths if len(p) > len(path)):
            obj = _lax_object(path, read)
            if len(path) == 1:
                name = f"lax.{path[0]}"
                lax_defs[name] = obj
                leaf = {"$ref": f"#/$defs/{name}", "x-dslint-lax": True,
                        "description": obj["description"]}
                if read is not None and read.source:
                    leaf["x-dslint-source"] = read.source
                sections_index[path[0]] = {"kind": "lax", "def": name}
            else:
                leaf = obj
        else:
            leaf = _unchecked_schema(path, read)
        if len(path) == 1:
            properties.setdefault(path[0], leaf)
        else:
            _insert(properties, path, leaf, lax_defs)

    # Strict sections nested in lax ones (timers.throughput) were placed above.
    # -- opaque sections, default-dict providers, extra reads -------------
    for dotted, note in OPAQUE_SECTIONS.items():
        path = tuple(dotted.split("."))
        if path not in reads:
            continue
        obj = _lax_object(path, reads[path])
        obj["x-dslint-passthrough"] = True
        obj["description"] += " " + note
        if len(path) == 1:
            name = f"lax.{path[0]}"
            lax_defs[name] = obj
            properties[path[0]] = {"$ref": f"#/$defs/{name}", "x-dslint-lax": True,
                                   "description": obj["description"]}
            if obj.get("x-dslint-source"):
                properties[path[0]]["x-dslint-source"] = obj["x-dslint-source"]
            sections_index[path[0]] = {"kind": "lax", "def": name}
        else:
            parent = properties
            for key in path[:-1]:
                node = parent[key]
                if "$ref" in node:
                    node = lax_defs[node["$ref"][len("#/$defs/"):]]
                parent = node.setdefault("properties", {})
            old = parent.get(path[-1], {})
            obj["properties"] = old.get("properties", {})
            parent[path[-1]] = obj

    for dotted, (modname, fname) in DEFAULT_DICT_PROVIDERS.items():
        fn = _import(modname, fname)
        if fn is None:
            continue
        defaults = fn({})
        src = _find_line(modname, f"def {fname}")
        for key, value in defaults.items():
            read = _Read()
            read.defaults.append(_jsonable(value))
            read.source = src
            _insert(properties, tuple(dotted.split(".")) + (key,), _unchecked_schema(
                tuple(dotted.split(".")) + (key,), read), lax_defs)

    for dotted, (default, modname, needle, note) in EXTRA_READS.items():
        path = tuple(dotted.split("."))
        read = _Read()
        read.defaults.append(_jsonable(default))
        read.source = _find_line(modname, needle)
        leaf = _unchecked_schema(path, read)
        leaf["description"] += " " + note
        try:
            _insert(properties, path, leaf, lax_defs)
        except KeyError:
            continue

    # -- removed keys -----------------------------------------------------
    removed_count = 0
    for path, (message, source) in sorted(removed.items()):
        leaf = _removed_schema(path, message, source)
        if len(path) == 1:
            properties[path[0]] = leaf
        elif path[:-1] in strict:
            walker.defs[walker.walk(strict[path[:-1]])]["properties"][path[-1]] = leaf
        else:
            _insert(properties, path, leaf, lax_defs)
        removed_count += 1

    defs = dict(walker.defs)
    defs.update(lax_defs)
    unchecked = sum(1 for v in properties.values() if v.get("x-dslint-unchecked"))
    schema = {
        "$schema": DRAFT,
        "$id": SCHEMA_ID,
        "title": "DeepSpeed configuration",
        "description": (
            "Generated by dslint.schemagen.deepspeed from an installed deepspeed; do not edit by hand. "
            "Unknown top-level keys are ignored by DeepSpeed (x-dslint-lax). In sections marked "
            "x-dslint-drops-auto a value of exactly \"auto\" is dropped before validation."),
        "type": "object",
        "additionalProperties": True,
        "x-dslint-lax": True,
        "x-dslint-deepspeed-version": deepspeed.__version__,
        "x-dslint-generator": "dslint.schemagen.deepspeed",
        "properties": properties,
        "$defs": defs,
        "x-dslint-sections": sections_index,
        "x-dslint-stats": {
            "strict_sections": sum(1 for v in sections_index.values() if v["kind"] == "strict"),
            "strict_models": walker.stats["models"],
            "strict_fields": walker.stats["fields"],
            "aliases": walker.stats["aliases"] + len(aliases),
            "deprecated_fields": walker.stats["deprecated"],
            "removed_keys": removed_count,
            "lax_sections": sum(1 for v in sections_index.values() if v["kind"] == "lax"),
            "unchecked_top_level_keys": unchecked,
        },
    }
    return schema


def render(schema: dict) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _diff_summary(old: str, new: str, limit: int = 40) -> str:
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), "committed", "regenerated",
                                      n=0, lineterm=""))
    changed = sum(1 for ln in lines if ln[:1] in "+-" and not ln.startswith(("+++", "---")))
    head = lines[:limit]
    more = f"\n... ({len(lines) - limit} more diff lines)" if len(lines) > limit else ""
    return f"{changed} changed lines\n" + "\n".join(head) + more


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dslint.schemagen.deepspeed", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="regenerate in memory and exit 1 if the committed schema differs")
    parser.add_argument("--output", "-o", default=str(SCHEMA_FILE),
                        help="where to write the schema ('-' for stdout); default: %(default)s")
    args = parser.parse_args(argv)

    try:
        text = render(build_schema())
    except ImportError as exc:
        print(f"error: deepspeed is required to generate the schema: {exc}", file=sys.stderr)
        return 2
    target = Path(args.output)
    if args.check:
        old = target.read_text(encoding="utf-8") if target.exists() else ""
        if old == text:
            print(f"{target}: up to date")
            return 0
        print(f"{target}: out of date; run python -m dslint.schemagen.deepspeed\n{_diff_summary(old, text)}")
        return 1
    if args.output == "-":
        sys.stdout.write(text)
        return 0
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
