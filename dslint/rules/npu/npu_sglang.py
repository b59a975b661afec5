"""DS513 npu-sglang: the rule and the helpers only it uses."""

from __future__ import annotations

from dslint.rule import rule
from dslint.launch.args import text, written
from dslint.rules.npu._common import npu_finding


@rule("DS513", "npu-sglang", severity="error", target="launch", fix="unsafe", facts=("npu_target",))
def npu_sglang(plan, context, *, npu_target):
    """SGLang as ms-swift's inference engine on Ascend NPU.

    ## What it checks
    ms-swift (4.x) `--infer_backend sglang` (`swift infer|deploy|rollout|eval|sample`) on Ascend:
    the NPU support table lists "Using SGLang as the inference engine" as **not supported**
    (NPU-support.md); vLLM runs through vLLM-Ascend (the docs pin 0.23.0). Other consumers are
    not judged.

    ## Why it matters
    The deployment, evaluation or rollout server is built on an engine ms-swift does not support
    on Ascend. ms-swift carries NPU patches for vLLM-Ascend (swift/model/npu_patch/vllm_ascend*.py)
    and none for SGLang (swift/infer_engine/sglang_engine.py has no NPU path), so the supported
    route is a one-flag change away while this one is unverified ground.

    ## Example
    `swift deploy --model Qwen/Qwen3-8B --infer_backend sglang` on Ascend.
    Use instead: `--infer_backend vllm` (with vllm-ascend installed).

    ## Fix safety
    Unsafe: vLLM needs the vllm-ascend package and has its own options.
    """
    target = npu_target
    if target is None or plan.consumer not in ("swift", "megatron"):
        return
    backend = text(plan, "infer_backend")
    if backend.value is None or backend.value.lower() != "sglang":
        return
    yield npu_finding(plan, target, backend.span, f"{written(backend.arg)}: ms-swift does not support SGLang on Ascend NPU",
                      "NPU-support.md; vllm runs there with vllm-ascend", use="vllm")
