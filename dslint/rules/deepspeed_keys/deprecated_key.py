"""DS204 deprecated-key."""

from __future__ import annotations

from dslint.diagnostics import Edit, Finding, Fix, Related
from dslint.documents.model import Entry, Mapping, Scalar
from dslint.documents.edits import remove_json_entry, rename_key
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules import _deepspeed_schema as dss
from dslint.rules.deepspeed_keys._common import canonical_key


# Deprecated ZeRO fields: replacement and how to rewrite them without changing behaviour.
_ZERO_DEPRECATED = {
    "cpu_offload": ("offload_optimizer", '{"device": "cpu"}'),
    "cpu_offload_param": ("offload_param", '{"device": "cpu"}'),
    "cpu_offload_use_pin_memory": (None, None),
    "stage3_gather_fp16_weights_on_model_save": ("stage3_gather_16bit_weights_on_model_save", None),
}


@rule("DS204", "deprecated-key", severity="warning", target="deepspeed", fix="safe or unsafe")
def deprecated_key(use, context):
    """A deprecated spelling or format DeepSpeed still accepts, with a warning or none at all.

    ## What it checks
    - `zero_optimization.cpu_offload` and `cpu_offload_param` (become `offload_optimizer` /
      `offload_param` with `device: cpu`), `cpu_offload_use_pin_memory` (no effect at all) and
      `stage3_gather_fp16_weights_on_model_save` (becomes
      `stage3_gather_16bit_weights_on_model_save`): deepspeed/runtime/zero/config.py:188-219, 287-291,
      processed by config_utils.py:60-97.
    - `"zero_optimization": true/false`, the legacy format: stage 1 (or 0), with the top-level
      `allgather_size` as bucket size (zero/config.py:60-75).
    - Top-level `bfloat16`, the old spelling of `bf16`, read only when `bf16` is absent
      (deepspeed/runtime/precision_config.py:34-38); with both present it is ignored.
    - `aio.thread_count`, renamed `aio.intra_op_parallelism` in 0.16.4; the old key is
      ignored silently since then.

    ## Why it matters
    The old spellings keep working today with a warning in the log, but `aio.thread_count`
    and a `bfloat16` next to `bf16` are ignored without one, and `cpu_offload_use_pin_memory`
    does nothing. Giving a deprecated key together with its replacement is an error
    (`conflicting-keys`).

    ## Example
    ```json
    {"zero_optimization": {"stage": 2, "cpu_offload": true}}
    ```
    Use instead:
    ```json
    {"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}
    ```

    ## Fix safety
    Rewriting `cpu_offload_param` as the section DeepSpeed builds from it, renaming
    `stage3_gather_fp16_weights_on_model_save`, removing `cpu_offload_use_pin_memory` (no effect)
    and a `bfloat16` that `bf16` shadows (no reader reads it), removing an off `cpu_offload`, and
    replacing the legacy boolean with `{"stage": 1}`/`{"stage": 0}` (when there is no
    `allgather_size`) are safe: DeepSpeed does the same, and no other reader reads the old
    spelling differently. Three are unsafe because a reader besides DeepSpeed reads the new
    spelling and not the old: rewriting `cpu_offload: true` as `offload_optimizer` (accelerate
    then swaps a torch optimizer for `DeepSpeedCPUAdam`, which `cpu_offload` never made it do),
    renaming `bfloat16` to `bf16` (HF Trainer and accelerate read only `bf16`: its `"auto"` gets
    filled and its `enabled` compared with `--bf16`), and renaming `aio.thread_count` (the
    setting starts to take effect).
    """
    config = use.config
    yield from _boolean_zero(config)
    zero = ds.zero_section(config)
    if zero is not None:
        for item in zero.entries:
            if item.key not in _ZERO_DEPRECATED or ds.is_auto(item.value):
                continue
            replacement, value_text = _ZERO_DEPRECATED[item.key]
            if replacement is not None and _replacement_present(zero, replacement):
                continue  # conflicting-keys reports the pair
            yield _zero_deprecated(zero, item, replacement, value_text)
    yield from _old_bfloat16(config)
    yield from _renamed_aio(config, dss.Versions(use, context))


