"""Python programs read statically: what they import, call, subclass, decorate and parse.

Nothing is imported or executed. Each file is read with ``ast``; names are resolved through
the file's own imports to qualified names (``T`` → ``transformers.Trainer``), and the
project's own modules that a program imports are read too, a few levels deep, so that a
``train.py`` that only calls ``from src.train import main`` is still understood.

What comes out is facts with their file and line (``Evidence``): the qualified names a
program uses, the classes it defines and what they derive from, and the command-line flags
and dataclass fields its own parsers accept. ``dslint.launch.consumer`` turns these facts
into a verdict about who reads a launch's files.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

#: How far the project's own imports are followed from the entry program, and how much is read.
MAX_DEPTH = 3
MAX_FILES = 40
MAX_FILE_BYTES = 1_000_000

MISSING = object()  # a flag or field without a default the reader could see


@dataclass(frozen=True)
class Evidence:
    """A fact about a program and where it was seen."""

    path: str  # as displayed (relative to the working directory)
    line: int
    text: str  # what was seen, e.g. "calls deepspeed.initialize"

    def where(self) -> str:
        return f"{self.path}:{self.line}"

    def describe(self) -> str:
        return f"{self.text} ({self.where()})"


@dataclass
class ArgDef:
    """One command-line flag or dataclass field that a project's own parser accepts."""

    name: str  # canonical: no leading dashes, '-' → '_'
    type: str | None  # int | float | bool | str | list | None (not statically known)
    default: Any  # the literal default, or MISSING
    evidence: Evidence
    choices: tuple | None = None
    flag: bool = False  # store_true/store_false: takes no value
    init: bool = True  # False for ``field(init=False)``: HfArgumentParser makes no argument of it


@dataclass
class ParserUse:
    """A parser the program runs over its command line (or a config file)."""

    kind: str  # "argparse" | "hf" (HfArgumentParser) | "trl" (TrlParser)
    evidence: Evidence
    # Dataclasses given to HfArgumentParser / TrlParser, as qualified names; project ones are
    # resolved to their fields through ``Program.dataclasses``.
    classes: tuple[str, ...] = ()
    tolerant: bool = False  # parse_known_args / return_remaining_strings: unknown flags pass


@dataclass
class KeywordCall:
    """A call with keyword arguments the rules care about: ``TrainingArguments(lr=...)``, ``Trainer(optimizers=...)``.

    ``keywords`` maps each keyword to its literal value, or MISSING when it is not a literal;
    ``spread``: the call also passes ``**kwargs``, so any other keyword may be set too.
    """

    callee: str  # qualified name, or the local class name of a project class
    keywords: dict[str, Any]
    spread: bool
    evidence: Evidence
    lines: dict[str, int] = field(default_factory=dict)  # the line of each keyword


@dataclass
class ClassDef:
    name: str
    qualified_bases: tuple[str, ...]
    fields: list[ArgDef]
    is_dataclass: bool
    evidence: Evidence
    methods: tuple[str, ...] = ()


@dataclass
class Program:
    """Everything read from an entry program and the project modules it imports."""

    entry: str  # display path of the entry file
    files: list[str] = field(default_factory=list)  # every file read, entry first
    uses: dict[str, Evidence] = field(default_factory=dict)  # qualified name → first use
    subclasses: dict[str, Evidence] = field(default_factory=dict)  # external qualified base → first project subclass
    classes: dict[str, ClassDef] = field(default_factory=dict)  # project class name → definition (last wins)
    argparse: list[ArgDef] = field(default_factory=list)
    parsers: list[ParserUse] = field(default_factory=list)
    method_calls: dict[str, Evidence] = field(default_factory=dict)  # ".generate" → first call
    # Imports every run of the module executes: at its top level (or in its `if __name__ ==
    # "__main__":` block), outside try/if, so not an optional backend's.
    plain_imports: dict[str, Evidence] = field(default_factory=dict)  # of the modules every run imports
    calls: list[KeywordCall] = field(default_factory=list)  # calls with keyword arguments, in file order
    # Attributes the program assigns (``args.learning_rate = 1e-4``, ``setattr(args, "x", ...)``): a
    # value read from a call or a default may be changed afterwards.
    assigned: dict[str, Evidence] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)  # project files that could not be parsed
    truncated: bool = False  # MAX_FILES or MAX_DEPTH stopped the walk
    # ``sys.argv[i]`` read with a constant positive index: the program takes arguments by position
    argv_reads: dict[int, Evidence] = field(default_factory=dict)
    # String keys the program looks up in some dict (``d["k"]``, ``d.get("k")``, ``"k" in d``): a
    # key of a config it opens itself may be read by the project, not only by the library
    keys_read: dict[str, Evidence] = field(default_factory=dict)

    def first_use(self, *prefixes: str) -> Evidence | None:
        """The first evidence of a qualified name equal to or under any of ``prefixes``."""
        return _first_under(self.uses, prefixes)

    def derives_from(self, qualified: str) -> Evidence | None:
        return self.subclasses.get(qualified)

    def imports_always(self, *packages: str) -> Evidence | None:
        """The first unconditional import of any of ``packages`` (or a module under them)."""
        return _first_under(self.plain_imports, packages)


