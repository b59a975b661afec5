"""DS302 auto-under-deepspeed: `"auto"` in a config that plain DeepSpeed reads."""

from __future__ import annotations

from dslint.diagnostics import Finding, Severity
from dslint.documents.model import Scalar
from dslint.rule import rule
from dslint.rules._using_launch import launch_related

# "auto" under plain DeepSpeed: deepspeed/runtime/config_utils.py:54-57 drops exact "auto" in
# strict sections (the default applies); dict.get keys keep the string (research §1.5).
_AUTO_UNDER_DEEPSPEED = {
    "train_batch_size": ("crashes at start-up: TypeError: '>' not supported between instances of 'str' and 'int'", True),
    "train_micro_batch_size_per_gpu": ("crashes at start-up: TypeError: '>' not supported between instances of 'str' and 'int'", True),
    "gradient_accumulation_steps": ("crashes at start-up: TypeError: '>' not supported between instances of 'str' and 'int'", True),
    "gradient_clipping": ("crashes at the first optimizer step: TypeError: '>' not supported between instances of 'str' and 'float'", True),
    "zero_optimization.stage": ("is dropped, so ZeRO stage 0 (ZeRO off) applies silently", False),
    "fp16.enabled": ("is dropped, so fp16 is off and training runs in fp32 silently", False),
    "bf16.enabled": ("is dropped, so bf16 is off and training runs in fp32 silently", False),
    "scheduler.params.warmup_num_steps": ("crashes: ValueError: warmup_num_steps must be a positive integer, got auto", True),
}


@rule("DS302", "auto-under-deepspeed", severity="error", target="deepspeed", consumers=("deepspeed",))
def auto_under_deepspeed(use, context):
    """A value is `"auto"` in a config that plain DeepSpeed reads: nobody fills it in.

    ## What it checks
    `"auto"` is a convention of the HF Trainer and accelerate, which replace it before
    DeepSpeed sees the config. A script that passes the config straight to DeepSpeed
    (`deepspeed train.py --deepspeed --deepspeed_config ds.json`, `deepspeed.initialize(config=...)`)
    gets the string. DeepSpeed's pydantic sections drop any value that is exactly `"auto"`
    (deepspeed/runtime/config_utils.py:54-57), so the default applies silently:
    `"stage": "auto"` is ZeRO-0 and `"enabled": "auto"` is fp32. Keys read with `dict.get` keep
    the string and crash: the batch keys at start-up (deepspeed/runtime/config.py:596),
    `gradient_clipping` at the first step, optimizer parameters at the first step
    (research: deepspeed_rules.md §1.5).

    Crashes are errors; silent changes are warnings.

    ## Why it matters
    The crashes come after the model is loaded; the silent cases train without ZeRO or in fp32
    at several times the memory and time, with nothing in the log to say why.

    ## Example
    `deepspeed train.py --deepspeed --deepspeed_config ds.json` with
    ```json
    {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": "auto"}}
    ```
    Use instead:
    ```json
    {"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2}}
    ```
    """
    if use.consumer != "deepspeed":
        return
    from dslint.documents.model import walk

    for path, node in walk(use.config):
        if not isinstance(node, Scalar) or node.value != "auto":
            continue
        dotted = ".".join(str(p) for p in path)
        effect, crash = _AUTO_UNDER_DEEPSPEED.get(dotted, (None, False))
        if effect is None:
            if dotted.startswith("optimizer.params."):
                effect, crash = "reaches the optimizer as the string 'auto' and crashes it at construction or at the first step", True
            elif dotted.startswith(("zero_optimization.", "fp16.", "bf16.")):
                effect, crash = "is dropped, so DeepSpeed's default applies silently", False
            else:
                effect, crash = "stays the string 'auto'; DeepSpeed does not fill it in", False
        yield Finding(
            node.span,
            f'{dotted} is "auto", which DeepSpeed itself never fills',
            note=f"this launch hands the config to DeepSpeed itself: the value {effect}",
            related=launch_related(use),
            severity=None if crash else Severity.WARNING,
        )
