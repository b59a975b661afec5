"""DeepSpeed JSON, read the way DeepSpeed reads it.

DeepSpeed loads a config path with ``hjson.load`` (deepspeed/runtime/config.py:443), so the
values come from hjson: comments, trailing commas and quoteless strings are accepted, and
``True`` on its own line is the *string* "True". hjson gives no positions, so tree-sitter-json
supplies them: the two trees are aligned by key path. Where tree-sitter cannot follow hjson-only
syntax, the key is located by a text search inside its parent, then by the parent itself.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any, Callable

from dslint.documents.model import Entry, Mapping, Node, ParseProblem, Scalar, Sequence
from dslint.documents.treesitter import parser
from dslint.source import SourceFile, Span

MAX_DEPTH = 64

class _Pairs(list):
    """hjson object_pairs_hook result: keeps every (key, value) pair, duplicates included."""


class TooDeep(Exception):
    pass


def _hjson_float(text: str):
    """A JSON number with a fraction or exponent as hjson reads it: whole values below 1e10
    become ints (hjson/decoder.py:255-256); an infinite one raises OverflowError, as in hjson."""
    value = float(text)
    if int(value) == value and abs(value) < 1e10:
        return int(value)
    return value


def _not_strict_json(name: str):
    raise ValueError(f"{name} is not JSON")


def load_values(text: str) -> Any:
    """Values exactly as hjson returns them, objects as ``_Pairs`` lists.

    Strict JSON (most configs) is read by the C ``json`` parser with hjson's number rule, which
    gives hjson's values about ten times faster; anything else (comments, quoteless values,
    NaN, errors) goes to hjson itself, whose messages and values are DeepSpeed's.
    """
    import json

    try:
        return json.loads(text, object_pairs_hook=_Pairs, parse_float=_hjson_float, parse_constant=_not_strict_json)
    except (ValueError, OverflowError):
        pass
    import hjson

    return hjson.loads(text, object_pairs_hook=_Pairs)


def parse_json(source: SourceFile) -> tuple[Node | None, list[ParseProblem], bool]:
    """Returns (root, problems, strict_json)."""
    text = source.text
    problems: list[ParseProblem] = []
    if not text.strip():
        return None, [ParseProblem(Span(source, 0, len(text)), "empty file: DeepSpeed cannot read an empty config")], False
    depth = _max_bracket_depth(text)
    if depth > MAX_DEPTH:
        return None, [ParseProblem(Span(source, 0, min(len(text), 1)), f"nesting is {depth} levels deep; dslint reads at most {MAX_DEPTH}")], False
    try:
        values = load_values(text)
    except RecursionError:
        return None, [ParseProblem(Span(source, 0, 1), "nesting too deep to read")], False
    except Exception as exc:  # noqa: BLE001 - hjson raises HjsonDecodeError (a ValueError); be defensive
        offset = getattr(exc, "pos", None)
        if not isinstance(offset, int):
            offset = 0
        message = getattr(exc, "msg", None) or str(exc)
        if "%r" in message:  # hjson leaves some messages unformatted; str(exc) has them filled in
            message = str(exc).split(": line ")[0]
        message = _ADVICE.sub("", message)  # hjson's general advice: the headline must fit a line
        offset = min(offset, len(text))
        special = _bare_special(text)
        if special is not None:  # the loader's complaint points past it, often at the end of the file
            start, token = special
            problems.append(ParseProblem(Span(source, start, start + len(token)),
                                         f"{token} is not JSON: DeepSpeed's hjson loader reads it as text and fails ({message})"))
            return None, problems, False
        problems.append(ParseProblem(Span(source, offset, min(offset + 1, len(text))), f"not readable by DeepSpeed's hjson loader: {message}"))
        return None, problems, False

    tree = parser("json").parse(source.utf8)
    ts_root = _first_value(tree.root_node)
    strict = not tree.root_node.has_error and _strict_json(text)
    builder = _Builder(source)
    try:
        root = builder.build(values, ts_root, Span(source, 0, len(text)), 0)
    except (TooDeep, RecursionError):
        return None, [ParseProblem(Span(source, 0, 1), f"nesting deeper than {MAX_DEPTH} levels; not linted")], strict
    return root, problems, strict


_ADVICE = re.compile(r" \(check your syntax[^)]*\)")
# A quoted string, or NaN / Infinity where a value stands (Python's json.load reads them as floats;
# hjson reads a quoteless value to the end of its line, closing brackets and all).
_SPECIAL_TOKENS = re.compile(r'"(?:[^"\\\n]|\\.)*"|(?<=[:\[,\s])(-?Infinity|NaN)(?=\s*[,}\]])')


def _bare_special(text: str) -> tuple[int, str] | None:
    """(offset, token) of the first NaN or Infinity written as a value outside a string, when
    they are why the loader fails: with each of them read as null, it reads the file."""
    found = [(m.start(1), m.group(1)) for m in _SPECIAL_TOKENS.finditer(text) if m.group(1)]
    if not found:
        return None
    pieces, last = [], 0
    for start, token in found:
        pieces += [text[last:start], "null"]
        last = start + len(token)
    try:
        load_values("".join(pieces) + text[last:])
    except Exception:  # noqa: BLE001 - any failure: something else breaks the file too
        return None
    return found[0]


def _strict_json(text: str) -> bool:
    import json

    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _max_bracket_depth(text: str) -> int:
    # Cheap upper bound on nesting (brackets inside strings count too; only used as a guard).
    if len(text) < 2 * MAX_DEPTH:
        return 0
    depth = best = 0
    for char in re.findall(r"[\[\]{}]", text):
        if char in "[{":
            depth += 1
            if depth > best:
                best = depth
        else:
            depth = max(0, depth - 1)
    return best


def _first_value(node):
    for child in node.named_children:
        if child.type not in ("comment", "ERROR"):
            return child
    return None


_VALUE_TYPES = {"object", "array", "string", "number", "true", "false", "null"}


# What can hide a bracket in hjson text: strings (''' multi-line ones too) and comments.
_BRACKET_TOKENS = re.compile(
    r"'''.*?(?:'''|\Z)|\"(?:[^\"\\\n]|\\.)*\"?|'(?:[^'\\\n]|\\.)*'?|#[^\n]*|//[^\n]*|/\*.*?(?:\*/|\Z)|[{}\[\]]",
    re.DOTALL,
)


def _bracket_pairs(text: str) -> dict[int, int]:
    """Offset of every opening bracket → offset just past its closing one (strings and comments skipped)."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for token in _BRACKET_TOKENS.finditer(text):
        char = text[token.start()]
        if char in "{[":
            stack.append(token.start())
        elif char in "}]" and stack:
            pairs[stack.pop()] = token.end()
    return pairs


