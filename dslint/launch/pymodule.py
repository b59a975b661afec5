"""Reading one Python module statically: what it imports, calls, subclasses, decorates and parses.

Nothing is imported or executed. Names are resolved through the module's own imports to
qualified names (``T`` → ``transformers.Trainer``), as bound where each is used. The facts found
are kept per module (``Module``); dslint.launch.pyprogram gathers those of a program's modules.

The statements are read in one walk of the tree, each node by the readers of its kind
(``_READERS``: node type → functions); imports are read in a walk before, since a name used
anywhere may be imported anywhere.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MISSING = object()  # a flag or field without a default the reader could see


@dataclass
class Module:
    """What one module holds, as read: names, lines and literals, before they become Evidence."""

    path: Path
    display: str
    aliases: dict[str, str]  # local name → qualified name
    imports: list[tuple[str, int, tuple[str, ...], int]]  # (module, level, names, line)
    uses: list[tuple[str, int, str]]  # (qualified, line, how)
    classes: list[tuple[str, tuple[str, ...], list, bool, int, tuple]]  # name, bases, fields, dataclass, line, methods
    # each field: (name, type, default or MISSING, line, choices, init)
    add_arguments: list[tuple[list[str], dict, int]]  # (option strings, keywords, line)
    parser_calls: list[tuple[str, tuple[str, ...], int]]  # (hf|trl|argparse-known|remaining, classes, line)
    method_calls: list[tuple[str, int]]
    plain_imports: list[tuple[str, int]] = field(default_factory=list)  # (qualified module or name, line)
    argv_reads: list[tuple[int, int]] = field(default_factory=list)  # (index, line) of each sys.argv[index] read
    calls: list[tuple[str, dict, bool, int, dict]] = field(default_factory=list)  # (callee, keywords, spread, line, lines)
    assigned: list[tuple[str, int]] = field(default_factory=list)  # (attribute, line)


def always_body(tree: ast.Module) -> list[ast.stmt]:
    """The statements every run of the module executes: its top level and the ``if __name__ ==
    "__main__":`` block (a statement under try or another if may not run)."""
    body = list(tree.body)
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and dotted_name(node.test.left) == "__name__":
            body.extend(node.body)
    return body


def _plain_imports(tree: ast.Module) -> list[tuple[str, int]]:
    """What the module imports unconditionally (absolute imports of ``_always_body``)."""
    out = []
    for node in always_body(tree):
        if isinstance(node, ast.Import):
            out.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.module, node.lineno))
    return out


def dotted_name(node: ast.AST) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _qualify(dotted: str | None, aliases: dict[str, str]) -> str | None:
    if not dotted:
        return None
    head, _, rest = dotted.partition(".")
    base = aliases.get(head)
    if base is None:
        return None
    return f"{base}.{rest}" if rest else base


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _module_bindings(tree: ast.Module, aliases: dict[str, str]) -> dict[str, list[tuple[int, str | None]]]:
    """Each name the module's own statements bind, in source order: (line after which it holds,
    qualified name of an import or of an aliasing assignment, or None for a class, function or
    other value of the module's own). Function bodies bind their own locals and are skipped."""
    out: dict[str, list[tuple[int, str | None]]] = {}

    def bind(name: str, end: int, qualified: str | None) -> None:
        if fallback and name in out:
            return
        out.setdefault(name, []).append((end, qualified))

    fallback = False

    def visit(statements: list) -> None:
        nonlocal fallback
        for node in statements:
            end = getattr(node, "end_lineno", None) or node.lineno
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        bind(alias.asname, end, alias.name)
                    else:
                        head = alias.name.split(".", 1)[0]
                        bind(head, end, head)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                for alias in node.names:
                    if alias.name == "*":
                        continue
                    if node.level == 0:
                        bind(alias.asname or alias.name, end, f"{base}.{alias.name}" if base else alias.name)
                    else:
                        bind(alias.asname or alias.name, end, f".{base}.{alias.name}" if base else f".{alias.name}")
            elif isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                bind(node.name, end, None)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                value = node.value
                for target in targets:
                    if isinstance(target, ast.Name):
                        # `Args = transformers.TrainingArguments` aliases; any other value is the module's own.
                        qualified = _resolve_at(dotted_name(value), end, out, aliases) if value is not None else None
                        bind(target.id, end, qualified)
            if isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
                visit(node.body)
                # An `except ImportError: X = None` or an `else:` branch is the other path: it
                # binds a name the main path left unbound, it does not replace the import.
                outer, fallback = fallback, True
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)
                visit(getattr(node, "orelse", []))
                fallback = outer
                visit(getattr(node, "finalbody", []))

    visit(tree.body)
    return out


