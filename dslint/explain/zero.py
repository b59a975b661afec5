"""The ZeRO section: what shards the model states (DeepSpeed ZeRO, Megatron's distributed optimizer,
FSDP or plain data parallel), and DeepSpeed's ZeRO settings with the memory each implies
(defaults as in deepspeed/runtime/zero/config.py; "auto" as HF/accelerate fill it)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from dslint.documents.model import Scalar
from dslint.explain.lines import line, more, shown, size, why
from dslint.explain.model import shape_of
from dslint.explain.origins import (
    Value,
    defaulted,
    dict_or_none,
    fmt,
    from_arg,
    to_bool,
    to_float,
)
from dslint.explain.reading import Reading
from dslint.values import as_int

if TYPE_CHECKING:
    from dslint.explain import Explanation

GRAD_BYTES = 2  # the reduce buffers hold 16-bit gradients


@dataclass
class Setting:
    """A ZeRO setting with the memory it implies."""

    key: str
    value: Value
    bytes: float | None
    meaning: str

    def to_dict(self) -> dict:
        return {"key": self.key, **self.value.to_dict(), "bytes": self.bytes, "meaning": self.meaning}


@dataclass
class Zero:
    engine: str  # deepspeed | megatron | ddp
    stage: Value | None
    offload_optimizer: Value | None
    offload_param: Value | None
    settings: list[Setting] = field(default_factory=list)
    config: str | None = None  # the DeepSpeed config's path or preset

    def to_dict(self) -> dict:
        return {
            "engine": self.engine,
            "config": self.config,
            "stage": dict_or_none(self.stage),
            "offload_optimizer": dict_or_none(self.offload_optimizer),
            "offload_param": dict_or_none(self.offload_param),
            "settings": [s.to_dict() for s in self.settings],
        }


def build(reading: Reading, dp: Value | None) -> Zero:
    if reading.megatron:
        return _megatron(reading)
    if reading.config is None:
        return _without_config(reading)
    plan = reading.plan
    reference = plan.deepspeed
    where = reference.preset and f"ms-swift preset {reference.preset}" or (reference.document.path if reference.document else reference.raw)
    stage = _stage(reading)
    offload_optimizer, offload_param = _offload(reading, "optimizer"), _offload(reading, "param")
    settings = zero_settings(reading, stage.value, dp)
    return Zero("deepspeed", stage, offload_optimizer, offload_param, settings, where)


def _megatron(reading: Reading) -> Zero:
    arg = reading.arg("use_distributed_optimizer")
    value = from_arg(arg, to_bool(arg.value)) if arg is not None else defaulted(None, "use_distributed_optimizer not set in the launch")
    return Zero("megatron", None, None, None, [Setting("use_distributed_optimizer", value, None, "partitions fp32 master weights and Adam moments over data parallel (ZeRO-1-like)")])


def _without_config(reading: Reading) -> Zero:
    """No DeepSpeed config read: FSDP, a config that could not be read, or plain DDP."""
    plan = reading.plan
    fsdp = _fsdp(reading)
    if fsdp is not None:
        reading.notes.append(f"FSDP ({fsdp.origin}): its memory is not estimated")
        return Zero("fsdp", None, None, None, [], None)
    if plan.deepspeed is not None or reading.consumer == "deepspeed":
        raw = plan.deepspeed.raw if plan.deepspeed is not None else None
        written = plan.deepspeed.written if plan.deepspeed is not None else None
        if written is not None:
            line = written.body.source.position(written.at)[0]
            reading.notes.append(f"the script writes the DeepSpeed config {raw!r} itself (line {line}), but which text only the run decides "
                                 "(a value it does not set, or writes in several branches): ZeRO and memory are unknown")
        else:
            reading.notes.append(f"the DeepSpeed config {raw!r} could not be read: ZeRO and memory are unknown" if raw else "the DeepSpeed config is not in the launch (the script may build it): ZeRO and memory are unknown")
        return Zero("unknown", None, None, None, [], raw)
    if plan.launcher == "yaml":
        reading.notes.append("no DeepSpeed config in this training config: the memory estimate assumes plain DDP, but the launcher may add FSDP or DeepSpeed")
    return Zero("ddp", None, None, None, [], None)


def _fsdp(reading: Reading) -> Value | None:
    """Where the launch turns FSDP on (HF --fsdp, an fsdp config, accelerate's FSDP)."""
    for name in ("fsdp", "fsdp_config", "fsdp_version"):
        arg = reading.arg(name)
        if arg is not None and arg.value not in (None, "", False, "false", "False", [], {}):
            return from_arg(arg, True)
    accel = reading.plan.accelerate_config
    if accel is not None and accel.config is not None:
        entry = accel.config.entry("distributed_type")
        if entry is not None and isinstance(entry.value, Scalar) and str(entry.value.value).upper() == "FSDP":
            return reading.node_value(entry.value, "distributed_type", True)
    return None


def _stage(reading: Reading) -> Value:
    section = reading.config.get("zero_optimization")
    stage_value, stage_node = reading.ds_value("zero_optimization.stage")
    if section is None:
        return defaulted(0, "no zero_optimization section: ZeRO off (stage 0)")
    if stage_value == "auto":
        text, path, number = reading.loc(stage_node)
        if reading.plan.fills_auto:
            return Value(2, f'"auto" at {text}: HF/accelerate use stage 2', path, number)
        return Value(0, f'"auto" at {text}: DeepSpeed alone drops it, stage 0', path, number)
    if as_int(stage_value) is not None:
        return reading.node_value(stage_node, "zero_optimization.stage", as_int(stage_value))
    if isinstance(section, Scalar) and section.value is True:
        return reading.node_value(section, "zero_optimization", 1)
    return defaulted(0, "zero_optimization.stage not set: DeepSpeed's default 0")


def _offload(reading: Reading, kind: str) -> Value:
    """``offload_optimizer`` or ``offload_param``: its device, or the legacy ``cpu_offload`` switch."""
    legacy_key = "cpu_offload" if kind == "optimizer" else "cpu_offload_param"
    value, node = reading.ds_value(f"zero_optimization.offload_{kind}.device")
    legacy_value, legacy = reading.ds_value(f"zero_optimization.{legacy_key}")
    if isinstance(value, str) and value.lower() in ("cpu", "nvme", "none"):
        return reading.node_value(node, f"offload_{kind}.device", value.lower())
    if to_bool(legacy_value):
        return reading.node_value(legacy, legacy_key, "cpu")
    return defaulted("none", f"no offload_{kind}")


def _setting(reading: Reading, key: str, default, auto_from_hidden=None, auto_text: str = "") -> Value:
    """One ``zero_optimization`` key: set, DeepSpeed's default, or "auto" as HF fills it from the
    model's hidden size (DeepSpeed alone drops "auto" for its default)."""
    value, node = reading.ds_value(f"zero_optimization.{key}")
    if node is None:
        return defaulted(default, f"DeepSpeed's default {fmt(default)}")
    if value == "auto":
        return _auto_setting(reading, node, default, auto_from_hidden, auto_text)
    number = to_float(value)
    return reading.node_value(node, key, int(number) if number is not None and number.is_integer() else value)


def _auto_setting(reading: Reading, node, default, auto_from_hidden, auto_text: str) -> Value:
    shape = shape_of(reading)
    hidden = shape.hidden if shape is not None else None
    fills = reading.plan.fills_auto
    text, path, number = reading.loc(node)
    if fills and auto_from_hidden is not None and hidden:
        filled = auto_from_hidden(hidden)
        return Value(filled, f'"auto" at {text}, filled by HF as {auto_text} = {filled:,} (hidden size {hidden})', path, number)
    if fills and auto_from_hidden is not None:
        return Value(None, f'"auto" at {text}: HF fills it as {auto_text} from the model\'s hidden size (unknown here)', path, number)
    return Value(default, f'"auto" at {text} is dropped by DeepSpeed: default {fmt(default)}', path, number)


def zero_settings(reading: Reading, stage: int, dp: Value | None) -> list[Setting]:
    shape = shape_of(reading)
    overlap = _setting(reading, "overlap_comm", None)
    if overlap.value is None or overlap.default:
        overlap = defaulted(stage == 3, f"DeepSpeed's default ({'true at stage 3' if stage == 3 else 'false below stage 3'})")
    else:
        overlap = replace(overlap, value=to_bool(overlap.value))
    reduce = _setting(reading, "reduce_bucket_size", 5e8, lambda h: h * h, "hidden²")
    out = []
    if reduce.value is not None:
        count = 2 if (overlap.value and stage in (1, 2)) else 1
        out.append(Setting("reduce_bucket_size", reduce, reduce.value * GRAD_BYTES * count, f"gradient reduce buffer: {count} × {fmt(reduce.value)} elements × {GRAD_BYTES} bytes" if stage >= 1 else "gradients are reduced in buckets of this many elements"))
    else:
        out.append(Setting("reduce_bucket_size", reduce, None, "gradient reduce buffer"))
    out.append(Setting("overlap_comm", overlap, None, "stages 1-2: a second reduce buffer; stage 3: overlaps gathering with compute"))
    if stage in (1, 2):
        allgather = _setting(reading, "allgather_bucket_size", 5e8)
        out.append(Setting("allgather_bucket_size", allgather, None, "chunks the all-gather of updated weights; recent torch gathers in place (no extra buffer)"))
    if stage == 3:
        out += _stage3_settings(reading, shape, dp)
    return out


def _stage3_settings(reading: Reading, shape, dp: Value | None) -> list[Setting]:
    live = _setting(reading, "stage3_max_live_parameters", 1e9)
    prefetch = _setting(reading, "stage3_prefetch_bucket_size", 5e7, lambda h: int(0.9 * h * h), "int(0.9 × hidden²)")
    persist = _setting(reading, "stage3_param_persistence_threshold", 1e5, lambda h: 10 * h, "10 × hidden")
    reuse = _setting(reading, "stage3_max_reuse_distance", 1e9)
    sub = _setting(reading, "sub_group_size", 1e9)
    partition = None
    if isinstance(sub.value, (int, float)):
        partition = sub.value
        if shape is not None and dp is not None:
            partition = min(sub.value, shape.params / dp.value)
    return [
        Setting("stage3_max_live_parameters", live, live.value * 2 if isinstance(live.value, (int, float)) else None, "at most this many gathered parameters at once (16-bit)"),
        Setting("stage3_prefetch_bucket_size", prefetch, prefetch.value * 2 if isinstance(prefetch.value, (int, float)) else None, "parameters fetched ahead of use; counts inside the live budget"),
        Setting("stage3_param_persistence_threshold", persist, None, "parameters smaller than this stay whole on every device (norms, biases)"),
        Setting("stage3_max_reuse_distance", reuse, None, "a parameter reused within this many elements is kept gathered"),
        Setting("sub_group_size", sub, partition * 4 if partition is not None else None, "optimizer step tiling: the fp32 gradients of one sub-group (at most the partition) exist at a time"),
    ]


# ---- text ----------------------------------------------------------------------------------------

OTHER_ENGINES = {
    "fsdp": "FSDP, not DeepSpeed (its memory is not estimated)",
    "unknown": "unknown (the DeepSpeed config could not be read)",
}


def render(e: Explanation) -> list[str]:
    z = e.zero
    if z.engine == "deepspeed":
        out = [line("ZeRO", f"stage {shown(z.stage)}{why(z.stage)}")]
        out.append(more(f"offload optimizer {shown(z.offload_optimizer)}, parameters {shown(z.offload_param)}"))
        return out + [more(_setting_text(setting)) for setting in z.settings]
    if z.engine == "megatron":
        setting = z.settings[0]
        return [line("optimizer", f"Megatron, use_distributed_optimizer {shown(setting.value)}{why(setting.value)}")]
    return [line("ZeRO", OTHER_ENGINES.get(z.engine, "no DeepSpeed config: plain data parallel"))]


def _setting_text(setting: Setting) -> str:
    implied = f" → {size(setting.bytes)}" if setting.bytes else ""
    where = ""
    if setting.value.origin.startswith('"auto"'):
        where = f" [{setting.value.origin}]"
    elif setting.value.default:
        where = " [default]"
    return f"{setting.key} {shown(setting.value)}{implied}: {setting.meaning}{where}"
