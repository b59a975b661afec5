"""Assignments, ``declare``/``export``/``local``, and ``unset``: how they change the variable table.

Part of the walker (``Walker`` mixes this in); see walker.py.
"""

from __future__ import annotations

from .model import Assignment, Word
from .pieces import join
from .variables import ASSIGN_WORD_RE, Ctx, Var


class Assignments:
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
