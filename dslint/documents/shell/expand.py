"""Expansion: the value bash gives each word, from the variable table, as pieces and fields.

Parameter expansion, arithmetic, the few command substitutions whose output is known (``expr``,
``echo``, ``cat <<EOF``, ``pwd`` in a script that stays where it started), field splitting, and
here-document bodies. An ``Expander`` is given the
text being read and the variable table; the walker, the assignments and the commands expand
their words with it.
"""

from __future__ import annotations

import re

from .arith import arith_on_table, expr_eval
from .heretext import expand_located, expand_text_parts
from .model import Assignment, Script, VarRef, Word
from .params import (
    AFFIX_OPS,
    DEFAULT_OPS,
    affix_pieces,
    default_chosen,
    default_decisions,
    element_pieces,
    length_pieces,
    special_pieces,
    subscript_pieces,
    var_value_pieces,
)
from .pieces import BREAK, UNKNOWN, join, known
from .quoting import ansi_c, unquote_dq, unquote_word
from .textmap import TextMap
from .variables import NAME_RE, Ctx, Var, VarTable, record_assignment, unknown_var

_IFS_SPLIT = re.compile(r"[ \t\n]+")
_BRACE_RE = re.compile(r"\{[^{}\s]*(,|\.\.)[^{}\s]*\}")
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_MAX_EXPANSION_NESTING = 100  # $( $( ... ) ), ${a:-${b:-...}} deeper than this is unknown
_LITERAL_TYPES = frozenset({"number", "variable_name", "regex", "extglob_pattern", "test_operator", "special_variable_name"})
_QUOTED_TEXT_TYPES = frozenset({"raw_string", "ansi_c_string", "string_content"})
_EXPANSION_TYPES = ("simple_expansion", "expansion", "command_substitution", "arithmetic_expansion")
# A command that may change the shell's folder: cd, pushd, popd, or a file sourced into the
# script (which may cd). Matched anywhere in the text, even in a comment or a string: a script
# that may move is not one that stays.
_MOVES = re.compile(r"(?:^|[\s;&|(`{])(?:cd|pushd|popd|source)(?=[\s;&|)`}]|$)|(?:^|[;&|({]|\bthen|\bdo)\s*\.\s+\S", re.M)
_PWD_OPTIONS = ("-L", "-P")


