"""Per-device memory estimate for a training launch: model states, ZeRO buffers, activations.

Every term is a pure function of the inputs and carries the formula it was computed with;
unknown inputs give a range (``low``..``high``) instead of a guess.

Model states follow DeepSpeed's own estimators term for term
(deepspeed/runtime/zero/stage_1_and_2.py ``estimate_zero2_model_states_mem_needs`` and
deepspeed/runtime/zero/stage3.py ``estimate_zero3_model_states_mem_needs``), with ``P``
parameters, ``N`` the data-parallel size (the ZeRO partition count) and ``L`` the largest
layer's parameters:

=============  ==========================  ===============================================
stage          per device                  what is partitioned
=============  ==========================  ===============================================
0              2P + 2P + 16P               nothing (16-bit weights and gradients, fp32
                                           gradients, master weights and Adam moments)
1              2P + 2P + 16P/N             fp32 gradients, master weights, Adam moments
2              2P + 18P/N                  + 16-bit gradients (DeepSpeed: ``2P + 18P/N``)
3              18P/N + 4L                  + 16-bit weights; the largest layer is gathered
                                           with its gradient (DeepSpeed: ``18P/N + 4L``)
=============  ==========================  ===============================================

``offload_optimizer`` moves the fp32 gradients, master weights and Adam moments (and, as in
DeepSpeed's estimator, the 16-bit gradients) to CPU or NVMe; ``offload_param`` (stage 3) moves
the 16-bit weights. CPU memory per node follows the same estimators: the offloaded states of
the node's processes, or the weights every process loads before partitioning if that is more,
times DeepSpeed's ``additional_buffer_factor`` 1.5.

Beyond the estimators (they leave these out), the estimate adds DeepSpeed's buffers: the
gradient reduce buckets (``reduce_bucket_size`` elements, two of them with ``overlap_comm`` at
stages 1-2; deepspeed/runtime/zero/stage_1_and_2.py ``setup_buckets``, stage3.py IPG buffer),
ZeRO-3's 16-bit gradient partition (stage3.py ``grad_partitions_flat_buffer``) and its
gathered parameters (at most ``stage3_max_live_parameters``; prefetching counts inside that
budget), and activations.

Activations follow Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
Transformer Models" (16-bit activations, ``s`` sequence, ``b`` micro batch, ``h`` hidden,
``a`` heads, ``t`` tensor parallel): per layer ``s·b·h·(34 + 5·a·s/h)`` bytes without
recomputation (``s·b·h·(10 + 24/t + 5·a·s/(h·t))`` with tensor parallelism, everything ``/t``
with sequence parallelism); with full recomputation only each layer's input ``2·s·b·h`` is kept,
plus one layer's working set during its recomputation. Flash and memory-efficient SDPA
attention never store the ``a·s²`` score terms (the ``5·a·s/h`` part); the output layer keeps
``4·s·b·v`` bytes of fp32 logits for the loss.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

GiB = 1024**3

DEVICE_MEMORY = {
    # Device memory as vendors quote it ("80GB" is 80 GiB of HBM).
    "a100-40gb": 40 * GiB, "a100-80gb": 80 * GiB, "a800": 80 * GiB,
    "h100": 80 * GiB, "h100-80gb": 80 * GiB, "h800": 80 * GiB, "h200": 141 * GiB,
    "l40s": 48 * GiB, "a10": 24 * GiB, "a10g": 24 * GiB, "l4": 24 * GiB,
    "rtx3090": 24 * GiB, "rtx4090": 24 * GiB, "v100-16gb": 16 * GiB, "v100-32gb": 32 * GiB,
    "t4": 16 * GiB, "p100": 16 * GiB,
    "ascend-910a": 32 * GiB, "ascend-910b": 64 * GiB, "ascend-910c": 128 * GiB,
}
AMBIGUOUS_HARDWARE = {"a100": "a100-40gb or a100-80gb", "v100": "v100-16gb or v100-32gb"}

DS_BUFFER_FACTOR = 1.5  # DeepSpeed's additional_buffer_factor for CPU memory


def parse_size(text: str) -> int:
    """``80GB``, ``80GiB``, ``81920MB``, ``0.5TB`` or a plain number of GiB → bytes.

    GB and GiB are both read as 2^30 bytes: that is what GPU memory sizes mean.
    """
    match = re.match(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]i?b?)?\s*$", str(text), re.IGNORECASE)
    if not match:
        raise ValueError(f"not a memory size: {text!r} (write e.g. 80GB, 64GiB, 24GB)")
    unit = (match.group(2) or "g")[0].lower()
    value = float(match.group(1)) * {"k": 1024, "m": 1024**2, "g": GiB, "t": 1024**4}[unit]
    if value <= 0:
        raise ValueError(f"not a memory size: {text!r}")
    return int(value)


def hardware_memory(name: str | None) -> int | None:
    return DEVICE_MEMORY.get((name or "").lower())


def gib(value: float) -> str:
    if 0 < value < 0.1 * GiB:
        return f"{value / 1024**2:.0f} MiB"
    return f"{value / GiB:.1f} GiB"


def show_range(low: float, high: float) -> str:
    if abs(high - low) < 0.05 * GiB:
        return gib(high)
    if low < 0.1 * GiB:
        return f"{gib(low)}–{gib(high)}"
    return f"{low / GiB:.1f}–{high / GiB:.1f} GiB"


@dataclass(frozen=True)
class Term:
    key: str
    label: str
    low: float  # bytes
    high: float
    formula: str
    group: str = "model_states"  # model_states | buffers | activations | offload | loading
    place: str = "device"  # device | cpu | nvme (per node) | moved (per process, off the device)



@dataclass(frozen=True)
class ZeroSetup:
    """DeepSpeed's ZeRO settings (defaults as in deepspeed/runtime/zero/config.py), or the
    Megatron optimizer (``scheme="megatron"``)."""

    stage: int = 0
    offload_optimizer: str = "none"  # none | cpu | nvme
    offload_param: str = "none"
    zero_init: bool = True  # parameters are partitioned as the model is built (zero.Init)
    reduce_bucket_size: float = 5e8
    allgather_bucket_size: float = 5e8
    overlap_comm: bool | None = None  # None: DeepSpeed's default (True for stage 3)
    contiguous_gradients: bool = True
    max_live_parameters: float = 1e9
    prefetch_bucket_size: float = 5e7
    param_persistence_threshold: float = 1e5
    sub_group_size: float = 1e9
    offload_param_buffer_count: int = 5
    offload_param_buffer_size: float = 1e8
    scheme: str = "deepspeed"  # deepspeed | megatron | ddp (plain PyTorch: no ZeRO)
    distributed_optimizer: bool | None = None  # megatron: --use_distributed_optimizer


@dataclass(frozen=True)
class ActivationInputs:
    seq_len: int
    micro_batch: int
    hidden: int
    layers: int
    heads: int
    vocab: int | None = None
    checkpointing: bool | None = None  # None: unknown → a range
    attention: str | None = None  # "eager" (scores stored), "flash" (not stored), None: unknown
    tensor_parallel: int = 1
    sequence_parallel: bool = False  # Megatron's sequence parallelism (with TP)
    sequence_split: int = 1  # context parallel × Ulysses sequence parallel: each device sees s/split
    pipeline_parallel: int = 1


@dataclass(frozen=True)
class MemoryInputs:
    params: int  # the whole model
    dp: int = 1  # data-parallel size: ZeRO partitions over it
    trainable: tuple[int, int] | None = None  # (low, high); None: every parameter
    adapter: bool = False  # trainable parameters come on top of the (frozen) model (LoRA)
    weight_bytes: float = 2  # bytes per frozen weight (0.5 for 4-bit quantized bases)
    mixed_precision: bool = True  # 16-bit weights with fp32 master weights; False: fp32 training
    model_parallel: int = 1  # tensor × pipeline parallel: each device holds params / this
    procs_per_node: int = 1
    largest_layer: tuple[int, int] | None = None  # (low, high) elements; None: unknown
    zero: ZeroSetup = field(default_factory=ZeroSetup)
    activations: ActivationInputs | None = None
    load_bytes: float = 4  # bytes per parameter each process loads before partitioning
    buffer_factor: float = DS_BUFFER_FACTOR


@dataclass
class MemoryEstimate:
    terms: list[Term]
    notes: list[str] = field(default_factory=list)

    def _sum(self, place: str, which: str, group: str | None = None) -> float:
        return sum(getattr(t, which) for t in self.terms if t.place == place and (group is None or t.group == group))

    @property
    def device_low(self) -> float:
        return self._sum("device", "low")

    @property
    def device_high(self) -> float:
        return self._sum("device", "high")

    @property
    def cpu_low(self) -> float:
        return self._sum("cpu", "low")

    @property
    def cpu_high(self) -> float:
        return self._sum("cpu", "high")

    @property
    def nvme_high(self) -> float:
        return self._sum("nvme", "high")

    def model_states(self, which: str = "high") -> float:
        """Device model states as DeepSpeed's estimators count them."""
        return self._sum("device", which, "model_states")

    def largest(self, count: int = 3) -> list[Term]:
        device = [t for t in self.terms if t.place == "device" and t.high > 0]
        return sorted(device, key=lambda t: -t.high)[:count]


