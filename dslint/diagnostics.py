"""What rules produce (findings) and what the engine reports (diagnostics)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

from dslint.source import SourceFile, Span


class Severity(IntEnum):
    INFO = 1
    WARNING = 2
    ERROR = 3

    @classmethod
    def parse(cls, text: str) -> "Severity":
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r} (use error, warning or info)") from None

    @property
    def label(self) -> str:
        return self.name.lower()


SAFE = "safe"
UNSAFE = "unsafe"


@dataclass(frozen=True)
class Edit:
    """Replace ``source.text[start:end]`` with ``content``."""

    source: SourceFile
    start: int
    end: int
    content: str

    @classmethod
    def replace(cls, span: Span, content: str) -> "Edit":
        return cls(span.source, span.start, span.end, content)

    def __hash__(self) -> int:
        return hash((id(self.source), self.start, self.end, self.content))


@dataclass(frozen=True)
class Fix:
    """Edits that resolve a finding, with their title."""

    title: str
    edits: tuple[Edit, ...]
    applicability: str = SAFE
    # The edit is right whoever reads the file (`1e-4` -> `1.0e-4` is the same float to every YAML
    # reader), so it stands even where the reader is only assumed; other fixes are dropped there.
    any_reader: bool = False

    @classmethod
    def safe(cls, title: str, *edits: Edit, any_reader: bool = False) -> "Fix":
        return cls(title, tuple(edits), SAFE, any_reader)

    @classmethod
    def unsafe(cls, title: str, *edits: Edit, any_reader: bool = False) -> "Fix":
        return cls(title, tuple(edits), UNSAFE, any_reader)


@dataclass(frozen=True)
class Related:
    """Another place that explains a finding. ``span`` is None for values from the command line."""

    message: str
    span: Span | None = None
    origin: str | None = None  # e.g. "--world-size" when there is no file position


@dataclass
class Finding:
    """What a rule yields: where, what, and optionally how to fix it.

    Each text has one job, as in ruff. ``message`` is the headline: what is wrong, where, with
    which values, in one clause that fits a terminal line. ``note`` is this finding's evidence:
    what the consumer does with these values (the exception it raises, the source line that
    decides it). ``help`` is what to do when no fix does it; a fix's title is its help. The
    general why and the references live on the rule page (``dslint rule CODE``), not here.
    """

    span: Span
    message: str
    related: list[Related] = field(default_factory=list)
    fix: Fix | None = None
    # Other fixes a person may choose from; only ``fix`` is ever applied automatically.
    alternatives: list[Fix] = field(default_factory=list)
    # This finding's severity when it differs from the rule's default (a `severity` setting wins).
    severity: Severity | None = None
    note: str | None = None
    help: str | None = None


@dataclass
class Diagnostic:
    """A finding with its rule's identity and the severity in force."""

    span: Span
    code: str
    name: str
    severity: Severity
    message: str
    related: list[Related] = field(default_factory=list)
    fix: Fix | None = None
    alternatives: list[Fix] = field(default_factory=list)
    # The finding's note, then what the engine adds (the assumption a reader was guessed on).
    notes: list[str] = field(default_factory=list)
    help: str | None = None
    # The file whose document, launch or DeepSpeed use the rule judged (not reported; the launch
    # context of a subset of files keeps a context file's findings only where they involve a given one).
    producer: str | None = field(default=None, compare=False, repr=False)

    @property
    def path(self) -> str:
        return self.span.path

    def sort_key(self) -> tuple:
        return (self.span.path, self.span.start, self.code, self.message)
