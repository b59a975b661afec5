"""ms-swift's built-in DeepSpeed presets (`--deepspeed zero2` and friends).

ms-swift maps `--deepspeed zero0|zero1|zero2|zero3|zero2_offload|zero3_offload` to
`swift/config/<name>.json` (ms-swift swift/arguments/sft_args.py:259-269). dslint describes
their settings here so a launch that names a preset is checked like one that names a file.
The values are those of ms-swift 3.x/4.x: every batch and precision key is "auto" (HF fills
them), there is no optimizer or scheduler section. ms-swift 2.x's names (`default-zero2`, ...)
and contents are below.
"""

from __future__ import annotations

import json

_COMMON_TOP = {
    "gradient_accumulation_steps": "auto",
    "gradient_clipping": "auto",
    "steps_per_print": 2000,
    "train_batch_size": "auto",
    "train_micro_batch_size_per_gpu": "auto",
    "wall_clock_breakdown": False,
}
_FP16 = {"enabled": "auto", "loss_scale": 0, "loss_scale_window": 1000, "initial_scale_power": 16, "hysteresis": 2, "min_loss_scale": 1}
_STAGE_0_TO_2 = {
    "allgather_partitions": True,
    "allgather_bucket_size": 2e8,
    "overlap_comm": False,
    "reduce_scatter": True,
    "reduce_bucket_size": 2e8,
    "contiguous_gradients": True,
}
_STAGE_3 = {
    "overlap_comm": False,
    "contiguous_gradients": True,
    "sub_group_size": 1e9,
    "reduce_bucket_size": "auto",
    "zero_quantized_weights": False,
    "zero_quantized_gradients": False,
    "stage3_prefetch_bucket_size": "auto",
    "stage3_param_persistence_threshold": "auto",
    "stage3_max_live_parameters": 1e9,
    "stage3_max_reuse_distance": 1e9,
    "stage3_gather_16bit_weights_on_model_save": True,
}


def _zero(stage: int, optimizer_device: str | None, param_device: str | None) -> dict:
    section: dict = {"stage": stage}
    if optimizer_device is not None:
        section["offload_optimizer"] = {"device": optimizer_device, "pin_memory": True}
    if param_device is not None:
        section["offload_param"] = {"device": param_device, "pin_memory": True}
    section.update(_STAGE_3 if stage == 3 else _STAGE_0_TO_2)
    return section


def _preset(stage: int, optimizer_device: str | None, param_device: str | None) -> dict:
    return {"fp16": dict(_FP16), "bf16": {"enabled": "auto"}, "zero_optimization": _zero(stage, optimizer_device, param_device), **_COMMON_TOP}


# Every name any ms-swift release maps to a bundled config (checked tag by tag, v1.6.0 to v4.5.2):
#   1.6-2.0  'default-zero2', 'default-zero3'          (v1.6.0 swift/llm/utils/argument.py:235-240)
#   2.1-2.3  + 'zero3-offload'                          (v2.1.0 swift/llm/utils/argument.py:716-719)
#   2.4-2.6  + 'zero2-offload'                          (v2.4.0 swift/llm/utils/argument.py:951-955)
#   3.0      'zero2', 'zero3', 'zero2_offload', 'zero3_offload' (v3.0.0 swift/llm/argument/train_args.py:168)
#   3.1-4.x  + 'zero0', 'zero1'                         (v3.1.0 swift/llm/argument/train_args.py:179;
#            v4.5.2 swift/arguments/sft_args.py:262, rlhf_args.py:735 for --teacher_deepspeed)
# The *_autotp.json files of swift/llm/ds_config/ have no name: they are given as paths. 1.5 and
# before took a path only (--deepspeed_config_path).
SWIFT_PRESETS = {
    "zero0": _preset(0, None, None),
    "zero1": _preset(1, "none", None),
    "zero2": _preset(2, "none", None),
    "zero2_offload": _preset(2, "cpu", None),
    "zero3": _preset(3, "none", "none"),
    "zero3_offload": _preset(3, "cpu", "cpu"),
}


# ms-swift 2.x named its presets differently and shipped other contents: an AdamW optimizer and a
# WarmupCosineLR scheduler with "auto" values, overlap_comm on, and zero3-offload offloading only
# the parameters (ms-swift 2.6.1 swift/llm/utils/argument.py:964-969, swift/llm/ds_config/*.json).
_ADAMW_AUTO = {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto", "weight_decay": "auto"}}
_COSINE_AUTO = {"type": "WarmupCosineLR", "params": {"total_num_steps": "auto", "warmup_num_steps": "auto"}}


def _preset_2x(stage: int, optimizer_device: str, param_device: str | None) -> dict:
    zero = _zero(stage, optimizer_device, param_device)
    zero["overlap_comm"] = True
    zero.pop("zero_quantized_weights", None)
    zero.pop("zero_quantized_gradients", None)
    return {"fp16": dict(_FP16), "bf16": {"enabled": "auto"}, "optimizer": _ADAMW_AUTO, "scheduler": _COSINE_AUTO,
            "zero_optimization": zero, **_COMMON_TOP}


SWIFT_PRESETS.update({
    "default-zero2": _preset_2x(2, "none", None),
    "default-zero3": _preset_2x(3, "none", "none"),
    "zero2-offload": _preset_2x(2, "cpu", None),
    "zero3-offload": _preset_2x(3, "none", "cpu"),
})


def preset_text(name: str) -> str | None:
    """The preset as JSON text, or None when ms-swift has no preset of that name."""
    preset = SWIFT_PRESETS.get(name)
    return None if preset is None else json.dumps(preset, indent=4) + "\n"
