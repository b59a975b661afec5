"""Memory per device against the device's memory: the estimate of ``dslint explain``."""

from __future__ import annotations

from dataclasses import replace

from typing import TYPE_CHECKING

from dslint.diagnostics import Finding, Related, Severity
from dslint.rule import rule

if TYPE_CHECKING:
    from dslint.explain import Explanation
    from dslint.explain.memory import MemoryInputs


def _load() -> None:
    """Import the estimator when the rule first runs: loading the rules (every dslint start) stays cheap."""
    global GiB, MemoryInputs, estimate_for, explain_plan, options_from_settings, show_range
    from dslint.explain import estimate_for, explain_plan, options_from_settings
    from dslint.explain.memory import GiB, MemoryInputs, show_range

HEADROOM = 0.9  # a cheaper setup must leave 10% for the CUDA context, NCCL and fragmentation


@rule("DS801", "memory-fit", severity="warning", target="launch")
def memory_fit(plan, context):
    """The estimated memory per device exceeds the device's memory.

    ## What it checks
    When the device memory is known (the `hardware` setting, e.g. `a100-80gb`, `h100`,
    `ascend-910b`, or `--device-memory 80GB`) and the model's size is known (a local
    `config.json` beside the model path, or a recognised name such as `Qwen2.5-7B` or
    `Llama-3.1-70B`), dslint estimates each device's memory as `dslint explain` shows it:

    - model states by ZeRO stage, counted as DeepSpeed's own estimators count them
      (`estimate_zero2_model_states_mem_needs`, `estimate_zero3_model_states_mem_needs`):
      16-bit weights and gradients, fp32 gradients, master weights and Adam moments,
      partitioned over the data-parallel size from stage 1 (optimizer states), 2 (gradients)
      and 3 (weights), moved to CPU or NVMe by `offload_optimizer` / `offload_param`;
    - DeepSpeed's buffers: the gradient reduce bucket(s) (`reduce_bucket_size`, two with
      `overlap_comm` at stages 1-2), ZeRO-3's 16-bit gradient partition and gathered
      parameters (at most `stage3_max_live_parameters`);
    - activations when the sequence length is known (Korthikanti et al. 2022: per layer
      `s·b·h·(34 + 5·a·s/h)` bytes without recomputation, `2·s·b·h` with full activation
      checkpointing plus one layer's working set; flash/SDPA attention stores no `a·s²`
      scores), and the fp32 logits of the loss (`4·s·b·v`).

    A warning when even the low end of the estimate exceeds the device memory: it names the
    largest terms and the cheapest change that fits, tried in this order: the next ZeRO stage
    up to 2, activation checkpointing, a smaller micro batch with more accumulation (the
    global batch stays the same), ZeRO-3, optimizer offload, parameter offload.

    Training configs that no launch script reaches are judged only when they name a
    DeepSpeed config (their launcher may add FSDP or DeepSpeed), and only with a world size
    (`--world-size` or the `world-size` setting).

    An info when the launch fits and a cheaper setup (a lower ZeRO stage, no offload) would
    also fit with 10% to spare: ZeRO-3 and offload cost throughput.

    ## Why it matters
    An out-of-memory error comes after the queue wait, the model download and the model
    load, often at the first backward pass or the first optimizer step.

    ## Example
    ```bash
    NPROC_PER_NODE=8 swift sft --model Qwen/Qwen2.5-72B-Instruct --train_type full --torch_dtype bfloat16 --per_device_train_batch_size 4 --max_length 8192 --deepspeed zero2
    ```
    On 8 × 80 GB this needs about 355 GiB per device: ZeRO-2 keeps all 135 GiB of 16-bit
    weights on every device.
    Use instead what dslint proposes, micro batch 2 with accumulation 2 (the same global
    batch) and ZeRO-3 with the optimizer offloaded to CPU, about 57 GiB per device:
    `--per_device_train_batch_size 2 --gradient_accumulation_steps 2 --deepspeed ds_z3.json` with
    ```json
    {"bf16": {"enabled": "auto"}, "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}}}
    ```
    (ms-swift's `zero3_offload` preset offloads the parameters as well: it fits too, with less
    throughput.)

    ## Limits
    An estimate, not a measurement: allocator fragmentation, the CUDA context, NCCL buffers,
    kernels' workspaces and framework-specific buffers are not counted; MoE activations are
    counted as for a dense model of the same hidden size.
    """
    settings = context.settings
    if getattr(settings, "device_memory", None) is None and getattr(settings, "hardware", None) is None:
        return  # no device memory to compare with (what options_from_settings would find); skip the import
    _load()
    options = options_from_settings(context.settings)
    if options.device_memory is None and options.hardware is None:
        return
    explanation = explain_plan(plan, options)
    memory = explanation.memory
    if memory is None or memory.device_memory is None or explanation.batch.data_parallel is None:
        return  # without the data-parallel size nothing is known to be partitioned
    if explanation.zero.engine == "ddp" and plan.launcher == "yaml":
        return  # a config no script launches may run under FSDP or a DeepSpeed config the launcher adds
    capacity = memory.device_memory.value
    est = memory.estimate
    related = _related(explanation)
    anchor = _anchor(plan)
    if est.device_low > capacity:
        largest = ", ".join(f"{t.label} {show_range(t.low, t.high)}" for t in est.largest(3))
        change = cheapest_fix(explanation, capacity)
        advice = f"the cheapest change that fits: {change}" if change else "no single setting change fits: use more devices (a larger data-parallel size) or a smaller model"
        yield Finding(
            anchor,
            f"estimated {show_range(est.device_low, est.device_high)} per device exceeds the {capacity / GiB:.0f} GiB of device memory",
            related=related,
            note=f"{_model_text(explanation)}; largest: {largest}",
            help=advice,
        )
        return
    if est.device_high <= capacity:
        cheaper = cheaper_setup(explanation, capacity)
        if cheaper:
            yield Finding(
                anchor,
                f"estimated {show_range(est.device_low, est.device_high)} per device of {capacity / GiB:.0f} GiB: a cheaper setup fits too",
                related=related,
                note=_model_text(explanation),
                help=f"{cheaper} would also fit with 10% to spare, and costs less throughput",
                severity=Severity.INFO,
            )


