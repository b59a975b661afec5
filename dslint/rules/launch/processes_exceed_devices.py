"""DS304 processes-exceed-devices: more processes per node than visible devices."""

from __future__ import annotations

from dslint.diagnostics import Finding, Related
from dslint.rule import rule


@rule("DS304", "processes-exceed-devices", severity="error", target="launch")
def processes_exceed_devices(plan, context):
    """More processes per node than visible devices.

    ## What it checks
    The processes the launcher starts on one node (`--nproc_per_node`, `NPROC_PER_NODE`,
    `--num_gpus`, accelerate's `num_processes` over `num_machines`) against the devices listed in
    `CUDA_VISIBLE_DEVICES` / `ASCEND_RT_VISIBLE_DEVICES` for that launch. The `deepspeed`
    launcher is not judged when `--num_gpus` or `--include` is given, because it then ignores
    the variable (see `deepspeed-ignores-visible-devices`).

    ## Why it matters
    Each rank binds device `LOCAL_RANK` (`torch.cuda.set_device(local_rank)` in transformers
    training_args.py `_setup_devices`, and in DeepSpeed's and accelerate's process setup); ranks
    beyond the device count fail with `CUDA error: invalid device ordinal`. On Ascend: "If the
    process count is larger than the number of visible devices, ranks may fail to bind devices
    ... HCCL may report errors" (ms-swift docs/source_en/BestPractices/NPU-support.md:791-793).

    ## Example
    ```sh
    CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node 4 train.py
    ```
    Use instead: `--nproc_per_node 2`, or list four devices.
    """
    procs, devices = plan.procs_per_node, plan.visible_devices
    if procs is None or procs.value is None or devices is None or devices.value is None or procs.default:
        return
    if plan.launcher == "deepspeed" and ("num_gpus" in plan.launcher_args or "include" in plan.launcher_args):
        return
    if procs.value > len(devices.value):
        yield Finding(
            procs.span or plan.span,
            f"{procs.value} processes per node but only {len(devices.value)} visible device(s)",
            note=f"ranks {len(devices.value)}..{procs.value - 1} have no device",
            related=[Related(f"process count from {procs.origin}", procs.span), Related(f"devices from {devices.origin}", devices.span)],
        )
