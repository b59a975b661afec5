"""The condition language of the consumers' start-up checks: the walker's frames, and how an
expression of the wheel's code is written in the language (or found to be outside it).

The language is Python syntax restricted to constants, arguments (``self.name``), locals,
comparisons, ``and``/``or``/``not``, ``in``, ``is None``, arithmetic, a few builtins and string
methods (dslint/schemagen/_startup_walk.py walks the statements; dslint.evidence.startup_checks
evaluates the result).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Callable

UNKNOWN_GUARD = "?"  # a guard outside the language; the walker appends the reason (``"?a call of a function"``)
ALL = "*"
SOFT = "~"  # a guard after a check that raises: unknown counts as holding (see _after)

# Builtins a call may pass ``self`` to without changing it.
_READS_ONLY = {"isinstance", "getattr", "hasattr", "str", "repr", "type", "id", "len", "print", "asdict", "fields",
               "vars", "dir", "format", "is_dataclass", "deepcopy", "copy"}
# The calls the condition language has: builtins on values, and string methods.
BUILTINS = ("len", "isinstance", "int", "float", "bool", "str", "abs", "min", "max")
TYPES = ("str", "int", "float", "bool", "list", "dict", "tuple")
STRING_METHODS = ("startswith", "endswith", "lower", "upper", "strip")
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod)
_COMPARE = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.Is, ast.IsNot)


class NotExpressible(Exception):
    """An expression outside the condition language; the message says which kind."""


@dataclass
class Method:
    """A method to inline: its function node, the class it belongs to and the module it is in."""

    node: ast.FunctionDef
    owner: str  # the class's name
    path: str  # the module's file in the wheel


@dataclass
class Code:
    """What the walker asks of the wheel: methods by class, constants, enums, external calls."""

    # (class, method, after) -> the Method, "external:<package>" (a base from another package) or None.
    # class None: on the entry class (``self.m()``); after: the classes after ``class`` in the entry's
    # order (``super().m()``); else on the named class (``Base.m(self)``).
    # path: the module the call is written in (its imports name the class).
    resolve: Callable[..., "Method | str | None"]
    constant: Callable[[str, str], object]  # (module path, name) -> ast.Constant value or a NotExpressible
    # (module path, class, member) -> the member's value or a NotExpressible; member None: is it a str enum?
    enum_member: Callable[[str, str, str | None], object]
    external_names: Callable[[str], tuple[str, ...]]  # names an external package's base class may set
    class_constant: Callable[[str], object]  # a constant class attribute of the entry's classes, or NotExpressible
    # What an external package's base ``__post_init__`` does, as forget steps (None: forget its names).
    external_steps: Callable[[str], "list | None"] = lambda package: None
    # A function entry: (module path, name) -> the module function of the wheel, or None.
    function: Callable[[str, str], "Method | None"] = lambda path, name: None
    # A function entry: the call that parses the argument objects, and each parsed class's
    # (Code, __post_init__ or None, class name), in the parser's order.
    parse_call: str | None = None
    parsed: list = field(default_factory=list)


@dataclass
class Walk:
    """The steps of one entry class's validation path, and the checks left out (with reasons)."""

    steps: list = field(default_factory=list)
    left_out: list = field(default_factory=list)  # (reason, file, line)
    _frames: int = 0
    _stack: list = field(default_factory=list)
    # Values the code turned into enum members (``self.x = SomeStrEnum(self.x)``, see _preserves),
    # and what was assigned from them: they compare as their text, but a message formats them as
    # the member (``IntervalStrategy.STEPS`` from Python 3.11, the value before), so a message
    # part that reads one is not filled in. Never cleared: a later assignment may not run.
    _enums: set = field(default_factory=set)


@dataclass
class _Frame:
    method: Method
    cls: str  # the class whose MRO ``super()`` continues from
    number: int
    locals: dict = field(default_factory=dict)  # name -> renamed local
    constants: dict = field(default_factory=dict)  # a loop variable of an unrolled loop -> its item
    selves: set = field(default_factory=lambda: {"self"})


# ---- expressions ---------------------------------------------------------------------------------


def _guard(code: Code, frame: _Frame, node: ast.expr) -> str:
    try:
        return _expression(code, frame, node)
    except NotExpressible as reason:
        return UNKNOWN_GUARD + str(reason)


def _try_expression(code: Code, frame: _Frame, node: ast.expr) -> str | None:
    try:
        return _expression(code, frame, node)
    except NotExpressible:
        return None


def _expression(code: Code, frame: _Frame, node: ast.expr | None) -> str:
    if node is None:
        return "None"
    return ast.unparse(_translate(code, frame, node))


