"""DS213 value-out-of-bounds."""

from __future__ import annotations

import math

from dslint.diagnostics import Finding, Fix
from dslint.documents.model import Mapping
from dslint.documents.edits import replace_value
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules import _deepspeed_schema as dss
from dslint.rules.deepspeed_values._common import accepted_types, violated_bound


# ---- bounds ---------------------------------------------------------------------------------


@rule("DS213", "value-out-of-bounds", severity="error", target="deepspeed", fix="unsafe")
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
    yield from _schema_bounds(use, context)
    fp16 = use.config.get("fp16")
    if isinstance(fp16, Mapping):
        yield from _negative_loss_scale(fp16)
        yield from _dynamic_scaling_bounds(fp16)


def _schema_bounds(use, context):
    """Numbers outside the bounds the schema (DeepSpeed's pydantic fields) gives."""
    versions = dss.Versions(use, context)
    for path, item, spec, validated in dss.described_entries(use.config, versions, strict=True):
        kinds, enum = accepted_types(spec)
        if enum is not None or not kinds & {"integer", "number"}:
            continue
        try:
            number = ds.lax_int(ds.raw(item.value)) if "integer" in kinds else ds.lax_float(ds.raw(item.value))
        except (ds.Invalid, TypeError, ValueError):
            continue
        where = ds.dotted(path + (item.key,))
        bound = violated_bound(spec, number)
        if bound:
            yield from versions.within([Finding(item.value.span, f"{where} is {ds.show(item.value)}, not {bound}", note=f"pydantic raises 'Input should be {bound}'")],
                                       validated)


def _negative_loss_scale(fp16: Mapping):
    item = fp16.entry("loss_scale")
    if item is None or ds.is_auto(item.value):
        return
    try:
        scale = float(ds.raw(item.value))
    except (TypeError, ValueError):
        return
    if not isinstance(ds.raw(item.value), bool) and math.isfinite(scale) and scale < 0:
        yield Finding(item.value.span, f"fp16.loss_scale is {ds.show(item.value)}, below 0",
                      note="DeepSpeed raises 'fp16.loss_scale must be >= 0 (0 enables dynamic loss scaling)'")


def _dynamic_scaling_bounds(fp16: Mapping):
    """`loss_scale_window` and `min_loss_scale` must be positive once fp16 scales the loss dynamically."""
    enabled = ds.strict_bool(fp16, "enabled", False)
    scale = ds.strict_number(fp16, "loss_scale", 0.0)
    if enabled is not True or scale != 0:
        return
    for key, default in (("loss_scale_window", 1000), ("min_loss_scale", 1)):
        item = fp16.entry(key)
        if item is None or isinstance(ds.raw(item.value), bool):
            continue
        number = ds.lax_read(item.value, ds.lax_int)
        if number is not None and number <= 0:
            yield Finding(
                item.value.span,
                f"fp16.{key} is {ds.show(item.value)} with dynamic loss scaling (fp16 enabled, loss_scale 0)",
                fix=Fix.unsafe(f"Set {key} to {default} (DeepSpeed's default)", replace_value(item.value, default)),
                note=f"DeepSpeed raises 'fp16.{key} must be > 0 when dynamic loss scaling is enabled' (precision_config.py:182-197)",
            )
