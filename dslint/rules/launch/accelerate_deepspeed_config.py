"""DS309 accelerate-deepspeed-config: DeepSpeed options in an accelerate config that accelerate rejects or drops."""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix, Related, Severity
from dslint.documents.edits import replace_value
from dslint.documents.model import Mapping, Scalar
from dslint.rule import rule

# accelerate passes these deepspeed_config keys on (accelerate commands/launch.py, utils/launch.py:565-586).
ACCELERATE_DS_KEYS = frozenset(
    {
        "deepspeed_config_file", "zero_stage", "offload_optimizer_device", "offload_param_device",
        "offload_optimizer_nvme_path", "offload_param_nvme_path", "gradient_accumulation_steps",
        "gradient_clipping", "zero3_init_flag", "zero3_save_16bit_model", "deepspeed_hostfile",
        "deepspeed_inclusion_filter", "deepspeed_exclusion_filter", "deepspeed_multinode_launcher",
        "deepspeed_moe_layer_cls_names",
    }
)
# Fields that may not accompany deepspeed_config_file (accelerate dataclasses.py:1507-1531).
ACCELERATE_CONFIG_DS_FIELDS = (
    "gradient_accumulation_steps", "gradient_clipping", "zero_stage", "offload_optimizer_device",
    "offload_param_device", "offload_param_nvme_path", "offload_optimizer_nvme_path", "zero3_save_16bit_model",
)


@rule("DS309", "accelerate-deepspeed-config", severity="error", target="document", kinds=("accelerate-yaml",), fix="safe")
def accelerate_deepspeed_config(document, context):
    """An accelerate config sets DeepSpeed options that accelerate rejects or drops.

    ## What it checks
    - `deepspeed_config_file` together with accelerate-side DeepSpeed fields
      (`gradient_accumulation_steps`, `gradient_clipping`, `zero_stage`, the offload devices and
      NVMe paths, `zero3_save_16bit_model`) or with a top-level `mixed_precision` (even `no`):
      accelerate raises `ValueError: When using deepspeed_config_file, the following accelerate
      config variables will be ignored: [...]` (accelerate utils/dataclasses.py:1507-1531).
      `zero3_init_flag` is allowed. Error.
    - Keys under `deepspeed_config` that accelerate does not pass on (for example
      `stage3_gather_16bit_weights_on_model_save` or `zero_force_ds_cpu_optimizer`): dropped
      silently (accelerate commands/launch.py; hiyouga/LlamaFactory#253). Warning, with the key
      to use or the advice to move it into the DeepSpeed JSON.
    - `mixed_precision: no` unquoted (or `false`, `off`): PyYAML reads the boolean false, and
      every `accelerate launch` path calls `args.mixed_precision.lower()` on it:
      `AttributeError: 'bool' object has no attribute 'lower'` (accelerate utils/launch.py:169,
      278, 551). Error; the fix quotes it (`mixed_precision: "no"`), as `accelerate config` writes it.

    The file is judged on its own: `deepspeed_config_file` with `mixed_precision` fails every
    launch except one that passes `--mixed_precision` on the command line (accelerate then does
    not count the file's value); the generated oracle tests list that as a deliberate difference.

    ## Why it matters
    The conflict stops `accelerate launch` before training; a dropped key silently leaves a
    setting the author relied on (for example 16-bit weights on save) at its default.

    ## Example
    ```yaml
    distributed_type: DEEPSPEED
    mixed_precision: bf16
    deepspeed_config:
      deepspeed_config_file: ds_z3.json
      zero_stage: 3
    ```
    Use instead: keep `zero_stage` and precision in `ds_z3.json`, and only
    `deepspeed_config_file` (and `zero3_init_flag`) here.

    ## Fix safety
    Safe: only the boolean false gets a fix, `"no"`, the one precision value that means off (what
    `accelerate config` writes). `true` names no precision, so it has none; nor do the conflicts
    and dropped keys, whose settings must move to the DeepSpeed JSON by hand.
    """
    mapping = document.mapping
    if mapping is None:
        return
    precision = mapping.get("mixed_precision")
    if isinstance(precision, Scalar) and isinstance(precision.value, bool):
        yield Finding(
            precision.span,
            f"mixed_precision: {precision.span.text.strip()} is the boolean {str(precision.value).lower()} to YAML, not a string",
            note="accelerate launch stops with AttributeError: 'bool' object has no attribute 'lower'",
            fix=Fix.safe('Write "no"', replace_value(precision, "no")) if precision.value is False else None,
        )
    section = mapping.get("deepspeed_config")
    if not isinstance(section, Mapping):
        return
    has_file = section.entry("deepspeed_config_file") is not None
    for entry in section.entries:
        if entry.key not in ACCELERATE_DS_KEYS:
            help = "use zero3_save_16bit_model here, or set it in the DeepSpeed JSON" if "gather_16bit" in entry.key else "set it in a DeepSpeed JSON named by deepspeed_config_file"
            yield Finding(entry.key_span, f"accelerate silently drops deepspeed_config.{entry.key}", severity=Severity.WARNING,
                          note="accelerate does not pass it on to DeepSpeed", help=help)
        elif has_file and entry.key in ACCELERATE_CONFIG_DS_FIELDS:
            yield Finding(
                entry.key_span,
                f"deepspeed_config.{entry.key} together with deepspeed_config_file",
                note="accelerate raises 'When using `deepspeed_config_file`, the following accelerate config variables will be ignored'",
                help="set it in the DeepSpeed JSON instead",
                related=[Related("deepspeed_config_file", section.entry("deepspeed_config_file").key_span)],
            )
    precision = mapping.entry("mixed_precision")
    if has_file and precision is not None and precision.value.to_python() is not None:
        yield Finding(
            precision.key_span,
            "mixed_precision together with deepspeed_config_file",
            note="accelerate raises 'the following accelerate config variables will be ignored: [mixed_precision]'",
            help="precision belongs in the DeepSpeed JSON (fp16/bf16 sections)",
            related=[Related("deepspeed_config_file", section.entry("deepspeed_config_file").key_span)],
        )
