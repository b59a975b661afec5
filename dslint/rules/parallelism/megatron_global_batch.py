"""DS413 megatron-global-batch: the rule and the helpers only it uses."""

from __future__ import annotations

from dslint.diagnostics import Finding, Related
from dslint.rule import rule
from dslint.launch.args import complete
from dslint.rules.parallelism._common import Grid, assumed_severity, known_world, world_related, megatron_flavor


@rule("DS413", "megatron-global-batch", severity="error", target="launch")
def megatron_global_batch(plan, context):
    """Megatron's global batch is not a multiple of micro batch × data-parallel size.

    ## What it checks
    Data-parallel size = world size / (tensor × pipeline × context parallel); the global batch
    size must be a positive multiple of micro batch × data-parallel size. Megatron-SWIFT's
    defaults apply when the flags are absent (`micro_batch_size` 1, `global_batch_size` 16,
    swift/megatron/arguments/megatron_args.py:482-483); Megatron-DeepSpeed and Megatron-LM
    derive the global batch when it is not given, so only an explicit one is judged.

    ## Why it matters
    Megatron-SWIFT raises `ValueError: global batch size (G) is not divisible by micro batch size
    (m) times data parallel size (d).` or `global_batch_size must be >= data_parallel_size *
    micro_batch_size` (megatron_args.py:943-959); Megatron's microbatch calculator asserts the
    same (`global batch size (G) is not divisible by micro batch size (m) times data parallel
    size (d)`).

    ## Example
    ```sh
    NPROC_PER_NODE=8 megatron sft --model Qwen/Qwen3-8B --tensor_model_parallel_size 2 --micro_batch_size 2 --global_batch_size 12
    ```
    Data-parallel size 4, so the global batch must be a multiple of 2 × 4 = 8. Use instead:
    `--global_batch_size 16`.
    """
    flavor = megatron_flavor(plan)
    world = known_world(plan)
    if flavor is None or world is None:
        return
    grid = Grid(plan, flavor)
    if not grid.known(grid.tp, grid.pp, grid.cp, grid.mbs, grid.gbs) or world % grid.model_size:
        return
    if not complete(plan) and not all(v.given for v in (grid.tp, grid.pp, grid.cp, grid.mbs, grid.gbs)):
        return
    if flavor != "swift" and not grid.gbs.given:
        return
    dp = world // grid.model_size
    unit = grid.mbs.value * dp
    if grid.gbs.value % unit == 0:
        return
    anchor = grid.gbs.span or grid.mbs.span or plan.span
    too_small = grid.gbs.value < unit
    yield Finding(
        anchor,
        f"global batch {grid.gbs.value} is not a multiple of micro batch {grid.mbs.value} × data-parallel size {dp} = {unit}"
        f"{' (it is smaller)' if too_small else ''}",
        note=f"Megatron stops with 'global batch size ({grid.gbs.value}) is not divisible by micro batch size ({grid.mbs.value}) "
        f"times data parallel size ({dp})'",
        help=f"use a multiple of {unit}",
        related=[grid.gbs.related("global_batch_size"), grid.mbs.related("micro_batch_size"),
                 Related(f"data-parallel size {dp} = world {world} / (tensor {grid.tp.value} × pipeline {grid.pp.value} × {grid.cp_name.split(' (')[0]} {grid.cp.value})"),
                 world_related(plan)],
        severity=assumed_severity(plan),
    )
