"""The pydantic model walk of the DeepSpeed schema generator: a strict section's model (its fields'
types, defaults, bounds, aliases, deprecations, validators) as JSON Schema ``$defs``.
"""

from __future__ import annotations

import copy
import enum
import inspect
import json
import pathlib
import types
import typing
from dataclasses import dataclass, field
from typing import Any

from dslint.schemagen._declarations import field_declarations
from dslint.schemagen._deepspeed_common import relative, type_of_default
from dslint.schemagen._json import jsonable, set_default


_SIMPLE_TYPES: dict[Any, str] = {bool: "boolean", int: "integer", float: "number", str: "string",
                                 type(None): "null"}


class ModelWalker:
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
        origin = typing.get_origin(ann)
        args = typing.get_args(ann)
        if ann in _SIMPLE_TYPES:
            return {"type": _SIMPLE_TYPES[ann]}
        if ann is typing.Any or ann is object:
            return {"x-dslint-python-type": "object"}
        if origin is typing.Annotated:
            return self.type_schema(args[0])
        if origin is typing.Literal:
            return _enum_schema([jsonable(a) for a in args])
        if origin in (typing.Union, types.UnionType):
            return self._union_schema(args)
        if isinstance(ann, type):
            schema = self._class_schema(ann)
            if schema is not None:
                return schema
        container = origin or ann
        if container in (list, tuple, set, frozenset):
            return self._array_schema(container, args)
        if container is dict:
            return self._dict_schema(args)
        return _python_type_schema(ann)

    def _union_schema(self, args: tuple) -> dict:
        parts = [self.type_schema(a) for a in args]
        if not all(set(p) == {"type"} for p in parts):
            return {"anyOf": parts}
        flat: list[str] = []  # a union of plain types is one "type" list, in order, once each
        for p in parts:
            for t in p["type"] if isinstance(p["type"], list) else [p["type"]]:
                if t not in flat:
                    flat.append(t)
        return {"type": flat[0] if len(flat) == 1 else flat}

    def _class_schema(self, ann: type) -> dict | None:
        """An enum, a nested model or a path; None for any other class."""
        from pydantic import BaseModel

        if issubclass(ann, enum.Enum):
            return _enum_class_schema(ann)
        if issubclass(ann, BaseModel):
            return self.ref(ann)
        if issubclass(ann, pathlib.PurePath):
            return {"type": "string", "x-dslint-python-type": "pathlib.Path"}
        return None

    def _array_schema(self, container: Any, args: tuple) -> dict:
        schema: dict[str, Any] = {"type": "array"}
        item_args = [a for a in args if a is not Ellipsis]
        if container is tuple and len(item_args) > 1 and Ellipsis not in args:
            schema["prefixItems"] = [self.type_schema(a) for a in item_args]
        elif item_args:
            schema["items"] = self.type_schema(item_args[0])
        return schema

    def _dict_schema(self, args: tuple) -> dict:
        schema: dict[str, Any] = {"type": "object"}
        if len(args) == 2 and args[1] is not typing.Any:
            schema["additionalProperties"] = self.type_schema(args[1])
        return schema

    # -- models and fields ------------------------------------------------
    def _model_schema(self, model: type) -> dict:
        self.stats["models"] += 1
        facts = _ModelFacts.of(model)
        parts = _ModelParts()
        for fname, model_field in model.model_fields.items():
            self._add_field(facts, parts, fname, model_field)
        parts.conflicts.extend(_deprecated_conflicts(parts))
        return _object_schema(facts, parts)

    def _add_field(self, facts: _ModelFacts, parts: _ModelParts, fname: str, model_field: Any) -> None:
        self.stats["fields"] += 1
        prop = self.type_schema(model_field.annotation)
        prop.update(_constraints(model_field))
        if model_field.default_factory is not None:
            set_default(prop, model_field.default_factory())
        elif not model_field.is_required():
            set_default(prop, model_field.default)
        else:
            parts.required.append(fname)
        _describe_field(prop, facts, fname, model_field)
        if self._mark_deprecated(prop, model_field):
            parts.deprecated_pairs.append((fname, prop["x-dslint-replaced-by"]))
        alias = model_field.validation_alias if isinstance(model_field.validation_alias, str) else model_field.alias
        if alias and alias != fname and facts.by_alias:
            self.stats["aliases"] += 1
            _add_aliased(facts, parts, fname, alias, prop)
        else:
            parts.props[fname] = prop

    def _mark_deprecated(self, prop: dict, model_field: Any) -> bool:
        """Mark a deprecated field; True when its value is copied to a replacement (both given raises)."""
        extra_info = model_field.json_schema_extra if isinstance(model_field.json_schema_extra, dict) else {}
        if not (extra_info.get("deprecated") or getattr(model_field, "deprecated", None)):
            return False
        self.stats["deprecated"] += 1
        prop["deprecated"] = True
        new_param = extra_info.get("new_param") or None
        set_new = bool(extra_info.get("set_new_param", True))
        prop["x-dslint-replaced-by"] = new_param
        prop["x-dslint-set-new-param"] = set_new if new_param else False
        return bool(new_param and set_new)


@dataclass
class _ModelFacts:
    """What a model's config and class say about all its fields."""

    model: type
    extra: Any  # model_config["extra"]: "forbid" makes the model strict
    by_name: bool  # a field with an alias may also be given by its name
    by_alias: bool
    validators: dict[str, list[str]]  # field name -> its field validators
    lines: dict[str, str]  # field name -> file:line
    source: str | None  # file:line of the class

    @classmethod
    def of(cls, model: type) -> _ModelFacts:
        config = getattr(model, "model_config", {}) or {}
        validators: dict[str, list[str]] = {}
        for vname, dec in model.__pydantic_decorators__.field_validators.items():
            for fname in dec.info.fields:
                validators.setdefault(fname, []).append(vname)
        lines = _field_lines(model)
        try:
            source = relative(inspect.getsourcefile(model), inspect.getsourcelines(model)[1])
        except (OSError, TypeError):
            source = None
        return cls(model, config.get("extra"), bool(config.get("populate_by_name") or config.get("validate_by_name")),
                   config.get("validate_by_alias", True), validators, lines, source)


