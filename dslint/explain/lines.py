"""The text form's line shapes: a labelled line, its continuation lines, and values with their origin."""

from __future__ import annotations

from dslint.explain.memory import GiB
from dslint.explain.origins import Value

WIDTH = 11


def shown(value: Value | None, unknown: str = "unknown") -> str:
    if value is None or value.value is None:
        return unknown
    v = value.value
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, bool):
        return "on" if v else "off"
    return str(v)


def why(value: Value | None) -> str:
    if value is None:
        return ""
    return f"  ({value.origin})"


def line(label: str, text: str) -> str:
    return f"  {label:<{WIDTH}}{text}"


def more(text: str) -> str:
    return f"  {'':<{WIDTH}}{text}"


def size(value: float) -> str:
    if value < 1024**3:
        return f"{value / 1024**2:.0f} MiB"
    return f"{value / GiB:.1f} GiB"