def _range(value) -> tuple[float, float]:
    if value is None:
        return (0.0, 0.0)
    if isinstance(value, tuple):
        return float(value[0]), float(value[1])
    return float(value), float(value)


def _term(key, label, low, high, formula, group="model_states", place="device") -> Term:
    return Term(key, label, float(low), float(high), formula, group, place)


def estimate(inputs: MemoryInputs) -> MemoryEstimate:
    """The per-device (and per-node CPU/NVMe) memory of one training process."""
    zero = inputs.zero
    notes: list[str] = []
    terms: list[Term] = []
    N = max(int(inputs.dp), 1)
    mp = max(int(inputs.model_parallel), 1)
    P = inputs.params / mp
    T_low, T_high = _range(inputs.trainable) if inputs.trainable is not None else (inputs.params, inputs.params)
    T_low, T_high = T_low / mp, T_high / mp
    stage = zero.stage if zero.scheme == "deepspeed" else 0
    mixed = inputs.mixed_precision
    train_bytes = 2 if mixed else 4

    # 16-bit (or fp32) weights: the frozen part at weight_bytes, the trainable part at train_bytes.
    if inputs.adapter:
        w_low = P * inputs.weight_bytes + T_low * train_bytes
        w_high = P * inputs.weight_bytes + T_high * train_bytes
        weight_formula = f"{_b(inputs.weight_bytes)}·P + {train_bytes}·T (frozen model + adapter)"
    else:
        ends = [(P - t) * inputs.weight_bytes + t * train_bytes for t in (T_low, T_high)]
        w_low, w_high = min(ends), max(ends)
        weight_formula = f"{train_bytes}·P" if T_low == P == T_high and inputs.weight_bytes == train_bytes else f"{_b(inputs.weight_bytes)}·(P−T) + {train_bytes}·T"
    if mp > 1:
        weight_formula += f", P per device = params / {mp} (tensor × pipeline parallel)"

    if zero.scheme == "megatron":
        terms += _megatron_states(zero, w_low, w_high, weight_formula, T_low, T_high, N, notes)
    else:
        terms += _deepspeed_states(inputs, stage, w_low, w_high, weight_formula, T_low, T_high, N, P, train_bytes, notes)
        terms += _deepspeed_buffers(inputs, stage, T_low, T_high, N, P, notes)
        terms += _host_memory(inputs, stage, w_low, w_high, T_low, T_high, N, P, notes)
    if inputs.activations is not None:
        terms += activation_terms(inputs.activations)
    return MemoryEstimate([t for t in terms if t.high > 0 or t.group == "model_states"], notes)


