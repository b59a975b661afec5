"""DeepSpeed config values: types, coercion traps, choices and bounds (DS210-DS219).

The validated sections are checked the way pydantic 2 validates them in *lax* mode
(``DeepSpeedConfigModel``, deepspeed/runtime/config_utils.py:105-113): ``"3"``, ``3.0`` and
``5e8`` are integers, ``"5e8"`` and ``1.5`` are not; ``"true"``, ``"no"`` and ``1`` are
booleans. A value of exactly ``"auto"`` in those sections is dropped before validation
(config_utils.py:54-57), so it is never a type error here.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from dslint.diagnostics import Edit, Finding, Fix, Severity
from dslint.documents.model import Entry, Mapping, Node, Scalar, Sequence
from dslint.documents.edits import remove_json_entry, replace_value
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules import _deepspeed_schema as dss

BATCH_KEYS = ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")

# What DeepSpeed does with a top-level section that is not an object (ran on 0.19.8): the
# values listed here are accepted; anything else raises (TypeError/AttributeError/ValidationError).
_SECTION_OK = {
    "bf16": (None,),  # falls back to `bfloat16` (precision_config.py:35-37)
    "aio": (None,),
    "expert_parallel": (None, False, 0, ""),  # falsy: default config
    "tensorboard": ("auto",),  # DeepSpeedMonitorConfig drops "auto"
    "wandb": ("auto",),
    "csv_monitor": ("auto",),
    "comet": ("auto",),
}
_SECTION_OK["zero_optimization"] = (True, False)  # the legacy format (deprecated-key)
_SECTION_SKIP = {"datastates_ckpt"}  # handed on as is


def _kinds(spec: dict) -> tuple[set, list | None]:
    """(JSON types the field accepts, enum values or None)."""
    spec = spec or {}
    if "$ref" in spec:
        target = dss.resolve(spec)
        if target.get("type") == "object" or "properties" in target:
            return {"object"}, None
        return _kinds(target)
    if "anyOf" in spec:
        kinds, enum = set(), None
        for branch in spec["anyOf"]:
            k, e = _kinds(branch)
            kinds |= k
            enum = e if e is not None else enum
        return kinds, enum
    kinds = spec.get("type")
    if kinds is None:
        return set(), spec.get("enum")
    return (set(kinds) if isinstance(kinds, list) else {kinds}), spec.get("enum")


class Problem(NamedTuple):
    """What a value check found: the headline and the finding's other texts."""

    message: str
    note: str | None = None
    fix: Fix | None = None
    help: str | None = None

    def finding(self, span) -> Finding:
        return Finding(span, self.message, fix=self.fix, note=self.note, help=self.help)


def _placeholder_help(value) -> str | None:
    if isinstance(value, str) and ds.is_placeholder_text(value):
        return ds.PLACEHOLDER_HELP
    return None


def _how(node: Node) -> str:
    if isinstance(node, Scalar) and isinstance(node.value, str):
        return f"quoteless hjson text {node.value!r}" if node.style == "quoteless" else f"the string {node.value!r}"
    return ds.show(node)


