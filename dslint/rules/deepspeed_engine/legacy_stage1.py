"""DS243 legacy-stage1."""

from __future__ import annotations

from dslint.diagnostics import Finding
from dslint.rule import rule
from dslint.rules import _deepspeed as ds


@rule("DS243", "legacy-stage1", severity="error", target="deepspeed")
def legacy_stage1(use, context):
    """`zero_optimization.legacy_stage1: true`: the old ZeRO-1 is gone and DeepSpeed refuses to start.

    ## What it checks
    `legacy_stage1` true (after boolean coercion) with ZeRO enabled (stage 1-3).

    ## Why it matters
    `Exception: The deprecated version of ZeRO Stage 1 is not supported in deepspeed >= 0.5.9`
    when the ZeRO optimizer is created (deepspeed/runtime/engine.py:2650-2653); the key is
    still accepted when the config is parsed.

    ## Example
    ```json
    {"zero_optimization": {"stage": 1, "legacy_stage1": true}}
    ```
    Use instead:
    ```json
    {"zero_optimization": {"stage": 1}}
    ```

    ## Fix safety
    No automatic fix (removing it switches to the current ZeRO-1, which is what DeepSpeed can run).
    """
    zero = ds.zero_section(use.config)
    stage = ds.zero_stage(use.config)
    if zero is None or stage is ds.UNKNOWN or stage == 0:
        return
    if ds.strict_bool(zero, "legacy_stage1", False) is True:
        yield Finding(zero.entry("legacy_stage1").value.span, "legacy_stage1 is true",
                      note="DeepSpeed raises 'The deprecated version of ZeRO Stage 1 is not supported in deepspeed >= 0.5.9' when it creates the ZeRO optimizer")