def estimate_for(inputs: MemoryInputs) -> MemoryEstimate:
    """The estimate, with plain PyTorch DDP (no DeepSpeed) handled: every state replicated,
    Adam moments in the weights' dtype, and DDP's gradient buckets (a second gradient copy)."""
    if inputs.zero.scheme != "ddp":
        return estimate(inputs)
    wb = inputs.weight_bytes
    mp = max(inputs.model_parallel, 1)
    P = inputs.params / mp
    t_low, t_high = (inputs.trainable if inputs.trainable is not None else (inputs.params, inputs.params))
    t_low, t_high = t_low / mp, t_high / mp
    train_bytes = 2 if wb < 4 else 4
    weights_low = (P - (0 if inputs.adapter else t_low)) * wb + (t_low * train_bytes if inputs.adapter else 0)
    if not inputs.adapter:
        weights_low = P * wb
    weights_high = P * wb + (t_high * train_bytes if inputs.adapter else 0)
    terms = [
        Term("weights", f"weights ({'16-bit' if wb == 2 else 'fp32' if wb == 4 else 'quantized'})", weights_low if inputs.adapter else P * wb, weights_high if inputs.adapter else P * wb, f"{_b(wb)}·P"),
        Term("gradients", "gradients", train_bytes * t_low, train_bytes * t_high, f"{train_bytes}·T"),
        Term("optimizer_states", "Adam moments (in the weights' dtype)", 2 * train_bytes * t_low, 2 * train_bytes * t_high, f"{2 * train_bytes}·T"),
        Term("ddp_buckets", "DDP gradient buckets (a copy of the gradients)", train_bytes * t_low, train_bytes * t_high, f"{train_bytes}·T", "buffers"),
        Term("cpu_loading", "model loading (CPU, per node)", wb * P * inputs.procs_per_node, wb * P * inputs.procs_per_node, f"{_b(wb)}·P·{inputs.procs_per_node}", "loading", "cpu"),
    ]
    if inputs.activations is not None:
        terms += activation_terms(inputs.activations)
    return MemoryEstimate(terms, ["no DeepSpeed config: plain PyTorch DDP assumed (FSDP is not estimated)"])


