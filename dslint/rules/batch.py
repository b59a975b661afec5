"""The batch-size invariant: train_batch_size == micro batch × accumulation × world size."""

from __future__ import annotations

import math
import re


from dslint.diagnostics import Finding, Fix, Related
from dslint.documents.model import Mapping, Node, Scalar
from dslint.documents.edits import remove_json_entry, replace_value
from dslint.launch.deepspeed_batch import derive, format_number
from dslint.rule import rule
from dslint.rules import _deepspeed as ds

TBS = "train_batch_size"
MBS = "train_micro_batch_size_per_gpu"
GAS = "gradient_accumulation_steps"
BATCH_KEYS = (TBS, MBS, GAS)


def _number(node: Node | None):
    """The value DeepSpeed computes with, or None when absent/null/not a plain number."""
    if not isinstance(node, Scalar):
        return None
    value = node.value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _meant(node: Node | None):
    """The number the author meant: a plain number, or a whole-number string (``"8"``), which
    batch-value-type's safe fix writes as that number. The arithmetic is judged on it, so that
    fixing the type reveals nothing new; None for "auto", placeholders, other types, absence."""
    number = _number(node)
    if number is not None:
        return number
    if isinstance(node, Scalar) and isinstance(node.value, str) and _INTEGER_TEXT.match(node.value):
        return int(float(node.value))
    return None


@rule("DS101", "batch-size-mismatch", severity="error", target="deepspeed", fix="unsafe")
def batch_size_mismatch(use, context):
    """train_batch_size does not equal micro batch × gradient accumulation × world size.

    ## What it checks
    DeepSpeed's own derivation, step for step (deepspeed/runtime/config.py:590-656,
    `_set_batch_related_parameters` then `_batch_assertion`): whichever of
    `train_batch_size`, `train_micro_batch_size_per_gpu` and `gradient_accumulation_steps`
    are given, the missing ones are derived with floor division, then DeepSpeed asserts that
    all three are positive and that
    `train_batch_size == train_micro_batch_size_per_gpu * gradient_accumulation_steps * world_size`.
    At least one of `train_batch_size` and `train_micro_batch_size_per_gpu` must be given;
    that is only reported when the world size is known, because a config that no launch
    reaches is often a fragment that code completes before `deepspeed.initialize`.

    The world size is the data-parallel size of the launch that uses the config; for a config
    no launch reaches, it comes from `--world-size` or the `world-size` setting. Without a
    world size, only what can hold for no world size at all is reported (for example a
    `train_batch_size` that is not a multiple of micro batch × accumulation).

    Values written as `"auto"` are filled in by HF Trainer or accelerate and are not judged
    here; values of the wrong type are reported by `batch-value-type`, and a whole-number
    string (`"8"`) is judged as the number its safe fix writes, so that fixing the type brings
    no new finding. A number that is not
    positive beside them is still reported: DeepSpeed asserts every batch value > 0, and HF's
    `fill_match` rejects a `train_batch_size` other than the one it computes.

    ## Why it matters
    DeepSpeed raises `AssertionError: Check batch related parameters. train_batch_size is not
    equal to micro_batch_per_gpu * gradient_acc_step * world_size 16 != 4 * 8 * 4` when the
    engine starts: after the queue wait and the model load.

    ## Example
    With 4 GPUs:
    ```json
    {"train_batch_size": 16, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8}
    ```
    Use instead (DeepSpeed derives 128):
    ```json
    {"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8}
    ```

    ## Fix safety
    Unsafe. Removing `train_batch_size` (offered when micro batch and accumulation are both
    given) lets DeepSpeed derive it, so the assertion holds for every world size, but the global
    batch is then the product, not the one you wrote. Setting `train_batch_size` to the product
    is the unsafe alternative: it keeps the key and changes the global batch the same way.
    """
    config = use.config
    nodes = {key: config.get(key) for key in BATCH_KEYS}
    for node in nodes.values():
        if node is not None and _meant(node) is None and not (isinstance(node, Scalar) and node.value is None):
            # "auto" or a wrong type is another rule's business; a number that is not positive
            # fails whoever fills the rest (DeepSpeed's assertion, HF's fill_match), so it is
            # reported now, not only once the other value is fixed
            yield from _not_positive(config, nodes)
            return
    values = {key: _meant(node) for key, node in nodes.items()}
    tbs, mbs, gas = values[TBS], values[MBS], values[GAS]
    world = use.world_size.value if use.world_size is not None else None

    if world is None:
        yield from _without_world_size(use, nodes, tbs, mbs, gas)
        return
    _, d_mbs, d_gas, failure = derive(tbs, mbs, gas, world)
    if failure is None:
        return
    related = _world_related(use) + _related_keys(config, exclude=_anchor_key(nodes))
    anchor = _anchor(config, nodes)
    given = ", ".join(f"{k}={format_number(v)}" for k, v in values.items() if v is not None) or "no batch keys"
    if failure.kind == "mismatch":
        product = d_mbs * d_gas * world
        derived = []
        if mbs is None and gas is None:
            derived.append(f"accumulation 1 and micro batch {format_number(d_mbs)} = {format_number(tbs)} // {format_number(world)}")
        elif mbs is None:
            derived.append(f"micro batch {format_number(d_mbs)} = {format_number(tbs)} // {format_number(world)} // {format_number(gas)}")
        elif gas is None:
            derived.append(f"accumulation {format_number(d_gas)} = {format_number(tbs)} // {format_number(mbs)} // {format_number(world)}")
        how = f"DeepSpeed derives {'; '.join(derived)}, then " if derived else "DeepSpeed "
        message = f"train_batch_size {failure} (micro batch * accumulation * world size = {format_number(product)})"
        note = f"{how}asserts this at start-up with world size {format_number(world)}"
        yield Finding(anchor, message, related=related, note=note, **_fixes(config, nodes, product))
        return
    note = f"from {given} at world size {format_number(world)}; DeepSpeed asserts this at start-up"
    yield Finding(anchor, failure.text, related=related, note=note, **_fixes(config, nodes, None))


