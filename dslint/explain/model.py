"""The model section: the model's shape (``--params``, a local ``config.json`` or a recognised name),
what is trained (full, LoRA and its kin, frozen layers), sequence length, activation
checkpointing and the attention implementation; defaults as ms-swift, LLaMA-Factory and
transformers apply them."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from dslint.evidence.models import (
    ModelShape,
    format_count,
    from_count,
    read_local_config,
    recognise,
)
from dslint.explain.lines import line, more, shown, why
from dslint.explain.origins import Value, defaulted, dict_or_none, from_arg, to_bool
from dslint.explain.reading import Reading
from dslint.values import as_int

if TYPE_CHECKING:
    from dslint.explain import Explanation

MODEL_ARGS = ("model", "model_name_or_path", "model_id_or_path", "pretrained_model_name_or_path", "base_model")
SEQ_ARGS = ("max_length", "cutoff_len", "max_seq_length", "seq_length", "sequence_len", "block_size", "model_max_length", "max_seq_len")
LORA_KINDS = ("lora", "qlora", "dora", "longlora", "adalora", "lora+", "pissa", "olora", "rslora")


@dataclass
class ModelInfo:
    shape: ModelShape
    how: str  # params-option | local-config | recognised-name
    trainable: tuple[int, int] | None
    training: Value  # full | lora | qlora ...
    seq_len: Value | None
    checkpointing: Value | None
    attention: Value | None
    quant_bits: int | None = field(default=None, compare=False)  # a 4- or 8-bit base (not serialised)

    def to_dict(self) -> dict:
        return {
            **self.shape.as_dict(),
            "how": self.how,
            "training": self.training.to_dict(),
            "trainable_params": list(self.trainable) if self.trainable else None,
            "sequence_length": dict_or_none(self.seq_len),
            "activation_checkpointing": dict_or_none(self.checkpointing),
            "attention": dict_or_none(self.attention),
        }


def shape_of(reading: Reading) -> ModelShape | None:
    """The model's shape, looked up once per launch (the ZeRO section reads its hidden size)."""
    if reading.resolved_model is None:
        reading.resolved_model = _resolve_model(reading)
    return reading.resolved_model[0]


def _resolve_model(reading: Reading) -> tuple[ModelShape | None, str | None]:
    arg = reading.arg(*MODEL_ARGS)
    name = arg.value if arg is not None and isinstance(arg.value, str) else None
    found = None
    how = None
    options = reading.options
    if name:
        found = read_local_config(name, model_bases(reading.plan, arg.span, options.cwd))
        how = "local-config" if found else None
        if found is None:
            found = recognise(name)
            how = "recognised-name" if found else None
    if options.params is not None:
        counted = from_count(options.params, "--params on the command line")
        if found is not None and found.has_shape and abs(found.params - options.params) <= 0.1 * options.params:
            counted = replace(found, params=options.params, source=f"--params on the command line; shape from {found.source}")
        return counted, "params-option"
    return found, how


def model_bases(plan, span, cwd: Path | None = None) -> list[Path]:
    """The folders a relative model path is looked up from, most likely first: the folder the
    script cd's into before the launch, the folder of the file that names the model, the
    launch's own file's folder, and the working directory dslint runs in."""
    bases = []
    if plan.folder is not None:
        bases.append(Path(plan.folder))
    if span is not None and not span.source.virtual:
        bases.append(Path(span.source.path).parent)
    bases.append(Path(plan.origin.path).parent)
    if cwd is not None:
        bases.append(cwd)
    return bases


def build(reading: Reading) -> ModelInfo | None:
    shape = shape_of(reading)
    if shape is None:
        arg = reading.arg(*MODEL_ARGS)
        if arg is not None:
            reading.notes.append(f"model {arg.value!r} is neither a local folder with config.json nor a recognised name: pass --params (e.g. --params 7B)")
        else:
            reading.notes.append("no model in the launch: pass --params (e.g. --params 7B) for a memory estimate")
        return None
    kind = _training_kind(reading)
    quant_bits = _quant_bits(reading, kind)
    training, trainable = _trainable(reading, shape, kind)
    return ModelInfo(shape, reading.resolved_model[1], trainable, training, _seq_len(reading), _checkpointing(reading),
                     _attention(reading), quant_bits)


def _training_kind(reading: Reading) -> Value:
    arg = reading.arg("train_type", "tuner_type", "finetuning_type", "sft_type", "train_mode", "adapter")
    if arg is not None and isinstance(arg.value, str):
        return from_arg(arg, arg.value.lower())
    if to_bool(getattr(reading.arg("use_peft"), "value", None)):
        return from_arg(reading.arg("use_peft"), "lora")
    if reading.consumer == "swift":
        return defaulted("lora", "ms-swift's default train_type lora")
    if reading.consumer == "llamafactory":
        return defaulted("lora", "LLaMA-Factory's default finetuning_type lora")
    return defaulted("full", "full-parameter training (no adapter in the launch)")


def _quant_bits(reading: Reading, kind: Value) -> int | None:
    """The bits of a quantized base model (QLoRA loads it in 4 bits unless told otherwise)."""
    arg = reading.arg("quant_bits", "quantization_bit", "load_in_4bit", "load_in_8bit")
    bits = None
    if arg is not None:
        if arg.name == "load_in_4bit" and to_bool(arg.value):
            bits = 4
        elif arg.name == "load_in_8bit" and to_bool(arg.value):
            bits = 8
        else:
            bits = as_int(arg.value)
    if kind.value == "qlora" and bits is None:
        bits = 4
    return bits


