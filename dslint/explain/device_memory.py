"""The memory section: the estimate per device (dslint.explain.memory) from the sections before it,
against the device's memory (``--device-memory`` or the hardware setting)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from dslint.documents.model import Mapping
from dslint.explain.batch import Batch
from dslint.explain.lines import line, more
from dslint.explain.memory import (
    AMBIGUOUS_HARDWARE,
    ActivationInputs,
    GiB,
    MemoryEstimate,
    MemoryInputs,
    ZeroSetup,
    estimate_for,
    hardware_memory,
    show_range,
)
from dslint.explain.model import ModelInfo
from dslint.explain.origins import Value, dict_or_none, to_bool
from dslint.explain.parallelism import Parallelism
from dslint.explain.precision import Precision
from dslint.explain.reading import Reading
from dslint.explain.zero import Zero

if TYPE_CHECKING:
    from dslint.explain import Explanation


@dataclass
class Memory:
    estimate: MemoryEstimate
    inputs: MemoryInputs
    device_memory: Value | None

    @property
    def fits(self) -> bool | None:
        if self.device_memory is None:
            return None
        if self.estimate.device_high <= self.device_memory.value:
            return True
        if self.estimate.device_low > self.device_memory.value:
            return False
        return None

    def to_dict(self) -> dict:
        est = self.estimate
        return {
            "device": {"low": round(est.device_low), "high": round(est.device_high)},
            "model_states": round(est.model_states("high")),
            "cpu_per_node": {"low": round(est.cpu_low), "high": round(est.cpu_high)},
            "nvme_per_node": round(est.nvme_high),
            "terms": [
                {"key": t.key, "label": t.label, "group": t.group, "place": t.place, "low": round(t.low), "high": round(t.high), "formula": t.formula}
                for t in est.terms
            ],
            "device_memory": dict_or_none(self.device_memory),
            "fits": self.fits,
            "notes": list(est.notes),
        }


def build(reading: Reading, batch: Batch, precision: Precision, zero: Zero, model: ModelInfo | None,
          procs: Value | None, parallel: Parallelism) -> Memory | None:
    if model is None or zero.engine in ("unknown", "fsdp"):
        return None
    shape = model.shape
    dp = batch.data_parallel.value if batch.data_parallel is not None else None
    if dp is None:
        reading.notes.append("the data-parallel size is unknown: the memory estimate assumes 1 (nothing partitioned)")
        dp = 1
    mixed = precision.mixed_precision.value
    if mixed is None:
        reading.notes.append("precision unknown: the estimate assumes 16-bit mixed precision")
    adapter = model.training.value != "full" and model.trainable is not None and model.training.value not in ("freeze",)
    weight_bytes = _weight_bytes(precision, zero, model, adapter)
    tp, pp = parallel.degree("tensor"), parallel.degree("pipeline")
    setup = _zero_setup(reading, zero)
    largest = shape.largest_layer
    act = _activations(reading, batch, model, parallel)
    weights_dtype = precision.weights_dtype.value
    inputs = MemoryInputs(
        params=shape.params, dp=dp, trainable=model.trainable, adapter=adapter, weight_bytes=weight_bytes,
        # plain DDP: the weights' own dtype throughout, loaded as held
        mixed_precision=mixed != "fp32" if zero.engine != "ddp" else False,
        model_parallel=tp * pp, procs_per_node=procs.value if procs else 1,
        largest_layer=(largest, largest) if largest else None, zero=setup, activations=act,
        load_bytes=weight_bytes if zero.engine == "ddp" else (2 if weights_dtype in ("bfloat16", "float16") else 4),
    )
    return Memory(estimate_for(inputs), inputs, _device_memory(reading))


def _weight_bytes(precision: Precision, zero: Zero, model: ModelInfo, adapter: bool) -> float:
    """Bytes per frozen weight: 16-bit with mixed precision, the dtype itself under plain DDP,
    4 or 8 bits for a quantized base under an adapter."""
    weight_bytes = 2 if precision.mixed_precision.value != "fp32" else 4
    if zero.engine == "ddp" and precision.weights_dtype.value in ("bfloat16", "float16"):
        weight_bytes = 2
    elif zero.engine == "ddp" and precision.weights_dtype.value == "float32":
        weight_bytes = 4
    if model.quant_bits in (4, 8) and adapter:
        weight_bytes = model.quant_bits / 8
    return weight_bytes


def _activations(reading: Reading, batch: Batch, model: ModelInfo, parallel: Parallelism) -> ActivationInputs | None:
    shape = model.shape
    if shape.has_shape and model.seq_len is not None and batch.micro_batch is not None and batch.micro_batch.value:
        tp = parallel.degree("tensor")
        sp_arg = reading.arg("sequence_parallel")
        return ActivationInputs(
            seq_len=model.seq_len.value, micro_batch=batch.micro_batch.value, hidden=shape.hidden, layers=shape.layers,
            heads=shape.heads, vocab=shape.vocab, checkpointing=model.checkpointing.value if model.checkpointing else None,
            attention=model.attention.value if model.attention else None, tensor_parallel=tp,
            sequence_parallel=bool(sp_arg is not None and to_bool(sp_arg.value) and tp > 1),
            sequence_split=parallel.degree("context") * parallel.degree("sequence"), pipeline_parallel=parallel.degree("pipeline"),
        )
    if model.seq_len is None:
        reading.notes.append("sequence length unknown (max_length / cutoff_len / max_seq_length): activations are not estimated")
    return None


def _zero_setup(reading: Reading, zero: Zero) -> ZeroSetup:
    if zero.engine == "megatron":
        dist = zero.settings[0].value.value if zero.settings else None
        return ZeroSetup(scheme="megatron", distributed_optimizer=dist)
    if zero.engine == "ddp":
        return ZeroSetup(scheme="ddp")
    values = {s.key: s.value.value for s in zero.settings}

    def number(key, default):
        value = values.get(key)
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default

    contiguous, _ = reading.ds_value("zero_optimization.contiguous_gradients")
    return ZeroSetup(
        stage=zero.stage.value if zero.stage else 0,
        offload_optimizer=zero.offload_optimizer.value if zero.offload_optimizer else "none",
        offload_param=zero.offload_param.value if zero.offload_param else "none",
        zero_init=_zero_init(reading),
        reduce_bucket_size=number("reduce_bucket_size", 5e8),
        allgather_bucket_size=number("allgather_bucket_size", 5e8),
        overlap_comm=bool(values.get("overlap_comm")),
        contiguous_gradients=to_bool(contiguous) is not False,
        max_live_parameters=number("stage3_max_live_parameters", 1e9),
        prefetch_bucket_size=number("stage3_prefetch_bucket_size", 5e7),
        sub_group_size=number("sub_group_size", 1e9),
    )


def _zero_init(reading: Reading) -> bool:
    """Whether ZeRO-3 partitions the parameters as the model is built: HF does; accelerate when its
    config's ``zero3_init_flag`` says so."""
    zero_init = reading.plan.fills_auto and reading.consumer != "accelerate"
    config = reading.accelerate_config()
    if config is not None:
        section = config.get("deepspeed_config")
        if isinstance(section, Mapping):
            zero_init = bool(to_bool(section.value_of("zero3_init_flag")))
    return zero_init


