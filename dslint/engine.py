"""The engine: files → documents → targets → rules → diagnostics.

Rules never see selection, suppression, severity overrides, ordering or output; all of that
happens here, in one place, after they have yielded their findings.
"""

from __future__ import annotations

import os
import re
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from dslint.config import Settings
from dslint.diagnostics import Diagnostic, Finding, Severity
from dslint.discovery import Candidate, discover, matches
from dslint.documents import Skipped, read_document
from dslint.documents.model import DEEPSPEED, Document, ParseProblem
from dslint.rule import Context, PluginError, Rule, load_rules
from dslint.source import MAX_FILE_BYTES, SourceFile, Span
from dslint.targets import DeepSpeedUse

UNREADABLE = "unreadable"  # document kind for files that could not be read at all


@dataclass
class InternalError:
    where: str
    message: str


@dataclass
class RunResult:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    documents: list[Document] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    internal_errors: list[InternalError] = field(default_factory=list)
    plugin_errors: list[PluginError] = field(default_factory=list)
    files: int = 0
    rules: list[Rule] = field(default_factory=list)  # the rules that were run (selected), in code order


# ---- rule selection ------------------------------------------------------------------


def rule_matches(selector: str, found: Rule) -> bool:
    selector = selector.strip()
    if not selector:
        return False
    if selector.upper() == "ALL":
        return True
    if selector == found.name:
        return True
    return found.code.startswith(selector.upper())


def is_selected(found: Rule, settings: Settings) -> bool:
    chosen = any(rule_matches(s, found) for s in settings.select + settings.extend_select)
    return chosen and not any(rule_matches(s, found) for s in settings.ignore)


def unknown_selectors(selectors: list[str], rules: list[Rule]) -> list[str]:
    return [s for s in selectors if s.strip() and not any(rule_matches(s, r) for r in rules)]


def settings_problems(settings: Settings, rules: list[Rule]) -> list[str]:
    """Rule references in the settings that name no rule (each a usage error)."""
    problems = []
    unknown = unknown_selectors(settings.select + settings.extend_select + settings.ignore, rules)
    if unknown:
        problems.append(f"unknown rule selector(s): {', '.join(unknown)} (see `dslint rules`)")
    for glob, codes in settings.per_file_ignores.items():
        unknown = unknown_selectors(codes, rules)
        if unknown:
            problems.append(f"per-file-ignores '{glob}': unknown rule selector(s): {', '.join(unknown)} (see `dslint rules`)")
    unknown = [key for key in settings.severity if not any(key.upper() == r.code or key == r.name for r in rules)]
    if unknown:
        problems.append(f"severity: unknown rule(s) {', '.join(unknown)}; use a rule's code or name (see `dslint rules`)")
    return problems


# ---- suppression comments --------------------------------------------------------------

_SUPPRESS = re.compile(r"(?:#|//)\s*dslint:\s*(disable-file|disable)\s*=\s*([A-Za-z0-9_\-]+(?:\s*,\s*[A-Za-z0-9_\-]+)*)")


@dataclass
class Suppressions:
    by_line: dict[int, set[str]] = field(default_factory=dict)
    whole_file: set[str] = field(default_factory=set)

    @classmethod
    def scan(cls, source: SourceFile) -> "Suppressions":
        found = cls()
        text = source.text
        if "dslint:" not in text:
            return found
        for match in _SUPPRESS.finditer(text):
            codes = {c.strip() for c in match.group(2).split(",") if c.strip()}
            if match.group(1) == "disable-file":
                found.whole_file |= codes
                continue
            line, _ = source.position(match.start())
            found.by_line.setdefault(line, set()).update(codes)
            before = text[source.line_start(line) : match.start()]
            if not before.strip():  # a comment on its own line covers the next line
                found.by_line.setdefault(line + 1, set()).update(codes)
        return found

    def covers(self, diagnostic: Diagnostic, line: int) -> bool:
        codes = self.whole_file | self.by_line.get(line, set())
        return bool(codes) and any(c.lower() == "all" or c.upper() == diagnostic.code or c == diagnostic.name for c in codes)


# ---- the run -----------------------------------------------------------------------------


