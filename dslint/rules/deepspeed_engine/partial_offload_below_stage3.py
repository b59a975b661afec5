"""DS236 partial-offload-below-stage3."""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix
from dslint.documents.model import Mapping
from dslint.documents.edits import remove_json_entry
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules.deepspeed_engine._common import stage_related


@rule("DS236", "partial-offload-below-stage3", severity="error", target="deepspeed", fix="unsafe")
def partial_offload_below_stage3(use, context):
    """`offload_optimizer.ratio` below 1 without ZeRO-3: DeepSpeed rejects partial offloading.

    ## What it checks
    `zero_optimization.offload_optimizer.ratio` < 1 (after coercion) with a ZeRO stage other than 3.

    ## Why it matters
    The ZeRO config validator asserts `Partial offloading only supported for ZeRO Stage 3.`
    when the config is parsed (deepspeed/runtime/zero/config.py:395-400), whatever the device.

    ## Example
    ```json
    {"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu", "ratio": 0.3}}}
    ```
    Use instead:
    ```json
    {"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}
    ```

    ## Fix safety
    Unsafe: the config cannot load with `ratio`, but removing it changes the fraction you wrote:
    the run then offloads all optimizer states (raising the stage to 3 is the other way).
    """
    config = use.config
    stage = ds.zero_stage(config)
    zero = ds.zero_section(config)
    if zero is None or stage is ds.UNKNOWN or stage == 3:
        return
    section = zero.get("offload_optimizer")
    if not isinstance(section, Mapping):
        return
    item = section.entry("ratio")
    ratio = ds.lax_read(item.value, ds.lax_float) if item is not None else None
    if ratio is not None and ratio < 1.0:
        yield Finding(
            item.value.span,
            f"offload_optimizer.ratio {ds.show(item.value)} with ZeRO stage {stage}",
            note="DeepSpeed asserts 'Partial offloading only supported for ZeRO Stage 3.' when it parses the config",
            related=stage_related(config),
            fix=Fix.unsafe("Remove ratio (offload everything)", remove_json_entry(section, item)),
        )
