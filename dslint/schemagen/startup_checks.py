"""The start-up checks of each release of transformers and ms-swift, read from its wheel.

Usage::

    python -m dslint.schemagen.startup_checks --wheels DIR            # write schemas/<package>-checks.json
    python -m dslint.schemagen.startup_checks --wheels DIR --check    # exit 1 if a shipped file is stale

The wheels are the ones ``python -m dslint.schemagen.argument_names --wheels DIR --download``
fetches (the same releases the names history records). Each is read statically, never imported.

A consumer refuses some combinations of arguments while it parses them: ``TrainingArguments.
__post_init__`` raises ``ValueError('--load_best_model_at_end requires the save and eval strategy
to match')``, ms-swift's ``SftArguments`` raises on ``--packing true`` without flash attention.
For each entry class (the class a console's command line is parsed into), the validation path,
``__post_init__`` and every method it calls, is written as steps (dslint/schemagen/_startup_walk.py)
with the checks whose conditions are in the condition language; dslint.evidence.startup_checks
replays them on a launch's values.

The file stores each distinct step once, each release's program as a list of step numbers (and
the lines of its checks), and per entry the checks its validation path holds, how many were kept
and why the others were left out.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from dslint.schemagen import argument_names as names
from dslint.schemagen._hfargs import SCHEMA_DIR
from dslint.schemagen._startup_walk import ALL, Code, Method, NotExpressible, is_unknown, walk_entry, walk_function


@dataclass(frozen=True)
class Consumer:
    package: str  # the distribution (names.PACKAGES key)
    # dslint's argument set -> the entry class names, newest first; or a function entry
    # ``module/path.py:function(parse_call:CLASSES)``: the function that parses the argument objects
    # with ``parse_call`` from the classes the module constant ``CLASSES`` lists, and validates them.
    entries: dict[str, tuple[str, ...]]
    bases: tuple[str, ...] = ()  # packages whose base __post_init__ the entries call (read from their wheels)

    @property
    def output(self) -> Path:
        return SCHEMA_DIR / f"{self.package}-checks.json"


# TRL's trainer configs, each the entry of the TRL trainer that takes it (dslint's "trl:<Config>").
_TRL_CONFIGS = ("SFTConfig", "DPOConfig", "GRPOConfig", "KTOConfig", "RewardConfig", "RLOOConfig", "ORPOConfig",
                "CPOConfig", "BCOConfig", "PPOConfig", "OnlineDPOConfig", "GKDConfig", "XPOConfig", "NashMDConfig",
                "PRMConfig", "DistillationConfig")

CONSUMERS: dict[str, Consumer] = {
    "transformers": Consumer("transformers", {"TrainingArguments": ("TrainingArguments",)}),
    "trl": Consumer("trl", {name: (name,) for name in _TRL_CONFIGS}, bases=("transformers",)),
    "llamafactory": Consumer("llamafactory", {
        "train": ("llamafactory/hparams/parser.py:get_train_args(_parse_train_args:_TRAIN_ARGS)",),
    }, bases=("transformers",)),
    "ms-swift": Consumer("ms-swift", {
        "sft": ("SftArguments", "TrainArguments"),
        "pt": ("PretrainArguments", "PtArguments", "TrainArguments"),
        "rlhf": ("RLHFArguments",),
        "megatron-sft": ("MegatronSftArguments", "MegatronTrainArguments"),
        "megatron-rlhf": ("MegatronRLHFArguments",),
    }, bases=("transformers",)),
}


# ---- the wheel's classes as the walker asks for them ---------------------------------------------


class WheelCode:
    """Classes, methods, constants and enums of one wheel, for one entry class."""

    def __init__(self, wheel: names.Wheel, external: dict | None = None):
        self.wheel = wheel
        self.root = names._import_root(wheel.package)
        self._mro: dict[tuple[str, str], tuple] = {}
        self.external = external or {}  # package -> its base __post_init__ as forget steps (external_effects)

    def imports(self, path: str) -> dict[str, tuple[str, str]]:
        return _imports_of(self.wheel, path)

    def find_class(self, name: str, path: str) -> tuple[str, ast.ClassDef] | str | None:
        """(module, class) for ``name`` as module ``path`` sees it; "external:<package>" for a class
        imported from another package dslint reads; None when not found."""
        module, original = self.imports(path).get(name, (None, name))
        root = module.split(".")[0] if module else None
        if root and not module.startswith(".") and root != self.root:
            package = names._IMPORT_ROOTS.get(root)
            return f"external:{package}" if package else None
        for where in self.wheel._defining(original, path, module):
            found = self.wheel._classes_named(where, original)
            if found:
                return where, found[0]
        return None

    def mro(self, name: str, path: str) -> tuple:
        """The class's method resolution order (C3): (module, ClassDef) pairs and "external:<package>"."""
        if (name, path) not in self._mro:
            self._mro[(name, path)] = ()  # a class that derives from itself ends here
            self._mro[(name, path)] = self._read_mro(name, path)
        return self._mro[(name, path)]

    def _read_mro(self, name: str, path: str) -> tuple:
        found = self.find_class(name, path) if path else self._anywhere(name)
        if found is None or isinstance(found, str):
            return (found,) if isinstance(found, str) else ()
        where, node = found
        lines = []
        for base in node.bases:
            base_name = base.attr if isinstance(base, ast.Attribute) else base.id if isinstance(base, ast.Name) else None
            if base_name is None or base_name in ("object", "Generic", "ABC"):
                continue
            if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name):
                module = self.imports(where).get(base.value.id, (base.value.id, ""))[0]
                root = module.split(".")[0]
                if root != self.root:
                    package = names._IMPORT_ROOTS.get(root)
                    if package:
                        lines.append([f"external:{package}"])
                    continue
            base_mro = self.mro(base_name, where)
            if base_mro:
                lines.append(list(base_mro))
        bases = [line[0] for line in lines]
        return ((where, node),) + tuple(_c3(lines + [bases]))

    def _anywhere(self, name: str):
        for where in self.wheel._where.get(name, []):
            found = self.wheel._classes_named(where, name)
            if found:
                return where, found[0]
        return None

    # -- the Code interface ----------------------------------------------------------------------

    def code_for(self, entry: str, path: str = "") -> tuple[Code, Method] | None:
        order = self.mro(entry, path)
        if not order or isinstance(order[0], str):
            return None

        def method_in(classes, method: str):
            for item in classes:
                if isinstance(item, str):
                    return item if method == "__post_init__" else None
                where, node = item
                for statement in node.body:
                    if isinstance(statement, ast.FunctionDef) and statement.name == method:
                        return Method(statement, node.name, where)
            return None

        def resolve(cls: str | None, method: str, after: bool, path: str | None = None):
            if cls is None:
                return method_in(order, method)
            if after:
                names_in_order = [item if isinstance(item, str) else item[1].name for item in order]
                if cls not in names_in_order:
                    return None
                return method_in(order[names_in_order.index(cls) + 1:], method)
            for item in order:
                if not isinstance(item, str) and item[1].name == cls:
                    return method_in(self.mro(cls, item[0]), method)
            found = self.find_class(cls, path) if path else None
            return found if isinstance(found, str) and method == "__post_init__" else None

        start = method_in(order, "__post_init__")
        if not isinstance(start, Method):
            return None
        def class_constant(name: str):
            for item in order:
                if isinstance(item, str):
                    break
                for statement in item[1].body:
                    if isinstance(statement, (ast.Assign, ast.AnnAssign)):
                        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                        if any(isinstance(t, ast.Name) and t.id == name for t in targets) and statement.value is not None:
                            try:
                                return ast.literal_eval(statement.value)
                            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                                return NotExpressible("a class attribute that is not a constant")
            return NotExpressible("a class attribute dslint cannot find")

        code = Code(resolve=resolve, constant=self.constant, enum_member=self.enum_member, external_names=_external_names,
                    class_constant=class_constant, external_steps=self.external.get)
        return code, start

    def code_for_function(self, spec: str) -> tuple[Code, Method, tuple[str, ...]] | None:
        """A function entry ``path:function(parse_call:CLASSES)``: its Code, the function and the
        names its argument objects have (the targets of the assignment from ``parse_call``)."""
        path, _, rest = spec.partition(":")
        name, _, inside = rest.partition("(")
        parse_call, _, constant = inside.rstrip(")").partition(":")
        entry = self.function(path, name)
        tree = self.wheel._tree(path)
        if entry is None or tree is None:
            return None
        classes = self._class_list(tree, constant)
        selves = next((tuple(e.id for e in node.targets[0].elts) for node in ast.walk(entry.node)
                       if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple)
                       and isinstance(node.value, ast.Call) and getattr(node.value.func, "id", None) == parse_call
                       and all(isinstance(e, ast.Name) for e in node.targets[0].elts)), None)
        if not classes or selves is None or len(selves) != len(classes):
            return None
        parsed = []
        for cls in classes:
            found = self.code_for(cls, path)
            if found is not None:
                parsed.append((found[0], found[1], cls))
                continue
            order = self.mro(cls, path)
            if not order:
                return None
            base = next((item for item in order if isinstance(item, str) or any(
                isinstance(st, ast.FunctionDef) and st.name == "__post_init__" for st in item[1].body)), None)
            # transformers' Seq2SeqTrainingArguments or a subclass without its own (its base's runs); or none at all
            parsed.append((self._plain_code(), base if isinstance(base, str) else None, cls))
        code = self._plain_code()
        code.parse_call, code.parsed = parse_call, parsed
        return code, entry, selves

    def _class_list(self, tree: ast.Module, constant: str) -> list[str]:
        found = [s for s in tree.body if isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == constant for t in s.targets)]
        if len(found) != 1 or not isinstance(found[0].value, (ast.List, ast.Tuple)):
            return []
        items = found[0].value.elts
        return [e.id for e in items] if all(isinstance(e, ast.Name) for e in items) else []

    def _plain_code(self) -> Code:
        """The Code of a module function: no class of its own (a method of an argument object is not followed)."""
        return Code(resolve=lambda *args: None, constant=self.constant, enum_member=self.enum_member,
                    external_names=_external_names, class_constant=lambda name: NotExpressible("not a class"),
                    external_steps=self.external.get, function=self.function)

    def function(self, path: str, name: str) -> Method | None:
        """The module function ``name`` as module ``path`` sees it: defined there, or imported from the wheel."""
        tree = self.wheel._tree(path)
        if tree is None:
            return None
        for statement in tree.body:
            if isinstance(statement, ast.FunctionDef) and statement.name == name:
                return Method(statement, f"<{path}>", path)
        module, original = self.imports(path).get(name, (None, None))
        if module is None or not (module.startswith(".") or module.split(".")[0] == self.root):
            return None
        target = self._module_path(module, path)
        if target is None or target == path:
            return None
        tree = self.wheel._tree(target)
        for statement in tree.body if tree is not None else []:
            if isinstance(statement, ast.FunctionDef) and statement.name == original:
                return Method(statement, f"<{target}>", target)
        return None

    def constant(self, path: str, name: str):
        value = self._module_constant(path, name, 0)
        return value if value is not None else NotExpressible("a name that is neither an argument nor a constant")

    def _module_constant(self, path: str, name: str, depth: int):
        tree = self.wheel._tree(path)
        if tree is None or depth > 2:
            return None
        found = [s for s in tree.body if isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in s.targets)]
        if len(found) == 1:
            try:
                value = ast.literal_eval(found[0].value)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                return None
            return value if isinstance(value, (str, int, float, bool, list, tuple, set, frozenset)) else None
        if found:
            return None
        module, original = self.imports(path).get(name, (None, None))
        if module is None:
            return None
        target = self._module_path(module, path)
        return self._module_constant(target, original, depth + 1) if target else None

    def _module_path(self, module: str, path: str) -> str | None:
        if module.startswith("."):
            level = len(module) - len(module.lstrip("."))
            base = path.split("/")[:-level]
            module = ".".join(base + ([module.lstrip(".")] if module.lstrip(".") else []))
        for candidate in (module.replace(".", "/") + ".py", module.replace(".", "/") + "/__init__.py"):
            if candidate in self.wheel.files:
                return candidate
        return None

    def enum_member(self, path: str, cls: str, member: str | None):
        found = self.find_class(cls, path)
        if not isinstance(found, tuple):
            return NotExpressible("a value of another object (the model's config, torch)")
        if not self._str_enum(*found, 0):
            return False if member is None else NotExpressible("a member of a class that is not a str enum")
        if member is None:
            return True
        for statement in found[1].body:
            if isinstance(statement, ast.Assign) and any(isinstance(t, ast.Name) and t.id == member for t in statement.targets):
                if isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str):
                    return statement.value.value
        return NotExpressible("an enum member that is not a string constant")

    def _str_enum(self, path: str, node: ast.ClassDef, depth: int) -> bool:
        if depth > 4:
            return False
        for base in node.bases:
            if isinstance(base, ast.Name) and base.id == "str":
                return True
            if isinstance(base, ast.Name):
                found = self.find_class(base.id, path)
                if isinstance(found, tuple) and self._str_enum(*found, depth + 1):
                    return True
        return False


