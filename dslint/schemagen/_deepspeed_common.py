"""The small helpers the DeepSpeed schema generator's parts share: where in deepspeed a line is,
importing an attribute that may be absent, and a Python default as JSON.

Only the generator (python -m dslint.schemagen.deepspeed) imports this; nothing here imports
deepspeed at module level.
"""

from __future__ import annotations

import enum
import importlib
import importlib.util
import math
import pathlib
from pathlib import Path
from typing import Any


class Unrepresentable(Exception):
    pass




def _ds_root() -> Path:
    import deepspeed  # imported only by the generator

    return Path(deepspeed.__file__).resolve().parent.parent


def relative(filename: str | None, line: int | None) -> str | None:
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


def find_line(modname: str, needle: str) -> str | None:
    """``file:line`` of the first line of a module's source containing ``needle``."""
    path = _module_file(modname)
    if not path:
        return None
    for lineno, text in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if needle in text:
            return relative(path, lineno)
    return relative(path, None)


def import_attr(modname: str, attr: str, default: Any = None) -> Any:
    try:
        return getattr(importlib.import_module(modname), attr)
    except (ImportError, AttributeError):
        return default


def jsonable(value: Any) -> Any:
    """Convert a Python default to JSON, or raise :class:`Unrepresentable`."""
    from pydantic import BaseModel

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
    if isinstance(value, pathlib.PurePath):
        return str(value)
    if isinstance(value, BaseModel):
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
    try:
        schema["default"] = jsonable(value)
    except Unrepresentable as exc:
        schema["x-dslint-default-python"] = str(exc)


def type_of_default(value: Any) -> str | None:
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

