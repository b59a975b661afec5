"""DS515 npu-fp8: the rule and the helpers only it uses."""

from __future__ import annotations

from dslint.rule import rule
from dslint.launch.args import flag, text, written
from dslint.rules.npu._common import npu_finding


@rule("DS515", "npu-fp8", severity="warning", target="launch", facts=("npu_target",))
def npu_fp8(plan, context, *, npu_target):
    """FP8 training on Ascend NPU.

    ## What it checks
    FP8 requested by a launch whose target is Ascend NPU: LLaMA-Factory `fp8: true`, accelerate
    `mixed_precision: fp8`, ms-swift `--quant_method fp8`, Megatron-SWIFT `--fp8_format` /
    `--fp8_recipe`.

    ## Why it matters
    ms-swift's NPU FAQ: "Can FP8 or quantized models be trained directly on NPUs? Do not assume
    they can ... use BF16 weights first" (NPU-support.md Q13). LLaMA-Factory's and accelerate's
    FP8 backends (torchao, Transformer Engine, MS-AMP) are built for NVIDIA FP8 GPUs.

    ## Example
    `fp8: true` in a LLaMA-Factory config run on Ascend. Use instead: `bf16: true`.
    """
    target = npu_target
    if target is None:
        return
    hits = []
    if plan.consumer == "llamafactory":
        fp8 = flag(plan, "fp8")
        if fp8.value is True:
            hits.append((fp8.arg, "LLaMA-Factory's FP8 goes through accelerate's torchao/Transformer Engine backends, built for NVIDIA FP8 GPUs"))
    if plan.consumer in ("swift", "megatron"):
        method = text(plan, "quant_method")
        if method.value is not None and method.value.lower() == "fp8":
            hits.append((method.arg, "ms-swift's NPU FAQ: do not assume FP8 models can be trained on NPU; use BF16 weights"))
        for name in ("fp8_format", "fp8_recipe", "fp8"):
            value = plan.arg(name)
            if value is not None and value.value not in (None, False, "false", "False", "none", "None"):
                hits.append((value, "ms-swift's NPU FAQ: do not assume FP8 can be trained on NPU; Megatron's FP8 runs on Transformer Engine"))
                break
    acc = plan.launcher_args.get("mixed_precision") if plan.launcher == "accelerate" else None
    if acc is not None and isinstance(acc.value, str) and acc.value.lower() == "fp8":
        hits.append((acc, "accelerate's FP8 backends (Transformer Engine, MS-AMP, torchao) are built for NVIDIA FP8 GPUs"))
    for arg, why in hits:
        yield npu_finding(plan, target, arg.span, f"{written(arg)} on Ascend NPU", why, help="train in bf16")
