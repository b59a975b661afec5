"""What the HF Trainer (and accelerate under it) does with a DeepSpeed config's optimizer and scheduler, and with
accelerate's own DeepSpeed settings, next to the training arguments of the same launch (DS321-DS323).

Each rule states a fact about the Trainer read from the launch's program (``consumers``); where
that reader is only assumed, the engine lowers the finding to a warning. Sources: transformers
5.23 ``integrations/deepspeed.py`` (``trainer_config_process``, ``deepspeed_optim_sched``,
``deepspeed_init``), ``training_args.py``, accelerate 1.15 ``utils/dataclasses.py``
(``DeepSpeedPlugin``) and ``utils/launch.py``; older releases where the behaviour differs.
"""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix, Related, Severity
from dslint.documents.model import Mapping, Scalar
from dslint.documents.edits import remove_json_entry, replace_value
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules.launch import TrainingArgs, launch_related

# HF Trainer passes these to DeepSpeed through accelerate; none of them reads `--optim` when the
# config has an `optimizer` block.
HF_READERS = ("hf", "swift", "llamafactory")
TRANSFORMERS_DROPS_OPTIMIZERS = "4.46.0"  # 4.45.2 trainer.py:589-595 raised; 4.46.0 only refuses it with FSDP


def _trainer_scheduler(plan, args):
    """(name, value, Related) of a trainer scheduler the launch chose explicitly, or None."""
    names = ["lr_scheduler_type", "lr_scheduler_kwargs"]
    if getattr(plan.program, "kind", None) == "axolotl" or (plan.origin is not None and getattr(plan.origin, "flavor", None) == "axolotl"):
        names.insert(0, "lr_scheduler")  # axolotl's key, handed on as lr_scheduler_type
    for name in names:
        value, related = args.get(name)
        if value is not None and value not in ({}, "", "{}"):
            return name, value, related
    return None


@rule("DS321", "trainer-scheduler-ignored", severity="warning", target="deepspeed", fixable=True, consumers=HF_READERS)
def trainer_scheduler_ignored(use, context):
    """A DeepSpeed `scheduler` block and a trainer scheduler (`lr_scheduler_type`) in one launch: the DeepSpeed one wins silently.

    ## What it checks
    A DeepSpeed config with a `scheduler` block, used by a launch that also chooses the
    Trainer's scheduler: `--lr_scheduler_type` (or `lr_scheduler_type:` in a training YAML, a
    literal `TrainingArguments(lr_scheduler_type=...)` in the program), `--lr_scheduler_kwargs`,
    or axolotl's `lr_scheduler:`. The Trainer's default scheduler is not reported, only one the
    launch writes.

    When the config has a `scheduler`, the HF Trainer hands accelerate a bare `DummyScheduler`
    (transformers integrations/deepspeed.py:592-593, `deepspeed_optim_sched`), and accelerate
    lets DeepSpeed build the config's scheduler: it fills the block's `warmup_*` values from the
    `DummyScheduler` (accelerate accelerator.py:2333-2347, `_prepare_deepspeed`) and hands
    `deepspeed.initialize` a scheduler of its own only for a `DummyScheduler` with an
    `lr_scheduler_callable` (accelerator.py:2371-2372), which the Trainer passes only when the
    config has *no* scheduler (deepspeed.py:594-608). So `lr_scheduler_type` and
    `lr_scheduler_kwargs` are never read, with no warning. (A plain accelerate loop that builds
    its own scheduler with such a config stops instead: `You cannot specify a scheduler in the
    config file and in the code at the same time`, accelerator.py:2266-2271.)

    ## Why it matters
    The run trains with a schedule the training arguments do not show: a cosine decay asked
    for on the command line runs as DeepSpeed's `WarmupDecayLR` (linear) or `WarmupLR`
    (constant after warmup).

    ## Example
    `--lr_scheduler_type cosine --deepspeed ds.json` with
    ```json
    {"scheduler": {"type": "WarmupDecayLR", "params": {"total_num_steps": "auto", "warmup_num_steps": "auto"}}}
    ```
    Use instead: drop the `scheduler` block so `--lr_scheduler_type` applies, or drop the flag.

    ## Fix safety
    Unsafe: removing the `scheduler` block changes the schedule the run trains with (to the one
    the flag asks for). Offered only where the program is established as the Trainer's.
    """
    plan = use.launch
    scheduler = use.config.entry("scheduler")
    if plan is None or scheduler is None or not isinstance(scheduler.value, Mapping) or scheduler.value.get("type") is None:
        return
    chosen = _trainer_scheduler(plan, TrainingArgs(plan))
    if chosen is None:
        return
    name, value, related = chosen
    kind = ds.raw(scheduler.value.get("type"))
    fix = None
    if ds.fills_auto(use):
        fix = Fix.unsafe(f"Remove the DeepSpeed scheduler block so {name} applies", remove_json_entry(use.config, scheduler))
    yield Finding(
        scheduler.key_span,
        f"the HF Trainer silently ignores {name} {value}: the DeepSpeed scheduler {kind} wins",
        note="the Trainer passes a DummyScheduler to DeepSpeed, which builds its own",
        related=[r for r in [related] if r is not None] + launch_related(use),
        fix=fix,
    )