def _resolve_at(dotted: str | None, line: int | None, bindings: dict[str, list[tuple[int, str | None]]],
                aliases: dict[str, str]) -> str | None:
    """The qualified name ``dotted`` has when used at ``line`` of module-level code, or (line None)
    from a function body, which runs after the module has bound all its names; None when its head
    is one of the module's own classes, functions or values. A name the module never binds at its
    top level takes its import from anywhere (a function's lazy import)."""
    if not dotted:
        return None
    head, _, rest = dotted.partition(".")
    history = bindings.get(head)
    if history:
        seen = [q for end, q in history if line is None or end < line]
        if seen:
            base = seen[-1]
            if base is None:
                return None
            return f"{base}.{rest}" if rest else base
    return _qualify(dotted, aliases)


def literal(node: ast.AST | None) -> Any:
    if node is None:
        return MISSING
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return MISSING


_TYPE_NAMES = {"int": "int", "float": "float", "str": "str", "bool": "bool", "list": "list", "List": "list",
               "dict": "dict", "Dict": "dict", "tuple": "list", "Tuple": "list"}


def _annotation_type(node: ast.AST | None) -> str | None:
    """The scalar type a dataclass field annotation asks HfArgumentParser for (None: not plain)."""
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # "Optional[int]" as a string
        try:
            node = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(node, ast.Name):
        return _TYPE_NAMES.get(node.id)
    if isinstance(node, ast.Attribute):
        return _TYPE_NAMES.get(node.attr)
    if isinstance(node, ast.Subscript):
        return _subscript_type(node)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):  # int | None
        return _one_type((node.left, node.right))
    return None


def _one_type(members) -> str | None:
    """The type of a union whose members other than None all have one type."""
    kinds = {_annotation_type(m) for m in members if not (isinstance(m, ast.Constant) and m.value is None)}
    return kinds.pop() if len(kinds) == 1 else None


_SUBSCRIPT_TYPES = {"List": "list", "list": "list", "Tuple": "list", "tuple": "list", "Sequence": "list",
                    "Dict": "dict", "dict": "dict", "Literal": "str"}


def _subscript_type(node: ast.Subscript) -> str | None:
    """``Optional[int]``, ``List[str]``, ``Union[int, None]``, ``Literal["a"]`` ..."""
    outer = (dotted_name(node.value) or "").rsplit(".", 1)[-1]
    if outer == "Optional":
        return _annotation_type(node.slice)
    if outer == "Union":
        return _one_type(node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice])
    return _SUBSCRIPT_TYPES.get(outer)


def _field_default(value: ast.AST | None) -> Any:
    """A dataclass field's default: ``= 3`` or ``= field(default=3)``."""
    if value is None:
        return MISSING
    if isinstance(value, ast.Call) and (dotted_name(value.func) or "").rsplit(".", 1)[-1] == "field":
        for keyword in value.keywords:
            if keyword.arg == "default":
                return literal(keyword.value)
        return MISSING
    return literal(value)


def _field_init(value: ast.AST | None) -> bool:
    """False for ``field(init=False)`` (the literal False only)."""
    if isinstance(value, ast.Call) and (dotted_name(value.func) or "").rsplit(".", 1)[-1] == "field":
        for keyword in value.keywords:
            if keyword.arg == "init" and isinstance(keyword.value, ast.Constant) and keyword.value.value is False:
                return False
    return True


def _field_choices(value: ast.AST | None) -> tuple | None:
    if isinstance(value, ast.Call):
        for keyword in value.keywords:
            if keyword.arg == "metadata" and isinstance(keyword.value, ast.Dict):
                for key, item in zip(keyword.value.keys, keyword.value.values):
                    if isinstance(key, ast.Constant) and key.value == "choices":
                        found = literal(item)
                        if isinstance(found, (list, tuple)):
                            return tuple(found)
    return None


# TrainingArguments' setter methods and the fields each one changes (transformers training_args.py
# `set_training`, `set_optimizer`, `set_lr_scheduler`, `set_dataloader`).
_SETTERS = {
    "set_training": ("learning_rate", "per_device_train_batch_size", "weight_decay", "num_train_epochs", "max_steps",
                     "gradient_accumulation_steps", "seed", "gradient_checkpointing"),
    "set_optimizer": ("optim", "learning_rate", "weight_decay", "adam_beta1", "adam_beta2", "adam_epsilon", "optim_args"),
    "set_lr_scheduler": ("lr_scheduler_type", "num_train_epochs", "max_steps", "warmup_ratio", "warmup_steps"),
    "set_dataloader": ("per_device_train_batch_size", "per_device_eval_batch_size"),
}




