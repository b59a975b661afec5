"""Generators for the JSON Schemas that dslint ships in ``schemas/``.

The generators import third-party packages (e.g. deepspeed) and are run by
developers only; the linter itself reads the committed schema files and must
never import those packages.  :func:`load_schema` is the read-only entry point
for the linter side.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: ``schemas/`` at the repository root (beside the ``dslint`` package).
SCHEMA_DIR = Path(__file__).resolve().parents[2] / "schemas"


def schema_path(name: str) -> Path:
    """Path of a shipped schema, e.g. ``schema_path("deepspeed")``."""
    return SCHEMA_DIR / f"{name}.schema.json"


def load_schema(name: str) -> dict[str, Any]:
    """Load a shipped schema (``deepspeed`` -> ``schemas/deepspeed.schema.json``)."""
    with schema_path(name).open(encoding="utf-8") as fh:
        return json.load(fh)


def load_json(filename: str) -> Any:
    """Load any other JSON file shipped in ``schemas/`` (e.g. ``deepspeed-versions.json``)."""
    with (SCHEMA_DIR / filename).open(encoding="utf-8") as fh:
        return json.load(fh)


def resolve_ref(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """Follow local ``#/$defs/...`` references until ``node`` is a concrete schema."""
    seen = 0
    while isinstance(node, dict) and "$ref" in node and seen < 32:
        ref = node["$ref"]
        if not ref.startswith("#/$defs/"):
            break
        node = schema["$defs"][ref[len("#/$defs/"):]]
        seen += 1
    return node


def object_schema(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """The object branch of ``node`` (resolving ``$ref`` and picking from ``anyOf``)."""
    node = resolve_ref(schema, node)
    for branch in node.get("anyOf", []):
        branch = resolve_ref(schema, branch)
        if branch.get("type") == "object" or "properties" in branch:
            return branch
    return node


def drop_auto(instance: Any, schema: dict[str, Any], node: dict[str, Any] | None = None) -> Any:
    """Copy of a DeepSpeed config with ``"auto"`` removed where DeepSpeed itself drops it.

    DeepSpeed's pydantic sections (``x-dslint-drops-auto``) discard any value
    that is exactly ``"auto"`` before validation, so the default applies.
    Elsewhere ``"auto"`` is kept (and usually breaks DeepSpeed later).
    """
    node = object_schema(schema, schema if node is None else node)
    if not isinstance(instance, dict):
        return instance
    props = node.get("properties", {})
    out: dict[str, Any] = {}
    for key, value in instance.items():
        if node.get("x-dslint-drops-auto") and value == "auto":
            continue
        sub = props.get(key)
        out[key] = drop_auto(value, schema, sub) if sub is not None else value
    return out


__all__ = ["SCHEMA_DIR", "drop_auto", "load_json", "load_schema", "object_schema", "resolve_ref",
           "schema_path"]
