"""The walker: reads the statements of a tree-sitter-bash tree in order, as bash runs them.

See the package docstring for the rules of the evaluation.
"""

from __future__ import annotations

import bisect
import os
import re

from dslint.documents.model import ParseProblem
from dslint.source import Span

from .arith import ARITH_ASSIGN_RE, Arith, ArithError, expr_eval, parse_int
from .model import Assignment, Command, FunctionDef, Heredoc, Script, Value, VarRef, Word
from .pieces import BREAK, UNKNOWN, join, known
from .quoting import ansi_c, remove_affix, unquote_dq, unquote_word
from .treesitter import parser
from .variables import ALWAYS_SET, ASSIGN_WORD_RE, NAME_RE, Ctx, Var, unknown_var
from .wrappers import MPI_FLAGS, MPI_TWO_VALUES, SRUN_LONG_FLAGS, SRUN_SHORT_FLAGS

_IFS_SPLIT = re.compile(r"[ \t\n]+")
_BRACE_RE = re.compile(r"\{[^{}\s]*(,|\.\.)[^{}\s]*\}")
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_MAX_DEPTH = 120  # statement nesting handled; deeper constructs are skipped
_MAX_EVAL_DEPTH = 4
_MAX_EXPANSION_NESTING = 100  # $( $( ... ) ), ${a:-${b:-...}} deeper than this is unknown


