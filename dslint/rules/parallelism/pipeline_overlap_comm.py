"""DS411 pipeline-overlap-comm: the rule and the helpers only it uses."""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix, Related
from dslint.documents.model import Mapping
from dslint.documents.edits import replace_value
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules.parallelism._common import real_span, zero_stage_of, pipeline_evidence


@rule("DS411", "pipeline-overlap-comm", severity="warning", target="launch", fix="unsafe")
def pipeline_overlap_comm(plan, context):
    """`overlap_comm: true` with pipeline parallelism: DeepSpeed turns it off.

    ## What it checks
    ZeRO stage 1 with an explicit `zero_optimization.overlap_comm: true` in a launch that runs
    DeepSpeed's pipeline engine (see `zero-with-pipeline` for how that is recognised).

    ## Why it matters
    DeepSpeed logs `Pipeline parallelism does not support overlapped communication, will be
    disabled.` and sets it to false (deepspeed 0.19.8 runtime/engine.py:2663-2666): the setting
    you tuned does nothing, and the extra reduce buffer you budgeted for is not used.

    ## Example
    ```json
    {"zero_optimization": {"stage": 1, "overlap_comm": true}, "pipeline": {"activation_checkpoint_interval": 1}}
    ```
    Use instead: `"overlap_comm": false`.

    ## Fix safety
    Unsafe: this launch's pipeline engine already runs with false, but the setting is yours, and
    another launch of the same config without pipeline parallelism would lose the overlap.
    """
    evidence = pipeline_evidence(plan)
    if evidence is None:
        return
    stage, _node, _arg = zero_stage_of(plan)
    config = plan.deepspeed.config if plan.deepspeed is not None else None
    if stage != 1 or config is None:
        return
    zero = config.get("zero_optimization")
    if not isinstance(zero, Mapping):
        return
    overlap = zero.get("overlap_comm")
    if not ds.lax_read(overlap, ds.lax_bool) or not real_span(overlap.span):
        return
    what, span = evidence
    yield Finding(
        overlap.span,
        "overlap_comm with pipeline parallelism is turned off",
        note="DeepSpeed logs 'Pipeline parallelism does not support overlapped communication, will be disabled.' and runs without "
        "it (runtime/engine.py:2663-2666)",
        related=[Related(what, span if real_span(span) else None)],
        fix=Fix.unsafe("Set overlap_comm to false", replace_value(overlap, False)),
    )
