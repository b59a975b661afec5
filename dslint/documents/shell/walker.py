"""The walker: reads the statements of a tree-sitter-bash tree in order, as bash runs them.

See the package docstring for the rules of the evaluation. The walker composes the parts that
read statements: the variable table (variables.py) is the state; the expander (expand.py) reads
words from it; the assignments (assignments.py) and the commands (commands.py) change it. The
walker itself reads the compound statements (branches, loops, functions) and the strings that
``eval``/``bash -c``/``sbatch --wrap`` run.
"""

from __future__ import annotations

import bisect

from dslint.documents.treesitter import parser
from dslint.source import Span

from .arith import ARITH_ASSIGN_RE
from .assignments import Assignments
from .commands import Commands
from .evals import check_string, string_of, verbatim
from .expand import Expander
from .model import Command, FunctionDef, Script, Switch, Word
from .pieces import PLACEHOLDER
from .textmap import TextMap
from .variables import ASSIGN_WORD_RE, NAME_RE, Ctx, Var, VarTable, unknown_var

_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_HOISTING = frozenset({"pipeline", "list", "redirected_statement", "negated_command"})
_MAX_DEPTH = 120  # statement nesting handled; deeper constructs are skipped
_MAX_EVAL_DEPTH = 4
# commands whose arguments name the variables they write (`read NAME`, `let NAME=1`)
_NAMING_COMMANDS = frozenset({"read", "mapfile", "readarray", "getopts", "printf", "let"})


