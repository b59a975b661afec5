"""DS514 npu-sequence-parallel: the rule and the helpers only it uses."""

from __future__ import annotations

from dslint.rule import rule
from dslint.launch.args import integer, written
from dslint.rules.npu._common import npu_finding


@rule("DS514", "npu-sequence-parallel", severity="warning", target="launch", facts=("npu_target",))
def npu_sequence_parallel(plan, context, *, npu_target):
    """ms-swift's `--sequence_parallel_size` on Ascend NPU.

    ## What it checks
    ms-swift (4.x, not Megatron-SWIFT) with `--sequence_parallel_size N > 1` on Ascend. Its
    Ulysses/ring sequence parallelism is not in the NPU support table, users report failures on
    NPU (modelscope/ms-swift#6974, #4412, #9387), and its ring attention
    (`zigzag_ring_flash_attn_varlen_func`, swift/sequence_parallel/zigzag_ring_attn.py) calls
    flash-attn's CUDA kernels; an NPU branch (zigzag_ring_attn_npu.py, modelscope/ms-swift#9298)
    exists only from ms-swift 4.2.1 on. Megatron-SWIFT's `--context_parallel_size` is the route
    its Ascend examples use for long sequences.

    ## Why it matters
    A warning, because the run may well start. But it rests on a feature that ms-swift does not
    list as supported on Ascend and that users have seen fail there, so a long-sequence job is
    staked on an unverified path while a documented one exists.

    ## Example
    `NPROC_PER_NODE=8 swift sft --sequence_parallel_size 4 ...` on Ascend.
    Use instead: `megatron sft --context_parallel_size 4 ...`.
    """
    target = npu_target
    if target is None or plan.consumer != "swift":
        return
    sp = integer(plan, "sequence_parallel_size")
    if not isinstance(sp.value, int) or sp.value <= 1:
        return
    yield npu_finding(plan, target, sp.span, f"{written(sp.arg)}: ms-swift's sequence parallelism is not in its Ascend NPU support table",
                      "failures reported in modelscope/ms-swift#6974 and #4412; an NPU ring-attention path exists only from ms-swift 4.2.1",
                      help="use Megatron-SWIFT's --context_parallel_size")
