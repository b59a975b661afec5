"""Generate ``schemas/ms-swift*.schema.json`` from an ms-swift copy.

Usage::

    python -m dslint.schemagen.swift --path DIR            # DIR: pip install --no-deps --target DIR ms-swift==X ...
    python -m dslint.schemagen.swift --path DIR --check    # exit 1 if the file is stale

ms-swift parses each command's arguments with ``HfArgumentParser([ArgsClass])`` and stops with
``ValueError: remaining_argv: [...]`` on anything left over (swift/pipelines/base.py). The sets
are ``sft``, ``pt``, ``rlhf``, ``export`` and, where ms-swift has Megatron-SWIFT, ``megatron-sft``,
``megatron-pt``, ``megatron-rlhf``, ``megatron-export``. Which class each command parses is
written below per generation (:data:`COMMANDS`) and checked against the pipeline's source
(``args_class = ...``), which is read as text; only the argument modules are imported.

ms-swift's import chain reaches heavy optional packages (PIL, modelscope, vllm, megatron ...);
those that are not installed are replaced by stub modules inside this process
(``x-dslint-stubbed`` lists them). The argument dataclasses themselves are real.

How each generation reads a config file (``x-dslint-reader``) is read from its source:
the positional first argument (``swift sft config.yaml``; 2.x and 3.x read only ``.json`` there)
and ``--config file.yaml`` (3.x, through OmegaConf).
"""

from __future__ import annotations

import importlib
import os
import re
import sys
import tempfile
import types
from pathlib import Path

from dslint.schemagen import _hfargs as common

PACKAGE = "ms-swift"
CURRENT = "4."

#: major version -> set name -> (module, class, pipeline file that names the class, or None).
COMMANDS: dict[str, dict[str, tuple[str, str, str | None]]] = {
    "4": {
        "sft": ("swift.arguments", "SftArguments", "swift/pipelines/train/sft.py"),
        "pt": ("swift.arguments", "PretrainArguments", "swift/pipelines/train/pretrain.py"),
        "rlhf": ("swift.arguments", "RLHFArguments", "swift/pipelines/train/rlhf.py"),
        "export": ("swift.arguments", "ExportArguments", "swift/pipelines/export/export.py"),
        "megatron-sft": ("swift.megatron.arguments", "MegatronSftArguments", "swift/megatron/pipelines/train/sft.py"),
        "megatron-pt": ("swift.megatron.arguments", "MegatronPretrainArguments", "swift/megatron/pipelines/train/pretrain.py"),
        "megatron-rlhf": ("swift.megatron.arguments", "MegatronRLHFArguments", "swift/megatron/pipelines/train/rlhf.py"),
        "megatron-export": ("swift.megatron.arguments", "MegatronExportArguments", "swift/megatron/pipelines/export/export.py"),
    },
    "3": {
        "sft": ("swift.llm.argument", "TrainArguments", "swift/llm/train/sft.py"),
        "pt": ("swift.llm.argument", "TrainArguments", "swift/llm/train/pt.py"),
        "rlhf": ("swift.llm.argument", "RLHFArguments", "swift/llm/train/rlhf.py"),
        "export": ("swift.llm.argument", "ExportArguments", "swift/llm/export/export.py"),
        "megatron-sft": ("swift.megatron.argument", "MegatronTrainArguments", "swift/megatron/train/sft.py"),
        "megatron-pt": ("swift.megatron.argument", "MegatronTrainArguments", "swift/megatron/train/pt.py"),
        "megatron-rlhf": ("swift.megatron.argument", "MegatronRLHFArguments", "swift/megatron/train/rlhf.py"),
        "megatron-export": ("swift.megatron.argument", "MegatronExportArguments", "swift/megatron/export/export.py"),
    },
    "2": {
        "sft": ("swift.llm.utils.argument", "SftArguments", "swift/llm/sft.py"),
        "pt": ("swift.llm.utils.argument", "PtArguments", "swift/llm/sft.py"),
        "rlhf": ("swift.llm.utils.argument", "RLHFArguments", "swift/llm/rlhf.py"),
        "export": ("swift.llm.utils.argument", "ExportArguments", "swift/llm/export.py"),
    },
}

STUBS = (
    "PIL", "torchvision", "torchaudio", "av", "cv2", "decord", "librosa", "soundfile", "qwen_vl_utils",
    "modelscope", "vllm", "lmdeploy", "sglang", "megatron", "mcore_bridge", "transformer_engine", "apex",
    "liger_kernel", "unsloth", "deepspeed_npu", "torch_npu", "gradio", "openai", "fastapi", "uvicorn",
    "aiohttp", "jieba", "nltk", "rouge", "matplotlib", "tensorboard", "tensorboardX", "binpacking",
    "json_repair", "addict", "attrdict", "oss2", "sortedcontainers", "simplejson", "zstandard", "cpm_kernels",
    "transformers_stream_generator", "tiktoken", "sentencepiece", "sklearn", "scipy", "pandas", "datasets",
    "dacite", "evalscope", "ray", "swanlab", "wandb", "importlib_metadata", "zmq", "msgspec", "math_verify",
    "latex2sympy2", "flash_attn", "bitsandbytes", "optimum", "auto_gptq", "awq", "hqq", "eetq", "aqlm",
    "mergekit", "llm_blender", "rich", "tqdm_multiprocess", "einops", "timm", "accelerate_npu", "lazy_importer",
    "peft_npu", "pynvml", "trl_npu", "mindspeed", "opentelemetry", "cloudpickle", "psutil_npu", "deepspeed",
    "megatron.training", "megatron.legacy",  # Megatron-LM's parts, beside the megatron-core that 3.x's target has
)


