"""``--format github``: GitHub Actions workflow commands, one annotation per diagnostic.

``::error file=F,line=L,col=C,endLine=EL,endColumn=EC,title=CODE name::message``; warnings
are ``::warning`` and infos ``::notice``. Escaping follows ``@actions/core``: ``%``, CR and LF
in the message; additionally ``:`` and ``,`` in property values. The summary line follows
as plain log output. Chosen automatically when ``GITHUB_ACTIONS=true`` and no ``--format``.
"""

from __future__ import annotations

import os
from pathlib import Path

from dslint.diagnostics import Diagnostic, Severity
from dslint.report.common import ReportOptions, location

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workspace_path(path: str) -> str:
    """GitHub resolves ``file=`` against the workspace: relative, forward slashes, no ``./``."""
    try:
        relative = os.path.relpath(os.path.abspath(path), os.getcwd())
    except ValueError:
        return Path(path).as_posix()
    if relative == ".." or relative.startswith(".." + os.sep):
        return Path(path).as_posix()
    return Path(relative).as_posix()


def annotation(diagnostic: Diagnostic) -> str:
    line, column, end_line, end_column = location(diagnostic)
    properties = [
        ("file", workspace_path(diagnostic.path)),
        ("line", str(line)),
        ("col", str(column)),
        ("endLine", str(end_line)),
        ("endColumn", str(end_column)),
        ("title", f"{diagnostic.code} {diagnostic.name}"),
    ]
    props = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
    return f"::{COMMANDS[diagnostic.severity]} {props}::{escape_data(diagnostic.message)}"


def render(result, options: ReportOptions) -> str:
    from dslint.report.text import summary_line

    lines = [annotation(d) for d in result.diagnostics]
    lines.append(summary_line(result, options))
    return "\n".join(lines) + "\n"
