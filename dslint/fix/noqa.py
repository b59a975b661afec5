"""``--add-noqa``: suppress every current finding with a ``# dslint: disable=CODE`` comment.

A comment goes at the end of the finding's line (or extends a ``dslint: disable=`` comment
already there); for a finding inside a shell command continued with ``\\`` over several lines,
it goes on a line of its own above the command, which covers all of the command
(dslint/run/suppressions.py), because a comment inside it would end the command. Comments go only
where the file's format has them and only where they leave the file's meaning unchanged, which
is checked rather than assumed: after each insertion the file is parsed again and its values
(YAML, JSON) or its tokens other than comments (shell) must be exactly as before. Otherwise the
finding is reported as skipped, with the reason:

* strict JSON gets no comments: HF Trainer and accelerate read DeepSpeed configs with
  ``json.load``, which rejects them. A JSON file that already has comments is hjson that only
  DeepSpeed reads, so one more comment changes nothing for anybody.
* a line inside a multi-line string, block scalar or here-document.

Running it again adds nothing: the findings it handled are suppressed now. Files are written
atomically, once, at the end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from dslint.diagnostics import Diagnostic
from dslint.documents.model import ACCELERATE, DEEPSPEED, SCRIPT, TRAINING_JSON, TRAINING_YAML, Document, Mapping, Scalar, Sequence
from dslint.documents.treesitter import parser
from dslint.fix.apply import write_atomic
from dslint.source import SourceFile
from dslint.run.suppressions import DIRECTIVE, command_lines, continued_lines



@dataclass
class NoqaOutcome:
    result: Any  # the RunResult the comments were added for
    added: int = 0  # codes written into comments
    files: list[str] = field(default_factory=list)  # files changed
    skipped: list[tuple[Diagnostic, str]] = field(default_factory=list)  # findings left as they are, and why


def add_noqa(lint: Callable[[dict], Any], judges: frozenset[str] = frozenset(), write: bool = True) -> NoqaOutcome:
    """``lint(overrides)`` runs the engine; ``judges`` are codes of rules that judge suppressions (DS004)."""
    result = lint({})
    outcome = NoqaOutcome(result=result)
    documents = {id(doc.source): doc for doc in result.documents}
    by_source: dict[int, list[Diagnostic]] = {}
    for diagnostic in result.diagnostics:
        if diagnostic.code in judges:
            outcome.skipped.append((diagnostic, "an unused suppression is removed with --fix, not suppressed"))
            continue
        by_source.setdefault(id(diagnostic.span.source), []).append(diagnostic)
    for key, diagnostics in by_source.items():
        document = documents.get(key)
        source = diagnostics[0].span.source
        reason = _refusal(document)
        if reason:
            outcome.skipped.extend((d, reason) for d in diagnostics)
            continue
        text, added, skipped = _annotate(document, diagnostics)
        outcome.skipped.extend(skipped)
        if text != source.text:
            outcome.added += added
            outcome.files.append(source.path)
            if write:
                write_atomic(source.path, source.to_bytes(text))
    outcome.skipped.sort(key=lambda item: item[0].sort_key())
    return outcome


def _refusal(document: Document | None) -> str | None:
    """Why no comment can go into this file at all, or None."""
    if document is None or not document.source.path or document.source.path == "-":
        return "not a file on disk"
    if document.kind in (TRAINING_YAML, ACCELERATE, SCRIPT):
        if document.kind != SCRIPT and document.root is None:
            return "the file does not parse, so a comment cannot be checked to leave it unchanged"
        return None
    if document.kind in (DEEPSPEED, TRAINING_JSON):
        if document.root is None:
            return "the file does not parse, so a comment cannot be checked to leave it unchanged"
        if document.strict_json or _comment_marker(document.source.text) is None:
            return (
                "strict JSON has no comments (HF Trainer and accelerate read it with json.load, which rejects them); "
                "use per-file-ignores in the configuration instead"
            )
        return None
    return "this kind of file has no comments"


def _comment_marker(text: str) -> str | None:
    """The comment marker a JSON (hjson) text already uses ("//" or "#"), or None if it has no comments."""
    quote = False
    escaped = False
    found = None
    for index, char in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quote = False
        elif char == '"':
            quote = True
        elif char == "#":
            found = found or "#"
        elif char == "/" and text[index + 1 : index + 2] in ("/", "*"):
            return "//"
    return found


def _annotate(document: Document, diagnostics: list[Diagnostic]) -> tuple[str, int, list[tuple[Diagnostic, str]]]:
    source = document.source
    marker = "#" if document.kind in (TRAINING_YAML, ACCELERATE, SCRIPT) else _comment_marker(source.text)
    reference = _meaning(document.kind, source)
    continued = continued_lines(document)
    # where each finding's comment goes: (line, above) — above the first line of a `\`-continued
    # command (a comment inside it would end it), else at the end of the finding's own line
    places: dict[tuple[int, bool], list[Diagnostic]] = {}
    for diagnostic in diagnostics:
        line, _ = source.position(diagnostic.span.start)
        first, last = command_lines(line, continued)
        places.setdefault((first, True) if first != last else (line, False), []).append(diagnostic)
    text = source.text
    added = 0
    skipped: list[tuple[Diagnostic, str]] = []
    for line, above in sorted(places, reverse=True):  # from the end, so earlier offsets stay valid
        here = places[(line, above)]
        codes = sorted({d.code for d in here})
        current = SourceFile(source.path, text)
        if above:
            candidate = _comment_above(current, line, codes, marker, source.newline)
        else:
            start, end = current.line_start(line), current.line_end(line)
            candidate = _extend_or_append(text, start, end, codes, f"  {marker} dslint: disable=")
        if _meaning(document.kind, SourceFile(source.path, candidate)) != reference:
            where = "above this command" if above else "at the end of this line"
            skipped.extend((d, f"a comment {where} would change the file's content (it is inside a string or block)") for d in here)
            continue
        text = candidate
        added += len(codes)
    return text, added, skipped


def _own_line_directive(source: SourceFile, line: int):
    """The ``disable=`` comment standing alone on ``line``, or None."""
    start, end = source.line_start(line), source.line_end(line)
    for match in DIRECTIVE.finditer(source.text, start, end):
        if match.group(1) == "disable" and not source.text[start : match.start()].strip():
            return match
    return None


def _extend_or_append(text: str, start: int, end: int, codes: list[str], prefix: str) -> str:
    """Add ``codes`` to the line's ``disable=`` comment, or append ``prefix`` + codes at its end."""
    existing = [m for m in DIRECTIVE.finditer(text, start, end) if m.group(1) == "disable"]
    if existing:
        at = existing[-1].end(2)
        return text[:at] + "," + ",".join(codes) + text[at:]
    return text[:end] + prefix + ",".join(codes) + text[end:]