def _optimizers_passed(plan):
    """Evidence of a program that passes its own optimizer to the Trainer (``Trainer(optimizers=(opt, sched))``)."""
    facts = getattr(plan.program, "facts", None)
    if facts is None or not plan.program.established:
        return None
    from dslint.launch.consumer import external_bases

    def is_trainer(name: str) -> bool:
        if name.startswith(("transformers.", "trl.")) and name.endswith("Trainer"):
            return True
        return any(is_trainer(base) for base in external_bases(facts, name))

    def builds_its_own(name: str) -> bool:
        """A project Trainer subclass that makes its optimizer itself (deepspeed_optim_sched calls create_optimizer)."""
        cls = facts.classes.get(name.rsplit(".", 1)[-1])
        while cls is not None:
            if {"create_optimizer", "create_optimizer_and_scheduler"} & set(cls.methods):
                return True
            cls = next((facts.classes.get(b.rsplit(".", 1)[-1]) for b in cls.qualified_bases
                        if facts.classes.get(b.rsplit(".", 1)[-1]) not in (None, cls)), None)
        return False

    for call in facts.calls:
        value = call.keywords.get("optimizers", None)
        if "optimizers" in call.keywords and value not in (None, (None, None), [None, None]) and is_trainer(call.callee) \
                and not builds_its_own(call.callee):
            return call.evidence
    return None


