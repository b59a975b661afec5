"""Diagnostics → output. One module per format; each exposes ``render(result, options) -> str``."""

from __future__ import annotations

from dslint.report.common import ReportOptions, counts, location

__all__ = ["FORMATS", "ReportOptions", "counts", "location", "render"]

FORMATS = ("text", "concise", "json", "sarif", "github", "junit")


def render(fmt: str, result, options: ReportOptions, statistics: bool = False) -> str:
    if statistics:
        from dslint.report import concise

        return concise.render_statistics(fmt, result, options)
    if fmt == "json":
        from dslint.report import json_format

        return json_format.render(result, options)
    if fmt in ("concise", "sarif", "github", "junit"):
        from importlib import import_module

        return import_module(f"dslint.report.{fmt}").render(result, options)
    from dslint.report import text

    return text.render(result, options)
