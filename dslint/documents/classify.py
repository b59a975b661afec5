"""Deciding what a file is from its content (the name only breaks ties).

A JSON object is a DeepSpeed config when it carries keys only DeepSpeed reads; a YAML mapping
is an accelerate config when it has accelerate's own keys, and a training config when it has
enough trainer arguments. Anything else is not dslint's business and is skipped.
"""

from __future__ import annotations

import re

from dslint.documents.model import ACCELERATE, DEEPSPEED, SCRIPT, TRAINING_JSON, TRAINING_YAML, Mapping
from dslint.files.suffixes import JSON_SUFFIXES, SCRIPT_SUFFIXES, YAML_SUFFIXES


# Keys that only a DeepSpeed config has (deepspeed/runtime/constants.py and the removed-key list).
DEEPSPEED_ONLY_KEYS = frozenset(
    {
        "train_batch_size", "train_micro_batch_size_per_gpu", "zero_optimization", "zero_optimisation",
        "zero_allow_untested_optimizer", "zero_force_ds_cpu_optimizer", "steps_per_print", "wall_clock_breakdown",
        "gradient_clipping", "prescale_gradients", "gradient_predivide_factor", "communication_data_type",
        "seq_parallel_communication_data_type", "gradient_allreduce_op", "activation_checkpointing",
        "flops_profiler", "aio", "amp", "bfloat16", "comms_logger", "csv_monitor", "tensorboard",
        "hybrid_engine", "sparse_attention", "elasticity", "curriculum_learning", "data_efficiency",
        "compression_training", "progressive_layer_drop", "quantize_training", "eigenvalue", "nebula",
        "autotuning", "memory_breakdown", "dump_state", "disable_allgather", "fp16_master_weights_and_grads",
        "sparse_gradients", "zero_quantized_weights", "torch_autocast", "data_types", "timers",
        "managed_gradient_accumulation", "weight_quantization", "checkpoint", "pipeline",
    }
)
# Keys a DeepSpeed config has when they hold a mapping (HF TrainingArguments use the same names as booleans).
DEEPSPEED_SECTION_KEYS = frozenset({"fp16", "bf16", "optimizer", "scheduler", "compile", "tensor_parallel", "wandb", "comet"})

# Trainer arguments (HF TrainingArguments, TRL, ms-swift, LLaMA-Factory, axolotl).
TRAINING_KEYS = frozenset(
    {
        "output_dir", "per_device_train_batch_size", "per_device_eval_batch_size", "learning_rate",
        "num_train_epochs", "max_steps", "model_name_or_path", "logging_steps", "save_steps", "save_strategy",
        "eval_strategy", "evaluation_strategy", "lr_scheduler_type", "warmup_ratio", "warmup_steps", "report_to",
        "gradient_checkpointing", "deepspeed", "do_train", "dataset", "template", "finetuning_type", "stage",
        "train_type", "tuner_type", "sft_type", "model", "model_type", "torch_dtype", "max_length",
        "base_model", "micro_batch_size", "datasets", "sequence_len", "num_epochs", "lora_r", "lora_rank",
        "lora_target", "lora_alpha", "max_grad_norm", "weight_decay", "cutoff_len", "dataset_name",
        "max_seq_length", "overwrite_output_dir", "seed", "optim", "bf16", "fp16", "gradient_accumulation_steps",
        "per_device_batch_size", "dataloader_num_workers", "hub_model_id", "push_to_hub", "use_liger_kernel",
        "attn_implementation", "quantization_bit", "adapter", "load_in_8bit", "load_in_4bit", "trust_remote_code",
    }
)
ACCELERATE_KEYS = frozenset({"compute_environment", "distributed_type"})
# Mappings that are YAML but not training configs (CI workflows, pre-commit, Kubernetes, conda).
FOREIGN_YAML_KEYS = frozenset({"jobs", "repos", "apiVersion", "kind", "services", "dependencies", "steps", "stages", "nav"})

_DEEPSPEED_TEXT = re.compile(r"\b(train_micro_batch_size_per_gpu|train_batch_size|zero_optimization|steps_per_print)\b")
_SHEBANG = re.compile(r"^#!.*\b(ba|z|k|da)?sh\b")


