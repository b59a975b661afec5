"""What the DeepSpeed value rules (DS210-DS219) share: the types and choices a field accepts, how a value is written, the bound it breaks."""

from __future__ import annotations

from dslint.documents.model import Node, Scalar
from dslint.rules import _deepspeed as ds
from dslint.rules import _deepspeed_schema as dss


BATCH_KEYS = ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")


def accepted_types(spec: dict) -> tuple[set, list | None]:
    """(JSON types the field accepts, enum values or None)."""
    spec = spec or {}
    if "$ref" in spec:
        target = dss.resolve(spec)
        if target.get("type") == "object" or "properties" in target:
            return {"object"}, None
        return accepted_types(target)
    if "anyOf" in spec:
        kinds, enum = set(), None
        for branch in spec["anyOf"]:
            k, e = accepted_types(branch)
            kinds |= k
            enum = e if e is not None else enum
        return kinds, enum
    kinds = spec.get("type")
    if kinds is None:
        return set(), spec.get("enum")
    return (set(kinds) if isinstance(kinds, list) else {kinds}), spec.get("enum")


def placeholder_help(value) -> str | None:
    if isinstance(value, str) and ds.is_placeholder_text(value):
        return ds.PLACEHOLDER_HELP
    return None


def how_written(node: Node) -> str:
    if isinstance(node, Scalar) and isinstance(node.value, str):
        return f"quoteless hjson text {node.value!r}" if node.style == "quoteless" else f"the string {node.value!r}"
    return ds.show(node)


def violated_bound(spec: dict, number) -> str | None:
    if "exclusiveMinimum" in spec and not number > spec["exclusiveMinimum"]:
        return f"greater than {ds.pretty_number(spec['exclusiveMinimum'])}"
    if "minimum" in spec and not number >= spec["minimum"]:
        return f"greater than or equal to {ds.pretty_number(spec['minimum'])}"
    if "exclusiveMaximum" in spec and not number < spec["exclusiveMaximum"]:
        return f"less than {ds.pretty_number(spec['exclusiveMaximum'])}"
    if "maximum" in spec and not number <= spec["maximum"]:
        return f"less than or equal to {ds.pretty_number(spec['maximum'])}"
    return None
