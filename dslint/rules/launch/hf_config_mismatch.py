"""DS301 hf-config-mismatch: an explicit DeepSpeed value against the HF Trainer's training argument."""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix, Related
from dslint.documents.edits import replace_value
from dslint.documents.model import Mapping, Scalar
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules._trainer_args import TrainingArgs, parsed
from dslint.rules._using_launch import launch_related


def _ds_value(config: Mapping, dotted: str):
    node = config
    for part in dotted.split("."):
        if not isinstance(node, Mapping):
            return None
        node = node.get(part)
    return node


@rule("DS301", "hf-config-mismatch", severity="error", target="deepspeed", fix="safe or unsafe", consumers=("hf", "swift", "llamafactory"))
def hf_config_mismatch(use, context):
    """An explicit DeepSpeed value differs from the training argument HF Trainer compares it with.

    ## What it checks
    Under the HF Trainer (`--deepspeed ds.json`, ms-swift, LLaMA-Factory, axolotl),
    `HfTrainerDeepSpeedConfig.trainer_config_process` fills every `"auto"` value from the
    `TrainingArguments` and collects every *explicit* value that differs
    (transformers/integrations/deepspeed.py:136-191); training then stops with
    `ValueError: Please correct the following DeepSpeed config values that mismatch
    TrainingArguments values` (deepspeed.py:258-263). Compared pairs:
    `train_micro_batch_size_per_gpu` ↔ `per_device_train_batch_size`,
    `gradient_accumulation_steps`, `train_batch_size` ↔ world size × batch × accumulation,
    `gradient_clipping` ↔ `max_grad_norm`, `optimizer.params.lr/betas/eps/weight_decay` ↔
    `learning_rate`, `adam_beta1/2`, `adam_epsilon`, `weight_decay`,
    `scheduler.params.warmup_max_lr` ↔ `learning_rate`, `fp16.enabled` ↔ `fp16|fp16_full_eval`,
    `bf16.enabled` ↔ `bf16|bf16_full_eval`, and
    `scheduler.params.warmup_num_steps` ↔ `max(1, warmup_steps)` (`trainer_config_finalize`,
    deepspeed.py:246-256: without `--warmup_steps` an explicit `0` or `10` mismatches `1`; a
    `--warmup_steps` below 1 is a ratio of the training steps, which depend on the data set: not
    judged, a deliberate difference in the generated oracle tests), and
    `scheduler.params.total_num_steps` ↔ the Trainer's number of training steps
    (deepspeed.py:246-250): `--max_steps` when it is positive, and never a literal `0` or below
    (huggingface/transformers#29348; under plain DeepSpeed a `0` would leave WarmupDecayLR at
    `warmup_min_lr` after warmup, lr_schedules.py:831-839). The comparison
    is Python's `!=`, so the string `"8"` does not equal `8`.

    The training arguments come from the command line, the training YAML, and the launch's
    program, read statically: a literal `TrainingArguments(...)` / `SFTConfig(...)` keyword wins
    over the command line (the program builds the class itself; a flag does not reach it), and a
    project dataclass's default (`per_device_train_batch_size: int = 4` in a `TrainingArguments`
    subclass given to `HfArgumentParser`) replaces the consumer's. A field the program assigns
    (`args.learning_rate = ...`) or passes as a variable is not judged. Values nobody sets are
    compared with the consumer's defaults (transformers: batch 8, accumulation 1, clipping 1.0,
    lr 5e-5; ms-swift: batch 1, fp16/bf16 from `--torch_dtype`; a TRL config's defaults change
    between TRL versions, so none are assumed for it); values that depend on what dslint
    cannot see (the data set's length, ratios) are skipped.

    With `--auto_find_batch_size` the Trainer refuses ZeRO stage 3 (`auto_find_batch_size isn't
    supported yet with DeepSpeed Zero-3`, trainer.py:898-906), and it compares the config once
    more after accelerate added `gradient_accumulation_steps: 1` to a config without that key
    (`propagate_args_to_deepspeed`), so `--gradient_accumulation_steps 4` then mismatches; so does
    `--bf16_full_eval` (or `--fp16_full_eval`) without a `bf16` (`fp16`) section, which accelerate
    fills with `enabled: false`.

    The Trainer compares when it trains (`deepspeed_init`): where the launch's program is not
    established (not found; `--deepspeed` only suggests the Trainer) it speaks only when the
    launch asks for training (`--do_train`, `--learning_rate`, `--num_train_epochs`, ...) or the
    config is a training config by its own keys (an optimizer or scheduler, gradient
    accumulation or clipping, ZeRO stage 1 or 2, an optimizer offload). An inference entry
    given a ZeRO-3 config with batch sizes only is no Trainer's; a program established as
    inference or evaluation only is not judged either.

    ## Why it matters
    The error comes after the model is loaded, on every rank.

    ## Example
    `--per_device_train_batch_size 2` with
    ```json
    {"train_micro_batch_size_per_gpu": 4}
    ```
    Use instead:
    ```json
    {"train_micro_batch_size_per_gpu": "auto"}
    ```

    ## Fix safety
    Safe where every launch that reads the config is established as an HF-like program (HF
    Trainer, accelerate, ms-swift, LLaMA-Factory): `"auto"` makes the Trainer write its own value,
    which is the value it would insist on. Unsafe where another launch reading the same file is
    only assumed to be one (it may not fill `"auto"`). No fix where another launch is established
    as plain DeepSpeed (its own `deepspeed.initialize` loop, Megatron-DeepSpeed, inference),
    which cannot take `"auto"`: the help says to make the two values agree.
    """
    plan = use.launch
    if plan is None:
        return
    from dslint.launch.plan import HF_LIKE  # here: a config no launch reaches needs no launch module

    if use.consumer not in HF_LIKE or not ds.trains(use):
        return
    args = TrainingArgs(plan)
    auto_find = parsed("auto_find_batch_size", plan.arg("auto_find_batch_size").value) if plan.arg("auto_find_batch_size") else False
    # The pairs in the order trainer_config_process compares them.
    pairs = _batch_pairs(plan, args, auto_find) + _optimizer_pairs(plan, args) + _precision_pairs(args)
    yield from _total_num_steps(use, context, args)
    if auto_find:
        gas, gas_rel = args.get("gradient_accumulation_steps")
        yield from _auto_find_batch_size(use, plan, gas, gas_rel, args)
    for dotted, hf_value, hf_name, related in pairs:
        yield from _mismatch(use, context, dotted, hf_value, hf_name, related)