class Engine:
    def __init__(self, settings: Settings, rules: list[Rule] | None = None, plugin_errors: list[PluginError] | None = None):
        if rules is None:
            rules, plugin_errors = load_rules()
        self.settings = settings
        self.all_rules = rules
        self.plugin_errors = plugin_errors or []
        self.rules = [r for r in rules if is_selected(r, settings)]
        self.context = Context(settings=settings)

    # files ----------------------------------------------------------------------------

    def lint_paths(self, paths: list[str], overrides: dict[str, bytes] | None = None) -> RunResult:
        """Lint files on disk; ``overrides`` replaces some files' bytes (the fixer's passes)."""
        candidates, skipped = discover(paths, self.settings.exclude, self.settings.root)
        result = RunResult(skipped=list(skipped), plugin_errors=list(self.plugin_errors))
        overrides = overrides or {}
        documents = []
        for candidate in candidates:
            if candidate.display in overrides:
                document = self._parse(candidate.display, overrides[candidate.display], candidate.explicit, result)
            else:
                document = self._load(candidate, result)
            if document is not None:
                documents.append(document)
        return self.lint_documents(documents, result)

    def lint_bytes(self, display: str, data: bytes) -> RunResult:
        result = RunResult(plugin_errors=list(self.plugin_errors))
        document = self._parse(display, data, True, result)
        return self.lint_documents([document] if document else [], result)

    def _load(self, candidate: Candidate, result: RunResult) -> Document | None:
        path = candidate.path
        try:
            size = os.stat(path).st_size
            if size > MAX_FILE_BYTES:
                return _unreadable(candidate.display, f"file is {size / 1e6:.1f} MB; dslint reads files up to {MAX_FILE_BYTES // 1_000_000} MB")
            with open(path, "rb") as handle:
                data = handle.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            if getattr(exc, "errno", None) == 40:  # ELOOP
                reason = "symbolic link loop"
            if not candidate.explicit and not os.path.exists(path):
                result.skipped.append((candidate.display, f"cannot read: {reason}"))
                return None
            return _unreadable(candidate.display, f"cannot read file: {reason}")
        return self._parse(candidate.display, data, candidate.explicit, result)

    def _parse(self, display: str, data: bytes, explicit: bool, result: RunResult) -> Document | None:
        try:
            return read_document(display, data)
        except Skipped as exc:
            result.skipped.append((display, str(exc)))
        except RecursionError:
            return _unreadable(display, "nesting too deep to read")
        except Exception as exc:  # a parser bug must not lose the other files
            result.internal_errors.append(InternalError(display, _summary(exc)))
        return None

    # rules ----------------------------------------------------------------------------

    def lint_documents(self, documents: list[Document], result: RunResult | None = None) -> RunResult:
        result = result or RunResult(plugin_errors=list(self.plugin_errors))
        result.documents = documents
        result.files = len(documents)
        result.rules = list(self.rules)
        targets = {"document": documents, "deepspeed": self.deepspeed_uses(documents)}
        raw: list[Diagnostic] = []
        for found in self.rules:
            for target in targets.get(found.target, ()):
                if found.kinds and getattr(target, "kind", None) not in found.kinds:
                    continue
                raw.extend(self._run_rule(found, target, result))
        result.diagnostics = self._filter(raw, documents)
        return result

    def deepspeed_uses(self, documents: list[Document]) -> list[DeepSpeedUse]:
        uses = []
        for doc in documents:
            if doc.kind == DEEPSPEED and doc.mapping is not None:
                uses.append(DeepSpeedUse(document=doc, config=doc.mapping, world_size=self.settings.world_size))
        return uses

    def _run_rule(self, found: Rule, target, result: RunResult) -> list[Diagnostic]:
        severity = self._severity(found)
        out = []
        try:
            for finding in found.run(target, self.context):
                out.append(_diagnostic(found, severity, finding))
        except Exception as exc:
            where = getattr(getattr(target, "document", target), "path", "?")
            result.internal_errors.append(InternalError(f"{found.code} {found.name} on {where}", _summary(exc)))
        return out

    def _severity(self, found: Rule) -> Severity:
        for key, level in self.settings.severity.items():
            if key.upper() == found.code or key == found.name:
                return level
        return found.severity

    def _filter(self, raw: list[Diagnostic], documents: list[Document]) -> list[Diagnostic]:
        sources = {id(doc.source): doc.source for doc in documents}
        suppressions: dict[int, Suppressions] = {}
        kept: dict[tuple, Diagnostic] = {}
        for diagnostic in raw:
            source = diagnostic.span.source
            key = id(source)
            if key not in suppressions:
                suppressions[key] = Suppressions.scan(source)
            line, _ = source.position(diagnostic.span.start)
            if suppressions[key].covers(diagnostic, line):
                continue
            if self._ignored_for_file(diagnostic, source):
                continue
            identity = (source.path, diagnostic.span.start, diagnostic.span.end, diagnostic.code, diagnostic.message)
            kept.setdefault(identity, diagnostic)
        del sources
        return sorted(kept.values(), key=Diagnostic.sort_key)

    def _ignored_for_file(self, diagnostic: Diagnostic, source: SourceFile) -> bool:
        if not self.settings.per_file_ignores:
            return False
        relative = _relative(source.path, self.settings.root)
        for glob, codes in self.settings.per_file_ignores.items():
            if matches([glob], relative) and any(c.upper() == "ALL" or c == diagnostic.name or diagnostic.code.startswith(c.upper()) for c in codes):
                return True
        return False


def _relative(path: str, root: Path) -> str:
    try:
        return Path(os.path.relpath(os.path.abspath(path), root)).as_posix()
    except ValueError:
        return Path(path).as_posix()


def _diagnostic(found: Rule, severity: Severity, finding: Finding) -> Diagnostic:
    return Diagnostic(
        span=finding.span,
        code=found.code,
        name=found.name,
        severity=severity,
        message=finding.message,
        related=list(finding.related),
        fix=finding.fix,
        alternatives=list(finding.alternatives),
    )


def _unreadable(display: str, message: str) -> Document:
    source = SourceFile(path=display, text="")
    return Document(source=source, kind=UNREADABLE, root=None, problems=[ParseProblem(Span(source, 0, 0), message)])


def _summary(exc: BaseException) -> str:
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    where = f" ({Path(frame.filename).name}:{frame.lineno})" if frame else ""
    return f"{type(exc).__name__}: {exc}{where}"
