"""The engine: files → documents → targets → rules → diagnostics.

Rules never see selection, suppression, severity overrides, ordering or output; all of that
happens here, in one place, after they have yielded their findings. Rules of the target
``suppressions`` (DS004) run last: they get each file's suppression comments with what became
of every code in them (used, unused, unknown, or not judged because its rule did not run).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from dslint.config import Scopes, Settings
from dslint.diagnostics import Diagnostic, Finding, Fix, Severity
from dslint.files.discovery import Candidate, discover, matches
from dslint.documents import Skipped, read_candidate
from dslint.documents.model import DEEPSPEED, SCRIPT, TRAINING_JSON, TRAINING_YAML, Document
from dslint.facts import values as fact_values
from dslint.rule import Context, PluginError, Rule, load_rules
from dslint.source import SourceFile, Span
from dslint.run.result import InternalError, RunResult
from dslint.run.suppressions import Suppressions, continued_lines
from dslint.targets import UNJUDGED, UNKNOWN, UNUSED, USED, DeepSpeedUse, FileSuppressions, SuppressedCode

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
        self.files_read = 0  # read by the command line's progress line
        # parsed documents of the files read for launch context, kept across runs (dslint.run.cache)
        self.document_cache = None
        self._broken_written: set[int] = set()  # ids of the sources of script-written configs that do not parse

    # files ----------------------------------------------------------------------------

    def lint_paths(self, paths: list[str], overrides: dict[str, bytes] | None = None, *, split: bool = False) -> RunResult:
        """Lint files on disk; ``overrides`` replaces some files' bytes (the fixer's passes).

        ``split``: large runs may put the JSON files on a second process (dslint/run/split.py); the
        result then has the diagnostics, skipped files and counts, but ``documents`` and
        ``plans`` only of this process's share, so callers that need those leave it off.
        """
        candidates, skipped = discover(paths, scopes=Scopes.fixed(self.settings))
        return self.lint_found(candidates, skipped, overrides, split=split)

    def lint_found(self, candidates: list[Candidate], skipped: list[tuple[str, str]], overrides: dict[str, bytes] | None = None,
                   *, split: bool = False) -> RunResult:
        """Lint discovered files (``lint_paths`` after discovery; dslint.run.workspace calls it per settings)."""
        result = RunResult(skipped=list(skipped), plugin_errors=list(self.plugin_errors))
        if split and not overrides:
            from dslint.run import split as splitting

            share = splitting.worker_share(candidates)
            if share:
                return splitting.lint_split(self, candidates, share, result)
        return self.lint_candidates(candidates, result, overrides)

    def lint_candidates(self, candidates: list[Candidate], result: RunResult, overrides: dict[str, bytes] | None = None) -> RunResult:
        overrides = overrides or {}
        documents = []
        for candidate in candidates:
            document = self.read(candidate, result, overrides.get(candidate.display))
            if document is not None:
                documents.append(document)
        context = {c.display for c in candidates if c.context}
        return self.lint_documents(documents, result, overrides, context=context)

    def lint_bytes(self, display: str, data: bytes) -> RunResult:
        result = RunResult(plugin_errors=list(self.plugin_errors))
        document = self.read(Candidate(Path(display), display, True), result, data)
        return self.lint_documents([document] if document else [], result)

    def read(self, candidate: Candidate, result: RunResult, data: bytes | None = None) -> Document | None:
        """One discovered file's document (from ``data`` when given), or None: a skipped file or
        a parser's failure is noted in ``result``, and the other files go on."""
        if data is None:
            self.files_read += 1
            if candidate.context and self.document_cache is not None:
                data = self.document_cache.bytes_of(candidate.path)
                if data is not None:
                    return self._read_kept(candidate, result, data)
        try:
            return read_candidate(candidate, data)
        except Skipped as exc:
            result.skipped.append((candidate.display, str(exc)))
        except Exception as exc:  # noqa: BLE001 - a parser bug must not lose the other files
            result.internal_errors.append(InternalError(candidate.display, _summary(exc)))
        return None

    def _read_kept(self, candidate: Candidate, result: RunResult, data: bytes) -> Document | None:
        """A context file's document from the document cache when its bytes are unchanged: the
        same launch scripts are read on every pre-commit run of the configs they name."""
        key = self.document_cache.key(candidate.display, data)
        document = self.document_cache.load(key)
        if document is None:
            document = self.read(replace(candidate, context=False), result, data)
            if document is not None:
                self.document_cache.store(key, document)
        return document

    # rules ----------------------------------------------------------------------------

    def lint_documents(self, documents: list[Document], result: RunResult | None = None, overrides: dict[str, bytes] | None = None,
                       *, adopt=None, context: set[str] = frozenset()) -> RunResult:
        """``adopt``: files another process reads (dslint.run.split.Adoptable), read here when a launch names one.

        ``context``: documents read only for the launches they make (dslint.run.context). The rules of
        one document and the suppression judges skip them: what those find stays in that file, and
        only findings that involve a named file are reported from a context run.
        """
        result = result or RunResult(plugin_errors=list(self.plugin_errors))
        self.context.memo.clear()
        self.context.facts.clear()
        plans, linked = self.link(documents, result, overrides or {}, adopt=adopt)
        self.context.deepspeed_readers = _deepspeed_readers(plans)
        documents = documents + linked + _written_unread(documents, linked)
        self._broken_written = {id(doc.source) for doc in documents if doc.source.origin is not None and doc.problems}
        result.documents = documents
        result.files = sum(1 for doc in documents if doc.source.origin is None)  # a written config is its script's text
        result.rules = list(self.rules)
        result.plans = plans
        result.layouts = self.layouts(plans, documents, result)
        templates = _templates(documents, plans)
        judged = [document for document in documents if id(document) not in templates] if templates else documents
        targets = {"document": judged, "deepspeed": self.deepspeed_uses(judged, plans), "launch": plans,
                   "layout": result.layouts}
        if context:
            targets["document"] = [document for document in judged if document.path not in context]
        work = [
            (found, target)
            for found in self.rules
            if found.target != "suppressions"  # judged after filtering, below
            for target in targets.get(found.target, ())
            if not (found.kinds and getattr(target, "kind", None) not in found.kinds)
        ]
        raw, failed = self._run_pairs(work, result)
        scans: dict[int, Suppressions] = {}
        result.diagnostics = _fixable_as_fix_applies(self._filter(raw, documents, scans), documents)
        judges = [r for r in self.rules if r.target == "suppressions"]
        if judges:
            judged = [document for document in documents if document.path not in context]
            result.diagnostics = sorted(result.diagnostics + self._judge_suppressions(judges, judged, scans, failed, result), key=Diagnostic.sort_key)
        return result

    def _run_pairs(self, work: list[tuple[Rule, object]], result: RunResult) -> tuple[list[Diagnostic], set]:
        """Run each (rule, target): the diagnostics, and (rule code, id(source)) of rules that raised on a file."""
        raw: list[Diagnostic] = []
        failed: set[tuple[str, int | None]] = set()
        for found, target in work:
            errors = len(result.internal_errors)
            raw.extend(self._run_rule(found, target, result))
            if len(result.internal_errors) > errors:  # None: a target of no single file (a launch plan)
                source = getattr(getattr(target, "document", target), "source", None)
                failed.add((found.code, id(source) if source is not None else None))
        return raw, failed

    def _judge_suppressions(self, judges: list[Rule], documents: list[Document], scans: dict[int, "Suppressions"], failed: set, result: RunResult) -> list[Diagnostic]:
        """Run the ``suppressions`` rules on each file's comments, now that their use is known.

        Their findings pass the same per-file-ignores and suppression comments as any other,
        except that a comment does not hide a finding about itself unless it names the rule.
        """
        selected = {r.code for r in self.rules if r.target != "suppressions"}
        everything_ran = selected == {r.code for r in self.all_rules if r.target != "suppressions"}
        out: list[Diagnostic] = []
        for document in documents:
            scan = scans.get(id(document.source)) or Suppressions.scan(document.source, continued_lines(document))
            if not scan.comments:
                continue
            file_failed = {code for code, source in failed if source in (id(document.source), None)}
            for comment in scan.comments:
                for code in comment.codes:
                    code.status = self._suppression_status(code, selected - file_failed, everything_ran and not file_failed)
            target = FileSuppressions(document, list(scan.comments))
            for found in judges:
                if found.kinds and document.kind not in found.kinds:
                    continue
                for diagnostic in self._run_rule(found, target, result):
                    line, _ = document.source.position(diagnostic.span.start)
                    start = diagnostic.span.start
                    hiding = [c for c, code in scan.covers(diagnostic, line) if not c.span.start <= start < c.span.end or code.text.lower() != "all"]
                    if hiding or self._ignored_for_file(diagnostic, document.source):
                        continue
                    out.append(diagnostic)
        return out

    def _suppression_status(self, code: SuppressedCode, ran: set[str], everything_ran: bool) -> str:
        if code.suppressed:
            return USED
        if code.text.lower() == "all":
            return UNUSED if everything_ran else UNJUDGED
        named = [r for r in self.all_rules if code.text.upper() == r.code or code.text == r.name]
        if not named:
            return UNKNOWN
        return UNUSED if all(r.code in ran for r in named) else UNJUDGED

    def link(self, documents: list[Document], result: RunResult, overrides: dict[str, bytes], adopt=None) -> tuple[list, list[Document]]:
        """Launch plans for the scripts and training configs, and the files they name."""
        if not any(doc.kind in (SCRIPT, TRAINING_YAML, TRAINING_JSON) for doc in documents):
            return [], []
        from dslint.launch.link import Linker

        linker = Linker(documents, overrides=overrides, adopt=adopt)
        try:
            plans = linker.plans()
        except Exception as exc:  # noqa: BLE001 - linking must not lose the single-file findings
            result.internal_errors.append(InternalError("linking launches", _summary(exc)))
            return [], []
        return plans, [doc for doc in linker.loaded if not doc.source.virtual]

    def layouts(self, plans: list, documents: list[Document], result: RunResult) -> list:
        """The multi-node layouts: node launches of one job, grouped (dslint.launch.layout)."""
        from dslint.documents.model import ACCELERATE

        if not plans and not any(doc.kind == ACCELERATE for doc in documents):
            return []
        from dslint.launch.layout import layouts

        try:
            return layouts(plans, documents)
        except Exception as exc:  # noqa: BLE001 - grouping must not lose the findings about each launch
            result.internal_errors.append(InternalError("grouping multi-node layouts", _summary(exc)))
            return []

    def deepspeed_uses(self, documents: list[Document], plans: list | None = None) -> list[DeepSpeedUse]:
        """One use per launch that reaches a DeepSpeed config; standalone configs get one too."""
        uses = []
        reached: set[int] = set()
        for plan in plans or ():
            reference = plan.deepspeed
            if reference is None or reference.document is None or reference.document.mapping is None:
                continue
            from dslint.launch.link import deepspeed_world

            doc = reference.document
            reached.add(id(doc))
            if getattr(plan.program, "kind", None) == "inference":
                continue  # deepspeed.init_inference reads an inference config: no training rule applies
            uses.append(
                DeepSpeedUse(
                    document=doc,
                    config=doc.mapping,
                    world_size=deepspeed_world(plan, doc.mapping),
                    consumer=plan.consumer,
                    launch=plan,
                    reference=reference.span,
                )
            )
        named = None
        for doc in documents:
            if doc.kind == DEEPSPEED and doc.mapping is not None and id(doc) not in reached:
                if named is None:
                    from dslint.launch.named import accelerate_named

                    named = accelerate_named(documents)
                # an accelerate config names it: accelerate reads it, whichever program runs
                reference = named.get(os.path.realpath(doc.source.path)) if named else None
                uses.append(DeepSpeedUse(document=doc, config=doc.mapping, world_size=self.settings.world_size,
                                         consumer="accelerate" if reference is not None else None,
                                         extra={"named_by": reference} if reference is not None else {}))
        return uses

    def _run_rule(self, found: Rule, target, result: RunResult) -> list[Diagnostic]:
        assumed = None
        if found.consumers:
            reader, program = _reader_of(target)
            if reader is not None and reader not in found.consumers:
                return []
            if reader is None and program is not None and program.established:
                return []  # the program was read and is none of the readers the rule speaks of (a Hydra app, its own loop)
            if program is not None and not program.established and (reader is not None or _launched(target)):
                # A launch whose reader is unknown is no evidence for the reader the rule speaks of:
                # its findings stand on an assumption, like those of a reader guessed from flags.
                assumed = program
        configured = producer = None  # worked out at the first finding: most (rule, target) pairs find nothing
        out = []
        try:
            # the facts it declares, each computed once per target and run (dslint.facts); inside the
            # try, so that one that fails is the rule's internal error, as when the rule worked it out
            facts = fact_values(found.facts, target, self.context) if found.facts else {}
            for finding in found.run(target, self.context, **facts):
                finding = _onto_writer(_onto_real_file(finding, target), self._broken_written)
                if finding is None:
                    continue
                notes = [finding.note] if finding.note else []
                if assumed is not None:
                    finding = _on_assumption(finding, found.severity)
                    if assumed.assumption:
                        notes.append(assumed.assumption)
                if not out:
                    configured, producer = self._configured_severity(found), _producer(target)
                # A `severity` setting wins; otherwise a finding may carry its own (e.g. an error
                # when the consumer is known, a warning for a standalone file).
                out.append(_diagnostic(found, configured or finding.severity or found.severity, finding, notes, producer))
        except Exception as exc:  # noqa: BLE001 - a failing rule is that rule's internal error; the others go on
            where = getattr(getattr(target, "document", target), "path", "?")
            result.internal_errors.append(InternalError(f"{found.code} {found.name} on {where}", _summary(exc)))
        return out

    def _severity(self, found: Rule) -> Severity:
        return self._configured_severity(found) or found.severity

    def _configured_severity(self, found: Rule) -> Severity | None:
        if not self.settings.severity:  # the usual case, asked once per (rule, target)
            return None
        for key, level in self.settings.severity.items():
            if key.upper() == found.code or key == found.name:
                return level
        return None

    def _filter(self, raw: list[Diagnostic], documents: list[Document], suppressions: dict[int, Suppressions] | None = None) -> list[Diagnostic]:
        """Drop suppressed and per-file-ignored findings, deduplicate, order.

        ``suppressions`` (id(source) → scanned comments) is filled in, each code counting the
        findings it suppressed, for the ``suppressions`` rules that judge the comments.
        """
        by_source = {id(doc.source): doc for doc in documents}
        suppressions = {} if suppressions is None else suppressions
        kept: dict[tuple, Diagnostic] = {}
        for diagnostic in raw:
            source = diagnostic.span.source
            key = id(source)
            if key not in suppressions:
                suppressions[key] = Suppressions.scan(source, continued_lines(by_source.get(key)))
            line, _ = source.position(diagnostic.span.start)
            matched = suppressions[key].covers(diagnostic, line)
            if matched:
                for _, code in matched:
                    code.suppressed += 1
                continue
            if self._ignored_for_file(diagnostic, source):
                continue
            if diagnostic.fix is not None or diagnostic.alternatives:
                _drop_fixes_in_unmapped_strings(diagnostic, by_source)
            identity = (source.path, diagnostic.span.start, diagnostic.span.end, diagnostic.code, diagnostic.message)
            kept.setdefault(identity, diagnostic)
        return sorted(kept.values(), key=Diagnostic.sort_key)

    def _ignored_for_file(self, diagnostic: Diagnostic, source: SourceFile) -> bool:
        if not self.settings.per_file_ignores:
            return False
        relative = _relative(source.path, self.settings.root)
        for glob, codes in self.settings.per_file_ignores.items():
            if matches([glob], relative) and any(c.upper() == "ALL" or c == diagnostic.name or diagnostic.code.startswith(c.upper()) for c in codes):
                return True
        return False


