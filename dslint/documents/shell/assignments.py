"""Assignments, ``declare``/``export``/``local``, and ``unset``: how they change the variable table.

``Assignments`` is given the text being read, the variable table and the expander that reads
the values; the walker and the commands (prefix assignments) use it.
"""

from __future__ import annotations

from typing import NamedTuple

from .arith import arith_on_table
from .expand import Expander
from .model import Assignment, Script, Word
from .pieces import join
from .textmap import TextMap
from .variables import ASSIGN_WORD_RE, Ctx, Var, VarTable, record_assignment


class _Declare(NamedTuple):
    """What a ``declare``/``export``/``local`` command's options ask of each name it lists."""

    keyword: str
    flags: str
    export_flag: bool | None  # None: the export attribute stays as it is
    is_local: bool
    kind: str


class Assignments:
    def __init__(self, tm: TextMap, table: VarTable, expander: Expander, script: Script, events: list):
        self.tm = tm
        self.table = table
        self.expander = expander
        self.script = script
        self.events = events

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
        name = self.tm.text(name_node) if name_node is not None else self.tm.text(node).split("=")[0]
        return name, name_node, op, value_node, subscript

    def assign_value(self, node, value_node, name: str, op: str, subscript: bool):
        """Evaluate the right side of an assignment: (Word, parts, array)."""
        if value_node is None:
            span = self.tm.span_bytes(node.end_byte, node.end_byte)
            word, parts, array = Word(span, "", "", True, "", False, (("", ""),)), (("", ""),), None
        elif value_node.type == "array":
            word, array = self._array_value(value_node)
            parts = array[0] if array else ()
        else:
            word = self._scalar_value(value_node)
            parts, array = word.parts, None
        if subscript:
            return word, ((None, None),), None
        # read after the value: `X=$((X=1))`, `X=${X:=1}` assign while the value is read
        parts, array = _appended(self.table.vars.get(name), op, parts, array)
        return word, parts, array

    def _array_value(self, value_node) -> tuple[Word, tuple]:
        elements = []
        literal = True
        for f in self.expander.fields([c for c in value_node.children if c.is_named and c.type != "comment"]):
            elements.append(f.parts)
            literal = literal and f.literal
        array = tuple(elements)
        joined = [join(el) for el in elements]
        joined_v = None if any(j[0] is None for j in joined) else " ".join(j[0] for j in joined)
        joined_a = None if any(j[1] is None for j in joined) else " ".join(j[1] for j in joined)
        return Word(self.tm.span(value_node), self.tm.text(value_node), joined_v, literal, joined_a, False, ()), array

    def _scalar_value(self, value_node) -> Word:
        pieces, literal = self.expander.value_pieces(value_node)
        raw = self.tm.text(value_node)
        if raw.startswith("~"):
            pieces = [(None, None, False)]
            literal = False
        parts = tuple((p[0], p[1]) for p in pieces if p is not None)
        v, a = join(parts)
        return Word(self.tm.span(value_node), raw, v, literal, a, False, parts)

    def assign_statement(self, nodes, ctx: Ctx, stmt_node) -> None:
        tm, table = self.tm, self.table
        for node in nodes:
            name, name_node, op, value_node, subscript = self.assignment_parts(node)
            word, parts, array = self.assign_value(node, value_node, name, op, subscript)
            exported = table.exported(name)
            span = tm.span(node)
            table.set_var(name, Var(parts, exported, span, "assignment", array))
            a = record_assignment(
                self.script,
                Assignment(name, tm.span(name_node) if name_node is not None else span, word, span, exported, "plain"),
                ctx,
            )
            self.events.append(("assign", a, ctx, stmt_node.start_byte))

    def declaration(self, node, ctx: Ctx) -> None:
        kids = node.children
        if not kids:
            return
        keyword = kids[0].type if not kids[0].is_named else self.tm.text(kids[0])
        flags, unflags = _declare_flags(self.tm, kids[1:])
        if "f" in flags or "F" in flags or ("p" in flags and keyword != "export"):
            return
        export_flag = _export_flag(keyword, flags, unflags)
        is_local = keyword == "local" or (keyword in ("declare", "typeset") and self.table.locals and "g" not in flags)
        decl = _Declare(keyword, flags, export_flag, is_local, "export" if export_flag else "plain")
        for child in kids[1:]:
            t = child.type
            if t == "variable_assignment":
                self._declare_assignment(child, node, decl, ctx)
            elif t == "variable_name":
                self._declare_name(child, decl, ctx)
            elif t in ("word", "string", "raw_string", "concatenation") and not self.tm.text(child).startswith(("-", "+")):
                self._declare_words(child, decl, ctx)

    def _declare_assignment(self, child, node, decl: _Declare, ctx: Ctx) -> None:
        """``declare [-x] NAME=value``."""
        tm, table = self.tm, self.table
        name, name_node, op, value_node, subscript = self.assignment_parts(child)
        word, parts, array = self.assign_value(child, value_node, name, op, subscript)
        if "i" in decl.flags and word.value is not None:
            parts = (arith_on_table(table, word.value, word.assumed),)
        exported = decl.export_flag if decl.export_flag is not None else table.exported(name)
        span = tm.span(child)
        table.set_var(name, Var(parts, exported, span, "export" if exported else "assignment", array))
        if decl.is_local and table.locals:
            table.locals[-1].add(name)
        a = record_assignment(
            self.script,
            Assignment(name, tm.span(name_node) if name_node is not None else span, word, span, bool(exported), decl.kind),
            ctx,
        )
        self.events.append(("assign" if not exported else "export", a, ctx, node.start_byte))

    def _declare_name(self, child, decl: _Declare, ctx: Ctx) -> None:
        """``declare [-x] NAME``: the attribute changes, the value stays."""
        table = self.table
        name = self.tm.text(child)
        span = self.tm.span(child)
        old = table.vars.get(name)
        if decl.is_local and table.locals:
            table.locals[-1].add(name)
        export_flag = decl.export_flag
        if export_flag is None:
            if old is None and (decl.keyword == "local" or decl.is_local):
                table.set_var(name, Var((("", ""),), False, span, "assignment", unset=True))
            return
        if old is None:
            if export_flag:
                table.set_var(name, Var(((None, None),), True, span, "caller-env"))
                record_assignment(self.script, Assignment(name, span, None, span, True, "export"), ctx)
            return
        table.set_var(name, old.with_export(export_flag and not old.unset))
        if export_flag:
            record_assignment(self.script, Assignment(name, span, None, span, True, "export"), ctx)

    def _declare_words(self, child, decl: _Declare, ctx: Ctx) -> None:
        """``declare "NAME=value"``: an assignment made by a word's value."""
        table = self.table
        for f in self.expander.fields([child]):
            if f.value is None:
                continue
            m = ASSIGN_WORD_RE.match(f.value)
            if not m or m.group(2) != "=":
                continue
            name = m.group(1)
            val = f.value[m.end() :]
            old = table.vars.get(name)
            exported = decl.export_flag if decl.export_flag is not None else bool(old and old.exported) or table.allexport
            table.set_var(name, Var(((val, val),), exported, f.span, "export" if exported else "assignment"))
            vw = Word(f.span, f.raw, val, f.literal, val, False, ((val, val),))
            record_assignment(self.script, Assignment(name, f.span, vw, f.span, bool(exported), decl.kind), ctx)

    def unset(self, node, ctx: Ctx) -> None:
        functions = False
        for child in node.children:
            txt = self.tm.text(child)
            if child.type == "word" and txt.startswith("-"):
                functions = "f" in txt
                continue
            if child.type in ("variable_name", "word"):
                if functions:
                    self.script.functions.pop(txt, None)
                    self.table.func_assigns.pop(txt, None)
                else:
                    self.table.set_var(txt, Var((("", ""),), False, self.tm.span(child), "assignment", unset=True))


def _appended(old: Var | None, op: str, parts: tuple, array: tuple | None) -> tuple[tuple, tuple | None]:
    """(parts, array) after ``NAME=value`` or ``NAME+=value``, given the variable before."""
    if op == "+=" and old is not None and not old.unset:
        if array is not None:
            base = old.array if old.array is not None else ((old.parts,) if old.parts else ())
            array = tuple(base) + array
            return (array[0] if array else ()), array
        return old.parts + parts, array
    if op == "+=" and old is None:
        # appending to a variable the caller may have set
        return (((None, ""),) + parts if array is None else parts), array
    return parts, array


def _declare_flags(tm: TextMap, words) -> tuple[str, str]:
    """The letters of ``-x``-style options and of ``+x``-style ones."""
    flags = ""
    unflags = ""
    for child in words:
        if child.type == "word":
            txt = tm.text(child)
            if txt.startswith("-"):
                flags += txt[1:]
            elif txt.startswith("+"):
                unflags += txt[1:]
    return flags, unflags


def _export_flag(keyword: str, flags: str, unflags: str) -> bool | None:
    if keyword == "export" and "n" in flags:
        return False
    if keyword == "export" or "x" in flags:
        return True
    if "x" in unflags:
        return False
    return None  # leave as is
