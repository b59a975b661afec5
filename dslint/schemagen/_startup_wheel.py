"""An argument class's code in one release's wheel, as the start-up checks walker asks for it:
classes and their method resolution order, methods, module constants and enum members
(``WheelCode``), and each argument's kind and constant default (``fields_of``). Read with
``ast`` from the wheel's files, never imported."""

from __future__ import annotations

import ast
from functools import lru_cache

from dslint.schemagen import argument_names as names
from dslint.schemagen._startup_lang import Code, Method, NotExpressible

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
