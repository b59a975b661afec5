"""DS308 single-process-deepspeed: one python process with a DeepSpeed config and several devices."""

from __future__ import annotations

from dslint.diagnostics import Finding, Related
from dslint.rule import rule


@rule("DS308", "single-process-deepspeed", severity="warning", target="launch")
def single_process_deepspeed(plan, context):
    """`python train.py --deepspeed ...` starts one process while several devices are visible.

    ## What it checks
    A plain `python` launch is one process. With a DeepSpeed config the HF Trainer initialises
    a distributed group of its own (`deepspeed.init_distributed()` from
    transformers training_args.py `_setup_devices`, line 1843 in 5.23), which has one rank when
    no launcher set WORLD_SIZE: one device trains, the other visible devices idle, and ZeRO
    partitions nothing. Use a launcher: `deepspeed`, `torchrun` or `accelerate launch`.

    ## Why it matters
    The job holds every visible device and uses one: it runs several times slower than the
    allocation allows, and a model sized for ZeRO across all devices may not fit on one.

    ## Example
    ```sh
    CUDA_VISIBLE_DEVICES=0,1,2,3 python train.py --deepspeed ds_z3.json
    ```
    Use instead: `deepspeed --include localhost:0,1,2,3 train.py --deepspeed ds_z3.json`.
    """
    if plan.launcher != "python" or plan.deepspeed is None or plan.world_size is None or plan.world_size.value != 1:
        return
    devices = plan.visible_devices
    if devices is None or devices.value is None or len(devices.value) < 2:
        return
    yield Finding(
        plan.span,
        f"one python process with a DeepSpeed config while {len(devices.value)} devices are visible",
        note=f"{len(devices.value) - 1} of them stay idle",
        help="start it with deepspeed, torchrun or accelerate launch",
        related=[Related(f"devices from {devices.origin}", devices.span), Related("DeepSpeed config named here", plan.deepspeed.span)],
    )