def _batch_pairs(plan, args, auto_find) -> list[tuple]:
    """(DeepSpeed key, the Trainer's value, its name, [Related]) for the batch sizes; with
    --auto_find_batch_size the Trainer's micro batch (and so the global batch) is not known."""
    bs, bs_rel = args.get("per_device_train_batch_size")
    gas, gas_rel = args.get("gradient_accumulation_steps")
    pairs = []
    if not auto_find:
        pairs.append(("train_micro_batch_size_per_gpu", bs, "per_device_train_batch_size", [bs_rel]))
    pairs.append(("gradient_accumulation_steps", gas, "gradient_accumulation_steps", [gas_rel]))
    world = plan.world_size.value if plan.world_size is not None else None
    if not auto_find and world is not None and bs is not None and gas is not None:
        world_rel = Related(f"world size {world} from {plan.world_size.origin}", plan.world_size.span)
        pairs.append(("train_batch_size", world * bs * gas, "train_batch_size (calculated)", [world_rel, bs_rel, gas_rel]))
    return pairs


def _optimizer_pairs(plan, args) -> list[tuple]:
    """The pairs of clipping, the optimizer's parameters and the scheduler's warmup."""
    clip, clip_rel = args.get("max_grad_norm")
    lr, lr_rel = args.get("learning_rate")
    pairs = [("gradient_clipping", clip, "max_grad_norm", [clip_rel]), ("optimizer.params.lr", lr, "learning_rate", [lr_rel])]
    beta1, beta1_rel = args.get("adam_beta1")
    beta2, beta2_rel = args.get("adam_beta2")
    if beta1 is not None and beta2 is not None:
        pairs.append(("optimizer.params.betas", [beta1, beta2], "adam_beta1+adam_beta2", [beta1_rel, beta2_rel]))
    eps, eps_rel = args.get("adam_epsilon")
    pairs.append(("optimizer.params.eps", eps, "adam_epsilon", [eps_rel]))
    decay, decay_rel = args.get("weight_decay")
    pairs.append(("optimizer.params.weight_decay", decay, "weight_decay", [decay_rel]))
    pairs.append(("scheduler.params.warmup_max_lr", lr, "learning_rate", [lr_rel]))
    warmup, warmup_rel = _warmup_steps(plan, args)
    pairs.append(("scheduler.params.warmup_num_steps", warmup, "warmup_steps", [warmup_rel]))
    return pairs