def _check_type(path: tuple, key: str, spec: dict, item: Entry):
    """None when pydantic accepts the value; else the Problem."""
    node = item.value
    value = ds.raw(node)
    kinds, enum = _kinds(spec)
    if enum is not None or not kinds:
        return None  # enums are invalid-choice's; untyped (torch.dtype, objects): not judged
    where = ds.dotted(path + (key,))
    if value is None:
        if "null" in kinds:
            return None
        return Problem(f"{where} is null, not {_expected(kinds)}", "pydantic raises: the field does not take null")
    if "object" in kinds:
        if isinstance(node, Mapping):
            return None
        return Problem(f"{where} is {_how(node)}, not an object", "pydantic raises 'Input should be a valid dictionary'")
    if "array" in kinds:
        if isinstance(node, Sequence):
            items = spec.get("items") or {}
            if items.get("type") == "string":
                bad = [i for i in node.items if not (isinstance(i, Scalar) and isinstance(i.value, str))]
                if bad:
                    return Problem(f"{where} holds {ds.show(bad[0])}, not a string", "every entry must be a string")
            return None
        return Problem(f"{where} is {_how(node)}, not a list", "pydantic raises 'Input should be a valid list'")
    if isinstance(node, (Mapping, Sequence)):
        return Problem(f"{where} is {ds.describe(value)}, not {_expected(kinds)}")
    if "integer" in kinds:
        return _check_int(where, key, path, node, value, spec)
    if "number" in kinds:
        return _check_number(where, key, path, node, value)
    if "boolean" in kinds:
        try:
            ds.lax_bool(value)
        except ds.Invalid as exc:
            return Problem(f"{where} is {_how(node)}, not a boolean", f"{exc.reason}, so pydantic raises 'Input should be a valid boolean'",
                           help=_placeholder_help(value))
        return None
    if "string" in kinds:
        if isinstance(value, str):
            return None
        return Problem(
            f"{where} is {ds.describe(value)} ({ds.show(node)}), not a string",
            "pydantic does not convert numbers or booleans to strings",
            Fix.safe(f'Quote it: "{node.span.text.strip()}"', Edit.replace(node.span, ds.json_text(node.span.text.strip()))) if isinstance(value, (int, float)) and not isinstance(value, bool) else None,
        )
    return None


def _expected(kinds: set) -> str:
    names = {"integer": "an integer", "number": "a number", "boolean": "a boolean", "string": "a string", "object": "an object", "array": "a list"}
    return " or ".join(names.get(k, k) for k in sorted(kinds) if k != "null") or "a value"


def _check_int(where: str, key: str, path: tuple, node: Node, value, spec: dict | None = None):
    # fp16.loss_scale_window / min_loss_scale: a `before` validator rejects bools and anything
    # Python's int() cannot read (precision_config.py:165-180), e.g. "1000.0".
    custom = path == ("fp16",) and key in ("loss_scale_window", "min_loss_scale")
    if custom and isinstance(value, bool):
        return Problem(f"{where} is a boolean, not an integer", f"DeepSpeed raises '{where} must be an integer, not bool' (precision_config.py:172-173)")
    if custom and isinstance(value, str):
        try:
            int(value)
        except ValueError:
            return Problem(f"{where} is {_how(node)}, not an integer", f"DeepSpeed raises '{where} must be an integer' (precision_config.py:176-179)",
                           help=_placeholder_help(value))
    try:
        ds.lax_int(value)
    except ds.Invalid as exc:
        fix = None
        help = None
        if isinstance(value, str):
            try:
                number = float(value.strip())
            except ValueError:
                number = None
            if number is not None and math.isfinite(number) and number.is_integer():
                fix = Fix.safe(f"Write the number {int(number)}", replace_value(node, int(number)))
            help = _placeholder_help(value)
        elif isinstance(value, float) and math.isfinite(value) and not value.is_integer():
            rounded = _rounded_within(value, spec or {}, custom)
            if rounded is not None:
                fix = Fix.unsafe(f"Round to {rounded}", replace_value(node, rounded))
        return Problem(f"{where} is {_how(node)}, not an integer", f"{exc.reason}, so pydantic raises 'Input should be a valid integer'", fix, help)
    return None


def _rounded_within(value: float, spec: dict, positive: bool) -> int | None:
    """The nearest whole number DeepSpeed also accepts: inside the field's bounds, and above 0 for
    fp16.loss_scale_window and min_loss_scale, which dynamic loss scaling requires (precision_config.py:
    182-197; rounding 0.5 to 0 would trade a type error for that one). None when no neighbour fits."""
    for candidate in dict.fromkeys((round(value), math.floor(value), math.ceil(value))):
        if positive and candidate <= 0:
            continue
        if _violated(spec, candidate) is None:
            return candidate
    return None


