"""DS212 invalid-choice."""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix
from dslint.documents.model import Entry, Mapping
from dslint.documents.edits import replace_value
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules import _deepspeed_schema as dss
from dslint.rules.deepspeed_values._common import accepted_types, how_written, placeholder_help


# ---- choices --------------------------------------------------------------------------------

_DTYPES = ("torch.float16", "fp16", "float16", "half", "torch.float32", "fp32", "float32", "float", "torch.int8", "int8", "torch.bfloat16", "bf16", "bfloat16")
_COMM_CANONICAL = {"bfloat16": "bf16", "torch.bfloat16": "bf16", "float16": "fp16", "half": "fp16", "torch.float16": "fp16", "float32": "fp32", "float": "fp32", "torch.float32": "fp32"}
_CHECKPOINT_CHOICES = {
    ("checkpoint", "tag_validation"): ("WARN", "IGNORE", "FAIL"),
    ("checkpoint", "writer", "type"): ("MOCK", "PYTHON", "FAST"),
}


@rule("DS212", "invalid-choice", severity="error", target="deepspeed", fix="safe")
@ds.judges_values
def invalid_choice(use, context):
    """A value outside the set DeepSpeed accepts: stage, offload device, communication dtype, all-reduce op, ...

    ## What it checks
    - `zero_optimization.stage` must be 0-3 after integer coercion (zero/config.py:95;
      `"3"` and `3.0` are fine, `4`, `-1` and `null` are not);
    - `offload_optimizer.device`/`offload_param.device`: `none`, `cpu` or `nvme`, lowercase
      (zero/offload_config.py:14-18);
    - `communication_data_type` and `seq_parallel_communication_data_type`: `fp16`, `bf16`
      or `fp32`, any case (deepspeed/runtime/config.py:216-230); `bfloat16`, `float32` and
      `"auto"` are rejected;
    - `gradient_allreduce_op`: `mean` or `sum`, any case (config.py:241-249, DeepSpeed ≥ 0.19.6);
    - `checkpoint.tag_validation` (warn/ignore/fail), `checkpoint.parallel_write.pipeline_stage`
      (a boolean), `checkpoint.writer.type` (mock/python/fast) (config.py:387-406,
      model_checkpointing/config.py:22-28);
    - `data_types.keep_in_fp32_modules` ("auto" or a list of strings, config.py:563-567),
      `torch_autocast.dtype` and `data_types.*_dtype` (the `DtypeEnum` spellings, config.py:144-168);
    - the other enums of validated sections (`weight_quantization.q_type`, ...).

    Templates: a config with quoteless placeholder values (`stage: CONFIG_ZERO_STAGE,`, `$MBS`, `{{ gas }}`)
    that no launch passes to a program as it is, is filled in by a script (sed, envsubst)
    before DeepSpeed reads the copy: its placeholders are not judged, its other values are.
    When a launch names the file itself, the placeholders reach DeepSpeed and are reported.

    ## Why it matters
    Each raises when DeepSpeed parses the config (`data_types.*_dtype` at `deepspeed.initialize`):
    `Invalid communication_data_type. Supported data types: ['fp16', 'bf16', 'fp32']. Got: bfloat16`,
    `offload_optimizer.device Input should be 'none', 'cpu' or 'nvme'`.

    ## Example
    ```json
    {"communication_data_type": "bfloat16", "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "CPU"}}}
    ```
    Use instead:
    ```json
    {"communication_data_type": "bf16", "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}
    ```

    ## Fix safety
    Lowercasing an offload device and rewriting a dtype spelling (`bfloat16` → `bf16`,
    `float32` → `fp32`, ...) are safe: the meaning is the one DeepSpeed documents for the value.
    """
    versions = dss.Versions(use, context)
    config = use.config
    for path, item, spec, validated in dss.described_entries(config, versions, strict=True):
        kinds, enum = accepted_types(spec)
        if enum is None:
            continue
        yield from versions.within(_check_enum(path + (item.key,), item, kinds, enum), validated)
    for key in ("communication_data_type", "seq_parallel_communication_data_type"):
        item = config.entry(key)
        if item is None:
            continue
        not_text = ds.not_lowerable(item, key, "not 'fp16', 'bf16' or 'fp32'")
        if not_text is not None:
            yield not_text
        value = ds.raw(item.value)
        if not isinstance(value, str):
            continue
        if value.lower() in ("fp16", "bf16", "fp32"):
            continue
        canonical = _COMM_CANONICAL.get(value.lower())
        fix = Fix.safe(f"Write '{canonical}'", replace_value(item.value, canonical)) if canonical else None
        yield Finding(
            item.value.span,
            f"{key} is {value!r}, not 'fp16', 'bf16' or 'fp32'",
            fix=fix,
            note=f"DeepSpeed raises 'Invalid communication_data_type ... Got: {value.lower()}'",
        )
    item = config.entry("gradient_allreduce_op")
    if item is not None:
        value = ds.raw(item.value)
        if not (isinstance(value, str) and value.lower() in ("mean", "sum")):
            found = Finding(item.value.span, f"gradient_allreduce_op is {ds.show(item.value)}, not 'mean' or 'sum'",
                            note="DeepSpeed raises 'Invalid gradient_allreduce_op'")
            yield from versions.within([found], versions.since(dss.introduced_in(("gradient_allreduce_op",))))
    yield from _checkpoint_choices(config, versions)
    yield from _dtype_choices(config, versions)