class Expander:
    def __init__(self, tm: TextMap, table: VarTable, script: Script):
        self.tm = tm
        self.table = table
        self.script = script
        self.ctx = Ctx()  # the statement being read: `${X:=v}` records its assignment there
        self._nesting = 0
        self._literal = True  # no expansion met since the word began (Word.literal)
        self._stays: bool | None = None  # the script never changes its folder (``caller_folder``)

    # ---- words as pieces ----

    def pieces(self, node, quoted: bool, depth: int = 0) -> list:
        """Expand a word node into pieces: (value|None, assumed|None, quoted) or BREAK."""
        if self._nesting > _MAX_EXPANSION_NESTING:
            self._literal = False
            return [(None, None, quoted)]
        self._nesting += 1
        try:
            return self._pieces(node, quoted, depth)
        finally:
            self._nesting -= 1

    def _pieces(self, node, quoted: bool, depth: int) -> list:
        t = node.type
        if t == "word":
            return self._word(node, quoted)
        if t in _LITERAL_TYPES:
            raw = self.tm.text(node)
            return [known(raw if quoted else unquote_word(raw), quoted)]
        if t in ("string", "translated_string"):
            return self.dq_pieces(node, depth)
        if t in _QUOTED_TEXT_TYPES:
            return [known(_quoted_text(t, self.tm.text(node)), True)]
        if t in ("concatenation", "command_name"):
            return self._concatenation(node, quoted, depth)
        self._literal = False
        if t == "simple_expansion":
            name_node = None
            for child in node.children:
                if child.is_named:
                    name_node = child
            name = self.tm.text(name_node) if name_node is not None else self.tm.text(node)[1:]
            return self.var_pieces(name, quoted, node)
        if t == "expansion":
            return self.expansion(node, quoted, depth)
        if t == "arithmetic_expansion":
            kids = node.children
            start = kids[0].end_byte if kids else node.start_byte
            end = kids[-1].start_byte if kids and kids[-1].type == "))" else node.end_byte
            v, a = self.arith_text(start, end, node)
            return [(v, a, quoted)]
        if t == "command_substitution":
            found = self.command_substitution(node)
            if isinstance(found, list):  # pieces (a here-document's body)
                return [(v, a, quoted) for v, a in found] or [("", "", quoted)]
            v, a = found
            return [(v, a, quoted)]
        # process substitution, brace expressions, anything unusual: unknown
        return [(None, None, quoted)]

    def _word(self, node, quoted: bool) -> list:
        raw = self.tm.text(node)
        if not quoted and _BRACE_RE.search(raw):
            self._literal = False
            return [(None, None, False)]
        if quoted:
            return [known(unquote_dq(raw, "$`\\"), True)]
        return [known(unquote_word(raw), False)]

    def _concatenation(self, node, quoted: bool, depth: int) -> list:
        text, text_bytes = self.tm.text, self.tm.text_bytes
        if node.type == "concatenation" and not quoted:
            raw = text(node)
            if _BRACE_RE.search(raw) and any(c.type == "word" and "{" in text(c) for c in node.children):
                self._literal = False
                return [(None, None, False)]
        out = []
        pos = node.start_byte
        for child in node.children:
            if child.start_byte > pos:
                gap = text_bytes(pos, child.start_byte)
                out.append(known(unquote_dq(gap) if quoted else unquote_word(gap), quoted))
            out.extend(self.pieces(child, quoted, depth + 1))
            pos = child.end_byte
        if node.end_byte > pos:
            gap = text_bytes(pos, node.end_byte)
            out.append(known(unquote_dq(gap) if quoted else unquote_word(gap), quoted))
        return out

    def dq_pieces(self, node, depth: int) -> list:
        text_bytes = self.tm.text_bytes
        kids = node.children
        start = kids[0].end_byte if kids and kids[0].type in ('"', '$"') else node.start_byte + 1
        end = kids[-1].start_byte if len(kids) > 1 and kids[-1].type == '"' else node.end_byte
        out = []
        pos = start
        for child in kids:
            if not child.is_named:
                continue
            if child.start_byte > pos:
                out.append(known(unquote_dq(text_bytes(pos, child.start_byte)), True))
            # tree-sitter-bash puts the blanks before an expansion that follows another one into
            # the expansion's `$` token (`"$A $B"`): they are text of the string
            written = self.tm.data[child.start_byte : child.end_byte]
            blanks = len(written) - len(written.lstrip(b" \t\n"))
            if blanks and child.type != "string_content":
                out.append(known(text_bytes(child.start_byte, child.start_byte + blanks), True))
            out.extend(self.pieces(child, True, depth + 1))
            pos = max(pos, child.end_byte)
        if end > pos:
            out.append(known(unquote_dq(text_bytes(pos, end)), True))
        if not out:
            out.append(known("", True))
        return out

    # ---- parameters ----

    def lookup(self, name: str, node=None) -> Var | None:
        var = self.table.vars.get(name)
        if node is not None and self.tm.fixed_span is None:
            self.script.references.append(VarRef(name, self.tm.span(node), var is not None))
        return var

    def var_pieces(self, name: str, quoted: bool, node) -> list:
        if not NAME_RE.match(name):
            return special_pieces(name, quoted)
        var = self.lookup(name, node)
        if var is None and name == "PWD" and self.caller_folder():
            return [(".", ".", quoted)]  # bash sets PWD to the folder it starts in
        return var_value_pieces(var, name, quoted)

    def caller_folder(self) -> bool:
        """Whether ``pwd``/``$PWD`` here is the folder the caller started the script in, written
        ``.``: the script never changes folder (no cd, pushd, popd, nor a sourced file that
        might), and this is the script's own text, not a string run by eval, ``bash -c``, ssh or
        a container, whose shell may start elsewhere. Relative paths are resolved from that same
        folder, so ``$(pwd)/P`` and ``./P`` name one file, whichever folder it is."""
        if self.ctx.from_eval or self.tm.fixed_span is not None or self.tm.shift is not None:
            return False
        if self._stays is None:
            self._stays = _MOVES.search(self.script.source.text) is None
        return self._stays

    def expansion(self, node, quoted: bool, depth: int) -> list:
        """``${...}``."""
        kids = [c for c in node.children if c.type not in ("${", "}")]
        if not kids or kids[0].type == "!":
            return [(None, None, quoted)]
        length = kids[0].type == "#" and len(kids) >= 2
        if length:
            kids = kids[1:]
        target, rest = kids[0], kids[1:]
        found = self._target(target, node, quoted)
        if found is None:
            return [(None, None, quoted)]
        base, elements, star, var = found
        if elements is not None:
            return element_pieces(elements, star, length, bool(rest), quoted)
        if length:
            return length_pieces(base, quoted)
        if not rest:
            return base
        op_node, operand = rest[0], rest[1:]
        op = op_node.type
        if op in DEFAULT_OPS:
            return self._default(node, target, var, base, op_node, operand, quoted, depth)
        if op in AFFIX_OPS:
            pattern = self.operand_pieces(operand, True, depth, op_node.end_byte, node.end_byte - 1)
            return affix_pieces(base, pattern, op, quoted)
        return [(None, None, quoted)]

    def _target(self, target, node, quoted: bool):
        """(pieces, array elements, star, variable) of the parameter ``${...}`` names, or None."""
        if target.type == "subscript":
            name_node = target.child_by_field_name("name")
            index_node = target.child_by_field_name("index")
            name = self.tm.text(name_node) if name_node is not None else ""
            index = self.tm.text(index_node) if index_node is not None else ""
            var = self.lookup(name, node)
            base, elements, star = subscript_pieces(var, name, index, quoted)
            return base, elements, star, var
        if target.type in ("variable_name", "special_variable_name"):
            name = self.tm.text(target)
            base = self.var_pieces(name, quoted, node)
            var = self.table.vars.get(name) if NAME_RE.match(name) else None
            return base, None, False, var
        return None

    def _default(self, node, target, var, base, op_node, operand, quoted: bool, depth: int) -> list:
        """``${NAME:-word}``, ``:=``, ``:+``, ``:?`` and their forms without the colon."""
        op = op_node.type
        core = op.lstrip(":")
        bv, ba = join(base)
        unset_known = target.type == "variable_name" and var is not None and var.unset
        strict, assumed = default_decisions(op, bv, ba, var, unset_known)
        alt_pieces = self.operand_pieces(operand, quoted, depth, op_node.end_byte, node.end_byte - 1)
        chosen_strict, chosen_assumed = default_chosen(core, strict, assumed, base, ba, alt_pieces, quoted)
        if core == "?" and strict is False:
            return [(None, None, quoted)]
        if core == "=" and target.type == "variable_name" and strict is not True:
            self.default_assignment(target, node, operand, alt_pieces, strict, chosen_assumed)
        if chosen_strict is not None:
            return chosen_strict
        return [(None, chosen_assumed, quoted)]

    def operand_pieces(self, operand, quoted: bool, depth: int, start: int, end: int) -> list:
        text_bytes = self.tm.text_bytes
        out = []
        pos = start
        for child in operand:
            if not child.is_named:
                continue
            if child.start_byte > pos:
                gap = text_bytes(pos, child.start_byte)
                out.append(known(unquote_dq(gap) if quoted else unquote_word(gap), quoted))
            out.extend(self.pieces(child, quoted, depth + 1))
            pos = max(pos, child.end_byte)
        if end > pos:
            gap = text_bytes(pos, end)
            out.append(known(unquote_dq(gap) if quoted else unquote_word(gap), quoted))
        return out or [("", "", quoted)]

    def default_assignment(self, target, node, operand, alt_pieces, use_base_strict, chosen_assumed) -> None:
        tm = self.tm
        name = tm.text(target)
        exported = self.table.exported(name)
        span = tm.span(node)
        parts = tuple((p[0], p[1]) for p in alt_pieces if p is not None)
        if use_base_strict is False:
            self.table.set_var(name, Var(parts, exported, span, "default"))
        else:
            self.table.set_var(name, unknown_var(exported, span, "default", chosen_assumed))
        v, a = join(parts)
        if operand:
            wspan = tm.span_bytes(operand[0].start_byte, operand[-1].end_byte)
            raw = tm.text_bytes(operand[0].start_byte, operand[-1].end_byte)
        else:
            wspan = tm.span_bytes(node.end_byte - 1, node.end_byte - 1)
            raw = ""
        word = Word(wspan, raw, v, all(c.type in ("word", "number", "raw_string") for c in operand), a, False, parts)
        record_assignment(self.script, Assignment(name, tm.span(target), word, span, exported, "default"), self.ctx)

    # ---- arithmetic and command substitution ----

    def arith_text(self, start: int, end: int, node) -> tuple[str | None, str | None]:
        """Evaluate ``$(( ... ))`` between two byte offsets: expansions first, then arithmetic."""
        strict_parts: list[str] | None = []
        assumed_parts: list[str] | None = []
        pos = start
        for child in _expansions_between(node, start, end):
            if child.start_byte < pos:
                continue
            gap = self.tm.text_bytes(pos, child.start_byte)
            v, a = join(self.pieces(child, True))
            if strict_parts is not None:
                strict_parts = None if v is None else strict_parts + [gap, v]
            if assumed_parts is not None:
                assumed_parts = None if a is None else assumed_parts + [gap, a]
            pos = child.end_byte
        tail = self.tm.text_bytes(pos, end)
        strict = None if strict_parts is None else "".join(strict_parts) + tail
        assumed = None if assumed_parts is None else "".join(assumed_parts) + tail
        return arith_on_table(self.table, strict, assumed)

    def command_substitution(self, node) -> tuple[str | None, str | None]:
        inner = [c for c in node.children if c.is_named and c.type != "comment"]
        if len(inner) == 1 and inner[0].type == "redirected_statement":
            return self.cat_heredoc(inner[0])
        cmd = _plain_command(inner)
        if cmd is None:
            return UNKNOWN
        program = self.tm.text(cmd.child_by_field_name("name"))
        args = [c for c in cmd.children_by_field_name("argument")]
        if program == "expr":
            return _expr_output(self.fields(args))
        if program == "echo":
            return _echo_output(self.fields(args))
        if program == "pwd" and all(self.tm.text(a) in _PWD_OPTIONS for a in args) and self.caller_folder():
            return (".", ".")  # bash's pwd prints the shell's current folder (builtins/cd.def)
        return UNKNOWN

    def cat_heredoc(self, node):
        """``$(cat <<EOF ... EOF)``: the here-document's body, trailing newlines removed."""
        body = node.child_by_field_name("body")
        redirects = [c for c in node.children if c.type in _REDIRECTS]
        if body is None or body.type != "command" or len(redirects) != 1 or redirects[0].type != "heredoc_redirect":
            return UNKNOWN
        if self.tm.text(body).strip() != "cat" or any(c.type in _REDIRECTS for c in redirects[0].children):
            return UNKNOWN
        read = self.heredoc_value(redirects[0], parts=True)
        if read is None:
            return UNKNOWN
        pieces = list(read[1])
        while pieces and pieces[-1][0] is not None:  # $( ) drops the trailing newlines
            text = pieces[-1][0].rstrip("\n")
            if text:
                pieces[-1] = (text, text)
                break
            pieces.pop()
        return pieces

    def heredoc_value(self, node, parts: bool = False):
        """(body span, value, assumed, delimiter, quoted) of a ``heredoc_redirect`` node, or None;
        with ``parts``, the value as pieces ``(value, assumed)`` in place of value and assumed."""
        body = _heredoc_body(self.tm, node)
        if body is None:
            return None
        bstart, bend, text, delimiter, quoted = body
        pieces = [(text, text)] if quoted else expand_text_parts(self.table, text)
        if parts:
            return self.tm.span_bytes(bstart, bend), pieces, delimiter, quoted
        value, assumed = join(pieces)
        return self.tm.span_bytes(bstart, bend), value, assumed, delimiter, quoted

    def heredoc_located(self, node) -> tuple | None:
        """The body of a ``heredoc_redirect`` as pieces ``(value, assumed, start, end)`` with
        character offsets into the file, for a body whose every character stands in the file as
        read (not inside an eval'd string, no tabs stripped by ``<<-``); None otherwise."""
        if self.tm.fixed_span is not None or self.tm.shift is not None:
            return None
        body = _heredoc_body(self.tm, node, keep_tabs=True)
        if body is None:
            return None
        bstart, bend, text, _delimiter, quoted, strip_tabs = body
        if strip_tabs and any(line.startswith("\t") for line in text.split("\n")):
            return None
        start = self.tm.span_bytes(bstart, bend).start
        if quoted:
            return ((text, text, start, start + len(text)),)
        return tuple((v, a, start + s, start + e) for v, a, s, e in expand_located(self.table, text))

    # ---- fields ----

    def fields(self, nodes) -> list[Word]:
        """Words bash passes for these argument nodes (after splitting unquoted expansions)."""
        out: list[Word] = []
        saved_literal = self._literal
        for node in nodes:
            self._literal = True
            pieces = self.pieces(node, False)
            literal = self._literal
            span = self.tm.span(node)
            raw = self.tm.text(node)
            if raw.startswith("~"):  # tilde expansion: a home directory we cannot know
                out.append(Word(span, raw, None, False, None, False, ((None, None),)))
                continue
            if literal and len(pieces) == 1 and pieces[0] is not None:
                v, a, _q = pieces[0]
                out.append(Word(span, raw, v, True, a, False, ((v, a),)))
                continue
            for field_parts, may_split in split_fields(pieces):
                v, a = join(field_parts)
                out.append(Word(span, raw, v, literal, a, may_split, tuple(field_parts)))
        self._literal = saved_literal
        return out

    def value_pieces(self, node) -> tuple[list, bool]:
        """(pieces, literal) of one word that is not split (an assignment's value)."""
        saved_literal = self._literal
        self._literal = True
        pieces = self.pieces(node, False)
        literal = self._literal
        self._literal = saved_literal
        return pieces, literal


