"""Replay a consumer's own start-up checks on a launch's arguments (no ``eval``).

``schemas/<package>-checks.json`` (written by ``python -m dslint.schemagen.startup_checks`` from
each release's wheel) holds, per release and entry class, the validation path of
``__post_init__`` as steps: assignments, forgotten values and checks, each under guards written
in a small condition language (Python syntax: constants, ``self.<argument>``, locals,
comparisons, ``and``/``or``/``not``, ``in``, ``is None``, arithmetic, ``len``/``isinstance``/
``int``... and a few string methods). :func:`first_refusal` runs those steps on the values a
launch gives and the release's own defaults, with three-valued logic: a value dslint does not
know is unknown, and a guard that reads one is unknown. A check is reported only when its guards
are all known to hold; anything unknown, and the check says nothing.
"""

from __future__ import annotations

import ast
import json
import operator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from dslint.evidence.versions import parse_version


class _Unknown:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()

_TYPES = {"str": str, "int": int, "float": float, "bool": bool, "list": list, "dict": dict, "tuple": tuple}
_STRING_METHODS = ("startswith", "endswith", "lower", "upper", "strip")
# What evaluating a value of the wrong kind raises (``None > 3``, ``int("x")``, ``1 % 0``).
_VALUE_ERRORS = (TypeError, ValueError, ArithmeticError, AttributeError, IndexError, KeyError)
_TRUE = ("yes", "true", "t", "y", "1")  # transformers' string_to_bool (hf_argparser.py)
_FALSE = ("no", "false", "f", "n", "0")


@dataclass(frozen=True)
class Refusal:
    """A check that fires: the consumer's exception, its message, where it is, what it read."""

    exception: str
    message: str
    file: str
    line: int
    reads: tuple[str, ...]  # the arguments the check's conditions read
    template: str  # the message with its fields as written: the same check across releases


@dataclass(frozen=True)
class Checks:
    package: str
    by_minor: bool
    steps: list
    programs: list
    releases: dict  # version -> {entry set: program index}

    @classmethod
    def from_data(cls, data: dict) -> "Checks":
        """The checks of a file's content (what the generator writes)."""
        releases = {row["version"]: {k: v for k, v in row.items() if k != "version"} for row in data["releases"]}
        return cls(data["package"], data["package"] == "transformers", data["steps"], data["programs"], releases)

    def program(self, version: str, entry: str) -> dict | None:
        row = self.releases.get(version)
        if row is None and self.by_minor:
            minor = parse_version(version)[:2]
            row = next((r for v, r in self.releases.items() if parse_version(v)[:2] == minor), None)
        if row is None or entry not in row:
            return None
        return self.programs[row[entry]]


@lru_cache(maxsize=None)
def checks(package: str) -> Checks | None:
    from dslint.schemas import data_path

    path = data_path(f"{package}-checks.json")
    if path is None:
        return None
    return Checks.from_data(json.loads(path.read_text(encoding="utf-8")))


def fields(package: str, version: str, entry: str) -> dict[str, list] | None:
    """The arguments the checks read, each ``[kind]`` or ``[kind, default]``; None when dslint has
    no checks for that release."""
    found = checks(package)
    program = found.program(version, entry) if found is not None else None
    return program["fields"] if program is not None else None


def first_refusal(package: str, version: str, entry: str, values: dict[str, Any], defaults_stand: bool = True) -> Refusal | None | Any:
    """The first check that fires on ``values`` (argument -> value, UNKNOWN where dslint cannot
    tell); None when none does; UNKNOWN when the release has no checks dslint read.

    An argument not in ``values`` takes the release's constant default when ``defaults_stand``
    (the launch shows every argument it passes), else is unknown.
    """
    found = replay(package, version, entry, values, defaults_stand)
    if found is None:
        return UNKNOWN
    for _, holds, refusal in found:
        if holds is True:
            return refusal
    return None


def replay(package: str, version: str, entry: str, values: dict[str, Any], defaults_stand: bool = True):
    """Every check the validation path reaches, in order, as ``(site, holds, refusal)``: the check's
    (file, line), whether its guards hold (True, False or UNKNOWN), and the Refusal when they do
    (else None); it stops after the first that holds. None when the release has no checks dslint
    read. :func:`first_refusal` is the short answer; the oracle tests ask which checks stayed
    undecided."""
    found = checks(package)
    program = found.program(version, entry) if found is not None else None
    if program is None:
        return None
    return _replay(found, program, values, defaults_stand)


