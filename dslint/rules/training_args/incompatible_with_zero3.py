"""DS713: LLaMA-Factory options it rejects under DeepSpeed ZeRO-3."""

from __future__ import annotations

from dslint.diagnostics import Finding, Related
from dslint.rule import rule
from dslint.rules.training_args._common import truthy, zero_stage


@rule("DS713", "incompatible-with-zero3", severity="error", target="launch", consumers=("llamafactory",))
def incompatible_with_zero3(plan, context):
    """LLaMA-Factory options it rejects under DeepSpeed ZeRO-3.

    ## What it checks
    With a DeepSpeed config at `zero_optimization.stage: 3` (llamafactory/hparams/parser.py,
    model/model_utils/quantization.py):
    - `pure_bf16: true`: `` `pure_bf16` is incompatible with DeepSpeed ZeRO-3.``
    - `quantization_bit` other than 4 with bitsandbytes (the default method): `Only 4-bit
      quantized model can use fsdp+qlora or auto device map.`; HQQ/EETQ quantization: `... is
      incompatible with DeepSpeed ZeRO-3 or FSDP.`
    - `predict_with_generate: true`: `` `predict_with_generate` is incompatible with DeepSpeed ZeRO-3.``
    - `use_unsloth`: `Unsloth is incompatible with DeepSpeed ZeRO-3.`; `pissa_init`: `Please use
      scripts/pissa_init.py to initialize PiSSA in DeepSpeed ZeRO-3.`

    ## Why it matters
    Each one ends the job at start-up, after its queue wait. Most are raised while LLaMA-Factory
    parses its arguments (`get_train_args`); the quantization ones only while the model loads
    (`configure_quantization`), after the dataset has already been tokenized
    (llamafactory/train/sft/workflow.py `run_sft` calls `get_dataset` before `load_model`).

    ## Example
    `pure_bf16: true` with `deepspeed: examples/deepspeed/ds_z3_config.json`.
    Use instead: `bf16: true`.
    """
    if plan.consumer != "llamafactory":
        return
    stage, stage_node = zero_stage(plan)
    if stage != 3:
        return
    related = [Related("zero_optimization.stage 3 in the DeepSpeed config", stage_node.span if stage_node is not None else None)]
    for name, message in _REFUSED_FLAGS:
        arg = plan.arg(name)
        if arg is not None and truthy(arg.value):
            yield Finding(arg.name_span or arg.span or plan.span, f"{name} with DeepSpeed ZeRO-3",
                          note=f"LLaMA-Factory raises '{message}'", related=related)
    yield from _quantization(plan, related)


# The flags LLaMA-Factory refuses under ZeRO-3, and what it raises (llamafactory/hparams/parser.py).
_REFUSED_FLAGS = (
    ("pure_bf16", "`pure_bf16` is incompatible with DeepSpeed ZeRO-3."),
    ("predict_with_generate", "`predict_with_generate` is incompatible with DeepSpeed ZeRO-3."),
    ("use_unsloth", "Unsloth is incompatible with DeepSpeed ZeRO-3."),
    ("pissa_init", "Please use scripts/pissa_init.py to initialize PiSSA in DeepSpeed ZeRO-3."),
)


def _quantization(plan, related):
    """bitsandbytes at other than 4 bits, HQQ and EETQ: refused when the model loads (configure_quantization)."""
    bits = plan.arg("quantization_bit")
    if bits is None or bits.value is None:
        return
    method = plan.arg("quantization_method")
    method_value = str(method.value).lower() if method is not None and method.value is not None else "bnb"
    try:
        nbits = int(bits.value)
    except (TypeError, ValueError):
        return
    if method_value in ("bnb", "bitsandbytes") and nbits != 4:
        yield Finding(bits.name_span or bits.span or plan.span, f"quantization_bit {nbits} with DeepSpeed ZeRO-3",
                      note="LLaMA-Factory raises 'Only 4-bit quantized model can use fsdp+qlora or auto device map.'", related=related)
    elif method_value in ("hqq", "eetq"):
        yield Finding(bits.name_span or bits.span or plan.span, f"{method_value.upper()} quantization with DeepSpeed ZeRO-3",
                      note=f"LLaMA-Factory raises '{method_value.upper()} quantization is incompatible with DeepSpeed ZeRO-3 or FSDP.'",
                      related=related)
