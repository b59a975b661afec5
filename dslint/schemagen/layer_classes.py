"""Write ``schemas/transformers-layers[-X.Y].json``: the module classes each transformers model type builds.

Usage::

    python -m dslint.schemagen.layer_classes --output schemas/transformers-layers.json            # the installed transformers
    python -m dslint.schemagen.layer_classes --output schemas/transformers-layers-4.45.json --path DIR  # a --target copy
    python -m dslint.schemagen.layer_classes --output FILE [--path DIR] --check                   # exit 1 if stale

FSDP's transformer auto-wrap policy looks every name in ``transformer_layer_cls_to_wrap`` up
among the classes of the model's modules (accelerate utils/dataclasses.py
``get_module_class_from_name``) and raises ``Could not find the transformer layer class X in
the model`` when none has that name. Which names a model can have is fixed by its modeling code:
for each ``transformers/models/<dir>/`` the model types its configuration classes declare
(``model_type = "llama"``) and the class names its ``modeling_*.py`` files define or import from
other models (``from ..llama.modeling_llama import LlamaRMSNorm``). Read with ``ast``; nothing
is imported, so any transformers generation can be read from a ``pip install --target`` copy.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

from dslint.schemagen._hfargs import SCHEMA_DIR


def transformers_dir(path: Path | None) -> Path:
    if path is not None:
        return path / "transformers"
    import transformers  # the generator's only import of the package

    return Path(transformers.__file__).resolve().parent


def _version(root: Path) -> str:
    text = (root / "__init__.py").read_text(encoding="utf-8")
    for line in text.splitlines():
        if line.startswith("__version__"):
            return line.split("=", 1)[1].strip().strip("\"'")
    return "unknown"


def _trees(folder: Path, pattern: str):
    """The parsed files of ``folder`` matching ``pattern`` (PyTorch ones only: no TF or Flax)."""
    for path in sorted(folder.glob(pattern)):
        if path.name.startswith(("modeling_tf_", "modeling_flax_")):
            continue
        try:
            yield ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, ValueError):
            continue


def _model_types(folder: Path) -> list[str]:
    types = set()
    for tree in _trees(folder, "configuration_*.py"):
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for statement in node.body:
                    if (isinstance(statement, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "model_type" for t in statement.targets)
                            and isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str)):
                        types.add(statement.value.value)
    return sorted(types)


def _module_classes(folder: Path) -> list[str]:
    """Class names the folder's PyTorch modeling files define or import from other models."""
    names = set()
    for tree in _trees(folder, "modeling_*.py"):
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.ImportFrom) and node.level in (1, 2) and (node.module or "").split(".")[-1].startswith("modeling_"):
                # another model's modules (`from ..llama.modeling_llama import ...`); transformers' own
                # bases (`from ...modeling_layers import GradientCheckpointingLayer`) are never instances
                names.update(a.asname or a.name for a in node.names if a.name[:1].isupper())
    return sorted(n for n in names if not n.endswith(("Config", "Output", "OutputWithPast", "Outputs", "PreTrainedModel",
                                                       "PretrainedModel")))


def build(root: Path) -> dict:
    models: dict[str, list[str]] = {}
    for folder in sorted((root / "models").iterdir()):
        if not folder.is_dir():
            continue
        types = _model_types(folder)
        classes = _module_classes(folder)
        if not types or not classes:
            continue
        for model_type in types:
            models[model_type] = sorted(set(models.get(model_type, [])) | set(classes))
    return {
        "$comment": ("The module class names each transformers model type's modeling code defines or imports, "
                     "read with ast by python -m dslint.schemagen.layer_classes; FSDP's transformer_layer_cls_to_wrap "
                     "must name one of them."),
        "x-dslint-package": "transformers",
        "x-dslint-version": _version(root),
        "model_types": models,
    }


def render(data: dict) -> str:
    rows = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in data["model_types"].items())
    head = {k: v for k, v in data.items() if k != "model_types"}
    opening = json.dumps(head, ensure_ascii=False)[:-1]
    return f'{opening}, "model_types": {{\n{rows}\n}}}}\n'


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dslint.schemagen.layer_classes", description=__doc__.split("\n")[0])
    parser.add_argument("--output", type=Path, default=SCHEMA_DIR / "transformers-layers.json")
    parser.add_argument("--path", type=Path, help="folder holding a transformers package (pip install --target)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the output file is stale")
    args = parser.parse_args(argv)
    text = render(build(transformers_dir(args.path)))
    if args.check:
        stale = not args.output.is_file() or args.output.read_text(encoding="utf-8") != text
        print(f"{args.output.name}: {'out of date' if stale else 'up to date'}")
        return 1 if stale else 0
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
