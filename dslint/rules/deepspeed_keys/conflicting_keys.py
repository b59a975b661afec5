"""DS205 conflicting-keys."""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix, Related
from dslint.documents.edits import remove_json_entry
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules import _deepspeed_schema as dss


@rule("DS205", "conflicting-keys", severity="error", target="deepspeed", fix="safe or unsafe")
def conflicting_keys(use, context):
    """Two spellings of one setting are both given: an alias and its field, or a deprecated key and its replacement.

    ## What it checks
    In the validated sections: a field given under both its name and its alias
    (`prefetch_bucket_size` and `stage3_prefetch_bucket_size`, likewise for the other
    `stage3_*` aliases of deepspeed/runtime/zero/config.py:222-285, `tensor_parallel.tp` and
    `tensor_parallel.tensor_parallel`, `kernel_inject` and `replace_with_kernel_inject`), and a
    deprecated key next to its replacement (`cpu_offload` with `offload_optimizer`,
    `cpu_offload_param` with `offload_param`, `stage3_gather_fp16_weights_on_model_save`
    with `stage3_gather_16bit_weights_on_model_save`). A value of `"auto"` on either side does
    not count: DeepSpeed drops it first.

    ## Why it matters
    pydantic (`populate_by_name=True`) accepts either spelling but not both:
    `prefetch_bucket_size: Extra inputs are not permitted`. A deprecated key with its
    replacement raises `AssertionError: Cannot provide deprecated parameter 'cpu_offload' and
    replacing parameter 'offload_optimizer' together` (deepspeed/runtime/config_utils.py:89-91),
    even when the deprecated value is `false` or `null`.

    ## Example
    ```json
    {"zero_optimization": {"stage": 3, "prefetch_bucket_size": 5e7, "stage3_prefetch_bucket_size": 5e7}}
    ```
    Use instead:
    ```json
    {"zero_optimization": {"stage": 3, "stage3_prefetch_bucket_size": 5e7}}
    ```

    ## Fix safety
    When both spellings hold the same value, removing the unprefixed (or deprecated) one is
    safe. When they differ the removal is unsafe: only you know which value was meant.
    """
    versions = dss.Versions(use, context)
    for path, mapping, section, strict in dss.sections(use.config, versions):
        if not strict:
            continue
        for rule_spec in section.get("allOf", []):
            pair = rule_spec.get("not", {}).get("required", [])
            kind = rule_spec.get("x-dslint-conflict")
            if len(pair) != 2:
                continue
            first, second = (mapping.entry(k) for k in pair)
            if first is None or second is None or ds.is_auto(first.value) or ds.is_auto(second.value):
                continue
            props = section.get("properties", {})
            if kind == "deprecated":
                old, new = (first, second) if props.get(first.key, {}).get("deprecated") else (second, first)
                message = f"deprecated '{old.key}' and its replacement '{new.key}' are both given"
                note = (f"DeepSpeed raises \"Cannot provide deprecated parameter '{old.key}' and replacing parameter ... together\" "
                        "(deepspeed/runtime/config_utils.py:89-91)")
                drop, keep = old, new
            else:
                alias, name = (first, second) if props.get(first.key, {}).get("x-dslint-alias-of") else (second, first)
                message = f"'{name.key}' and its alias '{alias.key}' are both given in {ds.dotted(path)}"
                note = f"pydantic accepts one spelling, so DeepSpeed raises '{name.key}: Extra inputs are not permitted'"
                drop, keep = name, alias
            same = ds.raw(drop.value) == ds.raw(keep.value)
            title = f"Remove '{drop.key}' (keeps '{keep.key}' = {ds.show(keep.value)})"
            fix = Fix.safe(title, remove_json_entry(mapping, drop)) if same else Fix.unsafe(title, remove_json_entry(mapping, drop))
            anchor = drop if drop.key_span.start > keep.key_span.start else keep
            other = keep if anchor is drop else drop
            found = versions.qualify(
                Finding(anchor.key_span, message, related=[Related(f"'{other.key}' is given here", other.key_span)], fix=fix, note=note), strict)
            if found is not None:
                yield found