def _comment_above(source: SourceFile, line: int, codes: list[str], marker: str, newline: str) -> str:
    """``# dslint: disable=CODES`` on its own line above ``line`` (extending one already there)."""
    text = source.text
    if line > 1 and _own_line_directive(source, line - 1) is not None:
        return _extend_or_append(text, source.line_start(line - 1), source.line_end(line - 1), codes, "")
    start = source.line_start(line)
    body = text[start : source.line_end(line)]
    indent = body[: len(body) - len(body.lstrip(" \t"))]
    return text[:start] + f"{indent}{marker} dslint: disable={','.join(codes)}{newline}" + text[start:]


# ---- what must not change ------------------------------------------------------------------


def _meaning(kind: str, source: SourceFile):
    if kind == SCRIPT:
        return _shell_tokens(source)
    if kind in (DEEPSPEED, TRAINING_JSON):
        from dslint.documents.json_doc import parse_json

        root, problems, _ = parse_json(source)
    else:
        from dslint.documents.yaml_doc import parse_yaml

        root, problems = parse_yaml(source)
    return (bool(problems), _shape(root))


def _shape(node) -> Any:
    if node is None:
        return None
    if isinstance(node, Mapping):
        return ("map", tuple((e.key, e.merged, _shape(e.value)) for e in node.entries))
    if isinstance(node, Sequence):
        return ("seq", tuple(_shape(item) for item in node.items))
    if isinstance(node, Scalar):
        return ("scalar", type(node.value).__name__, repr(node.value))
    return (type(node).__name__, repr(node.to_python()))


def _shell_tokens(source: SourceFile) -> tuple:
    """Every token of the script except comments, with its type: what bash would run."""
    tree = parser("bash").parse(source.text.encode("utf-8"))
    tokens = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "comment":
            continue
        if node.child_count == 0:
            tokens.append((node.type, node.text))
        else:
            stack.extend(reversed(node.children))
    return (tree.root_node.has_error, tuple(tokens))
