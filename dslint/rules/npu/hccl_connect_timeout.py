"""DS521 hccl-connect-timeout: the rule and the helpers only it uses."""

from __future__ import annotations

from dslint.diagnostics import Edit, Finding, Fix
from dslint.rule import rule
from dslint.launch.args import as_int
from dslint.rules.npu._common import env_span, gpu_by_setting, value_span_of


@rule("DS521", "hccl-connect-timeout", severity="warning", target="launch", fix="unsafe")
def hccl_connect_timeout(plan, context):
    """`HCCL_CONNECT_TIMEOUT` outside the range CANN accepts.

    ## What it checks
    `HCCL_CONNECT_TIMEOUT` (seconds HCCL waits for the other ranks when it builds a
    communicator) must be an integer in [120, 7200]; the default is 120 (CANN 8.x environment
    variable reference, envref HCCL_CONNECT_TIMEOUT). ms-swift sets 600 when it is absent
    (swift/model/npu_patch/env.py). The variable is evidence of an NPU launch by itself;
    nothing is reported when the `target` setting says gpu.

    ## Why it matters
    A value CANN does not accept is not the timeout you asked for: a large multi-node job that
    needs longer than the default to connect fails with an HCCL timeout instead.

    ## Example
    `export HCCL_CONNECT_TIMEOUT=60`. Use instead: `export HCCL_CONNECT_TIMEOUT=120` (or more).

    ## Fix safety
    Unsafe: it clamps the value into [120, 7200].
    """
    if gpu_by_setting(context):
        return
    value = plan.env.get("HCCL_CONNECT_TIMEOUT")
    if value is None or getattr(value, "value", None) is None:
        return
    raw = value.value.strip()
    number = as_int(raw)
    span = env_span(value, plan)
    if number is None:
        yield Finding(span, f"HCCL_CONNECT_TIMEOUT '{raw}' is not a whole number of seconds", note="CANN accepts an integer in [120, 7200]")
        return
    if 120 <= number <= 7200:
        return
    clamped = min(max(number, 120), 7200)
    value_span = value_span_of(value)
    fix = Fix.unsafe(f"Use {clamped}", Edit.replace(value_span, str(clamped))) if value_span is not None and value_span.text == raw else None
    yield Finding(
        span,
        f"HCCL_CONNECT_TIMEOUT {number} is outside the range CANN accepts, [120, 7200] seconds",
        fix=fix,
        help=None if fix is not None else f"use {clamped}",
    )
