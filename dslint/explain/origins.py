"""Values with their origin: every number ``dslint explain`` shows says where it came from (a file
position, the command line, or the default that applied)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dslint.launch.plan import Arg, Sourced
from dslint.values import bool_word


@dataclass(frozen=True)
class Value:
    """One resolved value and why: a file position, the command line, or a default."""

    value: Any
    origin: str
    path: str | None = None
    line: int | None = None
    default: bool = False

    def to_dict(self) -> dict:
        return {"value": self.value, "origin": self.origin, "path": self.path, "line": self.line, "default": self.default}

    @property
    def where(self) -> str:
        if self.path is not None and self.line is not None:
            return f"{self.path}:{self.line}"
        return self.origin


def dict_or_none(value) -> dict | None:
    """A section's (or a value's) JSON form, ``None`` when it is absent."""
    return value.to_dict() if value else None


def position(span) -> tuple[str | None, int | None]:
    if span is None:
        return None, None
    if span.virtual:
        return span.source.path, None
    return span.source.path, span.source.position(span.start)[0]


def from_arg(arg: Arg, value: Any, name: str | None = None) -> Value:
    path, line = position(arg.span)
    shown = f"--{arg.name}" if arg.origin.startswith("--") else arg.name
    if name:
        shown = name
    where = f"{path}:{line}" if line is not None else (path or "the command line")
    origin = f"{shown} at {where}"
    if arg.assumed:
        origin += f" (assuming {arg.assumed} keeps its default)"
    return Value(value, origin, path if line is not None else None, line)


def from_sourced(sourced: Sourced) -> Value:
    path, line = position(sourced.span)
    return Value(sourced.value, sourced.origin, path if line is not None else None, line, sourced.default)


def from_node(node, key: str, value: Any, reference=None) -> Value:
    """A value read from a config node; inside a preset or inline JSON, located where the
    launch names that config."""
    path, line = position(node.span)
    if line is None:
        if reference is not None:
            ref_path, ref_line = position(reference.span)
            return Value(value, f"{key} in {path.strip('<>')} ({ref_path}:{ref_line})", ref_path, ref_line)
        return Value(value, f"{key} in {path}", None, None)
    return Value(value, f"{key} at {path}:{line}", path, line)


def defaulted(value: Any, origin: str) -> Value:
    """A value no file or flag sets: the default that applies, and whose default it is."""
    return Value(value, origin, None, None, True)


def to_float(value) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def to_bool(value) -> bool | None:
    if value is True or value is False or value is None:
        return value
    return bool_word(value)


def fmt(value) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) >= 1e6:
        return f"{value:.3g}"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
