"""The DeepSpeed schema for configs that HF Trainer or accelerate read: ``"auto"`` where they fill it.

    python -m dslint.schemagen.deepspeed_hf [--check]

``schemas/deepspeed.schema.json`` describes what DeepSpeed itself accepts, and editors that use
it flag ``"auto"``, which only the HF Trainer and accelerate replace before DeepSpeed sees the
config. This derives ``schemas/deepspeed-hf.schema.json`` from it, with ``"auto"`` allowed at
exactly the keys they fill:

- transformers 5.23 integrations/deepspeed.py ``HfTrainerDeepSpeedConfig.trainer_config_process``
  (the batch keys, gradient_clipping, optimizer lr/betas/eps/weight_decay, scheduler
  warmup_min_lr/warmup_max_lr, fp16/bf16 enabled) and ``trainer_config_finalize``
  (reduce_bucket_size, stage3_prefetch_bucket_size, stage3_param_persistence_threshold from the
  model's hidden size; scheduler total_num_steps and warmup_num_steps);
- accelerate 1.15 utils/dataclasses.py ``DeepSpeedPlugin.__post_init__`` (``fill_match`` of
  gradient_accumulation_steps, gradient_clipping, zero stage, offload devices and NVMe paths,
  stage3_gather_16bit_weights_on_model_save from the accelerate config) and accelerator.py
  ``_prepare_deepspeed`` (the batch keys, the hidden-size keys, optimizer lr/weight_decay,
  scheduler parameters).

Needs no third-party package: it reads the committed DeepSpeed schema. tests/test_schema_hf.py
checks that the committed file is what this writes, and validates HF's documented configs.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys

from dslint.schemagen import load_schema, schema_path

# Dotted keys -> who fills "auto" there (the x-dslint-auto annotation of each).
FILLED = {
    "train_batch_size": "HF Trainer (world size × micro batch × accumulation) and accelerate",
    "train_micro_batch_size_per_gpu": "HF Trainer (--per_device_train_batch_size) and accelerate",
    "gradient_accumulation_steps": "HF Trainer (--gradient_accumulation_steps) and accelerate",
    "gradient_clipping": "HF Trainer (--max_grad_norm) and accelerate (gradient_clipping)",
    "fp16.enabled": "HF Trainer (--fp16) and accelerate (mixed_precision)",
    "bf16.enabled": "HF Trainer (--bf16) and accelerate (mixed_precision)",
    "optimizer.params.lr": "HF Trainer (--learning_rate) and accelerate (DummyOptim)",
    "optimizer.params.betas": "HF Trainer (--adam_beta1, --adam_beta2)",
    "optimizer.params.eps": "HF Trainer (--adam_epsilon)",
    "optimizer.params.weight_decay": "HF Trainer (--weight_decay) and accelerate (DummyOptim)",
    "scheduler.params.warmup_min_lr": "HF Trainer (0) and accelerate (0)",
    "scheduler.params.warmup_max_lr": "HF Trainer (--learning_rate) and accelerate",
    "scheduler.params.warmup_num_steps": "HF Trainer (--warmup_steps / --warmup_ratio) and accelerate",
    "scheduler.params.total_num_steps": "HF Trainer (the number of optimizer steps) and accelerate",
    "zero_optimization.stage": "accelerate (zero_stage of its config; 2 when unset)",
    "zero_optimization.reduce_bucket_size": "HF Trainer and accelerate (hidden size²)",
    "zero_optimization.stage3_prefetch_bucket_size": "HF Trainer and accelerate (0.9 × hidden size²)",
    "zero_optimization.stage3_param_persistence_threshold": "HF Trainer and accelerate (10 × hidden size)",
    "zero_optimization.stage3_gather_16bit_weights_on_model_save": "accelerate (zero3_save_16bit_model of its config)",
    "zero_optimization.offload_optimizer.device": "accelerate (offload_optimizer_device of its config)",
    "zero_optimization.offload_optimizer.nvme_path": "accelerate (offload_optimizer_nvme_path of its config)",
    "zero_optimization.offload_param.device": "accelerate (offload_param_device of its config)",
    "zero_optimization.offload_param.nvme_path": "accelerate (offload_param_nvme_path of its config)",
}
SCHEMA_NAME = "deepspeed-hf"
SCHEMA_ID = "https://github.com/dslint/dslint/schemas/deepspeed-hf.schema.json"


def _object_schema(schema: dict, node: dict) -> dict | None:
    """The object schema behind ``node``: through ``$ref`` and the object branch of an ``anyOf``."""
    for _ in range(8):
        if "$ref" in node:
            node = schema["$defs"][node["$ref"][len("#/$defs/"):]]
        elif "properties" in node or node.get("type") == "object":
            return node
        elif "anyOf" in node:
            branches = [b for b in node["anyOf"] if "$ref" in b or "properties" in b]
            if not branches:
                return None
            node = branches[0]
        else:
            return None
    return None


def _allow_auto(schema: dict, dotted: str, filler: str) -> bool:
    parts = dotted.split(".")
    node = schema
    for part in parts[:-1]:
        node = _object_schema(schema, node)
        if node is None or part not in node.get("properties", {}):
            return False
        node = node["properties"][part]
    holder = _object_schema(schema, node)
    if holder is None:
        return False
    properties = holder.setdefault("properties", {})
    auto = {"const": "auto", "description": f'"auto": filled in by {filler} before DeepSpeed reads the config.'}
    original = properties.get(parts[-1])
    if original is None:  # an open section (optimizer.params): the key is documented, any value is accepted
        properties[parts[-1]] = {"description": f"{dotted}: any value, or \"auto\" (filled in by {filler}).", "x-dslint-auto": filler}
        return True
    properties[parts[-1]] = {
        "anyOf": [original, auto],
        "description": original.get("description", dotted),
        "x-dslint-auto": filler,
    }
    if "default" in original:
        properties[parts[-1]]["default"] = original["default"]
    return True


def build_schema(deepspeed: dict | None = None) -> dict:
    schema = copy.deepcopy(deepspeed if deepspeed is not None else load_schema("deepspeed"))
    missing = [dotted for dotted, filler in FILLED.items() if not _allow_auto(schema, dotted, filler)]
    if missing:
        raise ValueError(f"keys not found in the DeepSpeed schema: {', '.join(missing)}")
    schema["$id"] = SCHEMA_ID
    schema["title"] = "DeepSpeed configuration read by HF Trainer or accelerate"
    schema["description"] = (
        "Generated by dslint.schemagen.deepspeed_hf from deepspeed.schema.json; do not edit by hand. "
        "As deepspeed.schema.json, and \"auto\" is accepted where HF Trainer or accelerate fill it in "
        "(x-dslint-auto says who). For configs passed straight to DeepSpeed, use deepspeed.schema.json.")
    schema["x-dslint-generator"] = "dslint.schemagen.deepspeed_hf"
    return schema


def render(schema: dict) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dslint.schemagen.deepspeed_hf", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed schema differs from what would be written")
    args = parser.parse_args(argv)
    text = render(build_schema())
    target = schema_path(SCHEMA_NAME)
    if args.check:
        current = target.read_text(encoding="utf-8") if target.exists() else ""
        print(f"{target}: {'up to date' if current == text else 'out of date; run python -m dslint.schemagen.deepspeed_hf'}")
        return 0 if current == text else 1
    target.write_text(text, encoding="utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
