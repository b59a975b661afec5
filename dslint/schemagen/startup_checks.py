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
import sys
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from dslint.schemagen import argument_names as names
from dslint.schemagen._hfargs import SCHEMA_DIR
from dslint.schemagen._startup_walk import ALL, Code, Method, NotExpressible, is_unknown, walk_entry


@dataclass(frozen=True)
class Consumer:
    package: str  # the distribution (names.PACKAGES key)
    entries: dict[str, tuple[str, ...]]  # dslint's argument set -> the entry class names, newest first

    @property
    def output(self) -> Path:
        return SCHEMA_DIR / f"{self.package}-checks.json"


CONSUMERS: dict[str, Consumer] = {
    "transformers": Consumer("transformers", {"TrainingArguments": ("TrainingArguments",)}),
    "ms-swift": Consumer("ms-swift", {
        "sft": ("SftArguments", "TrainArguments"),
        "pt": ("PretrainArguments", "PtArguments", "TrainArguments"),
        "rlhf": ("RLHFArguments",),
        "megatron-sft": ("MegatronSftArguments", "MegatronTrainArguments"),
        "megatron-rlhf": ("MegatronRLHFArguments",),
    }),
}


# ---- the wheel's classes as the walker asks for them ---------------------------------------------


class WheelCode:
    """Classes, methods, constants and enums of one wheel, for one entry class."""

    def __init__(self, wheel: names.Wheel):
        self.wheel = wheel
        self.root = names._import_root(wheel.package)
        self._mro: dict[tuple[str, str], tuple] = {}

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

    def code_for(self, entry: str) -> tuple[Code, Method] | None:
        order = self.mro(entry, "")
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
                    class_constant=class_constant)
        return code, start

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


def fields_of(code: WheelCode, entry: str) -> dict[str, list]:
    """name -> [kind] or [kind, default]: kind bool/int/float/str/other; a default only when it is a
    constant (``field(default=...)`` too, ``default_factory=list`` as ``[]``)."""
    out: dict[str, list] = {}
    for item in reversed(code.mro(entry, "")):
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


def read_program(code: WheelCode, entry: str) -> Program | None:
    found = code.code_for(entry)
    if found is None:
        return None
    walked = walk_entry(found[0], found[1], entry)
    steps = _pruned(walked.steps)
    lines = [step[5] for step in steps if step[0] == "raise"]
    steps = [[*step[:5]] if step[0] == "raise" else step for step in steps]
    reads = _read_names(steps)
    fields = {name: row for name, row in fields_of(code, entry).items() if f"self.{name}" in reads}
    kept = sum(1 for step in steps if step[0] == "raise")
    left = Counter(reason for reason, _, _ in walked.left_out)
    return Program(steps, lines, fields, kept + sum(left.values()), left)


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


def encode(consumer: Consumer, wheels: list[names.Wheel]) -> dict:
    steps: list = []
    step_index: dict[str, int] = {}
    programs: list = []
    program_index: dict[str, int] = {}
    releases: list = []
    summary: dict = {}
    for wheel in sorted(wheels, key=lambda w: names._key(w.version)):
        code = WheelCode(wheel)
        row: dict = {"version": wheel.version}
        for set_name, classes in consumer.entries.items():
            cls = next((c for c in classes if code.mro(c, "")), None)
            program = read_program(code, cls) if cls else None
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
    for name, consumer in CONSUMERS.items():
        data = json.loads(consumer.output.read_text(encoding="utf-8"))
        for entry, found in data["newest"].items():
            left = ", ".join(f"{kind} ({count})" for kind, count in sorted(found["left_out"].items(), key=lambda kv: -kv[1]))
            rows.append(f"| {name} | {entry} ({found['class']}, {found['release']}) | {found['checks']} | {found['kept']} | {left} |")
    return "\n".join(rows) + "\n"


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
        text = render(encode(consumer, wheels))
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