class Walker:
    def __init__(self, script: Script, data: bytes):
        self.script = script
        self.tm = TextMap(script.source, data)
        self.table = VarTable()
        self.events: list[tuple] = []  # ("assign", Assignment, ctx) / ("command", Command, ctx)
        self.expander = Expander(self.tm, self.table, script)
        self.assignments = Assignments(self.tm, self.table, self.expander, script, self.events)
        self.commands = Commands(self.tm, self.table, self.expander, self.assignments, script, self.events,
                                 self.run_string)
        self.eval_depth = 0
        self._assign_index: list[tuple] = []
        assignments = self.assignments
        self._statements = {
            "variable_assignment": lambda node, ctx: assignments.assign_statement([node], ctx, node),
            "variable_assignments": lambda node, ctx: assignments.assign_statement(
                [c for c in node.children if c.type == "variable_assignment"], ctx, node),
            "declaration_command": assignments.declaration,
            "unset_command": assignments.unset,
            "redirected_statement": self.redirected,
            "pipeline": self.pipeline,
            "list": self.list_,
            "subshell": self.subshell,
            "compound_statement": self.compound,
            "if_statement": self.if_,
            "case_statement": self.case,
            "while_statement": self.while_,
            "until_statement": self.while_,
            "for_statement": self.for_,
            "select_statement": self.for_,
            "c_style_for_statement": lambda node, ctx: self.loop(node, ctx, [], node.child_by_field_name("body")),
            "function_definition": self.function_def,
            "negated_command": self.negated,
            "do_group": self.nested_block,
            "else_clause": self.nested_block,
            "program": self.nested_block,
        }

    def block(self, children, ctx: Ctx) -> None:
        count = len(children)
        for index, child in enumerate(children):
            if not child.is_named:
                continue
            bg = index + 1 < count and children[index + 1].type == "&"
            self.stmt(child, ctx._replace(background=True) if bg else ctx)

    def stmt(self, node, ctx: Ctx):
        """Read one statement; a simple command's Command is returned (for its redirections)."""
        t = node.type
        if ctx.depth > _MAX_DEPTH:
            return None
        self.expander.ctx = ctx
        if t == "command":
            return self.commands.command(node, ctx)
        if t in _HOISTING:
            self.commands.hoist_assignments(node, ctx)
        read = self._statements.get(t)
        if read is not None:
            read(node, ctx)
        return None

    def nested_block(self, node, ctx: Ctx) -> None:
        self.block(node.children, ctx._replace(depth=ctx.depth + 1))

    def negated(self, node, ctx: Ctx) -> None:
        for child in node.children:
            if child.is_named:
                self.stmt(child, ctx._replace(depth=ctx.depth + 1, tested=True))

    def switch(self, kind: str, node, branches: int, exhaustive: bool) -> int:
        """Record an if/case/&&/|| and return its number, for the ``branch`` of the statements in it."""
        self.script.switches.append(Switch(kind, self.tm.span(node), branches, exhaustive))
        return len(self.script.switches) - 1

    def compound(self, node, ctx: Ctx) -> None:
        kids = node.children
        if kids and kids[0].type == "((":
            self.arith_command(node, ctx)
        else:
            self.block(kids, ctx._replace(depth=ctx.depth + 1))

    def pipeline(self, node, ctx: Ctx) -> None:
        parts = [c for c in node.children if c.is_named and c.type != "comment"]
        if len(parts) <= 1:
            for part in parts:
                self.stmt(part, ctx._replace(depth=ctx.depth + 1))
            return
        table = self.table
        saved = table.share()
        first, writes = len(self.script.commands), len(self.script.redirects)
        for part in parts:  # each part runs in a subshell of its own
            table.use(saved)
            self.stmt(part, ctx._replace(depth=ctx.depth + 1, subshell=True))
        table.use(saved)
        made = self.script.commands[first:]
        if len(self.script.redirects) > writes and made and self.script.redirects[-1].command is made[-1]:
            self.script.redirects[-1].pipeline = tuple(made)  # the last command's output goes to a file: it is the pipeline's

    def subshell(self, node, ctx: Ctx) -> None:
        table = self.table
        saved = table.share()
        saved_allexport = table.allexport
        self.block(node.children, ctx._replace(depth=ctx.depth + 1, subshell=True))
        table.use(saved)
        table.allexport = saved_allexport

    def list_(self, node, ctx: Ctx) -> None:
        # `a && b || c` nests to the left: walk the chain without recursing on it
        chain = []
        left = node
        while left.type == "list":
            kids = [c for c in left.children if c.type != "comment"]
            if len(kids) < 3:
                break
            chain.append((kids[1].type, kids[-1]))
            left = kids[0]
        inner = ctx._replace(depth=ctx.depth + 1)
        if left.type == "list":
            self.block(left.children, inner)
        else:
            # its status decides whether the right side runs
            self.stmt(left, inner._replace(background=False, tested=inner.tested or bool(chain)))
        table = self.table
        last = chain[0][1] if chain else None
        for operator, right in reversed(chain):
            base = table.share()
            table.logs.append(set())
            number = self.switch(operator if operator in ("&&", "||") else "&&", right, 1, False)
            # each part but the last is tested by the operator after it
            self.stmt(right, inner._replace(conditional=True, branch=inner.branch + ((number, 0),),
                                            tested=inner.tested or right is not last))
            branch = table.share()
            table.merge(base, [base, branch], table.end_log())

    def if_(self, node, ctx: Ctx) -> None:
        table = self.table
        kids = node.children
        inner = ctx._replace(depth=ctx.depth + 1)
        i = 0
        # condition: between `if` and `then`
        while i < len(kids) and kids[i].type != "then":
            if kids[i].is_named:
                self.stmt(kids[i], inner._replace(tested=True))
            i += 1
        base = table.share()
        table.logs.append(set())
        branches = []
        body = []
        i += 1
        clauses = []
        while i < len(kids):
            k = kids[i]
            if k.type in ("elif_clause", "else_clause"):
                clauses.append(k)
            elif k.type != "fi" and k.is_named:
                body.append(k)
            i += 1
        has_else = any(clause.type == "else_clause" for clause in clauses)
        number = self.switch("if", node, 1 + len(clauses), has_else)

        def branch_ctx(index: int, tested: bool = False) -> Ctx:
            return inner._replace(conditional=True, tested=tested, branch=inner.branch + ((number, index),))

        for k in body:
            self.stmt(k, branch_ctx(0))
        branches.append(table.share())
        # elif conditions run only when the branches before them did not (taken as part of their branch)
        pre = base
        for index, clause in enumerate(clauses, start=1):
            if clause.type == "else_clause":
                table.use(pre)
                self.block(clause.children, branch_ctx(index))
                branches.append(table.share())
                continue
            ck = clause.children
            j = 0
            table.use(pre)
            while j < len(ck) and ck[j].type != "then":
                if ck[j].is_named:
                    self.stmt(ck[j], branch_ctx(index, tested=True))
                j += 1
            pre = table.share()
            for k in ck[j + 1 :]:
                if k.is_named:
                    self.stmt(k, branch_ctx(index))
            branches.append(table.share())
        if not has_else:
            branches.append(pre)
        table.merge(base, branches, table.end_log())

    def case(self, node, ctx: Ctx) -> None:
        table = self.table
        inner = ctx._replace(depth=ctx.depth + 1, conditional=True)
        base = table.share()
        table.logs.append(set())
        branches = []
        items = [item for item in node.children if item.type == "case_item"]
        has_default = any(item.field_name_for_child(i) == "value" and self.tm.text(child).strip() == "*"
                          for item in items for i, child in enumerate(item.children))
        number = self.switch("case", node, len(items), has_default)
        for index, item in enumerate(items):
            table.use(base)
            item_ctx = inner._replace(branch=inner.branch + ((number, index),))
            for i, child in enumerate(item.children):
                fname = item.field_name_for_child(i)
                if fname == "value" or fname == "termination" or not child.is_named:
                    continue
                self.stmt(child, item_ctx)
            branches.append(table.share())
        if not has_default:
            branches.append(base)
        table.merge(base, branches, table.end_log())

    def while_(self, node, ctx: Ctx) -> None:
        conditions = [c for i, c in enumerate(node.children) if node.field_name_for_child(i) == "condition" and c.is_named]
        self.loop(node, ctx, conditions, node.child_by_field_name("body"))

    def for_(self, node, ctx: Ctx) -> None:
        var = node.child_by_field_name("variable")
        names = {self.tm.text(var)} if var is not None else set()
        self.loop(node, ctx, [], node.child_by_field_name("body"), names)

    def loop(self, node, ctx: Ctx, conditions, body, extra_names: set[str] | None = None) -> None:
        table = self.table
        names = set(extra_names or ())
        self.assigned_names(node, names)
        before = table.share()
        table.logs.append(set())
        for name in names:
            old = table.vars.get(name)
            table.set_var(
                name,
                unknown_var(
                    bool(old and old.exported) or table.allexport,
                    old.span if old else None,
                    old.kind if old else "assignment",
                ),
            )
        inner = ctx._replace(depth=ctx.depth + 1, in_loop=True)
        for cond in conditions:
            self.stmt(cond, inner._replace(tested=True))
        if body is not None:
            self.block(body.children, inner) if body.type == "do_group" else self.stmt(body, inner)
        written = table.end_log()
        for name in names | written:
            cur = table.vars.get(name)
            old = before.get(name)
            exported = bool(cur and cur.exported) or bool(old and old.exported)
            table.set_var(name, unknown_var(exported, cur.span if cur else None, cur.kind if cur else "assignment"))

    def assigned_names(self, node, out: set[str]) -> None:
        """Names a subtree may assign (syntactically): used to make loop variables unknown.

        The first loop scanned records every assignment site under it; loops nested inside it
        reuse that index, so deeply nested loops stay linear.
        """
        entry = next((e for e in self._assign_index if e[0] <= node.start_byte and node.end_byte <= e[1]), None)
        if entry is None:
            sites = sorted(assignment_sites(self.tm, node))
            entry = (node.start_byte, node.end_byte, [p for p, _ in sites], [n for _, n in sites])
            self._assign_index.append(entry)
        _lo, _hi, positions, names = entry
        a = bisect.bisect_left(positions, node.start_byte)
        b = bisect.bisect_left(positions, node.end_byte)
        for name in names[a:b]:
            if name.startswith("()"):
                called = self.table.func_assigns.get(name[2:])
                if called:
                    out.update(called[0])
            else:
                out.add(name)

    def function_def(self, node, ctx: Ctx) -> None:
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name_node is None:
            return
        table = self.table
        name = self.tm.text(name_node)
        saved = table.share()
        saved_allexport = table.allexport
        table.logs.append(set())
        table.locals.append(set())
        if body is not None:
            # its statements run where it is called (dslint.documents.shell.branches.paths)
            inner = ctx._replace(function=name, depth=ctx.depth + 1, conditional=False, in_loop=False, branch=(), tested=False)
            if body.type == "compound_statement":
                self.block(body.children, inner)
            else:
                self.stmt(body, inner)
        local_names = table.locals.pop()
        written = table.end_log(propagate=False)
        after = table.vars
        assigns = frozenset(n for n in written if after.get(n) is not saved.get(n) and n not in local_names)
        exported = frozenset(n for n in assigns if n in after and after[n].exported)  # an unset name is no longer there
        table.use(saved)
        table.allexport = saved_allexport
        table.func_assigns[name] = (assigns, exported)
        self.script.functions[name] = FunctionDef(name, self.tm.span(node), assigns)

    def arith_command(self, node, ctx: Ctx) -> None:
        kids = node.children
        if len(kids) < 2:
            return
        self.expander.arith_text(kids[0].end_byte, kids[-1].start_byte if kids[-1].type == "))" else node.end_byte, node)

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
            if prev_end is not None and self.tm.newline_between(prev_end, child.start_byte):
                return []  # bash stops at the newline (a syntax error when the target is missing)
            prev_end = child.end_byte
            if child.is_named and child.type != "file_descriptor":
                out.append(child)
        return out[1:]

    def redirected(self, node, ctx: Ctx) -> None:
        body = node.child_by_field_name("body")
        cmd = None
        redirects = [c for c in node.children if c.type in _REDIRECTS]
        spilled = self.commands.spilled
        if body is not None:
            if body.type == "command" and not node.has_error:  # not tree-sitter's recovery from a syntax error
                words = [w for r in redirects for w in self._after_target(r)]
                if words:
                    spilled[body.start_byte] = words
            first = len(self.script.commands)
            cmd = self.stmt(body, ctx._replace(depth=ctx.depth + 1))
            spilled.pop(body.start_byte, None)
            if cmd is None and body.type == "pipeline" and not node.has_error:
                # `a | b > f`: tree-sitter puts the redirection over the pipeline; bash gives it to b
                self.commands.heredocs(redirects, None, tuple(self.script.commands[first:]))
                return
        self.commands.heredocs(redirects, cmd)

    # ---- strings run as scripts ----

    def run_string(self, cmd: Command, words: list[Word], ctx: Ctx, shell: str) -> None:
        """Read the string that ``eval``, ``bash -c``, ``sbatch --wrap`` or ``ssh`` runs, as a script.

        ``shell``: "same" (``eval``), "child" (a shell that starts with the exported variables) or
        "remote" (a shell on another host, which starts with none of them, and whose parser is
        not known to be bash's: no parse failure is said of its string).
        Pieces the script does not decide are read as unknown expansions (``PLACEHOLDER``), so
        the rest of the string is still read; positions are exact inside a string written
        verbatim in the file (``bash -c '...'``, ``CMD="..."; eval "$CMD"``), else the word."""
        if not words or self.eval_depth >= _MAX_EVAL_DEPTH:
            return
        child_shell = shell != "same"
        text, unknown = string_of(words)
        if text is None:
            return
        tm, table = self.tm, self.table
        data = text.encode("utf-8")
        tree = parser("bash").parse(data)
        span = Span(words[0].span.source, words[0].span.start, max(w.span.end for w in words))
        saved = (tm.data, tm.fixed_span, tm.shift, table.share() if child_shell else table.vars)
        if not unknown and shell != "remote":
            check_string(self.script, cmd, ctx, text, span)
        tm.data = data
        tm.fixed_span, tm.shift = verbatim(tm, table.vars, words, text, span)
        if tm.fixed_span is span and saved[1] is None:
            self.script.unmapped.append((span.start, span.end))
        self.eval_depth += 1
        inner = ctx._replace(from_eval=True, depth=ctx.depth + 1, runner=cmd)
        try:
            if child_shell:
                table.own({} if shell == "remote" else _child_environment(cmd, table.vars))
            for k, assumed in enumerate(unknown):
                table.set_var(f"{PLACEHOLDER}{k}", unknown_var(False, None, "assignment", assumed))
            self.block(tree.root_node.children, inner._replace(child_shell=True) if child_shell else inner)
            if unknown and not child_shell:
                table.own({n: v for n, v in table.vars.items() if not n.startswith(PLACEHOLDER)})
        finally:
            tm.data, tm.fixed_span, tm.shift, old_vars = saved
            if child_shell:
                table.use(old_vars)
            self.eval_depth -= 1