def _model_text(e: Explanation) -> str:
    from dslint.evidence.models import format_count

    shape = e.model.shape
    parts = [f"{shape.name}, {format_count(shape.params)} parameters"]
    if e.zero.engine == "deepspeed" and e.zero.stage is not None:
        parts.append(f"ZeRO-{e.zero.stage.value}")
    if e.batch.data_parallel is not None:
        parts.append(f"data parallel {e.batch.data_parallel.value}")
    return ", ".join(parts)


def _anchor(plan):
    if plan.deepspeed is not None and plan.deepspeed.span is not None and not plan.deepspeed.span.source.virtual:
        return plan.deepspeed.span
    command = getattr(plan.command, "command", None)
    name = getattr(command, "name", None)
    if name is not None and getattr(name, "span", None) is not None:
        return name.span
    mapping = plan.origin.mapping
    if mapping is not None and mapping.entries:
        return mapping.entries[0].key_span
    return plan.span


def _related(e: Explanation) -> list[Related]:
    out = []
    model = e.model
    out.append(Related(f"model {model.shape.name}: {model.shape.source}", None, origin=model.shape.source))
    memory = e.memory
    out.append(Related(f"device memory {memory.device_memory.value / GiB:.0f} GiB from {memory.device_memory.origin}", None, origin=memory.device_memory.origin))
    for value, text in ((e.batch.micro_batch, "micro batch"), (e.zero.stage, "ZeRO stage")):
        if value is not None and value.path is not None and not value.path.startswith("<"):
            span = _span_at(e, value)
            out.append(Related(f"{text} {value.value} ({value.origin})", span))
    return out


def _span_at(e: Explanation, value):
    """The span of a value in the plan's documents, when it is one of the plan's arguments."""
    plan = e.plan
    for arg in plan.args.values():
        if arg.span is not None and arg.span.source.path == value.path and arg.span.source.position(arg.span.start)[0] == value.line:
            return arg.span
    return None


# ---- what would fit -----------------------------------------------------------------------------


def _fits(inputs: MemoryInputs, capacity: float, margin: float = 1.0) -> bool:
    return estimate_for(inputs).device_high <= capacity * margin


def _with_zero(inputs: MemoryInputs, **changes) -> MemoryInputs:
    return replace(inputs, zero=replace(inputs.zero, **changes))


def _with_activations(inputs: MemoryInputs, **changes) -> MemoryInputs:
    if inputs.activations is None:
        return inputs
    return replace(inputs, activations=replace(inputs.activations, **changes))