def _precision_pairs(args) -> list[tuple]:
    """fp16.enabled and bf16.enabled against the flag or its _full_eval twin, where the flag is known."""
    pairs = []
    for name, dsname in (("fp16", "fp16.enabled"), ("bf16", "bf16.enabled")):
        flag, flag_rel = args.get(name)
        full_eval, _ = args.get(f"{name}_full_eval")
        if flag is not None:
            pairs.append((dsname, bool(flag or full_eval), f"{name}|{name}_full_eval", [flag_rel]))
    return pairs


def _auto_fix(use, context, dotted: str, node) -> dict:
    """The fix writing "auto": safe where every other reader of the file fills it, unsafe where one
    is only assumed, none (help instead) where one is established as a reader that cannot."""
    others = ds.auto_readers(use.document, context, besides=use.launch)
    title = f'Set {dotted} to "auto" so the Trainer fills it in'
    if others == ds.REFUSE:
        return {"help": f'make {dotted} agree with the Trainer: another launch reads this config with a reader that cannot fill "auto"'}
    return {"fix": (Fix.safe if others == ds.FILL else Fix.unsafe)(title, replace_value(node, "auto"))}


def _mismatch(use, context, dotted: str, hf_value, hf_name: str, related: list):
    """The finding for an explicit DeepSpeed value at ``dotted`` that Python's != tells from the Trainer's."""
    config = use.config
    if hf_value is None:
        return
    node = _ds_value(config, dotted)
    if node is None:
        return
    ds_value = node.to_python()
    if ds_value is None or ds_value == "auto" or ds_value == hf_value:
        return
    if dotted == "bf16.enabled" and config.get("bf16") is None and config.get("bfloat16") is not None:
        return  # HF reads only "bf16"
    shown = repr(ds_value) if isinstance(ds_value, str) else _show(ds_value)
    string = "a string never equals a number; " if isinstance(ds_value, str) and not isinstance(hf_value, str) else ""
    yield Finding(
        node.span,
        f"ds {dotted}={shown} vs hf {hf_name}={_show(hf_value)}",
        note=f"{string}the HF Trainer stops with {_MISMATCH}",
        related=[r for r in related if r is not None] + launch_related(use),
        **_auto_fix(use, context, dotted, node),
    )


_MISMATCH = "'Please correct the following DeepSpeed config values that mismatch TrainingArguments values'"


def _warmup_steps(plan, args):
    """HF's value for warmup_num_steps: max(1, warmup_steps) (transformers 5.23); None when it
    depends on the training steps (a ratio below 1) or the consumer sets its own default."""
    training = args.training
    if training is not None and any(training.value(n) is not None for n in ("warmup_steps", "warmup_ratio")):
        return None, None  # the program sets warmup itself
    arg = plan.arg("warmup_steps")
    if plan.arg("warmup_ratio") is not None:
        return None, None
    if arg is None:
        if plan.consumer != "hf" or (training is not None and training.trl):
            return None, None
        return 1, Related("warmup_steps = 0 (the transformers default; HF writes max(1, warmup_steps))")
    try:
        value = float(arg.value)
    except (TypeError, ValueError):
        return None, None
    if 0 < value < 1:
        return None, None
    return max(1, int(value)), Related(f"warmup_steps = {arg.value} ({arg.origin}; HF writes max(1, warmup_steps))", arg.span)