def _c3(sequences: list[list]) -> list:
    out: list = []
    sequences = [list(s) for s in sequences if s]
    while sequences:
        for sequence in sequences:
            head = sequence[0]
            if not any(head in s[1:] for s in sequences):
                break
        else:  # an inconsistent order: Python would refuse the class; keep the bases' order
            head = sequences[0][0]
        out.append(head)
        sequences = [[x for x in s if x != head] for s in sequences]
        sequences = [s for s in sequences if s]
    return out


@lru_cache(maxsize=None)
def _imports_of(wheel: names.Wheel, path: str) -> dict[str, tuple[str, str]]:
    return names._imports(wheel._tree(path))


@lru_cache(maxsize=None)
def _external_names(package: str) -> tuple[str, ...]:
    """Every argument name another package's base class defines in any release (its __post_init__
    may set any of them)."""
    from dslint.evidence import argnames

    found = argnames.history(package)
    return tuple(sorted(found.every_name)) if found is not None else ()


# ---- fields: each argument's kind and default, as the release's dataclasses declare them ---------


def fields_of(code: WheelCode, entry: str, path: str = "") -> dict[str, list]:
    """name -> [kind] or [kind, default]: kind bool/int/float/str/other; a default only when it is a
    constant (``field(default=...)`` too, ``default_factory=list`` as ``[]``)."""
    out: dict[str, list] = {}
    for item in reversed(code.mro(entry, path)):
        if isinstance(item, str):
            continue
        where, node = item
        for statement in _class_statements(node):
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                row = [_kind(statement.annotation)]
                default = _default(code, where, statement.value)
                if default is not _NONE:
                    row.append(default)
                out[statement.target.id] = row
    return out