def _read_import(module: Module, node: ast.Import) -> None:
    for alias in node.names:
        if alias.asname:
            module.aliases[alias.asname] = alias.name
        else:
            head = alias.name.split(".", 1)[0]
            module.aliases.setdefault(head, head)
        module.imports.append((alias.name, 0, (), node.lineno))
        module.uses.append((alias.name, node.lineno, "imports"))


def _read_import_from(module: Module, node: ast.ImportFrom) -> None:
    base = node.module or ""
    names = tuple(a.name for a in node.names)
    module.imports.append((base, node.level, names, node.lineno))
    for alias in node.names:
        if alias.name == "*":
            continue
        if node.level == 0:
            qualified = f"{base}.{alias.name}" if base else alias.name
            module.aliases[alias.asname or alias.name] = qualified
            module.uses.append((qualified, node.lineno, "imports"))
        else:
            module.aliases[alias.asname or alias.name] = f".{base}.{alias.name}" if base else f".{alias.name}"


# Imports anywhere (functions often import lazily); later bindings of a name win, which is
# right for the common `try: from a import X / except: from b import X` only approximately.
_IMPORT_READERS = {ast.Import: _read_import, ast.ImportFrom: _read_import_from}


@dataclass
class _Reading:
    """A module being read: what it holds so far, and how a name used at a node resolves."""

    module: Module
    # A module-level name is its last binding before the use (a class defined after an import of
    # the same name replaces it, as in Python); a function body sees the module's final bindings.
    bindings: dict[str, list[tuple[int, str | None]]]
    deferred: set[int]  # ids of the nodes in function bodies

    def qualify(self, dotted: str | None, node: ast.AST) -> str | None:
        return _resolve_at(dotted, None if id(node) in self.deferred else node.lineno, self.bindings, self.module.aliases)


def _in_functions(tree: ast.Module) -> set[int]:
    """The ids of the nodes inside function bodies: they run after the module bound its names."""
    deferred: set[int] = set()
    for function in ast.walk(tree):
        if isinstance(function, _FUNCTIONS):
            body = function.body if isinstance(function.body, list) else [function.body]
            for statement in body:
                deferred.update(id(n) for n in ast.walk(statement))
    return deferred


def _read_call(reading: _Reading, node: ast.Call) -> None:
    module = reading.module
    dotted = dotted_name(node.func)
    qualified = reading.qualify(dotted, node)
    if qualified is not None:
        module.uses.append((qualified, node.lineno, "calls"))
    name = dotted.rsplit(".", 1)[-1] if dotted else (node.func.attr if isinstance(node.func, ast.Attribute) else None)
    if isinstance(node.func, ast.Attribute):
        module.method_calls.append((node.func.attr, node.lineno))
    # a class called with keywords, or deepspeed.initialize (whether it is given an optimizer)
    if node.keywords and name and (name[:1].isupper() or qualified == "deepspeed.initialize"):
        keywords = {k.arg: literal(k.value) for k in node.keywords if k.arg}
        spread = any(k.arg is None for k in node.keywords)
        lines = {k.arg: k.value.lineno for k in node.keywords if k.arg}
        module.calls.append((qualified or dotted or name, keywords, spread, node.lineno, lines))
    _read_setters(module, node, name)
    _read_parser_call(reading, node, name, qualified)


def _read_setters(module: Module, node: ast.Call, name: str | None) -> None:
    """``args.set_optimizer(...)`` and ``setattr(args, "x", ...)`` change attributes after the fact."""
    if isinstance(node.func, ast.Attribute) and node.func.attr in _SETTERS:
        for field_name in _SETTERS[node.func.attr]:
            module.assigned.append((field_name, node.lineno))
    if name == "setattr" and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) \
            and isinstance(node.args[1].value, str):
        module.assigned.append((node.args[1].value, node.lineno))


def _add_argument(module: Module, node: ast.Call, qualified: str | None) -> None:
    options = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    keywords = {k.arg: k.value for k in node.keywords if k.arg}
    if options:
        module.add_arguments.append((options, keywords, node.lineno))


def _add_config_arguments(module: Module, node: ast.Call, qualified: str | None) -> None:
    """DeepSpeed's own flags, when it is ``deepspeed.add_config_arguments``."""
    if qualified and qualified.startswith("deepspeed"):
        module.parser_calls.append(("deepspeed-args", (), node.lineno))


def _parse_known_args(module: Module, node: ast.Call, qualified: str | None) -> None:
    module.parser_calls.append(("argparse-known", (), node.lineno))


