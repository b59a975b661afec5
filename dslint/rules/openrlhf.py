"""OpenRLHF rules (DS911-DS914): what OpenRLHF's CLI and the DeepSpeed config it builds refuse at start-up.

They run on launches whose program is established as an OpenRLHF CLI entry point
(``deepspeed --module openrlhf.cli.train_sft ...``; dslint/frameworks/openrlhf.py), whichever
generation of flag spellings the launch uses (``--train_batch_size`` or ``--train.batch_size``).
"""

from __future__ import annotations

from dslint.diagnostics import Edit, Finding, Fix, Related, Severity
from dslint.frameworks import openrlhf
from dslint.rule import rule
from dslint.launch.args import Value, complete, written


def _shown(v: Value, name: str) -> str:
    return f"{written(v.arg)}" if v.arg is not None else f"{name} {v.value} ({v.default_note})"


def _related(*values: tuple[Value, str]) -> list[Related]:
    return [v.related(name) for v, name in values if v.value is not None]


def _severity(plan) -> Severity | None:
    """A warning where hidden arguments (``$EXTRA``) or a default world size may change the numbers."""
    if not complete(plan) or (plan.world_size is not None and plan.world_size.default):
        return Severity.WARNING
    return None


@rule("DS911", "openrlhf-train-batch", severity="error", target="launch", fix="unsafe", facts=("openrlhf_batch",))
def openrlhf_train_batch(plan, context, *, openrlhf_batch):
    """OpenRLHF's global batch must be micro batch × gradient accumulation × the data-parallel processes.

    ## What it checks
    OpenRLHF writes `train_batch_size = --train_batch_size × --ring_attn_size ×
    --ds_tensor_parallel_size` and `train_micro_batch_size_per_gpu = --micro_train_batch_size`
    into the DeepSpeed config it builds (openrlhf/utils/deepspeed/deepspeed.py:268-273 in 0.9.0;
    `--train.batch_size` / `--train.micro_batch_size` from 0.10.2). DeepSpeed derives the
    accumulation as `train_batch_size // micro // world size` and asserts the product
    (deepspeed/runtime/config.py:590-605 `_batch_assertion`). So `--train_batch_size` must be a
    multiple of micro batch × data-parallel size (world / (ring × tensor parallel)), and at
    least one of them. The world size is the launcher's (`--num_gpus`, `--include`, a hostfile);
    for `train_ppo_ray` the actor's `--actor_num_nodes × --actor_num_gpus_per_node`. Not judged
    with `--use_dynamic_batch`, or with DeepSpeed AutoTP (`--ds_tensor_parallel_size` > 1).

    ## Why it matters
    `AssertionError: Check batch related parameters. train_batch_size is not equal to
    micro_batch_per_gpu * gradient_acc_step * world_size 100 != 2 * 6 * 8` when the model is
    handed to `deepspeed.initialize`, after it has been loaded.

    ## Example
    ```sh
    deepspeed --num_gpus 8 --module openrlhf.cli.train_sft --train_batch_size 100 --micro_train_batch_size 2 --zero_stage 2 --bf16
    ```

    ## Use instead
    `--train_batch_size 96` (2 × 6 × 8) or `112`.

    ## Fix safety
    Unsafe: the fix sets `--train_batch_size` to the nearest multiple of micro batch ×
    data-parallel size, which changes the optimizer's batch (and so the learning dynamics).
    """
    found = openrlhf_batch
    if found is None or found.failure is None:
        return
    dp = found.world // found.ring.value if found.world % found.ring.value == 0 else None
    step = found.micro.value * dp if dp else None
    parts = f" × ring_attn_size {found.ring.value}" if found.ring.value > 1 else ""
    fix = None
    if step and found.batch.arg is not None and found.batch.arg.span is not None and not found.batch.arg.assumed:
        nearest = max(step, round(found.batch.value / step) * step)
        span = found.batch.arg.span
        if span.source.text[span.start:span.end] == str(found.batch.value):
            fix = Fix.unsafe(f"Set the global batch to {nearest}", Edit.replace(span, str(nearest)))
    valid = f"a multiple of {step} (micro {found.micro.value} × data parallel {dp}) would do" if step else None
    yield Finding(
        found.batch.span or found.micro.span or plan.span,
        f"{_shown(found.batch, 'train_batch_size')}{parts} is not micro batch {found.micro.value} × gradient accumulation × "
        f"{found.world} processes",
        note=found.failure,
        help=valid,
        related=[*_related((found.batch, "train_batch_size"), (found.micro, "micro_train_batch_size")),
                 Related(f"world size {found.world}: {found.world_origin}", found.world_span)],
        severity=_severity(plan), fix=fix,
    )