def _first_under(found: dict[str, Evidence], prefixes: tuple[str, ...]) -> Evidence | None:
    """The first (by file and line) evidence of a name equal to or under any of ``prefixes``."""
    best = None
    for name, evidence in found.items():
        if any(name == p or name.startswith(p + ".") for p in prefixes):
            if best is None or (evidence.path, evidence.line) < (best.path, best.line):
                best = evidence
    return best


# --------------------------------------------------------------------------------------------
# Reading one module
# --------------------------------------------------------------------------------------------


@dataclass
class _Module:
    path: Path
    display: str
    aliases: dict[str, str]  # local name → qualified name
    imports: list[tuple[str, int, tuple[str, ...], int]]  # (module, level, names, line)
    uses: list[tuple[str, int, str]]  # (qualified, line, how)
    classes: list[tuple[str, tuple[str, ...], list, bool, int, tuple]]  # name, bases, fields, dataclass, line, methods
    add_arguments: list[tuple[list[str], dict, int]]  # (option strings, keywords, line)
    parser_calls: list[tuple[str, tuple[str, ...], int]]  # (hf|trl|argparse-known|remaining, classes, line)
    method_calls: list[tuple[str, int]]
    plain_imports: list[tuple[str, int]] = field(default_factory=list)  # (qualified module or name, line)
    argv_reads: list[tuple[int, int]] = field(default_factory=list)  # (index, line) of each sys.argv[index] read
    calls: list[tuple[str, dict, bool, int, dict]] = field(default_factory=list)  # (callee, keywords, spread, line, lines)
    assigned: list[tuple[str, int]] = field(default_factory=list)  # (attribute, line)


def _always_body(tree: ast.Module) -> list[ast.stmt]:
    """The statements every run of the module executes: its top level and the ``if __name__ ==
    "__main__":`` block (a statement under try or another if may not run)."""
    body = list(tree.body)
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and _dotted(node.test.left) == "__name__":
            body.extend(node.body)
    return body


def _plain_imports(tree: ast.Module) -> list[tuple[str, int]]:
    """What the module imports unconditionally (absolute imports of ``_always_body``)."""
    out = []
    for node in _always_body(tree):
        if isinstance(node, ast.Import):
            out.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.module, node.lineno))
    return out


def _dotted(node: ast.AST) -> str | None:
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
                        qualified = _resolve_at(_dotted(value), end, out, aliases) if value is not None else None
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


def _literal(node: ast.AST | None) -> Any:
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
        outer = _dotted(node.value) or ""
        outer = outer.rsplit(".", 1)[-1]
        if outer == "Optional":
            return _annotation_type(node.slice)
        if outer in ("List", "list", "Tuple", "tuple", "Sequence"):
            return "list"
        if outer in ("Dict", "dict"):
            return "dict"
        if outer == "Union":
            members = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            kinds = {_annotation_type(m) for m in members if not (isinstance(m, ast.Constant) and m.value is None)}
            return kinds.pop() if len(kinds) == 1 else None
        if outer == "Literal":
            return "str"
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):  # int | None
        kinds = {_annotation_type(side) for side in (node.left, node.right)
                 if not (isinstance(side, ast.Constant) and side.value is None)}
        return kinds.pop() if len(kinds) == 1 else None
    return None


def _field_default(value: ast.AST | None) -> Any:
    """A dataclass field's default: ``= 3`` or ``= field(default=3)``."""
    if value is None:
        return MISSING
    if isinstance(value, ast.Call) and (_dotted(value.func) or "").rsplit(".", 1)[-1] == "field":
        for keyword in value.keywords:
            if keyword.arg == "default":
                return _literal(keyword.value)
        return MISSING
    return _literal(value)