def installed_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("ms-swift")
    except metadata.PackageNotFoundError:
        import swift.version

        return swift.version.__version__


def _package_root() -> Path:
    spec = importlib.util.find_spec("swift")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("ms-swift (the swift package) is not importable")
    return Path(list(spec.submodule_search_locations)[0]).resolve().parent


def _reader(root: Path, major: str) -> dict:
    """How ``swift <cmd> <file>`` and ``--config <file>`` are read, from the source text."""
    texts = {}
    for rel in ("swift/cli/main.py", "swift/utils/utils.py", "swift/utils/__init__.py"):
        path = root / rel
        if path.is_file():
            texts[rel] = path.read_text(encoding="utf-8")
    positional: list[str] = []
    main_text = texts.get("swift/cli/main.py", "")
    yaml_fn = re.search(r"def parse_yaml_args\(argv\):(.*?)\n(?:def |\Z)", main_text, re.S)
    if yaml_fn:
        positional += re.findall(r"argv\[0\]\.endswith\('(\.\w+)'\)", yaml_fn.group(1))
    utils_text = texts.get("swift/utils/utils.py", "")
    parse_fn = re.search(r"def parse_args\(.*?\n(.*?)\n(?:def |\Z)", utils_text, re.S)
    if parse_fn:
        positional += re.findall(r"argv\[0\]\.endswith\('(\.\w+)'\)", parse_fn.group(1))
    flag_fn = re.search(r"def prepare_config_args\(argv\):(.*?)\n(?:def |\Z)", main_text, re.S)
    flag = None
    flag_loader = None
    if flag_fn and "'--config'" in flag_fn.group(1):
        flag = "--config"
        flag_loader = "omegaconf" if "OmegaConf.load" in flag_fn.group(1) else "pyyaml"
    return {
        "positional-suffixes": sorted(set(positional)),
        "positional-loader": "pyyaml" if yaml_fn and "yaml.safe_load" in yaml_fn.group(1) else "json",
        "yaml-values": "str() of each value, then parsed as command-line tokens" if yaml_fn else None,
        "flag": flag,
        "flag-loader": flag_loader,
        "remaining-argv": "error",
    }


def _bare_package(name: str, folder: Path) -> None:
    """Make ``name`` importable without running its ``__init__``.

    ms-swift 3.x's ``swift/megatron/__init__.py`` calls ``init_megatron_env()``, which patches
    Megatron-Core's Transformer Engine layers and fails where Transformer Engine is not
    installed; the argument dataclasses below it do not need the patches.
    """
    if name in sys.modules:
        return
    package = types.ModuleType(name)
    package.__path__ = [str(folder)]
    package.__package__ = name
    sys.modules[name] = package


def build_schema() -> dict:
    common.install_stubs(STUBS)
    version = installed_version()
    major = version.split(".")[0]
    commands = COMMANDS.get(major)
    if commands is None:
        raise RuntimeError(f"ms-swift {version}: no COMMANDS entry for major version {major}")
    root = _package_root()
    # ms-swift 3.x clones Megatron-LM on import unless MEGATRON_LM_PATH names a copy: never fetch.
    os.environ["MEGATRON_LM_PATH"] = tempfile.mkdtemp(prefix="dslint-no-megatron-")
    from transformers import HfArgumentParser

    sets, members, skipped = {}, {}, {}
    for name, (module, cls, pipeline) in commands.items():
        if pipeline is not None:
            text = (root / pipeline).read_text(encoding="utf-8") if (root / pipeline).is_file() else ""
            if cls not in text:
                raise RuntimeError(f"ms-swift {version}: {pipeline} does not name {cls}; update COMMANDS")
        if module.startswith("swift.megatron") and major == "3":
            if importlib.util.find_spec("megatron.core") is None:
                skipped[name] = "Megatron-SWIFT 3.x needs megatron-core installed (it would clone and pip-install Megatron-LM)"
                continue
            _bare_package("swift.megatron", root / "swift" / "megatron")
        try:
            klass = getattr(importlib.import_module(module), cls)
        except Exception as exc:  # noqa: BLE001  (an optional part, e.g. Megatron, that cannot be imported)
            skipped[name] = f"{type(exc).__name__}: {exc}"[:300]
            continue
        parser = HfArgumentParser([klass])
        sets[name] = common.parser_schema(parser, [klass], root=root)
        sets[name]["x-dslint-parser"] = "HfArgumentParser"
        members[name] = [cls]
    import transformers

    return common.document(
        package=PACKAGE, version=version, generator="dslint.schemagen.swift",
        title=f"ms-swift {version} command-line arguments", sets=sets, members=members, primary="sft",
        extra={"x-dslint-reader": _reader(root, major), "x-dslint-stubbed": common.stubbed(),
               "x-dslint-transformers-version": transformers.__version__,
               **({"x-dslint-skipped-sets": skipped} if skipped else {})},
    )


def main(argv: list[str] | None = None) -> int:
    return common.main(argv, package=PACKAGE, module="dslint.schemagen.swift", build=build_schema,
                       installed_version=installed_version, doc=__doc__, current_major_minor=CURRENT)


if __name__ == "__main__":
    sys.exit(main())
