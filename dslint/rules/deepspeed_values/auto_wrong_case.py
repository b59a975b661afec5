"""DS211 auto-wrong-case."""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix
from dslint.documents.edits import replace_value
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules import _deepspeed_schema as dss
from dslint.rules.deepspeed_values._common import BATCH_KEYS


@rule("DS211", "auto-wrong-case", severity="error", target="deepspeed", fix="safe")
def auto_wrong_case(use, context):
    """`"Auto"` or `"AUTO"`: only lowercase `"auto"` means anything, to anyone.

    ## What it checks
    Every string value of the config that reads `auto` in another case (batch keys are left to
    `batch-value-type`).

    This is an error even where `DeepSpeedConfig` itself does not raise: in the values it
    reads without validation (`gradient_clipping`, `optimizer.params`, `scheduler.params`, string
    fields such as `wandb.project`) `"Auto"` passes the parse and fails later (at the first step,
    or in the optimizer), or is carried as a meaningless string. The generated oracle tests list
    this as a deliberate difference from `DeepSpeedConfig`.

    ## Why it matters
    DeepSpeed drops only the exact string `"auto"` (deepspeed/runtime/config_utils.py:56),
    HF Trainer and accelerate fill only `"auto"` (`fill_match`: `config.get(ds_key) == 'auto'`).
    `"Auto"` reaches pydantic as a string: `Input should be a valid integer`/`boolean`, or
    under HF a mismatch error (LianjiaTech/BELLE#558).

    ## Example
    ```json
    {"zero_optimization": {"stage": 3, "stage3_prefetch_bucket_size": "Auto"}}
    ```
    Use instead:
    ```json
    {"zero_optimization": {"stage": 3, "stage3_prefetch_bucket_size": "auto"}}
    ```

    ## Fix safety
    Writing `"auto"` is safe where every launch that reads the config is established as a program
    that fills it (HF Trainer, accelerate, ms-swift, LLaMA-Factory). Where one of them is plain
    DeepSpeed (a `deepspeed.initialize` loop, Megatron-DeepSpeed) or only assumed, `"auto"` is a
    value that reader cannot take, and for a config no launch reaches the reader is unknown: no
    fix there.
    """
    for path, node in dss.read_scalars(use.config, dss.Versions(use, context)):
        value = node.value
        if not isinstance(value, str) or value == "auto" or value.strip().lower() != "auto":
            continue
        if len(path) == 1 and path[0] in BATCH_KEYS:
            continue
        yield Finding(
            node.span,
            f"{ds.dotted(path)} is {value!r}, not \"auto\"",
            note='only lowercase "auto" is dropped by DeepSpeed and filled in by HF Trainer and accelerate; '
            "any other case reaches DeepSpeed as a plain string",
            fix=Fix.safe('Write "auto"', replace_value(node, "auto")) if ds.every_reader_fills_auto(use.document, context) else None,
        )