def suffix_kind(path: str) -> str | None:
    lower = path.lower()
    if lower.endswith(JSON_SUFFIXES):
        return "json"
    if lower.endswith(YAML_SUFFIXES):
        return "yaml"
    if lower.endswith(SCRIPT_SUFFIXES):
        return "script"
    return None


def looks_like_script(text: str) -> bool:
    first = text.split("\n", 1)[0]
    return bool(_SHEBANG.match(first))


def classify_json(root) -> str | None:
    """A DeepSpeed config when at least a third of its keys are DeepSpeed's: a program's own config
    that merely carries DeepSpeed's settings among many of its own (GPT-NeoX's `num-layers`,
    `save-interval` ...) is that program's, not DeepSpeed's, unless a launch names it as one. A
    DeepSpeed config with a few misspelt keys stays one (they are `ignored-key` findings)."""
    if not isinstance(root, Mapping):
        return None
    deepspeed = training = others = 0
    unsure = []
    for entry in root.entries:
        key = entry.key
        if key in DEEPSPEED_ONLY_KEYS:
            deepspeed += 1
        elif key in DEEPSPEED_SECTION_KEYS and isinstance(entry.value, Mapping):
            deepspeed += 1
        elif not key.startswith(("_", "#", "//")):
            unsure.append(key)
        if key in TRAINING_KEYS and key not in ("fp16", "bf16", "gradient_accumulation_steps"):
            training += 1
    if deepspeed and deepspeed * 2 < len(unsure):
        known = _deepspeed_top_level_keys()  # rarer DeepSpeed keys, only when the common ones do not decide
        others = sum(1 for key in unsure if key not in known)
        deepspeed += len(unsure) - others
    else:
        others = 0 if deepspeed else len(unsure)
    if deepspeed and deepspeed >= training and deepspeed * 2 >= others:
        return DEEPSPEED
    if training >= 2:
        return TRAINING_JSON
    return None


_TOP_LEVEL: frozenset | None = None


def _deepspeed_top_level_keys() -> frozenset:
    global _TOP_LEVEL
    if _TOP_LEVEL is None:
        from dslint.schemas import load_schema

        _TOP_LEVEL = frozenset(load_schema("deepspeed").get("properties", {}))
    return _TOP_LEVEL


def classify_unparsable_json(text: str, path: str) -> str | None:
    """A JSON file that does not parse: still a DeepSpeed config if its text says so."""
    if _DEEPSPEED_TEXT.search(text):
        return DEEPSPEED
    return None


def classify_yaml(root) -> tuple[str | None, str | None]:
    """(kind, flavor) of a YAML mapping."""
    if not isinstance(root, Mapping):
        return None, None
    keys = set(root.keys())
    if keys & ACCELERATE_KEYS:
        return ACCELERATE, "accelerate"
    if keys & FOREIGN_YAML_KEYS:
        return None, None
    flavor = training_flavor(keys) if len(keys & TRAINING_KEYS) >= 2 else None
    if flavor != "llamafactory":  # LLaMA-Factory reads its YAML with OmegaConf too, as its own config
        from dslint.documents.omegaconf import marker

        found = marker(root)
        if found is not None and (flavor is not None or not found[1].startswith("an OmegaConf")):
            return TRAINING_YAML, "hydra"
    if flavor is None:
        return None, None
    return TRAINING_YAML, flavor


def training_flavor(keys: set[str]) -> str:
    if "finetuning_type" in keys or ("stage" in keys and "template" in keys):
        return "llamafactory"
    if keys & {"train_type", "tuner_type", "sft_type"} or ("model" in keys and "model_name_or_path" not in keys and "base_model" not in keys):
        return "swift"
    if keys & {"base_model", "micro_batch_size", "sequence_len"}:
        return "axolotl"
    return "hf"


def classify_script(path: str, text: str) -> str | None:
    if suffix_kind(path) == "script" or looks_like_script(text):
        return SCRIPT
    return None
