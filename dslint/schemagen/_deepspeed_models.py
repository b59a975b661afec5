"""The pydantic model walk of the DeepSpeed schema generator: a strict section's model (its fields'
types, defaults, bounds, aliases, deprecations, validators) as JSON Schema ``$defs``.
"""

from __future__ import annotations

import ast
import copy
import enum
import inspect
import json
import pathlib
import textwrap
import types
import typing
from typing import Any

from dslint.schemagen._deepspeed_common import jsonable, relative, set_default, type_of_default


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
            return self._enum_schema([jsonable(a) for a in args])
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
                v = jsonable(member.value)
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
        kinds = {type_of_default(v) for v in values}
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
                    out[key] = jsonable(value)
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
                    found[node.target.id] = relative(filename, start + node.lineno - 1) or ""
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
            model_src = relative(inspect.getsourcefile(model), inspect.getsourcelines(model)[1])
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
                set_default(prop, field.default_factory())
            elif not field.is_required():
                set_default(prop, field.default)
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

