"""Source files as dslint sees them: decoded text plus everything needed to map offsets back.

Every position inside dslint is a character offset into ``SourceFile.text``. Lines and
columns (1-based, counted in characters) are derived here and nowhere else, and so is the
conversion from the UTF-8 byte offsets that tree-sitter reports.
"""

from __future__ import annotations

import bisect
import codecs
from dataclasses import dataclass, field

MAX_FILE_BYTES = 10 * 1024 * 1024
_ANCHOR_GAP = 4096  # bytes between the (byte, character) pairs char_offset remembers


class DecodeError(Exception):
    """The bytes are not text dslint (or the consumer) can read."""

    def __init__(self, message: str, line: int = 1, column: int = 1):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


def describe_encoding(data: bytes) -> str | None:
    """What undecodable bytes are, when that is more than "invalid UTF-8": UTF-16/32 (a BOM, or
    NULs between ASCII letters), or binary (NUL bytes). None for text that is just not UTF-8."""
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return f"UTF-32 text (BOM {data[:4].hex(' ')})"
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return f"UTF-16 text (BOM {data[:2].hex(' ')})"
    head = data[:4096]
    nul = head.find(b"\x00")
    if nul == -1:
        return None
    if len(head) >= 8:
        for width, label in ((4, "UTF-32"), (2, "UTF-16")):
            for phase in range(width):
                ascii_lane = head[phase::width]
                other = bytes(b for i, b in enumerate(head) if i % width != phase)
                if other and not other.strip(b"\x00") and ascii_lane.strip(b"\x00") and all(32 <= b < 127 or b in (9, 10, 13) for b in ascii_lane):
                    return f"{label} text without a BOM"
    return f"binary file (NUL byte at offset {nul})"


@dataclass(frozen=True)
class TextOrigin:
    """Where a text made from other files' text stands in them: a config a script writes with a
    here-document (its variables expanded), or a template the script's ``sed`` fills in.

    ``pieces``: (start, end) in the made text, the file and (start, end) there, and whether the
    two ranges hold the same characters (a literal run) or not (``$GLOBAL`` written as ``64``).
    ``fixable``: an edit of a literal run is right for every launch that reads the made text
    (False for a template other scripts fill in with other values).
    """

    pieces: tuple[tuple[int, int, "SourceFile", int, int, bool], ...]
    fixable: bool = True

    @property
    def source(self) -> "SourceFile":
        """The file the text is mostly written in (its first piece's)."""
        return self.pieces[0][2]

    def _piece(self, offset: int) -> int:
        return max(bisect.bisect_right(self.pieces, offset, key=lambda piece: piece[0]) - 1, 0)

    def place(self, start: int, end: int) -> tuple["SourceFile", int, int, bool]:
        """The file and (start, end) there of a range of the made text, and whether the text there
        is the same (an edit of the range can be made there): both ends in literal runs of one
        file, and every run between them literal. An end inside an expansion widens to the whole
        expansion; a range across files is placed at its start's piece."""
        first, last = self._piece(start), self._piece(max(end - 1, start))
        a0, _a1, source, s0, s1, exact0 = self.pieces[first]
        b0, _b1, other, t0, t1, exact1 = self.pieces[last]
        source_start = s0 + (start - a0) if exact0 else s0
        if other is not source:
            return source, source_start, max(s1, source_start), False
        source_end = t0 + (end - b0) if exact1 else t1
        if end <= start:
            source_end = source_start
        same = all(piece[5] for piece in self.pieces[first : last + 1])
        return source, max(source_start, s0), max(source_end, source_start), same


