"""DS231 allreduce-sum-unsupported."""

from __future__ import annotations

from dslint.diagnostics import Finding
from dslint.documents.model import Mapping
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules import _deepspeed_schema as dss
from dslint.rules.deepspeed_engine._common import related_to, stage_related


@rule("DS231", "allreduce-sum-unsupported", severity="error", target="deepspeed")
def allreduce_sum_unsupported(use, context):
    """`gradient_allreduce_op: "sum"` with ZeRO-3, ZenFlow or DeepCompile, which DeepSpeed rejects.

    ## What it checks
    `gradient_allreduce_op` equal to `sum` (any case) together with ZeRO stage 3, a
    `zero_optimization.zenflow` section, or `compile.deepcompile: true`. The key exists since
    DeepSpeed 0.19.6.

    ## Why it matters
    `DeepSpeedConfig._do_error_check` raises `ValueError: gradient_allreduce_op='sum' is not
    supported with ZeRO stage 3` (or `with ZenFlow`, `with DeepCompile`) at parse time
    (deepspeed/runtime/config.py:694-700).

    ## Example
    ```json
    {"gradient_allreduce_op": "sum", "zero_optimization": {"stage": 3}}
    ```
    Use instead:
    ```json
    {"gradient_allreduce_op": "mean", "zero_optimization": {"stage": 3}}
    ```

    ## Fix safety
    No fix: switching to `mean` changes the gradient scale the run was tuned for.
    """
    config = use.config
    item = config.entry("gradient_allreduce_op")
    versions = dss.Versions(use, context)
    reading = versions.since(dss.introduced_in(("gradient_allreduce_op",)))
    if item is None or not reading:
        return
    value = ds.raw(item.value)
    if not (isinstance(value, str) and value.lower() == "sum"):
        return
    zero = ds.zero_section(config)
    reasons = []
    if ds.zero_stage(config) == 3:
        reasons.append(("ZeRO stage 3", stage_related(config)))
    if zero is not None and zero.get("zenflow") is not None and ds.raw(zero.get("zenflow")) is not None and not ds.is_auto(zero.get("zenflow")):
        reasons.append(("ZenFlow", related_to(zero.entry("zenflow"), "zero_optimization.zenflow")))
    compile_section = config.get("compile")
    if isinstance(compile_section, Mapping) and ds.strict_bool(compile_section, "deepcompile", False) is True:
        reasons.append(("DeepCompile", related_to(compile_section.entry("deepcompile"))))
    for what, related in reasons[:1]:
        found = Finding(item.value.span, f"gradient_allreduce_op='sum' with {what}", related=related,
                        note="DeepSpeed raises ValueError when it parses the config (config.py:694-700)")
        yield from versions.within([found], reading)