@rule("DS912", "openrlhf-ring-attention", severity="error", target="launch")
def openrlhf_ring_attention(plan, context):
    """OpenRLHF ring attention without sample packing, or with a group size that does not divide the processes.

    ## What it checks
    - `train_sft`, `train_dpo` and `train_rm` with `--ring_attn_size` above 1 (`--ds.ring_attn_size`
      from 0.10.2) need `--packing_samples`: they assert it (openrlhf/cli/train_sft.py:277-278 in
      0.9.0, the same from 0.6.0 to 0.11.0; `train_ppo_ray` turns packing on with a warning).
    - the ring groups must tile the processes: OpenRLHF builds its device mesh as
      `(world // ring // tp, ring, tp)` (deepspeed.py `setup_distributed`), so
      `--ring_attn_size × --ds_tensor_parallel_size` must divide the world size.

    ## Why it matters
    `AssertionError: packing_samples must be enabled when using ring attention` before training
    starts; a mesh that leaves processes out breaks the ring groups.

    ## Example
    ```sh
    deepspeed --num_gpus 8 --module openrlhf.cli.train_sft --ring_attn_size 2 --flash_attn --bf16
    ```

    ## Use instead
    `--ring_attn_size 2 --packing_samples`.

    ## Fix safety
    No fix: packing changes what a sample is in the loss.
    """
    name = openrlhf.entry(plan)
    if name is None:
        return
    ring, tp = openrlhf.value(plan, "ring"), openrlhf.value(plan, "tp")
    if not isinstance(ring.value, int) or ring.value <= 1:
        return
    packing = openrlhf.value(plan, "packing", False)
    if name in openrlhf.RING_NEEDS_PACKING and not packing.value and complete(plan):
        yield Finding(
            ring.span or plan.span,
            f"{_shown(ring, 'ring_attn_size')} without --packing_samples",
            note=f"OpenRLHF {name} asserts 'packing_samples must be enabled when using ring attention'",
            related=_related((ring, "ring_attn_size")),
        )
    world = plan.world_size.value if plan.world_size is not None and isinstance(plan.world_size.value, int) else None
    if name in openrlhf.DEEPSPEED_ENTRIES and world and isinstance(tp.value, int) and world % (ring.value * tp.value):
        yield Finding(
            ring.span or plan.span,
            f"{_shown(ring, 'ring_attn_size')} × tensor parallel {tp.value} does not divide the {world} processes",
            note=f"OpenRLHF's (data, ring, tensor) device mesh of {world // (ring.value * tp.value)} × {ring.value} × {tp.value} "
            f"leaves {world % (ring.value * tp.value)} out",
            related=[*_related((ring, "ring_attn_size"), (tp, "ds_tensor_parallel_size")),
                     Related(f"world size {world}: {plan.world_size.origin}", plan.world_size.span)],
            severity=_severity(plan),
        )


@rule("DS913", "openrlhf-deepspeed-flags", severity="error", target="launch")
def openrlhf_deepspeed_flags(plan, context):
    """The ZeRO stage, precision and offload flags OpenRLHF turns into its DeepSpeed config, where they cannot work.

    ## What it checks
    OpenRLHF builds the DeepSpeed config from its flags (deepspeed_utils.py `get_train_ds_config`):
    - `--zero_stage` (`--ds.zero_stage`) becomes `zero_optimization.stage`, which DeepSpeed
      accepts only as 0-3 (ZeroStageEnum);
    - `--adam_offload` sets `offload_optimizer.device: cpu` and makes OpenRLHF build
      `DeepSpeedCPUAdam` (deepspeed.py:139 in 0.9.0); at ZeRO stage 0 nothing moves the
      parameters to the CPU, and its first step asserts `CPUAdam param is on cuda:0 and must be
      'cpu'` (deepspeed/ops/adam/cpu_adam.py:148) — a warning, as DS248;
    - `--ds_tensor_parallel_size` above 1 (DeepSpeed AutoTP) needs bf16: OpenRLHF asserts
      `BF16 is required for tensor parallel training` (deepspeed.py:73-75 in 0.9.0; 0.11.0
      checks `param_dtype == "bf16"`), so an explicit `--param_dtype fp16` (`--data_type`,
      `--ds.param_dtype`) stops it.

    ## Why it matters
    Each stops the job at start-up or at its first optimizer step, after the model is loaded.

    ## Example
    ```sh
    deepspeed --num_gpus 8 --module openrlhf.cli.train_sft --zero_stage 0 --adam_offload --bf16
    ```

    ## Use instead
    `--zero_stage 2 --adam_offload` (or no offload at stage 0).

    ## Fix safety
    No fix: raising the stage and dropping the offload both change the memory the job needs.
    """
    name = openrlhf.entry(plan)
    if name is None:
        return
    zero = openrlhf.value(plan, "zero")
    if zero.given and isinstance(zero.value, int) and zero.value not in (0, 1, 2, 3):
        yield Finding(
            zero.span or plan.span,
            f"{_shown(zero, 'zero_stage')} is not a ZeRO stage (0-3)",
            note=f"DeepSpeed refuses zero_optimization.stage {zero.value}",
            related=_related((zero, "zero_stage")),
        )
    offload = openrlhf.value(plan, "offload", False)
    if offload.value and zero.value == 0:
        yield Finding(
            offload.arg.name_span or offload.span or plan.span,
            "--adam_offload at ZeRO stage 0",
            note="OpenRLHF builds DeepSpeedCPUAdam, but without ZeRO the parameters stay on the GPU and its first step asserts "
            "'CPUAdam param is on cuda:0 and must be 'cpu''",
            related=_related((zero, "zero_stage"), (offload, "adam_offload")),
            severity=Severity.WARNING,
        )
    tp = openrlhf.value(plan, "tp")
    dtype = openrlhf.value(plan, "dtype")
    if isinstance(tp.value, int) and tp.value > 1 and isinstance(dtype.value, str) and dtype.value.lower() not in ("bf16", "bfloat16"):
        yield Finding(
            dtype.span or plan.span,
            f"{_shown(dtype, 'param_dtype')} with {_shown(tp, 'ds_tensor_parallel_size')}",
            note="OpenRLHF asserts 'BF16 is required for tensor parallel training'",
            related=_related((tp, "ds_tensor_parallel_size"), (dtype, "param_dtype")),
        )


