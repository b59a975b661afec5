"""Generate ``schemas/trl*.schema.json`` from an installed ``trl``.

Usage::

    python -m dslint.schemagen.trl                 # current: schemas/trl.schema.json
    python -m dslint.schemagen.trl --check         # exit 1 if the file is stale
    python -m dslint.schemagen.trl --path DIR      # an older copy: schemas/trl-0.12.schema.json

Sets: ``sft``, ``dpo``, ``grpo`` (what ``trl sft|dpo|grpo`` parse). Where trl ships its CLI
scripts (``trl/scripts/<name>.py``), the dataclasses are the ones their ``make_parser()`` passes to
``TrlParser``; older trl without scripts gets the trainer config class alone (plus
``ModelConfig``/``ScriptArguments`` when trl has them). Config files: ``--config file.yaml`` is
read with ``yaml.safe_load`` and its values become argparse defaults, so string values are
converted by the option's type (``x-dslint-reader``).
"""

from __future__ import annotations

import importlib
import inspect
import sys

from dslint.schemagen import _hfargs as common

PACKAGE = "trl"
CURRENT = "1."
COMMANDS = {"sft": "SFTConfig", "dpo": "DPOConfig", "grpo": "GRPOConfig"}
STUBS = ("PIL", "torchvision", "av", "cv2", "sklearn", "scipy", "vllm", "liger_kernel", "deepspeed_npu",
         "rich", "wandb", "mergekit", "llm_blender")


def installed_version() -> str:
    import trl

    return trl.__version__


def _dataclasses_for(command: str, trl) -> list[type] | None:
    try:
        script = importlib.import_module(f"trl.scripts.{command}")
    except ImportError:
        script = None
    if script is not None and hasattr(script, "make_parser"):
        parser = script.make_parser()
        return list(parser.dataclass_types)
    config = getattr(trl, COMMANDS[command], None)
    if config is None:
        return None
    extra = [getattr(trl, name) for name in ("ScriptArguments", "ModelConfig") if hasattr(trl, name)]
    return [config, *extra]


def build_schema() -> dict:
    common.install_stubs(STUBS)
    import trl
    from transformers import HfArgumentParser

    root = common.Path(trl.__file__).resolve().parent.parent
    parser_class = getattr(trl, "TrlParser", HfArgumentParser)
    sets, members = {}, {}
    for command in COMMANDS:
        types_ = _dataclasses_for(command, trl)
        if not types_:
            continue
        parser = parser_class(types_)
        sets[command] = common.parser_schema(parser, types_, root=root, skip_dests=("config",))
        sets[command]["x-dslint-parser"] = parser_class.__name__
        members[command] = [t.__name__ for t in types_]
    reader = {"flag": None}
    if hasattr(parser_class, "parse_args_and_config"):
        source = inspect.getsource(inspect.getmodule(parser_class))
        reader = {
            "flag": "--config" if '"--config"' in source or "'--config'" in source else None,
            "loader": "pyyaml" if "yaml.safe_load" in source or "yaml.load" in source else "unknown",
            "values-become-defaults": "set_defaults_with_config" in source,
        }
    return common.document(
        package=PACKAGE, version=trl.__version__, generator="dslint.schemagen.trl",
        title=f"trl {trl.__version__} trainer configs", sets=sets, members=members, primary="sft",
        extra={"x-dslint-reader": reader, "x-dslint-stubbed": common.stubbed(),
               "x-dslint-transformers-version": _transformers_version()},
    )


def _transformers_version() -> str:
    import transformers

    return transformers.__version__


def main(argv: list[str] | None = None) -> int:
    return common.main(argv, package=PACKAGE, module="dslint.schemagen.trl", build=build_schema,
                       installed_version=installed_version, doc=__doc__, current_major_minor=CURRENT)


if __name__ == "__main__":
    sys.exit(main())
