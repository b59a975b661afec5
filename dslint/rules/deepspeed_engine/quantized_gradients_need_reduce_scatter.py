"""DS246 quantized-gradients-need-reduce-scatter."""

from __future__ import annotations

from dslint.diagnostics import Finding
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules.deepspeed_engine._common import related_to


@rule("DS246", "quantized-gradients-need-reduce-scatter", severity="error", target="deepspeed")
def quantized_gradients_need_reduce_scatter(use, context):
    """ZeRO++ quantized gradients with `reduce_scatter: false` at ZeRO-3.

    ## What it checks
    ZeRO stage 3 with `zero_quantized_gradients` true and `reduce_scatter` false.

    ## Why it matters
    quantized gradients use an all-to-all reduction that needs reduce-scatter:
    `when enable all_to_all_reduce, reduce_scatter should also be enabled` at
    `deepspeed.initialize` (deepspeed/runtime/zero/stage3.py:389-390).

    ## Example
    ```json
    {"zero_optimization": {"stage": 3, "zero_quantized_gradients": true, "reduce_scatter": false}}
    ```
    Use instead:
    ```json
    {"zero_optimization": {"stage": 3, "zero_quantized_gradients": true}}
    ```

    ## Fix safety
    No fix.
    """
    zero = ds.zero_section(use.config)
    if zero is None or ds.zero_stage(use.config) != 3:
        return
    if ds.strict_bool(zero, "zero_quantized_gradients", False) is True and ds.strict_bool(zero, "reduce_scatter", True) is False:
        yield Finding(zero.entry("reduce_scatter").value.span, "reduce_scatter is false with zero_quantized_gradients at ZeRO-3", related=related_to(zero.entry("zero_quantized_gradients")),
                      note="DeepSpeed asserts 'when enable all_to_all_reduce, reduce_scatter should also be enabled' at deepspeed.initialize")
