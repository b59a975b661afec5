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
from dslint.files.discovery import Candidate, discover
from dslint.run.engine import Engine, RunResult
from dslint.rule import PluginError, Rule


@dataclass
class WorkspaceRun:
    """A run over paths: the merged result and each settings group's."""

    result: RunResult  # every group's, merged
    groups: list[tuple[Settings, RunResult]] = field(default_factory=list)

    def failing(self) -> bool:
        """Does some finding reach the ``fail-on`` severity of the settings it was found under?"""
        return any(d.severity >= settings.fail_on for settings, result in self.groups for d in result.diagnostics)


def find(paths: list[str], scopes: Scopes, cwd: Path | None = None) -> tuple[list[Candidate], list[tuple[str, str]]]:
    """The files to lint, each with its folder's settings, and the skipped ones with reasons."""
    return discover(paths, cwd=cwd, scopes=scopes)


def lint(found: tuple[list[Candidate], list[tuple[str, str]]], scopes: Scopes, rules: list[Rule], plugin_errors: list[PluginError],
         overrides: dict[str, bytes] | None = None, *, split: bool = False, progress=None, context: bool = True,
         cache: bool = True, cache_dir: str | None = None, units: bool = False) -> WorkspaceRun:
    """Lint what ``find`` found, one engine per settings object; ``progress.engines`` gets each engine (the CLI's progress line).

    ``context``: configs named on the command line are linted with the launches of their
    repository that name them (dslint.run.context), whose findings count where they involve a given file.
    ``cache``: keep what that finds (the reference index, the parsed launches) in .dslint_cache/
    (or ``cache_dir``).
    ``units``: lint each group in units and replay those whose inputs are unchanged (dslint.run.units).
    """
    candidates, skipped = found
    root = None
    if cache:
        from dslint.run.cache import cache_root

        root = cache_root(configured=cache_dir)
    extra = _context(candidates, scopes, root) if context else []
    if extra:
        candidates = candidates + extra
        split = False  # a handful of files: nothing to share out
    groups: dict[int, tuple[Settings, list[Candidate]]] = {}
    for candidate in candidates:
        settings = candidate.settings or scopes.fallback
        groups.setdefault(id(settings), (settings, []))[1].append(candidate)
    if not groups:
        groups[id(scopes.fallback)] = (scopes.fallback, [])
    runs = []
    for index, (settings, members) in enumerate(groups.values()):
        engine = Engine(settings, rules=rules, plugin_errors=plugin_errors)
        if extra and root is not None:
            from dslint.run.cache import DocumentCache

            engine.document_cache = DocumentCache(root)
        if progress is not None:
            progress.engines.append(engine)
        if units and root is not None and not extra and not overrides:
            from dslint.run.units import lint_group

            rules_key = ";".join(f"{r.code}:{r.origin}:{r.severity.label}" for r in rules)
            runs.append((settings, lint_group(engine, members, skipped if index == 0 else [], root, [repr(settings), rules_key])))
            continue
        runs.append((settings, engine.lint_found(members, skipped if index == 0 else [], overrides, split=split)))
    if extra:
        given = {c.display for c in candidates if not c.context}
        for _, result in runs:
            _only_what_involves(result, {c.display for c in extra}, given)
    if len(runs) == 1:
        return WorkspaceRun(runs[0][1], runs)
    return WorkspaceRun(_merge([result for _, result in runs], plugin_errors), runs)


def explained(paths: list[str], settings: Settings, cache: bool = True) -> RunResult:
    """What ``dslint explain PATHS`` shows: the launches of PATHS, and for a config named on the
    command line, the launches elsewhere in its repository that use it (as ``check`` finds them,
    dslint.run.context); a config no launch uses stands alone."""
    scopes = Scopes.fixed(settings)
    candidates, skipped = discover(paths, scopes=scopes)
    root = None
    if cache:
        from dslint.run.cache import cache_root

        root = cache_root()
    extra = _context(candidates, scopes, root)
    engine = Engine(settings)
    if extra and root is not None:
        from dslint.run.cache import DocumentCache

        engine.document_cache = DocumentCache(root)
    result = engine.lint_found(candidates + extra, skipped)
    if extra:
        context = {c.display for c in extra}
        given = {c.display for c in candidates}
        result.plans = [plan for plan in result.plans if plan.origin.path not in context or _uses(plan, given)]
        result.documents = [document for document in result.documents if document.path in given]
    return result


def _uses(plan, paths: set[str]) -> bool:
    """Does the launch read one of ``paths`` (its DeepSpeed, training or accelerate config)?"""
    documents = [reference.document for reference in plan.references] + [plan.deepspeed and plan.deepspeed.document,
                                                                          plan.training_config and plan.training_config.document]
    return any(document is not None and document.path in paths for document in documents)


def _context(candidates: list[Candidate], scopes: Scopes, root: Path | None) -> list[Candidate]:
    from dslint.run.context import context_candidates, wants_context

    if not wants_context(candidates):
        return []
    from dslint.run.cache import NameIndex

    return context_candidates(candidates, scopes, Path.cwd(), NameIndex(root))


def _only_what_involves(result: RunResult, context: set[str], given: set[str]) -> None:
    """Keep a context file's findings, and those its launches produced, only where they involve a
    given file; never a fix that edits a file nobody asked dslint to check."""
    from dataclasses import replace

    from dslint.run.context import involves

    kept = []
    for diagnostic in result.diagnostics:
        if (diagnostic.producer in context or diagnostic.path in context) and not involves(diagnostic, given):
            continue
        if diagnostic.fix is not None and any(edit.source.path in context for edit in diagnostic.fix.edits):
            diagnostic = replace(diagnostic, fix=None, alternatives=[], help=diagnostic.help or diagnostic.fix.title)
        kept.append(diagnostic)
    result.diagnostics = kept
    result.documents = [document for document in result.documents if document.path not in context]
    result.files = sum(1 for document in result.documents if document.source.origin is None)  # a written config is its script's text


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
