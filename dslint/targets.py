"""What rules look at beyond single documents: a DeepSpeed config in the context of its use."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dslint.config import Setting
from dslint.documents.model import Document, Mapping

# Who reads the DeepSpeed config: None when no launch reaches it (a standalone file).
CONSUMERS = ("deepspeed", "hf", "accelerate", "swift", "llamafactory", "megatron")


@dataclass(eq=False)
class DeepSpeedUse:
    """One DeepSpeed config as one launch (or no launch) will use it."""

    document: Document
    config: Mapping
    world_size: Setting | None = None
    consumer: str | None = None
    launch: Any = None  # the launch plan that reaches it, when there is one
    reference: Any = None  # the Span that names the config in the launch (flag, YAML key)
    extra: dict = field(default_factory=dict)


# ---- suppression comments, for rules that judge them ------------------------------------------

# What became of one code in a suppression comment once every other selected rule had run:
USED = "used"  # it suppressed at least one finding
UNUSED = "unused"  # it names a rule that ran on the file, and suppressed nothing
UNKNOWN = "unknown"  # it names no rule that is installed
UNJUDGED = "unjudged"  # its rule did not run on the file (not selected, or failed), so nobody knows


@dataclass(eq=False)
class SuppressedCode:
    """One entry of ``# dslint: disable=A,B``: its text as written and where it is."""

    text: str
    span: Any  # dslint.source.Span
    suppressed: int = 0  # findings it suppressed in this run
    status: str = UNJUDGED

    def matches(self, code: str, name: str) -> bool:
        return self.text.lower() == "all" or self.text.upper() == code or self.text == name


@dataclass(eq=False)
class SuppressionComment:
    """A ``# dslint: disable=...`` (or ``// dslint: ...``) comment.

    ``span`` runs from the comment marker through the last code; ``codes_span`` covers the
    code list. ``lines`` are the lines it covers (its own, and the next one when it stands on a
    line of its own); a ``disable-file`` comment covers the whole file.
    """

    span: Any  # dslint.source.Span
    codes_span: Any
    codes: list[SuppressedCode]
    whole_file: bool = False
    lines: tuple[int, ...] = ()


@dataclass(eq=False)
class FileSuppressions:
    """Target ``suppressions``: one file's suppression comments after all other rules ran."""

    document: Document
    comments: list[SuppressionComment] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return self.document.kind
