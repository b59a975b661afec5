"""DS232 allgather-bucket-odd."""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix
from dslint.documents.edits import replace_value
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules.deepspeed_engine._common import bf16_zero1_optimizer, stage_related


@rule("DS232", "allgather-bucket-odd", severity="error", target="deepspeed", fix="unsafe")
def allgather_bucket_odd(use, context):
    """An odd `allgather_bucket_size` with ZeRO stage 1 or 2: DeepSpeed asserts it is even.

    ## What it checks
    `zero_optimization.allgather_bucket_size` (after integer coercion; the legacy
    `"zero_optimization": true` reads the top-level `allgather_size`) that is odd, with ZeRO
    stage 1 or 2, except stage 1 with bf16 and `data_types.grad_accum_dtype: fp32` without CPU
    offload, which uses DeepSpeed's BF16 optimizer instead.

    ## Why it matters
    `DeepSpeedZeroOptimizer` aligns all-gather buffers to 4 bytes and asserts
    `allgather_bucket_size must be a multiple of nccl_start_alignment_factor, 2` at
    `deepspeed.initialize` (deepspeed/runtime/zero/stage_1_and_2.py:387-391).

    ## Example
    ```json
    {"zero_optimization": {"stage": 2, "allgather_bucket_size": 200000001}}
    ```
    Use instead:
    ```json
    {"zero_optimization": {"stage": 2, "allgather_bucket_size": 200000002}}
    ```

    ## Fix safety
    Unsafe: adding one element makes the size even, but it changes a number you wrote.
    """
    config = use.config
    stage = ds.zero_stage(config)
    if stage not in (1, 2) or bf16_zero1_optimizer(config, stage):
        return
    zero = ds.zero_section(config)
    item = zero.entry("allgather_bucket_size") if zero is not None else config.entry("allgather_size")
    size = ds.lax_read(item.value, ds.lax_int) if item is not None else None
    if size is not None and size % 2:
        yield Finding(
            item.value.span,
            f"{item.key} {size} is odd",
            note=f"ZeRO stage {stage} asserts 'allgather_bucket_size must be a multiple of nccl_start_alignment_factor, 2' "
            "at deepspeed.initialize (stage_1_and_2.py:389-391)",
            related=stage_related(config),
            fix=Fix.unsafe(f"Write {size + 1}", replace_value(item.value, size + 1)),
        )
