"""Configs a launch script writes itself, read as the documents they are.

A Megatron-DeepSpeed or SLURM script often writes its DeepSpeed config a few lines before the
launch::

    cat <<EOT > $DS_CONFIG
    { "train_batch_size": $GLOBAL_BATCH, "zero_optimization": {"stage": $ZERO_STAGE} }
    EOT
    deepspeed pretrain_gpt.py ... --deepspeed_config $DS_CONFIG

The launch reads what the here-document wrote, with the script's variables expanded as bash
expands them when that line runs. Each such body becomes a document of its kind whose text is
the expanded body, positioned at the body's lines in the script (``SourceFile.origin`` maps it
back): its findings are reported at the script's lines, and a fix is kept only where the text it
edits stands in the script as written (not inside ``$GLOBAL_BATCH``).

A body with a part the script does not decide (``$(...)``, a variable only the caller sets, with
no default) is written, but its text is unknown: the file is there when the launch runs
(``Written.text_known`` False), and nothing is said about its content.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dslint.documents.model import DEEPSPEED, Document
from dslint.source import SourceFile, Span, TextOrigin

JSON_NAMES = (".json", ".jsonc", ".hjson")
YAML_NAMES = (".yaml", ".yml")


@dataclass(eq=False)
class Written:
    """A file the script writes with a here-document: ``cat <<EOF > f``, ``cat > f <<EOF``, ``tee f <<EOF``."""

    target: object  # the Word naming the file, as the script writes it
    at: int  # where the writing command starts: a launch after it reads what it wrote
    body: Span  # the here-document's body in the script
    source: SourceFile | None  # the text written, positioned at its lines in the script; None when unknown
    conditional: bool = False  # written in an `if`/`case` branch or after `&&`/`||`
    _documents: dict = field(default_factory=dict, repr=False)

    @property
    def text_known(self) -> bool:
        return self.source is not None

    @property
    def name(self) -> str | None:
        """The path as the script would write it (the caller's unset variables empty), or None."""
        word = self.target
        return word.value if word.value is not None else word.assumed

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
    """Every file ``script`` writes with a here-document, in the order the script writes them."""
    out = []
    for heredoc in script.heredocs:
        if heredoc.target is None or heredoc.command is None:
            continue
        source = _written_source(script.source, heredoc)
        out.append(Written(heredoc.target, heredoc.command.span.start, heredoc.span, source, heredoc.command.conditional))
    return out


def _written_source(script: SourceFile, heredoc) -> SourceFile | None:
    """The expanded body as a text whose lines are the script's lines (blank lines before it)."""
    located = heredoc.located
    if not located:
        return None
    values = []
    for value, assumed, _start, _end in located:
        text = value if value is not None else assumed
        if text is None:
            return None
        values.append(text)
    line, _ = script.position(located[0][2])
    prefix = "\n" * (line - 1)
    pieces = [(0, len(prefix), located[0][2], located[0][2], False)]
    at = len(prefix)
    for (_value, _assumed, start, end), text in zip(located, values, strict=True):
        pieces.append((at, at + len(text), start, end, text == script.text[start:end]))
        at += len(text)
    text = prefix + "".join(values)
    return SourceFile(path=script.path, text=text, newline=script.newline, origin=TextOrigin(script, tuple(pieces)))


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
