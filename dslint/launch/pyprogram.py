"""Python programs read statically: what they import, call, subclass, decorate and parse.

Nothing is imported or executed. Each file is read with ``ast`` (dslint.launch.pymodule); names
are resolved through the file's own imports to qualified names (``T`` → ``transformers.Trainer``),
and the project's own modules that a program imports are read too, a few levels deep, so that a
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

from dslint.launch.pymodule import MISSING, Module, always_body, dotted_name, literal, read_module

#: How far the project's own imports are followed from the entry program, and how much is read.
MAX_DEPTH = 3
MAX_FILES = 40
MAX_FILE_BYTES = 1_000_000


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
    """A class of a Python program, as far as its arguments go."""

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


def _imported_files(module: Module, roots: list[Path]) -> Iterator[tuple[Path, int]]:
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
    modules: list[Module] = []
    # (importer, imported) for imports that run whenever the importer runs: a module imported only
    # under try/if may be absent, and what it imports says nothing about every run
    always_edges: list[tuple[str, str]] = []
    while queue:
        path, tree, depth = queue.pop(0)
        module = read_module(path, display(path), tree)
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
    modules: list[Module] = []
    for path in paths:
        tree = _load(path)
        if tree is None:
            program.unreadable.append(display(path))
            continue
        module = read_module(path, display(path), tree)
        modules.append(module)
        program.files.append(module.display)
    _collect(program, modules)
    return program


def _unconditional_lines(tree: ast.Module) -> set[int]:
    """Lines of the import statements a module runs whenever it runs, relative imports included."""
    return {node.lineno for node in always_body(tree) if isinstance(node, (ast.Import, ast.ImportFrom))}


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


def _collect(program: Program, modules: list[Module], always: set[str] | None = None) -> None:
    for module in modules:
        _collect_uses(program, module, always)
        _collect_calls(program, module)
        _collect_classes(program, module)
        _collect_parsers(program, module)
    _inherit_subclasses(program)


def _collect_uses(program: Program, module: Module, always: set[str] | None) -> None:
    """The names the module uses, the methods it calls, what it imports on every run, the argv it reads."""
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


def _collect_calls(program: Program, module: Module) -> None:
    """Calls with keyword arguments, and the attributes the module assigns."""
    for callee, keywords, spread, line, lines in module.calls:
        if callee.startswith("."):
            callee = callee.rsplit(".", 1)[-1]  # a class of the project, found by its name
        program.calls.append(KeywordCall(callee, keywords, spread, Evidence(module.display, line, f"calls {callee}(...)"), lines))
    for attribute, line in module.assigned:
        program.assigned.setdefault(attribute, Evidence(module.display, line, f"assigns .{attribute}"))


def _collect_classes(program: Program, module: Module) -> None:
    for name, bases, fields, is_dataclass, line, methods in module.classes:
        evidence = Evidence(module.display, line, f"class {name}({', '.join(b.rsplit('.', 1)[-1] for b in bases)})")
        defs = [ArgDef(field_name, kind, default, Evidence(module.display, at, f"field {field_name} of {name}"), choices, init=init)
                for field_name, kind, default, at, choices, init in fields]
        program.classes[name] = ClassDef(name, bases, defs, is_dataclass, evidence, methods)
        for base in bases:
            if not base.startswith(".") and "." in base:
                program.subclasses.setdefault(base, Evidence(module.display, line, f"class {name} derives from {base}"))


def _deepspeed_flags(display: str, line: int) -> list[ArgDef]:
    """The flags ``deepspeed.add_config_arguments`` adds to a parser."""
    evidence = Evidence(display, line, "deepspeed.add_config_arguments")
    return [
        ArgDef("deepspeed", "bool", False, evidence, flag=True),
        ArgDef("deepspeed_config", "str", None, evidence),
        ArgDef("deepscale", "bool", False, evidence, flag=True),
        ArgDef("deepscale_config", "str", None, evidence),
    ]


def _collect_parsers(program: Program, module: Module) -> None:
    """The module's argparse flags and the parsers it runs."""
    for options, keywords, line in module.add_arguments:
        program.argparse.extend(_argparse_defs(options, keywords, Evidence(module.display, line, f"add_argument({options[0]!r})")))
    for kind, classes, line in module.parser_calls:
        evidence = Evidence(module.display, line, {"hf": "HfArgumentParser", "trl": "TrlParser"}.get(kind, kind))
        if kind in ("hf", "trl"):
            program.parsers.append(ParserUse(kind, evidence, classes))
        elif kind == "deepspeed-args":
            program.argparse.extend(_deepspeed_flags(module.display, line))
        else:  # parse_known_args / return_remaining_strings: unknown flags are tolerated
            program.parsers.append(ParserUse("argparse" if kind == "argparse-known" else "hf", evidence, tolerant=True))


def _inherit_subclasses(program: Program) -> None:
    """Subclasses of project classes inherit what their project bases derive from."""
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
    action = literal(keywords.get("action"))
    flag = action in ("store_true", "store_false", "store_const", "count", "help", "version")
    typ = None
    if "type" in keywords:
        typ = _TYPE_OF_CALLABLE.get(dotted_name(keywords["type"]) or "")
    elif flag:
        typ = "bool"
    else:
        typ = "str"
    if literal(keywords.get("nargs")) not in (MISSING, None, "?"):
        typ = "list"
    choices = literal(keywords.get("choices"))
    default = literal(keywords.get("default")) if "default" in keywords else (False if action == "store_true" else MISSING)
    out = []
    for option in longs:
        out.append(ArgDef(option.lstrip("-").replace("-", "_"), typ, default, evidence,
                          tuple(choices) if isinstance(choices, (list, tuple)) else None, flag))
    dest = literal(keywords.get("dest"))
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


__all__ = ["ArgDef", "Evidence", "KeywordCall", "ParserUse", "Program", "dataclass_fields", "module_file", "read_modules", "read_program",
           "search_roots"]