def _parse_args_into_dataclasses(module: Module, node: ast.Call, qualified: str | None) -> None:
    if any(k.arg == "return_remaining_strings" and literal(k.value) is True for k in node.keywords):
        module.parser_calls.append(("remaining", (), node.lineno))


#: the called name -> what a call of it says about the program's parsers (HfArgumentParser and
#: TrlParser, which need the names qualified, are read in _read_parser_call).
_PARSER_CALLS = {
    "add_argument": _add_argument,
    "add_config_arguments": _add_config_arguments,
    "parse_known_args": _parse_known_args,
    "parse_args_into_dataclasses": _parse_args_into_dataclasses,
}


def _read_parser_call(reading: _Reading, node: ast.Call, name: str | None, qualified: str | None) -> None:
    """``add_argument``, DeepSpeed's own flags, HfArgumentParser/TrlParser and the calls that tolerate unknown flags."""
    if name in ("HfArgumentParser", "TrlParser"):
        classes = ()
        if node.args:
            first = node.args[0]
            elts = first.elts if isinstance(first, (ast.Tuple, ast.List)) else [first]
            classes = tuple(reading.qualify(dotted_name(e), e) or (dotted_name(e) or "?") for e in elts)
        reading.module.parser_calls.append(("hf" if name == "HfArgumentParser" else "trl", classes, node.lineno))
        return
    read = _PARSER_CALLS.get(name)
    if read is not None:
        read(reading.module, node, qualified)


def _read_subscript(reading: _Reading, node: ast.Subscript) -> None:
    """``sys.argv[i]`` with a constant positive index: the program takes arguments by position."""
    if reading.qualify(dotted_name(node.value), node) != "sys.argv":
        return
    index = literal(node.slice)
    if isinstance(index, int) and not isinstance(index, bool) and index >= 1:
        reading.module.argv_reads.append((index, node.lineno))


def _read_decorators(reading: _Reading, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        qualified = reading.qualify(dotted_name(target), decorator)
        if qualified is not None:
            reading.module.uses.append((qualified, decorator.lineno, "decorated with"))


def _read_assignment(reading: _Reading, node: ast.Assign | ast.AugAssign | ast.AnnAssign) -> None:
    """Attributes the statement stores (``args.learning_rate = 1e-4``)."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    for target in targets:
        for item in ast.walk(target):
            if isinstance(item, ast.Attribute) and isinstance(item.ctx, ast.Store):
                reading.module.assigned.append((item.attr, node.lineno))


def _class_var(annotation: ast.AST) -> bool:
    return (dotted_name(annotation) or "").endswith("ClassVar") or (
        isinstance(annotation, ast.Subscript) and (dotted_name(annotation.value) or "").endswith("ClassVar"))


def _read_class(reading: _Reading, node: ast.ClassDef) -> None:
    """The class, its bases as qualified names, and its annotated fields (a dataclass's arguments)."""
    bases = []
    for base in node.bases:
        dotted = dotted_name(base)
        bases.append(reading.qualify(dotted, base) or dotted or "?")
    is_dataclass = any((dotted_name(d.func if isinstance(d, ast.Call) else d) or "").rsplit(".", 1)[-1] == "dataclass"
                       for d in node.decorator_list)
    fields = []
    for statement in node.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and not _class_var(statement.annotation):
            fields.append((statement.target.id, _annotation_type(statement.annotation), _field_default(statement.value),
                           statement.lineno, _field_choices(statement.value), _field_init(statement.value)))
    methods = tuple(f.name for f in node.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)))
    reading.module.classes.append((node.name, tuple(bases), fields, is_dataclass, node.lineno, methods))


#: node type -> what is read from a node of that type, in this order.
_READERS = {
    ast.Call: (_read_call,),
    ast.Subscript: (_read_subscript,),
    ast.FunctionDef: (_read_decorators,),
    ast.AsyncFunctionDef: (_read_decorators,),
    ast.ClassDef: (_read_decorators, _read_class),
    ast.Assign: (_read_assignment,),
    ast.AugAssign: (_read_assignment,),
    ast.AnnAssign: (_read_assignment,),
}


def read_module(path: Path, display: str, tree: ast.Module) -> Module:
    module = Module(path, display, {}, [], [], [], [], [], [], _plain_imports(tree))
    for node in ast.walk(tree):
        read = _IMPORT_READERS.get(type(node))
        if read is not None:
            read(module, node)
    reading = _Reading(module, _module_bindings(tree, module.aliases), _in_functions(tree))
    for node in ast.walk(tree):
        for read in _READERS.get(type(node), ()):
            read(reading, node)
    return module
