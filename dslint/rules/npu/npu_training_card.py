"""DS516 npu-training-card: the rule and the helpers only it uses."""

from __future__ import annotations

from dslint.diagnostics import Finding, Related
from dslint.launch.target import NO_BF16
from dslint.rule import rule


@rule("DS516", "npu-training-card", severity="warning", target="launch", facts=("hardware",))
def npu_training_card(plan, context, *, hardware):
    """ms-swift on an Ascend 910A-generation card, which it does not support.

    ## What it checks
    The `hardware` setting names Ascend 910A (a comment of the script does not count) and the
    launch is ms-swift or Megatron-SWIFT (4.x). ms-swift's hardware table supports Atlas A2/A3
    training products and the Ascend 950 series, and marks "Atlas training series products" (the
    910A generation) and all inference products as not supported (NPU-support.md, Table 1). 910A
    also has no bf16 (`precision-unsupported-hardware`). Other consumers are not judged.

    ## Why it matters
    The run is on hardware that ms-swift's Ascend support does not extend to. The missing bf16
    can stop it at once: without `--torch_dtype`, ms-swift takes the dtype from the model
    (swift/model/model_meta.py; `get_default_torch_dtype` in swift/model/utils.py asks the
    hardware only when config.json names none), so a model saved in bf16 turns bf16 training on
    and the job stops at start-up, after its queue wait.

    ## Example
    `hardware = "ascend-910a"` with `swift sft ...`. Use instead: Atlas A2 (910B) or A3 hardware.
    """
    if plan.consumer not in ("swift", "megatron"):
        return
    if hardware is None or hardware.name != "ascend-910a":
        return
    yield Finding(
        plan.span,
        f"ms-swift does not support {NO_BF16[hardware.name]} (Atlas training series, 910A generation)",
        note="its NPU support covers Atlas A2/A3 training products and the Ascend 950 series (NPU-support.md, Table 1)",
        related=[Related(f"hardware {hardware.name} ({hardware.origin})", hardware.span)],
    )