def _check_number(where: str, key: str, path: tuple, node: Node, value):
    if path == ("fp16",) and key == "loss_scale":
        if isinstance(value, bool):
            return Problem(f"{where} is a boolean, not a number", "DeepSpeed raises 'fp16.loss_scale must be a number, not bool' (precision_config.py:123-124)")
        try:
            number = float(value)
        except (TypeError, ValueError):
            return Problem(f"{where} is {_how(node)}, not a number", "DeepSpeed raises 'fp16.loss_scale must be a number' (precision_config.py:125-128)",
                           help=_placeholder_help(value))
        if not math.isfinite(number):
            return Problem(f"{where} is {_how(node)}, not a finite number", "DeepSpeed raises 'fp16.loss_scale must be a finite number' (precision_config.py:129-130)")
        return None
    try:
        ds.lax_float(value)
    except ds.Invalid as exc:
        return Problem(f"{where} is {_how(node)}, not a number", f"{exc.reason}, so pydantic raises 'Input should be a valid number'",
                       help=_placeholder_help(value))
    return None


def _section_findings(config: Mapping, versions: dss.Versions):
    root = dss.schema()
    for item in config.entries:
        spec = root["properties"].get(item.key)
        if spec is None or item.key in _SECTION_SKIP or spec.get("x-dslint-removed"):
            continue
        if item.key == "bfloat16" and not ds.bfloat16_read(config):
            continue  # DeepSpeed reads `bfloat16` only when `bf16` is absent or null
        target = dss.resolve(spec)
        if not ("properties" in target or target.get("type") == "object"):
            continue
        read = dss.reading((item.key,), target, versions)[0]
        if not read:
            continue
        node = item.value
        if isinstance(node, Mapping):
            continue
        value = ds.raw(node)
        if isinstance(node, Scalar) and any(value is ok or (value == ok and type(value) is type(ok)) for ok in _SECTION_OK.get(item.key, ())):
            continue
        if item.key == "expert_parallel" and isinstance(node, Sequence) and not node.items:
            continue
        kind = "strict" if dss.is_strict(target) else "lax"
        crash = (
            "DeepSpeed passes it as keyword arguments to its config model and raises TypeError "
            "('argument after ** must be a mapping')"
            if kind == "strict"
            else "DeepSpeed reads it with .get() and raises AttributeError"
        )
        fix = None
        if value is None:
            fix = Fix.safe(f"Remove '{item.key}': null", remove_json_entry(config, item))
        found = Finding(node.span, f"'{item.key}' is {_how(node) if value is not None else 'null'}, not an object", fix=fix, note=crash,
                        help=_placeholder_help(value))
        yield from versions.within([found], read)


