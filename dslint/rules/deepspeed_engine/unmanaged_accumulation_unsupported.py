"""DS245 unmanaged-accumulation-unsupported."""

from __future__ import annotations

from dslint.diagnostics import Finding
from dslint.documents.model import Mapping
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules import _deepspeed_schema as dss
from dslint.rules.deepspeed_engine._common import related_to


@rule("DS245", "unmanaged-accumulation-unsupported", severity="error", target="deepspeed")
def unmanaged_accumulation_unsupported(use, context):
    """`managed_gradient_accumulation: false` with settings it does not support.

    ## What it checks
    `managed_gradient_accumulation` false (DeepSpeed ≥ 0.19.4; any falsy value) together with
    `overlap_comm` true at ZeRO stage 0 or 1, or with `compile.deepcompile: true`.

    ## Why it matters
    `AssertionError: managed_gradient_accumulation=False supports ZeRO overlap_comm only with ZeRO
    stage 2` (the check is `stage >= 2 or not overlap_comm`) or `... is not supported with
    DeepCompile` at `deepspeed.initialize` (deepspeed/runtime/engine.py:2030-2036). The
    pipeline-parallel case needs the model and is out of static reach.

    ## Example
    ```json
    {"managed_gradient_accumulation": false, "zero_optimization": {"stage": 1, "overlap_comm": true}}
    ```
    Use instead:
    ```json
    {"managed_gradient_accumulation": false, "zero_optimization": {"stage": 2, "overlap_comm": true}}
    ```

    ## Fix safety
    No fix.
    """
    config = use.config
    item = config.entry("managed_gradient_accumulation")
    versions = dss.Versions(use, context)
    reading = versions.since(dss.introduced_in(("managed_gradient_accumulation",)))
    if item is None or ds.is_auto(item.value) or bool(ds.raw(item.value)) or not reading:
        return
    stage = ds.zero_stage(config)
    zero = ds.zero_section(config)
    if stage in (0, 1) and zero is not None and ds.strict_bool(zero, "overlap_comm", False) is True:
        found = Finding(item.value.span, f"managed_gradient_accumulation=false with overlap_comm at ZeRO stage {stage}", related=related_to(zero.entry("overlap_comm")),
                        note="DeepSpeed asserts 'managed_gradient_accumulation=False supports ZeRO overlap_comm only with ZeRO stage 2' at deepspeed.initialize")
        yield from versions.within([found], reading)
    compile_section = config.get("compile")
    if isinstance(compile_section, Mapping) and ds.strict_bool(compile_section, "deepcompile", False) is True:
        found = Finding(item.value.span, "managed_gradient_accumulation=false with DeepCompile", related=related_to(compile_section.entry("deepcompile")),
                        note="DeepSpeed asserts 'managed_gradient_accumulation=False is not supported with DeepCompile'")
        yield from versions.within([found], reading)
