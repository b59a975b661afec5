"""OpenRLHF: its CLI entry points, the DeepSpeed config they build, and their batch arithmetic.

How it launches: ``deepspeed --module openrlhf.cli.train_sft ...`` (also ``train_dpo``,
``train_rm``, ``train_kto``, ``train_prm``, ``train_kd``: one DeepSpeed process per GPU), often
with the arguments built in a here-document string first; the PPO trainer
``openrlhf.cli.train_ppo_ray`` runs under Ray and places its actor on
``actor_num_nodes × actor_num_gpus_per_node`` GPUs. There is no config file: the flags are the
config, and the strategy turns them into a DeepSpeed config dict
(openrlhf/utils/deepspeed/deepspeed.py ``get_ds_train_config``, deepspeed_utils.py
``get_train_ds_config``):

- ``zero_optimization.stage`` = ``--zero_stage`` (default 2); ``offload_optimizer.device`` =
  ``cpu`` with ``--adam_offload``, and the optimizer is then ``DeepSpeedCPUAdam``
  (deepspeed.py:139 in 0.9.0), else ``FusedAdam``;
- ``bf16.enabled`` = ``--bf16`` (0.9.1 and before, off by default), later the dtype flag
  (``--data_type``, ``--param_dtype``, ``--ds.param_dtype``; bf16 by default);
- ``train_micro_batch_size_per_gpu`` = ``--micro_train_batch_size``; ``train_batch_size`` =
  ``--train_batch_size × ring_attn_size × ds_tensor_parallel_size`` (deepspeed.py:268-273 in
  0.9.0), and DeepSpeed derives the accumulation as ``train_batch_size // (micro × world)`` and
  asserts their product (deepspeed/runtime/config.py ``_batch_assertion``).

The flags changed spelling in 0.10.2 (``--train.batch_size``, ``--train.micro_batch_size``,
``--ds.zero_stage``, ...): both spellings are read, and the defaults used here (batch 128, micro
batch 8, ZeRO stage 2, ring attention 1, tensor parallel 1) are the same in every release from
0.5 to 0.11 for the non-PPO entry points.
"""

from __future__ import annotations

from dataclasses import dataclass

from dslint.frameworks import Check, FrameworkBatch, Quantity, position, program_name
from dslint.launch.args import Value, as_bool, as_text, integer

SPELLINGS = {
    "batch": ("train_batch_size", "train.batch_size"),
    "micro": ("micro_train_batch_size", "train.micro_batch_size"),
    "zero": ("zero_stage", "ds.zero_stage"),
    "ring": ("ring_attn_size", "ds.ring_attn_size"),
    "tp": ("ds_tensor_parallel_size", "ds.tensor_parallel_size"),
    "packing": ("packing_samples", "ds.packing_samples"),
    "offload": ("adam_offload", "ds.adam_offload"),
    "dtype": ("param_dtype", "ds.param_dtype", "data_type"),
    "bf16": ("bf16",),
    "dynamic": ("use_dynamic_batch", "train.dynamic_batch_enable"),
    "actor_nodes": ("actor_num_nodes", "actor.num_nodes"),
    "actor_gpus": ("actor_num_gpus_per_node", "actor.num_gpus_per_node"),
    "vllm_engines": ("vllm_num_engines", "vllm.num_engines"),
    "vllm_tp": ("vllm_tensor_parallel_size", "vllm.tensor_parallel_size"),
    "colocate": ("colocate_all_models", "train.colocate_all"),
    "async": ("async_train", "train.async_enable"),
}
#: The entry points that run one DeepSpeed process per launched process and take these flags.
DEEPSPEED_ENTRIES = ("train_sft", "train_dpo", "train_rm", "train_kto", "train_prm", "train_kd")
RING_NEEDS_PACKING = ("train_sft", "train_dpo", "train_rm")  # they assert it; train_ppo_ray turns packing on
DEFAULTS = {"batch": 128, "micro": 8, "zero": 2, "ring": 1, "tp": 1}
_NOTE = "OpenRLHF's default (the same in 0.5-0.11)"