@rule("DS210", "value-type", severity="error", target="deepspeed", fixable=True)
@ds.judges_values
def value_type(use, context):
    """A value DeepSpeed's validation rejects: a fraction, `"5e8"`, a string where a boolean belongs, a section that is not an object.

    ## What it checks
    Every field of the validated sections (`zero_optimization` and its offload blocks, `fp16`,
    `bf16`, the monitors, `comms_logger`, `hybrid_engine`, `compile`, `tensor_parallel`, ...)
    against its pydantic type, in pydantic 2's lax mode:

    - integers accept `3`, `3.0`, `5e8`, `"3"`, `"500000000"`, `"1_000"`; they reject
      fractions (`1.5`, `15099494.4`), `"5e8"`, `"3.5"`, `true`-like strings and null;
    - booleans accept `true`, `1`, `"true"`, `"yes"`, `"on"` (any case), and reject `2` or `"yes1"`;
    - `fp16.loss_scale` must be a finite number and not a boolean; `fp16.loss_scale_window`
      and `min_loss_scale` reject booleans and strings like `"1000.0"`
      (deepspeed/runtime/precision_config.py:120-180);
    - a top-level section that is not an object: `"fp16": null`, `"zero_optimization": null`,
      `"optimizer": "auto"`, `"activation_checkpointing": true` (`"bf16": null` is accepted:
      DeepSpeed falls back to `bfloat16`, which it reads only when `bf16` is absent or null);
    - with the legacy `"zero_optimization": true`, the top-level `allgather_size`, which
      DeepSpeed validates as `allgather_bucket_size` (zero/config.py:60-65).

    Values of exactly `"auto"` are skipped: DeepSpeed drops them before validation
    (config_utils.py:54-57). hjson quoteless text is a string to DeepSpeed: `stage: 3` is the
    number 3, but `enabled: CONFIG_FP16_ENABLED` is the string "CONFIG_FP16_ENABLED".
    Choices and bounds are `invalid-choice` and `value-out-of-bounds`; the batch keys are
    `batch-value-type`.

    Templates: a config with quoteless placeholder values (`enabled: CONFIG_FP16_ENABLED`, `$MBS`, `{{ gas }}`)
    that no launch passes to a program as it is, is filled in by a script (sed, envsubst)
    before DeepSpeed reads the copy: its placeholders are not judged, its other values are.
    When a launch names the file itself, the placeholders reach DeepSpeed and are reported.

    ## Why it matters
    pydantic raises `ValidationError` when `DeepSpeedConfig` parses the config, at
    `deepspeed.initialize` or, under HF ZeRO-3, in `from_pretrained` (hustvl/Senna#14:
    `stage3_prefetch_bucket_size ... got a number with a fractional part [input_value=15099494.4]`).

    ## Example
    ```json
    {"zero_optimization": {"stage": 2, "reduce_bucket_size": "5e8", "allgather_bucket_size": 2.5e8}}
    ```
    Use instead:
    ```json
    {"zero_optimization": {"stage": 2, "reduce_bucket_size": 500000000, "allgather_bucket_size": 2.5e8}}
    ```

    ## Fix safety
    Writing a numeric string that holds a whole number as that number, quoting a number where a
    string belongs, and removing a section that is `null` are safe: DeepSpeed's reading of the
    value is kept. Rounding a fraction is unsafe (it changes the value).
    """
    versions = dss.Versions(use, context)
    yield from _section_findings(use.config, versions)
    legacy = use.config.entry("allgather_size")
    zero = use.config.get("zero_optimization")
    if legacy is not None and isinstance(zero, Scalar) and zero.value is True and not ds.is_auto(legacy.value):
        # The legacy `"zero_optimization": true` validates the top-level allgather_size as
        # allgather_bucket_size (deepspeed/runtime/zero/config.py:60-65).
        problem = _check_type((), "allgather_size", dss.prop(("zero_optimization", "allgather_bucket_size")), legacy)
        if problem is not None:
            yield problem.finding(legacy.value.span)
    for path, item, spec, validated in dss.described_entries(use.config, versions, strict=True):
        if spec.get("x-dslint-removed"):
            continue
        problem = _check_type(path, item.key, spec, item)
        if problem is None:
            continue
        yield from versions.within([problem.finding(item.value.span)], validated)