def _child_environment(cmd: Command, variables: dict[str, Var]) -> dict[str, Var]:
    """The variables a child shell (``bash -c``, ``sbatch --wrap``) starts with: the environment
    of the command that runs it, with its prefix assignments (``CUDA_VISIBLE_DEVICES=0,1 bash -c
    ...``) and what its wrappers give or take (``env -i``, ``docker run -e``)."""
    scope = cmd._scope
    if scope is None:
        return {n: v for n, v in variables.items() if v.exported and not v.unset}
    visible, extra, unsets, clears, _child = scope
    out = {} if clears else {n: v for n, v in visible.items() if v.exported and not v.unset}
    for name in unsets:
        out.pop(name, None)
    for name, value in extra:
        out[name] = Var(((value.value, value.assumed),), True, value.span, "prefix")
    return out


def assignment_sites(tm: TextMap, node) -> list[tuple[int, str]]:
    """(position, name) of every place under ``node`` that may assign a variable; a function
    call is the name ``()function``."""
    sites: list[tuple[int, str]] = []
    stack = [node]
    text = tm.text
    while stack:
        n = stack.pop()
        pos = n.start_byte
        if _is_arithmetic(n):
            # the names come from its text; nothing under it is read again
            for m in ARITH_ASSIGN_RE.finditer(text(n)):
                sites.append((pos, m.group(1) or m.group(2) or m.group(3)))
            continue
        sites.extend((pos, name) for name in _site_names(text, n))
        stack.extend(n.children)
    return sites