def _not_positive(config, nodes):
    for key, node in nodes.items():
        value = _meant(node) if node is not None else None
        if value is not None and not value > 0:
            related = _related_keys(config, exclude=key)
            yield Finding(config.entry(key).value.span, f"{key} is {format_number(value)}, not greater than 0", related=related,
                          note="DeepSpeed asserts that it is greater than 0 at start-up")
            return


def _without_world_size(use, nodes, tbs, mbs, gas):
    config = use.config
    anchor = _anchor(config, nodes)
    related = _related_keys(config, exclude=_anchor_key(nodes))
    if tbs is None and mbs is None:
        # Many standalone configs are fragments that code completes before deepspeed.initialize
        # (autotuning templates, dicts extended in Python): only a known launch makes this an error.
        return
    for key, value in ((TBS, tbs), (MBS, mbs), (GAS, gas)):
        if value is not None and not value > 0:
            yield Finding(config.entry(key).value.span, f"{key} is {format_number(value)}, not greater than 0", related=related,
                          note="DeepSpeed asserts that it is greater than 0 at start-up")
            return
    if tbs is None:
        return
    if mbs is not None and gas is not None:
        step = mbs * gas
        if tbs % step:
            yield Finding(
                anchor,
                f"train_batch_size {format_number(tbs)} is not a multiple of micro batch {format_number(mbs)} * accumulation {format_number(gas)} = {format_number(step)}",
                related=related,
                note=_EVERY_WORLD,
                **_fixes(config, nodes, None),
            )
        return
    divisor_key, divisor = (MBS, mbs) if mbs is not None else (GAS, gas)
    if divisor is None:
        return
    if tbs < divisor:
        derived = "gradient_accumulation_steps" if divisor_key == MBS else "train_micro_batch_size_per_gpu"
        yield Finding(
            anchor,
            f"train_batch_size {format_number(tbs)} is smaller than {divisor_key} {format_number(divisor)}",
            related=related,
            note=f"DeepSpeed derives {derived} = 0, and its batch assertion fails for every world size",
        )
    elif tbs % divisor:
        yield Finding(anchor, f"train_batch_size {format_number(tbs)} is not a multiple of {divisor_key} {format_number(divisor)}", related=related,
                      note=_EVERY_WORLD)