def _b(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _deepspeed_states(inputs, stage, w_low, w_high, weight_formula, T_low, T_high, N, P, train_bytes, notes) -> list[Term]:
    zero = inputs.zero
    offload_opt = zero.offload_optimizer in ("cpu", "nvme") and stage >= 1
    if zero.offload_optimizer in ("cpu", "nvme") and stage == 0:
        notes.append("offload_optimizer has no effect without ZeRO (stage 0)")
    if zero.offload_param in ("cpu", "nvme") and stage != 3:
        notes.append("offload_param only takes effect with ZeRO stage 3")
    part = f"/{N}" if N > 1 else ""
    out = [_weights_term(inputs, stage, w_low, w_high, weight_formula, N, part)]

    # Gradients in the training dtype: DeepSpeed's estimators count them at stages 0-2 only
    # (at stage 3 they are a separate buffer, below), and not on the device with offload
    # (they are copied to the CPU or NVMe buffers as they are reduced).
    if stage < 3 and not offload_opt:
        grad_div = N if stage >= 2 else 1
        label = "16-bit gradients" if inputs.mixed_precision else "fp32 gradients"
        out.append(_term("gradients", label + (" (partition)" if grad_div > 1 else ""), T_low * train_bytes / grad_div, T_high * train_bytes / grad_div, f"{train_bytes}·T{part if grad_div > 1 else ''}"))

    out += _optimizer_states(inputs, stage, offload_opt, T_low, T_high, N, part)
    if stage == 3:
        L_low, L_high = _largest(inputs, P)
        out.append(_term("largest_layer", "largest layer gathered (weights + grads)", 4 * L_low, 4 * L_high, "4·L"))
    return out


def _weights_term(inputs, stage, w_low, w_high, weight_formula, N, part) -> Term:
    """The weights: whole below stage 3; at stage 3 a partition, moved off the device by offload_param."""
    zero = inputs.zero
    mixed = inputs.mixed_precision
    if stage != 3:
        return _term("weights", "16-bit weights" if mixed else "fp32 weights", w_low, w_high, weight_formula)
    offload_param = zero.offload_param in ("cpu", "nvme")
    place = "moved" if offload_param else "device"
    label = "16-bit weights (partition)" if mixed else "fp32 weights (partition)"
    if offload_param:
        label += f" → {'CPU' if zero.offload_param == 'cpu' else 'NVMe'}"
    return _term("weights", label, w_low / N, w_high / N, f"({weight_formula}){part}", "model_states" if place == "device" else "offload", place)


def _optimizer_states(inputs, stage, offload_opt, T_low, T_high, N, part) -> list[Term]:
    """fp32 optimizer states (partitioned from stage 1 on), moved off the device by offload_optimizer."""
    zero = inputs.zero
    opt_div = N if stage >= 1 else 1
    shown = part if opt_div > 1 else ""
    place = "moved" if offload_opt else "device"
    group = "model_states" if place == "device" else "offload"
    moved = f" → {'CPU' if zero.offload_optimizer == 'cpu' else 'NVMe'}" if offload_opt else ""
    out = []
    if inputs.mixed_precision:
        out.append(_term("fp32_gradients", "fp32 gradients" + moved, 4 * T_low / opt_div, 4 * T_high / opt_div, f"4·T{shown}", group, place))
        out.append(_term("master_weights", "fp32 master weights" + moved, 4 * T_low / opt_div, 4 * T_high / opt_div, f"4·T{shown}", group, place))
    elif stage >= 1:
        out.append(_term("master_weights", "fp32 weight partition copy" + moved, 4 * T_low / opt_div, 4 * T_high / opt_div, f"4·T{shown}", group, place))
    out.append(_term("optimizer_states", "Adam moments (fp32 m and v)" + moved, 8 * T_low / opt_div, 8 * T_high / opt_div, f"8·T{shown}", group, place))
    return out


def _largest(inputs: MemoryInputs, P: float) -> tuple[float, float]:
    if inputs.largest_layer is not None:
        low, high = _range(inputs.largest_layer)
        return min(low, P), min(high, P)
    # Unknown shape: the embedding of a decoder is 1-30% of it (Llama-2-70B .. Qwen2.5-0.5B).
    return 0.01 * P, 0.3 * P


def _deepspeed_buffers(inputs, stage, T_low, T_high, N, P, notes) -> list[Term]:
    zero = inputs.zero
    if zero.scheme != "deepspeed":
        return []
    out: list[Term] = []
    grad_bytes = 2 if inputs.mixed_precision else 4
    offload_opt = zero.offload_optimizer in ("cpu", "nvme") and stage >= 1
    if stage == 0:
        bucket = min(5e8, T_high)
        out.append(_term("allreduce_bucket", "gradient all-reduce bucket", grad_bytes * min(5e8, T_low), grad_bytes * bucket, f"{grad_bytes}·min(5e8, T) (engine MEMORY_OPT_ALLREDUCE_SIZE)", "buffers"))
    elif stage in (1, 2):
        overlap = bool(zero.overlap_comm)
        count = 2 if overlap else 1
        if zero.contiguous_gradients:
            size = zero.reduce_bucket_size * grad_bytes * count
            out.append(_term("reduce_bucket", f"reduce bucket{'s (2: overlap_comm)' if overlap else ''}", size, size, f"{count}·{grad_bytes}·reduce_bucket_size ({zero.reduce_bucket_size:.3g})", "buffers"))
    else:
        if zero.contiguous_gradients:
            size = zero.reduce_bucket_size * grad_bytes
            out.append(_term("reduce_bucket", "reduce bucket", size, size, f"{grad_bytes}·reduce_bucket_size ({zero.reduce_bucket_size:.3g})", "buffers"))
        if not offload_opt:
            out.append(_term("gradient_partition", "16-bit gradient partition", grad_bytes * T_low / N, grad_bytes * T_high / N, f"{grad_bytes}·T/{N}", "buffers"))
        live_high = min(zero.max_live_parameters, P)
        live_low = min(zero.prefetch_bucket_size, live_high)
        out.append(_term(
            "live_parameters", "gathered parameters (up to max_live)",
            grad_bytes * live_low, grad_bytes * live_high,
            f"{grad_bytes}·min(prefetch {zero.prefetch_bucket_size:.3g}, ·) .. {grad_bytes}·min(max_live {zero.max_live_parameters:.3g}, P)", "buffers",
        ))
    return out


def _host_memory(inputs, stage, w_low, w_high, T_low, T_high, N, P, notes) -> list[Term]:
    """CPU and NVMe per node, as DeepSpeed's estimators count them."""
    zero = inputs.zero
    ppn = max(int(inputs.procs_per_node), 1)
    factor = inputs.buffer_factor
    offload_opt = zero.offload_optimizer if zero.offload_optimizer in ("cpu", "nvme") and stage >= 1 else None
    offload_param = zero.offload_param if zero.offload_param in ("cpu", "nvme") and stage == 3 else None
    per_process = {"cpu": [0.0, 0.0], "nvme": [0.0, 0.0]}
    parts = {"cpu": [], "nvme": []}
    if offload_opt:
        k = 16 if inputs.mixed_precision else 12
        per_process[offload_opt][0] += k * T_low / N
        per_process[offload_opt][1] += k * T_high / N
        parts[offload_opt].append(f"{k}·T/{N} optimizer states")
    if offload_param:
        per_process[offload_param][0] += w_low / N
        per_process[offload_param][1] += w_high / N
        parts[offload_param].append(f"2·P/{N} weights")
    full_load = (inputs.load_bytes * P * ppn, inputs.load_bytes * P * ppn)
    if stage == 3 and inputs.zero.zero_init:
        L_low, L_high = _largest(inputs, P)
        load = (inputs.load_bytes * L_low * ppn, inputs.load_bytes * L_high * ppn)
        load_formula = f"{_b(inputs.load_bytes)}·L·{ppn} (zero.Init builds one layer at a time)"
    else:
        load = full_load
        load_formula = f"{_b(inputs.load_bytes)}·P·{ppn} (each process loads the whole model)"
    out: list[Term] = []
    offloaded = (per_process["cpu"][0] * ppn, per_process["cpu"][1] * ppn)
    if offloaded[1] > 0:
        if stage == 3 and zero.zero_init:
            cpu, formula = offloaded, f"({' + '.join(parts['cpu'])})·{ppn} processes·{factor}"
        else:
            cpu = (max(load[0], offloaded[0]), max(load[1], offloaded[1]))
            formula = f"max({load_formula}, ({' + '.join(parts['cpu'])})·{ppn})·{factor}"
        out.append(_term("cpu_offload", "offloaded states (CPU, per node)", cpu[0] * factor, cpu[1] * factor, formula, "offload", "cpu"))
    else:
        out.append(_term("cpu_loading", "model loading (CPU, per node)", load[0] * factor, load[1] * factor, f"{load_formula}·{factor}", "loading", "cpu"))
    if per_process["nvme"][1] > 0:
        nv = (per_process["nvme"][0] * ppn, per_process["nvme"][1] * ppn)
        out.append(_term("nvme_offload", "offloaded states (NVMe, per node)", nv[0], nv[1], f"({' + '.join(parts['nvme'])})·{ppn}", "offload", "nvme"))
        if offload_param == "nvme":
            size = zero.offload_param_buffer_count * zero.offload_param_buffer_size * 2 * ppn
            out.append(_term("nvme_buffers", "pinned parameter swap buffers (CPU, per node)", size, size, f"buffer_count·buffer_size·2·{ppn}", "offload", "cpu"))
        notes.append("NVMe offload also pins DeepSpeed swap buffers in CPU memory (aio settings); they are not all counted")
    return out


def _megatron_states(zero, w_low, w_high, weight_formula, T_low, T_high, N, notes) -> list[Term]:
    """Megatron-LM: bf16 weights, fp32 main gradients (the grad buffer), fp32 master weights and
    Adam moments; the distributed optimizer partitions the last two over data parallel
    (Megatron-LM docs/source/api-guide/dist_optimizer.md: 6 + 12/d bytes per parameter)."""
    out = [_term("weights", "16-bit weights", w_low, w_high, weight_formula)]
    out.append(_term("gradients", "fp32 main gradients (grad buffer)", 4 * T_low, 4 * T_high, "4·T"))
    dist = zero.distributed_optimizer
    low_div = N if dist in (True, None) else 1
    high_div = N if dist is True else 1
    if dist is None:
        notes.append("use_distributed_optimizer is not set in the launch: the range covers both")
    shown = f"/{N}" if dist is True else ("" if dist is False else f" (/{N} with the distributed optimizer)")
    out.append(_term("master_weights", "fp32 master weights", 4 * T_low / low_div, 4 * T_high / high_div, f"4·T{shown}"))
    out.append(_term("optimizer_states", "Adam moments (fp32 m and v)", 8 * T_low / low_div, 8 * T_high / high_div, f"8·T{shown}"))
    return out


# ---- activations -----------------------------------------------------------------------------


def layer_activation_bytes(s: float, b: float, h: float, a: float, t: int = 1, sp: bool = False, scores: bool = True) -> float:
    """Korthikanti et al. 2022, eqs. (1)-(3): one layer's activations kept for backward."""
    attention = 5 * a * s / h if scores else 0.0
    if t <= 1:
        return s * b * h * (34 + attention)
    if sp:
        return s * b * h * (34 + attention) / t
    return s * b * h * (10 + 24 / t + attention / t)


def activation_terms(act: ActivationInputs) -> list[Term]:
    s = act.seq_len / max(act.sequence_split, 1)
    t = max(act.tensor_parallel, 1)
    layers = math.ceil(act.layers / max(act.pipeline_parallel, 1))
    low, high = _activation_range(act, s, t, layers)
    out = [_term("activations", _activation_label(act), low, high, _activation_formula(act, s, t, layers), "activations")]
    if act.vocab:
        logits = 4 * s * act.micro_batch * act.vocab / t
        out.append(_term("logits", "logits (fp32, for the loss)", logits, logits, f"4·s·b·v/t; v={act.vocab}" if t > 1 else f"4·s·b·v; v={act.vocab}", "activations"))
    return out


def _activation_range(act: ActivationInputs, s: float, t: int, layers: int) -> tuple[float, float]:
    """The least and most over what is unknown: attention scores stored or not, recomputation or not."""
    b, h, a = act.micro_batch, act.hidden, act.heads
    options = []
    for scores in ((False, True) if act.attention is None else (act.attention == "eager",)):
        for recompute in ((True, False) if act.checkpointing is None else (bool(act.checkpointing),)):
            one = layer_activation_bytes(s, b, h, a, t, act.sequence_parallel, scores)
            if recompute:
                kept = 2 * s * b * h / (t if act.sequence_parallel else 1)
                value = layers * kept + one
            else:
                value = layers * one
            options.append(value)
    return min(options), max(options)


def _activation_label(act: ActivationInputs) -> str:
    parts = []
    if act.checkpointing is None:
        parts.append("with or without activation checkpointing")
    elif act.checkpointing:
        parts.append("activation checkpointing")
    if act.attention is None:
        parts.append("attention scores stored or not")
    return "activations" + (f" ({', '.join(parts)})" if parts else "")


def _activation_formula(act: ActivationInputs, s: float, t: int, layers: int) -> str:
    sp_note = "/t" if act.sequence_parallel and t > 1 else ""
    s_text = f"s={int(s)}" + (f" (= {act.seq_len}/{act.sequence_split})" if act.sequence_split > 1 else "")
    base = "34 + 5·a·s/h" if (act.attention == "eager") else ("34" if act.attention == "flash" else "34 [+ 5·a·s/h]")
    if act.checkpointing:
        formula = f"{layers}·2·s·b·h{sp_note} + s·b·h·({base}){sp_note}"
    elif act.checkpointing is None:
        formula = f"{layers}·2·s·b·h{sp_note} + s·b·h·({base}){sp_note} .. {layers}·s·b·h·({base}){sp_note}"
    else:
        formula = f"{layers}·s·b·h·({base}){sp_note}"
    return formula + f"; {s_text}, b={act.micro_batch}, h={act.hidden}, a={act.heads}" + (f", t={t}" if t > 1 else "")


# ---- DeepSpeed's estimators, restated (for comparison and tests) -------------------------------


def zero_model_states(
    total_params: int,
    stage: int,
    num_gpus_per_node: int = 1,
    num_nodes: int = 1,
    *,
    largest_layer_params: int = 0,
    cpu_offload: bool = False,
    cpu_offload_params: bool = False,
    zero_init: bool = True,
    additional_buffer_factor: float = DS_BUFFER_FACTOR,
) -> tuple[int, int]:
    """(cpu bytes per node, device bytes) from this module's terms, for the arguments DeepSpeed's
    ``estimate_zero{2,3}_model_states_mem_needs`` take."""
    setup = ZeroSetup(
        stage=stage,
        offload_optimizer="cpu" if cpu_offload else "none",
        offload_param="cpu" if cpu_offload_params else "none",
        zero_init=zero_init,
    )
    inputs = MemoryInputs(
        params=total_params,
        dp=num_gpus_per_node * num_nodes,
        procs_per_node=num_gpus_per_node,
        largest_layer=(largest_layer_params, largest_layer_params),
        zero=setup,
        load_bytes=4,
        buffer_factor=additional_buffer_factor,
    )
    result = estimate(inputs)
    return int(result.cpu_high), int(result.model_states("high"))
