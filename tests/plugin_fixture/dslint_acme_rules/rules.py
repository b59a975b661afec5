"""ACME's house rules: registered through the ``dslint.rules`` entry-point group."""

from dslint.diagnostics import Finding
from dslint.rule import rule


@rule("ACME001", "no-zero-stage-0", severity="warning", target="deepspeed")
def no_zero_stage_0(use, context):
    """Our cluster requires ZeRO.

    ## What it checks
    A DeepSpeed config without a `zero_optimization` section, or with stage 0.
    """
    section = use.config.get("zero_optimization")
    if section is None:
        yield Finding(use.config.span, "enable ZeRO: this cluster's jobs need it")
        return
    stage = section.get("stage") if hasattr(section, "get") else None
    if stage is not None and getattr(stage, "value", None) == 0:
        yield Finding(stage.span, "ZeRO stage 0 is not allowed on this cluster")
