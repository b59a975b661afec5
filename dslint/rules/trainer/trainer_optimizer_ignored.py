"""DS322 trainer-optimizer-ignored: the optimizer the launch chooses is not the one DeepSpeed runs."""

from __future__ import annotations

from dslint.diagnostics import Finding, Related, Severity
from dslint.documents.model import Mapping
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules._trainer_args import TrainingArgs
from dslint.rules._using_launch import launch_related
from dslint.rules.trainer._common import HF_READERS

TRANSFORMERS_DROPS_OPTIMIZERS = "4.46.0"  # 4.45.2 trainer.py:589-595 raised; 4.46.0 only refuses it with FSDP


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
    if plan is None or not ds.trains(use):
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