@rule("DS211", "auto-wrong-case", severity="error", target="deepspeed", fixable=True)
def auto_wrong_case(use, context):
    """`"Auto"` or `"AUTO"`: only lowercase `"auto"` means anything, to anyone.

    ## What it checks
    Every string value of the config that reads `auto` in another case (batch keys are left to
    `batch-value-type`).

    This is an error even where `DeepSpeedConfig` itself does not raise: in the values it
    reads without validation (`gradient_clipping`, `optimizer.params`, `scheduler.params`, string
    fields such as `wandb.project`) `"Auto"` passes the parse and fails later (at the first step,
    or in the optimizer), or is carried as a meaningless string. The generated oracle tests list
    this as a deliberate difference from `DeepSpeedConfig`.

    ## Why it matters
    DeepSpeed drops only the exact string `"auto"` (deepspeed/runtime/config_utils.py:56),
    HF Trainer and accelerate fill only `"auto"` (`fill_match`: `config.get(ds_key) == 'auto'`).
    `"Auto"` reaches pydantic as a string: `Input should be a valid integer`/`boolean`, or
    under HF a mismatch error (LianjiaTech/BELLE#558).

    ## Example
    ```json
    {"zero_optimization": {"stage": 3, "stage3_prefetch_bucket_size": "Auto"}}
    ```
    Use instead:
    ```json
    {"zero_optimization": {"stage": 3, "stage3_prefetch_bucket_size": "auto"}}
    ```

    ## Fix safety
    Writing `"auto"` is safe where the launch's program is established as one that fills it (HF
    Trainer, accelerate, ms-swift, LLaMA-Factory). Under plain DeepSpeed `"auto"` is no better,
    and for a config no launch reaches the reader is unknown: no fix there.
    """
    for path, node in dss.read_scalars(use.config, dss.Versions(use, context)):
        value = node.value
        if not isinstance(value, str) or value == "auto" or value.strip().lower() != "auto":
            continue
        if len(path) == 1 and path[0] in BATCH_KEYS:
            continue
        yield Finding(
            node.span,
            f"{ds.dotted(path)} is {value!r}, not \"auto\"",
            note='only lowercase "auto" is dropped by DeepSpeed and filled in by HF Trainer and accelerate; '
            "any other case reaches DeepSpeed as a plain string",
            fix=Fix.safe('Write "auto"', replace_value(node, "auto")) if ds.fills_auto(use) else None,
        )


# ---- choices --------------------------------------------------------------------------------

_DTYPES = ("torch.float16", "fp16", "float16", "half", "torch.float32", "fp32", "float32", "float", "torch.int8", "int8", "torch.bfloat16", "bf16", "bfloat16")
_COMM_CANONICAL = {"bfloat16": "bf16", "torch.bfloat16": "bf16", "float16": "fp16", "half": "fp16", "torch.float16": "fp16", "float32": "fp32", "float": "fp32", "torch.float32": "fp32"}
_CHECKPOINT_CHOICES = {
    ("checkpoint", "tag_validation"): ("WARN", "IGNORE", "FAIL"),
    ("checkpoint", "writer", "type"): ("MOCK", "PYTHON", "FAST"),
}


@rule("DS212", "invalid-choice", severity="error", target="deepspeed", fixable=True)
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
        kinds, enum = _kinds(spec)
        if enum is None:
            continue
        yield from versions.within(_check_enum(path + (item.key,), item, kinds, enum), validated)
    for key in ("communication_data_type", "seq_parallel_communication_data_type"):
        item = config.entry(key)
        if item is None:
            continue
        value = ds.raw(item.value)
        if value is None:
            continue
        if not isinstance(value, str):
            yield Finding(item.value.span, f"{key} is {ds.describe(value)}, not 'fp16', 'bf16' or 'fp32'",
                          note="DeepSpeed calls .lower() on it and raises AttributeError")
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
            yield Finding(node.span, f"{where} is {_how(node)}, not one of {allowed}", note=exc.reason, help=_placeholder_help(value))
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
    yield Finding(node.span, f"{where} is {_how(node)}, not one of {allowed}", fix=fix,
                  note=f"pydantic raises 'Input should be {allowed}' (the values are case-sensitive)", help=_placeholder_help(value))


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


# ---- bounds ---------------------------------------------------------------------------------


