"""A Python default as JSON, for every schema generator: what a schema's ``default`` holds, or
``x-dslint-default-python`` where JSON cannot hold it."""

from __future__ import annotations

import enum
import math
import os
import sys
from typing import Any


class Unrepresentable(Exception):
    pass


def jsonable(value: Any) -> Any:
    """Convert a Python default to JSON, or raise :class:`Unrepresentable`."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, enum.Enum):
        return jsonable(value.value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise Unrepresentable(repr(value))
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    # DeepSpeed's config sections default to pydantic models; a package that never imported
    # pydantic has none (the training-argument generators need not have it installed).
    pydantic = sys.modules.get("pydantic")
    if pydantic is not None and isinstance(value, pydantic.BaseModel):
        return jsonable(value.model_dump())
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((jsonable(v) for v in value), key=repr)
    if type(value).__module__ == "torch" and type(value).__name__ == "dtype":
        return str(value)
    raise Unrepresentable(repr(value))


def set_default(schema: dict, value: Any) -> None:
    """The schema's ``default``, or ``x-dslint-default-python`` (its repr) where JSON cannot hold it."""
    try:
        schema["default"] = jsonable(value)
    except Unrepresentable as exc:
        schema["x-dslint-default-python"] = str(exc)