def entry(plan) -> str | None:
    """The OpenRLHF CLI entry point a launch runs (``train_sft``), when the program is established as OpenRLHF's."""
    name = program_name(plan, "openrlhf")
    if name is None:
        return None
    if name.endswith(".py"):
        name = name[:-3].replace("/", ".")
    head, _, last = name.rpartition(".")
    if not head.endswith("openrlhf.cli"):
        return None
    return last


def value(plan, key: str, default=None) -> Value:
    names = SPELLINGS[key]
    if key in DEFAULTS and default is None:
        return integer(plan, *names, default=DEFAULTS[key], note=_NOTE)
    if key in ("zero", "ring", "tp", "actor_nodes", "actor_gpus", "vllm_engines", "vllm_tp", "batch", "micro"):
        return integer(plan, *names, default=default, note="OpenRLHF's default" if default is not None else None)
    arg = plan.arg(*names)
    if arg is None:
        return Value(default, None, "OpenRLHF's default" if default is not None else None)
    if key in ("packing", "offload", "bf16", "dynamic", "colocate", "async"):
        return Value(True if arg.value is True else as_bool(arg.value), arg)
    return Value(as_text(arg.value), arg)


@dataclass(frozen=True)
class Batch:
    """What DeepSpeed is given and derives for one OpenRLHF launch."""

    world: int
    world_origin: str
    batch: Value
    micro: Value
    ring: Value
    tp: Value
    deepspeed_batch: int  # --train_batch_size × ring × tp
    accumulation: int  # deepspeed_batch // (micro × world), as DeepSpeed and OpenRLHF compute it
    failure: str | None  # DeepSpeed's assertion, when it fails
    judged: bool = True  # False with AutoTP (tp > 1): DeepSpeed's world for the check is then its own mesh's
    world_span: object = None  # where the world size was written (the launcher's flag), when it was


def batch(plan) -> Batch | None:
    """The DeepSpeed batch triple an OpenRLHF launch makes, with DeepSpeed's verdict on it."""
    name = entry(plan)
    if name is None:
        return None
    if name == "train_ppo_ray":
        micro = value(plan, "micro")
        if not micro.given:
            return None  # its default changed (4 in 0.9, 1 in 0.11)
        nodes, gpus = value(plan, "actor_nodes", 1), value(plan, "actor_gpus", 8)
        if not isinstance(nodes.value, int) or not isinstance(gpus.value, int):
            return None
        world, origin = nodes.value * gpus.value, f"the actor's {nodes.value} node(s) × {gpus.value} GPUs"
        bsz, span = value(plan, "batch", 128), (gpus.span or nodes.span)
    elif name in DEEPSPEED_ENTRIES:
        size = plan.world_size
        if size is None or not isinstance(size.value, int):
            return None
        world, origin, micro, bsz, span = size.value, size.origin, value(plan, "micro"), value(plan, "batch"), size.span
    else:
        return None
    ring, tp = value(plan, "ring"), value(plan, "tp")
    dynamic = value(plan, "dynamic")
    if dynamic.value:
        return None  # micro batch 1, accumulation 1, no train_batch_size
    if not all(isinstance(v.value, int) and v.value >= 1 for v in (bsz, micro, ring, tp)) or world < 1:
        return None
    ds_batch = bsz.value * ring.value * tp.value
    accumulation = ds_batch // micro.value // world
    failure = None
    if tp.value > 1:
        return Batch(world, origin, bsz, micro, ring, tp, ds_batch, accumulation, None, judged=False, world_span=span)
    if accumulation < 1:
        failure = "DeepSpeed asserts 'Gradient accumulation steps: 0 has to be greater than 0'"
    elif accumulation * micro.value * world != ds_batch:
        failure = (f"DeepSpeed asserts 'train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size "
                   f"{ds_batch} != {micro.value} * {accumulation} * {world}'")
    return Batch(world, origin, bsz, micro, ring, tp, ds_batch, accumulation, failure, world_span=span)


