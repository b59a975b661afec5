"""What a run found: its own module, so that a run replayed from the cache (dslint.run.cache)
unpickles its findings without importing the engine, the readers and the rules' helpers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dslint.diagnostics import Diagnostic
    from dslint.documents.model import Document
    from dslint.rule import PluginError, Rule


@dataclass
class InternalError:
    """A rule or reader that failed, and where."""

    where: str
    message: str


@dataclass
class RunResult:
    """What a run found, read and skipped."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    documents: list[Document] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    internal_errors: list[InternalError] = field(default_factory=list)
    plugin_errors: list[PluginError] = field(default_factory=list)
    files: int = 0
    rules: list[Rule] = field(default_factory=list)  # the rules that were run (selected), in code order
    plans: list = field(default_factory=list)  # launch plans (dslint.launch.plan.LaunchPlan)
    layouts: list = field(default_factory=list)  # multi-node layouts (dslint.launch.layout.Layout)