@rule("DS914", "openrlhf-colocated-vllm", severity="error", target="launch")
def openrlhf_colocated_vllm(plan, context):
    """OpenRLHF PPO with all models colocated: the vLLM engines must cover exactly the actor's GPUs.

    ## What it checks
    `openrlhf.cli.train_ppo_ray` with `--colocate_all_models` (`--train.colocate_all` from
    0.10.2), not `--async_train`, and vLLM engines: `--actor_num_nodes ×
    --actor_num_gpus_per_node` must equal `--vllm_num_engines × --vllm_tensor_parallel_size`
    (openrlhf/cli/train_ppo_ray.py:45-53 in 0.9.0, the same from 0.6.0 to 0.11.0). The defaults
    are 1 node of 8 GPUs and a tensor parallel size of 1.

    ## Why it matters
    `AssertionError: actor_num_nodes * actor_num_gpus_per_node must be equal to vllm_num_engines
    * vllm_tensor_parallel_size, got 8 and 4`, once Ray has started.

    ## Example
    ```sh
    python3 -m openrlhf.cli.train_ppo_ray --actor_num_gpus_per_node 8 --vllm_num_engines 2 --vllm_tensor_parallel_size 2 --colocate_all_models
    ```

    ## Use instead
    `--vllm_num_engines 4 --vllm_tensor_parallel_size 2` (or 8 engines of 1).

    ## Fix safety
    No fix: the engines' size follows the model.
    """
    if openrlhf.entry(plan) != "train_ppo_ray":
        return
    colocate, asynchronous = openrlhf.value(plan, "colocate", False), openrlhf.value(plan, "async", False)
    engines = openrlhf.value(plan, "vllm_engines")
    if not colocate.value or asynchronous.value or not isinstance(engines.value, int) or engines.value < 1:
        return
    nodes, gpus = openrlhf.value(plan, "actor_nodes", 1), openrlhf.value(plan, "actor_gpus", 8)
    vllm_tp = openrlhf.value(plan, "vllm_tp", 1)
    if not all(isinstance(v.value, int) for v in (nodes, gpus, vllm_tp)):
        return
    actor, vllm = nodes.value * gpus.value, engines.value * vllm_tp.value
    if actor == vllm:
        return
    yield Finding(
        engines.span or plan.span,
        f"{engines.value} vLLM engine(s) × tensor parallel {vllm_tp.value} = {vllm} GPUs, but the colocated actor has {actor}",
        note=f"the actor has {nodes.value} node(s) × {gpus.value} GPUs; OpenRLHF asserts 'actor_num_nodes * actor_num_gpus_per_node "
        f"must be equal to vllm_num_engines * vllm_tensor_parallel_size, got {actor} and {vllm}'",
        related=_related((nodes, "actor_num_nodes"), (gpus, "actor_num_gpus_per_node"), (engines, "vllm_num_engines"),
                         (vllm_tp, "vllm_tensor_parallel_size"), (colocate, "colocate_all_models")),
        severity=None if complete(plan) else Severity.WARNING,
    )