def _total_num_steps(use, context, args):
    """``scheduler.params.total_num_steps`` against the Trainer's num_training_steps
    (``trainer_config_finalize``, transformers integrations/deepspeed.py:246-250): ``--max_steps``
    when it is positive; a literal at or below 0 never matches, since the Trainer writes the
    number of optimizer steps it will take."""
    node = _ds_value(use.config, "scheduler.params.total_num_steps")
    if not isinstance(node, Scalar) or node.value == "auto" or isinstance(node.value, bool) \
            or not isinstance(node.value, (int, float)):
        return
    steps, steps_rel = args.get("max_steps")
    fix = _auto_fix(use, context, "scheduler.params.total_num_steps", node)
    if node.value <= 0:
        yield Finding(
            node.span,
            f"ds scheduler.params.total_num_steps={_show(node.value)}, not the number of training steps",
            note=f"the HF Trainer writes its number of training steps there and stops with {_MISMATCH} "
            "(0 steps would also leave the learning rate at warmup_min_lr after warmup)",
            related=launch_related(use), **fix,
        )
    elif steps is not None and steps > 0 and node.value != steps:
        yield Finding(
            node.span,
            f"ds scheduler.params.total_num_steps={_show(node.value)} vs hf num_training_steps (calculated)={steps}",
            note=f"the HF Trainer stops with {_MISMATCH}",
            related=[r for r in [steps_rel] if r is not None] + launch_related(use), **fix,
        )


def _auto_find_batch_size(use, plan, gas, gas_rel, args):
    config = use.config
    arg = plan.arg("auto_find_batch_size")
    related = [Related(arg.origin, arg.span)] + launch_related(use)
    zero = config.get("zero_optimization")
    stage = zero.get("stage") if isinstance(zero, Mapping) else None
    if isinstance(stage, Scalar) and not isinstance(stage.value, (bool, str)) and stage.value == 3:
        yield Finding(
            stage.span,
            "ZeRO stage 3 with --auto_find_batch_size",
            note="the HF Trainer stops with '`auto_find_batch_size` isn't supported yet with DeepSpeed Zero-3'",
            related=related,
        )
    if config.get("gradient_accumulation_steps") is None and gas is not None and gas != 1:
        yield Finding(
            ds_opening(config),
            f"no gradient_accumulation_steps with --auto_find_batch_size and gradient accumulation {gas}",
            note="accelerate writes 1 into the config, and the Trainer's second comparison (propagate_args_to_deepspeed) stops with "
            f"'ds gradient_accumulation_steps=1 vs hf gradient_accumulation_steps={gas}'",
            related=[r for r in [gas_rel] if r is not None] + related,
            fix=None,
        )
    for name in ("fp16", "bf16"):
        flag, _ = args.get(name)
        full_eval, full_rel = args.get(f"{name}_full_eval")
        if config.get(name) is None and not flag and full_eval:
            # accelerate's set_mixed_precision writes {"enabled": false} for the absent section
            yield Finding(
                ds_opening(config),
                f"no {name} section with --{name}_full_eval and --auto_find_batch_size",
                note=f"accelerate writes {name}.enabled false into the config, and the Trainer's second comparison stops with "
                f"'ds {name}.enabled=False vs hf {name}|{name}_full_eval=True'",
                related=[r for r in [full_rel] if r is not None] + related,
            )


def ds_opening(config: Mapping):
    from dslint.source import Span

    return Span(config.span.source, config.span.start, min(config.span.start + 1, config.span.end))


def _show(value) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(value)
    return str(value)
