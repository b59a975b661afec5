"""The precision section: mixed precision (bf16, fp16 or fp32) and the dtype the weights are held in,
from the training arguments, accelerate's config and the DeepSpeed config's bf16/fp16 sections.

ms-swift derives fp16/bf16 from ``--torch_dtype``; DeepSpeed reads ``bfloat16`` only when ``bf16``
is absent (deepspeed/runtime/precision_config.py:34-38).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from dslint.documents.model import Scalar
from dslint.explain.lines import line, more, shown, why
from dslint.explain.origins import Value, defaulted, dict_or_none, from_arg, to_bool
from dslint.explain.reading import Reading

if TYPE_CHECKING:
    from dslint.explain import Explanation

MIXED_TEXT = {"bf16": "bf16 mixed precision", "fp16": "fp16 mixed precision", "fp32": "fp32 (no mixed precision)"}


@dataclass
class Precision:
    weights_dtype: Value
    mixed_precision: Value  # "bf16" | "fp16" | "fp32" | None (unknown)
    deepspeed_bf16: Value | None
    deepspeed_fp16: Value | None

    def to_dict(self) -> dict:
        return {
            "weights_dtype": self.weights_dtype.to_dict(),
            "mixed_precision": self.mixed_precision.to_dict(),
            "deepspeed": {
                "bf16": dict_or_none(self.deepspeed_bf16),
                "fp16": dict_or_none(self.deepspeed_fp16),
            },
        }


def build(reading: Reading) -> Precision:
    dtype = _dtype(reading)
    flags = _flags(reading)
    mixed = _flag_on(flags) or _consumer_default(reading.consumer, flags, dtype)
    mixed = _accelerate(reading, mixed)
    ds_bf16 = ds_fp16 = None
    if reading.config is not None:
        ds_bf16, ds_fp16 = _deepspeed_switch(reading, "bf16", mixed), _deepspeed_switch(reading, "fp16", mixed)
        mixed = _from_deepspeed(reading.consumer, mixed, ds_bf16, ds_fp16)
    return Precision(_weights(reading, mixed, dtype), mixed, ds_bf16, ds_fp16)


def _dtype(reading: Reading) -> Value | None:
    """The dtype the launch loads the model in (``--torch_dtype``), unless ``auto``."""
    arg = reading.arg("torch_dtype", "dtype", "infer_dtype")
    if arg is not None and isinstance(arg.value, str) and arg.value not in ("auto",):
        return from_arg(arg, _dtype_name(arg.value))
    return None


def _dtype_name(text: str) -> str:
    text = text.lower().replace("torch.", "")
    return {"bf16": "bfloat16", "fp16": "float16", "half": "float16", "fp32": "float32", "float": "float32"}.get(text, text)


def _flags(reading: Reading) -> dict[str, Value]:
    """The precision switches the launch sets (on or off)."""
    flags = {}
    for name in ("bf16", "fp16", "pure_bf16"):
        arg = reading.arg(name)
        if arg is not None and to_bool(arg.value) is not None:
            flags[name] = from_arg(arg, to_bool(arg.value))
    return flags


def _flag_on(flags: dict[str, Value]) -> Value | None:
    """The mixed precision a switch turns on (``pure_bf16`` first, then ``bf16``, then ``fp16``)."""
    for name, mixed in (("pure_bf16", "bf16"), ("bf16", "bf16"), ("fp16", "fp16")):
        if flags.get(name) is not None and flags[name].value:
            return replace(flags[name], value=mixed)
    return None


def _consumer_default(consumer: str | None, flags: dict[str, Value], dtype: Value | None) -> Value:
    """The mixed precision when no switch is on: what the consumer derives or defaults to."""
    if consumer in ("swift", "megatron") and dtype is not None and not ("bf16" in flags or "fp16" in flags):
        derived = "bf16" if dtype.value == "bfloat16" else "fp16"
        return replace(dtype, value=derived, origin=f"derived from torch_dtype {dtype.value} ({dtype.where}): ms-swift sets {derived}", default=True)
    if consumer in ("swift", "megatron"):
        return defaulted(None, "ms-swift derives fp16/bf16 from the model's torch_dtype (usually bfloat16); not set in the launch")
    if consumer in ("hf", "llamafactory") and flags:
        return defaulted("fp32", "neither --bf16 nor --fp16 is on: fp32 training")
    if consumer in ("hf",):
        return defaulted("fp32", "the transformers default (bf16 and fp16 off): fp32 training")
    if consumer == "llamafactory":
        return defaulted(None, "LLaMA-Factory infers the compute dtype from the device (bf16 > fp16 > fp32)")
    return defaulted(None, "not stated")


def _accelerate(reading: Reading, mixed: Value) -> Value:
    """accelerate's config file: its ``mixed_precision`` wins when it turns one on."""
    config = reading.accelerate_config()
    if config is not None:
        entry = config.entry("mixed_precision")
        if entry is not None and isinstance(entry.value, Scalar) and entry.value.value in ("bf16", "fp16"):
            return reading.node_value(entry.value, "mixed_precision", entry.value.value)
    return mixed


