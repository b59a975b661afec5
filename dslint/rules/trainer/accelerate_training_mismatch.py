"""DS323 accelerate-training-mismatch: accelerate's DeepSpeed settings against the training arguments."""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix, Related, Severity
from dslint.documents.edits import replace_value
from dslint.documents.model import Mapping, Scalar
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules._trainer_args import TrainingArgs


def _accelerate_value(plan, section: Mapping, key: str, flag: str):
    """(value, span, where) of an accelerate DeepSpeed setting: `accelerate launch --flag` wins over the file."""
    arg = plan.launcher_args.get(flag)
    if arg is not None and arg.value not in (None, True):
        return arg.value, arg.span, arg.origin
    node = section.get(key) if section is not None else None
    if isinstance(node, Scalar) and node.value is not None:
        return node.value, node.span, f"{key} in {plan.accelerate_config.raw}"
    return None, None, None


def _number(value, kind=float):
    try:
        return kind(value) if not isinstance(value, bool) else None
    except (TypeError, ValueError):
        return None


@rule("DS323", "accelerate-training-mismatch", severity="error", target="launch", fix="unsafe", consumers=("hf",))
def accelerate_training_mismatch(plan, context):
    """accelerate's DeepSpeed settings disagree with the training arguments the HF Trainer compares them with.

    ## What it checks
    `accelerate launch` with an accelerate config that turns DeepSpeed on (`distributed_type:
    DEEPSPEED`, a `deepspeed_config` section without `deepspeed_config_file`) and a training
    program read as the HF Trainer's that is not given `--deepspeed`:

    - accelerate hands its settings to the program as environment variables
      (`ACCELERATE_GRADIENT_ACCUMULATION_STEPS`, `ACCELERATE_GRADIENT_CLIPPING`,
      `ACCELERATE_MIXED_PRECISION`; accelerate utils/launch.py:558-586);
    - `TrainingArguments` builds a `DeepSpeedPlugin()` from them (transformers
      training_args.py:1716-1721), which writes `gradient_accumulation_steps` and
      `gradient_clipping` into the DeepSpeed config it makes (accelerate utils/dataclasses.py:
      1229-1235, 1301-1321), and `set_mixed_precision` turns on the `bf16` (also for `fp8`) or
      `fp16` section of the precision `TrainingArguments.mixed_precision` names: the accelerate
      value, unless `--fp16`/`--bf16` is given, which wins (training_args.py:1614-1618;
      dataclasses.py:1415-1445);
    - the Trainer then compares that config with its arguments (`propagate_args_to_deepspeed`,
      trainer.py:886-887 → `trainer_config_process`, deepspeed.py:136-186) and stops with
      `Please correct the following DeepSpeed config values that mismatch TrainingArguments
      values`.

    So the launch fails when accelerate's `gradient_accumulation_steps` differs from the
    Trainer's (its default is 1), when accelerate's `gradient_clipping` differs from
    `max_grad_norm` (default 1.0), and when accelerate's `mixed_precision` is `bf16`, `fp8` or
    `fp16` while neither `--bf16` nor `--fp16` is given (`ds bf16.enabled=True vs hf
    bf16|bf16_full_eval=False`; checked by running these transformers and accelerate calls).
    When a `--bf16`/`--fp16` flag names the other precision, it wins and accelerate's
    `mixed_precision` is silently unused: a warning.

    ## Why it matters
    The mismatch error comes after the model is loaded, on every rank; an unused
    `mixed_precision` makes the accelerate config say something the run does not do.

    ## Example
    ```yaml
    distributed_type: DEEPSPEED
    mixed_precision: bf16
    deepspeed_config:
      gradient_accumulation_steps: 4
      zero_stage: 2
    ```
    launched with `accelerate launch --config_file ds.yaml train.py --per_device_train_batch_size 2`.
    Use instead: pass `--gradient_accumulation_steps 4 --bf16` to the program as well, or set
    them only there and drop `gradient_accumulation_steps` from the accelerate config.

    ## Fix safety
    Unsafe: writing the Trainer's `gradient_accumulation_steps` or `max_grad_norm` into the
    accelerate config makes the two agree, but which of them the author meant is a guess.
    """
    found = _deepspeed_by_accelerate(plan)
    if found is None:
        return
    mapping, section = found
    args = TrainingArgs(plan)
    for key, name, kind in (("gradient_accumulation_steps", "gradient_accumulation_steps", int), ("gradient_clipping", "max_grad_norm", float)):
        yield from _step_setting(plan, section, args, key, name, kind)
    yield from _mixed_precision(plan, mapping, args)


