"""Bash arithmetic (``$(( ))``, ``let``, ``declare -i``) and ``expr``, evaluated on text.

tree-sitter's arithmetic trees get unary minus precedence wrong, so expressions are read here.
"""

from __future__ import annotations

import operator
import re

from .variables import ALWAYS_SET, Var, VarTable


def parse_int(text: str | None) -> int | None:
    """An integer as bash arithmetic reads a constant (decimal, 0x hex, 0 octal, base#n)."""
    if text is None:
        return None
    s = text.strip()
    if not s:
        return 0
    sign = 1
    if s[0] in "+-":
        if s[0] == "-":
            sign = -1
        s = s[1:].strip()
    try:
        if re.fullmatch(r"0[xX][0-9a-fA-F]+", s):
            return sign * int(s, 16)
        if re.fullmatch(r"0[0-7]+", s):
            return sign * int(s, 8)
        if re.fullmatch(r"[0-9]+", s):
            return sign * int(s)
        m = re.fullmatch(r"([0-9]+)#([0-9a-zA-Z]+)", s)
        if m and 2 <= int(m.group(1)) <= 36:
            return sign * int(m.group(2), int(m.group(1)))
    except ValueError:
        return None
    return None


def _c_div(a: int, b: int) -> int | None:
    if b == 0:
        return None
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _c_mod(a: int, b: int) -> int | None:
    q = _c_div(a, b)
    return None if q is None else a - b * q


# ---------------------------------------------------------------------------------------
# bash arithmetic, on text (tree-sitter's arithmetic trees get unary minus precedence wrong)
# ---------------------------------------------------------------------------------------

ARITH_ASSIGN_RE = re.compile(
    r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)"
    r"|([A-Za-z_][A-Za-z0-9_]*)\s*(?:\+\+|--)|(?:\+\+|--)\s*([A-Za-z_][A-Za-z0-9_]*)"
)
_ARITH_TOKEN = re.compile(
    r"\s*(?:(?P<num>[0-9]+#[0-9A-Za-z@_]+|0[xX][0-9A-Fa-f]+|[0-9]+)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op><<=|>>=|\*\*|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||\+=|-=|\*=|/=|%=|&=|\^=|\|=|[-+*/%<>=!~&^|?:(),]))"
)
_BINARY_PREC = {
    "||": 3,
    "&&": 4,
    "|": 5,
    "^": 6,
    "&": 7,
    "==": 8,
    "!=": 8,
    "<": 9,
    ">": 9,
    "<=": 9,
    ">=": 9,
    "<<": 10,
    ">>": 10,
    "+": 11,
    "-": 11,
    "*": 12,
    "/": 12,
    "%": 12,
    "**": 13,
}
_ASSIGN_OPS = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|="})


class ArithError(Exception):
    pass


_TOTAL_OPS = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "&": operator.and_,
    "|": operator.or_,
    "^": operator.xor,
    "==": lambda a, b: int(a == b),
    "!=": lambda a, b: int(a != b),
    "<": lambda a, b: int(a < b),
    ">": lambda a, b: int(a > b),
    "<=": lambda a, b: int(a <= b),
    ">=": lambda a, b: int(a >= b),
}


def _arith_apply(op: str, a: int, b: int) -> int:
    total = _TOTAL_OPS.get(op)
    if total is not None:
        return total(a, b)
    r = _partial_op(op, a, b)
    if r is None:
        raise ArithError
    return r


def _partial_op(op: str, a: int, b: int) -> int | None:
    """Operators bash refuses for some operands (division by zero, a negative shift): None then."""
    if op == "/":
        return _c_div(a, b)
    if op == "%":
        return _c_mod(a, b)
    if op == "**":
        if b < 0 or b > 4096:
            raise ArithError
        return a**b
    if op == "<<":
        return a << b if 0 <= b < 4096 else None
    if op == ">>":
        return a >> b if b >= 0 else None
    raise ArithError