@rule("DS213", "value-out-of-bounds", severity="error", target="deepspeed", fixable=True)
@ds.judges_values
def value_out_of_bounds(use, context):
    """A number outside the range DeepSpeed's validation allows: `reduce_bucket_size: 0`, a negative size, `ratio: 1.5`, dynamic loss scaling with `min_loss_scale: 0`.

    ## What it checks
    - the bounds of the validated fields: `reduce_bucket_size` > 0 (zero/config.py:113), the
      other ZeRO sizes and thresholds ≥ 0, `offload_optimizer.ratio` and
      `cpuadam_cores_perc` in [0, 1], `hybrid_engine.max_out_tokens` > 0, ...;
    - `fp16.loss_scale` ≥ 0 (precision_config.py:131-132);
    - with fp16 enabled and dynamic loss scaling (`loss_scale` 0, the default),
      `loss_scale_window` and `min_loss_scale` must be > 0 (precision_config.py:182-197):
      `min_loss_scale: 0` (or `0.0`) raises.

    Templates: a config with quoteless placeholder values (`reduce_bucket_size: BUCKET_SIZE,`, `$MBS`, `{{ gas }}`)
    that no launch passes to a program as it is, is filled in by a script (sed, envsubst)
    before DeepSpeed reads the copy: its placeholders are not judged, its other values are.
    When a launch names the file itself, the placeholders reach DeepSpeed and are reported.

    ## Why it matters
    pydantic raises `Input should be greater than 0` (or DeepSpeed's own
    `fp16.min_loss_scale must be > 0 when dynamic loss scaling is enabled`) when the config is
    parsed, before training starts.

    ## Example
    ```json
    {"fp16": {"enabled": true, "loss_scale": 0, "min_loss_scale": 0}}
    ```
    Use instead:
    ```json
    {"fp16": {"enabled": true, "loss_scale": 0, "min_loss_scale": 1}}
    ```

    ## Fix safety
    Setting `min_loss_scale`/`loss_scale_window` to DeepSpeed's defaults (1 and 1000) is
    offered as an unsafe fix: it changes how the loss scale moves.
    """
    versions = dss.Versions(use, context)
    config = use.config
    for path, item, spec, validated in dss.described_entries(config, versions, strict=True):
        kinds, enum = _kinds(spec)
        if enum is not None or not kinds & {"integer", "number"}:
            continue
        try:
            number = ds.lax_int(ds.raw(item.value)) if "integer" in kinds else ds.lax_float(ds.raw(item.value))
        except (ds.Invalid, TypeError, ValueError):
            continue
        where = ds.dotted(path + (item.key,))
        bound = _violated(spec, number)
        if bound:
            yield from versions.within([Finding(item.value.span, f"{where} is {ds.show(item.value)}, not {bound}", note=f"pydantic raises 'Input should be {bound}'")],
                                       validated)
    fp16 = config.get("fp16")
    if isinstance(fp16, Mapping):
        item = fp16.entry("loss_scale")
        if item is not None and not ds.is_auto(item.value):
            try:
                scale = float(ds.raw(item.value))
            except (TypeError, ValueError):
                scale = None
            if scale is not None and not isinstance(ds.raw(item.value), bool) and math.isfinite(scale) and scale < 0:
                yield Finding(item.value.span, f"fp16.loss_scale is {ds.show(item.value)}, below 0",
                              note="DeepSpeed raises 'fp16.loss_scale must be >= 0 (0 enables dynamic loss scaling)'")
        enabled = ds.strict_bool(fp16, "enabled", False)
        scale = ds.strict_number(fp16, "loss_scale", 0.0)
        if enabled is True and scale == 0:
            for key, default in (("loss_scale_window", 1000), ("min_loss_scale", 1)):
                item = fp16.entry(key)
                if item is None or ds.is_auto(item.value) or isinstance(ds.raw(item.value), bool):
                    continue
                try:
                    number = ds.lax_int(ds.raw(item.value))
                except ds.Invalid:
                    continue
                if number <= 0:
                    yield Finding(
                        item.value.span,
                        f"fp16.{key} is {ds.show(item.value)} with dynamic loss scaling (fp16 enabled, loss_scale 0)",
                        fix=Fix.unsafe(f"Set {key} to {default} (DeepSpeed's default)", replace_value(item.value, default)),
                        note=f"DeepSpeed raises 'fp16.{key} must be > 0 when dynamic loss scaling is enabled' (precision_config.py:182-197)",
                    )