def _deepspeed_by_accelerate(plan):
    """(accelerate config, its deepspeed_config section or None) of an accelerate launch whose config turns
    DeepSpeed on itself (no DeepSpeed JSON from the launch or the config); None for any other launch."""
    if plan.launcher != "accelerate" or plan.accelerate_config is None or plan.accelerate_config.config is None:
        return None
    if plan.arg("deepspeed") is not None or plan.deepspeed is not None:
        return None  # the Trainer builds its plugin from the DeepSpeed JSON; accelerate only fills "auto" there
    mapping = plan.accelerate_config.config
    distributed = ds.raw(mapping.get("distributed_type"))
    section = mapping.get("deepspeed_config")
    uses_deepspeed = (isinstance(distributed, str) and distributed.upper() == "DEEPSPEED") or "use_deepspeed" in plan.launcher_args
    if not uses_deepspeed or (isinstance(section, Mapping) and section.get("deepspeed_config_file") is not None):
        return None
    return mapping, section if isinstance(section, Mapping) else None


def _step_setting(plan, section: Mapping | None, args, key: str, name: str, kind):
    """accelerate's ``key`` (the flag of the same name, or the config's) against the Trainer's ``name``."""
    value, span, where = _accelerate_value(plan, section, key, key)
    theirs = _number(value, kind) if value is not None else None
    mine, mine_rel = args.get(name)
    if theirs is None or mine is None or theirs == mine or (key == "gradient_clipping" and not theirs):
        return
    node = section.get(key) if section is not None else None
    fix = None
    if isinstance(node, Scalar) and node.span is span:
        fix = Fix.unsafe(f"Write the Trainer's {name} ({mine}) into the accelerate config", replace_value(node, mine))
    yield Finding(
        span or plan.span,
        f"accelerate's {key} {value} differs from the Trainer's {name} {mine}",
        note=f"accelerate writes it into the DeepSpeed config, and the Trainer stops with 'ds {key}={theirs} vs hf {name}={mine}'",
        related=[r for r in [mine_rel] if r is not None] + [Related(f"set by {where}")],
        fix=fix,
    )


def _mixed_precision(plan, mapping: Mapping, args):
    """accelerate's mixed_precision (the flag, or the config's) against the Trainer's --fp16/--bf16."""
    precision, span, where = _accelerate_value(plan, None, "mixed_precision", "mixed_precision")
    if precision is None:
        precision, span, where = _accelerate_value(plan, mapping, "mixed_precision", "mixed_precision")
    if not isinstance(precision, str) or precision.lower() not in ("bf16", "fp16", "fp8"):
        return
    precision = precision.lower()
    flags = _precision_flags(args)
    fp16, bf16 = flags["fp16"][0], flags["bf16"][0]
    if fp16 is None or bf16 is None:
        return  # not known (a TRL config's default, a value the program sets)
    section_name = "bf16" if precision in ("bf16", "fp8") else "fp16"
    chosen = "fp16" if fp16 else "bf16" if bf16 else None
    if chosen is None:
        if flags[section_name][1]:
            return  # --bf16_full_eval matches the enabled section
        yield Finding(
            span or plan.span,
            f"mixed_precision {precision} turns DeepSpeed {section_name} on but the training arguments leave it off",
            note=f"the Trainer stops with 'ds {section_name}.enabled=True vs hf {section_name}|{section_name}_full_eval=False'",
            help=f"pass --{section_name}",
            related=[r for r in [flags[section_name][2]] if r is not None] + [Related(f"set by {where}")],
        )
    elif chosen != section_name:
        yield Finding(
            span or plan.span,
            f"--{chosen} wins over accelerate's mixed_precision {precision}",
            note=f"the run trains in {chosen} and this value is unused",
            related=[r for r in [flags[chosen][2]] if r is not None] + [Related(f"set by {where}")],
            severity=Severity.WARNING,
        )


def _precision_flags(args) -> dict:
    """{"fp16"|"bf16": (the flag's value, its _full_eval flag's value, Related)} from the training arguments."""
    flags = {}
    for name in ("fp16", "bf16"):
        value, related = args.get(name)
        eval_value, _ = args.get(f"{name}_full_eval")
        flags[name] = (value, eval_value, related)
    return flags
