"""DS203 removed-key."""

from __future__ import annotations

from dslint.diagnostics import Edit, Finding, Fix
from dslint.documents.model import Mapping, Scalar
from dslint.documents.edits import remove_json_entry
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules import _deepspeed_schema as dss


@rule("DS203", "removed-key", severity="error", target="deepspeed", fix="safe or unsafe")
def removed_key(use, context):
    """A key DeepSpeed has removed: any presence raises, even `{"enabled": false}`.

    ## What it checks
    The removed-feature tables of deepspeed/runtime/config.py:80-141
    (`_REMOVED_TOP_LEVEL_CONFIG_KEYS`, `_REMOVED_ZERO_CONFIG_KEYS`): top-level `nebula`,
    `compression_training`, `amp`, `quantize_training`, `sparse_gradients`, `eigenvalue`,
    `sparse_attention`, `elasticity`, `graph_harvesting`, `curriculum_learning`,
    `progressive_layer_drop`, and `zero_optimization.mics_shard_size`,
    `mics_hierarchical_params_gather`, `zeropp_loco_param`. Each is an error when every
    DeepSpeed release the launch may run with is at or after its removal (0.19.7 or 0.19.8),
    and info naming those releases when some are older (nothing pinned: every release dslint
    knows, 0.9.0 on).

    ## Why it matters
    `_reject_removed_config_keys` raises `DeepSpeedConfigError` for the mere presence of the
    key, whatever its value, before anything else is parsed (see deepspeedai/DeepSpeed#8489).

    ## Example
    ```json
    {"train_batch_size": 32, "elasticity": {"enabled": false}}
    ```
    Use instead:
    ```json
    {"train_batch_size": 32}
    ```

    ## Fix safety
    Deleting the key is safe when every allowed release has removed it and the key says off
    (`{"enabled": false}`, `false`, `null`): the config does not load with it, and nothing you
    chose is lost. It is unsafe when the key turns a feature on or holds a value (the feature
    you chose is gone, not replaced), and when older releases still run the feature. For `curriculum_learning`, moving it under
    `data_efficiency.data_sampling.curriculum_learning` is offered as an unsafe alternative
    (the new section takes its settings per metric under `curriculum_metrics`).
    """
    versions = dss.Versions(use, context)
    config = use.config
    places = [((), config)]
    zero = ds.zero_section(config)
    if zero is not None:
        places.append((("zero_optimization",), zero))
    for path, mapping in places:
        section = dss.section(path) or {}
        for item in mapping.entries:
            spec = section.get("properties", {}).get(item.key, {})
            if not spec.get("x-dslint-removed"):
                continue
            removed_in = dss.key_history(ds.dotted(path + (item.key,))).get("removed") or dss.fmt_version(dss.schema_version())
            failing = versions.since(removed_in)
            if not failing:
                continue
            message = spec.get("x-dslint-removed-message", "").replace(" See https://github.com/deepspeedai/DeepSpeed/issues/8489.", "").strip()
            alternatives = []
            if item.key == "curriculum_learning" and path == () and "data_efficiency" not in config and isinstance(item.value, Mapping):
                moved = '"data_efficiency": {"data_sampling": {"curriculum_learning": ' + item.value.span.text + "}}"
                alternatives.append(Fix.unsafe("Move it to data_efficiency.data_sampling.curriculum_learning (its settings go under curriculum_metrics there)", Edit.replace(item.span, moved)))
            finding = Finding(
                item.key_span,
                f"'{ds.dotted(path + (item.key,))}' was removed in DeepSpeed {removed_in}",
                fix=Fix.safe(f"Remove '{item.key}'", remove_json_entry(mapping, item)),
                alternatives=alternatives,
                note=f"any value raises DeepSpeedConfigError ({message}) [deepspeedai/DeepSpeed#8489]",
            )
            found = versions.qualify(finding, failing)
            if found is not None:
                if found.severity is not None or not _off(item.value):
                    # older versions still run the feature, or it says on: removing it is a choice
                    found.fix = Fix.unsafe(finding.fix.title, *finding.fix.edits)
                yield found


def _off(value) -> bool:
    """The key switches nothing on: `false`, `null`, or a section whose `enabled` is false and
    that holds nothing else."""
    if isinstance(value, Scalar):
        return value.value is False or value.value is None
    if isinstance(value, Mapping):
        enabled = value.get("enabled")
        return len(value.entries) == 1 and isinstance(enabled, Scalar) and enabled.value is False
    return False
