"""DS512 npu-bitsandbytes: the rule and the helpers only it uses."""

from __future__ import annotations

from dslint.diagnostics import Edit, Finding, Fix, Related
from dslint.rule import rule
from dslint.launch.args import flag, integer, text, written
from dslint.rules.npu._common import npu_finding, npu_fix, target_related


@rule("DS512", "npu-bitsandbytes", severity="error", target="launch", fix="unsafe", facts=("npu_target",))
def npu_bitsandbytes(plan, context, *, npu_target):
    """bitsandbytes quantization (QLoRA) on Ascend NPU.

    ## What it checks
    - ms-swift (4.x): `--quant_method bnb` on Ascend. QLoRA is listed as **not supported** on NPU
      (NPU-support.md, "Quantization/QLoRA related features"). Error.
    - LLaMA-Factory (0.9.6): `quantization_bit` with the bitsandbytes method (the default). It
      works on Ascend only with bitsandbytes compiled for NPU (`cmake -DCOMPUTE_BACKEND=npu`), in
      4-bit NF4, with `double_quantization: false` (README "Install BitsAndBytes" for Ascend;
      examples/train_qlora/qwen3_lora_sft_bnb_npu.yaml). Errors: double quantization left on
      (the default is true), `quantization_type: fp4`, 8-bit.

    ## Why it matters
    The CUDA build of bitsandbytes fails on NPU (`The installed version of bitsandbytes was
    compiled without GPU support`, `'NoneType' object has no attribute 'cadam32bit_grad_fp32'`;
    hiyouga/LlamaFactory#3271, #6452).

    ## Example
    ```yaml
    quantization_bit: 4
    quantization_method: bnb
    ```
    on Ascend. Use instead: add `double_quantization: false` (and install the NPU build).

    ## Fix safety
    Unsafe for `double_quantization`: it sets it to false (or adds the key) as LLaMA-Factory's NPU
    example does, a change of the quantization you chose (or got by default). Unsafe for
    `quantization_type: fp4`: it writes `nf4`, another 4-bit format. No fix for other bit widths,
    nor for ms-swift: use bf16 LoRA instead.
    """
    target = npu_target
    if target is None:
        return
    if plan.consumer in ("swift", "megatron"):
        yield from _swift_qlora(plan, target)
    elif plan.consumer == "llamafactory":
        yield from _llamafactory_bitsandbytes(plan, target)


def _swift_qlora(plan, target):
    method = text(plan, "quant_method")
    if method.value is not None and method.value.lower() == "bnb":
        yield npu_finding(plan, target, method.span,
                          f"{written(method.arg)}: ms-swift does not support bitsandbytes quantization (QLoRA) on Ascend NPU",
                          "NPU-support.md", help=None if plan.entry == "swift export" else "train LoRA on bf16 weights instead")


def _llamafactory_bitsandbytes(plan, target):
    """LLaMA-Factory's NPU route: 4-bit NF4 without double quantization."""
    bits = integer(plan, "quantization_bit")
    if not isinstance(bits.value, int):
        return
    method = text(plan, "quantization_method")
    if method.value is not None and method.value.lower() != "bnb":
        return
    if bits.value != 4:
        yield npu_finding(plan, target, bits.span, f"{written(bits.arg)} with bitsandbytes on Ascend NPU",
                          "LLaMA-Factory's NPU route is 4-bit NF4 with double_quantization: false and bitsandbytes built for NPU")
        return
    qtype = text(plan, "quantization_type")
    if qtype.value is not None and qtype.value.lower() == "fp4":
        yield npu_finding(plan, target, qtype.span, f"{written(qtype.arg)} on Ascend NPU", "LLaMA-Factory's NPU bitsandbytes route is NF4",
                          use="nf4", help="use quantization_type: nf4")
    yield from _double_quantization(plan, target, bits)


def _double_quantization(plan, target, bits):
    double = flag(plan, "double_quantization")
    if double.value is False:
        return
    fix = None
    if double.arg is not None and double.span is not None:
        fix = Fix.unsafe("Set double_quantization to false", Edit.replace(double.span, "false"))
    elif bits.arg is not None and bits.arg.span is not None and " in " in bits.arg.origin.split(" at ")[0]:
        fix = _yaml_insert_after(bits.arg, "double_quantization: false")
    fix = npu_fix(plan, target, fix)
    anchor = double.span if double.arg is not None else bits.span
    yield Finding(
        anchor or plan.span,
        ("double_quantization is on (LLaMA-Factory's default)" if double.arg is None else written(double.arg))
        + " with 4-bit bitsandbytes on Ascend NPU",
        note="the NPU build of bitsandbytes needs double_quantization: false (LLaMA-Factory README, Ascend QLoRA)",
        related=[Related(written(bits.arg), bits.span), target_related(target)],
        fix=fix,
        help=None if fix is not None else "set double_quantization: false",
    )


def _yaml_insert_after(arg, line_text: str):
    span = arg.span
    text_ = span.source.text
    line_end = text_.find("\n", span.end)
    if line_end == -1:
        return None
    key_span = arg.name_span or span
    line_start = text_.rfind("\n", 0, key_span.start) + 1
    indent = text_[line_start:key_span.start]
    if indent.strip():
        return None
    return Fix.unsafe(f"Add {line_text}", Edit(span.source, line_end + 1, line_end + 1, f"{indent}{line_text}\n"))