def _onto_real_file(finding: Finding, target) -> Finding | None:
    """Findings inside a preset or inline JSON are reported where the launch names it."""
    if not finding.span.source.virtual:
        return finding
    reference = getattr(target, "reference", None)
    if reference is None:
        return None
    name = finding.span.source.path.strip("<>")
    return Finding(
        span=reference,
        message=f"in {name}: {finding.message}",
        related=[r for r in finding.related if r.span is None or not r.span.source.virtual],
        fix=None,
        severity=getattr(finding, "severity", None),
        note=finding.note,
        help=_help_without(finding),
    )


def _written_unread(documents: list[Document], linked: list[Document]) -> list[Document]:
    """The configs scripts write that no launch reads: linted as the documents they are, like a
    config file of the repository that no launch names."""
    have = {id(doc) for doc in linked}
    out = []
    for doc in documents:
        for written in doc.written:
            if any(id(read) in have for read in written.read()):
                continue  # a launch reads it, as the kind it says
            document = written.document()
            if document is not None:
                out.append(document)
    return out


def _templates(documents: list[Document], plans: list) -> set[int]:
    """ids of the files scripts fill in with ``sed`` that no launch reads itself: sed reads them,
    not a config reader, so their own text is not judged; the filled-in texts are."""
    templates = {id(written.template_document) for doc in documents for written in doc.written if written.template_document is not None}
    if templates:
        templates -= {id(reference.document) for plan in plans for reference in plan.references if reference.document is not None}
    return templates


