"""The walker: reads the statements of a tree-sitter-bash tree in order, as bash runs them.

See the package docstring for the rules of the evaluation.
"""

from __future__ import annotations

import bisect

from dslint.source import Span

from .arith import ARITH_ASSIGN_RE
from .assignments import Assignments
from .commands import Commands
from .expand import Expansion
from .model import FunctionDef, Script
from .variables import ALWAYS_SET, ASSIGN_WORD_RE, NAME_RE, Ctx, Var, unknown_var

_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_MAX_DEPTH = 120  # statement nesting handled; deeper constructs are skipped


class Walker(Expansion, Assignments, Commands):


    def __init__(self, script: Script, data: bytes):
        self.script = script
        self.source = script.source
        self.data = data
        self.fixed_span: Span | None = None  # set while walking an eval'd string not written verbatim
        self.shift: int | None = None  # an eval'd string written verbatim: its start in the file
        self.ascii = len(data) == len(script.source.text)  # byte offsets are character offsets
        self.eval_depth = 0
        self.vars: dict[str, Var] = {}
        self.allexport = False
        self.locals: list[set[str]] = []
        self.func_assigns: dict[str, tuple[frozenset, frozenset]] = {}
        self.events: list[tuple] = []  # ("assign", Assignment, ctx) / ("command", Command, ctx)
        self.hoisted: dict[int, int] = {}  # command start byte -> leading segments already run
        # command start byte -> words tree-sitter put after a redirection's target (bash: arguments)
        self.spilled: dict[int, list] = {}
        self.owned = True  # whether self.vars may be written in place
        self.logs: list[set[str]] = []  # names written, one set per open branch
        self._nesting = 0
        self._assign_index: list[tuple] = []
        self._literal = True
        self._ctx = Ctx()

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

    def _after_target(self, redirect) -> list:
        """The words after a file redirection's target: bash takes one word as the target and the
        rest as arguments of the command (`cmd a 2>err.log b` runs `cmd a b`); tree-sitter-bash
        reads them all as destinations. Only words on the command's line count: a newline between
        them (tree-sitter's recovery from `> <newline>`, which bash rejects) ends the words."""
        if redirect.type != "file_redirect":
            return []
        out = []
        prev_end = None
        for child in redirect.children:
            if prev_end is not None and self.newline_between(prev_end, child.start_byte):
                return []  # bash stops at the newline (a syntax error when the target is missing)
            prev_end = child.end_byte
            if child.is_named and child.type != "file_descriptor":
                out.append(child)
        return out[1:]

    def redirected(self, node, ctx: Ctx) -> None:
        body = node.child_by_field_name("body")
        cmd = None
        redirects = [c for c in node.children if c.type in _REDIRECTS]
        if body is not None:
            if body.type == "command" and not node.has_error:  # not tree-sitter's recovery from a syntax error
                spilled = [w for r in redirects for w in self._after_target(r)]
                if spilled:
                    self.spilled[body.start_byte] = spilled
            cmd = self.stmt(body, ctx._replace(depth=ctx.depth + 1))
            self.spilled.pop(body.start_byte, None)
        self.heredocs(redirects, cmd)


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

