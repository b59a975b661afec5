"""DS501 cuda-visible-devices-on-npu: the rule and the helpers only it uses."""

from __future__ import annotations

from dslint.diagnostics import Finding, Related
from dslint.rule import rule
from dslint.rules.npu._common import env_span, target_related, rename_fix


@rule("DS501", "cuda-visible-devices-on-npu", severity="warning", target="launch", fix="unsafe", facts=("npu_target",))
def cuda_visible_devices_on_npu(plan, context, *, npu_target):
    """`CUDA_VISIBLE_DEVICES` in an Ascend NPU launch: torch_npu does not read it.

    ## What it checks
    A launch whose target is Ascend NPU with `CUDA_VISIBLE_DEVICES` in its environment.

    ## Why it matters
    The Ascend runtime selects devices with `ASCEND_RT_VISIBLE_DEVICES`; `CUDA_VISIBLE_DEVICES`
    is ignored ("when select gpu id on ascend npu, CUDA_VISIBLE_DEVICES is not work",
    deepspeedai/DeepSpeed#5369), so every NPU of the machine stays visible. The ranks then bind
    NPUs 0..n-1 whatever the variable says, possibly those of another job; LLaMA-Factory's
    `NPROC_PER_NODE` default (the visible device count) and the `deepspeed` launcher start one
    process per NPU of the machine; ms-swift with fewer processes than visible NPUs switches to
    device_map mode. DeepSpeed's NPU accelerator itself uses `ASCEND_RT_VISIBLE_DEVICES`
    (deepspeed 0.19.8 accelerator/npu_accelerator.py:336-341). ms-swift's Megatron Ascend page
    still shows `CUDA_VISIBLE_DEVICES`; its review (modelscope/ms-swift#8141) and the NPU best
    practice use `ASCEND_RT_VISIBLE_DEVICES`.

    ## Example
    ```sh
    source /usr/local/Ascend/ascend-toolkit/set_env.sh
    CUDA_VISIBLE_DEVICES=0,1 NPROC_PER_NODE=2 swift sft --model Qwen/Qwen3-8B --dataset d.jsonl
    ```
    Use instead: `ASCEND_RT_VISIBLE_DEVICES=0,1`.

    ## Fix safety
    Unsafe: the same list under the name the Ascend runtime reads, but a list that selected
    nothing starts to select NPUs, which changes the devices the run uses (and a script that reads
    `$CUDA_VISIBLE_DEVICES` elsewhere loses it). No fix when `ASCEND_RT_VISIBLE_DEVICES` is also set. No fix
    when the list would then select fewer NPUs than the launch starts processes per node, or when
    the deepspeed launcher takes its devices from `--num_gpus`/`--include` and ignores the variable.
    No fix when the variable is set where a launch not on NPU sees it too (exported before an `if`
    that picks GPU or NPU).
    """
    target = npu_target
    value = plan.env.get("CUDA_VISIBLE_DEVICES")
    if target is None or value is None:
        return
    ascend = plan.env.get("ASCEND_RT_VISIBLE_DEVICES")
    if ascend is not None:
        yield Finding(
            env_span(value, plan),
            "CUDA_VISIBLE_DEVICES has no effect on Ascend NPU",
            note="ASCEND_RT_VISIBLE_DEVICES alone selects the devices",
            help="remove it",
            related=[Related("ASCEND_RT_VISIBLE_DEVICES", getattr(ascend, "span", None)), target_related(target)],
        )
        return
    yield Finding(
        env_span(value, plan),
        "CUDA_VISIBLE_DEVICES has no effect on Ascend NPU",
        note="every NPU stays visible and the ranks bind NPUs 0..n-1",
        related=[target_related(target)],
        fix=rename_fix(plan, value, "CUDA_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES", "Rename to ASCEND_RT_VISIBLE_DEVICES", target),
        help="select devices with ASCEND_RT_VISIBLE_DEVICES",
    )