def _onto_writer(finding: Finding | None, broken: set[int]) -> Finding | None:
    """Findings in a config a script writes are reported at the script's lines; a fix is kept
    only when every edit falls where the written text stands in the script as written."""
    if finding is None or finding.span.source.origin is None:
        return finding
    fixes = [fix for fix in [finding.fix, *finding.alternatives] if fix is not None]
    mapped = {id(fix): _fix_onto_writer(fix, broken) for fix in fixes}
    fix = mapped.get(id(finding.fix)) if finding.fix is not None else None
    dropped = finding.fix is not None and fix is None
    return replace(
        finding,
        span=_span_onto_writer(finding.span),
        related=[replace(r, span=_span_onto_writer(r.span)) if r.span is not None else r for r in finding.related],
        fix=fix,
        alternatives=[mapped[id(f)] for f in finding.alternatives if mapped[id(f)] is not None],
        help=finding.help or (finding.fix.title if dropped else None),
    )


def _span_onto_writer(span: Span) -> Span:
    origin = span.source.origin
    if origin is None:
        return span
    source, start, end, _same = origin.place(span.start, span.end)
    return Span(source, start, end)


def _fix_onto_writer(fix: Fix, broken: set[int]) -> Fix | None:
    edits = []
    for edit in fix.edits:
        origin = edit.source.origin
        if origin is None:
            edits.append(edit)
            continue
        source, start, end, same = origin.place(edit.start, edit.end)
        if not same or not origin.fixable or id(edit.source) in broken:
            return None
        edits.append(replace(edit, source=source, start=start, end=end))
    return replace(fix, edits=tuple(edits))


