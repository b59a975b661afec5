"""DS511 npu-flash-attention-version: the rule and the helpers only it uses."""

from __future__ import annotations

from dslint.rule import rule
from dslint.launch.args import text, written
from dslint.rules.npu._common import npu_finding


FA_NEWER = {"flash_attention_3": "flash_attention_2", "flash_attention_4": "flash_attention_2", "flash_attn_3": "flash_attention_2"}


def _flash_attention_2_loads(plan, context) -> bool:
    """Every transformers release the launch may run with routes FlashAttention-2 to torch_npu."""
    from dslint.rules._npu_releases import FLASH_ATTENTION_2_ON_NPU, judge

    start = plan.origin.path if plan.origin is not None else None
    return judge("transformers", start, context, plan.program, FLASH_ATTENTION_2_ON_NPU)[1] is None


@rule("DS511", "npu-flash-attention-version", severity="error", target="launch", fix="unsafe", facts=("npu_target",))
def npu_flash_attention_version(plan, context, *, npu_target):
    """FlashAttention 3/4 on Ascend NPU: CUDA only.

    ## What it checks
    The attention implementation of a launch whose target is Ascend NPU:
    ms-swift `--attn_impl flash_attention_3|flash_attention_4`, HF `--attn_implementation
    flash_attention_3|4`, LLaMA-Factory `flash_attn: fa3`, Megatron-SWIFT `--attention_backend
    flash_3|flash_4`.

    ## Why it matters
    FlashAttention 3 and 4 are Hopper/Blackwell CUDA kernels (transformers
    modeling_flash_attention_utils.py:132,143 load them from the CUDA packages). On NPU,
    FlashAttention-2 is what works: transformers routes `flash_attention_2` to torch_npu's
    `npu_fusion_attention` without the flash-attn package (modeling_flash_attention_utils.py:191-197),
    LLaMA-Factory accepts `fa2` on NPU (model_utils/attention.py:77-84), and Megatron-SWIFT's
    `flash` backend runs through MindSpeed; Megatron-SWIFT's `flash_3|flash_4` needs the
    flash-attn v3/v4 package (`flash-attn v3 is not installed`, megatron_args.py:921-931).

    ## Example
    `swift sft --attn_impl flash_attention_3 ...` on Ascend. Use instead: `--attn_impl flash_attention_2`.

    ## Fix safety
    Unsafe: FlashAttention-2 is a different kernel (same results up to rounding). Where some
    transformers release the launch may run with cannot load FlashAttention-2 on NPU
    (`npu-flash-attention-2-version`), the fix writes `sdpa` instead.
    """
    target = npu_target
    if target is None:
        return
    candidates = []
    if plan.consumer in ("swift", None, "hf", "deepspeed", "accelerate"):
        candidates += [("attn_impl", FA_NEWER), ("attn_implementation", FA_NEWER)]
    if plan.consumer == "llamafactory":
        candidates.append(("flash_attn", {"fa3": "fa2"}))
    if plan.consumer == "megatron":
        candidates.append(("attention_backend", {"flash_3": "flash", "flash_4": "flash"}))
    for name, table in candidates:
        value = text(plan, name)
        if value.value is None or value.value.lower() not in table:
            continue
        replacement = table[value.value.lower()]
        if replacement == "flash_attention_2" and not _flash_attention_2_loads(plan, context):
            replacement = "sdpa"  # FlashAttention-2 on NPU fails to load in some transformers releases (DS517)
        yield npu_finding(plan, target, value.span, f"{written(value.arg)}: FlashAttention 3/4 do not run on Ascend NPU",
                          f"they are CUDA kernels; {replacement} uses torch_npu's npu_fusion_attention", use=replacement)