def _field_init(value: ast.AST | None) -> bool:
    """False for ``field(init=False)`` (the literal False only)."""
    if isinstance(value, ast.Call) and (_dotted(value.func) or "").rsplit(".", 1)[-1] == "field":
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
                        found = _literal(item)
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


def _read_module(path: Path, display: str, tree: ast.Module) -> _Module:
    module = _Module(path, display, {}, [], [], [], [], [], [], _plain_imports(tree))
    aliases = module.aliases
    # Imports anywhere (functions often import lazily); later bindings of a name win, which is
    # right for the common `try: from a import X / except: from b import X` only approximately.
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    head = alias.name.split(".", 1)[0]
                    aliases.setdefault(head, head)
                module.imports.append((alias.name, 0, (), node.lineno))
                module.uses.append((alias.name, node.lineno, "imports"))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            names = tuple(a.name for a in node.names)
            module.imports.append((base, node.level, names, node.lineno))
            if node.level == 0:
                for alias in node.names:
                    if alias.name == "*":
                        continue
                    qualified = f"{base}.{alias.name}" if base else alias.name
                    aliases[alias.asname or alias.name] = qualified
                    module.uses.append((qualified, node.lineno, "imports"))
            else:
                for alias in node.names:
                    if alias.name != "*":
                        aliases[alias.asname or alias.name] = f".{base}.{alias.name}" if base else f".{alias.name}"
    # A module-level name is its last binding before the use (a class defined after an import of
    # the same name replaces it, as in Python); a function body sees the module's final bindings.
    bindings = _module_bindings(tree, aliases)
    deferred: set[int] = set()
    for function in ast.walk(tree):
        if isinstance(function, _FUNCTIONS):
            body = function.body if isinstance(function.body, list) else [function.body]
            for statement in body:
                deferred.update(id(n) for n in ast.walk(statement))

    def qualify(dotted: str | None, node: ast.AST) -> str | None:
        return _resolve_at(dotted, None if id(node) in deferred else node.lineno, bindings, aliases)

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            dotted = _dotted(node.func)
            qualified = qualify(dotted, node)
            if qualified is not None:
                module.uses.append((qualified, node.lineno, "calls"))
            name = dotted.rsplit(".", 1)[-1] if dotted else (node.func.attr if isinstance(node.func, ast.Attribute) else None)
            if isinstance(node.func, ast.Attribute):
                module.method_calls.append((node.func.attr, node.lineno))
            if node.keywords and name and name[:1].isupper():  # a class called with keywords
                keywords = {k.arg: _literal(k.value) for k in node.keywords if k.arg}
                spread = any(k.arg is None for k in node.keywords)
                lines = {k.arg: k.value.lineno for k in node.keywords if k.arg}
                module.calls.append((qualified or dotted or name, keywords, spread, node.lineno, lines))
            if isinstance(node.func, ast.Attribute) and node.func.attr in _SETTERS:
                for field_name in _SETTERS[node.func.attr]:
                    module.assigned.append((field_name, node.lineno))
            if name == "setattr" and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) \
                    and isinstance(node.args[1].value, str):
                module.assigned.append((node.args[1].value, node.lineno))
            if name == "add_argument":
                options = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                keywords = {k.arg: k.value for k in node.keywords if k.arg}
                if options:
                    module.add_arguments.append((options, keywords, node.lineno))
            elif name == "add_config_arguments" and qualified and qualified.startswith("deepspeed"):
                module.parser_calls.append(("deepspeed-args", (), node.lineno))
            elif name in ("HfArgumentParser", "TrlParser"):
                classes = ()
                if node.args:
                    first = node.args[0]
                    elts = first.elts if isinstance(first, (ast.Tuple, ast.List)) else [first]
                    classes = tuple(qualify(_dotted(e), e) or (_dotted(e) or "?") for e in elts)
                module.parser_calls.append(("hf" if name == "HfArgumentParser" else "trl", classes, node.lineno))
            elif name == "parse_known_args":
                module.parser_calls.append(("argparse-known", (), node.lineno))
            elif name == "parse_args_into_dataclasses":
                if any(k.arg == "return_remaining_strings" and _literal(k.value) is True for k in node.keywords):
                    module.parser_calls.append(("remaining", (), node.lineno))
        elif isinstance(node, ast.Subscript) and qualify(_dotted(node.value), node) == "sys.argv":
            index = _literal(node.slice)
            if isinstance(index, int) and not isinstance(index, bool) and index >= 1:
                module.argv_reads.append((index, node.lineno))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                qualified = qualify(_dotted(target), decorator)
                if qualified is not None:
                    module.uses.append((qualified, decorator.lineno, "decorated with"))
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for item in ast.walk(target):
                    if isinstance(item, ast.Attribute) and isinstance(item.ctx, ast.Store):
                        module.assigned.append((item.attr, node.lineno))
        if isinstance(node, ast.ClassDef):
            bases = []
            for base in node.bases:
                dotted = _dotted(base)
                bases.append(qualify(dotted, base) or dotted or "?")
            is_dataclass = any((_dotted(d.func if isinstance(d, ast.Call) else d) or "").rsplit(".", 1)[-1] == "dataclass"
                               for d in node.decorator_list)
            fields = []
            for statement in node.body:
                if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                    annotation = statement.annotation
                    if (_dotted(annotation) or "").endswith("ClassVar") or (
                            isinstance(annotation, ast.Subscript) and (_dotted(annotation.value) or "").endswith("ClassVar")):
                        continue
                    fields.append(ArgDef(statement.target.id, _annotation_type(annotation), _field_default(statement.value),
                                         Evidence(display, statement.lineno, f"field {statement.target.id} of {node.name}"),
                                         _field_choices(statement.value), init=_field_init(statement.value)))
            methods = tuple(f.name for f in node.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)))
            module.classes.append((node.name, tuple(bases), fields, is_dataclass, node.lineno, methods))
    return module