def _quoted_text(t: str, raw: str) -> str:
    """The text of a single-quoted, ``$'...'`` or double-quoted-content node."""
    if t == "raw_string":
        return raw[1:-1] if raw.endswith("'") and len(raw) >= 2 else raw[1:]
    if t == "ansi_c_string":
        return ansi_c(raw[2:-1] if raw.endswith("'") and len(raw) >= 3 else raw[2:])
    return unquote_dq(raw)


def _expansions_between(node, start: int, end: int) -> list:
    """The expansions inside ``node`` between two byte offsets, outermost ones, in text order."""
    stack = [node]
    found = []
    while stack:
        n = stack.pop()
        for child in n.children:
            if child.start_byte < start or child.end_byte > end:
                if child.start_byte < end and child.end_byte > start:
                    stack.append(child)
                continue
            if child.type in _EXPANSION_TYPES:
                found.append(child)
            else:
                stack.append(child)
    found.sort(key=lambda c: c.start_byte)
    return found


def _plain_command(inner: list):
    """The command of ``$(cmd args)`` when it is one command without assignments or redirections."""
    if len(inner) != 1 or inner[0].type != "command":
        return None
    cmd = inner[0]
    if cmd.child_by_field_name("name") is None:
        return None
    if any(c.type == "variable_assignment" or c.type in _REDIRECTS for c in cmd.children):
        return None
    return cmd