def _boolean_zero(config: Mapping):
    """`"zero_optimization": true/false`, the format before the section."""
    zero_node = config.get("zero_optimization")
    if isinstance(zero_node, Scalar) and isinstance(zero_node.value, bool):
        stage = 1 if zero_node.value else 0
        fix = None
        if "allgather_size" not in config:
            fix = Fix.safe(f'Write {{"stage": {stage}}}', Edit.replace(zero_node.span, f'{{"stage": {stage}}}'))
        yield Finding(
            zero_node.span,
            f'"zero_optimization": {str(zero_node.value).lower()} is the deprecated format',
            fix=fix,
            note=f"DeepSpeed reads it as stage {stage}"
            + (" with allgather_bucket_size taken from the top-level allgather_size (default 5e8)" if stage else "")
            + " and logs a deprecation warning",
            help=None if fix is not None else f'write {{"stage": {stage}}}',
        )


def _old_bfloat16(config: Mapping):
    """The old `bfloat16` section: read while `bf16` is absent, ignored beside it."""
    bf16 = config.entry("bf16")
    old = config.entry("bfloat16")
    if old is None:
        return
    if bf16 is None:
        yield Finding(
            old.key_span,
            "'bfloat16' is the old spelling of 'bf16'",
            note="DeepSpeed reads it only while 'bf16' is absent",
            # unsafe: HF Trainer and accelerate read only "bf16", so they start to read this section
            fix=Fix.unsafe("Rename 'bfloat16' to 'bf16'", rename_key(old, "bf16")),
        )
    elif not (isinstance(bf16.value, Scalar) and bf16.value.value is None):
        yield Finding(
            old.key_span,
            "'bfloat16' is ignored because 'bf16' is present",
            note="DeepSpeed reads 'bfloat16' only when 'bf16' is absent (deepspeed/runtime/precision_config.py:34-38)",
            related=[Related("bf16 is read instead", bf16.key_span)],
            fix=Fix.safe("Remove the ignored 'bfloat16'", remove_json_entry(config, old)),
        )


def _renamed_aio(config: Mapping, versions: dss.Versions):
    """`aio` keys DeepSpeed renamed: the releases after the rename ignore the old name."""
    aio = config.get("aio")
    if not isinstance(aio, Mapping):
        return
    for item in aio.entries:
        history = dss.key_history(f"aio.{item.key}")
        new = history.get("renamed_to")
        if not new:
            continue
        new_key = new.split(".")[-1]
        fix = None
        if new_key not in aio:
            fix = Fix.unsafe(f"Rename to '{new_key}' (the setting starts to take effect)", rename_key(item, new_key))
        finding = Finding(
            item.key_span,
            f"'aio.{item.key}' was renamed '{new}' in DeepSpeed {history.get('version')}",
            fix=fix,
            note=f"{versions.label} ignores it silently",
        )
        found = versions.qualify(finding, versions.since(history.get("version")))
        if found is not None:
            yield found


def _replacement_present(zero: Mapping, replacement: str) -> bool:
    section = dss.section(("zero_optimization",)) or {}
    field = canonical_key(section, replacement)
    for key in zero.keys():
        if canonical_key(section, key) == field and not ds.is_auto(zero.get(key)):
            return True
    return False


def _zero_deprecated(zero: Mapping, item: Entry, replacement: str | None, value_text: str | None) -> Finding:
    key = item.key
    if replacement is None:
        return Finding(
            item.key_span,
            f"'zero_optimization.{key}' is deprecated and has no effect",
            note="DeepSpeed only logs a warning; pinned memory is set with offload_param/offload_optimizer.pin_memory",
            fix=Fix.safe(f"Remove '{key}' (it has no effect)", remove_json_entry(zero, item)),
        )
    if value_text is None:
        return Finding(
            item.key_span,
            f"'zero_optimization.{key}' is deprecated for '{replacement}'",
            note=f"DeepSpeed copies it to '{replacement}' and logs a warning",
            fix=Fix.safe(f"Rename to '{replacement}'", rename_key(item, replacement)),
        )
    value = ds.raw(item.value)
    try:
        on = ds.lax_bool(value) if value is not None else False
    except ds.Invalid:
        on = None
    note = f"DeepSpeed turns it into '{replacement}'"
    if on is True:
        note += f": {value_text} and logs a warning"
        # cpu_offload_param: the same to every reader; cpu_offload: accelerate reads offload_optimizer
        # (and swaps a torch optimizer for DeepSpeedCPUAdam), never cpu_offload, so not the same to it
        make = Fix.unsafe if replacement == "offload_optimizer" else Fix.safe
        fix = make(f'Write "{replacement}": {value_text}', Edit.replace(item.span, f'"{replacement}": {value_text}'))
    elif on is False:
        note += " (off) and logs a warning"
        fix = Fix.safe(f"Remove '{key}' (off is the default)", remove_json_entry(zero, item))
    else:
        fix = None
    return Finding(item.key_span, f"'zero_optimization.{key}' is deprecated for '{replacement}'", fix=fix, note=note)