def _deepspeed_switch(reading: Reading, section: str, mixed: Value) -> Value:
    """The DeepSpeed config's ``bf16.enabled`` or ``fp16.enabled``, with "auto" as its filler fills it."""
    name = section
    if section == "bf16" and reading.config.get("bf16") is None and reading.config.get("bfloat16") is not None:
        name = "bfloat16"  # read only when "bf16" is absent (precision_config.py:34-38)
    value, node = reading.ds_value(f"{name}.enabled")
    if node is None:
        return defaulted(False, f"no {section} section: off")
    if value != "auto":
        return reading.node_value(node, f"{section}.enabled", to_bool(value))
    text, path, number = reading.loc(node)
    if reading.plan.fills_auto:
        filled = None if mixed.value is None else mixed.value == section
        return Value(filled, f'"auto" at {text}, filled from the training arguments ({mixed.origin})', path, number)
    return Value(False, f'"auto" at {text}: DeepSpeed alone drops it, so {section} is off', path, number)


def _from_deepspeed(consumer: str | None, mixed: Value, ds_bf16: Value, ds_fp16: Value) -> Value:
    """The mixed precision once the DeepSpeed config is read: it decides for DeepSpeed's own
    launcher (and accelerate without a setting); a section that is on overrides fp32 or unknown."""
    if consumer in ("deepspeed", None) or (consumer == "accelerate" and mixed.value is None):
        if ds_bf16.value:
            return replace(ds_bf16, value="bf16")
        if ds_fp16.value:
            return replace(ds_fp16, value="fp16")
        if consumer == "deepspeed":
            return defaulted("fp32", "neither bf16 nor fp16 is enabled in the DeepSpeed config: fp32 training")
        return mixed
    if mixed.value in (None, "fp32") and (ds_bf16.value is True or ds_fp16.value is True) and not ds_bf16.origin.startswith('"auto"'):
        on = "bf16" if ds_bf16.value else "fp16"
        src = ds_bf16 if ds_bf16.value else ds_fp16
        return replace(src, value=on)
    return mixed


def _weights(reading: Reading, mixed: Value, dtype: Value | None) -> Value:
    """The dtype the weights are held in during training."""
    if mixed.value in ("bf16", "fp16"):
        half = "bfloat16" if mixed.value == "bf16" else "float16"
        if reading.config is not None:
            return Value(half, f"DeepSpeed casts the model to {mixed.value} ({mixed.where})", mixed.path, mixed.line, mixed.default)
        if dtype is not None:
            return dtype
        if reading.consumer == "llamafactory":
            return replace(mixed, value=half, origin=f"LLaMA-Factory loads the model in its compute dtype ({mixed.where})")
        return defaulted("float32", f"{mixed.value} autocast keeps fp32 weights (no DeepSpeed)")
    if dtype is not None:
        return dtype
    if mixed.value == "fp32":
        return defaulted("float32", "fp32 training")
    return defaulted(None, "unknown (the model's config.json torch_dtype)")


# ---- text ----------------------------------------------------------------------------------------


def render(e: Explanation) -> list[str]:
    p = e.precision
    mixed = p.mixed_precision
    out = [line("precision", f"{MIXED_TEXT.get(mixed.value, 'unknown')}{why(mixed)}")]
    out.append(more(f"weights {shown(p.weights_dtype)}{why(p.weights_dtype)}"))
    if p.deepspeed_bf16 is not None:
        out.append(more(f"DeepSpeed bf16 {shown(p.deepspeed_bf16)}{why(p.deepspeed_bf16)}"))
        out.append(more(f"DeepSpeed fp16 {shown(p.deepspeed_fp16)}{why(p.deepspeed_fp16)}"))
    return out