def _quantity(v: Value, key: str, meaning: str) -> Quantity:
    if v.arg is not None:
        path, line = position(v.arg.span)
        return Quantity(key, meaning, v.value, f"{key} at {path}:{line}" if line else v.arg.origin, path, line)
    return Quantity(key, meaning, v.value, v.default_note or "not set", None, None, True)


def explain(plan, settings=None) -> FrameworkBatch | None:
    name = entry(plan)
    if name is None:
        return None
    out = FrameworkBatch("openrlhf", f"OpenRLHF {name}", "")
    zero, offload = value(plan, "zero"), value(plan, "offload", False)
    dtype, bf16 = value(plan, "dtype"), value(plan, "bf16")
    found = batch(plan)
    if found is not None:
        out.factors = [_quantity(found.batch, "--train_batch_size", "samples per optimizer step"),
                       _quantity(found.micro, "--micro_train_batch_size", "samples per GPU per forward/backward pass"),
                       _quantity(found.ring, "--ring_attn_size", "GPUs that share one sequence (ring attention)"),
                       _quantity(found.tp, "--ds_tensor_parallel_size", "GPUs that share one layer (DeepSpeed AutoTP)"),
                       Quantity("world size", "processes", found.world, found.world_origin)]
        out.world = out.factors[-1]
        if found.batch.value is not None:
            out.global_batch = Quantity("--train_batch_size", "samples per optimizer step", found.batch.value, "--train_batch_size")
        out.derived = [
            Quantity("data parallel", "model replicas", found.world // (found.ring.value * found.tp.value) if found.world % (found.ring.value * found.tp.value) == 0 else None,
                     f"world {found.world} / (ring {found.ring.value} × tensor parallel {found.tp.value})"),
            Quantity("train_batch_size (DeepSpeed)", "what OpenRLHF writes into the DeepSpeed config", found.deepspeed_batch,
                     f"--train_batch_size {found.batch.value} × ring {found.ring.value} × tensor parallel {found.tp.value}"),
            Quantity("gradient_accumulation_steps", "what DeepSpeed derives", found.accumulation,
                     f"{found.deepspeed_batch} // micro {found.micro.value} // world {found.world}"),
        ]
        out.checks.append(Check(found.failure is None if found.judged else None, found.failure or
                                f"{found.deepspeed_batch} = micro {found.micro.value} × accumulation {found.accumulation} × world {found.world}"))
        dp = found.world // (found.ring.value * found.tp.value) if found.world % (found.ring.value * found.tp.value) == 0 else "?"
        if found.failure:
            out.summary = f"{found.batch.value} samples per step are not micro {found.micro.value} × accumulation × data parallel {dp}"
        else:
            out.summary = f"{found.batch.value} samples per step = micro {found.micro.value} × accumulation {found.accumulation} × data parallel {dp}"
    else:
        out.summary = "the world size or the batch flags are unknown"
    out.notes.append("OpenRLHF builds its DeepSpeed config from these flags (no config file): stage, offload and bf16 below")
    out.factors.append(_quantity(zero, "--zero_stage", "zero_optimization.stage in the DeepSpeed config it builds"))
    out.factors.append(_quantity(offload, "--adam_offload", "offload_optimizer.device cpu and DeepSpeedCPUAdam"))
    if dtype.value is not None:
        out.factors.append(_quantity(dtype, "--param_dtype", "bf16.enabled when bf16"))
    elif bf16.given:
        out.factors.append(_quantity(bf16, "--bf16", "bf16.enabled"))
    else:
        out.notes.append("bf16: OpenRLHF 0.9.1 and before train in fp32 without --bf16; later releases default to bf16")
    return out


__all__ = ["Batch", "DEEPSPEED_ENTRIES", "RING_NEEDS_PACKING", "SPELLINGS", "batch", "entry", "explain", "value"]
