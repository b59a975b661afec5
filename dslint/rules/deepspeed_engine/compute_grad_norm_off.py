"""DS234 compute-grad-norm-off."""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix
from dslint.documents.edits import remove_json_entry
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules import _deepspeed_schema as dss
from dslint.rules.deepspeed_engine._common import bf16_zero1_optimizer, related_to, stage_related


@rule("DS234", "compute-grad-norm-off", severity="error", target="deepspeed", fix="unsafe")
def compute_grad_norm_off(use, context):
    """`compute_grad_norm: false` where DeepSpeed forbids it: ZeRO stage 0 or 3, gradient clipping, offload, ZenFlow.

    ## What it checks
    `zero_optimization.compute_grad_norm` false (DeepSpeed ≥ 0.19.7) with:

    - ZeRO stage 0 or 3 (raises when the config is parsed, zero/config.py:389-393);
    - gradient clipping above 0, **including the default 1.0** when `gradient_clipping` is
      absent; a ZenFlow section; or optimizer offload (raise at `deepspeed.initialize`,
      zero/stage_1_and_2.py:212-218);
    - stage 1 with bf16 and `data_types.grad_accum_dtype: fp32` without CPU offload
      (engine.py:2303-2306).

    ## Why it matters
    `ValueError: compute_grad_norm=false is supported only with ZeRO Stage 1 or 2` at parse, or
    `zero_optimization.compute_grad_norm=false requires gradient_clipping=0` at start-up.

    ## Example
    ```json
    {"zero_optimization": {"stage": 2, "compute_grad_norm": false}}
    ```
    Use instead:
    ```json
    {"zero_optimization": {"stage": 2, "compute_grad_norm": false}, "gradient_clipping": 0.0}
    ```

    ## Fix safety
    Unsafe: removing `compute_grad_norm: false` deletes a flag you set; the gradient norm is
    computed again (the optimisation cannot work with this config, but which setting to give up
    is your call).
    """
    config = use.config
    zero = ds.zero_section(config)
    versions = dss.Versions(use, context)
    reading = versions.since(dss.introduced_in(("zero_optimization", "compute_grad_norm")))
    if zero is None or not reading:
        return
    item = zero.entry("compute_grad_norm")
    if item is None or ds.strict_bool(zero, "compute_grad_norm", True) is not False:
        return
    stage = ds.zero_stage(config)
    fix = Fix.unsafe("Remove compute_grad_norm: false", remove_json_entry(zero, item))
    if stage is ds.UNKNOWN:
        return
    if stage not in (1, 2):
        found = Finding(item.value.span, f"compute_grad_norm=false with ZeRO stage {stage}", related=stage_related(config), fix=fix,
                        note="DeepSpeed raises 'compute_grad_norm=false is supported only with ZeRO Stage 1 or 2' when it parses the config")
        yield from versions.within([found], reading)
        return
    conflict = _clipping_conflict(config, versions, reading)
    if conflict is None:
        unsupported = _unsupported_with(config, zero, stage)
        if unsupported is not None:
            conflict = (*unsupported, [], reading)
    if conflict:
        what, raises, related, reading = conflict
        found = Finding(item.value.span, f"compute_grad_norm=false with {what}", related=related, fix=fix,
                        note=f"DeepSpeed raises '{raises}' at deepspeed.initialize (stage_1_and_2.py:212-218)")
        yield from versions.within([found], reading)


def _clipping_conflict(config, versions, reading):
    """Gradient clipping that is on, explicitly or by the default of the releases that changed it:
    (what, what DeepSpeed raises, related, the releases that raise), or None."""
    clip = config.get("gradient_clipping")
    raises = "zero_optimization.compute_grad_norm=false requires gradient_clipping=0"
    if clip is None:
        clipping = versions.since(dss.key_history("gradient_clipping").get("default_changed", {}).get("version", "0.19.3"))
        if not clipping:
            return None
        return ("gradient_clipping absent (default 1.0)", raises, [], tuple(v for v in reading if v in clipping))
    if ds.is_auto(clip):
        return None
    try:
        value = float(ds.raw(clip))
    except (TypeError, ValueError):
        return None
    if value > 0:
        return (f"gradient_clipping {ds.show(clip)}", raises, related_to(config.entry("gradient_clipping")), reading)
    return None


def _unsupported_with(config, zero, stage):
    """Another setting stage 1/2 cannot run without gradient norms: (what, what DeepSpeed raises), or None."""
    if ds.offload_device(config, "offload_optimizer") in ("cpu", "nvme"):
        return ("optimizer offload", "zero_optimization.compute_grad_norm=false does not support optimizer offload")
    if zero.get("zenflow") is not None and ds.raw(zero.get("zenflow")) is not None and not ds.is_auto(zero.get("zenflow")):
        return ("ZenFlow", "zero_optimization.compute_grad_norm=false does not support ZenFlow")
    if bf16_zero1_optimizer(config, stage):
        return ("the BF16 optimizer (stage 1, bf16, fp32 gradient accumulation)",
                "compute_grad_norm=false does not support ZeRO Stage 1 with BF16 parameters and FP32 gradient accumulation")
    return None
