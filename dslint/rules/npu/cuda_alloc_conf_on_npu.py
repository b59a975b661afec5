"""DS502 cuda-alloc-conf-on-npu: the rule and the helpers only it uses."""

from __future__ import annotations

from dslint.diagnostics import Finding
from dslint.rule import rule
from dslint.rules.npu._common import env_span, target_related, rename_fix


@rule("DS502", "cuda-alloc-conf-on-npu", severity="warning", target="launch", fix="unsafe", facts=("npu_target",))
def cuda_alloc_conf_on_npu(plan, context, *, npu_target):
    """`PYTORCH_CUDA_ALLOC_CONF` in an Ascend NPU launch: the NPU allocator reads `PYTORCH_NPU_ALLOC_CONF`.

    ## What it checks
    A launch whose target is Ascend NPU with `PYTORCH_CUDA_ALLOC_CONF` in its environment.

    ## Why it matters
    torch_npu's caching allocator takes its options (`expandable_segments:True`,
    `max_split_size_mb`, `garbage_collection_threshold`) from `PYTORCH_NPU_ALLOC_CONF`; the CUDA
    variable is ignored, so the fragmentation setting you rely on to avoid OOM is not applied.
    ms-swift's Ascend examples use `PYTORCH_NPU_ALLOC_CONF='expandable_segments:True'`
    (examples/ascend/megatron/train_sft_full.sh; modelscope/ms-swift#8141 replaced the CUDA one).

    ## Example
    `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True megatron sft ...` on Ascend.
    Use instead: `PYTORCH_NPU_ALLOC_CONF=expandable_segments:True`.

    ## Fix safety
    Unsafe: the same options under the NPU name, but options that did nothing start to take
    effect (and a value naming a CUDA-only backend, `backend:cudaMallocAsync`, is not an NPU
    option at all). No fix when `PYTORCH_NPU_ALLOC_CONF` is also set, nor when the variable is set
    where a launch not on NPU sees it too (exported before an `if` that picks GPU or NPU).
    """
    target = npu_target
    value = plan.env.get("PYTORCH_CUDA_ALLOC_CONF")
    if target is None or value is None:
        return
    if plan.env.get("PYTORCH_NPU_ALLOC_CONF") is not None:
        fix, help = None, "remove it"
        note = "PYTORCH_NPU_ALLOC_CONF, also set, is the one read"
    else:
        fix = rename_fix(plan, value, "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_NPU_ALLOC_CONF", "Rename to PYTORCH_NPU_ALLOC_CONF", target)
        help = None if fix is not None else "rename it to PYTORCH_NPU_ALLOC_CONF"
        note = "torch_npu's allocator reads PYTORCH_NPU_ALLOC_CONF"
    yield Finding(env_span(value, plan), "PYTORCH_CUDA_ALLOC_CONF has no effect on Ascend NPU", related=[target_related(target)], fix=fix,
                  note=note, help=help)