def _check_enum(path: tuple, item: Entry, kinds: set, enum: list):
    node = item.value
    value = ds.raw(node)
    where = ds.dotted(path)
    allowed = ", ".join(repr(v) for v in enum)
    if "integer" in kinds:
        try:
            number = ds.lax_int(value)
        except ds.Invalid as exc:
            yield Finding(node.span, f"{where} is {how_written(node)}, not one of {allowed}", note=exc.reason, help=placeholder_help(value))
            return
        if number not in enum:
            yield Finding(node.span, f"{where} is {ds.show(node)}, not one of {allowed}", note=f"pydantic raises 'Input should be {allowed}'")
        return
    if value in enum or (value is None and "null" in kinds):
        return
    fix = None
    if isinstance(value, str):
        lowered = [v for v in enum if isinstance(v, str) and v.lower() == value.strip().lower()]
        if lowered:
            fix = Fix.safe(f"Write '{lowered[0]}'", replace_value(node, lowered[0]))
    yield Finding(node.span, f"{where} is {how_written(node)}, not one of {allowed}", fix=fix,
                  note=f"pydantic raises 'Input should be {allowed}' (the values are case-sensitive)", help=placeholder_help(value))


def _checkpoint_choices(config: Mapping, versions: dss.Versions):
    checkpoint = config.get("checkpoint")
    if not isinstance(checkpoint, Mapping):
        return
    for path, choices in _CHECKPOINT_CHOICES.items():
        node = ds.node_at(config, path)
        if node is None:
            continue
        reading = versions.since(dss.introduced_in(("checkpoint", "writer"))) if path[-1] == "type" else versions.key
        value = ds.raw(node)
        if value is None and path[-1] == "type":
            continue
        if isinstance(value, str) and value.upper() in choices:
            continue
        if not isinstance(value, str):
            crash = "DeepSpeed calls .upper() on it and raises AttributeError"
        elif path[-1] == "tag_validation":
            crash = "DeepSpeed raises DeepSpeedConfigError 'Checkpoint config contains invalid tag_validation value' (config.py:387-395)"
        else:
            crash = "DeepSpeed asserts the writer type is one of these (model_checkpointing/config.py:22-29)"
        found = Finding(node.span, f"{ds.dotted(path)} is {ds.show(node)}, not one of {', '.join(c.lower() for c in choices)} (any case)", note=crash)
        yield from versions.within([found], reading)
    node = ds.node_at(config, ("checkpoint", "parallel_write", "pipeline_stage"))
    if node is not None and ds.raw(node) not in (True, False):
        yield Finding(node.span, f"checkpoint.parallel_write.pipeline_stage is {ds.show(node)}, not true or false",
                      note="DeepSpeed raises DeepSpeedConfigError (config.py:398-406)")


def _dtype_choices(config: Mapping, versions: dss.Versions):
    data_types = config.get("data_types")
    if isinstance(data_types, Mapping):
        for key in ("grad_accum_dtype", "param_dtype", "buffer_dtype"):
            item = data_types.entry(key)
            if item is None or ds.raw(item.value) is None:
                continue
            value = ds.raw(item.value)
            if value not in _DTYPES:
                found = Finding(item.value.span, f"data_types.{key} is {ds.show(item.value)}, not a DeepSpeed dtype",
                                note="DeepSpeed looks it up in DtypeEnum (fp16, bf16, fp32, int8, ...) and fails at deepspeed.initialize")
                yield from versions.within([found], versions.since(dss.introduced_in(("data_types", key))))
        item = data_types.entry("keep_in_fp32_modules")
        kept = versions.since(dss.introduced_in(("data_types", "keep_in_fp32_modules")))
        if item is not None and kept:
            value = ds.raw(item.value)
            if value != "auto" and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                fix = None
                if isinstance(value, str):
                    fix = Fix.safe("Wrap it in a list", replace_value(item.value, [value]))
                yield from versions.within([Finding(
                    item.value.span,
                    f"data_types.keep_in_fp32_modules is {ds.show(item.value)}, not \"auto\" or a list of name patterns",
                    fix=fix,
                    note="DeepSpeed raises DeepSpeedConfigError (config.py:564-567)",
                )], kept)
    autocast = config.get("torch_autocast")
    if isinstance(autocast, Mapping):
        item = autocast.entry("dtype")
        if item is not None and ds.raw(item.value) not in _DTYPES:
            yield Finding(item.value.span, f"torch_autocast.dtype is {ds.show(item.value)}, not a torch dtype",
                          note="DeepSpeed raises 'Invalid dtype for torch autocast' (config.py:184-193)")
        item = autocast.entry("lower_precision_safe_modules")
        if item is not None:
            value = ds.raw(item.value)
            if not isinstance(value, (list, str)) or not all(isinstance(v, str) for v in value):
                yield Finding(item.value.span, "torch_autocast.lower_precision_safe_modules is not a list of module names",
                              note="DeepSpeed raises 'Invalid module names for torch autocast'")
