"""DS224 autotp-with-zero3."""

from __future__ import annotations

from dslint.diagnostics import Finding
from dslint.documents.model import Mapping
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules import _deepspeed_schema as dss
from dslint.rules.deepspeed_engine._common import stage_related

# deepspeed/runtime/engine.py `_configure_tensor_parallel_states`: the assert came with AutoTP
# training (deepspeedai/DeepSpeed#7004, first tag v0.16.4) and is gone from v0.19.4
# (deepspeedai/DeepSpeed#8167 narrowed it, #8168 removed it, both before the v0.19.4 tag).
REFUSED_FROM = "0.16.4"
LIFTED_IN = "0.19.4"


@rule("DS224", "autotp-with-zero3", severity="error", target="deepspeed")
def autotp_with_zero3(use, context):
    """AutoTP (`tensor_parallel.autotp_size` > 1) with ZeRO stage 3, which DeepSpeed 0.16.4-0.19.3 refuses.

    ## What it checks
    `tensor_parallel.autotp_size` above 1 together with `zero_optimization.stage: 3`, for the
    DeepSpeed releases the repository allows. DeepSpeed 0.16.4 (the first release with
    `tensor_parallel`) through 0.19.3 refuse the pair; 0.19.4 and later run it. An error when
    every allowed release refuses; info naming the refusing releases when only some do
    (nothing pins DeepSpeed: every release dslint knows); nothing when none does.

    ## Why it matters
    `deepspeed.initialize` shards the model with AutoTP whenever `autotp_size` > 1
    (engine.py `if self.autotp_size() > 1: self._configure_tensor_parallel(...)`), and
    `_configure_tensor_parallel_states` first asserts
    `self.zero_optimization_stage() <= 2`: `AssertionError: Currently, the compatibility
    between 'autotp' and 'zero_stage = 3' has not been validated` (deepspeed/runtime/engine.py:426-427
    in 0.16.4, :633-634 in 0.19.3). The training code, the model and the optimizer play no part.

    ## Example
    With `deepspeed==0.17.5` pinned:
    ```json
    {"tensor_parallel": {"autotp_size": 2}, "zero_optimization": {"stage": 3}}
    ```
    Use instead (ZeRO-1 or 2 with AutoTP, or DeepSpeed ≥ 0.19.4):
    ```json
    {"tensor_parallel": {"autotp_size": 2}, "zero_optimization": {"stage": 2}}
    ```

    ## Fix safety
    No fix: lowering the ZeRO stage or upgrading DeepSpeed changes memory use or the
    environment, a choice dslint cannot make.
    """
    config = use.config
    section = config.get("tensor_parallel")
    if not isinstance(section, Mapping):
        return
    autotp = ds.strict_number(section, "autotp_size", 0, kind=ds.lax_int)
    if autotp is ds.UNKNOWN or autotp <= 1 or ds.zero_stage(config) != 3:
        return
    versions = dss.Versions(use, context)
    failing = tuple(v for v in versions.since(REFUSED_FROM) if v not in versions.since(LIFTED_IN))
    if not failing:
        return
    found = Finding(section.entry("autotp_size").value.span, f"AutoTP (autotp_size {autotp}) with ZeRO stage 3",
                    related=stage_related(config),
                    note=f"DeepSpeed {REFUSED_FROM}-0.19.3 raise AssertionError \"Currently, the compatibility between 'autotp' and "
                         "'zero_stage = 3' has not been validated\" at deepspeed.initialize (engine.py "
                         f"_configure_tensor_parallel_states); {LIFTED_IN} lifted it")
    yield from versions.within([found], failing)
