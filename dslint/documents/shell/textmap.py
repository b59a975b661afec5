"""Text and positions of tree-sitter nodes: byte offsets in the text being read, as text and as Spans.

While the walker reads a string that ``eval``, ``bash -c`` or ``sbatch --wrap`` runs, ``data`` is
that string, and ``fixed_span``/``shift`` say where it stands in the file.
"""

from __future__ import annotations

from dslint.source import SourceFile, Span


class TextMap:
    def __init__(self, source: SourceFile, data: bytes):
        self.source = source
        self.data = data
        self.fixed_span: Span | None = None  # set while reading an eval'd string not written verbatim
        self.shift: int | None = None  # an eval'd string written verbatim: its start in the file
        self.ascii = len(data) == len(source.text)  # byte offsets are character offsets

    def span(self, node) -> Span:
        return self.span_bytes(node.start_byte, node.end_byte)

    def span_bytes(self, start: int, end: int) -> Span:
        if self.fixed_span is not None:
            return self.fixed_span
        if self.shift is not None:  # inside an eval'd string: byte offsets of that string
            data = self.data
            return Span(self.source, self.shift + len(data[:start].decode("utf-8", "replace")),
                        self.shift + len(data[:end].decode("utf-8", "replace")))
        if self.ascii:
            return Span(self.source, start, end)
        cho = self.source.char_offset
        return Span(self.source, cho(start), cho(end))

    def text(self, node) -> str:
        return self.text_bytes(node.start_byte, node.end_byte)

    def text_bytes(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8", "replace")

    def newline_between(self, start: int, end: int) -> bool:
        """Whether a newline (not a backslash-newline) stands between two byte offsets."""
        gap = self.data[start:end]
        if b"\n" not in gap:
            return False
        gap = gap.replace(b"\\\r\n", b"").replace(b"\\\n", b"")
        return b"\n" in gap