def _expr_output(words: list[Word]) -> tuple[str | None, str | None]:
    v = None if any(w.value is None for w in words) else expr_eval([w.value for w in words])
    a = None if any(w.assumed is None for w in words) else expr_eval([w.assumed for w in words])
    return (v, a)


def _echo_output(words: list[Word]) -> tuple[str | None, str | None]:
    if words and words[0].value is not None and re.fullmatch(r"-[neE]+", words[0].value):
        if "e" in words[0].value:
            return UNKNOWN
        words = words[1:]
    v = None if any(w.value is None for w in words) else " ".join(w.value for w in words).rstrip("\n")
    a = None if any(w.assumed is None for w in words) else " ".join(w.assumed for w in words).rstrip("\n")
    return (v, a)


def _heredoc_body(tm: TextMap, node, keep_tabs: bool = False):
    """(body start, body end, text, delimiter, quoted) of a ``heredoc_redirect`` node, or None;
    with ``keep_tabs``, the text as written and whether ``<<-`` strips its leading tabs, sixth."""
    start_node = body = end_node = None
    strip_tabs = False
    for child in node.children:
        if child.type == "heredoc_start":
            start_node = child
        elif child.type == "heredoc_body":
            body = child
        elif child.type == "heredoc_end":
            end_node = child
        elif child.type == "<<-":
            strip_tabs = True
    if start_node is None:
        return None
    delim_raw = tm.text(start_node)
    quoted = any(c in delim_raw for c in "'\"\\")
    delimiter = delim_raw.replace("'", "").replace('"', "").replace("\\", "")
    if body is None:
        if end_node is None:
            return None
        bstart = bend = end_node.start_byte
    else:
        bstart, bend = _body_bytes(tm.data, body, end_node)
    text = tm.text_bytes(bstart, bend)
    if keep_tabs:
        return bstart, bend, text, delimiter, quoted, strip_tabs
    if strip_tabs:
        text = "\n".join(line.lstrip("\t") for line in text.split("\n"))
    return bstart, bend, text, delimiter, quoted


