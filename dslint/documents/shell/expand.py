"""Expansion: the value bash gives each word, from the variable table, as pieces and fields.

Parameter expansion, arithmetic, the few command substitutions whose output is known (``expr``,
``echo``), field splitting, and the expansion of here-document bodies. Part of the walker
(``Walker`` mixes this in); see walker.py.
"""

from __future__ import annotations

import re

from .arith import Arith, ArithError, expr_eval, parse_int
from .model import Assignment, VarRef, Word
from .pieces import BREAK, UNKNOWN, join, known
from .quoting import ansi_c, remove_affix, unquote_dq, unquote_word
from .variables import ALWAYS_SET, NAME_RE, Var, unknown_var

_IFS_SPLIT = re.compile(r"[ \t\n]+")
_BRACE_RE = re.compile(r"\{[^{}\s]*(,|\.\.)[^{}\s]*\}")
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_MAX_EXPANSION_NESTING = 100  # $( $( ... ) ), ${a:-${b:-...}} deeper than this is unknown


class Expansion:
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
            raw = self.text(node)
            if not quoted and _BRACE_RE.search(raw):
                self._literal = False
                return [(None, None, False)]
            if quoted:
                return [known(unquote_dq(raw, "$`\\"), True)]
            return [known(unquote_word(raw), False)]
        if t in ("number", "variable_name", "regex", "extglob_pattern", "test_operator", "special_variable_name"):
            raw = self.text(node)
            return [known(raw if quoted else unquote_word(raw), quoted)]
        if t in ("string", "translated_string"):
            return self.dq_pieces(node, depth)
        if t == "raw_string":
            raw = self.text(node)
            return [known(raw[1:-1] if raw.endswith("'") and len(raw) >= 2 else raw[1:], True)]
        if t == "ansi_c_string":
            raw = self.text(node)
            inner = raw[2:-1] if raw.endswith("'") and len(raw) >= 3 else raw[2:]
            return [known(ansi_c(inner), True)]
        if t == "string_content":
            return [known(unquote_dq(self.text(node)), True)]
        if t in ("concatenation", "command_name"):
            if t == "concatenation" and not quoted:
                raw = self.text(node)
                if _BRACE_RE.search(raw) and any(c.type == "word" and "{" in self.text(c) for c in node.children):
                    self._literal = False
                    return [(None, None, False)]
            out = []
            pos = node.start_byte
            for child in node.children:
                if child.start_byte > pos:
                    gap = self.text_bytes(pos, child.start_byte)
                    out.append(known(unquote_dq(gap) if quoted else unquote_word(gap), quoted))
                out.extend(self.pieces(child, quoted, depth + 1))
                pos = child.end_byte
            if node.end_byte > pos:
                gap = self.text_bytes(pos, node.end_byte)
                out.append(known(unquote_dq(gap) if quoted else unquote_word(gap), quoted))
            return out
        if t == "simple_expansion":
            self._literal = False
            name_node = None
            for child in node.children:
                if child.is_named:
                    name_node = child
            name = self.text(name_node) if name_node is not None else self.text(node)[1:]
            return self.var_pieces(name, quoted, node)
        if t == "expansion":
            self._literal = False
            return self.expansion(node, quoted, depth)
        if t == "arithmetic_expansion":
            self._literal = False
            kids = node.children
            start = kids[0].end_byte if kids else node.start_byte
            end = kids[-1].start_byte if kids and kids[-1].type == "))" else node.end_byte
            v, a = self.arith_text(start, end, node)
            return [(v, a, quoted)]
        if t == "command_substitution":
            self._literal = False
            found = self.command_substitution(node)
            if isinstance(found, list):  # pieces (a here-document's body)
                return [(v, a, quoted) for v, a in found] or [("", "", quoted)]
            v, a = found
            return [(v, a, quoted)]
        # process substitution, brace expressions, anything unusual: unknown
        self._literal = False
        return [(None, None, quoted)]

    def dq_pieces(self, node, depth: int) -> list:
        kids = node.children
        start = kids[0].end_byte if kids and kids[0].type in ('"', '$"') else node.start_byte + 1
        end = kids[-1].start_byte if len(kids) > 1 and kids[-1].type == '"' else node.end_byte
        out = []
        pos = start
        for child in kids:
            if not child.is_named:
                continue
            if child.start_byte > pos:
                out.append(known(unquote_dq(self.text_bytes(pos, child.start_byte)), True))
            # tree-sitter-bash puts the blanks before an expansion that follows another one into
            # the expansion's `$` token (`"$A $B"`): they are text of the string
            written = self.data[child.start_byte : child.end_byte]
            blanks = len(written) - len(written.lstrip(b" \t\n"))
            if blanks and child.type != "string_content":
                out.append(known(self.text_bytes(child.start_byte, child.start_byte + blanks), True))
            out.extend(self.pieces(child, True, depth + 1))
            pos = max(pos, child.end_byte)
        if end > pos:
            out.append(known(unquote_dq(self.text_bytes(pos, end)), True))
        if not out:
            out.append(known("", True))
        return out

    def lookup(self, name: str, node=None) -> Var | None:
        var = self.vars.get(name)
        if node is not None and self.fixed_span is None:
            self.script.references.append(VarRef(name, self.span(node), var is not None))
        return var

    def var_pieces(self, name: str, quoted: bool, node) -> list:
        if not NAME_RE.match(name):
            # positional and special parameters
            if name in ("@", "*"):
                return [(None, "", False)]  # any number of words, even when quoted
            if name.isdigit():
                return [(None, "", quoted)]
            if name == "#":
                return [(None, "0", quoted)]
            return [(None, None, quoted)]
        var = self.lookup(name, node)
        if var is None:
            return [(None, None if name in ALWAYS_SET else "", quoted)]
        if var.unset:
            return [("", "", quoted)]
        return [(v, a, quoted) for v, a in var.parts] or [("", "", quoted)]

    def expansion(self, node, quoted: bool, depth: int) -> list:
        kids = [c for c in node.children if c.type not in ("${", "}")]
        if not kids:
            return [(None, None, quoted)]
        first = kids[0]
        if first.type == "!":
            return [(None, None, quoted)]
        length = False
        if first.type == "#" and len(kids) >= 2:
            length = True
            kids = kids[1:]
        target = kids[0]
        rest = kids[1:]
        # the variable's pieces, as a list of fields for arrays
        elements = None
        star = False
        if target.type == "subscript":
            name_node = target.child_by_field_name("name")
            index_node = target.child_by_field_name("index")
            name = self.text(name_node) if name_node is not None else ""
            index = self.text(index_node) if index_node is not None else ""
            var = self.lookup(name, node)
            if var is None:
                base = [(None, None if name in ALWAYS_SET else "", quoted)]
            elif var.unset:
                base = []
                elements = [] if index in ("@", "*") else None
            elif index in ("@", "*"):
                star = index == "*"
                elements = list(var.array) if var.array is not None else [var.parts]
                base = None
            else:
                idx = parse_int(index)
                if var.array is not None and idx is not None:
                    arr = var.array
                    base = [(v, a, quoted) for v, a in arr[idx]] if -len(arr) <= idx < len(arr) else [("", "", quoted)]
                elif var.array is None and idx == 0:
                    base = [(v, a, quoted) for v, a in var.parts]
                else:
                    base = [(None, None, quoted)]
        elif target.type in ("variable_name", "special_variable_name"):
            name = self.text(target)
            base = self.var_pieces(name, quoted, node)
            var = self.vars.get(name) if NAME_RE.match(name) else None
        else:
            return [(None, None, quoted)]
        if elements is not None:
            if length:
                n = str(len(elements))
                return [(n, n, quoted)]
            if rest:
                return [(None, None, quoted)]
            out: list = []
            for i, el in enumerate(elements):
                if i:
                    out.append((" ", " ", quoted) if star and quoted else BREAK)
                out.extend((v, a, quoted) for v, a in el)
            if not elements and quoted and not star:
                return []
            return out
        if length:
            v, a = join(base)
            return [(None if v is None else str(len(v)), None if a is None else str(len(a)), quoted)]
        if not rest:
            return base
        op_node = rest[0]
        op = op_node.type
        operand = rest[1:]
        bv, ba = join(base)
        unset_known = target.type == "variable_name" and var is not None and var.unset

        def alt():
            return self.operand_pieces(operand, quoted, depth, op_node.end_byte, node.end_byte - 1)

        if op in (":-", "-", ":=", "=", ":+", "+", ":?", "?"):
            colon = op.startswith(":")
            core = op.lstrip(":")
            # strict decision: None when unknown
            if bv is None and not unset_known:
                use_base_strict = None
            elif unset_known:
                use_base_strict = False
            elif colon:
                use_base_strict = bv != ""
            else:
                use_base_strict = True  # known value: the variable is set
            # assumed decision (caller sets nothing)
            if ba is None:
                use_base_assumed = None
            elif colon:
                use_base_assumed = ba != ""
            else:
                use_base_assumed = var is not None and not var.unset
            if core == "+":
                use_base_strict = None if use_base_strict is None else not use_base_strict
                use_base_assumed = None if use_base_assumed is None else not use_base_assumed
                alt_pieces = alt()
                empty = [("", "", quoted)]
                chosen_strict = None if use_base_strict is None else (empty if use_base_strict else alt_pieces)
                av = join(alt_pieces)[1]
                chosen_assumed = None if use_base_assumed is None else ("" if use_base_assumed else av)
            else:
                alt_pieces = alt()
                chosen_strict = None if use_base_strict is None else (base if use_base_strict else alt_pieces)
                chosen_assumed = (
                    None if use_base_assumed is None else (ba if use_base_assumed else join(alt_pieces)[1])
                )
            if core == "?" and use_base_strict is False:
                return [(None, None, quoted)]
            if core == "=" and target.type == "variable_name" and use_base_strict is not True:
                self.default_assignment(target, node, operand, alt_pieces, use_base_strict, chosen_assumed)
            if chosen_strict is not None:
                return chosen_strict
            return [(None, chosen_assumed, quoted)]
        if op in ("#", "##", "%", "%%"):
            pat_pieces = self.operand_pieces(operand, True, depth, op_node.end_byte, node.end_byte - 1)
            pv, pa = join(pat_pieces)
            rv = None if bv is None or pv is None else remove_affix(bv, pv, op)
            ra = None if ba is None or pa is None else remove_affix(ba, pa, op)
            return [(rv, ra, quoted)]
        return [(None, None, quoted)]

    def operand_pieces(self, operand, quoted: bool, depth: int, start: int, end: int) -> list:
        out = []
        pos = start
        for child in operand:
            if not child.is_named:
                continue
            if child.start_byte > pos:
                gap = self.text_bytes(pos, child.start_byte)
                out.append(known(unquote_dq(gap) if quoted else unquote_word(gap), quoted))
            out.extend(self.pieces(child, quoted, depth + 1))
            pos = max(pos, child.end_byte)
        if end > pos:
            gap = self.text_bytes(pos, end)
            out.append(known(unquote_dq(gap) if quoted else unquote_word(gap), quoted))
        return out or [("", "", quoted)]

    def default_assignment(self, target, node, operand, alt_pieces, use_base_strict, chosen_assumed) -> None:
        name = self.text(target)
        old = self.vars.get(name)
        exported = bool(old and old.exported and not old.unset) or self.allexport
        span = self.span(node)
        parts = tuple((p[0], p[1]) for p in alt_pieces if p is not None)
        if use_base_strict is False:
            self.set_var(name, Var(parts, exported, span, "default"))
        else:
            self.set_var(name, unknown_var(exported, span, "default", chosen_assumed))
        v, a = join(parts)
        if operand:
            wspan = self.span_bytes(operand[0].start_byte, operand[-1].end_byte)
            raw = self.text_bytes(operand[0].start_byte, operand[-1].end_byte)
        else:
            wspan = self.span_bytes(node.end_byte - 1, node.end_byte - 1)
            raw = ""
        word = Word(wspan, raw, v, all(c.type in ("word", "number", "raw_string") for c in operand), a, False, parts)
        ctx = self._ctx
        self.record_assignment(Assignment(name, self.span(target), word, span, exported, "default"), ctx)

    def arith_text(self, start: int, end: int, node) -> tuple[str | None, str | None]:
        """Evaluate ``$(( ... ))`` between two byte offsets: expansions first, then arithmetic."""
        strict_parts: list[str] | None = []
        assumed_parts: list[str] | None = []
        pos = start
        stack = [node]
        found = []
        while stack:
            n = stack.pop()
            for child in n.children:
                if child.start_byte < start or child.end_byte > end:
                    if child.start_byte < end and child.end_byte > start:
                        stack.append(child)
                    continue
                if child.type in ("simple_expansion", "expansion", "command_substitution", "arithmetic_expansion"):
                    found.append(child)
                else:
                    stack.append(child)
        found.sort(key=lambda c: c.start_byte)
        for child in found:
            if child.start_byte < pos:
                continue
            gap = self.text_bytes(pos, child.start_byte)
            v, a = join(self.pieces(child, True))
            if strict_parts is not None:
                strict_parts = None if v is None else strict_parts + [gap, v]
            if assumed_parts is not None:
                assumed_parts = None if a is None else assumed_parts + [gap, a]
            pos = child.end_byte
        tail = self.text_bytes(pos, end)
        strict = None if strict_parts is None else "".join(strict_parts) + tail
        assumed = None if assumed_parts is None else "".join(assumed_parts) + tail
        return self.arith_value_text(strict, assumed)

    def arith_value_text(self, strict: str | None, assumed: str | None) -> tuple[str | None, str | None]:
        effects: dict[str, list] = {}

        def run(text: str | None, mode: int):
            if text is None:
                return None
            local: dict[str, int | None] = {}

            def lookup(name: str, depth: int = 0):
                if name in local:
                    return local[name]
                var = self.vars.get(name)
                if var is None:
                    return None if mode == 0 or name in ALWAYS_SET else 0
                if var.unset:
                    return 0
                raw = var.value if mode == 0 else var.assumed
                if raw is None:
                    return None
                val = parse_int(raw)
                if val is None and depth < 8 and raw.strip():
                    try:
                        val = Arith(raw, lambda n: lookup(n, depth + 1), lambda n, v: None).run()
                    except (ArithError, RecursionError):
                        val = None
                return val

            def assign(name: str, value):
                local[name] = value
                effects.setdefault(name, [None, None])[mode] = value

            try:
                result = Arith(text, lookup, assign).run()
            except (ArithError, RecursionError, OverflowError, ValueError):
                return None
            return result

        v = run(strict, 0)
        a = run(assumed, 1)
        for name, (ev, ea) in effects.items():
            old = self.vars.get(name)
            exported = bool(old and old.exported and not old.unset) or self.allexport
            sv = None if ev is None else str(ev)
            sa = None if ea is None else str(ea)
            self.set_var(name, Var(((sv, sa),), exported, old.span if old else None, "assignment"))
        return (None if v is None else str(v), None if a is None else str(a))

    def command_substitution(self, node) -> tuple[str | None, str | None]:
        inner = [c for c in node.children if c.is_named and c.type != "comment"]
        if len(inner) == 1 and inner[0].type == "redirected_statement":
            return self.cat_heredoc(inner[0])
        if len(inner) != 1 or inner[0].type != "command":
            return UNKNOWN
        cmd = inner[0]
        name = cmd.child_by_field_name("name")
        if name is None or any(c.type == "variable_assignment" for c in cmd.children):
            return UNKNOWN
        program = self.text(name)
        args = [c for c in cmd.children_by_field_name("argument")]
        if any(c.type in _REDIRECTS for c in cmd.children):
            return UNKNOWN
        if program == "expr":
            words = self.fields(args)
            v = None if any(w.value is None for w in words) else expr_eval([w.value for w in words])
            a = None if any(w.assumed is None for w in words) else expr_eval([w.assumed for w in words])
            return (v, a)
        if program == "echo":
            words = self.fields(args)
            if words and words[0].value is not None and re.fullmatch(r"-[neE]+", words[0].value):
                if "e" in words[0].value:
                    return UNKNOWN
                words = words[1:]
            v = None if any(w.value is None for w in words) else " ".join(w.value for w in words).rstrip("\n")
            a = None if any(w.assumed is None for w in words) else " ".join(w.assumed for w in words).rstrip("\n")
            return (v, a)
        return UNKNOWN

    def cat_heredoc(self, node):
        """``$(cat <<EOF ... EOF)``: the here-document's body, trailing newlines removed."""
        body = node.child_by_field_name("body")
        redirects = [c for c in node.children if c.type in _REDIRECTS]
        if body is None or body.type != "command" or len(redirects) != 1 or redirects[0].type != "heredoc_redirect":
            return UNKNOWN
        if self.text(body).strip() != "cat" or any(c.type in _REDIRECTS for c in redirects[0].children):
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

    def fields(self, nodes) -> list[Word]:
        """Words bash passes for these argument nodes (after splitting unquoted expansions)."""
        out: list[Word] = []
        saved_literal = self._literal
        for node in nodes:
            self._literal = True
            pieces = self.pieces(node, False)
            literal = self._literal
            span = self.span(node)
            raw = self.text(node)
            if raw.startswith("~"):  # tilde expansion: a home directory we cannot know
                out.append(Word(span, raw, None, False, None, False, ((None, None),)))
                continue
            if literal and len(pieces) == 1 and pieces[0] is not None:
                v, a, _q = pieces[0]
                out.append(Word(span, raw, v, True, a, False, ((v, a),)))
                continue
            for field_parts, may_split in self.split(pieces):
                v, a = join(field_parts)
                out.append(Word(span, raw, v, literal, a, may_split, tuple(field_parts)))
        self._literal = saved_literal
        return out

    @staticmethod
    def split(pieces) -> list[tuple[list, bool]]:
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

    def expand_text(self, text: str, depth: int = 0) -> tuple[str | None, str | None]:
        """Expand a here-document body (``$VAR``, ``${VAR...}``, ``$((...))``; ``$(...)`` is unknown)."""
        return join(self.expand_text_parts(text, depth))

    def expand_text_parts(self, text: str, depth: int = 0) -> list[tuple]:
        """``expand_text`` as pieces ``(value, assumed)``: the known text around unknown values."""
        parts: list[tuple] = []

        def add(v, a):
            parts.append((v, a))

        i, n = 0, len(text)
        lit_start = 0
        while i < n:
            ch = text[i]
            if ch == "\\" and i + 1 < n:
                i += 2
                continue
            if ch == "`":
                add(unquote_dq(text[lit_start:i], "$`\\"), unquote_dq(text[lit_start:i], "$`\\"))
                end = text.find("`", i + 1)
                i = n if end == -1 else end + 1
                lit_start = i
                add(None, None)
                continue
            if ch != "$" or i + 1 >= n:
                i += 1
                continue
            lit = unquote_dq(text[lit_start:i], "$`\\")
            add(lit, lit)
            nxt = text[i + 1]
            if text.startswith("$((", i):
                end = text.find("))", i + 3)
                if end == -1:
                    add(None, None)
                    i = n
                else:
                    inner = text[i + 3 : end]
                    iv, ia = self.expand_text(inner, depth + 1) if depth < 8 else UNKNOWN
                    add(*self.arith_value_text(iv, ia))
                    i = end + 2
            elif nxt == "(":
                level, j = 0, i + 1
                while j < n:
                    if text[j] == "(":
                        level += 1
                    elif text[j] == ")":
                        level -= 1
                        if level == 0:
                            break
                    j += 1
                add(None, None)
                i = j + 1
            elif nxt == "{":
                level, j = 0, i + 1
                while j < n:
                    if text[j] == "{":
                        level += 1
                    elif text[j] == "}":
                        level -= 1
                        if level == 0:
                            break
                    j += 1
                inner = text[i + 2 : j]
                add(*self.expand_braced(inner, depth))
                i = j + 1
            else:
                m = re.match(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]", text[i + 1 :])
                if not m:
                    i += 1
                    continue
                add(*join(self.var_pieces(m.group(0), True, None)))
                i += 1 + len(m.group(0))
            lit_start = i
        lit = unquote_dq(text[lit_start:], "$`\\")
        add(lit, lit)
        return parts

    def expand_braced(self, inner: str, depth: int) -> tuple[str | None, str | None]:
        m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)(?::?[-=+?])?", inner)
        if not m:
            return UNKNOWN
        name = m.group(1)
        rest = inner[len(name) :]
        base = join(self.var_pieces(name, True, None))
        if not rest:
            return base
        om = re.match(r"(:?[-=+?])", rest)
        if not om or depth > 8:
            return UNKNOWN
        op = om.group(1)
        word = self.expand_text(rest[len(op) :], depth + 1)
        var = self.vars.get(name)
        colon = op.startswith(":")
        out = []
        for mode in (0, 1):
            b = base[mode]
            if b is None and not (var is not None and var.unset):
                out.append(None)
                continue
            is_set = var is not None and not var.unset
            use_base = (b != "") if colon else is_set
            if op.lstrip(":") == "+":
                out.append(word[mode] if use_base else "")
            elif op.lstrip(":") == "?":
                out.append(b if use_base else None)
            else:
                out.append(b if use_base else word[mode])
        return (out[0], out[1])
