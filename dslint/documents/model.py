"""Parsed documents: values as the consumer sees them, each with the range it came from.

JSON and YAML both become the same small tree of ``Mapping``, ``Sequence`` and ``Scalar``
nodes. A mapping keeps every entry in order, duplicates included, because DeepSpeed
raises on duplicates while HF and PyYAML keep the last one; ``Mapping.get`` answers as the
consumer does (last one wins).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

from dslint.source import SourceFile, Span


@dataclass(eq=False)
class Node:
    """A value of a parsed JSON or YAML document, with where it stands."""

    span: Span

    def to_python(self) -> Any:
        raise NotImplementedError


@dataclass(eq=False)
class Scalar(Node):
    """A string, number, boolean or null."""

    value: Any
    # How the value was written: "quoted", "plain" (JSON literal or YAML plain scalar),
    # or "quoteless" (an hjson string without quotes: DeepSpeed reads `True` as "True").
    style: str = "plain"
    tag: str | None = None  # YAML resolver tag, e.g. tag:yaml.org,2002:float

    def to_python(self) -> Any:
        return self.value


@dataclass(eq=False)
class Entry:
    """One key of a mapping, with its value."""

    key: str
    key_span: Span
    value: Node
    merged: bool = False  # came in through a YAML `<<` merge key

    @property
    def span(self) -> Span:
        """From the start of the key to the end of the value."""
        return Span(self.key_span.source, self.key_span.start, max(self.key_span.end, self.value.span.end))


@dataclass(eq=False)
class Mapping(Node):
    """A JSON object or YAML mapping."""

    entries: list[Entry] = field(default_factory=list)
    # key -> its last entry, built on the first lookup (rules look keys up tens of thousands of
    # times per run); entries are never changed after parsing.
    _last: dict[str, Entry] | None = field(default=None, repr=False, compare=False)

    def entry(self, key: str) -> Entry | None:
        last = self._last
        if last is None:
            last = self._last = {item.key: item for item in self.entries}
        return last.get(key)

    def get(self, key: str) -> Node | None:
        found = self.entry(key)
        return found.value if found is not None else None

    def __contains__(self, key: str) -> bool:
        return self.entry(key) is not None

    def keys(self) -> list[str]:
        seen: dict[str, None] = {}
        for item in self.entries:
            seen[item.key] = None
        return list(seen)

    def value_of(self, key: str, default: Any = None) -> Any:
        node = self.get(key)
        return default if node is None else node.to_python()

    def to_python(self) -> dict:
        return {item.key: item.value.to_python() for item in self.entries}


@dataclass(eq=False)
class Sequence(Node):
    """A JSON array or YAML sequence."""

    items: list[Node] = field(default_factory=list)

    def to_python(self) -> list:
        return [item.to_python() for item in self.items]


@dataclass
class ParseProblem:
    """Why a document (or part of it) could not be read the way its consumer reads it."""

    span: Span
    message: str
    note: str | None = None  # what the complaint likely means (a template placeholder never filled in)


# What a file is to dslint; decided by content, with the file name only as a tie-breaker.
DEEPSPEED = "deepspeed-json"
TRAINING_YAML = "training-yaml"
TRAINING_JSON = "training-json"
ACCELERATE = "accelerate-yaml"
SCRIPT = "launch-script"


@dataclass(eq=False)
class Document:
    """A parsed file: its source, its kind and its tree."""

    source: SourceFile
    kind: str
    root: Node | None
    problems: list[ParseProblem] = field(default_factory=list)
    # For training YAML/JSON: which trainer the keys suggest (hf, swift, llamafactory, axolotl, ...).
    flavor: str | None = None
    # True when the text parses as strict JSON (HF and accelerate read DeepSpeed files with json).
    strict_json: bool = True
    # For launch scripts: the statically read script (dslint.documents.shell.Script).
    script: Any = None
    # For launch scripts: the files it writes with here-documents (dslint.documents.written.Written).
    written: list = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.source.path

    @property
    def mapping(self) -> Mapping | None:
        return self.root if isinstance(self.root, Mapping) else None


def walk(node: Node, path: tuple = ()) -> Iterator[tuple[tuple, Node]]:
    """Every node under ``node`` with its key path (keys and list indexes)."""
    stack = [(path, node)]
    while stack:
        here, current = stack.pop()
        yield here, current
        if isinstance(current, Mapping):
            for item in reversed(current.entries):
                if not item.merged:
                    stack.append((here + (item.key,), item.value))
        elif isinstance(current, Sequence):
            for index in range(len(current.items) - 1, -1, -1):
                stack.append((here + (index,), current.items[index]))
