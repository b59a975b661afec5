"""DS214 unchecked-value-type."""

from __future__ import annotations

import math

from dslint.diagnostics import Finding, Fix, Severity
from dslint.documents.model import Entry, Node
from dslint.documents.edits import replace_value
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules import _deepspeed_schema as dss
from dslint.rules.deepspeed_values._common import BATCH_KEYS, accepted_types, how_written, placeholder_help


# ---- keys DeepSpeed reads with dict.get and never checks ------------------------------------

_NUMERIC_CRASH = {"gradient_clipping"}  # compared with a float at the first step (engine.py)


@rule("DS214", "unchecked-value-type", severity="warning", target="deepspeed", fix="safe or unsafe")
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
    kinds, enum = accepted_types(spec)
    kind = spec.get("type")
    if kind not in ("boolean", "number", "integer") or enum:
        return
    node = item.value
    value = ds.raw(node)
    # A number for a flag (0/1: Python truthiness works) or a boolean for a number (True == 1 in
    # Python) is harmless here.
    if value is None or isinstance(value, (bool, int, float)):
        return
    where = ds.dotted(path + (item.key,))
    if isinstance(value, str) and kind == "boolean":
        yield _string_for_flag(where, node, value)
    elif isinstance(value, str):
        yield _string_for_number(where, path, item, kind, value)
    else:
        yield Finding(node.span, f"{where} is {ds.describe(value)}, not {'a boolean' if kind == 'boolean' else 'a number'}",
                      note="DeepSpeed does not type-check it")


def _string_for_flag(where: str, node: Node, value: str) -> Finding:
    """A string where DeepSpeed reads a flag: any non-empty one, "false" included, turns it on."""
    lowered = value.strip().lower()
    target = True if lowered in ("true", "yes", "on", "1") else False if lowered in ("false", "no", "off", "0", "") else None
    turns_on = target is False and value
    message = f"{where} is {how_written(node)}, a string that turns the setting ON" if turns_on else f"{where} is {how_written(node)}, not a boolean"
    note = f"DeepSpeed does not type-check it, and a{' non-' if value else 'n '}empty string is {'truthy' if value else 'falsy'}"
    fix = Fix.unsafe(f"Write {str(target).lower()}", replace_value(node, target)) if target is not None else None
    return Finding(node.span, message, fix=fix, note=note)


def _string_for_number(where: str, path: tuple, item: Entry, kind: str, value: str) -> Finding:
    """A string where DeepSpeed computes with a number (a safe fix when it spells a finite one)."""
    node = item.value
    try:
        number = float(value.strip())
    except ValueError:
        number = None
    fix = None
    if number is not None and math.isfinite(number):
        written = int(number) if number.is_integer() and kind == "integer" else number
        fix = Fix.safe(f"Write the number {written}", replace_value(node, written))
    severity = Severity.ERROR if not path and item.key in _NUMERIC_CRASH else None
    return Finding(node.span, f"{where} is {how_written(node)}, not a number", fix=fix, severity=severity,
                   note="DeepSpeed does not type-check it and fails where it first compares or computes with it", help=placeholder_help(value))