def _replay(found: Checks, program: dict, values: dict[str, Any], defaults_stand: bool):
    env: dict[str, Any] = {}
    for name, row in program["fields"].items():
        if name in values:
            env[f"self.{name}"] = values[name]
        elif defaults_stand and len(row) > 1:
            env[f"self.{name}"] = row[1]
    lines = iter(program["lines"])
    memo: dict = {}  # guard -> truth, while env is unchanged
    for number in program["steps"]:
        step = found.steps[number]
        kind, guards = step[0], step[1]
        line = next(lines) if kind == "raise" else None
        holds = _all(guards, env, memo)
        if kind == "raise":
            refusal = Refusal(step[2], _render(step[3], env), step[4], line, _reads(guards), _render(step[3], {})) \
                if holds is True else None
            yield (step[4], line), holds, refusal
            if holds is True:
                return
        if holds is False:
            continue
        memo.clear()
        if kind == "set":
            env[step[2]] = _value(step[3], env) if holds is True and step[3] is not None else UNKNOWN
        elif kind == "forget":
            if "*" in step[2]:
                env = {k: UNKNOWN for k in env}
                env["*"] = UNKNOWN
            for target in step[2]:
                env[target] = UNKNOWN


def _reads(guards: list[str]) -> tuple[str, ...]:
    out: list[str] = []
    for guard in guards:
        if guard.startswith("~"):
            continue  # code reached after an earlier check: not what this check reads
        for node in ast.walk(_parsed(guard)):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" \
                    and node.attr not in out:
                out.append(node.attr)
    return tuple(out)


def _render(parts: list, env: dict) -> str:
    """The message with the parts dslint can fill in: a scalar's text is what the consumer prints;
    a collection's is not (the language writes lists, tuples and sets alike as tuples)."""
    out = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
            continue
        value = _value(part[0], env) if part[0] != "?" else UNKNOWN
        shown = value is not UNKNOWN and (value is None or isinstance(value, (str, int, float, bool)))
        out.append(str(value) if shown else "{" + part[1] + "}")
    return "".join(out)


# ---- the condition language ----------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _parsed(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


def _all(guards: list[str], env: dict, memo: dict | None = None):
    """True, False or UNKNOWN: do all guards hold? ``memo``: each guard's truth while ``env`` is
    unchanged (the guards after a check repeat every earlier check's, so a path asks the same
    ones again and again)."""
    result: Any = True
    for guard in guards:
        if guard == "?":
            result = UNKNOWN
            continue
        text = guard.lstrip("~")
        if memo is None:
            value = _guard_truth(text, env)
        else:
            value = memo.get(text, memo)
            if value is memo:
                value = memo[text] = _guard_truth(text, env)
        if value is UNKNOWN and guard.startswith("~"):
            continue  # code after a check that raises: were it false, that check refused the launch
        if value is False:
            return False
        if value is UNKNOWN:
            result = UNKNOWN
    return result


def _guard_truth(text: str, env: dict):
    return _evaluated(text, env, _truth_of)


def _truth_of(node: ast.expr, env: dict):
    """The truth of an expression, knowing more than its value: ``False and <unknown>`` is false."""
    if isinstance(node, ast.BoolOp):
        truths = [_truth_of(v, env) for v in node.values]
        decisive = isinstance(node.op, ast.Or)
        if decisive in truths:
            return decisive
        return UNKNOWN if UNKNOWN in truths else not decisive
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        truth = _truth_of(node.operand, env)
        return UNKNOWN if truth is UNKNOWN else not truth
    return _truth(_eval(node, env))


def _truth(value):
    if value is UNKNOWN:
        return UNKNOWN
    try:
        return bool(value)
    except _VALUE_ERRORS:  # a value whose truth Python itself would refuse: dslint cannot tell
        return UNKNOWN


def _value(text: str, env: dict):
    return _evaluated(text, env, _eval)


def _evaluated(text: str, env: dict, how):
    """``how`` (the value or the truth) of an expression of the file; UNKNOWN for one that does not parse."""
    try:
        return how(_parsed(text), env)
    except (SyntaxError, RecursionError):
        return UNKNOWN