def _violated(spec: dict, number) -> str | None:
    if "exclusiveMinimum" in spec and not number > spec["exclusiveMinimum"]:
        return f"greater than {ds.pretty_number(spec['exclusiveMinimum'])}"
    if "minimum" in spec and not number >= spec["minimum"]:
        return f"greater than or equal to {ds.pretty_number(spec['minimum'])}"
    if "exclusiveMaximum" in spec and not number < spec["exclusiveMaximum"]:
        return f"less than {ds.pretty_number(spec['exclusiveMaximum'])}"
    if "maximum" in spec and not number <= spec["maximum"]:
        return f"less than or equal to {ds.pretty_number(spec['maximum'])}"
    return None


# ---- keys DeepSpeed reads with dict.get and never checks ------------------------------------

_NUMERIC_CRASH = {"gradient_clipping"}  # compared with a float at the first step (engine.py)


@rule("DS214", "unchecked-value-type", severity="warning", target="deepspeed", fixable=True)
@ds.judges_values
def unchecked_value_type(use, context):
    """A string or container where DeepSpeed reads a boolean or number without checking it.

    ## What it checks
    Top-level keys and keys of the sections read with `dict.get` whose documented type is a
    boolean or a number (`prescale_gradients`, `wall_clock_breakdown`, `gradient_clipping`,
    `steps_per_print`, `activation_checkpointing.partition_activations`, ...), when the value is
    a string (quoted, or hjson quoteless text such as `False` with a capital F) or a list or
    object. `"auto"` is left to the rules about who fills it; the batch keys are
    `batch-value-type`. `gradient_clipping` as a string is an error: DeepSpeed compares it with
    a float at the first optimizer step.

    Templates: a config with quoteless placeholder values (`gradient_clipping: CLIP_GRAD,`, `$MBS`, `{{ gas }}`)
    that no launch passes to a program as it is, is filled in by a script (sed, envsubst)
    before DeepSpeed reads the copy: its placeholders are not judged, its other values are.
    When a launch names the file itself, the placeholders reach DeepSpeed and are reported.

    ## Why it matters
    DeepSpeed uses these values as they are (deepspeed/runtime/config.py:234-269): the string
    `"false"` is truthy, so `"prescale_gradients": "false"` turns prescaling *on*; hjson reads
    `wall_clock_breakdown: False` as the string "False", which is truthy too. A numeric string
    crashes where it is first compared (`'>' not supported between instances of 'str' and 'float'`).

    ## Example
    ```json
    {"prescale_gradients": "false", "gradient_clipping": "1.0"}
    ```
    Use instead:
    ```json
    {"prescale_gradients": false, "gradient_clipping": 1.0}
    ```

    ## Fix safety
    Writing `"true"`/`"false"` as booleans and a numeric string as its number is safe for
    `gradient_clipping` (which cannot work as a string) and unsafe for the booleans: DeepSpeed
    currently reads any non-empty string as true, so the fix changes what runs.
    """
    versions = dss.Versions(use, context)
    for path, item, spec, read in dss.described_entries(use.config, versions, strict=False):
        if not spec.get("x-dslint-unchecked"):
            continue
        yield from versions.within(_unchecked(path, item, spec), read)


