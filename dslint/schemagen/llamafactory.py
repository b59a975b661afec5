"""Generate ``schemas/llamafactory*.schema.json`` from a LLaMA-Factory copy.

Usage::

    python -m dslint.schemagen.llamafactory --path DIR            # DIR: pip install --no-deps --target DIR llamafactory==X ...
    python -m dslint.schemagen.llamafactory --path DIR --check    # exit 1 if the file is stale

``llamafactory-cli train`` parses ``HfArgumentParser(_TRAIN_ARGS)`` (model, data, training,
finetuning and generating arguments; llamafactory/hparams/parser.py) and raises
``Some keys are not used by the HfArgumentParser`` for a YAML key no dataclass has. The sets are
``train``, ``infer`` and ``eval``, read from the ``_TRAIN_ARGS``/``_INFER_ARGS``/``_EVAL_ARGS``
lists of the installed parser module. How a config file is read (suffixes, YAML loader,
``key=value`` overrides after it) is read from the source of ``read_args``/``_parse_args``.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import sys

from dslint.schemagen import _hfargs as common

PACKAGE = "llamafactory"
CURRENT = "0.9"
SETS = {"train": "_TRAIN_ARGS", "infer": "_INFER_ARGS", "eval": "_EVAL_ARGS"}
STUBS = ("PIL", "torchvision", "torchaudio", "av", "cv2", "librosa", "soundfile", "gradio", "fire", "matplotlib",
         "modelscope", "openmind", "vllm", "sglang", "ktransformers", "mcore_adapter", "ray", "jieba", "nltk",
         "rouge_chinese", "sse_starlette", "fastapi", "uvicorn", "tyro", "scipy", "sklearn", "sentencepiece",
         "tiktoken", "bitsandbytes", "liger_kernel", "unsloth", "galore_torch", "apollo_torch", "badam",
         "adam_mini", "swanlab", "wandb", "trackio", "pandas", "datasets", "torch_npu", "einops", "docstring_parser",
         "aiohttp", "xxhash", "pyarrow", "yarl", "multidict", "frozenlist", "aiosignal")


def installed_version() -> str:
    from importlib import metadata

    return metadata.version("llamafactory")


def _reader(parser_module) -> dict:
    fn = getattr(parser_module, "read_args", None) or parser_module._parse_args
    source = inspect.getsource(fn)
    suffixes = sorted(set(re.findall(r'endswith\(\s*"(\.\w+)"\s*\)', source)))
    return {
        "positional-suffixes": suffixes,
        "loader": "omegaconf" if "OmegaConf.load" in source else "pyyaml",
        "overrides-after-config": "from_cli" in source,
        "config-must-be-only-argument": "len(sys.argv) == 2" in source,
        "unknown-keys": "error",
        "allow-extra-env": "ALLOW_EXTRA_ARGS" if "ALLOW_EXTRA_ARGS" in inspect.getsource(parser_module) else None,
    }


def build_schema() -> dict:
    common.install_stubs(STUBS)
    os.environ["DISABLE_VERSION_CHECK"] = "1"  # parser.py runs check_dependencies() on import
    version = installed_version()
    parser_module = importlib.import_module("llamafactory.hparams.parser")
    import llamafactory
    from transformers import HfArgumentParser

    root = common.Path(llamafactory.__file__).resolve().parent.parent
    sets, members = {}, {}
    for name, attr in SETS.items():
        types_ = list(getattr(parser_module, attr))
        parser = HfArgumentParser(types_)
        sets[name] = common.parser_schema(parser, types_, root=root)
        sets[name]["x-dslint-parser"] = "HfArgumentParser"
        members[name] = [t.__name__ for t in types_]
    import transformers

    return common.document(
        package=PACKAGE, version=version, generator="dslint.schemagen.llamafactory",
        title=f"LLaMA-Factory {version} arguments", sets=sets, members=members, primary="train",
        extra={"x-dslint-reader": _reader(parser_module), "x-dslint-stubbed": common.stubbed(),
               "x-dslint-transformers-version": transformers.__version__},
    )


def main(argv: list[str] | None = None) -> int:
    return common.main(argv, package=PACKAGE, module="dslint.schemagen.llamafactory", build=build_schema,
                       installed_version=installed_version, doc=__doc__, current_major_minor=CURRENT)


if __name__ == "__main__":
    sys.exit(main())
