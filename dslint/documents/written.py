"""Configs a launch script writes itself, read as the documents they are.

A Megatron-DeepSpeed or SLURM script often writes its DeepSpeed config a few lines before the
launch, with a here-document::

    cat <<EOT > $DS_CONFIG
    { "train_batch_size": $GLOBAL_BATCH, "zero_optimization": {"stage": $ZERO_STAGE} }
    EOT
    deepspeed pretrain_gpt.py ... --deepspeed_config $DS_CONFIG

or by filling in a template with ``sed``::

    sed "s/CONFIG_BATCH_SIZE/${GLOBAL_BATCH_SIZE}/" ds_config_TEMPLATE.json \\
        | sed "s/ZERO_STAGE/${ZERO_STAGE}/" > ${config_json}

The launch reads what was written: the here-document's body with the script's variables expanded
as bash expands them when that line runs, or the template with each ``s/PATTERN/REPLACEMENT/``
made. That text becomes a document of its kind, positioned where its characters are written
(``SourceFile.origin``): the body's lines in the script, the template's lines in the template, a
replacement at the ``sed`` expression that makes it. Its findings are reported there; a fix is
kept only where the text it edits stands as written (not inside ``$GLOBAL_BATCH``), and never in
a template, which other scripts fill in with other values.

A text with a part the script does not decide (``$(...)``, a variable it does not set, which its
caller, a file it sources or a function it calls may set, a default the caller may override, a
``sed`` pattern that is a regular expression) is written, but unknown: the file is
there when the launch runs (``Written.text_known`` False), and nothing is said about its content.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dslint.documents.model import DEEPSPEED, Document
from dslint.source import SourceFile, Span, TextOrigin

JSON_NAMES = (".json", ".jsonc", ".hjson")
YAML_NAMES = (".yaml", ".yml")


@dataclass(frozen=True)
class Substitution:
    """``s/PATTERN/REPLACEMENT/[g]`` of a ``sed`` that fills in a template, both taken literally."""

    pattern: str
    replacement: str
    every: bool  # the g flag: every occurrence on a line, not only the first
    span: Span  # the expression in the script


@dataclass(eq=False)
class Written:
    """A file the script writes before its launches: a here-document (``cat <<EOF > f``), or a
    template filled in by ``sed`` (``template`` and ``substitutions``)."""

    target: object  # the Word naming the file, as the script writes it
    at: int  # where the writing command starts: a launch after it reads what it wrote
    body: Span  # the here-document's body, or the writing command, in the script
    source: SourceFile | None  # the text written, positioned where it is written; None when unknown
    conditional: bool = False  # written in an `if`/`case` branch or after `&&`/`||`
    template: object = None  # the Word naming the template sed reads
    substitutions: tuple[Substitution, ...] = ()
    template_document: Document | None = None  # the template, once a launch's lookup found it
    _documents: dict = field(default_factory=dict, repr=False)

    @property
    def text_known(self) -> bool:
        return self.source is not None

    @property
    def name(self) -> str | None:
        """The path as the script would write it (the caller's unset variables empty), or None."""
        word = self.target
        return word.value if word.value is not None else word.assumed

    @property
    def template_name(self) -> str | None:
        return None if self.template is None else self.template.value

    def fill(self, template: Document) -> None:
        """The text: ``template`` (the file sed reads, found by the launch's lookup) filled in."""
        if self.source is None and self.template is not None:
            self.template_document = template
            self.source = _filled(template.source, self.substitutions)
            self._documents.clear()

    def read(self) -> list[Document]:
        """The documents made of it so far, one per kind a reader asked for."""
        return [document for document in self._documents.values() if document is not None]

    def document(self, expect: str | None = None) -> Document | None:
        """The written text as a document: of the kind a launch says (``expect``), else by its name and keys."""
        if self.source is None:
            return None
        if expect not in self._documents:
            self._documents[expect] = _read(self.source, self.name or "", expect)
        return self._documents[expect]


def written_files(script) -> list[Written]:
    """Every file ``script`` writes with a here-document or an output redirection, in script order."""
    out = []
    # A write inside a function body happens when the function is called, not where it is written:
    # not placed here (dslint.launch.prior follows calls, for whether the file is there).
    for heredoc in script.heredocs:
        if heredoc.target is None or heredoc.command is None or heredoc.command.in_function is not None:
            continue
        source = _written_source(script.source, heredoc)
        out.append(Written(heredoc.target, heredoc.command.span.start, heredoc.span, source, heredoc.command.conditional))
    for write in script.redirects:
        if write.heredoc or write.command is None or write.command.in_function is not None:
            continue  # a here-document's text is above; a bare `> f` makes an empty file
        # any other output written into the file: it is there, with a text dslint does not know
        template, substitutions = (None if write.append else _sed_template(write.pipeline)) or (None, ())
        first = write.pipeline[0] if write.pipeline else write.command
        span = Span(first.span.source, first.span.start, write.command.span.end)
        out.append(Written(write.target, first.span.start, span, None, first.conditional, template, substitutions))
    out.sort(key=lambda written: written.at)
    return out


# ---- here-documents ----


def _written_source(script: SourceFile, heredoc) -> SourceFile | None:
    """The expanded body as a text whose lines are the script's lines (blank lines before it)."""
    located = heredoc.located
    if not located:
        return None
    values = []
    for value, _assumed, _start, _end in located:
        if value is None:
            # only the run decides it: a variable the script does not set (its caller, a sourced file
            # or a function it calls may; bash's arithmetic would read it as 0), $(...), or a
            # default the caller may override
            return None
        values.append(value)
    line, _ = script.position(located[0][2])
    prefix = "\n" * (line - 1)
    pieces = [(0, len(prefix), script, located[0][2], located[0][2], False)]
    at = len(prefix)
    for (_value, _assumed, start, end), text in zip(located, values, strict=True):
        pieces.append((at, at + len(text), script, start, end, text == script.text[start:end]))
        at += len(text)
    text = prefix + "".join(values)
    return SourceFile(path=script.path, text=text, newline=script.newline, origin=TextOrigin(tuple(pieces)))


# ---- sed templates ----

_REGEX = re.compile(r"[.\[\]*^$+?(){}|\\]")


def _sed_template(pipeline) -> tuple[object, tuple[Substitution, ...]] | None:
    """(the template's Word, the substitutions) of ``sed s/A/B/ T | sed s/C/D/ ... > f`` (or
    ``cat T | sed ...``); None for any other pipeline, or a sed whose expression is not a plain
    ``s/literal/literal/``: its output is then not known."""
    if not pipeline or any(command.basename not in ("sed", "cat") for command in pipeline):
        return None
    template = None
    substitutions: list[Substitution] = []
    for index, command in enumerate(pipeline):
        read = _cat(command) if command.basename == "cat" else _sed(command)
        if read is None:
            return None
        files, found = read
        if (index == 0) != bool(files) or len(files) > 1 or (command.basename == "cat" and index > 0):
            return None  # the template is the first command's one file; the others filter
        template = files[0] if index == 0 else template
        substitutions.extend(found)
    return (template, tuple(substitutions)) if substitutions else None


def _cat(command):
    if any((w.value or "-").startswith("-") for w in command.args):
        return None
    return list(command.args), []


def _sed(command):
    """(file operands, substitutions) of one ``sed`` command, or None when it does more."""
    expressions, files = [], []
    extended = False
    args = list(command.args)
    while args:
        word = args.pop(0)
        value = word.value
        if value is None:
            return None
        if value in ("-e", "--expression"):
            if not args:
                return None
            expressions.append(args.pop(0))
        elif value.startswith("--expression="):
            return None  # positions inside the word are not worth the case
        elif value in ("-E", "-r", "--regexp-extended"):
            extended = True
        elif value.startswith("-"):
            return None  # -i edits a file in place, -n prints nothing by default, ...
        elif not expressions and not files and not any(v.value in ("-e", "--expression") for v in command.args):
            expressions.append(word)
        else:
            files.append(word)
    out = []
    for word in expressions:
        substitution = _substitution(word, extended)
        if substitution is None:
            return None
        out.append(substitution)
    return files, out


def _substitution(word, extended: bool) -> Substitution | None:
    """``s/PATTERN/REPLACEMENT/[g]`` whose pattern matches one literal text and whose replacement
    is literal (no ``&``, no back-references), else None."""
    text = word.value
    if text is None or len(text) < 4 or text[0] != "s" or text[1] in "\\\n":
        return None
    parts = _split_escaped(text[2:], text[1])
    if parts is None or len(parts) != 3 or parts[2] not in ("", "g"):
        return None  # several commands, or other flags
    pattern = _literal_pattern(parts[0], text[1], extended)
    replacement = _literal_replacement(parts[1], text[1])
    if not pattern or replacement is None:
        return None
    return Substitution(pattern, replacement, parts[2] == "g", word.span)


def _split_escaped(text: str, delimiter: str) -> list[str] | None:
    """The parts between unescaped delimiters, escapes kept."""
    parts, current, index = [], [], 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            current.append(text[index : index + 2])
            index += 2
            continue
        if char == delimiter:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
        index += 1
    parts.append("".join(current))
    return parts


# Characters special in a sed regular expression unescaped (POSIX basic; -E adds the second set),
# and the ones a backslash makes literal.
_BASIC_SPECIAL = set(".[]*^$")
_EXTENDED_SPECIAL = set("(){}+?|")


def _literal_pattern(pattern: str, delimiter: str, extended: bool) -> str | None:
    """The text a sed pattern matches when it matches one literal text (``\\${zero_stage}`` is
    ``${zero_stage}`` in a basic expression), else None."""
    special = _BASIC_SPECIAL | (_EXTENDED_SPECIAL if extended else set())
    # an escaped special character, backslash or delimiter is itself; \n, \w, \( (a group) are not literal
    return _literal(pattern, special, special | {"\\", delimiter})


def _literal_replacement(replacement: str, delimiter: str) -> str | None:
    """The text a sed replacement writes when it has no ``&`` and no back-reference (``\\1``)."""
    return _literal(replacement, {"&"}, {"\\", delimiter, "&"})


def _literal(text: str, refused: set, escapable: set) -> str | None:
    """``text`` with its backslash escapes undone; None when it holds a character of ``refused``
    unescaped, or escapes one not in ``escapable``."""
    out, index = [], 0
    while index < len(text):
        char = text[index]
        if char == "\\":
            escaped = text[index + 1 : index + 2]
            if escaped not in escapable:
                return None
            out.append(escaped)
            index += 2
            continue
        if char in refused:
            return None
        out.append(char)
        index += 1
    return "".join(out)


def _filled(template: SourceFile, substitutions: tuple[Substitution, ...]) -> SourceFile:
    """The template's text with each substitution made, in order, as sed makes them line by line."""
    pieces = [(template.text, template, 0, len(template.text), True)]
    for substitution in substitutions:
        pieces = _substitute(pieces, substitution)
    out, at = [], 0
    for text, source, start, end, same in pieces:
        out.append((at, at + len(text), source, start, end, same))
        at += len(text)
    text = "".join(piece[0] for piece in pieces)
    return SourceFile(path=template.path, text=text, newline=template.newline, origin=TextOrigin(tuple(out), fixable=False))


def _substitute(pieces: list[tuple], substitution: Substitution) -> list[tuple]:
    """One ``s/pattern/replacement/[g]`` over the text's pieces: a match inside a literal run of
    the template is cut out and replaced (a match across two pieces is not seen)."""
    out: list[tuple] = []
    done_lines: set[int] = set()
    line = 0
    pattern = substitution.pattern
    for text, source, start, end, same in pieces:
        if not same:
            out.append((text, source, start, end, same))
            line += text.count("\n")
            continue
        cursor = search = 0  # cursor: the end of what is placed in out; search: where to look next
        while True:
            found = text.find(pattern, search)
            if found == -1:
                break
            at_line = line + text.count("\n", 0, found)
            if not substitution.every and at_line in done_lines:
                search = text.find("\n", found) + 1
                if search == 0:
                    break
                continue
            done_lines.add(at_line)
            if found > cursor:
                out.append((text[cursor:found], source, start + cursor, start + found, True))
            span = substitution.span
            out.append((substitution.replacement, span.source, span.start, span.end, False))
            cursor = search = found + len(pattern)
        if cursor < len(text):
            out.append((text[cursor:], source, start + cursor, end, True))
        line += text.count("\n")
    return out


def _read(source: SourceFile, name: str, expect: str | None) -> Document | None:
    from dslint.documents import Skipped, read_written

    lowered = name.lower()
    if lowered.endswith(JSON_NAMES) or (expect == DEEPSPEED) or (not lowered.endswith(YAML_NAMES) and source.text.lstrip().startswith("{")):
        kind = "json"
    elif lowered.endswith(YAML_NAMES) or expect is not None:
        kind = "yaml"
    else:
        return None
    try:
        return read_written(source, kind, expect)
    except Skipped:
        return None
