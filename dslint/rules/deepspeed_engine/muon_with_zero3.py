"""DS225 muon-with-zero3."""

from __future__ import annotations

from dslint.diagnostics import Finding, Severity
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules import _deepspeed_schema as dss
from dslint.rules.deepspeed_engine._common import NOT_BUILT, client_optimizer_severity, optimizer_type, related_to, stage_related

# The `muon` optimizer type came in 0.17.6 with an assert against ZeRO-3 in
# `_configure_basic_optimizer`; 0.18.9 replaced it with ZeRO-3 support that refuses reduce-scatter
# (zero/stage3.py, deepspeedai/DeepSpeed#7919).
MUON_FROM = "0.17.6"
REDUCE_SCATTER_ONLY = "0.18.9"


@rule("DS225", "muon-with-zero3", severity="error", target="deepspeed")
def muon_with_zero3(use, context):
    """The Muon optimizer DeepSpeed builds, at ZeRO stage 3 with reduce-scatter on (or on any 0.17.6-0.18.8).

    ## What it checks
    `optimizer.type: Muon` (any case) with `zero_optimization.stage: 3`, where DeepSpeed builds
    the config's optimizer (the code passes none; DS237's rule of when DeepSpeed builds the
    block). DeepSpeed 0.17.6 (the first with Muon) through 0.18.8 refuse Muon at ZeRO-3
    outright; 0.18.9 and later refuse it while `zero_optimization.reduce_scatter` is true, its
    default. Judged for the DeepSpeed releases the repository allows: an error when every one
    refuses, info naming them when some do.

    ## Why it matters
    0.17.6-0.18.8: `AssertionError: Muon optimizer is not yet compatible with ZeRO Stage 3` when
    the optimizer is built (deepspeed/runtime/engine.py:1591-1592 in 0.18.0). 0.18.9 on:
    `ValueError: Muon and reduce scatter cannot be used together` when the ZeRO-3 optimizer
    wraps it (deepspeed/runtime/zero/stage3.py:337-338 in 0.18.9, :360-361 in 0.19.8).

    ## Example
    ```json
    {"optimizer": {"type": "Muon", "params": {"lr": 0.02}}, "zero_optimization": {"stage": 3}}
    ```
    Use instead (DeepSpeed ≥ 0.18.9):
    ```json
    {"optimizer": {"type": "Muon", "params": {"lr": 0.02}}, "zero_optimization": {"stage": 3, "reduce_scatter": false}}
    ```

    ## Fix safety
    No fix: turning reduce-scatter off changes the gradient communication, and older releases
    need a lower stage or another optimizer.
    """
    config = use.config
    type_item, name = optimizer_type(config)
    if name != "muon" or ds.zero_stage(config) != 3:
        return
    built = client_optimizer_severity(use)
    if built == NOT_BUILT:
        return  # the code passes its own optimizer, or may: DeepSpeed then never builds this one
    zero = ds.zero_section(config)
    reduce_scatter = ds.strict_bool(zero, "reduce_scatter", True)
    if reduce_scatter is ds.UNKNOWN:
        return
    versions = dss.Versions(use, context)
    muon = versions.since(MUON_FROM)
    failing = muon if reduce_scatter else tuple(v for v in muon if v not in versions.since(REDUCE_SCATTER_ONLY))
    if not failing:
        return
    rs_item = zero.entry("reduce_scatter") if zero is not None else None
    related = stage_related(config) + related_to(rs_item)
    found = Finding(type_item.value.span, f"Muon with ZeRO stage 3{' and reduce_scatter on' if reduce_scatter else ''}", related=related,
                    note=f"DeepSpeed ≥ {REDUCE_SCATTER_ONLY} raises 'Muon and reduce scatter cannot be used together' (zero/stage3.py); "
                         f"{MUON_FROM}-0.18.8 assert 'Muon optimizer is not yet compatible with ZeRO Stage 3' at deepspeed.initialize")
    for kept in versions.within([found], failing):
        if kept.severity is None and built == Severity.WARNING:
            kept.severity = Severity.WARNING  # the reader is known, the program that would pass an optimizer is not
        yield kept