@dataclass
class SourceFile:
    """A file's text, with line positions."""

    path: str
    text: str
    bom: bool = False
    newline: str = "\n"
    origin: TextOrigin | None = None  # a text a script writes: where it stands in the script
    _line_starts: list[int] = field(default_factory=list, repr=False)
    _utf8: bytes | None = field(default=None, repr=False)
    _byte_line_starts: list[int] | None = field(default=None, repr=False)  # and remembered offsets (char_offset)
    _char_anchors: list[int] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        starts = [0]
        find = self.text.find
        pos = find("\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = find("\n", pos + 1)
        self._line_starts = starts

    def __getstate__(self) -> dict:
        """Pickled (the run cache) without what is derived from the text and rebuilt on demand."""
        state = dict(self.__dict__)
        state.update(_utf8=None, _byte_line_starts=None, _char_anchors=[])
        return state

    @classmethod
    def from_bytes(cls, path: str, data: bytes) -> "SourceFile":
        bom = data.startswith(codecs.BOM_UTF8)
        body = data[3:] if bom else data
        if b"\x00" in body[:8192]:
            raise DecodeError("binary file (contains NUL bytes)")
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            prefix = body[: exc.start].decode("utf-8", "replace")
            line = prefix.count("\n") + 1
            column = len(prefix) - (prefix.rfind("\n") + 1) + 1
            raise DecodeError(
                f"invalid UTF-8 (byte 0x{body[exc.start]:02x} at offset {exc.start + (3 if bom else 0)})",
                line,
                column,
            ) from None
        newline = "\r\n" if "\r\n" in text[:65536] else "\n"
        return cls(path=path, text=text, bom=bom, newline=newline)

    @property
    def virtual(self) -> bool:
        """No file behind it: an ms-swift preset or inline JSON, named like ``<ms-swift preset zero2>``.

        Findings inside it are reported where the launch names it (see the engine)."""
        return self.path.startswith("<")

    def to_bytes(self, text: str | None = None) -> bytes:
        body = (self.text if text is None else text).encode("utf-8")
        return codecs.BOM_UTF8 + body if self.bom else body

    # ---- offsets, lines and columns -------------------------------------------------

    @property
    def utf8(self) -> bytes:
        if self._utf8 is None:
            self._utf8 = self.text.encode("utf-8")
        return self._utf8

    @property
    def line_count(self) -> int:
        return len(self._line_starts)

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a character offset; column counts characters."""
        offset = max(0, min(offset, len(self.text)))
        index = bisect.bisect_right(self._line_starts, offset) - 1
        return index + 1, offset - self._line_starts[index] + 1

    def offset(self, line: int, column: int) -> int:
        """Character offset of a 1-based (line, column); clamps to the text."""
        if line < 1:
            return 0
        if line > len(self._line_starts):
            return len(self.text)
        start = self._line_starts[line - 1]
        end = self.line_end(line)
        return min(start + max(column, 1) - 1, end)

    def line_start(self, line: int) -> int:
        return self._line_starts[line - 1]

    def line_end(self, line: int) -> int:
        """Offset just past the line's content (before its newline)."""
        if line < len(self._line_starts):
            end = self._line_starts[line] - 1
        else:
            end = len(self.text)
        if end > self._line_starts[line - 1] and self.text[end - 1 : end] == "\r":
            end -= 1
        return end

    def line_text(self, line: int) -> str:
        return self.text[self.line_start(line) : self.line_end(line)]

    def char_offset(self, byte_offset: int) -> int:
        """Character offset of a UTF-8 byte offset (tree-sitter reports bytes).

        Counted from the nearest known (byte, character) pair below it: the line starts, plus a
        pair remembered every few KB, so that the offsets of one long line (a minified JSON
        vocabulary) cost a short decode each instead of one from the start of the line.
        """
        if len(self.utf8) == len(self.text):
            return byte_offset
        if self._byte_line_starts is None:
            data = self.utf8
            starts = [0]
            pos = data.find(b"\n")
            while pos != -1:
                starts.append(pos + 1)
                pos = data.find(b"\n", pos + 1)
            self._byte_line_starts = starts
            self._char_anchors = list(self._line_starts)
        index = bisect.bisect_right(self._byte_line_starts, byte_offset) - 1
        byte_start, char_start = self._byte_line_starts[index], self._char_anchors[index]
        count = len(self.utf8[byte_start:byte_offset].decode("utf-8", "replace"))
        if byte_offset - byte_start > _ANCHOR_GAP:  # tree-sitter offsets fall on character boundaries
            self._byte_line_starts.insert(index + 1, byte_offset)
            self._char_anchors.insert(index + 1, char_start + count)
        return char_start + count


@dataclass(frozen=True)
class Span:
    """A half-open range of character offsets in one source file."""

    source: SourceFile
    start: int
    end: int

    @property
    def path(self) -> str:
        return self.source.path

    @property
    def text(self) -> str:
        return self.source.text[self.start : self.end]

    @property
    def virtual(self) -> bool:
        return self.source.virtual

    def where(self) -> str:
        """``line:column`` of the start, 1-based, as messages and reprs print a position."""
        line, column = self.source.position(self.start)
        return f"{line}:{column}"

    def __hash__(self) -> int:  # SourceFile is mutable; identity is enough here
        return hash((id(self.source), self.start, self.end))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Span)
            and other.source is self.source
            and other.start == self.start
            and other.end == self.end
        )
