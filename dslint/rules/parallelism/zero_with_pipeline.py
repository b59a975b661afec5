"""DS410 zero-with-pipeline: the rule and the helpers only it uses."""

from __future__ import annotations

from dslint.diagnostics import Edit, Finding, Fix, Related
from dslint.documents.edits import replace_value
from dslint.rule import rule
from dslint.launch.args import as_int, written
from dslint.rules.parallelism._common import real_span, zero_stage_of, pipeline_evidence


@rule("DS410", "zero-with-pipeline", severity="error", target="launch", fix="unsafe")
def zero_with_pipeline(plan, context):
    """ZeRO stage 2 or 3 with DeepSpeed pipeline parallelism.

    ## What it checks
    A launch that runs DeepSpeed's `PipelineEngine` — Megatron-DeepSpeed with
    `--pipeline-model-parallel-size N>1` and no `--no-pipeline-parallel` (its `pretrain_gpt.py`
    builds `GPTModelPipe`, a `PipelineModule`, whenever `--deepspeed` is given without
    `--no-pipeline-parallel`, at any pipeline size), Megatron-SWIFT with
    `--pipeline_model_parallel_size N>1`, or a DeepSpeed config with a `pipeline` section used
    by plain DeepSpeed — with ZeRO stage 2 or 3, from the DeepSpeed config or, when the config
    cannot be read, from Megatron-DeepSpeed's `--zero-stage` flag.

    ## Why it matters
    `PipelineEngine.__init__` asserts `ZeRO-2 and ZeRO-3 are incompatible with pipeline
    parallelism` (deepspeed 0.19.8 runtime/pipe/engine.py:76-77; deepspeedai/DeepSpeed#3589,
    deepspeedai/Megatron-DeepSpeed#474).

    ## Example
    ```sh
    deepspeed pretrain_gpt.py --pipeline-model-parallel-size 2 --deepspeed --deepspeed_config ds.json --zero-stage 2
    ```
    Use instead: ZeRO stage 1, or `--no-pipeline-parallel` with `--pipeline-model-parallel-size 1`.

    ## Fix safety
    Unsafe: stage 1 shards only the optimizer states, so the run needs more memory.
    """
    evidence = pipeline_evidence(plan)
    if evidence is None:
        return
    stage, node, arg = zero_stage_of(plan)
    if not isinstance(stage, int) or stage < 2:
        return
    what, evidence_span = evidence
    edits = []
    if node is not None and real_span(node.span):
        edits.append(replace_value(node, 1))
    if arg is not None and arg.span is not None and arg.span.text == str(arg.value) and (node is None or as_int(arg.value) == stage):
        edits.append(Edit.replace(arg.span, "1"))  # a literal: a $VARIABLE may also feed the JSON written at run time
    if node is not None and real_span(node.span):
        span, source = node.span, f"zero_optimization.stage {stage}"
    elif arg is not None and arg.span is not None and node is None:
        span, source = arg.span, written(arg)
    else:
        span, source = plan.deepspeed.span, f"ZeRO stage {stage} in {plan.deepspeed.raw}"
    yield Finding(
        span,
        f"{source} with pipeline parallelism",
        related=[Related(what, evidence_span if real_span(evidence_span) else None)],
        fix=Fix.unsafe("Use ZeRO stage 1", *edits) if edits else None,
        note="DeepSpeed's PipelineEngine asserts 'ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism' "
        "(runtime/pipe/engine.py:76-77)",
        help=None if edits else "use ZeRO stage 1",
    )
