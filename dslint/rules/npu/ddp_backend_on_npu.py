"""DS504 ddp-backend-on-npu: the rule and the helpers only it uses."""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix
from dslint.rule import rule
from dslint.launch.args import remove_arg, written
from dslint.rules.npu._common import npu_finding, target_related


@rule("DS504", "ddp-backend-on-npu", severity="error", target="launch", fix="safe or unsafe", facts=("launch_target",))
def ddp_backend_on_npu(plan, context, *, launch_target):
    """`--ddp_backend` that the launched trainer cannot use on Ascend NPU.

    ## What it checks
    - HF Trainer, ms-swift (`swift sft|pt|rlhf`) and LLaMA-Factory without DeepSpeed:
      `--ddp_backend nccl` on Ascend NPU. transformers passes it to
      `torch.distributed.init_process_group` (training_args.py:1886-1891), and NCCL needs CUDA
      GPUs. With `--deepspeed` the backend comes from DeepSpeed's accelerator (`hccl` on NPU)
      and `--ddp_backend` is not used, so that case is not reported. ms-swift picks `hccl` by
      itself when the flag is absent (swift/utils/torch_utils.py:337-345).
    - Megatron-SWIFT (`megatron sft|pt|rlhf`): `--ddp_backend` accepts only `nccl` and `gloo`
      (`Literal['nccl', 'gloo']`, swift/megatron/arguments/megatron_args.py:586), so `hccl`
      stops argparse with `invalid choice`, on any hardware. Its Ascend examples keep the
      default `nccl`, which the Ascend stack (MindSpeed) serves with HCCL.

    ## Why it matters
    The job dies at start-up, after its queue wait. With `nccl` on NPUs no rank can create the
    process group, which transformers does while it sets up the devices
    (`TrainingArguments._setup_devices`), before a single training step; Megatron-SWIFT refuses
    `hccl` even earlier, while it parses the arguments.

    ## Example
    `swift sft --ddp_backend nccl ...` on Ascend. Use instead: `--ddp_backend hccl`, or leave it out.

    ## Fix safety
    Safe: `hccl` is the backend ms-swift and transformers use on NPU, the one `nccl` stands for
    there. For Megatron-SWIFT the fix removes the flag, leaving the default its Ascend examples
    run with: safe for `hccl` (that default is HCCL on Ascend, served by MindSpeed), unsafe for
    any other backend, whose choice the fix would drop.
    """
    arg = plan.arg("ddp_backend")
    if arg is None or not isinstance(arg.value, str):
        return
    backend = arg.value.strip().lower()
    npu = launch_target if launch_target is not None and launch_target.npu else None
    if plan.consumer == "megatron":
        if backend in ("nccl", "gloo"):
            return
        edit = remove_arg(arg)
        yield Finding(
            arg.span or plan.span,
            f"{written(arg)}: Megatron-SWIFT accepts only nccl or gloo",
            related=[target_related(npu)] if npu is not None else [],
            # hccl: the default nccl is HCCL on Ascend (MindSpeed); any other backend is a choice the fix would drop
            fix=(Fix.safe if backend == "hccl" else Fix.unsafe)("Remove --ddp_backend", edit) if edit is not None else None,
            note=f"it stops with \"invalid choice: '{arg.value}'\" (megatron_args.py:586); on Ascend the default nccl is served "
            "by MindSpeed with HCCL",
        )
        return
    if npu is None or backend != "nccl" or plan.consumer not in ("hf", "swift", "llamafactory", None):
        return
    if plan.deepspeed is not None or plan.arg("deepspeed") is not None:
        return
    yield npu_finding(plan, npu, arg.span, f"{written(arg)} on Ascend NPU", "torch.distributed cannot start NCCL without CUDA GPUs",
                      use="hccl", safe=True, help="use hccl")
