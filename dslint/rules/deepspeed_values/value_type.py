"""DS210 value-type."""

from __future__ import annotations

import math
from typing import NamedTuple

from dslint.diagnostics import Edit, Finding, Fix
from dslint.documents.model import Entry, Mapping, Node, Scalar, Sequence
from dslint.documents.edits import remove_json_entry, replace_value
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules import _deepspeed_schema as dss
from dslint.rules.deepspeed_values._common import accepted_types, how_written, placeholder_help, violated_bound


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


class Problem(NamedTuple):
    """What a value check found: the headline and the finding's other texts."""

    message: str
    note: str | None = None
    fix: Fix | None = None
    help: str | None = None

    def finding(self, span) -> Finding:
        return Finding(span, self.message, fix=self.fix, note=self.note, help=self.help)


def _check_type(path: tuple, key: str, spec: dict, item: Entry):
    """None when pydantic accepts the value; else the Problem."""
    node = item.value
    value = ds.raw(node)
    kinds, enum = accepted_types(spec)
    if enum is not None or not kinds:
        return None  # enums are invalid-choice's; untyped (torch.dtype, objects): not judged
    where = ds.dotted(path + (key,))
    if value is None:
        if "null" in kinds:
            return None
        return Problem(f"{where} is null, not {_expected(kinds)}", "pydantic raises: the field does not take null")
    if "object" in kinds or "array" in kinds:
        return _check_container(where, kinds, spec, node)
    if isinstance(node, (Mapping, Sequence)):
        return Problem(f"{where} is {ds.describe(value)}, not {_expected(kinds)}")
    if "integer" in kinds:
        return _check_int(where, key, path, node, value, spec)
    if "number" in kinds:
        return _check_number(where, key, path, node, value)
    if "boolean" in kinds:
        return _check_lax(where, node, value, ds.lax_bool, "boolean")
    if "string" in kinds:
        return _check_string(where, node, value)
    return None


def _check_container(where: str, kinds: set, spec: dict, node: Node):
    """An object field (a mapping), or a list field (a list, of strings where the schema says so)."""
    if "object" in kinds:
        if isinstance(node, Mapping):
            return None
        return Problem(f"{where} is {how_written(node)}, not an object", "pydantic raises 'Input should be a valid dictionary'")
    if not isinstance(node, Sequence):
        return Problem(f"{where} is {how_written(node)}, not a list", "pydantic raises 'Input should be a valid list'")
    items = spec.get("items") or {}
    if items.get("type") == "string":
        bad = [i for i in node.items if not (isinstance(i, Scalar) and isinstance(i.value, str))]
        if bad:
            return Problem(f"{where} holds {ds.show(bad[0])}, not a string", "every entry must be a string")
    return None


def _check_lax(where: str, node: Node, value, read, kind: str):
    """The problem when pydantic's lax mode (READ: ds.lax_bool, ds.lax_float) rejects VALUE as a KIND."""
    try:
        read(value)
    except ds.Invalid as exc:
        return Problem(f"{where} is {how_written(node)}, not a {kind}", f"{exc.reason}, so pydantic raises 'Input should be a valid {kind}'",
                       help=placeholder_help(value))
    return None


def _check_string(where: str, node: Node, value):
    """pydantic converts nothing to a string: a number gets a safe fix that quotes it."""
    if isinstance(value, str):
        return None
    return Problem(
        f"{where} is {ds.describe(value)} ({ds.show(node)}), not a string",
        "pydantic does not convert numbers or booleans to strings",
        Fix.safe(f'Quote it: "{node.span.text.strip()}"', Edit.replace(node.span, ds.json_text(node.span.text.strip()))) if isinstance(value, (int, float)) and not isinstance(value, bool) else None,
    )


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
            return Problem(f"{where} is {how_written(node)}, not an integer", f"DeepSpeed raises '{where} must be an integer' (precision_config.py:176-179)",
                           help=placeholder_help(value))
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
            help = placeholder_help(value)
        elif isinstance(value, float) and math.isfinite(value) and not value.is_integer():
            rounded = _rounded_within(value, spec or {}, custom, even=key == "allgather_bucket_size")
            if rounded is not None:
                fix = Fix.unsafe(f"Round to {rounded}", replace_value(node, rounded))
        return Problem(f"{where} is {how_written(node)}, not an integer", f"{exc.reason}, so pydantic raises 'Input should be a valid integer'", fix, help)
    return None