@rule("DS322", "trainer-optimizer-ignored", severity="warning", target="deepspeed", consumers=HF_READERS)
def trainer_optimizer_ignored(use, context):
    """The optimizer the training arguments or the program choose is not the one DeepSpeed runs.

    ## What it checks
    - A DeepSpeed `optimizer` block with `--optim` (or `optim:` in YAML, `--adafactor`,
      `--optim_args`) chosen by the launch: the HF Trainer then hands accelerate a `DummyOptim`
      and DeepSpeed builds the config's optimizer (transformers integrations/deepspeed.py:576-577,
      `deepspeed_optim_sched`), so the trainer's optimizer is silently unused. Warning.
    - A program that passes its own optimizer to the Trainer (`Trainer(..., optimizers=(opt,
      sched))`, read from the entry program) with DeepSpeed: transformers up to 4.45 refuses it,
      `RuntimeError: Passing `optimizers` is not allowed if Deepspeed or PyTorch FSDP is enabled`
      (4.45.2 trainer.py:589-595); from 4.46.0 the check names only FSDP, and `deepspeed_init`
      sets `trainer.optimizer = None` (deepspeed.py:658) and builds the optimizer from the
      training arguments or the config, so the one passed is dropped silently. Judged against
      the transformers versions the repository allows: an error when every one of them raises,
      otherwise a warning that names the versions that raise.

    ## Why it matters
    The run trains with another optimizer than the one the launch or the code shows (its
    hyperparameters, its memory use), or stops at start-up on older transformers.

    ## Example
    `--optim adafactor --deepspeed ds.json` with `{"optimizer": {"type": "AdamW", ...}}`.
    Use instead: choose the optimizer in one place: drop `--optim`, or drop the config's
    `optimizer` block.
    """
    plan = use.launch
    if plan is None:
        return
    args = TrainingArgs(plan)
    optimizer = use.config.entry("optimizer")
    if optimizer is not None and isinstance(optimizer.value, Mapping) and optimizer.value.get("type") is not None:
        kind = ds.raw(optimizer.value.get("type"))
        for name in ("optim", "adafactor", "optim_args"):
            value, related = args.get(name)
            if value is None or value is False or (name == "adafactor" and str(value).lower() in ("false", "0", "no")):
                continue
            shown = f"--{name}" if name == "adafactor" else f"{name} {value}"
            yield Finding(
                optimizer.key_span,
                f"the HF Trainer silently ignores {shown}: the DeepSpeed optimizer {kind} wins",
                note="the Trainer passes a DummyOptim to DeepSpeed, which builds its own",
                related=[r for r in [related] if r is not None] + launch_related(use),
            )
            break
    passed = _optimizers_passed(plan)
    if passed is None or use.reference is None:
        return
    from dslint.evidence.versions import candidates, compare

    start = plan.origin.path if plan.origin is not None else None
    found = candidates("transformers", start, context.settings, plan.program)
    verdict = found.judge(lambda v: compare(v, TRANSFORMERS_DROPS_OPTIMIZERS) < 0)
    related = [Related(f"the program passes its own optimizer: {passed.describe()}")]
    if verdict.anywhere and verdict.everywhere:
        yield Finding(
            use.reference,
            f"{passed.path}:{passed.line} passes optimizers= to the Trainer under DeepSpeed",
            note=f"{verdict.where()} stops with 'RuntimeError: Passing `optimizers` is not allowed if Deepspeed or PyTorch FSDP is enabled'",
            related=related, severity=Severity.ERROR,
        )
        return
    older = f"; {verdict.where()} stops instead with 'Passing `optimizers` is not allowed if Deepspeed ...' ({found.why()})" \
        if verdict.anywhere else ""
    yield Finding(
        use.reference,
        f"{passed.path}:{passed.line} passes optimizers= to the Trainer, which drops it under DeepSpeed",
        note=f"deepspeed_init sets trainer.optimizer = None and builds {'the config' if optimizer is not None else 'its own'} optimizer{older}",
        related=related,
    )


# ---------------------------------------------------------------------------------------------
# accelerate's DeepSpeed settings vs the training arguments
# ---------------------------------------------------------------------------------------------


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


@rule("DS323", "accelerate-training-mismatch", severity="error", target="launch", fixable=True, consumers=("hf",))
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
    if plan.launcher != "accelerate" or plan.accelerate_config is None or plan.accelerate_config.config is None:
        return
    if plan.arg("deepspeed") is not None or plan.deepspeed is not None:
        return  # the Trainer builds its plugin from the DeepSpeed JSON; accelerate only fills "auto" there
    mapping = plan.accelerate_config.config
    distributed = ds.raw(mapping.get("distributed_type"))
    section = mapping.get("deepspeed_config")
    uses_deepspeed = (isinstance(distributed, str) and distributed.upper() == "DEEPSPEED") or "use_deepspeed" in plan.launcher_args
    if not uses_deepspeed or (isinstance(section, Mapping) and section.get("deepspeed_config_file") is not None):
        return
    section = section if isinstance(section, Mapping) else None
    args = TrainingArgs(plan)
    for key, flag, name, kind in (("gradient_accumulation_steps", "gradient_accumulation_steps", "gradient_accumulation_steps", int),
                                  ("gradient_clipping", "gradient_clipping", "max_grad_norm", float)):
        value, span, where = _accelerate_value(plan, section, key, flag)
        theirs = _number(value, kind) if value is not None else None
        mine, mine_rel = args.get(name)
        if theirs is None or mine is None or theirs == mine or (key == "gradient_clipping" and not theirs):
            continue
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
    precision, span, where = _accelerate_value(plan, None, "mixed_precision", "mixed_precision")
    if precision is None:
        precision, span, where = _accelerate_value(plan, mapping, "mixed_precision", "mixed_precision")
    if not isinstance(precision, str) or precision.lower() not in ("bf16", "fp16", "fp8"):
        return
    precision = precision.lower()
    flags = {}
    for name in ("fp16", "bf16"):
        value, related = args.get(name)
        eval_value, _ = args.get(f"{name}_full_eval")
        flags[name] = (value, eval_value, related)
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
