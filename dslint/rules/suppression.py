"""Rules about dslint's own suppression comments."""

from __future__ import annotations

from dslint.diagnostics import Edit, Finding, Fix
from dslint.documents.model import SCRIPT, Document, Mapping, Scalar, walk
from dslint.rule import rule
from dslint.targets import UNKNOWN, UNUSED, FileSuppressions, SuppressionComment

_YAML_KINDS = ("training-yaml", "accelerate-yaml")


@rule("DS004", "unused-suppression", severity="warning", target="suppressions", fix="safe")
def unused_suppression(file: FileSuppressions, context):
    """A `# dslint: disable=...` comment (or a code in it) suppresses nothing.

    ## What it checks
    Every `# dslint: disable=CODE` and `# dslint: disable-file=CODE` comment (and the `//`
    comments DeepSpeed's hjson reader accepts), after all other rules have run: a code whose
    rule ran on the file but reported nothing the comment covers is unused, and a code that
    names no installed rule is unknown. Codes of rules that did not run (not selected, or a
    plugin that failed) are not judged, and neither are codes naming this rule: write
    `disable=DS101,DS004` to keep a suppression that is unused on purpose.

    ## Why it matters
    A suppression outlives the problem it hid: once the config is fixed, the stale comment
    silently hides the next, different mistake of the same rule on that line. A misspelt
    code (`disable=DS1O1`) suppresses nothing at all while looking like it does.

    ## Example
    ```yaml
    learning_rate: 2.0e-5  # dslint: disable=DS101
    ```
    Use instead:
    ```yaml
    learning_rate: 2.0e-5
    ```

    ## Fix safety
    The fix is safe: it removes the whole comment when none of its codes is used (the line
    too when the comment stands alone on it), otherwise only the unused codes, and it leaves
    the file's values unchanged. Comments that dslint cannot tell apart from text inside a
    value (a quoted string in a shell script, for instance) are not reported.
    """
    for comment in file.comments:
        unused = [code for code in comment.codes if code.status in (UNUSED, UNKNOWN)]
        if not unused or not _is_comment(file.document, comment):
            continue
        where = _where(file.document, comment)
        phrases = [
            f"'{code.text}' is not a rule code or name" if code.status == UNKNOWN else f"{_label(code.text)} suppresses nothing {where}"
            for code in unused
        ]
        help = "`dslint rules` lists the codes and names" if any(code.status == UNKNOWN for code in unused) else None
        kept = [code for code in comment.codes if code not in unused]
        if not kept:
            edit = _remove_comment(file.document, comment)
            yield Finding(
                comment.span,
                f"unused suppression comment: {'; '.join(phrases)}",
                fix=Fix.safe("Remove the unused suppression comment", edit) if edit else None,
                help=help,
            )
            continue
        separator = ", " if ", " in comment.codes_span.text else ","
        edit = Edit.replace(comment.codes_span, separator.join(code.text for code in kept))
        names = ", ".join(code.text for code in unused)
        yield Finding(
            unused[0].span,
            f"unused code{'s' if len(unused) > 1 else ''} in suppression comment: {'; '.join(phrases)}",
            fix=Fix.safe(f"Remove {names} from the suppression comment", edit),
            help=help,
        )


def _label(code: str) -> str:
    return f"'{code}'" if code.lower() == "all" else code


def _where(document: Document, comment: SuppressionComment) -> str:
    if comment.whole_file:
        return "in this file"
    if len(comment.lines) > 2:  # above a `\`-continued command: all of its lines
        return f"on the command below it (lines {comment.lines[1]}-{comment.lines[-1]})"
    return "on this line or the next" if len(comment.lines) > 1 else "on this line"


def _is_comment(document: Document, comment: SuppressionComment) -> bool:
    """Is the match a comment of the file's language, not text inside a value?"""
    source = comment.span.source
    text = source.text
    start = comment.span.start
    line, _ = source.position(start)
    before = text[source.line_start(line) : start]
    if document.root is not None:
        for _, node in walk(document.root):
            if isinstance(node, Scalar) and node.span.start <= start < node.span.end:
                return False
            if isinstance(node, Mapping) and any(e.key_span.start <= start < e.key_span.end for e in node.entries):
                return False
    if document.kind == SCRIPT or document.kind in _YAML_KINDS:
        if not text.startswith("#", start) or (before and before[-1] not in " \t"):
            return False
    if document.root is None and _open_quote(before, shell=document.kind == SCRIPT):
        return False
    return True


def _open_quote(text: str, shell: bool) -> bool:
    """Does ``text`` (the start of a line) end inside a quoted string?"""
    quote = None
    escaped = False
    for char in text:
        if escaped:
            escaped = False
        elif char == "\\" and quote != "'":
            escaped = True
        elif quote is None and (char == '"' or (char == "'" and shell)):
            quote = char
        elif char == quote:
            quote = None
    return quote is not None


def _remove_comment(document: Document, comment: SuppressionComment) -> Edit | None:
    """Delete the comment to the end of its line (the whole line when nothing else is on it)."""
    source = comment.span.source
    text = source.text
    line, _ = source.position(comment.span.start)
    line_start, line_end = source.line_start(line), source.line_end(line)
    if "*/" in text[comment.span.end : line_end]:
        return None  # inside a /* block comment */: leave it to a person
    if text[line_start : comment.span.start].strip():
        start = comment.span.start
        while start > line_start and text[start - 1] in " \t":
            start -= 1
        return Edit(source, start, line_end, "")
    if text.startswith("\r\n", line_end):
        return Edit(source, line_start, line_end + 2, "")
    if text.startswith("\n", line_end):
        return Edit(source, line_start, line_end + 1, "")
    if line_start > 0:  # the last line, without a newline: take the newline before it
        before = 2 if text[max(0, line_start - 2) : line_start] == "\r\n" else 1
        return Edit(source, line_start - before, line_end, "")
    return Edit(source, line_start, line_end, "")
