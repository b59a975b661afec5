"""DS244 dtype-conflict."""

from __future__ import annotations

from dslint.diagnostics import Finding
from dslint.documents.model import Mapping
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules import _deepspeed_schema as dss
from dslint.rules.deepspeed_engine._common import stage_related


_DTYPE_OF = {
    "fp16": "fp16", "float16": "fp16", "half": "fp16", "torch.float16": "fp16",
    "bf16": "bf16", "bfloat16": "bf16", "torch.bfloat16": "bf16",
    "fp32": "fp32", "float32": "fp32", "float": "fp32", "torch.float32": "fp32",
    "int8": "int8", "torch.int8": "int8",
}


# The first release without the BFLOAT16 wrapper for bf16 + fp32 accumulation without ZeRO
# (engine.py _do_optimizer_sanity_check: the branch is in 0.18.4, gone in 0.18.5).
_BF16_FP32_ACCUM_REMOVED = "0.18.5"


@rule("DS244", "dtype-conflict", severity="error", target="deepspeed")
def dtype_conflict(use, context):
    """`data_types` asks for a dtype that contradicts the enabled fp16/bf16 mode.

    ## What it checks
    - `data_types.param_dtype` (DeepSpeed ≥ 0.19.2) different from the model dtype the
      `fp16`/`bf16` flags give (fp32 when neither is on): engine.py:1812-1829;
    - without ZeRO (stage 0), `data_types.grad_accum_dtype` different from that model dtype:
      `_do_optimizer_sanity_check` raises for every mix it has no wrapper for
      (engine.py:2313-2323).

    bf16 training with fp32 accumulation and no ZeRO is the one mix that depends on the
    release: up to DeepSpeed 0.18.4 `_do_optimizer_sanity_check` gives it the BFLOAT16 wrapper
    (`elif model_dtype == torch.bfloat16 and grad_accum_dtype == torch.float32: return BFLOAT16`,
    engine.py:1476-1477 in 0.18.4, 1220-1221 in 0.14.0); 0.18.5 removed that branch, so from
    then on it reaches the `NotImplementedError` (engine.py:2322-2323 in 0.19.8). It is an
    error when the repository's DeepSpeed pin allows only releases from 0.18.5 on, info naming
    them when the pin (or its absence) allows older ones too, and nothing when every allowed
    release accepts it.

    `"auto"` precision flags are not judged (HF/accelerate decide them).

    ## Why it matters
    `AssertionError: data_types.param_dtype='bf16' conflicts with the enabled precision mode` and
    `NotImplementedError: unsupported mix of model_dtype=torch.bfloat16 and
    grad_accum_dtype=torch.float32` at `deepspeed.initialize`.

    ## Example
    With DeepSpeed ≥ 0.18.5:
    ```json
    {"bf16": {"enabled": true}, "data_types": {"grad_accum_dtype": "fp32"}}
    ```
    Use instead (fp32 accumulation needs ZeRO there):
    ```json
    {"bf16": {"enabled": true}, "data_types": {"grad_accum_dtype": "fp32"}, "zero_optimization": {"stage": 1}}
    ```

    ## Fix safety
    No fix.
    """
    config = use.config
    data_types = config.get("data_types")
    if not isinstance(data_types, Mapping):
        return
    fp16 = ds.precision_enabled(config, "fp16")
    bf16 = ds.precision_enabled(config, "bf16")
    if fp16 is ds.UNKNOWN or bf16 is ds.UNKNOWN:
        return
    model = "fp16" if fp16 else "bf16" if bf16 else "fp32"
    versions = dss.Versions(use, context)
    param = data_types.entry("param_dtype")
    if param is not None:
        wanted = _DTYPE_OF.get(ds.raw(param.value)) if isinstance(ds.raw(param.value), str) else None
        if wanted is not None and wanted != model:
            found = Finding(param.value.span, f"data_types.param_dtype {ds.show(param.value)} conflicts with the enabled precision ({model})",
                            note="DeepSpeed asserts at deepspeed.initialize", help="set the matching fp16/bf16 'enabled' flag or omit param_dtype")
            yield from versions.within([found], versions.since(dss.introduced_in(("data_types", "param_dtype"))))
    accum = data_types.entry("grad_accum_dtype")
    if accum is not None and ds.zero_stage(config) == 0:
        wanted = _DTYPE_OF.get(ds.raw(accum.value)) if isinstance(ds.raw(accum.value), str) else None
        if wanted is not None and wanted != model:
            found = Finding(accum.value.span, f"data_types.grad_accum_dtype {ds.show(accum.value)} with {model} training and no ZeRO", related=stage_related(config),
                            note="DeepSpeed raises 'NotImplementedError: unsupported mix of model_dtype and grad_accum_dtype' at deepspeed.initialize (engine.py:2323)",
                            help="use ZeRO stage 1 or higher, or drop grad_accum_dtype")
            failing = versions.since(_BF16_FP32_ACCUM_REMOVED) if (model, wanted) == ("bf16", "fp32") else versions.key
            yield from versions.within([found], failing)