def _deepspeed_readers(plans) -> dict:
    """id(DeepSpeed config document) -> the plans that read it, inference launches included."""
    readers: dict = {}
    for plan in plans:
        reference = plan.deepspeed
        if reference is not None and reference.document is not None:
            readers.setdefault(id(reference.document), []).append(plan)
    return readers


def _reader_of(target) -> tuple[str | None, object]:
    """(who reads it, the Consumer with its evidence) for a launch plan or a DeepSpeed use."""
    plan = getattr(target, "launch", None) or (target if hasattr(target, "program") else None)
    reader = getattr(target, "consumer", None)
    return reader, getattr(plan, "program", None)


def _launched(target) -> bool:
    """The target is a launch plan, or a DeepSpeed config a launch reaches."""
    return getattr(target, "launch", None) is not None or hasattr(target, "program")


def _on_assumption(finding: Finding, default: Severity) -> Finding:
    """A finding about a reader that was guessed, not read from the program: never an error, never a
    fix (its title stays as the help). The caller notes the assumption."""
    severity = min(finding.severity or default, Severity.WARNING)
    fix = finding.fix if finding.fix is not None and finding.fix.any_reader else None
    return Finding(span=finding.span, message=finding.message, related=list(finding.related), fix=fix,
                   alternatives=[f for f in finding.alternatives if f.any_reader], severity=severity,
                   note=finding.note, help=finding.help if fix is not None else _help_without(finding))