def candidates(e: Explanation) -> list[tuple[int, str, list]]:
    """The changes that lower memory: (throughput cost rank, description, variants), where each
    variant is (text, function from inputs to changed inputs). Variants of one change (micro
    batch sizes) are tried largest first."""
    inputs = e.memory.inputs
    zero = inputs.zero
    out: list[tuple[int, str, list]] = []
    deepspeed = zero.scheme == "deepspeed"
    if deepspeed and zero.stage < 2:
        out.append((1, "stage2", [(f"ZeRO stage 2 (partitions gradients and optimizer states over {inputs.dp} devices)", lambda i: _with_zero(i, stage=max(i.zero.stage, 2)))]))
    if zero.scheme == "ddp":
        def to_deepspeed(stage):
            return lambda i: replace(i, mixed_precision=True, weight_bytes=min(i.weight_bytes, 2), zero=replace(i.zero, scheme="deepspeed", stage=stage))

        out.append((1, "stage2", [("DeepSpeed ZeRO-2 (--deepspeed with zero_optimization.stage 2)", to_deepspeed(2))]))
        out.append((4, "stage3", [("DeepSpeed ZeRO-3 (--deepspeed with zero_optimization.stage 3)", to_deepspeed(3))]))
    act = inputs.activations
    micro = e.batch.micro_batch.value if e.batch.micro_batch is not None else None
    gas = e.batch.accumulation.value if e.batch.accumulation is not None else None
    if act is not None and isinstance(micro, int) and micro > 1 and isinstance(gas, int):
        variants = []
        for smaller in range(micro - 1, 0, -1):
            if micro % smaller == 0:
                variants.append((
                    f"micro batch {smaller} with accumulation {gas * (micro // smaller)} (the global batch stays {_fmt(e.batch.global_batch)})",
                    (lambda size: lambda i: _with_activations(i, micro_batch=size))(smaller),
                ))
        out.append((2, "micro", variants))
    if act is not None and act.checkpointing is not True:
        out.append((3, "checkpointing", [("activation checkpointing (--gradient_checkpointing true; about a third more compute)", lambda i: _with_activations(i, checkpointing=True))]))
    if deepspeed and zero.stage < 3:
        out.append((4, "stage3", [("ZeRO stage 3 (partitions the weights too; more communication)", lambda i: _with_zero(i, stage=3))]))
    if deepspeed and zero.offload_optimizer == "none":
        out.append((6, "offload_optimizer", [("optimizer offload to CPU (offload_optimizer.device cpu; slower steps)", lambda i: _with_zero(i, stage=max(i.zero.stage, 1), offload_optimizer="cpu"))]))
    if (deepspeed or zero.scheme == "ddp") and zero.offload_param == "none":
        out.append((10, "offload_param", [("parameter offload to CPU (ZeRO-3 offload_param.device cpu; much slower)", lambda i: _with_zero(i, stage=3, offload_param="cpu"))]))
    return out


def cheapest_fix(e: Explanation, capacity: float) -> str | None:
    """The set of changes with the lowest total cost rank whose estimate fits."""
    from itertools import combinations

    options = candidates(e)
    best = None
    for size in range(1, len(options) + 1):
        for subset in combinations(options, size):
            cost = sum(option[0] for option in subset)
            if best is not None and cost >= best[0]:
                continue
            found = _apply(e.memory.inputs, list(subset), capacity)
            if found is not None:
                best = (cost, found)
    if best is None:
        return None
    texts, inputs = best[1]
    result = estimate_for(inputs)
    text = texts[0] if len(texts) == 1 else " + ".join(t.split(" (")[0] for t in texts)
    return f"{text}: {show_range(result.device_low, result.device_high)}"


def _apply(inputs: MemoryInputs, subset: list, capacity: float):
    """(texts, inputs) of the subset's changes applied in order, trying each change's variants
    (largest micro batch first); None when no variant fits."""
    if not subset:
        return ([], inputs) if _fits(inputs, capacity) else None
    (_, _, variants), rest = subset[0], subset[1:]
    for text, change in variants:
        found = _apply(change(inputs), rest, capacity)
        if found is not None:
            return [text] + found[0], found[1]
    return None


def _fmt(value) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def cheaper_setup(e: Explanation, capacity: float) -> str | None:
    inputs = e.memory.inputs
    zero = inputs.zero
    if zero.scheme != "deepspeed":
        return None
    if zero.offload_param != "none":
        changed = _with_zero(inputs, offload_param="none")
        if _fits(changed, capacity, HEADROOM):
            return f"ZeRO-{zero.stage} without parameter offload ({show_range(estimate_for(changed).device_low, estimate_for(changed).device_high)})"
    if zero.offload_optimizer != "none":
        changed = _with_zero(inputs, offload_optimizer="none", offload_param="none")
        if _fits(changed, capacity, HEADROOM):
            return f"ZeRO-{zero.stage} without offload ({show_range(estimate_for(changed).device_low, estimate_for(changed).device_high)})"
        return None
    if zero.stage == 3:
        changed = _with_zero(inputs, stage=2)
        if _fits(changed, capacity, HEADROOM):
            return f"ZeRO-2 ({show_range(estimate_for(changed).device_low, estimate_for(changed).device_high)})"
    return None