class _Builder:
    def __init__(self, source: SourceFile):
        self.source = source
        self._pairs: dict[int, int] | None = None

    def container_span(self, start: int) -> Span | None:
        """The range of the object or array opening at ``start``, found by matching brackets.

        tree-sitter's recovery around hjson-only syntax (quoteless values) can end an object
        early, or leave its brackets in an ERROR node; hjson read it whole, so the range must
        be whole too (a fix that removes the entry would otherwise cut the file in two).
        """
        text = self.source.text
        if start >= len(text) or text[start] not in "{[":
            return None
        if self._pairs is None:
            self._pairs = _bracket_pairs(text)
        end = self._pairs.get(start)
        return Span(self.source, start, end) if end is not None else None

    def span(self, ts_node) -> Span:
        return Span(self.source, self.source.char_offset(ts_node.start_byte), self.source.char_offset(ts_node.end_byte))

    def build(self, value: Any, ts_node, fallback: Span | Callable[[], Span], depth: int) -> Node:
        """``fallback``: the range to use when tree-sitter has no node for the value; a callable
        when finding it costs work that a well-formed file never needs."""
        if depth > MAX_DEPTH:
            raise TooDeep()
        if ts_node is not None and not _consistent(value, ts_node):
            ts_node = None  # tree-sitter recovered differently from hjson; do not trust its range
        span = self.span(ts_node) if ts_node is not None else (fallback() if callable(fallback) else fallback)
        if isinstance(value, (_Pairs, list)) and (ts_node is None or ts_node.has_error):
            span = self.container_span(span.start) or span
        if isinstance(value, _Pairs):
            return self._mapping(value, ts_node if ts_node is not None and ts_node.type == "object" else None, span, depth)
        if isinstance(value, list):
            return self._sequence(value, ts_node, span, depth)
        return Scalar(span=span, value=value, style=_scalar_style(value, ts_node, span))

    def _sequence(self, value: list, ts_node, span: Span, depth: int) -> Sequence:
        items_ts = []
        if ts_node is not None and ts_node.type == "array":
            items_ts = [c for c in ts_node.named_children if c.type in _VALUE_TYPES]
        items = []
        for index, item in enumerate(value):
            child_ts = items_ts[index] if index < len(items_ts) and len(items_ts) == len(value) else None
            items.append(self.build(item, child_ts, span, depth + 1))
        return Sequence(span=span, items=items)

    def _mapping(self, pairs: _Pairs, ts_object, span: Span, depth: int) -> Mapping:
        ts_pairs: list[tuple[str, Any, Any]] = []
        if ts_object is not None:
            for child in ts_object.named_children:
                if child.type != "pair":
                    continue
                key_node = child.child_by_field_name("key")
                value_node = child.child_by_field_name("value")
                if key_node is None:
                    continue
                ts_pairs.append((_decode_key(key_node), key_node, value_node))
        # each key's tree-sitter pairs in order, consumed as hjson's pairs (duplicates too) claim them
        unclaimed: dict[str, list[tuple[Any, Any]]] = {}
        for ts_key, key_node, value_node in reversed(ts_pairs):
            unclaimed.setdefault(ts_key, []).append((key_node, value_node))
        entries = []
        search_from = span.start + 1
        for key, value in pairs:
            key = str(key)
            candidates = unclaimed.get(key)
            if candidates:
                key_node, value_ts = candidates.pop()
                key_span = self.span(key_node)
            else:
                key_span = self._find_key(key, span, search_from)
                value_ts = None
            search_from = max(search_from, key_span.end)
            node = self.build(value, value_ts, partial(self._value_after, key_span, span, value), depth + 1)
            entries.append(Entry(key=key, key_span=key_span, value=node))
        return Mapping(span=span, entries=entries)

    def _find_key(self, key: str, parent: Span, start: int) -> Span:
        text = self.source.text
        pattern = re.compile(r"(?:\"" + re.escape(key) + r"\"|'" + re.escape(key) + r"'|(?<![\w\"'])" + re.escape(key) + r"(?=\s*:))")
        found = pattern.search(text, start, parent.end) or pattern.search(text, parent.start, parent.end)
        if found:
            return Span(self.source, found.start(), found.end())
        return parent

    def _value_after(self, key_span: Span, parent: Span, value: Any = None) -> Span:
        """Best-effort range of a value hjson read but tree-sitter could not place: a quoted string
        to its closing quote, a number, boolean or null to its last character, and a quoteless
        string to the end of the line (as hjson reads it). A fix replaces exactly this range, so
        it must not take the `}` or `]` that closes the object after a value on the same line."""
        text = self.source.text
        colon = text.find(":", key_span.end, parent.end)
        if colon == -1:
            return key_span
        start = colon + 1
        while start < parent.end and text[start] in " \t":
            start += 1
        if start < parent.end and text[start] in "\"'":
            close = _closing_quote(text, start, parent.end)
            if close is not None:
                return Span(self.source, start, close + 1)
        elif isinstance(value, (bool, int, float)) or value is None:
            token = _SCALAR_TOKEN.match(text, start, parent.end)
            if token is not None and token.end() > start:
                return Span(self.source, start, token.end())
        end = text.find("\n", start, parent.end)
        if end == -1:
            end = parent.end
        while end > start and text[end - 1] in " \t\r,":
            end -= 1
        if end <= start:
            return key_span
        return Span(self.source, start, end)


