"""Small readers the training-argument rules share: booleans as the consumers read them, a
schema property's JSON types, a value as a message shows it, the DeepSpeed ZeRO stage, an
argument as a related line.
"""

from __future__ import annotations

from typing import Any

from dslint.diagnostics import Related
from dslint.documents.model import Mapping, Scalar
from dslint.values import bool_word


def truthy(value) -> bool | None:
    """transformers' string_to_bool words (no on/off), with empty text and "none" as false."""
    if value is True or value is False or value is None:
        return value
    return bool_word(value, ("yes", "true", "t", "y", "1"), ("no", "false", "f", "n", "0", "", "none"))


def json_types(prop: dict) -> set[str]:
    kinds: set[str] = set()
    if "type" in prop:
        kinds.update(prop["type"] if isinstance(prop["type"], list) else [prop["type"]])
    for branch in prop.get("anyOf", []):
        kinds.update(json_types(branch))
    if "enum" in prop:
        for value in prop["enum"]:
            kinds.add({bool: "boolean", int: "integer", float: "number", str: "string", type(None): "null"}.get(type(value), "string"))
    return kinds


def shown_value(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def zero_stage(plan) -> tuple[int | None, Any]:
    ref = plan.deepspeed
    if ref is None or ref.config is None:
        return None, None
    zero = ref.config.get("zero_optimization")
    if not isinstance(zero, Mapping):
        return None, None
    stage = zero.get("stage")
    if isinstance(stage, Scalar) and isinstance(stage.value, int) and not isinstance(stage.value, bool):
        return stage.value, stage
    return None, None


def arg_related(arg) -> Related:
    return Related(f"{arg.name} = {arg.value!r} ({arg.origin})", arg.span)