def _translate(code: Code, frame: _Frame, node: ast.expr) -> ast.expr:
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool, type(None))):
        return ast.Constant(node.value)
    if isinstance(node, ast.Attribute):
        if _is_self(frame, node.value):
            return ast.Attribute(ast.Name("self"), node.attr)
        if isinstance(node.value, ast.Name) and node.value.id not in frame.locals:
            member = code.enum_member(frame.method.path, node.value.id, node.attr)
            if isinstance(member, (str, int, float, bool)):
                return ast.Constant(member)
        raise NotExpressible("a value of another object (the model's config, torch)")
    if isinstance(node, ast.Name):
        if node.id in frame.constants:
            return _constant_node(frame.constants[node.id])
        if node.id in frame.selves:
            raise NotExpressible("the argument object as a whole")
        if node.id in frame.locals:
            return ast.Name(frame.locals[node.id])
        value = code.constant(frame.method.path, node.id)
        if isinstance(value, NotExpressible):
            raise value
        return _constant_node(value)
    if isinstance(node, ast.BoolOp):
        return ast.BoolOp(node.op, [_translate(code, frame, v) for v in node.values])
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub, ast.UAdd)):
        return ast.UnaryOp(node.op, _translate(code, frame, node.operand))
    if isinstance(node, ast.BinOp) and isinstance(node.op, _ARITHMETIC):
        return ast.BinOp(_translate(code, frame, node.left), node.op, _translate(code, frame, node.right))
    if isinstance(node, ast.Compare) and all(isinstance(op, _COMPARE) for op in node.ops):
        return ast.Compare(_translate(code, frame, node.left), node.ops, [_translate(code, frame, c) for c in node.comparators])
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and not any(isinstance(e, ast.Starred) for e in node.elts):
        return ast.Tuple([_translate(code, frame, e) for e in node.elts])
    if isinstance(node, ast.IfExp):
        return ast.IfExp(_translate(code, frame, node.test), _translate(code, frame, node.body), _translate(code, frame, node.orelse))
    if isinstance(node, ast.Call) and _called_name(node.func) == "getattr" and len(node.args) in (2, 3) \
            and _is_self(frame, node.args[0]) and isinstance(_name_of(frame, node.args[1]), str):
        return ast.Attribute(ast.Name("self"), _name_of(frame, node.args[1]))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in BUILTINS and not node.keywords \
            and node.func.id not in frame.locals:
        if node.func.id == "isinstance" and len(node.args) == 2:
            return ast.Call(ast.Name("isinstance"), [_translate(code, frame, node.args[0]), _types(node.args[1])], [])
        if node.func.id != "isinstance" and 1 <= len(node.args) <= (1 if node.func.id in ("len", "abs") else 2):
            return ast.Call(ast.Name(node.func.id), [_translate(code, frame, a) for a in node.args], [])
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in STRING_METHODS \
            and not node.keywords and len(node.args) <= 1:
        return ast.Call(ast.Attribute(_translate(code, frame, node.func.value), node.func.attr),
                        [_translate(code, frame, a) for a in node.args], [])
    if isinstance(node, ast.Call):
        raise NotExpressible("a function call (files, installed packages, devices)")
    kinds = {"Subscript": "an item of a list or mapping", "Lambda": "a lambda", "ListComp": "a comprehension",
             "GeneratorExp": "a comprehension", "JoinedStr": "a formatted string", "NamedExpr": "an assignment expression"}
    raise NotExpressible(kinds.get(type(node).__name__, f"a {type(node).__name__} expression"))


def _types(node: ast.expr) -> ast.expr:
    """The second argument of ``isinstance``: builtin types, and ``CLASS`` for a class of the
    consumer's own (an argument parsed from text, or set from the language, is never one)."""
    names = node.elts if isinstance(node, ast.Tuple) else [node]
    if not names or not all(isinstance(n, (ast.Name, ast.Attribute)) for n in names):
        raise NotExpressible("isinstance of a computed type")
    kinds = [ast.Name(n.id if isinstance(n, ast.Name) and n.id in TYPES else "CLASS") for n in names]
    return ast.Tuple(kinds) if isinstance(node, ast.Tuple) else kinds[0]


def _constant_value(code: Code, frame: _Frame, node: ast.expr):
    translated = _translate(code, frame, node)
    try:
        return ast.literal_eval(translated)
    except ValueError as error:
        raise NotExpressible("not a constant") from error


def _constant_node(value) -> ast.expr:
    if isinstance(value, (list, tuple, set, frozenset)):
        return ast.Tuple([_constant_node(v) for v in value])
    return ast.Constant(value)


def _message(code: Code, walk: Walk, frame: _Frame, node: ast.expr | None) -> list:
    """The exception's message: text and ``[expression]`` parts (the evaluator fills in the values
    it knows); a part outside the language is kept as its source in braces, and so is one whose
    text is not ``str()`` of its value: a conversion or format spec (``{x!r}``, ``{x:.2f}``), or
    a value the code made an enum member (see Walk._enums)."""
    if node is None:
        return []
    if isinstance(node, ast.Constant):
        return [str(node.value)]
    if isinstance(node, ast.JoinedStr):
        parts: list = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif isinstance(value, ast.FormattedValue):
                plain = value.conversion in (-1, ord("s")) and value.format_spec is None
                expression = _try_expression(code, frame, value.value) if plain else None
                parts.append([_filled(walk, expression), ast.unparse(value.value)])
        return parts
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _message(code, walk, frame, node.left) + _message(code, walk, frame, node.right)
    return [[_filled(walk, _try_expression(code, frame, node)), ast.unparse(node)]]


def _filled(walk: Walk, expression: str | None) -> str:
    """The expression a message part is filled in from, or ``?``: not filled in."""
    return "?" if expression is None or _reads_enum(walk, expression) else expression


def _reads_enum(walk: Walk, expression: str) -> bool:
    if not walk._enums:
        return False
    for node in ast.walk(ast.parse(expression, mode="eval")):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" \
                and f"self.{node.attr}" in walk._enums:
            return True
        if isinstance(node, ast.Name) and node.id in walk._enums:
            return True
    return False


def _name_of(frame: _Frame, node: ast.expr):
    """The attribute name a ``getattr``/``setattr`` argument holds: a constant, or an unrolled loop's item."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return frame.constants.get(node.id)
    return None


def _is_self(frame: _Frame, node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in frame.selves


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None