_EVERY_WORLD = "DeepSpeed's batch assertion fails for every world size"


def _anchor_key(nodes) -> str:
    for key in BATCH_KEYS:
        if nodes[key] is not None:
            return key
    return ""


def _anchor(config: Mapping, nodes):
    key = _anchor_key(nodes)
    if key:
        return config.entry(key).value.span
    return _opening(config)


def _opening(config: Mapping):
    from dslint.source import Span

    return Span(config.span.source, config.span.start, min(config.span.start + 1, config.span.end))


def _related_keys(config: Mapping, exclude: str) -> list[Related]:
    out = []
    for key in BATCH_KEYS:
        entry = config.entry(key)
        if entry is not None and key != exclude:
            out.append(Related(f"{key} = {entry.value.span.text}", entry.value.span))
    return out


def _world_related(use) -> list[Related]:
    setting = use.world_size
    if setting is None:
        return []
    span = getattr(setting, "span", None)
    return [Related(f"world size {format_number(setting.value)} from {setting.origin}", span, origin=setting.origin)]


def _fixes(config: Mapping, nodes, product) -> dict:
    fix = None
    alternatives = []
    if nodes[TBS] is not None and nodes[MBS] is not None and nodes[GAS] is not None:
        # the global batch you wrote gives way to the product: a change of value, so unsafe
        fix = Fix.unsafe("Remove train_batch_size so DeepSpeed derives it", remove_json_entry(config, config.entry(TBS)))
    if nodes[TBS] is not None and product is not None and product > 0:
        value = int(product) if isinstance(product, float) and product.is_integer() else product
        alternatives.append(Fix.unsafe(f"Set train_batch_size to {format_number(value)} (changes the global batch)", replace_value(nodes[TBS], value)))
    if fix is None and alternatives:
        fix = alternatives.pop(0)
    return {"fix": fix, "alternatives": alternatives}


_INTEGER_TEXT = re.compile(r"^\s*[+-]?\d+(\.0*)?\s*$")


