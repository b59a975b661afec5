"""DS306 swift-device-map: ms-swift's visible devices against NPROC_PER_NODE."""

from __future__ import annotations

from dslint.diagnostics import Finding, Related
from dslint.rule import rule


@rule("DS306", "swift-device-map", severity="error", target="launch", consumers=("swift",))
def swift_device_map(plan, context):
    """ms-swift's visible devices and NPROC_PER_NODE disagree.

    ## What it checks
    ms-swift decides between data parallelism and `device_map` model parallelism from the
    visible device count `n` and the processes on the node (swift/utils/env.py:64-75):
    `n % NPROC_PER_NODE != 0` fails with `AssertionError: n_gpu: 4, local_world_size: 3`, and
    `n // NPROC_PER_NODE >= 2` switches to `device_map` mode (also with NPROC_PER_NODE unset and
    two or more devices), which DeepSpeed, FSDP and liger kernels refuse:
    ``DeepSpeed is not compatible with `device_map`. n_gpu: 8, local_world_size: 1``
    (swift/arguments/sft_args.py:254-257). Using `device_map` on purpose (several devices
    per process, no DeepSpeed) is not reported.

    ## Why it matters
    Both cases stop ms-swift during argument parsing on every node, after the job got its GPUs.

    ## Example
    ```sh
    CUDA_VISIBLE_DEVICES=0,1,2,3 swift sft --model Qwen/Qwen2.5-7B-Instruct --deepspeed zero2
    ```
    Use instead: `NPROC_PER_NODE=4` in front of `swift sft`.
    """
    if plan.consumer != "swift" or plan.launcher not in ("swift", "torchrun", "deepspeed", "accelerate"):
        return
    devices = plan.visible_devices
    if devices is None or devices.value is None or not devices.value:
        return
    procs = plan.procs_per_node
    if procs is None or procs.value is None:
        return
    n, local = len(devices.value), procs.value
    related = [Related(f"devices from {devices.origin}", devices.span), Related(f"processes per node from {procs.origin}", procs.span)]
    if local and n % local:
        yield Finding(
            devices.span or plan.span,
            f"{n} visible devices are not divisible by {local} processes per node",
            note=f"ms-swift asserts 'n_gpu: {n}, local_world_size: {local}'",
            related=related,
        )
        return
    if local and n // local >= 2:
        yield from _device_map_refused(plan, procs, devices, related)


def _device_map_refused(plan, procs, devices, related):
    """device_map mode (several devices per process) with a flag that refuses it: DeepSpeed, FSDP, liger kernels."""
    n, local = len(devices.value), procs.value
    users = [name for name in ("deepspeed", "fsdp", "use_liger_kernel") if plan.arg(name) is not None and plan.arg(name).value not in (False, "false", "False")]
    if users:
        arg = plan.arg(users[0])
        yield Finding(
            (procs.span if not procs.default else None) or devices.span or plan.span,
            f"{n} visible devices with {local} process(es) per node put ms-swift in device_map mode",
            note=f"--{users[0]} does not support it: ms-swift raises 'DeepSpeed is not compatible with `device_map`. "
            f"n_gpu: {n}, local_world_size: {local}'",
            help=f"set NPROC_PER_NODE={n}",
            related=related + [Related(arg.origin, arg.span)],
        )