def _device_memory(reading: Reading) -> Value | None:
    options = reading.options
    if options.device_memory is not None:
        return Value(options.device_memory, options.device_memory_origin or "--device-memory on the command line")
    if options.hardware:
        size = hardware_memory(options.hardware)
        if size is not None:
            return Value(size, f"hardware {options.hardware} ({options.hardware_origin})")
        if options.hardware.lower() in AMBIGUOUS_HARDWARE:
            reading.notes.append(f"hardware {options.hardware} comes in two memory sizes: set {AMBIGUOUS_HARDWARE[options.hardware.lower()]} or --device-memory")
    return None


# ---- text ----------------------------------------------------------------------------------------

GROUPS = (("model_states", "model states"), ("buffers", "buffers"), ("activations", "activations"))


def render(e: Explanation) -> list[str]:
    mem = e.memory
    if mem is None:
        return []
    est = mem.estimate
    out = [line("memory", f"{show_range(est.device_low, est.device_high)} per device{_verdict(mem)}")]
    width = min(max((len(t.label) for t in est.terms), default=10), 44)
    out += _rows([t for t in est.terms if t.place == "device"], width)
    groups = _group_sums(est)
    if groups:
        counted = " (model states as DeepSpeed's estimators count them)" if e.zero.engine == "deepspeed" else ""
        out.append(more(f"= {' + '.join(groups)}{counted}"))
    moved = [t for t in est.terms if t.place == "moved"]
    if moved:
        out.append(more("offloaded, per process:"))
    out += _rows(moved, width)
    host = [t for t in est.terms if t.place in ("cpu", "nvme")]
    if host:
        nvme = f", NVMe {show_range(est.nvme_high, est.nvme_high)}" if est.nvme_high else ""
        out.append(more(f"host memory per node: CPU {show_range(est.cpu_low, est.cpu_high)}{nvme}"))
    out += _rows(host, width)
    if mem.device_memory is not None:
        out.append(more(f"device memory: {mem.device_memory.origin}"))
    for note in est.notes:
        out.append(more(f"! {note}"))
    return out


def _verdict(mem: Memory) -> str:
    if mem.device_memory is None:
        return ""
    verdict = f" of {mem.device_memory.value / GiB:.0f} GiB"
    if mem.fits is True:
        return verdict + " — fits"
    if mem.fits is False:
        return verdict + " — DOES NOT FIT"
    return verdict + " — may not fit"


def _rows(terms, width: int) -> list[str]:
    return [more(f"{term.label:<{width}}  {show_range(term.low, term.high):>13}  {term.formula}") for term in terms]


def _group_sums(est: MemoryEstimate) -> list[str]:
    """The device terms summed by group (model states, buffers, activations), the empty ones left out."""
    groups = []
    for group, name in GROUPS:
        low = sum(t.low for t in est.terms if t.place == "device" and t.group == group)
        high = sum(t.high for t in est.terms if t.place == "device" and t.group == group)
        if high:
            groups.append(f"{name} {show_range(low, high)}")
    return groups
