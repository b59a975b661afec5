"""DS240 lamb-static-loss-scale."""

from __future__ import annotations

from dslint.diagnostics import Finding
from dslint.documents.model import Mapping
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules.deepspeed_engine._common import optimizer_type, related_to


@rule("DS240", "lamb-static-loss-scale", severity="error", target="deepspeed")
def lamb_static_loss_scale(use, context):
    """The Lamb optimizer with a static fp16 loss scale, which DeepSpeed refuses.

    ## What it checks
    `optimizer.type` Lamb (any case) with `fp16.loss_scale` other than 0. DeepSpeed tests
    `loss_scale == 0` whether or not fp16 is enabled.

    ## Why it matters
    `AssertionError: DeepSpeed lamb optimizer requires dynamic loss scaling` at
    `deepspeed.initialize` (deepspeed/runtime/engine.py:2021-2023, 1781-1782).

    ## Example
    ```json
    {"optimizer": {"type": "Lamb", "params": {"lr": 1e-3}}, "fp16": {"enabled": true, "loss_scale": 1024}}
    ```
    Use instead:
    ```json
    {"optimizer": {"type": "Lamb", "params": {"lr": 1e-3}}, "fp16": {"enabled": true, "loss_scale": 0}}
    ```

    ## Fix safety
    No fix: switching to dynamic loss scaling changes the training dynamics.
    """
    _, name = optimizer_type(use.config)
    if name != "lamb":
        return
    fp16 = use.config.get("fp16")
    if not isinstance(fp16, Mapping):
        return
    scale = ds.strict_number(fp16, "loss_scale", 0.0)
    if scale is ds.UNKNOWN or scale == 0:
        return
    item = fp16.entry("loss_scale")
    yield Finding(item.value.span, f"static fp16.loss_scale {ds.show(item.value)} with the Lamb optimizer", related=related_to(use.config.get("optimizer").entry("type")),
                  note="Lamb requires dynamic loss scaling (loss_scale 0): DeepSpeed asserts at deepspeed.initialize")