@rule("DS102", "batch-value-type", severity="error", target="deepspeed", fix="safe")
@ds.judges_values
def batch_value_type(use, context):
    """A batch value is a string, a fraction, a boolean or a container instead of a number.

    ## What it checks
    `train_batch_size`, `train_micro_batch_size_per_gpu` and `gradient_accumulation_steps`.
    DeepSpeed reads them with `dict.get` and no type check
    (deepspeed/runtime/config.py:208, 340-348), then compares them with numbers.

    - A numeric string such as `"8"`: DeepSpeed crashes with
      `TypeError: '>' not supported between instances of 'str' and 'int'`; under HF Trainer
      `"8"` never equals `8`, which gives the confusing mismatch
      `ds gradient_accumulation_steps=8 vs hf gradient_accumulation_steps=8`.
    - `"Auto"` or `"AUTO"`: only lowercase `"auto"` is filled in by HF and accelerate.
    - A fraction such as `2.5`: DeepSpeed computes with it, and the data loader then fails with
      `batch_size should be a positive integer value`.
    - A boolean: Python counts `true` as 1, so DeepSpeed's arithmetic goes through.

    Fractions and booleans are errors although `DeepSpeedConfig` itself accepts them (it checks
    neither type; a deliberate difference in the generated oracle tests): no training loop can
    use them as a batch size.
    - An hjson quoteless value such as `GB_SIZE,` (a template placeholder) is the string
      `"GB_SIZE,"` to DeepSpeed.

    Templates: a config with quoteless placeholder values (`train_batch_size: CONFIG_GBSIZE,`, `$MBS`, `{{ gas }}`)
    that no launch passes to a program as it is, is filled in by a script (sed, envsubst)
    before DeepSpeed reads the copy: its placeholders are not judged, its other values are.
    When a launch names the file itself, the placeholders reach DeepSpeed and are reported.

    ## Why it matters
    A wrong-typed batch value passes every JSON check, then stops DeepSpeed at start-up (or the
    HF Trainer with a mismatch that shows two equal-looking numbers), after the queue wait.

    ## Example
    ```json
    {"train_micro_batch_size_per_gpu": "8", "gradient_accumulation_steps": "Auto"}
    ```
    Use instead:
    ```json
    {"train_micro_batch_size_per_gpu": 8, "gradient_accumulation_steps": "auto"}
    ```

    ## Fix safety
    Rewriting a whole-number string as the number is safe: the value the author wrote is kept,
    only its type changes. `"Auto"` becomes `"auto"` (safe) only where every launch that reads
    the config is established as one that fills `"auto"` (HF Trainer, accelerate, ms-swift,
    LLaMA-Factory): under plain DeepSpeed `"auto"` is an error too, and for a config no launch
    reaches nobody knows. Fractions have no fix.
    """
    config = use.config
    for key in BATCH_KEYS:
        entry = config.entry(key)
        if entry is None:
            continue
        node = entry.value
        value = node.value if isinstance(node, Scalar) else node.to_python()
        if value is None or value == "auto":
            continue
        if isinstance(node, Scalar) and not isinstance(value, (bool, str)) and isinstance(value, (int, float)):
            yield from _not_whole(key, node, value)
        elif isinstance(value, str):
            yield _string_value(use, context, key, node, value)
        else:
            kind = "a boolean" if isinstance(value, bool) else f"a {type(value).__name__}"
            yield Finding(node.span, f"{key} is {kind} ({node.span.text.strip()[:40]}), not a number")


def _not_whole(key: str, node: Scalar, value):
    """A number that is a fraction, infinite or NaN."""
    if isinstance(value, float) and math.isfinite(value) and not value.is_integer():
        yield Finding(node.span, f"{key} is {format_number(value)}, a fraction", note="batch sizes and accumulation steps are whole numbers")
    elif isinstance(value, float) and not math.isfinite(value):
        yield Finding(node.span, f"{key} is {value}: not a usable number")


def _string_value(use, context, key: str, node: Node, value: str) -> Finding:
    """A string batch value: "Auto" in the wrong case, a number written as text, or other text."""
    if value.strip().lower() == "auto":
        return Finding(
            node.span,
            f"{key} is {value!r}, not \"auto\"",
            note='only lowercase "auto" is filled in by HF Trainer and accelerate',
            fix=Fix.safe('Write "auto"', replace_value(node, "auto")) if ds.every_reader_fills_auto(use.document, context) else None,
        )
    if _INTEGER_TEXT.match(value):
        number = int(float(value))
        how = "quoteless hjson text" if getattr(node, "style", "") == "quoteless" else "a string"
        return Finding(
            node.span,
            f"{key} is {how} ({value!r}), not a number",
            note="DeepSpeed fails comparing it with a number ('>' not supported between instances of 'str' and 'int')",
            fix=Fix.safe(f"Write the number {number}", replace_value(node, number)),
        )
    quoteless = getattr(node, "style", "") == "quoteless"
    how = "quoteless hjson text, the string" if quoteless else "the string"
    return Finding(node.span, f"{key} is {how} {value!r}, not a number", note="DeepSpeed fails at start-up",
                   help=ds.PLACEHOLDER_HELP if ds.is_placeholder_text(value) else None)