def _trainable(reading: Reading, shape: ModelShape, kind: Value) -> tuple[Value, tuple[int, int] | None]:
    """The training kind, its origin saying what is trained, and the (low, high) trainable parameters."""
    if kind.value in ("full",):
        return kind, None
    if kind.value in LORA_KINDS:
        return _adapter(reading, shape, kind)
    if kind.value in ("freeze",):
        return replace(kind, origin=kind.origin + " (some layers trainable)"), (0, shape.params)
    return replace(kind, origin=kind.origin + " (trainable share unknown)"), (0, shape.params)


def _adapter(reading: Reading, shape: ModelShape, kind: Value) -> tuple[Value, tuple[int, int]]:
    rank_arg = reading.arg("lora_rank", "lora_r", "r")
    rank_default = 16 if reading.consumer == "hf" else 8
    rank = as_int(rank_arg.value) if rank_arg is not None else rank_default
    target = reading.arg("target_modules", "lora_target", "lora_target_modules")
    target_text = target.value if target is not None else "all-linear"
    all_linear = isinstance(target_text, str) and target_text.lower() in ("all-linear", "all") or (isinstance(target_text, list) and target_text and str(target_text[0]).lower() in ("all-linear", "all"))
    count = _lora_params(shape, rank or 8)
    if count is None:
        high = int(0.02 * shape.params)
        return replace(kind, origin=kind.origin + f" (rank {rank}; adapter size unknown without the model shape: up to 2% assumed)"), (0, high)
    if all_linear:
        return replace(kind, origin=kind.origin + f" (rank {rank}, all linear layers)"), (count, count)
    return replace(kind, origin=kind.origin + f" (rank {rank}, target modules {target_text})"), (0, count)


def _lora_params(shape: ModelShape, rank: int) -> int | None:
    """LoRA on every linear layer of the decoder (peft ``all-linear``; the output head excluded)."""
    if not shape.has_shape or shape.intermediate is None:
        return None
    h = shape.hidden
    d = shape.head_dim or h // shape.heads
    q = shape.heads * d
    kv = (shape.kv_heads or shape.heads) * d
    attention = (h + q) + 2 * (h + kv) + (q + h)
    if shape.experts:
        mlp = shape.experts * 3 * (h + (shape.moe_intermediate or shape.intermediate))
    else:
        mlp = 3 * (h + shape.intermediate)
    return rank * shape.layers * (attention + mlp)


def _seq_len(reading: Reading) -> Value | None:
    arg = reading.arg(*SEQ_ARGS)
    if arg is not None and as_int(arg.value):
        return from_arg(arg, as_int(arg.value))
    if reading.consumer == "llamafactory":
        return defaulted(2048, "LLaMA-Factory's default cutoff_len 2048")
    return None


def _checkpointing(reading: Reading) -> Value | None:
    arg = reading.arg("gradient_checkpointing", "activation_checkpointing", "checkpoint_activations")
    if arg is not None:
        return from_arg(arg, to_bool(arg.value))
    arg = reading.arg("disable_gradient_checkpointing")
    if arg is not None:
        return from_arg(arg, not bool(to_bool(arg.value)))
    arg = reading.arg("recompute_granularity")
    if arg is not None and isinstance(arg.value, str):
        return from_arg(arg, arg.value == "full")
    if reading.consumer == "swift" and not reading.megatron:
        return defaulted(True, "ms-swift's default gradient_checkpointing true")
    if reading.consumer == "llamafactory":
        return defaulted(True, "LLaMA-Factory turns gradient checkpointing on unless disable_gradient_checkpointing")
    if reading.consumer == "hf":
        return defaulted(False, "the transformers default gradient_checkpointing false")
    return defaulted(None, "unknown (the training script decides)")


def _attention(reading: Reading) -> Value | None:
    arg = reading.arg("attn_impl", "attn_implementation", "flash_attn", "attention_backend", "use_flash_attn")
    if arg is not None:
        text = str(arg.value).lower()
        if text in ("eager", "disabled", "unfused", "false", "local"):
            return from_arg(arg, "eager")
        return from_arg(arg, "flash")
    arg = reading.arg("recompute_granularity")
    if arg is not None and arg.value == "selective":
        return from_arg(arg, "flash")
    if reading.consumer in ("swift", "hf", "llamafactory") or reading.megatron:
        return defaulted("flash", "sdpa/flash attention (the default): attention scores are not stored")
    return defaulted(None, "unknown attention implementation")


# ---- text ----------------------------------------------------------------------------------------


def render(e: Explanation) -> list[str]:
    m = e.model
    if m is None:
        return []
    shape = m.shape
    out = [line("model", f"{shape.name}: {format_count(shape.params)} parameters ({shape.source})")]
    if shape.has_shape:
        out.append(more(f"hidden {shape.hidden}, {shape.layers} layers, {shape.heads} heads ({shape.kv_heads} kv), intermediate {shape.intermediate}, vocab {shape.vocab}"))
    trainable = ""
    if m.trainable is not None:
        low, high = m.trainable
        trainable = f", {format_count(high)} trainable" if low == high else f", {format_count(low)}–{format_count(high)} trainable"
    out.append(more(f"training {shown(m.training)}{trainable}{why(m.training)}"))
    out.append(more(f"sequence length {shown(m.seq_len)}{why(m.seq_len)}"))
    out.append(more(f"activation checkpointing {shown(m.checkpointing)}{why(m.checkpointing)}"))
    out.append(more(f"attention {shown(m.attention)}{why(m.attention)}"))
    return out
