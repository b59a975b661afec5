"""DS233 prescale-with-reduce-scatter."""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix
from dslint.documents.edits import remove_json_entry
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules import _deepspeed_schema as dss
from dslint.rules.deepspeed_engine._common import stage_related, truthy


@rule("DS233", "prescale-with-reduce-scatter", severity="error", target="deepspeed", fix="unsafe")
def prescale_with_reduce_scatter(use, context):
    """`prescale_gradients` or `gradient_predivide_factor` with ZeRO-2/3 reduce-scatter, which DeepSpeed rejects.

    ## What it checks
    `prescale_gradients` truthy or `gradient_predivide_factor` other than 1.0 (both read
    without a type check, so the string `"false"` counts as true) together with
    `reduce_scatter` on (the default) and either ZeRO stage 3, or ZeRO stage 2 with
    `gradient_allreduce_op` `mean` (the default). ZeRO stage 1 is fine.

    ## Why it matters
    The ZeRO-2 and ZeRO-3 optimizers assert at `deepspeed.initialize`:
    `pre-scale gradients is not yet supported with ZeRO-2 with reduce scatter enabled` and
    `gradient_predivide_factor != 1.0 is not yet supported with ZeRO-3 with reduce scatter enabled`
    (deepspeed/runtime/zero/stage_1_and_2.py:346-351, zero/stage3.py:392-396).

    ## Example
    ```json
    {"prescale_gradients": true, "zero_optimization": {"stage": 2}}
    ```
    Use instead:
    ```json
    {"prescale_gradients": false, "zero_optimization": {"stage": 2}}
    ```

    ## Fix safety
    Unsafe: removing `prescale_gradients: true` or the predivide factor keeps the averaged
    gradient, but it deletes a setting you chose, and the order of the division (which decides
    where low-precision gradients can overflow) changes.
    """
    config = use.config
    stage = ds.zero_stage(config)
    if stage not in (2, 3):
        return
    zero = ds.zero_section(config)
    if ds.strict_bool(zero, "reduce_scatter", True) is not True:
        return
    versions = dss.Versions(use, context)
    applies = versions.key
    if stage == 2:
        op = config.get("gradient_allreduce_op")
        value = ds.raw(op) if op is not None else None
        if op is not None and not (isinstance(value, str) and value.lower() == "mean"):
            applies = versions.before(dss.introduced_in(("gradient_allreduce_op",)))  # older releases ignore the op
            if not applies:
                return
    name = f"ZeRO-{stage}"
    prescale = config.entry("prescale_gradients")
    if prescale is not None and truthy(prescale.value):
        found = _unsupported(config, prescale, name, f"pre-scale gradients is not yet supported with {name} with reduce scatter enabled",
                             " at deepspeed.initialize")
        yield from versions.within([found], applies, spelling=True)
    factor = config.entry("gradient_predivide_factor")
    if factor is not None and not ds.is_auto(factor.value) and ds.raw(factor.value) != 1.0:
        found = _unsupported(config, factor, name, f"gradient_predivide_factor != 1.0 is not yet supported with {name} with reduce scatter enabled")
        yield from versions.within([found], applies, spelling=True)


def _unsupported(config, item, name: str, asserted: str, when: str = "") -> Finding:
    """A top-level key ZeRO's reduce_scatter path asserts against, with the assertion's message
    (and WHEN it fires); removing the key is safe."""
    return Finding(
        item.value.span,
        f"{item.key} is {ds.show(item.value)} with {name} and reduce_scatter",
        note=f"DeepSpeed asserts '{asserted}'{when}",
        related=stage_related(config),
        fix=Fix.unsafe(f"Remove {item.key}", remove_json_entry(config, item)),
    )