_SCALAR_TOKEN = re.compile(r"[-+]?[\w.]+")


def _closing_quote(text: str, start: int, limit: int) -> int | None:
    """The offset of the quote that closes the string opening at ``start`` (a backslash escapes
    the next character), on the same line; None for a multi-line string or an unclosed one."""
    quote = text[start]
    if text.startswith(quote * 3, start):
        return None
    i = start + 1
    while i < limit:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == quote:
            return i
        if ch == "\n":
            return None
        i += 1
    return None


def _scalar_style(value: Any, ts_node, span: Span) -> str:
    """How a scalar is written: "quoted", "quoteless" (an hjson string without quotes), "plain"."""
    if not isinstance(value, str):
        return "plain"
    if ts_node is not None and ts_node.type == "string":
        return "quoted"
    return "quoted" if span.text.lstrip()[:1] in ('"', "'") else "quoteless"


def _consistent(value: Any, ts_node) -> bool:
    """Does the tree-sitter node hold the value hjson read? (They differ around hjson-only syntax.)"""
    kind = ts_node.type
    if ts_node.has_error:
        return isinstance(value, (_Pairs, list)) and kind in ("object", "array")
    if isinstance(value, _Pairs):
        return kind == "object"
    if isinstance(value, list):
        return kind == "array"
    if isinstance(value, bool):
        return kind == ("true" if value else "false")
    if value is None:
        return kind == "null"
    if isinstance(value, (int, float)):
        return kind == "number"
    if isinstance(value, str):
        return kind == "string" and _decode_key(ts_node) == value
    return False


def _decode_key(key_node) -> str:
    raw = key_node.text.decode("utf-8", "replace")
    if key_node.type == "string":
        if "\\" not in raw and len(raw) >= 2 and raw[0] == raw[-1] == '"':
            return raw[1:-1]  # no escapes: the text between the quotes (json.loads gives the same)
        import json

        try:
            return json.loads(raw)
        except ValueError:
            return raw.strip('"')
    return raw
