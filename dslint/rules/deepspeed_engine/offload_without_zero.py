"""DS248 offload-without-zero."""

from __future__ import annotations

from dslint.diagnostics import Finding
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules.deepspeed_engine._common import stage_related


@rule("DS248", "offload-without-zero", severity="warning", target="deepspeed")
def offload_without_zero(use, context):
    """Optimizer offload to CPU with ZeRO disabled (stage 0).

    ## What it checks
    `offload_optimizer.device` `cpu` or `nvme` while the ZeRO stage is 0. A launch whose program is established as evaluation only (gradients off, no
    backward pass or optimizer in the files read, no save in the entry; `dslint explain` shows it) is not judged: it takes no optimizer step.

    ## Why it matters
    Without ZeRO nothing moves optimizer states off the GPU, yet DeepSpeed builds
    `DeepSpeedCPUAdam` from the config (engine.py:2384-2400). On a GPU the first step then
    fails with `CPUAdam param is on cuda:0 and must be 'cpu'` (deepspeed/ops/adam/cpu_adam.py:148;
    read from the source, not reproduced on a GPU).

    ## Example
    ```json
    {"optimizer": {"type": "AdamW"}, "zero_optimization": {"stage": 0, "offload_optimizer": {"device": "cpu"}}}
    ```
    Use instead:
    ```json
    {"optimizer": {"type": "AdamW"}, "zero_optimization": {"stage": 1, "offload_optimizer": {"device": "cpu"}}}
    ```

    ## Fix safety
    No fix: either raise the stage or drop the offload.
    """
    if ds.zero_stage(use.config) != 0 or not ds.trains(use):
        return
    zero = ds.zero_section(use.config)
    device = ds.offload_device(use.config, "offload_optimizer")
    if zero is None or device not in ("cpu", "nvme"):
        return
    item = zero.entry("offload_optimizer") or zero.entry("cpu_offload")
    yield Finding(item.key_span, f"optimizer offload to {device} with ZeRO stage 0", related=stage_related(use.config),
                  note="nothing partitions or moves the optimizer states, and DeepSpeedCPUAdam fails on GPU parameters at the first step")
