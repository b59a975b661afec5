"""DS242 master-weights-config."""

from __future__ import annotations

from dslint.diagnostics import Finding
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules.deepspeed_engine._common import stage_related


@rule("DS242", "master-weights-config", severity="error", target="deepspeed")
def master_weights_config(use, context):
    """Low-precision master weights or optimizer states where DeepSpeed cannot keep them.

    ## What it checks
    `fp16.fp16_master_weights_and_grads`, `bf16.bf16_master_weights_and_grads` and
    `bf16.bf16_optimizer_states`:

    - any of them with ZeRO stage 0, or `bf16_optimizer_states` without
      `bf16_master_weights_and_grads`: raises when the config is parsed
      (deepspeed/runtime/config.py:702-714);
    - `fp16_master_weights_and_grads`, or `bf16_master_weights_and_grads` without
      `bf16_optimizer_states`, with ZeRO 1-3 but no optimizer offload to cpu/nvme: raises at
      `deepspeed.initialize` (`Master weights feature requires ZeRO-N Offload with
      DeepSpeedCPUAdam`, zero/stage_1_and_2.py:331-333, zero/stage3.py:299-301);
    - fp16 and bf16 master weights together (base_optimizer.py:499-500).

    ## Why it matters
    Each is an assertion before training starts.

    ## Example
    ```json
    {"bf16": {"enabled": true, "bf16_master_weights_and_grads": true}, "zero_optimization": {"stage": 2}}
    ```
    Use instead:
    ```json
    {"bf16": {"enabled": true, "bf16_master_weights_and_grads": true},
     "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}
    ```

    ## Fix safety
    No fix: the choice between offloading and full-precision master weights is a memory decision.
    """
    config = use.config
    fp16 = ds.precision_section(config, "fp16")
    bf16 = ds.precision_section(config, "bf16")
    flags = {}
    for section, key in ((fp16, "fp16_master_weights_and_grads"), (bf16, "bf16_master_weights_and_grads"), (bf16, "bf16_optimizer_states")):
        if section is not None and ds.strict_bool(section, key, False) is True:
            flags[key] = section.entry(key)
    if not flags:
        return
    stage = ds.zero_stage(config)
    if stage is ds.UNKNOWN:
        return
    if stage == 0:
        for key, item in flags.items():
            yield Finding(item.value.span, f"{key} with ZeRO off (stage 0)", related=stage_related(config),
                          note="DeepSpeed asserts '... is only supported with ZeRO Stage 1, 2, or 3.' when it parses the config")
        return
    if "bf16_optimizer_states" in flags and "bf16_master_weights_and_grads" not in flags:
        yield Finding(flags["bf16_optimizer_states"].value.span, "bf16_optimizer_states without bf16_master_weights_and_grads",
                      note="DeepSpeed asserts 'bf16_optimizer_states requires bf16_master_weights_and_grads to be enabled.' when it parses the config")
        return
    if "fp16_master_weights_and_grads" in flags and "bf16_master_weights_and_grads" in flags:
        yield Finding(flags["bf16_master_weights_and_grads"].value.span, "fp16 and bf16 master weights are both enabled",
                      note="DeepSpeed asserts 'fp16_master_weights_and_gradients and bf16_master_weights_and_gradients are mutually exclusive.'")
        return
    needs_offload = "fp16_master_weights_and_grads" in flags or ("bf16_master_weights_and_grads" in flags and "bf16_optimizer_states" not in flags)
    device = ds.offload_device(config, "offload_optimizer")
    if needs_offload and device == "none":
        key = "fp16_master_weights_and_grads" if "fp16_master_weights_and_grads" in flags else "bf16_master_weights_and_grads"
        yield Finding(
            flags[key].value.span,
            f"{key} without optimizer offload",
            note=f"ZeRO stage {stage} asserts 'Master weights feature requires ZeRO-{stage} Offload with DeepSpeedCPUAdam' at deepspeed.initialize",
            help="set offload_optimizer.device to cpu or nvme, with a DeepSpeed Adam optimizer",
        )