_NONE = object()


def _class_statements(node: ast.ClassDef):
    stack = list(node.body)
    while stack:
        statement = stack.pop(0)
        if isinstance(statement, (ast.If, ast.Try)):
            stack[:0] = statement.body + statement.orelse
        else:
            yield statement


def _kind(annotation: ast.expr) -> str:
    """bool, int, float, str (a str enum or ``Union[SomeEnum, str]`` too: HfArgumentParser passes
    the text) or other."""
    members = _union_members(annotation)
    named = {ast.unparse(m).replace("typing.", "") for m in members} - {"None"}
    if len(named) == 1 and next(iter(named)) in ("bool", "int", "float", "str"):
        return next(iter(named))
    if "str" in named and all(not n.startswith(("List", "list", "Dict", "dict", "Tuple", "tuple", "int", "float", "bool"))
                              for n in named):
        return "str"
    literal = [m for m in members if ast.unparse(m).replace("typing.", "").startswith("Literal[")]
    if len(named) == 1 and literal:
        items = _literal_items(literal[0])
        return "str" if all(isinstance(e, ast.Constant) and isinstance(e.value, (str, type(None))) for e in items) else "other"
    return "other"


def _union_members(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union_members(node.left) + _union_members(node.right)
    if isinstance(node, ast.Subscript) and ast.unparse(node.value).replace("typing.", "") in ("Optional", "Union"):
        inner = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return [m for e in inner for m in _union_members(e)] + ([ast.Constant(None)] if ast.unparse(node.value).endswith("Optional") else [])
    return [node]


def _literal_items(node: ast.expr) -> list[ast.expr]:
    inner = node.slice if isinstance(node, ast.Subscript) else None
    return list(inner.elts) if isinstance(inner, ast.Tuple) else [inner] if inner is not None else []


def _default(code: WheelCode, path: str, value: ast.expr | None):
    if value is None:
        return _NONE
    if isinstance(value, ast.Call) and getattr(value.func, "id", getattr(value.func, "attr", None)) == "field":
        for keyword in value.keywords:
            if keyword.arg == "default":
                return _default(code, path, keyword.value)
            if keyword.arg == "default_factory" and isinstance(keyword.value, ast.Name) and keyword.value.id in ("list", "dict"):
                return [] if keyword.value.id == "list" else {}
        return _NONE
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
        member = code.enum_member(path, value.value.id, value.attr)
        return member if isinstance(member, str) else _NONE
    try:
        found = ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _NONE
    return list(found) if isinstance(found, tuple) else found if isinstance(found, (str, int, float, bool, type(None), list, dict)) else _NONE


# ---- one release: its programs; the file: distinct steps, programs and releases -------------------


@dataclass
class Program:
    """One entry's validation path in one release."""

    steps: list  # without the check lines
    lines: list  # the line of each raise step, in order
    fields: dict
    sites: int  # the checks (raise and assert statements) on the path
    left_out: Counter


def read_program(code: WheelCode, entry: str, base_fields: dict | None = None) -> Program | None:
    if ":" in entry:
        found = code.code_for_function(entry)
        if found is None:
            return None
        walked = walk_function(found[0], found[1], found[2])
        declared = _parsed_fields(code, entry.partition(":")[0], found[0].parsed)
    else:
        found = code.code_for(entry)
        if found is None:
            return None
        walked = walk_entry(found[0], found[1], entry)
        declared = fields_of(code, entry)
    steps = _pruned(walked.steps)
    lines = [step[5] for step in steps if step[0] == "raise"]
    steps = [[*step[:5]] if step[0] == "raise" else step for step in steps]
    reads = _read_names(steps)
    declared = {**(base_fields or {}), **declared}
    fields = {name: row for name, row in declared.items() if f"self.{name}" in reads}
    kept = sum(1 for step in steps if step[0] == "raise")
    left = Counter(reason for reason, _, _ in walked.left_out)
    return Program(steps, lines, fields, kept + sum(left.values()), left)


def _parsed_fields(code: WheelCode, path: str, parsed: list) -> dict[str, list]:
    """The fields of every parsed class (one flat namespace: HfArgumentParser gives each its own
    names); a name two classes declare differently keeps only its kind when they agree, else ``other``."""
    out: dict[str, list] = {}
    for _, _, cls in parsed:
        for name, row in fields_of(code, cls, path).items():
            if name in out and out[name] != row:
                row = [row[0]] if row[0] == out[name][0] else ["other"]
            out[name] = row
    return out


def _names_in(expression: str) -> set[str]:
    tree = ast.parse(expression, mode="eval")
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            out.add(f"self.{node.attr}")
        elif isinstance(node, ast.Name) and node.id != "self" and node.id != "len":
            out.add(node.id)
    return out


def _step_reads(step: list) -> set[str]:
    out: set[str] = set()
    for guard in step[1]:
        if not is_unknown(guard):
            out |= _names_in(guard.lstrip("~"))
    if step[0] == "set" and step[3] is not None:
        out |= _names_in(step[3])
    if step[0] == "raise":
        for part in step[3]:
            if isinstance(part, list) and part[0] != "?":
                out |= _names_in(part[0])
    return out


def _read_names(steps: list) -> set[str]:
    out: set[str] = set()
    for step in steps:
        out |= _step_reads(step)
    return out


def _pruned(steps: list) -> list:
    """Only the steps a check depends on: walking back from the end, a set or forget is kept when
    a later kept step reads its target; guards outside the language become ``?``."""
    needed: set[str] = set()
    kept: list = []
    for step in reversed(steps):
        step = [step[0], ["?" if is_unknown(g) else g for g in step[1]], *step[2:]]
        if step[0] == "raise":
            kept.append(step)
            needed |= _step_reads(step)
        elif step[0] == "set":
            if step[2] in needed:
                kept.append(step)
                needed |= _step_reads(step)
        else:
            targets = [t for t in step[2] if t == ALL or t in needed]
            if targets:
                kept.append([step[0], step[1], targets])
                needed |= _step_reads(step)
    kept.reverse()
    return kept


def external_fields(wheels: list[names.Wheel], entries: tuple[str, ...] = ("Seq2SeqTrainingArguments", "TrainingArguments")
                    ) -> dict[str, list]:
    """The base classes' fields with the kind and constant default every one of these releases
    gives them (a name whose default differs between releases keeps only its kind): the value
    a subclass in another package starts from when the launch does not give it. The first of
    ``entries`` a release has (Seq2SeqTrainingArguments: TrainingArguments' fields and its own)."""
    out: dict[str, list] = {}
    for number, wheel in enumerate(wheels):
        code = WheelCode(wheel)
        rows = next((fields_of(code, e) for e in entries if code.mro(e, "")), {})
        if number == 0:
            out = rows
            continue
        for name in list(out):
            row = rows.get(name)
            if row is None or row[0] != out[name][0]:
                del out[name]
            elif row != out[name]:
                out[name] = [row[0]]
    return out


def external_effects(wheels: list[names.Wheel], entry: str = "TrainingArguments") -> list:
    """What ``entry.__post_init__`` may do in any of these releases, as steps.

    A subclass in another package calls it through ``super().__post_init__()`` at a release of
    this package it does not fix. Each distinct release's path is replayed in turn, its checks
    dropped (a check that fires refuses the launch anyway), its assignments to arguments turned
    into forget steps and its locals renamed apart: a value that some release really changes is
    then unknown after the call, whatever the other releases did before it, and a value none
    changes keeps what it was."""
    out: list = []
    seen: set[str] = set()
    for wheel in sorted(wheels, key=lambda w: names._key(w.version)):
        code = WheelCode(wheel)
        found = code.code_for(entry)
        if found is None:
            continue
        steps = []
        for step in walk_entry(found[0], found[1], entry).steps:
            if step[0] == "set" and step[2].startswith("self."):
                steps.append(["forget", step[1], [step[2]]])
            elif step[0] != "raise":
                steps.append(step)
        key = json.dumps(steps)
        if key in seen:
            continue
        seen.add(key)
        prefix = f"X{len(seen)}"  # its locals apart from the caller's and the other releases' (L1_x -> X1L1_x)
        out += json.loads(re.sub(r"\b(L\d+_)(?=\w)", prefix + r"\1", key))
    return out


def encode(consumer: Consumer, wheels: list[names.Wheel], external: dict | None = None,
           base_fields: dict | None = None) -> dict:
    """``external``: each base package's effects (external_effects); ``base_fields``: the fields
    those bases give in every release (external_fields)."""
    steps: list = []
    step_index: dict[str, int] = {}
    programs: list = []
    program_index: dict[str, int] = {}
    releases: list = []
    summary: dict = {}
    for wheel in sorted(wheels, key=lambda w: names._key(w.version)):
        code = WheelCode(wheel, external)
        row: dict = {"version": wheel.version}
        for set_name, classes in consumer.entries.items():
            cls = next((c for c in classes if ":" in c or code.mro(c, "")), None)
            program = read_program(code, cls, base_fields) if cls else None
            if program is None:
                continue
            numbers = []
            for step in program.steps:
                key = json.dumps(step, sort_keys=True)
                if key not in step_index:
                    step_index[key] = len(steps)
                    steps.append(step)
                numbers.append(step_index[key])
            body = {"class": cls, "steps": numbers, "lines": program.lines, "fields": program.fields}
            key = json.dumps(body, sort_keys=True)
            if key not in program_index:
                program_index[key] = len(programs)
                programs.append(body)
            row[set_name] = program_index[key]
            summary[set_name] = {"release": wheel.version, "class": cls, "checks": program.sites,
                                 "kept": program.sites - sum(program.left_out.values()),
                                 "left_out": dict(sorted(program.left_out.items()))}
        releases.append(row)
    return {
        "$comment": (f"The start-up checks of each {consumer.package} release dslint read: each entry class's validation "
                     "path (__post_init__ and the methods it calls) as steps in the condition language, written by "
                     "python -m dslint.schemagen.startup_checks from the releases' wheels (read with ast, never imported). "
                     "A step: [set, guards, target, expression], [forget, guards, targets], "
                     "[raise, guards, exception, message, file]; a guard '?' is outside the language, one marked '~' "
                     "follows a check that raises (unknown counts as holding)."),
        "package": consumer.package,
        "entries": {k: list(v) for k, v in consumer.entries.items()},
        "newest": summary,
        "steps": steps,
        "programs": programs,
        "releases": releases,
    }


def render(data: dict) -> str:
    """One step, program or release a line: the file diffs well when a release is added."""
    head = {k: v for k, v in data.items() if k not in ("steps", "programs", "releases")}
    lines = ["{"] + [f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}," for k, v in head.items()]
    for index, key in enumerate(("steps", "programs", "releases")):
        lines.append(f"  {json.dumps(key)}: [")
        lines.append(",\n".join(f"    {json.dumps(row, ensure_ascii=False)}" for row in data[key]))
        lines.append("  ]" + ("," if index < 2 else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


def readme_table() -> str:
    """The README's table of the shipped files: per consumer and entry, the checks on the newest
    release's validation path, how many were kept, and the kinds of condition left out."""
    rows = ["| consumer | command (class, release) | checks on the path | kept | left out |",
            "|---|---|---|---|---|"]
    empty = []
    for name, consumer in CONSUMERS.items():
        data = json.loads(consumer.output.read_text(encoding="utf-8"))
        for entry, found in data["newest"].items():
            if not found["checks"]:
                empty.append(f"{name} {entry}")
                continue
            left = ", ".join(f"{kind} ({count})" for kind, count in sorted(found["left_out"].items(), key=lambda kv: -kv[1]))
            rows.append(f"| {name} | {entry} ({found['class']}, {found['release']}) | {found['checks']} | {found['kept']} | {left} |")
    tail = f"\nNo check on the validation path of: {', '.join(empty)}.\n" if empty else ""
    return "\n".join(rows) + "\n" + tail


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dslint.schemagen.startup_checks", description=__doc__.split("\n")[0])
    parser.add_argument("--wheels", required=True, type=Path, help="folder of the wheels (python -m dslint.schemagen.argument_names --download)")
    parser.add_argument("--package", choices=sorted(CONSUMERS), action="append", help="only this package (repeatable)")
    parser.add_argument("--check", action="store_true", help="exit 1 if a shipped file is stale")
    args = parser.parse_args(argv)
    status = 0
    for name in args.package or sorted(CONSUMERS):
        consumer = CONSUMERS[name]
        wheels = names.read_folder(names.PACKAGES[name], args.wheels)
        if not wheels:
            print(f"{name}: no wheel in {args.wheels}", file=sys.stderr)
            status = max(status, 1)
            continue
        bases = {base: names.read_folder(names.PACKAGES[base], args.wheels) for base in consumer.bases}
        base_fields: dict = {}
        for found in bases.values():
            base_fields.update(external_fields(found))
        text = render(encode(consumer, wheels, {b: external_effects(found) for b, found in bases.items()}, base_fields))
        if args.check:
            shipped = json.loads(consumer.output.read_text(encoding="utf-8"))
            read = [w.version for w in sorted(wheels, key=lambda w: names._key(w.version))]
            if [row["version"] for row in shipped["releases"]] != read:
                print(f"{name}: made from other wheels than the folder's ({len(read)} read)")
                status = max(status, names.EXIT_OTHER_WHEELS)
                continue
            stale = text != consumer.output.read_text(encoding="utf-8")
            print(f"{name}: {'out of date' if stale else 'up to date'}")
            status = 1 if stale and status != names.EXIT_OTHER_WHEELS else status
            continue
        consumer.output.write_text(text, encoding="utf-8")
        print(f"wrote {consumer.output} ({len(wheels)} releases)")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
