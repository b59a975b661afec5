"""DS241 fp16-and-bf16."""

from __future__ import annotations

from dslint.diagnostics import Finding, Related
from dslint.rule import rule
from dslint.rules import _deepspeed as ds


@rule("DS241", "fp16-and-bf16", severity="error", target="deepspeed")
def fp16_and_bf16(use, context):
    """Both `fp16.enabled` and `bf16.enabled` are true.

    ## What it checks
    `fp16.enabled` and `bf16.enabled` (or the old `bfloat16.enabled`, read when `bf16` is
    absent) both true after pydantic's boolean coercion (`"true"` and `1` count; `"auto"` does not).

    ## Why it matters
    `DeepSpeedConfig` asserts `bfloat16 and fp16 modes cannot be simultaneously enabled` when it
    parses the config (deepspeed/runtime/config.py:510-511); `zero.Init` under HF ZeRO-3 fails
    the same way (Snowflake-AI-Research/Arctic-Platform#78).

    ## Example
    ```json
    {"fp16": {"enabled": true}, "bf16": {"enabled": true}}
    ```
    Use instead:
    ```json
    {"fp16": {"enabled": false}, "bf16": {"enabled": true}}
    ```

    ## Fix safety
    No fix: only you know which precision the run needs.
    """
    config = use.config
    if ds.precision_enabled(config, "fp16") is True and ds.precision_enabled(config, "bf16") is True:
        bf16 = ds.precision_section(config, "bf16")
        fp16 = ds.precision_section(config, "fp16")
        yield Finding(
            bf16.entry("enabled").value.span,
            "fp16 and bf16 are both enabled",
            note="DeepSpeed asserts 'bfloat16 and fp16 modes cannot be simultaneously enabled' when it parses the config",
            related=[Related("fp16.enabled is true here", fp16.entry("enabled").value.span)],
        )
