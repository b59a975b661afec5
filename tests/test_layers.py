"""The layer contract: imports point down the data flow only, and no modules import each other.

The flow, from the bottom: foundations → files → documents → launch → evidence → frameworks →
facts and explain → rules → run → report and fix → command line. A module may import its own layer
and the layers below it, never one above; every import counts (at module level, inside a
function, under ``TYPE_CHECKING``), because each one is a dependency someone reading the code has
to follow. Cycles between modules are refused too, within a layer as across.

The README's "Layout" section lists the same layers. An exception needs a line in ``TOLERATED``
with its reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "dslint"

# Bottom first. A module belongs to the layer of the longest prefix that names it.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("foundations", ("dslint", "dslint.source", "dslint.diagnostics", "dslint.values", "dslint.config",
                     "dslint.schemas", "dslint.rule", "dslint.rule_index")),
    ("files", ("dslint.files",)),
    ("documents", ("dslint.documents",)),
    ("launch", ("dslint.launch",)),
    ("evidence", ("dslint.evidence",)),
    ("frameworks", ("dslint.frameworks",)),
    ("facts and explain", ("dslint.facts", "dslint.explain")),
    ("rules", ("dslint.targets", "dslint.rules")),
    ("run", ("dslint.run",)),
    ("report and fix", ("dslint.report", "dslint.fix")),
    ("command line", ("dslint.cli", "dslint.docs", "dslint.__main__")),
    # Developer-time generators: they import the real packages (transformers, deepspeed ...) to
    # write schemas/; no run imports them, and they may use anything of dslint.
    ("developer time", ("dslint.schemagen",)),
)

# (importer, imported): why this upward import or cycle is allowed.
TOLERATED: dict[tuple[str, str], str] = {}


def layer_of(module: str) -> int:
    best, found = -1, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, found = len(prefix), index
    if found < 0:
        raise LookupError(f"{module} is in no layer: add it to LAYERS in tests/test_layers.py and to README's Layout")
    return found


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path, root: Path) -> set[str]:
    """The dslint modules ``path`` imports, wherever the import statement stands."""
    me = module_name(path, root)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            found.add(base)
            # ``from dslint.run import split`` imports the module dslint.run.split
            found.update(f"{base}.{alias.name}" for alias in node.names if _is_module(f"{base}.{alias.name}", root))
    return {name for name in found if name == root.name or name.startswith(root.name + ".")}


def _is_module(name: str, root: Path) -> bool:
    relative = Path(*name.split(".")[1:])
    base = root / relative
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def graph(root: Path) -> dict[str, set[str]]:
    return {module_name(path, root): imports(path, root) - {module_name(path, root)} for path in sorted(root.rglob("*.py"))}


def upward(edges: dict[str, set[str]]) -> list[str]:
    return [f"{a} (layer {LAYERS[layer_of(a)][0]}) imports {b} (layer {LAYERS[layer_of(b)][0]})"
            for a, targets in sorted(edges.items()) for b in sorted(targets)
            if layer_of(b) > layer_of(a) and (a, b) not in TOLERATED]


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Groups of modules that import each other (strongly connected, Tarjan), ignoring a package's
    ``__init__`` importing its own submodules only through the names they define (the submodule
    importing the package is what counts)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def neighbours(node: str) -> list[str]:
        return sorted(b for b in edges.get(node, ()) if b in edges and (node, b) not in TOLERATED
                      and not b.startswith(node + "."))  # a package reaching into its own submodules

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in neighbours(node):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_every_module_has_a_layer():
    for name in graph(PACKAGE):
        layer_of(name)


def test_imports_point_down_the_layers():
    assert upward(graph(PACKAGE)) == []


def test_no_modules_import_each_other():
    assert cycles(graph(PACKAGE)) == []


def test_rule_families_do_not_import_each_other():
    """A rule family (a module or package under dslint/rules/) imports only its own modules and the
    private helpers (``dslint.rules._*``) shared by several families."""
    assert crossing_families(graph(PACKAGE)) == []


def crossing_families(edges: dict[str, set[str]]) -> list[str]:
    return [f"{a} imports {b}" for a, targets in sorted(edges.items()) for b in sorted(targets)
            if _family(a) is not None and _family(b) is not None and _family(a) != _family(b)]


def _family(module: str) -> str | None:
    parts = module.split(".")
    if parts[:2] != ["dslint", "rules"] or len(parts) < 3 or parts[2].startswith("_"):
        return None
    return parts[2]


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "dslint"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_the_contract_refuses_an_upward_import(tmp_path):
    """A deliberately added upward import (a document reader asking the engine) is caught,
    inside a function and under TYPE_CHECKING as well as at module level."""
    for statement in ("from dslint.run.engine import Engine\n",
                      "def f():\n    from dslint.run import engine\n",
                      "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from dslint.run.engine import Engine\n"):
        root = _tree(tmp_path / str(abs(hash(statement))), {
            "__init__.py": "", "source.py": "",
            "documents/__init__.py": "", "documents/yaml_doc.py": "from dslint.source import x\n" + statement,
            "run/__init__.py": "", "run/engine.py": "from dslint.documents import yaml_doc\n",
        })
        assert "dslint.documents.yaml_doc (layer documents) imports dslint.run.engine (layer run)" in upward(graph(root))
        assert all(line.startswith("dslint.documents.yaml_doc ") for line in upward(graph(root)))


def test_the_contract_refuses_a_cycle(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "",
        "run/__init__.py": "", "run/engine.py": "from dslint.run import split\n",
        "run/split.py": "def f():\n    from dslint.run.engine import Engine\n",
    })
    assert upward(graph(root)) == []
    assert cycles(graph(root)) == [["dslint.run.engine", "dslint.run.split"]]


def test_a_rule_family_importing_another_is_refused(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "", "rules/__init__.py": "", "rules/_shared.py": "",
        "rules/batch.py": "from dslint.rules import _shared\n",
        "rules/launch/__init__.py": "", "rules/launch/a.py": "from dslint.rules.batch import x\n",
    })
    assert crossing_families(graph(root)) == ["dslint.rules.launch.a imports dslint.rules.batch"]


def test_the_readme_layout_lists_the_tree_in_layer_order():
    """README's "Layout" names every top-level module and folder of dslint/, one line each, bottom
    layer first, and nothing that is not there."""
    readme = (PACKAGE.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    block = section.split("```text\n", 1)[1].split("```", 1)[0]
    listed = [line.split()[0].rstrip("/") for line in block.splitlines() if line.startswith("dslint/")]
    present = sorted(entry.name for entry in PACKAGE.iterdir()
                     if (entry.is_dir() and (entry / "__init__.py").is_file()) or entry.suffix == ".py")
    assert sorted(name.removeprefix("dslint/") for name in listed) == present
    layers = [layer_of(name.replace("/", ".").removesuffix(".py").replace(".__init__", "")) for name in listed]
    assert layers == sorted(layers), list(zip(listed, layers))
