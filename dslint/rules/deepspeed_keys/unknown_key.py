"""DS201 unknown-key."""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix, Severity
from dslint.documents.model import Mapping
from dslint.documents.edits import rename_key
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules import _deepspeed_schema as dss
from dslint.rules.deepspeed_keys._common import canonical_key, close_keys, closest_key, did_you_mean


@rule("DS201", "unknown-key", severity="error", target="deepspeed", fix="safe or unsafe")
def unknown_key(use, context):
    """A key DeepSpeed does not know, inside a section that rejects unknown keys.

    ## What it checks
    The sections DeepSpeed validates with pydantic models that forbid extra keys
    (`extra="forbid"`, deepspeed/runtime/config_utils.py:105-113): `zero_optimization` and its
    `offload_param`, `offload_optimizer`, `zenflow` and `leaf_module`, `fp16`, `bf16`,
    `tensorboard`, `wandb`, `csv_monitor`, `comet`, `comms_logger`, `hybrid_engine`, `compile`,
    `timers.throughput`, `tensor_parallel` and `weight_quantization`. Both spellings of a
    field with an alias are accepted (`stage3_prefetch_bucket_size` and
    `prefetch_bucket_size`).

    Every DeepSpeed release the launch may run with is judged (the `deepspeed-version`
    setting, the nearest pin, or every release dslint knows when nothing pins deepspeed): a
    key introduced later (`zero_optimization.compute_grad_norm`, new in 0.19.7) is reported
    when a pin allows releases before it, and `fp16`/`bf16` only reject unknown keys since
    0.17.1, so an unknown key there is a warning (raised by some releases, ignored by the rest)
    unless every allowed release raises. Where only some releases fail, the finding is info
    that names them.

    A misspelled key whose value is exactly `"auto"` is not reported here: DeepSpeed drops
    `"auto"` values before validation (config_utils.py:54-57), so `ignored-key` reports it.

    ## Why it matters
    DeepSpeed raises `ValidationError: ... Extra inputs are not permitted` (`extra fields not
    permitted` before 0.15.0, which used pydantic 1: config_utils.py `class Config`) when it
    parses the config: at `deepspeed.initialize`, or under HF ZeRO-3 already in
    `from_pretrained`. Keys that only newer DeepSpeed versions know fail the same way on older
    installs (OpenRLHF/OpenRLHF#63: `zero_hpz_partition_size` on DeepSpeed 0.9.5; the ZeRO++ keys
    came in 0.10.0). Which release brought each key is in schemas/deepspeed-versions.json, back
    to 0.9.0 (from the releases' sdists, dslint/schemagen/deepspeed_history.py).

    ## Example
    ```json
    {"zero_optimization": {"stage": 3, "stage3_param_persitence_threshold": 1e5}}
    ```
    Use instead:
    ```json
    {"zero_optimization": {"stage": 3, "stage3_param_persistence_threshold": 1e5}}
    ```

    ## Fix safety
    When one known field is clearly the closest to the unknown key (difflib similarity ≥ 0.75
    and 0.05 ahead of the next field, the aliases of one field counting once) and that field is
    not already set, the fix renames the key: safe where every release the launch may run raises,
    because the config cannot load as written and the value is kept; unsafe where some of them
    ignore the key (`fp16` and `bf16` before 0.17.1), as the setting starts to take effect there.
    Otherwise the closest keys are only suggested.
    """
    versions = dss.Versions(use, context)
    for path, mapping, section, strict in dss.sections(use.config, versions):
        if not strict:
            continue
        known = dss.known_keys(section, versions, path)
        all_props = section.get("properties", {})
        read = dss.reading(path, section, versions)[0]
        for item in mapping.entries:
            if ds.is_auto(item.value):
                continue
            where = ds.dotted(path)
            if item.key in all_props:
                introduced = dss.introduced_in(path + (item.key,))
                failing = [v for v in versions.before(introduced) if v in strict]
                finding = Finding(
                    item.key_span,
                    f"'{item.key}' is not a field of {where} before DeepSpeed {introduced}",
                    note=f"{versions.label} raises {dss.extra_forbidden(versions, failing)} when it parses the config",
                )
                if failing and (found := versions.qualify(finding, failing, spelling=True)) is not None:
                    yield found
                continue
            candidates = close_keys(item.key, known, section)
            raises = versions.judge(strict)
            message = f"unknown key '{item.key}' in {where}"
            fix = None
            single = closest_key(item.key, known, section)
            if single is not None and single not in mapping and not _field_set(mapping, section, single):
                fix = (Fix.safe if raises.everywhere else Fix.unsafe)(f"Rename '{item.key}' to '{single}'", rename_key(item, single))
            help = did_you_mean(candidates) if fix is None else None
            if not raises.everywhere and len(read) == len(versions.key):
                # every candidate rejects or ignores it: wrong everywhere, an error only where it raises
                yield Finding(item.key_span, message, fix=fix, severity=Severity.WARNING, help=help,
                              note=f"{raises.where()} raises; older ones ignore it: {raises.candidates.why()}")
                continue
            note = f"{versions.label} raises {dss.extra_forbidden(versions, raises.failing)} (pydantic, extra=forbid) when it parses the config"
            found = versions.qualify(Finding(item.key_span, message, fix=fix, note=note, help=help), strict)
            if found is not None:
                yield found


def _field_set(mapping: Mapping, section: dict, name: str) -> bool:
    field = canonical_key(section, name)
    return any(canonical_key(section, key) == field for key in mapping.keys())