def _body_bytes(data: bytes, body, end_node) -> tuple[int, int]:
    """The bytes of a here-document's body: whole lines, up to the line of the delimiter."""
    bstart = body.start_byte
    line_start = data.rfind(b"\n", 0, bstart) + 1
    if not data[line_start:bstart].strip(b" \t"):
        bstart = line_start
    bend = end_node.start_byte if end_node is not None else body.end_byte
    bend = data.rfind(b"\n", 0, bend) + 1 if end_node is not None else bend
    return bstart, max(bend, bstart)


def split_fields(pieces) -> list[tuple[list, bool]]:
    """Field splitting: the fields of a piece list, each with whether it may split further."""
    fields: list[tuple[list, bool]] = []
    cur: list = []
    content = False
    may_split = False
    for p in pieces:
        if p is BREAK:
            if content:
                fields.append((cur, may_split))
            cur, content, may_split = [], False, False
            continue
        v, a, q = p
        if q:
            cur.append((v, a))
            content = True
            continue
        if v is None:
            cur.append((None, a))
            content = True
            may_split = True
            continue
        if not v:
            continue
        chunks = _IFS_SPLIT.split(v)
        for i, chunk in enumerate(chunks):
            if i > 0:
                if content:
                    fields.append((cur, may_split))
                cur, content, may_split = [], False, False
            if chunk:
                cur.append((chunk, chunk))
                content = True
    if content:
        fields.append((cur, may_split))
    return fields