class Walker:
    def __init__(self, script: Script, data: bytes):
        self.script = script
        self.source = script.source
        self.data = data
        self.fixed_span: Span | None = None  # set while walking an eval'd string
        self.ascii = len(data) == len(script.source.text)  # byte offsets are character offsets
        self.eval_depth = 0
        self.vars: dict[str, Var] = {}
        self.allexport = False
        self.locals: list[set[str]] = []
        self.func_assigns: dict[str, tuple[frozenset, frozenset]] = {}
        self.events: list[tuple] = []  # ("assign", Assignment, ctx) / ("command", Command, ctx)
        self.hoisted: dict[int, int] = {}  # command start byte -> leading segments already run
        self.owned = True  # whether self.vars may be written in place
        self.logs: list[set[str]] = []  # names written, one set per open branch
        self._nesting = 0
        self._assign_index: list[tuple] = []
        self._literal = True
        self._ctx = Ctx()

    # ---- positions ----------------------------------------------------------------

    def span(self, node) -> Span:
        if self.fixed_span is not None:
            return self.fixed_span
        if self.ascii:
            return Span(self.source, node.start_byte, node.end_byte)
        cho = self.source.char_offset
        return Span(self.source, cho(node.start_byte), cho(node.end_byte))

    def span_bytes(self, start: int, end: int) -> Span:
        if self.fixed_span is not None:
            return self.fixed_span
        if self.ascii:
            return Span(self.source, start, end)
        cho = self.source.char_offset
        return Span(self.source, cho(start), cho(end))

    def text(self, node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def text_bytes(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8", "replace")

    # ---- statements ---------------------------------------------------------------

    def block(self, children, ctx: Ctx) -> None:
        count = len(children)
        for index, child in enumerate(children):
            if not child.is_named:
                continue
            bg = index + 1 < count and children[index + 1].type == "&"
            self.stmt(child, ctx._replace(background=True) if bg else ctx)

    def stmt(self, node, ctx: Ctx):
        t = node.type
        if ctx.depth > _MAX_DEPTH:
            return None
        self._ctx = ctx
        if t == "command":
            return self.command(node, ctx)
        if t in ("pipeline", "list", "redirected_statement", "negated_command"):
            self.hoist_assignments(node, ctx)
        if t == "variable_assignment":
            self.assign_statement([node], ctx, node)
        elif t == "variable_assignments":
            self.assign_statement([c for c in node.children if c.type == "variable_assignment"], ctx, node)
        elif t == "declaration_command":
            self.declaration(node, ctx)
        elif t == "unset_command":
            self.unset(node, ctx)
        elif t == "redirected_statement":
            self.redirected(node, ctx)
        elif t == "pipeline":
            parts = [c for c in node.children if c.is_named and c.type != "comment"]
            if len(parts) <= 1:
                for part in parts:
                    self.stmt(part, ctx._replace(depth=ctx.depth + 1))
            else:
                saved = self.share()
                for part in parts:
                    self.use(saved)
                    self.stmt(part, ctx._replace(depth=ctx.depth + 1))
                self.use(saved)
        elif t == "list":
            self.list_(node, ctx)
        elif t == "subshell":
            saved = self.share()
            saved_allexport = self.allexport
            self.block(node.children, ctx._replace(depth=ctx.depth + 1))
            self.use(saved)
            self.allexport = saved_allexport
        elif t == "compound_statement":
            kids = node.children
            if kids and kids[0].type == "((":
                self.arith_command(node, ctx)
            else:
                self.block(kids, ctx._replace(depth=ctx.depth + 1))
        elif t == "if_statement":
            self.if_(node, ctx)
        elif t == "case_statement":
            self.case(node, ctx)
        elif t in ("while_statement", "until_statement"):
            self.loop(
                node,
                ctx,
                [c for c in self.field_children(node, "condition") if c.is_named],
                node.child_by_field_name("body"),
            )
        elif t in ("for_statement", "select_statement"):
            var = node.child_by_field_name("variable")
            names = {self.text(var)} if var is not None else set()
            self.loop(node, ctx, [], node.child_by_field_name("body"), names)
        elif t == "c_style_for_statement":
            self.loop(node, ctx, [], node.child_by_field_name("body"))
        elif t == "function_definition":
            self.function_def(node, ctx)
        elif t == "negated_command":
            for child in node.children:
                if child.is_named:
                    self.stmt(child, ctx._replace(depth=ctx.depth + 1))
        elif t in ("do_group", "else_clause", "program"):
            self.block(node.children, ctx._replace(depth=ctx.depth + 1))
        return None

    def field_children(self, node, name: str) -> list:
        out = []
        for i, child in enumerate(node.children):
            if node.field_name_for_child(i) == name:
                out.append(child)
        return out

    def list_(self, node, ctx: Ctx) -> None:
        # `a && b || c` nests to the left: walk the chain without recursing on it
        chain = []
        left = node
        while left.type == "list":
            kids = [c for c in left.children if c.type != "comment"]
            if len(kids) < 3:
                break
            chain.append(kids[-1])
            left = kids[0]
        inner = ctx._replace(depth=ctx.depth + 1)
        if left.type == "list":
            self.block(left.children, inner)
        else:
            self.stmt(left, inner._replace(background=False))
        for right in reversed(chain):
            base = self.share()
            self.logs.append(set())
            self.stmt(right, inner._replace(conditional=True))
            branch = self.share()
            self.merge(base, [base, branch], self.end_log())

    # ---- the variable table: copy on write, with a log of names written in each branch ----

    def share(self) -> dict:
        """The current table, which the caller keeps: the next write copies it first."""
        self.owned = False
        return self.vars

    def use(self, table: dict) -> None:
        self.vars = table
        self.owned = False

    def set_var(self, name: str, var: Var) -> None:
        if not self.owned:
            self.vars = dict(self.vars)
            self.owned = True
        self.vars[name] = var
        if self.logs:
            self.logs[-1].add(name)

    def end_log(self, propagate: bool = True) -> set[str]:
        names = self.logs.pop()
        if propagate and self.logs:
            self.logs[-1].update(names)
        return names

    def merge(self, base: dict, branches: list[dict], names: set[str]) -> None:
        """Make the table the join of the branches; ``names`` are the variables any branch wrote."""
        changed = {}
        for name in names:
            got = [b.get(name) for b in branches]
            first = got[0]
            if all(g is first for g in got):
                if first is not base.get(name):
                    changed[name] = first
                continue
            if first is not None and all(g is not None and g.same(first) for g in got):
                changed[name] = first
                continue
            exported = any(g is not None and g.exported for g in got)
            setters = [g for g in got if g is not None and g is not base.get(name)]
            span = setters[-1].span if setters else None
            kind = setters[-1].kind if setters else "assignment"
            assumed_vals = set()
            for g in got:
                if g is None:
                    assumed_vals.add(None if name in ALWAYS_SET else "")
                elif g.unset:
                    assumed_vals.add("")
                else:
                    assumed_vals.add(g.assumed)
            assumed = assumed_vals.pop() if len(assumed_vals) == 1 else None
            changed[name] = unknown_var(exported, span, kind, assumed)
        if not changed:
            self.use(base)
            return
        result = dict(base)
        for name, var in changed.items():
            if var is None:
                result.pop(name, None)
            else:
                result[name] = var
        self.vars = result
        self.owned = True

    def if_(self, node, ctx: Ctx) -> None:
        kids = node.children
        inner = ctx._replace(depth=ctx.depth + 1)
        i = 0
        # condition: between `if` and `then`
        while i < len(kids) and kids[i].type != "then":
            if kids[i].is_named:
                self.stmt(kids[i], inner)
            i += 1
        base = self.share()
        self.logs.append(set())
        branches = []
        body = []
        i += 1
        has_else = False
        clauses = []
        while i < len(kids):
            k = kids[i]
            if k.type in ("elif_clause", "else_clause"):
                clauses.append(k)
            elif k.type != "fi" and k.is_named:
                body.append(k)
            i += 1
        cond_ctx = inner._replace(conditional=True)
        for k in body:
            self.stmt(k, cond_ctx)
        branches.append(self.share())
        # elif conditions run only when the branches before them did not
        pre = base
        for clause in clauses:
            if clause.type == "else_clause":
                has_else = True
                self.use(pre)
                self.block(clause.children, cond_ctx)
                branches.append(self.share())
                continue
            ck = clause.children
            j = 0
            self.use(pre)
            while j < len(ck) and ck[j].type != "then":
                if ck[j].is_named:
                    self.stmt(ck[j], cond_ctx)
                j += 1
            pre = self.share()
            for k in ck[j + 1 :]:
                if k.is_named:
                    self.stmt(k, cond_ctx)
            branches.append(self.share())
        if not has_else:
            branches.append(pre)
        self.merge(base, branches, self.end_log())

    def case(self, node, ctx: Ctx) -> None:
        inner = ctx._replace(depth=ctx.depth + 1, conditional=True)
        base = self.share()
        self.logs.append(set())
        branches = []
        has_default = False
        for item in node.children:
            if item.type != "case_item":
                continue
            self.use(base)
            for i, child in enumerate(item.children):
                fname = item.field_name_for_child(i)
                if fname == "value":
                    if self.text(child).strip() == "*":
                        has_default = True
                    continue
                if fname == "termination" or not child.is_named:
                    continue
                self.stmt(child, inner)
            branches.append(self.share())
        if not has_default:
            branches.append(base)
        self.merge(base, branches, self.end_log())

    def loop(self, node, ctx: Ctx, conditions, body, extra_names: set[str] | None = None) -> None:
        names = set(extra_names or ())
        self.assigned_names(node, names)
        before = self.share()
        self.logs.append(set())
        for name in names:
            old = self.vars.get(name)
            self.set_var(
                name,
                unknown_var(
                    bool(old and old.exported) or self.allexport,
                    old.span if old else None,
                    old.kind if old else "assignment",
                ),
            )
        inner = ctx._replace(depth=ctx.depth + 1, in_loop=True)
        for cond in conditions:
            self.stmt(cond, inner)
        if body is not None:
            self.block(body.children, inner) if body.type == "do_group" else self.stmt(body, inner)
        written = self.end_log()
        for name in names | written:
            cur = self.vars.get(name)
            old = before.get(name)
            exported = bool(cur and cur.exported) or bool(old and old.exported)
            self.set_var(name, unknown_var(exported, cur.span if cur else None, cur.kind if cur else "assignment"))

    def assigned_names(self, node, out: set[str]) -> None:
        """Names a subtree may assign (syntactically): used to make loop variables unknown.

        The first loop scanned records every assignment site under it; loops nested inside it
        reuse that index, so deeply nested loops stay linear.
        """
        entry = next((e for e in self._assign_index if e[0] <= node.start_byte and node.end_byte <= e[1]), None)
        if entry is None:
            sites = sorted(self.assignment_sites(node))
            entry = (node.start_byte, node.end_byte, [p for p, _ in sites], [n for _, n in sites])
            self._assign_index.append(entry)
        _lo, _hi, positions, names = entry
        a = bisect.bisect_left(positions, node.start_byte)
        b = bisect.bisect_left(positions, node.end_byte)
        for name in names[a:b]:
            if name.startswith("()"):
                called = self.func_assigns.get(name[2:])
                if called:
                    out.update(called[0])
            else:
                out.add(name)

    def assignment_sites(self, node) -> list[tuple[int, str]]:
        sites: list[tuple[int, str]] = []
        stack = [node]
        while stack:
            n = stack.pop()
            t = n.type
            pos = n.start_byte
            if t == "variable_assignment":
                name = n.child_by_field_name("name")
                if name is not None:
                    if name.type == "subscript":
                        name = name.child_by_field_name("name") or name
                    sites.append((pos, self.text(name)))
            elif t in ("for_statement", "select_statement"):
                var = n.child_by_field_name("variable")
                if var is not None:
                    sites.append((pos, self.text(var)))
            elif t in ("declaration_command", "unset_command"):
                for c in n.children:
                    if c.type == "variable_name":
                        sites.append((pos, self.text(c)))
            elif t == "expansion":
                kids = n.children
                for i, c in enumerate(kids):
                    if c.type in (":=", "=") and i > 0:
                        sites.append((pos, self.text(kids[i - 1]).split("[")[0]))
            elif t in ("arithmetic_expansion", "c_style_for_statement") or (
                t == "compound_statement" and n.children and n.children[0].type == "(("
            ):
                for m in ARITH_ASSIGN_RE.finditer(self.text(n)):
                    sites.append((pos, m.group(1) or m.group(2) or m.group(3)))
                continue
            elif t == "command":
                name = n.child_by_field_name("name")
                if name is not None:
                    cmd = self.text(name)
                    if cmd in ("read", "mapfile", "readarray", "getopts", "printf", "let"):
                        for arg in n.children_by_field_name("argument"):
                            txt = self.text(arg).strip("\"'")
                            m = ASSIGN_WORD_RE.match(txt)
                            if m:
                                sites.append((pos, m.group(1)))
                            elif NAME_RE.match(txt):
                                sites.append((pos, txt))
                    else:
                        sites.append((pos, "()" + cmd))
            stack.extend(n.children)
        return sites

    def function_def(self, node, ctx: Ctx) -> None:
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name_node is None:
            return
        name = self.text(name_node)
        saved = self.share()
        saved_allexport = self.allexport
        self.logs.append(set())
        self.locals.append(set())
        if body is not None:
            inner = ctx._replace(function=name, depth=ctx.depth + 1, conditional=False, in_loop=False)
            if body.type == "compound_statement":
                self.block(body.children, inner)
            else:
                self.stmt(body, inner)
        local_names = self.locals.pop()
        written = self.end_log(propagate=False)
        after = self.vars
        assigns = frozenset(n for n in written if after.get(n) is not saved.get(n) and n not in local_names)
        exported = frozenset(n for n in assigns if after[n].exported)
        self.use(saved)
        self.allexport = saved_allexport
        self.func_assigns[name] = (assigns, exported)
        self.script.functions[name] = FunctionDef(name, self.span(node), assigns)

    def arith_command(self, node, ctx: Ctx) -> None:
        kids = node.children
        if len(kids) < 2:
            return
        self.arith_text(kids[0].end_byte, kids[-1].start_byte if kids[-1].type == "))" else node.end_byte, node)

    def redirected(self, node, ctx: Ctx) -> None:
        body = node.child_by_field_name("body")
        cmd = None
        if body is not None:
            cmd = self.stmt(body, ctx._replace(depth=ctx.depth + 1))
        redirects = [c for c in node.children if c.type in _REDIRECTS]
        self.heredocs(redirects, cmd)

    # ---- assignments ----------------------------------------------------------------

    def record_assignment(self, a: Assignment, ctx: Ctx) -> Assignment:
        a.in_function = ctx.function
        a.conditional = ctx.conditional
        a.in_loop = ctx.in_loop
        a.from_eval = ctx.from_eval
        self.script.assignments.append(a)
        return a

    def assignment_parts(self, node):
        """(name, name_node, op, value_node, is_subscript) of a variable_assignment node."""
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        op = "="
        for child in node.children:
            if child.type in ("=", "+="):
                op = child.type
                break
        subscript = False
        if name_node is not None and name_node.type == "subscript":
            subscript = True
            name_node = name_node.child_by_field_name("name") or name_node
        name = self.text(name_node) if name_node is not None else self.text(node).split("=")[0]
        return name, name_node, op, value_node, subscript

    def assign_value(self, node, value_node, name: str, op: str, subscript: bool):
        """Evaluate the right side of an assignment: (Word, parts, array)."""
        if value_node is None:
            eq_end = node.end_byte
            span = self.span_bytes(eq_end, eq_end)
            word = Word(span, "", "", True, "", False, (("", ""),))
            parts: tuple = (("", ""),)
            array = None
        elif value_node.type == "array":
            elements = []
            literal = True
            for f in self.fields([c for c in value_node.children if c.is_named and c.type != "comment"]):
                elements.append(f.parts)
                literal = literal and f.literal
            array = tuple(elements)
            joined = [join(el) for el in elements]
            joined_v = None if any(j[0] is None for j in joined) else " ".join(j[0] for j in joined)
            joined_a = None if any(j[1] is None for j in joined) else " ".join(j[1] for j in joined)
            word = Word(self.span(value_node), self.text(value_node), joined_v, literal, joined_a, False, ())
            parts = array[0] if array else ()
        else:
            saved_literal = self._literal
            self._literal = True
            pieces = self.pieces(value_node, False)
            raw = self.text(value_node)
            if raw.startswith("~"):
                pieces = [(None, None, False)]
                self._literal = False
            parts = tuple((p[0], p[1]) for p in pieces if p is not None)
            v, a = join(parts)
            word = Word(self.span(value_node), raw, v, self._literal, a, False, parts)
            self._literal = saved_literal
            array = None
        old = self.vars.get(name)
        if subscript:
            return word, ((None, None),), None
        if op == "+=" and old is not None and not old.unset:
            if array is not None:
                base = old.array if old.array is not None else ((old.parts,) if old.parts else ())
                array = tuple(base) + array
                parts = array[0] if array else ()
            else:
                parts = old.parts + parts
        elif op == "+=" and old is None:
            # appending to a variable the caller may have set
            parts = ((None, ""),) + parts if array is None else parts
        return word, parts, array

    def assign_statement(self, nodes, ctx: Ctx, stmt_node) -> None:
        for node in nodes:
            name, name_node, op, value_node, subscript = self.assignment_parts(node)
            word, parts, array = self.assign_value(node, value_node, name, op, subscript)
            old = self.vars.get(name)
            exported = bool(old is not None and old.exported and not old.unset) or self.allexport
            span = self.span(node)
            self.set_var(name, Var(parts, exported, span, "assignment", array))
            a = self.record_assignment(
                Assignment(
                    name, self.span(name_node) if name_node is not None else span, word, span, exported, "plain"
                ),
                ctx,
            )
            self.events.append(("assign", a, ctx, stmt_node.start_byte))

    def declaration(self, node, ctx: Ctx) -> None:
        kids = node.children
        if not kids:
            return
        keyword = kids[0].type if not kids[0].is_named else self.text(kids[0])
        flags = ""
        unflags = ""
        export = keyword == "export"
        for child in kids[1:]:
            if child.type == "word":
                txt = self.text(child)
                if txt.startswith("-"):
                    flags += txt[1:]
                    continue
                if txt.startswith("+"):
                    unflags += txt[1:]
                    continue
        if "f" in flags or "F" in flags or ("p" in flags and keyword != "export"):
            return
        if keyword == "export" and "n" in flags:
            export_flag: bool | None = False
        elif export or "x" in flags:
            export_flag = True
        elif "x" in unflags:
            export_flag = False
        else:
            export_flag = None  # leave as is
        is_local = keyword == "local" or (keyword in ("declare", "typeset") and self.locals and "g" not in flags)
        kind = "export" if export_flag else "plain"
        for child in kids[1:]:
            t = child.type
            if t == "variable_assignment":
                name, name_node, op, value_node, subscript = self.assignment_parts(child)
                word, parts, array = self.assign_value(child, value_node, name, op, subscript)
                if "i" in flags and word.value is not None:
                    val = self.arith_value_text(word.value, word.assumed)
                    parts = (val,)
                old = self.vars.get(name)
                exported = (
                    export_flag
                    if export_flag is not None
                    else bool(old and old.exported and not old.unset) or self.allexport
                )
                span = self.span(child)
                self.set_var(name, Var(parts, exported, span, "export" if exported else "assignment", array))
                if is_local and self.locals:
                    self.locals[-1].add(name)
                a = self.record_assignment(
                    Assignment(
                        name, self.span(name_node) if name_node is not None else span, word, span, bool(exported), kind
                    ),
                    ctx,
                )
                self.events.append(("assign" if not exported else "export", a, ctx, node.start_byte))
            elif t == "variable_name":
                name = self.text(child)
                span = self.span(child)
                old = self.vars.get(name)
                if is_local and self.locals:
                    self.locals[-1].add(name)
                if export_flag is None:
                    if old is None and (keyword == "local" or is_local):
                        self.set_var(name, Var((("", ""),), False, span, "assignment", unset=True))
                    continue
                if old is None:
                    if export_flag:
                        self.set_var(name, Var(((None, None),), True, span, "caller-env"))
                        self.record_assignment(Assignment(name, span, None, span, True, "export"), ctx)
                    continue
                self.set_var(name, old.with_export(export_flag and not old.unset))
                if export_flag:
                    self.record_assignment(Assignment(name, span, None, span, True, "export"), ctx)
            elif t in ("word", "string", "raw_string", "concatenation") and not self.text(child).startswith(("-", "+")):
                for f in self.fields([child]):
                    if f.value is None:
                        continue
                    m = ASSIGN_WORD_RE.match(f.value)
                    if not m or m.group(2) != "=":
                        continue
                    name = m.group(1)
                    val = f.value[m.end() :]
                    old = self.vars.get(name)
                    exported = export_flag if export_flag is not None else bool(old and old.exported) or self.allexport
                    self.set_var(name, Var(((val, val),), exported, f.span, "export" if exported else "assignment"))
                    vw = Word(f.span, f.raw, val, f.literal, val, False, ((val, val),))
                    self.record_assignment(Assignment(name, f.span, vw, f.span, bool(exported), kind), ctx)

    def unset(self, node, ctx: Ctx) -> None:
        functions = False
        for child in node.children:
            txt = self.text(child)
            if child.type == "word" and txt.startswith("-"):
                functions = "f" in txt
                continue
            if child.type in ("variable_name", "word"):
                if functions:
                    self.script.functions.pop(txt, None)
                    self.func_assigns.pop(txt, None)
                else:
                    self.set_var(txt, Var((("", ""),), False, self.span(child), "assignment", unset=True))

    # ---- expansion ----------------------------------------------------------------

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
            v, a = self.command_substitution(node)
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

    # ---- simple commands ------------------------------------------------------------

    def newline_between(self, start: int, end: int) -> bool:
        gap = self.data[start:end]
        if b"\n" not in gap:
            return False
        gap = gap.replace(b"\\\r\n", b"").replace(b"\\\n", b"")
        return b"\n" in gap

    def segments(self, node) -> list[list]:
        """The children of a command node, cut where bash would end the command.

        tree-sitter-bash joins ``A=1 B=2<newline>cmd`` (and ``A=1 B=2 # note<newline>cmd``)
        into one command; bash runs the assignments as a statement of their own.
        """
        segments: list[list] = [[]]
        prev_end = None
        for child in node.children:
            if child.type == "comment":
                segments.append([])
                prev_end = child.end_byte
                continue
            if prev_end is not None and segments[-1] and self.newline_between(prev_end, child.start_byte):
                segments.append([])
            segments[-1].append(child)
            prev_end = child.end_byte
        return [seg for seg in segments if seg]

    def hoist_assignments(self, node, ctx: Ctx) -> None:
        """Run assignment lines that tree-sitter folded into the first command of a compound statement."""
        first = node
        while first is not None and first.type != "command":
            if first.type not in ("pipeline", "list", "redirected_statement", "negated_command"):
                return
            first = next((c for c in first.children if c.is_named and c.type != "comment"), None)
        if first is None:
            return
        segs = self.segments(first)
        if len(segs) < 2:
            return
        for seg in segs[:-1]:
            self.simple_command(seg, ctx._replace(background=False))
        self.hoisted[first.start_byte] = len(segs) - 1

    def command(self, node, ctx: Ctx):
        segments = self.segments(node)
        skip = self.hoisted.pop(node.start_byte, 0)
        result = None
        for seg in segments[skip:]:
            result = self.simple_command(seg, ctx)
        return result

    def simple_command(self, parts, ctx: Ctx):
        self._ctx = ctx
        prefixes = []
        name_node = None
        arg_nodes = []
        redirects = []
        for child in parts:
            t = child.type
            if t in _REDIRECTS:
                redirects.append(child)
            elif name_node is None and t == "variable_assignment":
                prefixes.append(child)
            elif name_node is None and child.is_named:
                name_node = child
            elif child.is_named:
                arg_nodes.append(child)
        if name_node is None:
            if prefixes:
                self.assign_statement(prefixes, ctx, parts[0])
            if redirects:
                self.heredocs(redirects, None)
            return None
        words = self.fields([name_node, *arg_nodes])
        span = self.span_bytes(parts[0].start_byte, parts[-1].end_byte)
        # prefix assignments: evaluated after the words, each one seeing the ones before it
        saved = self.share()
        env: list[Assignment] = []
        for pa in prefixes:
            name, name_node_, op, value_node, subscript = self.assignment_parts(pa)
            word, vparts, array = self.assign_value(pa, value_node, name, op, subscript)
            aspan = self.span(pa)
            self.set_var(name, Var(vparts, True, aspan, "prefix", array))
            env.append(
                self.record_assignment(
                    Assignment(
                        name, self.span(name_node_) if name_node_ is not None else aspan, word, aspan, True, "prefix"
                    ),
                    ctx,
                )
            )
        if not words:
            # nothing left to run (e.g. `A=1 $EMPTY`): the assignments stay in the shell
            self.use(saved)
            if prefixes:
                self.assign_statement(prefixes, ctx, parts[0])
            return None
        prefix_vars = self.vars  # the command keeps this table; the next write copies it
        self.use(saved)
        cmd = self.build_command(words, env, prefix_vars, span, ctx)
        if redirects:
            self.heredocs(redirects, cmd)
        return cmd

    def build_command(self, words: list[Word], env: list[Assignment], visible: dict, span: Span, ctx: Ctx) -> Command:
        index, wrappers, extra_env, clears, unsets = self.unwrap(words, ctx)
        extra = [
            (a.name, Value(a.value.value if a.value else None, a.span, "prefix", a.value.assumed if a.value else None))
            for a in extra_env
        ]
        cmd = Command(
            span=span,
            name=words[index],
            args=words[index + 1 :],
            env=env + extra_env,
            in_function=ctx.function,
            conditional=ctx.conditional,
            in_loop=ctx.in_loop,
            from_eval=ctx.from_eval,
            background=ctx.background,
            wrappers=wrappers,
            clears_env=clears,
            _scope=(visible, extra, unsets, clears, ctx.child_shell),
        )
        self.script.commands.append(cmd)
        self.events.append(("command", cmd, ctx, None))
        self.after_command(cmd, ctx)
        return cmd

    def unwrap(self, words: list[Word], ctx: Ctx):
        """Peel ``nohup``/``env``/``exec``/``time``/... off the front of a command."""
        i = 0
        wrappers: list[Word] = []
        extra: list[Assignment] = []
        unsets: list[str] = []
        clears = False
        n = len(words)
        while i < n - 1:
            w = words[i]
            if w.value is None:
                break
            base = os.path.basename(w.value)
            j = i + 1
            local_env: list[Assignment] = []
            local_unsets: list[str] = []
            local_clear = False
            if base == "env":
                while j < n:
                    v = words[j].value
                    if v is None:
                        break
                    if v in ("-i", "-", "--ignore-environment"):
                        local_clear = True
                    elif v in ("-u", "--unset") and j + 1 < n:
                        j += 1
                        if words[j].value:
                            local_unsets.append(words[j].value)
                    elif v.startswith("--unset="):
                        local_unsets.append(v.split("=", 1)[1])
                    elif v.startswith("-u") and len(v) > 2:
                        local_unsets.append(v[2:])
                    elif v in ("-C", "--chdir") and j + 1 < n:
                        j += 1
                    elif v.startswith("--chdir=") or v in ("-0", "--null", "-v", "--debug"):
                        pass
                    elif v == "--":
                        j += 1
                        break
                    elif v.startswith("-"):
                        break
                    else:
                        m = ASSIGN_WORD_RE.match(v)
                        if not m or m.group(2) != "=":
                            break
                        local_env.append(self.env_word_assignment(words[j], m.group(1), ctx))
                    j += 1
            elif base == "exec":
                while j < n and words[j].value is not None and words[j].value.startswith("-"):
                    v = words[j].value
                    if v == "--":
                        j += 1
                        break
                    if "c" in v:
                        local_clear = True
                    if "a" in v:
                        j += 1
                    j += 1
            elif base in ("nohup", "builtin"):
                if j < n and words[j].value == "--":
                    j += 1
            elif base == "time":
                while j < n and words[j].value in ("-p", "--"):
                    j += 1
            elif base == "command":
                if j < n and words[j].value in ("-v", "-V"):
                    break
                while j < n and words[j].value in ("-p", "--"):
                    j += 1
            elif base == "timeout":
                while j < n and words[j].value is not None and words[j].value.startswith("-"):
                    v = words[j].value
                    j += 1
                    if v in ("-s", "-k", "--signal", "--kill-after"):
                        j += 1
                j += 1  # the duration
            elif base == "stdbuf":
                while j < n and words[j].value is not None and words[j].value.startswith("-"):
                    v = words[j].value
                    j += 1
                    if v in ("-i", "-o", "-e"):
                        j += 1
            elif base == "nice":
                while j < n and words[j].value is not None and words[j].value.startswith("-"):
                    v = words[j].value
                    j += 1
                    if v in ("-n", "--adjustment"):
                        j += 1
            elif base == "setsid":
                while j < n and words[j].value is not None and words[j].value.startswith("-"):
                    j += 1
            elif base == "taskset":
                pid_mode = False
                while j < n and words[j].value is not None and words[j].value.startswith("-"):
                    if "p" in words[j].value:
                        pid_mode = True
                    j += 1
                if pid_mode:
                    break
                j += 1  # the mask / cpu list
            elif base == "srun":
                while j < n and words[j].value is not None and words[j].value.startswith("-"):
                    v = words[j].value
                    j += 1
                    if v == "--":
                        break
                    if v.startswith("--"):
                        if "=" not in v and v[2:] not in SRUN_LONG_FLAGS:
                            j += 1
                    elif len(v) == 2 and v[1] not in SRUN_SHORT_FLAGS:
                        j += 1
            elif base in ("mpirun", "mpiexec", "mpiexec.hydra", "orterun"):
                while j < n and words[j].value is not None and words[j].value.startswith("-"):
                    v = words[j].value
                    opt = v.lstrip("-")
                    j += 1
                    if v == "--":
                        break
                    if "=" in opt:
                        continue
                    if opt in MPI_TWO_VALUES:
                        if opt in ("genv", "env") and j + 1 < n and words[j].value and NAME_RE.match(words[j].value):
                            local_env.append(self.mpi_env(words[j], words[j + 1], ctx))
                        j += 2
                    elif opt == "x" and j < n:
                        m = ASSIGN_WORD_RE.match(words[j].value or "")
                        if m and m.group(2) == "=":
                            local_env.append(self.env_word_assignment(words[j], m.group(1), ctx))
                        j += 1
                    elif opt not in MPI_FLAGS:
                        j += 1
            elif base == "numactl":
                while j < n and words[j].value is not None and words[j].value.startswith("-"):
                    v = words[j].value
                    j += 1
                    if v in (
                        "-C",
                        "-N",
                        "-m",
                        "-p",
                        "-i",
                        "-P",
                        "--physcpubind",
                        "--cpunodebind",
                        "--membind",
                        "--preferred",
                        "--interleave",
                    ):
                        j += 1
            else:
                break
            if j >= n:
                break
            wrappers.extend(words[i:j])
            extra.extend(local_env)
            unsets.extend(local_unsets)
            if local_clear:
                clears = True
                extra = list(local_env)
            i = j
        return i, wrappers, extra, clears, unsets

    def mpi_env(self, name_word: Word, value_word: Word, ctx: Ctx) -> Assignment:
        """``mpirun -genv NAME VALUE``: NAME=VALUE in the program's environment."""
        span = Span(name_word.span.source, name_word.span.start, max(name_word.span.end, value_word.span.end))
        return self.record_assignment(
            Assignment(name_word.value or "", name_word.span, value_word, span, True, "prefix"), ctx
        )

    def env_word_assignment(self, word: Word, name: str, ctx: Ctx) -> Assignment:
        span = word.span
        raw = word.raw
        exact = (span.end - span.start) == len(raw) and raw.startswith(name + "=")
        if exact:
            name_span = Span(span.source, span.start, span.start + len(name))
            vspan = Span(span.source, span.start + len(name) + 1, span.end)
            vraw = raw[len(name) + 1 :]
        else:
            name_span = vspan = span
            vraw = raw
        val = word.value[len(name) + 1 :] if word.value is not None else None
        asm = (
            word.assumed[len(name) + 1 :] if word.assumed is not None and word.assumed.startswith(name + "=") else None
        )
        vword = Word(
            vspan,
            vraw,
            val,
            word.literal,
            asm if val is None else val,
            word.may_split,
            ((val, asm if val is None else val),),
        )
        return self.record_assignment(Assignment(name, name_span, vword, span, True, "prefix"), ctx)

    def after_command(self, cmd: Command, ctx: Ctx) -> None:
        """Side effects of builtins on the variable table."""
        base = cmd.basename
        if base is None:
            return
        args = cmd.args
        if base in ("read", "mapfile", "readarray"):
            names = []
            skip = False
            for w in args:
                if skip:
                    skip = False
                    continue
                v = w.value
                if v is None:
                    continue
                if v.startswith("-"):
                    if v in ("-a", "-d", "-p", "-t", "-n", "-N", "-u", "-i", "-C", "-c", "-O", "-s"):
                        skip = True
                    if v == "-a" or (base != "read"):
                        pass
                    continue
                names.append(v)
            if base == "read" and not names:
                names = ["REPLY"]
            if base in ("mapfile", "readarray") and not names:
                names = ["MAPFILE"]
            # `read -a ARR` names the array after the option
            for w_index, w in enumerate(args):
                if w.value in ("-a",) and w_index + 1 < len(args) and args[w_index + 1].value:
                    names.append(args[w_index + 1].value)
            for name in names:
                if NAME_RE.match(name):
                    self.make_unknown(name, cmd.span)
        elif base == "getopts" and len(args) >= 2 and args[1].value:
            self.make_unknown(args[1].value, cmd.span)
            self.make_unknown("OPTARG", cmd.span)
        elif base == "printf" and len(args) >= 2 and args[0].value == "-v" and args[1].value:
            self.make_unknown(args[1].value.split("[")[0], cmd.span)
        elif base == "let":
            for w in args:
                if w.value is not None:
                    self.arith_value_text(w.value, w.assumed)
                else:
                    m = ASSIGN_WORD_RE.match(w.raw.strip("\"'"))
                    if m:
                        self.make_unknown(m.group(1), cmd.span)
        elif base == "set":
            for w in args:
                v = w.value
                if v is None:
                    continue
                if re.fullmatch(r"-[a-zA-Z]*a[a-zA-Z]*", v):
                    self.allexport = True
                elif re.fullmatch(r"\+[a-zA-Z]*a[a-zA-Z]*", v):
                    self.allexport = False
            for k, w in enumerate(args[:-1]):
                if w.value in ("-o", "+o") and args[k + 1].value == "allexport":
                    self.allexport = w.value == "-o"
        elif base == "eval":
            self.eval_words(cmd, args, ctx, child_shell=False)
        elif base in ("bash", "sh", "zsh", "dash", "ksh"):
            k = 0
            while (
                k < len(args) and args[k].value is not None and args[k].value.startswith("-") and args[k].value != "--"
            ):
                if "c" in args[k].value[1:] and not args[k].value.startswith("--"):
                    if k + 1 < len(args):
                        self.eval_words(cmd, [args[k + 1]], ctx, child_shell=True)
                    break
                k += 1
        elif base in self.func_assigns:
            assigns, exported = self.func_assigns[base]
            for name in assigns:
                self.make_unknown(name, cmd.span, export=name in exported)

    def make_unknown(self, name: str, span, export: bool = False) -> None:
        old = self.vars.get(name)
        exported = export or bool(old and old.exported and not old.unset) or self.allexport
        self.set_var(name, unknown_var(exported, span, "assignment"))

    def eval_words(self, cmd: Command, words: list[Word], ctx: Ctx, child_shell: bool) -> None:
        if not words or any(w.value is None for w in words):
            return
        if self.eval_depth >= _MAX_EVAL_DEPTH:
            return
        text = " ".join(w.value for w in words)
        if not text.strip():
            return
        data = text.encode("utf-8")
        tree = parser().parse(data)
        span = words[0].span if len(words) == 1 else Span(words[0].span.source, words[0].span.start, words[-1].span.end)
        saved = (self.data, self.fixed_span, self.share() if child_shell else self.vars)
        self.data = data
        self.fixed_span = span
        self.eval_depth += 1
        if tree.root_node.has_error:
            self.script.problems.append(ParseProblem(span, f"bash cannot parse the string run by `{cmd.basename}`"))
        inner = ctx._replace(from_eval=True, depth=ctx.depth + 1)
        try:
            if child_shell:
                self.vars = {n: v for n, v in self.vars.items() if v.exported and not v.unset}
                self.owned = True
                self.block(tree.root_node.children, inner._replace(child_shell=True))
            else:
                self.block(tree.root_node.children, inner)
        finally:
            self.data, self.fixed_span, old_vars = saved
            if child_shell:
                self.use(old_vars)
            self.eval_depth -= 1

    # ---- here-documents -------------------------------------------------------------

    def heredocs(self, redirects, cmd: Command | None) -> None:
        target: Word | None = None
        docs = []
        stack = list(redirects)
        while stack:
            r = stack.pop(0)
            if r.type == "file_redirect":
                op = None
                for child in r.children:
                    if not child.is_named:
                        op = child.type
                        break
                dest = r.child_by_field_name("destination")
                if op in (">", ">>", ">|", "&>", "&>>") and dest is not None and target is None:
                    fs = self.fields([dest])
                    if fs:
                        target = fs[0]
            elif r.type == "heredoc_redirect":
                docs.append(r)
                stack.extend(c for c in r.children if c.type == "file_redirect")
        if target is None and cmd is not None and cmd.basename == "tee":
            for w in cmd.args:
                if w.value is None or not w.value.startswith("-"):
                    target = w
                    break
        for r in docs:
            self.heredoc(r, target, cmd)

    def heredoc(self, node, target: Word | None, cmd: Command | None) -> None:
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
            return
        delim_raw = self.text(start_node)
        quoted = any(c in delim_raw for c in "'\"\\")
        delimiter = delim_raw.replace("'", "").replace('"', "").replace("\\", "")
        if body is None:
            if end_node is None:
                return
            bstart = bend = end_node.start_byte
        else:
            bstart = body.start_byte
            line_start = self.data.rfind(b"\n", 0, bstart) + 1
            if not self.data[line_start:bstart].strip(b" \t"):
                bstart = line_start
            bend = end_node.start_byte if end_node is not None else body.end_byte
            bend = self.data.rfind(b"\n", 0, bend) + 1 if end_node is not None else bend
            bend = max(bend, bstart)
        text = self.text_bytes(bstart, bend)
        if strip_tabs:
            text = "\n".join(line.lstrip("\t") for line in text.split("\n"))
        if quoted:
            value = text
        else:
            value = self.expand_text(text)[0]
        self.script.heredocs.append(Heredoc(self.span_bytes(bstart, bend), target, value, delimiter, not quoted, cmd))

    def expand_text(self, text: str, depth: int = 0) -> tuple[str | None, str | None]:
        """Expand a here-document body (``$VAR``, ``${VAR...}``, ``$((...))``; ``$(...)`` is unknown)."""
        vals: list | None = []
        asms: list | None = []

        def add(v, a):
            nonlocal vals, asms
            if vals is not None:
                vals = None if v is None else vals + [v]
            if asms is not None:
                asms = None if a is None else asms + [a]

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
        return (None if vals is None else "".join(vals), None if asms is None else "".join(asms))

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
