"""DS510 npu-liger-kernel: the rule and the helpers only it uses."""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix, Severity
from dslint.rule import rule
from dslint.launch.args import flag, remove_arg, written
from dslint.rules.npu._common import npu_fix, target_related


@rule("DS510", "npu-liger-kernel", severity="error", target="launch", fix="unsafe", facts=("npu_target",))
def npu_liger_kernel(plan, context, *, npu_target):
    """Liger kernels on Ascend NPU.

    ## What it checks
    - ms-swift (4.x): `--use_liger_kernel true` on Ascend. ms-swift's NPU support table lists
      Liger-Kernel as **not supported** (docs BestPractices/NPU-support.md). ms-swift already
      replaces the model's RMSNorm, rotary embedding and SwiGLU with torch_npu fused operators
      (`npu_rms_norm`, `npu_rotary_mul`, `npu_swiglu`) for Qwen2/Qwen3/Qwen3-MoE/Qwen3.5 on NPU,
      automatically (swift/model/npu_patch/model.py; `--enable_npu_model_patch false` turns it
      off). Error.
    - LLaMA-Factory (0.9.6): `enable_liger_kernel: true` is applied on NPU, but with `swiglu` and
      `fused_linear_cross_entropy` switched off on devices whose name lacks "Ascend910"
      (src/llamafactory/model/model_utils/liger_kernel.py:103-108); LLaMA-Factory's own NPU
      fused operators are `use_v1_kernels: true`. Information.

    ## Why it matters
    Under ms-swift the run rests on a combination ms-swift does not support on Ascend, and for
    Qwen2/Qwen3/Qwen3-MoE/Qwen3.5 it gains nothing: their RMSNorm, rotary embedding and SwiGLU
    already run as NPU fused operators. Under LLaMA-Factory the flag works, but on a device whose
    name lacks "Ascend910" without the SwiGLU and fused linear cross-entropy kernels, so the run
    gets only part of what the flag was turned on for.

    ## Example
    `swift sft --use_liger_kernel true ...` on Ascend. Use instead: leave it out.

    ## Fix safety
    Unsafe, for ms-swift: it deletes a feature flag you set (ms-swift's NPU fused operators stay
    in place, but whether the run should go without Liger is your call).
    """
    target = npu_target
    if target is None:
        return
    if plan.consumer == "swift":
        liger = flag(plan, "use_liger_kernel")
        if liger.value is not True:
            return
        edit = remove_arg(liger.arg)
        fix = npu_fix(plan, target, Fix.unsafe("Remove --use_liger_kernel", edit)) if edit is not None else None
        yield Finding(
            liger.arg.name_span or liger.span or plan.span,
            f"{written(liger.arg)}: ms-swift does not support Liger kernels on Ascend NPU",
            note="NPU-support.md; ms-swift already applies the torch_npu fused operators (npu_rms_norm, npu_rotary_mul, npu_swiglu) "
            "to Qwen models automatically (LLaMA-Factory's route to NPU fused operators is use_v1_kernels)",
            related=[target_related(target)],
            fix=fix,
            help=None if fix is not None else "leave --use_liger_kernel out on NPU",
        )
    elif plan.consumer == "llamafactory":
        liger = flag(plan, "enable_liger_kernel")
        if liger.value is not True:
            return
        yield Finding(
            liger.arg.name_span or liger.span or plan.span,
            f"{written(liger.arg)} on Ascend NPU",
            note="LLaMA-Factory applies Liger but turns off its swiglu and fused_linear_cross_entropy kernels on NPUs whose name "
            "lacks 'Ascend910'",
            help="LLaMA-Factory's NPU fused operators are use_v1_kernels: true",
            related=[target_related(target)],
            severity=Severity.INFO,
        )
