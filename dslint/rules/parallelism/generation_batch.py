"""DS416 generation-batch: the rule and the helpers only it uses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from dslint.diagnostics import Finding, Related
from dslint.rule import rule
from dslint.launch.args import complete, integer, written
from dslint.rules.parallelism._common import assumed_severity, known_world, world_related


def _on_policy(plan, trl_trainer):
    """(trainer, label, default num_generations, TRL Trainer or None) of a GRPO-style launch."""
    rlhf = plan.arg("rlhf_type")
    kind = rlhf.value.strip().lower() if rlhf is not None and isinstance(rlhf.value, str) else None
    if plan.consumer == "swift" and kind == "grpo":
        return "swift", "ms-swift GRPO", 8, None
    if plan.consumer == "megatron" and kind == "grpo":
        return "megatron", "Megatron-SWIFT GRPO", 8, None
    found = trl_trainer
    if found is None:
        return None
    return found.kind, found.label, found.default_generations, found


def _least(*severities):
    """The least severe of the given severities (None: the rule's own, an error)."""
    found = [s for s in severities if s is not None]
    return min(found) if found else None


@rule("DS416", "generation-batch", severity="error", target="launch", facts=("trl_trainer",))
def generation_batch(plan, context, *, trl_trainer):
    """GRPO-style trainers: the generation batch must hold whole groups of `num_generations`.

    ## What it checks
    On-policy trainers sample `num_generations` completions per prompt and compare them within
    the group, so the batch of one generation round must be a multiple of `num_generations`:
    - TRL `GRPOTrainer`/`RLOOTrainer`, by TRL release (dslint/frameworks/grpo.py): none in 0.14;
      processes × per-device batch in 0.15-0.16 (grpo_trainer.py:341-350, 0.15.0); times the
      gradient accumulation in 0.17 (grpo_trainer.py:592-608, 0.17.0); from 0.18 the generation
      batch = processes × per-device batch × `steps_per_generation` (default: the gradient
      accumulation), or `generation_batch_size` when given, which must itself be a multiple of
      processes × per-device batch (grpo_config.py:507-547, 0.18.0; 1.16: grpo_config.py:1096-1141).
      RLOO takes `num_generations` from 0.22.0. With evaluation on, the eval batch (processes ×
      `per_device_eval_batch_size`, default 8) must be a multiple too (from 0.15). TRL's
      defaults: batch 8, accumulation 1, `num_generations` 8 (RLOO 2). The TRL versions are the
      candidates `dslint.evidence.versions` allows: an error where every one fails, info naming the
      releases otherwise. A program dslint could not read is assumed to run TRL's trainer only
      when named after it and given TRL's on-policy arguments: a warning.
    - ms-swift GRPO (`swift rlhf --rlhf_type grpo`, swift/rlhf_trainers/args_mixin.py
      `_init_generation_batch_params`): generation batch = processes × per-device batch ×
      `steps_per_generation` (default: the gradient accumulation), or `generation_batch_size`;
      ms-swift's defaults: batch 1, accumulation 1, `num_generations` 8.
    - Megatron-SWIFT GRPO (`megatron rlhf --rlhf_type grpo`): generation batch =
      `global_batch_size` × `steps_per_generation` (default 1), or `generation_batch_size`
      (swift/megatron/arguments/megatron_args.py:261-295).
    - `num_generations` must be at least 2 (TRL: `GRPO requires at least 2 generations per
      prompt to calculate the advantages`; ms-swift: `num_generations must be greater than 1
      for GRPO` unless a teacher model is set, rlhf_args.py:408-409).

    ## Why it matters
    `ValueError: generation_batch_size (12) must be divisible by num_generations (8).` at
    start-up, once the model and the rollout engine are loaded.

    ## Example
    ```sh
    NPROC_PER_NODE=6 swift rlhf --rlhf_type grpo --model Qwen/Qwen2.5-7B-Instruct --per_device_train_batch_size 2 --num_generations 8
    ```
    Generation batch 6 × 2 × 1 = 12. Use instead: `--num_generations 4` (or 6, 12), or 8 processes.
    """
    found = _on_policy(plan, trl_trainer)
    if found is None:
        return
    trainer, label, default_n, trl = found
    if not complete(plan):
        return  # hidden arguments may set the batch, the accumulation or the group size
    if trl is not None:
        from dslint.frameworks.grpo import config_file_unread

        if config_file_unread(plan):
            return  # TrlParser's --config YAML may set them
    n = integer(plan, "num_generations", default=default_n, note=f"{label}'s default")
    if not isinstance(n.value, int):
        return
    if trl is not None:
        yield from _trl_generation_batch(plan, context, trl, n)
    elif n.value < 2:
        yield from _swift_too_few(plan, label, n)
    else:
        yield from _swift_generation_batch(plan, trainer, label, n)


def _swift_too_few(plan, label: str, n):
    teacher = plan.arg("teacher_model") is not None or plan.arg("teacher_model_server") is not None
    if n.value == 1 and not teacher:
        yield Finding(
            n.span or plan.span,
            f"num_generations {n.value}: a group of fewer than 2 completions has no advantage to compute",
            note=f"{label} stops with 'num_generations must be greater than 1 for GRPO'",
        )


def _swift_generation_batch(plan, trainer: str, label: str, n):
    """ms-swift's and Megatron-SWIFT's generation batch holds whole groups."""
    generation = integer(plan, "generation_batch_size")
    found = _swift_generation_size(plan, trainer, label, generation)
    if found is None:
        return
    size, how, related = found
    if size % n.value == 0:
        return
    valid = [d for d in range(2, size + 1) if size % d == 0][:8]
    yield Finding(
        n.span or plan.span,
        f"the generation batch {size} is not a multiple of num_generations {n.value}",
        note=f"{how} = {size}; {label} stops with 'generation_batch_size ({size}) must be "
        f"{'evenly ' if trainer == 'swift' else ''}divisible by num_generations ({n.value})'",
        help=f"num_generations could be {', '.join(map(str, valid))}" if valid else None,
        related=[n.related("num_generations"), *related],
        severity=assumed_severity(plan) if trainer != "megatron" and not isinstance(generation.value, int) else None,
    )


def _swift_generation_size(plan, trainer: str, label: str, generation) -> tuple[int, str, list[Related]] | None:
    """(the generation batch, how it is computed, where its factors come from), or None when unknown."""
    steps = integer(plan, "steps_per_generation")
    if isinstance(generation.value, int):
        return generation.value, f"generation_batch_size {generation.value}", [generation.related("generation_batch_size")]
    if trainer == "megatron":
        gbs = integer(plan, "global_batch_size", default=16, note="Megatron-SWIFT's default")
        spg = steps.value if isinstance(steps.value, int) else 1
        if not isinstance(gbs.value, int):
            return None
        return gbs.value * spg, f"global_batch_size {gbs.value} × steps_per_generation {spg}", [gbs.related("global_batch_size")]
    world = known_world(plan)
    if world is None:
        return None
    bs = integer(plan, "per_device_train_batch_size", default=1, note=f"{label}'s default")
    gas = integer(plan, "gradient_accumulation_steps", default=1, note=f"{label}'s default")
    spg = steps if isinstance(steps.value, int) else gas
    if not isinstance(bs.value, int) or not isinstance(spg.value, int):
        return None
    named = "steps_per_generation" if spg is steps else "gradient accumulation"
    how = f"{world} processes × per-device batch {bs.value} × {named} {spg.value}"
    related = [world_related(plan), bs.related("per_device_train_batch_size"),
               spg.related("steps_per_generation" if spg is steps else "gradient_accumulation_steps")]
    return world * bs.value * spg.value, how, related


@dataclass(frozen=True)
class _Trl:
    """What each TRL check of DS416 reads: the trainer, the releases judged, the batch factors."""

    plan: Any
    trainer: Any  # dslint.frameworks.grpo.Trainer
    versions: Any  # the TRL releases the launch may run with
    assumed: Any  # the severity cap when the trainer is assumed
    noted: Callable
    world: int
    bs: Any  # per_device_train_batch_size
    gas: Any  # gradient_accumulation_steps
    steps: Any  # steps_per_generation
    given: Any  # generation_batch_size
    n: Any  # num_generations

    def at(self, version: str):
        """The generation batch of TRL ``version`` for this launch (dslint.frameworks.grpo.generation)."""
        from dslint.frameworks.grpo import generation

        return generation(self.trainer.kind, version, self.world, self.bs.value, self.gas.value, self.steps.value, self.given.value,
                          self.n.value)

    def severity(self, verdict):
        return _least(self.assumed, assumed_severity(self.plan), verdict.severity())


def _trl_generation_batch(plan, context, trl, n):
    """DS416 for TRL's GRPOTrainer/RLOOTrainer, judged release by release (dslint.frameworks.grpo)."""
    from dslint.frameworks.grpo import judging

    versions, assumed, noted = judging(plan, context.settings, trl)
    if n.value < 2:
        yield from _trl_too_few(plan, trl, n, versions, assumed, noted)
        return
    world = known_world(plan)
    if world is None:
        return
    bs = integer(plan, "per_device_train_batch_size", default=8, note=f"{trl.label}'s default")
    gas = integer(plan, "gradient_accumulation_steps", default=1, note=f"{trl.label}'s default")
    steps = integer(plan, "steps_per_generation")
    given = integer(plan, "generation_batch_size")
    if not all(isinstance(v.value, int) and v.value >= 1 for v in (bs, gas)):
        return
    if steps.given and not isinstance(steps.value, int) or given.given and not isinstance(given.value, int):
        return
    launch = _Trl(plan, trl, versions, assumed, noted, world, bs, gas, steps, given, n)
    yield from _trl_groups(launch)
    if given.given and isinstance(given.value, int):
        yield from _trl_whole_global_batches(launch)
    yield from _trl_eval_batch(launch)


def _trl_too_few(plan, trl, n, versions, assumed, noted):
    from dslint.frameworks.grpo import generation as generation_of
    from dslint.evidence.versions import compare

    verdict = versions.judge(lambda v: generation_of(trl.kind, v, 1, 1, 1, None, None, n.value).applies)
    if verdict.anywhere:
        # 0.15-0.16 refuse it as no divisor of the batch (their candidates start at 2); 0.17 on say why.
        quoted = f"{'GRPO' if trl.kind == 'trl-grpo' else 'RLOO'} requires at least 2 generations per prompt to calculate the advantages" \
            if compare(verdict.failing[-1], "0.17.0") >= 0 else generation_of(trl.kind, verdict.failing[-1], 1, 1, 1, None, None, n.value).quoted
        yield Finding(
            n.span or plan.span,
            f"num_generations {n.value}: a group of fewer than 2 completions has no advantage to compute",
            note=noted(f"{trl.label} stops with '{quoted}'", verdict),
            related=[Related(versions.describe())],
            severity=_least(assumed, verdict.severity()),
        )


def _trl_groups(launch: _Trl):
    """The generation batch of each TRL release holds whole groups of num_generations."""
    plan, trl, n, bs = launch.plan, launch.trainer, launch.n, launch.bs
    gas, steps, given = launch.gas, launch.steps, launch.given

    def fails(version):
        found = launch.at(version)
        if not found.applies:
            return found.applies
        return found.size % n.value != 0

    verdict = launch.versions.judge(fails)
    if not verdict.anywhere:
        return
    related = [n.related("num_generations"), world_related(plan), bs.related("per_device_train_batch_size")]
    if given.given:
        related.append(given.related("generation_batch_size"))
    elif steps.given:
        related.append(steps.related("steps_per_generation"))
    else:
        related.append(gas.related("gradient_accumulation_steps"))
    related.append(Related(launch.versions.describe()))
    shown = launch.at(verdict.failing[-1])
    valid = [d for d in range(2, shown.size + 1) if shown.size % d == 0][:8]
    yield Finding(
        n.span or plan.span,
        f"the generation batch {shown.size} is not a multiple of num_generations {n.value}",
        note=launch.noted(f"{shown.how} = {shown.size}; {trl.label} stops with '{shown.quoted}'", verdict),
        help=f"num_generations could be {', '.join(map(str, valid))}" if valid else None,
        related=related,
        severity=launch.severity(verdict),
    )


def _trl_whole_global_batches(launch: _Trl):
    """A given generation_batch_size is a multiple of the global batch."""
    plan, trl, bs, world, given = launch.plan, launch.trainer, launch.bs, launch.world, launch.given
    step = world * bs.value
    whole = launch.versions.judge(lambda v: launch.at(v).applies and given.value % step != 0)
    if whole.anywhere:
        yield Finding(
            given.span or plan.span,
            f"generation_batch_size {given.value} is not a multiple of the global batch {step}",
            note=launch.noted(f"{world} processes × per-device batch {bs.value} = {step}; {trl.label} stops with 'generation_batch_size "
                              f"({given.value}) must be divisible by the global batch size ({step})'", whole),
            related=[given.related("generation_batch_size"), world_related(plan), bs.related("per_device_train_batch_size")],
            severity=launch.severity(whole),
        )


def _trl_eval_batch(launch: _Trl):
    """With evaluation on, the eval batch holds whole groups too (from TRL 0.15)."""
    from dslint.frameworks.grpo import eval_checked

    plan, trl, world = launch.plan, launch.trainer, launch.world
    strategy = plan.arg("eval_strategy", "evaluation_strategy")
    if strategy is None or not isinstance(strategy.value, str) or strategy.value.strip().lower() == "no":
        return
    eval_bs = integer(plan, "per_device_eval_batch_size", default=8, note=f"{trl.label}'s default")
    eval_n = integer(plan, "num_generations_eval")
    groups = eval_n if isinstance(eval_n.value, int) else launch.n
    if not isinstance(eval_bs.value, int):
        return
    size = world * eval_bs.value
    checked = launch.versions.judge(lambda v: eval_checked(trl.kind, v, eval_n.given) and size % groups.value != 0)
    if checked.anywhere:
        yield Finding(
            eval_bs.span or strategy.span or plan.span,
            f"the eval batch {size} is not a multiple of num_generations {groups.value}",
            note=launch.noted(f"{world} processes × per_device_eval_batch_size {eval_bs.value} = {size}; with {written(strategy)} {trl.label} "
                              "stops at start-up", checked),
            related=[groups.related("num_generations"), eval_bs.related("per_device_eval_batch_size"), world_related(plan)],
            severity=launch.severity(checked),
        )