@dataclass
class _ModelParts:
    """A model's schema as its fields are added."""

    props: dict[str, dict] = field(default_factory=dict)
    conflicts: list[dict] = field(default_factory=list)
    required: list[str] = field(default_factory=list)
    deprecated_pairs: list[tuple[str, str]] = field(default_factory=list)  # (old, replacement)


def _describe_field(prop: dict, facts: _ModelFacts, fname: str, model_field: Any) -> None:
    kind = "strict" if facts.extra == "forbid" else "pydantic"
    prop["description"] = f"{facts.model.__name__}.{fname} ({kind} pydantic field)."
    if facts.lines.get(fname):
        prop["x-dslint-source"] = facts.lines[fname]
    if fname in facts.validators:
        prop["x-dslint-validators"] = sorted(facts.validators[fname])
    if model_field.exclude:
        prop["x-dslint-internal"] = True
        prop["description"] += " Excluded from serialization: set by DeepSpeed at run time."


def _add_aliased(facts: _ModelFacts, parts: _ModelParts, fname: str, alias: str, prop: dict) -> None:
    """A field with an alias: the alias always, the name too when the model accepts it (not both)."""
    alias_prop = copy.deepcopy(prop)
    alias_prop["x-dslint-alias-of"] = fname
    alias_prop["x-dslint-alias-conflict"] = "error"
    alias_prop["description"] = f"Alias of {facts.model.__name__}.{fname}; giving both spellings is an error."
    parts.props[alias] = alias_prop
    if facts.by_name:
        prop["x-dslint-aliases"] = [alias]
        parts.props[fname] = prop
        parts.conflicts.append({"not": {"required": sorted([alias, fname])}, "x-dslint-conflict": "alias"})


def _deprecated_conflicts(parts: _ModelParts) -> list[dict]:
    """A deprecated field given together with its replacement (any spelling of it) raises."""
    out = []
    for old, new in parts.deprecated_pairs:
        new_leaf = new.split(".")[-1] if "." in new else new
        spellings = [new_leaf] + list(parts.props.get(new_leaf, {}).get("x-dslint-aliases", []))
        for spelling in spellings:
            if spelling in parts.props:
                out.append({"not": {"required": sorted([old, spelling])}, "x-dslint-conflict": "deprecated"})
    return out


def _object_schema(facts: _ModelFacts, parts: _ModelParts) -> dict:
    from deepspeed.runtime.config_utils import DeepSpeedConfigModel

    model = facts.model
    strict = facts.extra == "forbid"
    schema: dict[str, Any] = {
        "type": "object",
        "properties": parts.props,
        "x-dslint-model": f"{model.__module__}.{model.__qualname__}",
        "additionalProperties": not strict,
    }
    schema["x-dslint-strict" if strict else "x-dslint-lax"] = True
    if issubclass(model, DeepSpeedConfigModel):
        schema["x-dslint-drops-auto"] = True
    if parts.required:
        schema["required"] = parts.required
    if parts.conflicts:
        schema["allOf"] = sorted(parts.conflicts, key=lambda c: json.dumps(c, sort_keys=True))
    model_validators = model.__pydantic_decorators__.model_validators
    if model_validators:
        schema["x-dslint-validators"] = sorted(model_validators)
    if facts.source:
        schema["x-dslint-source"] = facts.source
    schema["description"] = (f"{model.__name__}: pydantic model; "
                             + ("unknown keys raise a ValidationError." if strict else "unknown keys are accepted."))
    return schema


# -- small pieces ---------------------------------------------------------


def _enum_schema(values: list[Any]) -> dict:
    schema: dict[str, Any] = {"enum": values}
    kinds = {type_of_default(v) for v in values}
    if len(kinds) == 1 and None not in kinds:
        schema["type"] = kinds.pop()
    return schema


def _enum_class_schema(ann: type[enum.Enum]) -> dict:
    values: list[Any] = []
    for member in ann:  # aliases are skipped by enum iteration
        v = jsonable(member.value)
        if v not in values:
            values.append(v)
    schema = _enum_schema(values)
    schema["x-dslint-python-type"] = f"{ann.__module__}.{ann.__qualname__}"
    return schema


def _python_type_schema(ann: Any) -> dict:
    """A type JSON has no word for: its Python name only."""
    name = getattr(ann, "__qualname__", None) or repr(ann)
    module = getattr(ann, "__module__", "")
    return {"x-dslint-python-type": f"{module}.{name}" if module else name}


def _constraints(model_field: Any) -> dict:
    out: dict[str, Any] = {}
    for meta in model_field.metadata:
        for attr, key in (("gt", "exclusiveMinimum"), ("ge", "minimum"), ("lt", "exclusiveMaximum"),
                          ("le", "maximum"), ("multiple_of", "multipleOf")):
            value = getattr(meta, attr, None)
            if value is not None:
                out[key] = jsonable(value)
        for attr, key in (("min_length", "minLength"), ("max_length", "maxLength")):
            value = getattr(meta, attr, None)
            if value is not None:
                out[key] = value
    return out


def _field_lines(model: type) -> dict[str, str]:
    """Field name -> ``file:line`` of its declaration, searching the MRO."""
    return {name: relative(filename, line) or "" for _, filename, name, line in field_declarations(model)}
