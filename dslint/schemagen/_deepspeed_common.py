"""The small helpers the DeepSpeed schema generator's parts share: where in deepspeed a line is,
importing an attribute that may be absent, and the JSON type of a default (a default as JSON
is ``_json``).

Only the generator (python -m dslint.schemagen.deepspeed) imports this; nothing here imports
deepspeed at module level.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from typing import Any




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

