"""DS412 megatron-world-size: the rule and the helpers only it uses."""

from __future__ import annotations

from dslint.diagnostics import Finding
from dslint.rule import rule
from dslint.launch.args import complete
from dslint.rules.parallelism._common import Grid, assumed_severity, known_world, world_related, megatron_flavor


@rule("DS412", "megatron-world-size", severity="error", target="launch")
def megatron_world_size(plan, context):
    """The world size is not a multiple of Megatron's model-parallel size.

    ## What it checks
    For Megatron-SWIFT (ms-swift 4.x, `megatron sft|pt|rlhf`), Megatron-DeepSpeed and Megatron-LM
    launches whose world size is known:
    - world size divisible by tensor × pipeline × context parallel size (Megatron-DeepSpeed:
      tensor × pipeline × `--ds-sequence-parallel-size`);
    - with expert parallelism, world size divisible by expert-tensor × expert × pipeline
      parallel size (Megatron-Core's expert grid; Megatron-SWIFT's expert-tensor default is 1,
      Megatron-LM's is the tensor size).

    ## Why it matters
    Megatron-Core's `initialize_model_parallel` raises `RuntimeError: world_size (W) is not
    divisible by tensor_model_parallel_size (T) x pipeline_model_parallel_size (P) x
    context_parallel_size (C)` (and the same for the expert grid); Megatron-DeepSpeed asserts
    `world size (W) is not divisible by tensor parallel size (T) times pipeline parallel size
    (P) times seqence parallel size (S)` (megatron/arguments.py validate_args).

    ## Example
    ```sh
    NPROC_PER_NODE=6 megatron sft --model Qwen/Qwen3-8B --tensor_model_parallel_size 4
    ```
    Use instead: `NPROC_PER_NODE=8`, or `--tensor_model_parallel_size 2`.
    """
    flavor = megatron_flavor(plan)
    world = known_world(plan)
    if flavor is None or world is None:
        return
    grid = Grid(plan, flavor)
    if not grid.known(grid.tp, grid.pp, grid.cp):
        return
    if not complete(plan) and not all(v.given for v in (grid.tp, grid.pp, grid.cp)):
        return  # a hidden flag may set what the default stands for
    if flavor == "megatron-deepspeed" and (grid.tp.value > world or grid.pp.value > world // max(grid.tp.value, 1)):
        return  # Megatron-DeepSpeed clamps the sizes to the world first
    if world % grid.model_size:
        yield _model_grid(plan, flavor, grid, world)
        return
    if grid.known(grid.ep, grid.etp) and grid.ep.value > 1:
        yield from _expert_grid(plan, grid, world)


def _model_grid(plan, flavor: str, grid: Grid, world: int) -> Finding:
    """The world does not divide into tensor × pipeline × context (sequence) parallel groups."""
    parts = [v for v in (grid.tp, grid.pp, grid.cp) if v.given]
    anchor = max(parts, key=lambda v: v.value).span if parts else plan.span
    if flavor == "megatron-deepspeed":
        quoted = (f"'world size ({world}) is not divisible by tensor parallel size ({grid.tp.value}) times pipeline parallel size "
                  f"({grid.pp.value}) times seqence parallel size ({grid.cp.value})'")
    else:
        quoted = (f"'world_size ({world}) is not divisible by tensor_model_parallel_size ({grid.tp.value}) x "
                  f"pipeline_model_parallel_size ({grid.pp.value}) x context_parallel_size ({grid.cp.value})'")
    return Finding(
        anchor or plan.span,
        f"world size {world} is not a multiple of tensor {grid.tp.value} × pipeline {grid.pp.value} × "
        f"{'sequence' if flavor == 'megatron-deepspeed' else 'context'} {grid.cp.value} parallel = {grid.model_size}",
        note=f"Megatron stops with {quoted}",
        related=[world_related(plan)] + [v.related(n) for v, n in ((grid.tp, "tensor parallel"), (grid.pp, "pipeline parallel"), (grid.cp, grid.cp_name)) if v.given],
        severity=assumed_severity(plan),
    )


def _expert_grid(plan, grid: Grid, world: int):
    """The world does not divide into Megatron-Core's expert-tensor × expert × pipeline groups."""
    expert = grid.etp.value * grid.ep.value * grid.pp.value
    if world % expert:
        yield Finding(
            grid.ep.span or plan.span,
            f"world size {world} is not a multiple of expert-tensor {grid.etp.value} × expert {grid.ep.value} × pipeline {grid.pp.value} "
            f"parallel = {expert}",
            note=f"Megatron-Core's initialize_model_parallel stops with 'world_size ({world}) is not divisible by "
            f"expert_tensor_model_pipeline_parallel size ({expert})'",
            related=[world_related(plan), grid.etp.related("expert_tensor_parallel_size")],
            severity=assumed_severity(plan),
        )
