"""Training and accelerate YAML, read the way ms-swift, HF and LLaMA-Factory read it.

They all call PyYAML's ``safe_load`` (YAML 1.1 resolver: ``1e-4`` is a string, ``on`` is True),
so dslint composes with the same resolver (the C loader when available) and keeps the node
marks, which count characters, as positions. Tags are never constructed beyond the safe set.
"""

from __future__ import annotations

import yaml

from dslint.documents.model import Entry, Mapping, Node, ParseProblem, Scalar, Sequence
from dslint.source import SourceFile, Span

MAX_NODES = 100_000
MAX_DEPTH = 64

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_STR = "tag:yaml.org,2002:str"
_SCALAR_NODE = yaml.ScalarNode


class _Loader(_BaseLoader):
    """The safe loader, remembering how each plain or quoted scalar resolves.

    The composer asks the (Python) resolver about every scalar, and the answer depends only on
    the text and how it was written; training configs repeat the same keys and values file
    after file, so a run asks a dictionary instead of a dozen regular expressions.
    """

    _resolved: dict = {}

    def resolve(self, kind, value, implicit):
        if kind is not _SCALAR_NODE:
            return super().resolve(kind, value, implicit)
        key = (value, implicit)
        tag = self._resolved.get(key)
        if tag is None:
            tag = super().resolve(kind, value, implicit)
            if len(self._resolved) < 100_000:
                self._resolved[key] = tag
        return tag


class _Limit(Exception):
    def __init__(self, message: str, offset: int = 0):
        super().__init__(message)
        self.offset = offset