def _help_without(finding: Finding) -> str | None:
    """The help of a finding whose fix is dropped: what the fix would have done, unless the rule says more."""
    if finding.help is not None or finding.fix is None:
        return finding.help
    return finding.fix.title


def _relative(path: str, root: Path) -> str:
    try:
        return Path(os.path.relpath(os.path.abspath(path), root)).as_posix()
    except ValueError:
        return Path(path).as_posix()


def _drop_fixes_in_unmapped_strings(diagnostic: Diagnostic, by_source: dict[int, Document]) -> None:
    """A fix may not edit a string a script runs (``bash -c "$LAUNCHER $CMD"``) whose words dslint
    could place only at the whole string: an edit there would replace the wrong text."""

    def unmapped(edit) -> bool:
        script = getattr(by_source.get(id(edit.source)), "script", None)
        return script is not None and any(
            start < edit.end and edit.start < end or start < edit.start < end for start, end in script.unmapped
        )

    if diagnostic.fix is not None and any(unmapped(e) for e in diagnostic.fix.edits):
        diagnostic.help = diagnostic.help or diagnostic.fix.title
        diagnostic.fix = None
    diagnostic.alternatives = [f for f in diagnostic.alternatives if not any(unmapped(e) for e in f.edits)]


def _fixable_as_fix_applies(diagnostics: list[Diagnostic], documents: list[Document]) -> list[Diagnostic]:
    """No fix on a finding whose edits fall in a file with a syntax error: --fix never edits a
    file it cannot parse (dslint.fix.apply), so the report must not offer it either."""
    broken = {id(document.source) for document in documents if document.problems}
    if not broken:
        return diagnostics
    return [replace(d, fix=None) if d.fix is not None and any(id(e.source) in broken for e in d.fix.edits) else d for d in diagnostics]


def _diagnostic(found: Rule, severity: Severity, finding: Finding, notes: list[str], producer: str | None = None) -> Diagnostic:
    return Diagnostic(
        span=finding.span,
        code=found.code,
        name=found.name,
        severity=severity,
        message=finding.message,
        related=list(finding.related),
        fix=finding.fix,
        alternatives=list(finding.alternatives),
        notes=notes,
        help=finding.help,
        producer=producer,
    )


def _producer(target) -> str | None:
    """The file a rule's target comes from: a document, a launch's script or config, or (a
    DeepSpeed use) the launch that reaches the config, else the config itself."""
    launch = getattr(target, "launch", None)
    if launch is not None and getattr(launch, "origin", None) is not None:
        return launch.origin.path
    origin = getattr(target, "origin", None)
    if origin is not None and hasattr(origin, "path"):
        return origin.path
    document = getattr(target, "document", None) or (target if hasattr(target, "source") else None)
    return getattr(document, "path", None)


def _summary(exc: BaseException) -> str:
    import traceback

    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    where = f" ({Path(frame.filename).name}:{frame.lineno})" if frame else ""
    return f"{type(exc).__name__}: {exc}{where}"