def _unchecked(path: tuple, item: Entry, spec: dict):
    """What DS214 reports about one entry of a section DeepSpeed reads with dict.get."""
    if not path and item.key in BATCH_KEYS:
        return
    kinds, enum = _kinds(spec)
    kind = spec.get("type")
    if kind not in ("boolean", "number", "integer") or enum:
        return
    node = item.value
    value = ds.raw(node)
    if value is None or (isinstance(value, bool) and kind == "boolean") or (isinstance(value, (int, float)) and not isinstance(value, bool) and kind != "boolean"):
        return
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return  # 0/1 for a flag: Python truthiness works
    where = ds.dotted(path + (item.key,))
    if isinstance(value, bool):
        return  # a boolean for a number: True == 1 in Python; harmless here
    if isinstance(value, str):
        if kind == "boolean":
            lowered = value.strip().lower()
            target = True if lowered in ("true", "yes", "on", "1") else False if lowered in ("false", "no", "off", "0", "") else None
            turns_on = target is False and value
            message = f"{where} is {_how(node)}, a string that turns the setting ON" if turns_on else f"{where} is {_how(node)}, not a boolean"
            note = f"DeepSpeed does not type-check it, and a{' non-' if value else 'n '}empty string is {'truthy' if value else 'falsy'}"
            fix = Fix.unsafe(f"Write {str(target).lower()}", replace_value(node, target)) if target is not None else None
            yield Finding(node.span, message, fix=fix, note=note)
            return
        try:
            number = float(value.strip())
        except ValueError:
            number = None
        fix = None
        if number is not None and math.isfinite(number):
            written = int(number) if number.is_integer() and kind == "integer" else number
            fix = Fix.safe(f"Write the number {written}", replace_value(node, written))
        severity = Severity.ERROR if not path and item.key in _NUMERIC_CRASH else None
        yield Finding(node.span, f"{where} is {_how(node)}, not a number", fix=fix, severity=severity,
                      note="DeepSpeed does not type-check it and fails where it first compares or computes with it", help=_placeholder_help(value))
        return
    yield Finding(node.span, f"{where} is {ds.describe(value)}, not {'a boolean' if kind == 'boolean' else 'a number'}",
                  note="DeepSpeed does not type-check it")


@rule("DS219", "gradient-clipping-default", severity="info", target="deepspeed")
def gradient_clipping_default(use, context):
    """`gradient_clipping` is absent, and its default depends on the DeepSpeed version.

    ## What it checks
    DeepSpeed configs with no top-level `gradient_clipping` that describe a training run: they
    have a section (`zero_optimization`, `optimizer`, `fp16`, ... even misspelled), or HF Trainer,
    accelerate, ms-swift or LLaMA-Factory launch them. (A file with batch sizes only is often a
    fragment.) A launch whose program is established as evaluation only (gradients off, no
    backward pass or optimizer in the files read, no save in the entry; `dslint explain` shows it) is not judged: it computes no gradients to clip.

    ## Why it matters
    The default changed from 0.0 (no clipping) to 1.0 in DeepSpeed 0.19.3
    (deepspeedai/DeepSpeed PR #8068, deepspeed/runtime/constants.py `GRADIENT_CLIPPING_DEFAULT`):
    the same config clips gradients at norm 1.0 on new installs and not at all on old ones. HF
    Trainer's `--max_grad_norm` does not help: it only fills a `gradient_clipping` that is
    present (as `"auto"`).

    ## Example
    ```json
    {"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2}}
    ```
    Use instead (or `"auto"` under HF Trainer/accelerate):
    ```json
    {"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2}, "gradient_clipping": 1.0}
    ```

    ## Fix safety
    No fix: only you know whether the run should clip.
    """
    config = use.config
    if "gradient_clipping" in config or not ds.trains(use):
        return
    if not (ds.hf_like(use) or any(isinstance(entry.value, Mapping) for entry in config.entries)):
        return  # a fragment with batch sizes only (no section at all) says nothing about the training run
    versions = dss.Versions(use, context)
    history = dss.key_history("gradient_clipping").get("default_changed", {})
    changed = history.get("version", "0.19.3")
    clipping = versions.judge(versions.since(changed))
    norm = history.get("to", 1.0)
    if clipping.everywhere:
        now = f"{clipping.where()} clips gradients at norm {norm} by default; DeepSpeed before {changed} did not clip"
    elif not clipping.anywhere:
        now = f"{versions.judge(versions.key).where()} does not clip by default; DeepSpeed {changed} and later clip at norm {norm}"
    else:
        now = (f"{clipping.where()} clips gradients at norm {norm} by default and older releases do not "
               f"({versions.candidates.why()})")
    auto = ds.hf_like(use) or use.consumer is None
    yield Finding(
        ds.opening(use.config),
        "gradient_clipping is absent, and its default depends on the DeepSpeed version",
        note=f"{now} (default changed in PR #8068)",
        help='set gradient_clipping explicitly' + (' (or "auto" to take --max_grad_norm)' if auto else ""),
    )