class Arith:
    """A Pratt parser evaluating a bash arithmetic expression.

    ``lookup(name)`` returns the int value of a variable or None when unknown; ``assign``
    records side effects.
    """

    def __init__(self, text: str, lookup, assign):
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        text = text.strip()
        while pos < len(text):
            m = _ARITH_TOKEN.match(text, pos)
            if not m or m.end() == pos:
                if text[pos:].strip() == "":
                    break
                raise ArithError
            pos = m.end()
            kind = m.lastgroup
            self.tokens.append((kind, m.group(kind)))
        self.i = 0
        self.lookup = lookup
        self.assign = assign

    def run(self) -> int | None:
        if not self.tokens:
            return 0
        value = self.comma()
        if self.i != len(self.tokens):
            raise ArithError
        return value

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        tok = self.peek()
        if tok is None:
            raise ArithError
        self.i += 1
        return tok

    def comma(self):
        value = self.assignment()
        while self.peek() == ("op", ","):
            self.i += 1
            value = self.assignment()
        return value

    def assignment(self):
        tok = self.peek()
        nxt = self.tokens[self.i + 1] if self.i + 1 < len(self.tokens) else None
        if tok and tok[0] == "name" and nxt and nxt[0] == "op" and nxt[1] in _ASSIGN_OPS:
            self.i += 2
            rhs = self.assignment()
            name = tok[1]
            if nxt[1] == "=":
                result = rhs
            else:
                cur = self.lookup(name)
                result = None if cur is None or rhs is None else _arith_apply(nxt[1][:-1], cur, rhs)
            self.assign(name, result)
            return result
        return self.ternary()

    def ternary(self):
        cond = self.binary(3)
        if self.peek() == ("op", "?"):
            self.i += 1
            yes = self.comma()
            if self.take() != ("op", ":"):
                raise ArithError
            no = self.assignment()
            if cond is None:
                return None
            return yes if cond else no
        return cond

    def binary(self, min_prec: int):
        left = self.unary()
        while True:
            tok = self.peek()
            if tok is None or tok[0] != "op" or tok[1] not in _BINARY_PREC:
                return left
            prec = _BINARY_PREC[tok[1]]
            if prec < min_prec:
                return left
            self.i += 1
            right = self.binary(prec if tok[1] == "**" else prec + 1)
            if left is None or right is None:
                left = None
            elif tok[1] == "&&":
                left = int(bool(left) and bool(right))
            elif tok[1] == "||":
                left = int(bool(left) or bool(right))
            else:
                left = _arith_apply(tok[1], left, right)

    def unary(self):
        tok = self.peek()
        if tok and tok[0] == "op" and tok[1] in ("-", "+", "!", "~"):
            self.i += 1
            val = self.unary()
            if val is None:
                return None
            return {"-": -val, "+": val, "!": int(not val), "~": ~val}[tok[1]]
        if tok and tok[0] == "op" and tok[1] in ("++", "--"):
            self.i += 1
            name = self.take()
            if name[0] != "name":
                raise ArithError
            cur = self.lookup(name[1])
            new = None if cur is None else cur + (1 if tok[1] == "++" else -1)
            self.assign(name[1], new)
            return new
        return self.postfix()

    def postfix(self):
        tok = self.take()
        if tok == ("op", "("):
            val = self.comma()
            if self.take() != ("op", ")"):
                raise ArithError
            return val
        if tok[0] == "num":
            val = parse_int(tok[1])
            if val is None:
                raise ArithError
            return val
        if tok[0] == "name":
            nxt = self.peek()
            cur = self.lookup(tok[1])
            if nxt and nxt[0] == "op" and nxt[1] in ("++", "--"):
                self.i += 1
                self.assign(tok[1], None if cur is None else cur + (1 if nxt[1] == "++" else -1))
            return cur
        raise ArithError


def expr_eval(tokens: list[str]) -> str | None:
    """``expr`` over integers: + - * / % and parentheses. Anything else is unknown."""
    pos = 0

    def atom():
        nonlocal pos
        if pos >= len(tokens):
            raise ArithError
        tok = tokens[pos]
        pos += 1
        if tok == "(":
            val = add()
            if pos >= len(tokens) or tokens[pos] != ")":
                raise ArithError
            pos += 1
            return val
        if re.fullmatch(r"\s*[-+]?[0-9]+\s*", tok):
            return int(tok)
        raise ArithError

    def mul():
        nonlocal pos
        val = atom()
        while pos < len(tokens) and tokens[pos] in ("*", "/", "%"):
            op = tokens[pos]
            pos += 1
            rhs = atom()
            val = val * rhs if op == "*" else (_c_div(val, rhs) if op == "/" else _c_mod(val, rhs))
            if val is None:
                raise ArithError
        return val

    def add():
        nonlocal pos
        val = mul()
        while pos < len(tokens) and tokens[pos] in ("+", "-"):
            op = tokens[pos]
            pos += 1
            rhs = mul()
            val = val + rhs if op == "+" else val - rhs
        return val

    try:
        result = add()
    except (ArithError, RecursionError):
        return None
    if pos != len(tokens):
        return None
    return str(result)


# ---------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------
# arithmetic on the variable table: `$(( ))`, `let`, `declare -i`
# ---------------------------------------------------------------------------------------


def arith_on_table(table: VarTable, strict: str | None, assumed: str | None) -> tuple[str | None, str | None]:
    """Evaluate an arithmetic expression, strictly and as assumed, with the table's variables;
    the variables it assigns are written to the table."""
    effects: dict[str, list] = {}
    v = _run_on_table(table, strict, 0, effects)
    a = _run_on_table(table, assumed, 1, effects)
    for name, (ev, ea) in effects.items():
        old = table.vars.get(name)
        exported = table.exported(name)
        sv = None if ev is None else str(ev)
        sa = None if ea is None else str(ea)
        table.set_var(name, Var(((sv, sa),), exported, old.span if old else None, "assignment"))
    return (None if v is None else str(v), None if a is None else str(a))


def _run_on_table(table: VarTable, text: str | None, mode: int, effects: dict[str, list]) -> int | None:
    """``mode`` 0 reads the strict values, 1 the assumed ones; assignments go to ``effects``."""
    if text is None:
        return None
    local: dict[str, int | None] = {}

    def lookup(name: str, depth: int = 0):
        if name in local:
            return local[name]
        var = table.vars.get(name)
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
