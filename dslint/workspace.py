"""A run over paths whose files may have different settings (the nearest configuration of each).

Discovery gives each file the settings of its folder (dslint.config.Scopes); the files of one
settings object are linted together by one engine, and the results are merged. Usually there is
one group, and the run is exactly an engine's. A launch in one group that names a file of
another reads that file as its own, with its own settings, as a run over its group alone would.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dslint.config import Scopes, Settings
from dslint.diagnostics import Diagnostic
from dslint.discovery import Candidate, discover
from dslint.engine import Engine, RunResult
from dslint.rule import PluginError, Rule


@dataclass
class WorkspaceRun:
    result: RunResult  # every group's, merged
    groups: list[tuple[Settings, RunResult]] = field(default_factory=list)

    def failing(self) -> bool:
        """Does some finding reach the ``fail-on`` severity of the settings it was found under?"""
        return any(d.severity >= settings.fail_on for settings, result in self.groups for d in result.diagnostics)


def find(paths: list[str], scopes: Scopes, cwd: Path | None = None) -> tuple[list[Candidate], list[tuple[str, str]]]:
    """The files to lint, each with its folder's settings, and the skipped ones with reasons."""
    return discover(paths, cwd=cwd, scopes=scopes)


def lint(found: tuple[list[Candidate], list[tuple[str, str]]], scopes: Scopes, rules: list[Rule], plugin_errors: list[PluginError],
         overrides: dict[str, bytes] | None = None, *, split: bool = False, progress=None) -> WorkspaceRun:
    """Lint what ``find`` found, one engine per settings object; ``progress.engines`` gets each engine (the CLI's progress line)."""
    candidates, skipped = found
    groups: dict[int, tuple[Settings, list[Candidate]]] = {}
    for candidate in candidates:
        settings = candidate.settings or scopes.fallback
        groups.setdefault(id(settings), (settings, []))[1].append(candidate)
    if not groups:
        groups[id(scopes.fallback)] = (scopes.fallback, [])
    runs = []
    for index, (settings, members) in enumerate(groups.values()):
        engine = Engine(settings, rules=rules, plugin_errors=plugin_errors)
        if progress is not None:
            progress.engines.append(engine)
        runs.append((settings, engine.lint_found(members, skipped if index == 0 else [], overrides, split=split)))
    if len(runs) == 1:
        return WorkspaceRun(runs[0][1], runs)
    return WorkspaceRun(_merge([result for _, result in runs], plugin_errors), runs)


def _merge(results: list[RunResult], plugin_errors: list[PluginError]) -> RunResult:
    merged = RunResult(plugin_errors=list(plugin_errors))
    kept: dict[tuple, Diagnostic] = {}
    rules: dict[str, Rule] = {}
    for result in results:
        for diagnostic in result.diagnostics:
            identity = (diagnostic.path, diagnostic.span.start, diagnostic.span.end, diagnostic.code, diagnostic.message)
            kept.setdefault(identity, diagnostic)
        merged.documents += result.documents
        merged.skipped += result.skipped
        merged.internal_errors += result.internal_errors
        merged.files += result.files
        merged.plans += result.plans
        for found in result.rules:
            rules.setdefault(found.code, found)
    merged.diagnostics = sorted(kept.values(), key=Diagnostic.sort_key)
    merged.rules = sorted(rules.values(), key=lambda r: r.code)
    return merged
