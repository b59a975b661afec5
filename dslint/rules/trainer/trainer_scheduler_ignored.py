"""DS321 trainer-scheduler-ignored: a DeepSpeed scheduler block and a trainer scheduler in one launch."""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix
from dslint.documents.edits import remove_json_entry
from dslint.documents.model import Mapping
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules._trainer_args import TrainingArgs
from dslint.rules._using_launch import launch_related
from dslint.rules.trainer._common import HF_READERS


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


@rule("DS321", "trainer-scheduler-ignored", severity="warning", target="deepspeed", fix="unsafe", consumers=HF_READERS)
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
    if not ds.trains(use) or plan is None or scheduler is None or not isinstance(scheduler.value, Mapping) or scheduler.value.get("type") is None:
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