def parse_yaml(source: SourceFile) -> tuple[Node | None, list[ParseProblem]]:
    text = source.text
    if not text.strip():
        return None, []
    too_deep = _too_deep_at(text, MAX_DEPTH)
    if too_deep is not None:
        # libyaml's composer recurses in C once per level: about 25,000 levels overflow an 8 MB
        # C stack (a segfault, not an exception), so deep files are refused before composing.
        line, column = too_deep
        offset = source.offset(line, column)
        return None, [ParseProblem(Span(source, offset, min(offset + 1, len(text))), f"nesting deeper than {MAX_DEPTH} levels; not linted")]
    loader = _Loader(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.composer.ComposerError as exc:
            if "single document" not in str(exc.problem or ""):
                raise
            # Several documents: yaml.safe_load refuses them. Keep the first for classification.
            problem = _problem_from_error(source, exc)
            first = next(iter(yaml.compose_all(text, Loader=_Loader)), None)
            converter = _Converter(source, _Loader(text))
            return (converter.convert(first) if first is not None else None), [problem, *converter.problems]
        if node is None:
            return None, []
        converter = _Converter(source, loader)
        return converter.convert(node), converter.problems
    except yaml.YAMLError as exc:
        return None, [_problem_from_error(source, exc)]
    except _Limit as exc:
        return None, [ParseProblem(Span(source, exc.offset, min(exc.offset + 1, len(text))), str(exc))]
    except RecursionError:
        return None, [ParseProblem(Span(source, 0, 1), f"nesting deeper than {MAX_DEPTH} levels; not linted")]
    finally:
        loader.dispose()


# Below this many characters that can open a collection, the composer cannot recurse deep
# enough to hurt, and _Converter enforces MAX_DEPTH on the tree: the event scan (a second full
# parse, a third of the time of reading a typical file) is only for texts that could be deep.
_COMPOSER_SAFE_OPENERS = 2_000


def _too_deep_at(text: str, limit: int) -> tuple[int, int] | None:
    """Where the event stream opens a collection nested more than ``limit`` deep (1-based line, column), if it does.

    libyaml's parser is iterative, so the scan itself is safe. The libyaml of PyYAML 6.0.4 also
    refuses more than 1,000 levels ("exceeded maximum nesting depth"), and in a flow collection
    its scanner reads ahead to the refusal before the parser yields the deep events: that
    refusal is the same finding, at the place libyaml gave up (6.0.3 has no such limit).
    """
    openers = text.count("[") + text.count("{") + text.count("-") + text.count(":") + text.count("?")
    if openers <= max(limit, _COMPOSER_SAFE_OPENERS):
        return None
    depth = 0
    try:
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > limit:
                    return event.start_mark.line + 1, event.start_mark.column + 1
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        if mark is not None and "maximum nesting depth" in str(getattr(exc, "problem", "")):
            return mark.line + 1, mark.column + 1
        # any other error: the composer stops at the same place, and parse_yaml reports it
    return None


def _problem_from_error(source: SourceFile, exc: yaml.YAMLError) -> ParseProblem:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is not None:
        offset = source.offset(mark.line + 1, mark.column + 1)
    else:
        offset = 0
    parts = [p for p in (getattr(exc, "context", None), getattr(exc, "problem", None)) if p]
    message = "; ".join(parts) if parts else str(exc).splitlines()[0]
    return ParseProblem(Span(source, offset, min(offset + 1, len(source.text))), f"not valid YAML for PyYAML safe_load: {message}")


class _Converter:
    def __init__(self, source: SourceFile, loader):
        self.source = source
        self.loader = loader
        self.count = 0
        # Values safe_load itself fails to construct (an impossible date, a 5000-digit integer,
        # a tag outside the safe set): the consumer raises, so each is a problem, not a crash.
        self.problems: list[ParseProblem] = []

    def span(self, node) -> Span:
        return Span(self.source, node.start_mark.index, node.end_mark.index)

    def _count(self) -> None:
        self.count += 1
        if self.count > MAX_NODES:
            raise _Limit(f"more than {MAX_NODES} YAML nodes after alias expansion; not linted")

    def convert(self, node, depth: int = 0) -> Node:
        self.count += 1
        if self.count > MAX_NODES:
            raise _Limit(f"more than {MAX_NODES} YAML nodes after alias expansion; not linted")
        if depth > MAX_DEPTH:
            raise _Limit(f"nesting deeper than {MAX_DEPTH} levels; not linted", node.start_mark.index)
        if node.tag == _STR and type(node) is _SCALAR_NODE:
            # most values are strings, and the constructor returns a str node's text as it is
            return Scalar(span=Span(self.source, node.start_mark.index, node.end_mark.index), value=node.value,
                          style="quoted" if node.style in ("'", '"') else "plain", tag=_STR)
        if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and node.tag not in self.loader.yaml_constructors:
            self._problem(node, yaml.constructor.ConstructorError(problem=f"could not determine a constructor for the tag '{node.tag}'"))
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, depth)
        if isinstance(node, yaml.SequenceNode):
            return Sequence(span=self.span(node), items=[self.convert(child, depth + 1) for child in node.value])
        try:
            construct = self.loader.yaml_constructors.get(node.tag) if isinstance(node, yaml.ScalarNode) else None
            # a scalar's constructor directly (what construct_object calls, without its bookkeeping)
            value = construct(self.loader, node) if construct is not None else self.loader.construct_object(node, deep=True)
        except (yaml.YAMLError, ValueError, OverflowError) as exc:
            value = node.value
            self._problem(node, exc)
        style = "quoted" if node.style in ("'", '"') else "plain"
        return Scalar(span=self.span(node), value=value, style=style, tag=node.tag)

    def _problem(self, node, exc: Exception) -> None:
        if isinstance(exc, yaml.YAMLError):
            message = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        else:
            message = str(exc)
        self.problems.append(ParseProblem(self.span(node), f"not valid YAML for PyYAML safe_load: {message}"))

    def _mapping(self, node, depth: int) -> Mapping:
        merged: list[Entry] = []
        own: list[Entry] = []
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
                for merged_node in sources:
                    if isinstance(merged_node, yaml.MappingNode):
                        self._count()  # merged mappings bypass convert(): count them too (merge-key bombs)
                        for item in self._mapping(merged_node, depth + 1).entries:
                            merged.append(Entry(item.key, item.key_span, item.value, merged=True))
                continue
            if key_node.tag == _STR and type(key_node) is _SCALAR_NODE:
                key = key_node.value  # what the str constructor returns
            elif isinstance(key_node, yaml.ScalarNode):
                try:
                    key = self.loader.construct_object(key_node)
                except (yaml.YAMLError, ValueError, OverflowError) as exc:
                    key = key_node.value
                    self._problem(key_node, exc)
                key = key if isinstance(key, str) else str(key)
            else:
                key = key_node.value if isinstance(key_node.value, str) else "<complex key>"
            own.append(Entry(key=key, key_span=self.span(key_node), value=self.convert(value_node, depth + 1)))
        return Mapping(span=self.span(node), entries=merged + own)