def _eval(node: ast.expr, env: dict):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return env.get(f"self.{node.attr}", UNKNOWN)
    if isinstance(node, ast.Name):
        return env.get(node.id, UNKNOWN)
    if isinstance(node, ast.BoolOp):
        value = UNKNOWN
        for operand in node.values:
            value = _eval(operand, env)
            truth = _truth(value)
            if truth is UNKNOWN:
                return UNKNOWN
            if truth is isinstance(node.op, ast.Or):
                return value
        return value
    if isinstance(node, ast.UnaryOp):
        operand = _eval(node.operand, env)
        if operand is UNKNOWN:
            return UNKNOWN
        if isinstance(node.op, ast.Not):
            return _negate(operand)
        return _apply(operator.neg if isinstance(node.op, ast.USub) else operator.pos, operand)
    if isinstance(node, ast.Tuple):
        items = tuple(_eval(e, env) for e in node.elts)
        return UNKNOWN if any(i is UNKNOWN for i in items) else items
    if isinstance(node, ast.IfExp):
        test = _truth(_eval(node.test, env))
        return UNKNOWN if test is UNKNOWN else _eval(node.body if test else node.orelse, env)
    if isinstance(node, ast.Compare):
        return _compare(node, env)
    if isinstance(node, ast.BinOp):
        left, right = _eval(node.left, env), _eval(node.right, env)
        if left is UNKNOWN or right is UNKNOWN:
            return UNKNOWN
        return _apply(_BINARY[type(node.op)], left, right)
    if isinstance(node, ast.Call):
        return _call(node, env)
    return UNKNOWN


def _negate(value):
    truth = _truth(value)
    return UNKNOWN if truth is UNKNOWN else not truth


_BINARY = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}
_COMPARE = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
            ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
            ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b, ast.Is: lambda a, b: a is b,
            ast.IsNot: lambda a, b: a is not b}


def _compare(node: ast.Compare, env: dict):
    left = _eval(node.left, env)
    for op, right_node in zip(node.ops, node.comparators):
        right = _eval(right_node, env)
        if left is UNKNOWN or right is UNKNOWN:
            return UNKNOWN
        if isinstance(op, (ast.Is, ast.IsNot)) and not (left is None or right is None or isinstance(left, bool)):
            return UNKNOWN  # identity of other values is not a fact about the arguments
        result = _apply(_COMPARE[type(op)], left, right)
        if result is UNKNOWN or not result:
            return result
        left = right
    return True


def _call(node: ast.Call, env: dict):
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in _STRING_METHODS:
        receiver = _eval(func.value, env)
        args = [_eval(a, env) for a in node.args]
        if not isinstance(receiver, str) or any(a is UNKNOWN for a in args):
            return UNKNOWN
        return _apply(getattr(receiver, func.attr), *args)
    if not isinstance(func, ast.Name):
        return UNKNOWN
    if func.id == "isinstance" and len(node.args) == 2:
        value = _eval(node.args[0], env)
        kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
        types = tuple(_TYPES.get(getattr(k, "id", ""), type(UNKNOWN)) for k in kinds)
        return UNKNOWN if value is UNKNOWN else isinstance(value, types)
    builtin = {"len": len, "int": int, "float": float, "bool": bool, "str": str, "abs": abs, "min": min, "max": max}.get(func.id)
    args = [_eval(a, env) for a in node.args]
    if builtin is None or any(a is UNKNOWN for a in args):
        return UNKNOWN
    return _apply(builtin, *args)


def _apply(compute, *args):
    try:
        return compute(*args)
    except _VALUE_ERRORS:  # what would raise in the consumer is another check's business: unknown here
        return UNKNOWN


# ---- the launch's values as the consumer's parser makes them --------------------------------------


def parsed_token(kind: str, value: Any):
    """A command-line token (or a value ms-swift turns into one) as HfArgumentParser converts it
    for a field of ``kind``; UNKNOWN when dslint cannot tell or the parser would refuse it."""
    if value is True and kind == "bool":
        return True  # a bare flag
    if not isinstance(value, (str, int, float)) or isinstance(value, bool) and kind != "bool":
        return UNKNOWN
    text = str(value).strip() if not isinstance(value, bool) else ("true" if value else "false")
    if "$" in text or "`" in text or text.lower() == "none":
        return UNKNOWN
    try:
        if kind == "bool":
            low = text.lower()
            return True if low in _TRUE else False if low in _FALSE else UNKNOWN
        if kind == "int":
            return int(text)
        if kind == "float":
            return float(text)
    except ValueError:
        return UNKNOWN
    return text if kind == "str" else UNKNOWN


def typed_value(kind: str, value: Any):
    """A YAML value given to the dataclass as it is (``parse_yaml_file``): kept when of the field's kind."""
    wanted = _TYPES.get(kind)
    if wanted is None or value is None:
        return UNKNOWN
    if isinstance(value, bool) != (kind == "bool"):
        return UNKNOWN
    if kind == "float" and isinstance(value, int):
        return value
    return value if isinstance(value, wanted) else UNKNOWN