def _is_arithmetic(n) -> bool:
    t = n.type
    return t in ("arithmetic_expansion", "c_style_for_statement") or (
        t == "compound_statement" and bool(n.children) and n.children[0].type == "(("
    )


def _site_names(text, n) -> list[str]:
    """The names one node (not arithmetic) may assign."""
    t = n.type
    if t == "variable_assignment":
        name = n.child_by_field_name("name")
        if name is None:
            return []
        if name.type == "subscript":
            name = name.child_by_field_name("name") or name
        return [text(name)]
    if t in ("for_statement", "select_statement"):
        var = n.child_by_field_name("variable")
        return [text(var)] if var is not None else []
    if t in ("declaration_command", "unset_command"):
        return [text(c) for c in n.children if c.type == "variable_name"]
    if t == "expansion":
        kids = n.children
        return [text(kids[i - 1]).split("[")[0] for i, c in enumerate(kids) if c.type in (":=", "=") and i > 0]
    if t == "command":
        return _command_site_names(text, n)
    return []


def _command_site_names(text, n) -> list[str]:
    name = n.child_by_field_name("name")
    if name is None:
        return []
    cmd = text(name)
    if cmd not in _NAMING_COMMANDS:
        return ["()" + cmd]
    out = []
    for arg in n.children_by_field_name("argument"):
        txt = text(arg).strip("\"'")
        m = ASSIGN_WORD_RE.match(txt)
        if m:
            out.append(m.group(1))
        elif NAME_RE.match(txt):
            out.append(txt)
    return out