def _rounded_within(value: float, spec: dict, positive: bool, even: bool = False) -> int | None:
    """The nearest whole number DeepSpeed also accepts: inside the field's bounds, above 0 for
    fp16.loss_scale_window and min_loss_scale, which dynamic loss scaling requires (precision_config.py:
    182-197; rounding 0.5 to 0 would trade a type error for that one), and even for
    allgather_bucket_size, which ZeRO 1-2 asserts (stage_1_and_2.py:387-391, DS232). None when no
    neighbour fits."""
    near = (round(value), math.floor(value), math.ceil(value))
    if even:
        near = (2 * round(value / 2), 2 * math.floor(value / 2), 2 * math.ceil(value / 2))
    for candidate in dict.fromkeys(near):
        if positive and candidate <= 0:
            continue
        if violated_bound(spec, candidate) is None:
            return candidate
    return None


def _check_number(where: str, key: str, path: tuple, node: Node, value):
    if path == ("fp16",) and key == "loss_scale":
        if isinstance(value, bool):
            return Problem(f"{where} is a boolean, not a number", "DeepSpeed raises 'fp16.loss_scale must be a number, not bool' (precision_config.py:123-124)")
        try:
            number = float(value)
        except (TypeError, ValueError):
            return Problem(f"{where} is {how_written(node)}, not a number", "DeepSpeed raises 'fp16.loss_scale must be a number' (precision_config.py:125-128)",
                           help=placeholder_help(value))
        if not math.isfinite(number):
            return Problem(f"{where} is {how_written(node)}, not a finite number", "DeepSpeed raises 'fp16.loss_scale must be a finite number' (precision_config.py:129-130)")
        return None
    return _check_lax(where, node, value, ds.lax_float, "number")


def _section_findings(config: Mapping, versions: dss.Versions):
    """Top-level sections DeepSpeed reads as objects, given something else."""
    root = dss.schema()
    for item in config.entries:
        section = _object_section(config, item, root, versions)
        if section is None or isinstance(item.value, Mapping) or _accepted_instead(item):
            continue
        target, read = section
        node = item.value
        value = ds.raw(node)
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
        found = Finding(node.span, f"'{item.key}' is {how_written(node) if value is not None else 'null'}, not an object", fix=fix, note=crash,
                        help=placeholder_help(value))
        yield from versions.within([found], read)


def _object_section(config: Mapping, item: Entry, root: dict, versions: dss.Versions):
    """(its schema, the releases that read it) for a top-level key some release reads as an object; else None."""
    spec = root["properties"].get(item.key)
    if spec is None or item.key in _SECTION_SKIP or spec.get("x-dslint-removed"):
        return None
    if item.key == "bfloat16" and not ds.bfloat16_read(config):
        return None  # DeepSpeed reads `bfloat16` only when `bf16` is absent or null
    target = dss.resolve(spec)
    if not ("properties" in target or target.get("type") == "object"):
        return None
    read = dss.reading((item.key,), target, versions)[0]
    return (target, read) if read else None


def _accepted_instead(item: Entry) -> bool:
    """A value DeepSpeed accepts in place of the section's object (_SECTION_OK, an empty expert_parallel list)."""
    node = item.value
    value = ds.raw(node)
    if isinstance(node, Scalar) and any(value is ok or (value == ok and type(value) is type(ok)) for ok in _SECTION_OK.get(item.key, ())):
        return True
    return item.key == "expert_parallel" and isinstance(node, Sequence) and not node.items


@rule("DS210", "value-type", severity="error", target="deepspeed", fix="safe or unsafe")
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
