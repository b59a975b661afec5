"""Where a class's fields are declared: each annotated ``name: type`` line in the source of the
class and its bases, for the ``x-dslint-source`` of a generated schema's fields."""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Iterator


def field_declarations(klass: type) -> Iterator[tuple[type, str | None, str, int]]:
    """(class, its source file, field name, line) of each annotated field in the body of ``klass``
    and of its bases, the most basic first (a redeclaration in a subclass comes later). Classes
    whose source cannot be read or parsed are passed over."""
    for base in reversed(klass.__mro__):
        if "__dataclass_fields__" not in base.__dict__ and "__annotations__" not in base.__dict__:
            continue
        try:
            lines, start = inspect.getsourcelines(base)
            filename = inspect.getsourcefile(base)
        except (OSError, TypeError):
            continue
        try:
            tree = ast.parse(textwrap.dedent("".join(lines)))
        except SyntaxError:
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for node in body:
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                yield base, filename, node.target.id, start + node.lineno - 1