@lru_cache(maxsize=512)
def _parse_file(real: str, mtime_ns: int, size: int) -> ast.Module | None:
    try:
        with open(real, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_FILE_BYTES:
        return None
    try:
        return ast.parse(data, filename=real)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def _load(path: Path) -> ast.Module | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return _parse_file(os.path.realpath(path), info.st_mtime_ns, info.st_size)


# --------------------------------------------------------------------------------------------
# Finding modules in the project
# --------------------------------------------------------------------------------------------


def module_file(name: str, roots: list[Path]) -> Path | None:
    """``a.b.c`` → ``<root>/a/b/c.py`` or ``<root>/a/b/c/__main__.py``/``__init__.py`` in the first root that has it."""
    parts = name.split(".")
    if not all(p.isidentifier() for p in parts):
        return None
    for root in roots:
        base = root.joinpath(*parts)
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


def _relative_base(path: Path, level: int) -> Path:
    base = path.parent
    for _ in range(level - 1):
        base = base.parent
    return base


def _imported_files(module: _Module, roots: list[Path]) -> Iterator[tuple[Path, int]]:
    """The project files a module imports, each with the line of its import statement."""
    for name, level, names, line in module.imports:
        if level:
            base = _relative_base(module.path, level)
            here = [base]
            target = name
        else:
            here = roots
            target = name
        if target:
            found = module_file(target, here)
            if found is not None:
                yield found, line
        for item in names:  # `from pkg import sub`: sub may be a module of its own
            if item == "*":
                continue
            dotted = f"{target}.{item}" if target else item
            found = module_file(dotted, here)
            if found is not None:
                yield found, line


def search_roots(entry: Path, repo_root: Path | None) -> list[Path]:
    """Where ``import x`` of a project module is looked for: the entry's folder (Python puts it on
    sys.path), each folder above it up to the repository root, and ``src/`` layouts."""
    roots = [entry.parent]
    if repo_root is not None:
        directory = entry.parent
        while directory != repo_root and repo_root in directory.parents:
            directory = directory.parent
            roots.append(directory)
        if repo_root not in roots:
            roots.append(repo_root)
        if (repo_root / "src").is_dir():
            roots.append(repo_root / "src")
    return roots


def read_program(entry: Path, repo_root: Path | None, display) -> Program | None:
    """Read ``entry`` and the project modules it imports (breadth first, up to MAX_DEPTH levels).

    ``display(path) -> str`` gives the path as messages show it. None when the entry itself
    cannot be parsed.
    """
    tree = _load(entry)
    if tree is None:
        return None
    roots = search_roots(entry, repo_root)
    program = Program(entry=display(entry))
    queue: list[tuple[Path, ast.Module, int]] = [(entry, tree, 0)]
    seen = {os.path.realpath(entry)}
    modules: list[_Module] = []
    # (importer, imported) for imports that run whenever the importer runs: a module imported only
    # under try/if may be absent, and what it imports says nothing about every run
    always_edges: list[tuple[str, str]] = []
    while queue:
        path, tree, depth = queue.pop(0)
        module = _read_module(path, display(path), tree)
        modules.append(module)
        program.files.append(module.display)
        if depth >= MAX_DEPTH:
            if module.imports:
                program.truncated = True
            continue
        for key, line in _keys_read(tree):
            program.keys_read.setdefault(key, Evidence(module.display, line, f"reads the key '{key}'"))
        unconditional = _unconditional_lines(tree)
        for found, line in _imported_files(module, roots):
            real = os.path.realpath(found)
            if line in unconditional:
                always_edges.append((os.path.realpath(path), real))
            if real in seen:
                continue
            if repo_root is not None and not real.startswith(str(repo_root)):
                continue  # an installed package's source is not the project's
            seen.add(real)
            if len(seen) > MAX_FILES:
                program.truncated = True
                break
            child = _load(found)
            if child is None:
                program.unreadable.append(display(found))
                continue
            queue.append((found, child, depth + 1))
    _collect(program, modules, _always_run(os.path.realpath(entry), always_edges))
    return program


def read_modules(paths: list[Path], display) -> Program:
    """Read exactly ``paths`` (no imports followed): the classes and fields a package's argument modules define.

    Files that cannot be parsed are listed in ``unreadable``.
    """
    program = Program(entry=display(paths[0]) if paths else "")
    modules: list[_Module] = []
    for path in paths:
        tree = _load(path)
        if tree is None:
            program.unreadable.append(display(path))
            continue
        module = _read_module(path, display(path), tree)
        modules.append(module)
        program.files.append(module.display)
    _collect(program, modules)
    return program


def _unconditional_lines(tree: ast.Module) -> set[int]:
    """Lines of the import statements a module runs whenever it runs, relative imports included."""
    return {node.lineno for node in _always_body(tree) if isinstance(node, (ast.Import, ast.ImportFrom))}


def _keys_read(tree: ast.Module) -> Iterator[tuple[str, int]]:
    """Constant string keys looked up in a mapping: ``x["k"]``, ``x.get("k")``/``.pop``/
    ``.setdefault``, ``"k" in x``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            yield node.slice.value, node.lineno
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("get", "pop", "setdefault")
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            yield node.args[0].value, node.lineno
        elif (isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str)
              and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops)):
            yield node.left.value, node.lineno


def _always_run(entry: str, edges: list[tuple[str, str]]) -> set[str]:
    """The modules every run of the entry imports: reached from it by unconditional imports only."""
    imports: dict[str, list[str]] = {}
    for importer, imported in edges:
        imports.setdefault(importer, []).append(imported)
    reached, stack = {entry}, [entry]
    while stack:
        for imported in imports.get(stack.pop(), ()):
            if imported not in reached:
                reached.add(imported)
                stack.append(imported)
    return reached


_TYPE_OF_CALLABLE = {"int": "int", "float": "float", "str": "str"}


def _collect(program: Program, modules: list[_Module], always: set[str] | None = None) -> None:
    for module in modules:
        for qualified, line, how in module.uses:
            if qualified.startswith("."):
                continue
            known = program.uses.get(qualified)
            # A call or decoration proves more than an import: keep the strongest, then the first.
            if known is None or (known.text.startswith("imports") and how != "imports"):
                program.uses[qualified] = Evidence(module.display, line, f"{how} {qualified}")
        for method, line in module.method_calls:
            program.method_calls.setdefault(method, Evidence(module.display, line, f"calls .{method}()"))
        if always is None or os.path.realpath(module.path) in always:
            for name, line in module.plain_imports:
                program.plain_imports.setdefault(name, Evidence(module.display, line, f"imports {name}"))
        for index, line in module.argv_reads:
            program.argv_reads.setdefault(index, Evidence(module.display, line, f"reads sys.argv[{index}]"))
        for callee, keywords, spread, line, lines in module.calls:
            if callee.startswith("."):
                callee = callee.rsplit(".", 1)[-1]  # a class of the project, found by its name
            program.calls.append(KeywordCall(callee, keywords, spread, Evidence(module.display, line, f"calls {callee}(...)"), lines))
        for attribute, line in module.assigned:
            program.assigned.setdefault(attribute, Evidence(module.display, line, f"assigns .{attribute}"))
        for name, bases, fields, is_dataclass, line, methods in module.classes:
            evidence = Evidence(module.display, line, f"class {name}({', '.join(b.rsplit('.', 1)[-1] for b in bases)})")
            program.classes[name] = ClassDef(name, bases, fields, is_dataclass, evidence, methods)
            for base in bases:
                if not base.startswith(".") and "." in base:
                    program.subclasses.setdefault(base, Evidence(module.display, line, f"class {name} derives from {base}"))
        for options, keywords, line in module.add_arguments:
            program.argparse.extend(_argparse_defs(options, keywords, Evidence(module.display, line, f"add_argument({options[0]!r})")))
        for kind, classes, line in module.parser_calls:
            evidence = Evidence(module.display, line, {"hf": "HfArgumentParser", "trl": "TrlParser"}.get(kind, kind))
            if kind in ("hf", "trl"):
                program.parsers.append(ParserUse(kind, evidence, classes))
            elif kind == "deepspeed-args":
                program.argparse.extend([
                    ArgDef("deepspeed", "bool", False, Evidence(module.display, line, "deepspeed.add_config_arguments"), flag=True),
                    ArgDef("deepspeed_config", "str", None, Evidence(module.display, line, "deepspeed.add_config_arguments")),
                    ArgDef("deepscale", "bool", False, Evidence(module.display, line, "deepspeed.add_config_arguments"), flag=True),
                    ArgDef("deepscale_config", "str", None, Evidence(module.display, line, "deepspeed.add_config_arguments")),
                ])
            else:  # parse_known_args / return_remaining_strings: unknown flags are tolerated
                program.parsers.append(ParserUse("argparse" if kind == "argparse-known" else "hf", evidence, tolerant=True))
    # Subclasses of project classes inherit what their project bases derive from.
    changed = True
    while changed:
        changed = False
        for cls in program.classes.values():
            for base in cls.qualified_bases:
                local = base.rsplit(".", 1)[-1]
                parent = program.classes.get(local)
                if parent is None or parent is cls:
                    continue
                for external in parent.qualified_bases:
                    if "." in external and not external.startswith(".") and external not in program.subclasses:
                        program.subclasses[external] = cls.evidence
                        changed = True


def _argparse_defs(options: list[str], keywords: dict, evidence: Evidence) -> list[ArgDef]:
    longs = [o for o in options if o.startswith("--")] or [o for o in options if o.startswith("-")]
    if not longs:
        return []  # a positional argument
    action = _literal(keywords.get("action"))
    flag = action in ("store_true", "store_false", "store_const", "count", "help", "version")
    typ = None
    if "type" in keywords:
        typ = _TYPE_OF_CALLABLE.get(_dotted(keywords["type"]) or "")
    elif flag:
        typ = "bool"
    else:
        typ = "str"
    if _literal(keywords.get("nargs")) not in (MISSING, None, "?"):
        typ = "list"
    choices = _literal(keywords.get("choices"))
    default = _literal(keywords.get("default")) if "default" in keywords else (False if action == "store_true" else MISSING)
    out = []
    for option in longs:
        out.append(ArgDef(option.lstrip("-").replace("-", "_"), typ, default, evidence,
                          tuple(choices) if isinstance(choices, (list, tuple)) else None, flag))
    dest = _literal(keywords.get("dest"))
    if isinstance(dest, str) and all(a.name != dest for a in out):
        out.append(ArgDef(dest, typ, default, evidence, None, flag))
    return out


def dataclass_fields(program: Program, name: str, seen: frozenset = frozenset()) -> list[ArgDef] | None:
    """Fields of a project dataclass (with those of its project bases); None when not a project class."""
    cls = program.classes.get(name.rsplit(".", 1)[-1])
    if cls is None or name in seen:
        return None
    fields = []
    for base in cls.qualified_bases:
        inherited = dataclass_fields(program, base, seen | {name})
        if inherited:
            fields.extend(inherited)
    fields.extend(cls.fields)
    return fields


__all__ = ["ArgDef", "Evidence", "KeywordCall", "MISSING", "ParserUse", "Program", "dataclass_fields", "module_file", "read_modules", "read_program",
           "search_roots"]
