"""TRL's on-policy trainers (GRPOTrainer, RLOOTrainer): who runs them, and their generation batch per TRL release.

A launch runs TRL GRPO when its program is established as using ``trl.GRPOTrainer`` /
``GRPOConfig`` (dslint.launch.consumer), or is TRL's own ``trl.scripts.grpo``; RLOO likewise.
Where the program could not be read, a program named after the trainer and given TRL's
on-policy arguments is *assumed* to run it, and the rules say so.

The generation batch, release by release (TRL's own checks, read in each release's source):

- 0.14.x: GRPOTrainer has no such check.
- 0.15.0-0.16.1: ``num_processes × per_device_train_batch_size`` must be a multiple of
  ``num_generations`` (at least 2), grpo_trainer.py:341-350 (0.15.0): "The global train batch
  size (3 x 2) must be evenly divisible by the number of generations per prompt (8)".
- 0.17.x: times ``gradient_accumulation_steps`` (grpo_trainer.py:592-608): "The effective train
  batch size (3 x 2 x 1) must be evenly divisible ...".
- 0.18.0 and later, in GRPOConfig.__post_init__: ``generation_batch_size`` when given, else
  ``per_device_train_batch_size × num_processes × steps_per_generation`` (default: the gradient
  accumulation), grpo_config.py:507-547 (0.18.0); from 0.20.0 the message is
  "generation_batch_size (6) must be divisible by num_generations (8)" (1.16: grpo_config.py:1096-1141).
  A given ``generation_batch_size`` must itself be a multiple of the global batch.
- RLOOTrainer takes ``num_generations`` from 0.22.0 (rloo_config.py, same arithmetic as GRPO's);
  before, it took ``rloo_k`` and had no such check.
- with evaluation on (``eval_strategy`` other than ``no``), ``per_device_eval_batch_size ×
  num_processes`` must be a multiple of ``num_generations`` (``num_generations_eval`` when given)
  from 0.15.0 on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dslint.evidence.versions import compare

# Arguments only TRL's on-policy configs take: evidence that a `grpo.py` really runs GRPOTrainer.
TRL_ON_POLICY_ARGS = ("num_generations", "max_completion_length", "reward_funcs", "reward_model_name_or_path", "use_vllm",
                      "vllm_mode", "steps_per_generation")
_NAMES = {
    "trl-grpo": ("trl.GRPOTrainer", "trl.GRPOConfig", "trl.trainer.grpo_trainer", "trl.trainer.grpo_config",
                 "trl.trainer.GRPOTrainer", "trl.trainer.GRPOConfig"),
    "trl-rloo": ("trl.RLOOTrainer", "trl.RLOOConfig", "trl.trainer.rloo_trainer", "trl.trainer.rloo_config",
                 "trl.trainer.RLOOTrainer", "trl.trainer.RLOOConfig"),
}
LABEL = {"trl-grpo": "TRL GRPOTrainer", "trl-rloo": "TRL RLOOTrainer"}
DEFAULT_GENERATIONS = {"trl-grpo": 8, "trl-rloo": 2}


@dataclass(frozen=True)
class Trainer:
    """A TRL on-policy trainer a launch runs, and how sure dslint is of it."""

    kind: str  # trl-grpo | trl-rloo
    established: bool
    evidence: str  # "grpo.py:3 imports trl.GRPOTrainer" or the assumption

    @property
    def label(self) -> str:
        return LABEL[self.kind]

    @property
    def default_generations(self) -> int:
        return DEFAULT_GENERATIONS[self.kind]


def trainer(plan) -> Trainer | None:
    """The TRL on-policy trainer a launch runs, or None."""
    consumer = getattr(plan, "program", None)
    if consumer is not None and consumer.established:
        if consumer.kind != "trl":
            return None
        if consumer.facts is None:  # a module of the installed TRL: `-m trl.scripts.grpo`
            name = (consumer.program or "").rsplit(".", 1)[-1]
            kind = {"grpo": "trl-grpo", "rloo": "trl-rloo"}.get(name)
            return Trainer(kind, True, f"runs the module {consumer.program}") if kind else None
        for kind, names in _NAMES.items():
            evidence = consumer.facts.first_use(*names)
            if evidence is not None:
                return Trainer(kind, True, evidence.describe())
        return None
    program = getattr(getattr(plan.command, "program", None), "value", None) or ""
    name = program.rsplit("/", 1)[-1].lower()
    trl = "trl" in program.lower().split("/")[:-1] or any(a in plan.args for a in TRL_ON_POLICY_ARGS)
    if not trl or plan.consumer in ("swift", "megatron", "llamafactory"):
        return None  # a script named after GRPO is not necessarily TRL's trainer
    why = consumer.assumption if consumer is not None and consumer.assumption else f"{program} could not be read"
    for kind, word in (("trl-grpo", "grpo"), ("trl-rloo", "rloo")):
        if re.search(word, name):
            return Trainer(kind, False, f"assuming {program} runs {LABEL[kind]} (its name and TRL's on-policy arguments): {why}")
    return None


def judging(plan, settings, found: Trainer):
    """What the TRL rules judge a launch of ``found`` with: the TRL releases it may run, the
    severity cap when the trainer is assumed (a warning), and ``noted(note, verdict)``, the note
    with the releases it fails in and the assumption about the program."""
    from dslint.diagnostics import Severity
    from dslint.evidence.versions import candidates

    start = plan.origin.path if plan.origin is not None else None
    versions = candidates("trl", start, settings, plan.program)
    assumed = None if found.established else Severity.WARNING

    def noted(note: str, verdict) -> str:
        note = verdict.qualify(note)
        return note if found.established else f"{note}; {found.evidence}"

    return versions, assumed, noted


def config_file_unread(plan) -> bool:
    """TrlParser's ``--config recipe.yaml`` sets the arguments the command line does not: when the
    launch passes one that dslint did not read, the batch settings it may hold are unknown."""
    arg = plan.arg("config")
    if arg is None or arg.value is True:
        return False
    reference = plan.training_config
    return reference is None or reference.document is None or reference.span is not arg.span


@dataclass(frozen=True)
class Generation:
    """One TRL release's generation batch for a launch."""

    size: int | None
    how: str  # "3 processes × per-device batch 2 × gradient accumulation 1"
    quoted: str  # TRL's error message for it
    applies: bool  # the release checks it (False: no such check, or no such trainer or argument: the launch fails otherwise)


def generation(kind: str, version: str, world: int, batch: int, accumulation: int, steps: int | None,
               given: int | None, n: int) -> Generation:
    """The generation batch ``version`` of TRL computes, and its error message."""
    if kind == "trl-rloo" and compare(version, "0.22.0") < 0:
        return Generation(None, "", "", False)  # RLOO took rloo_k: num_generations is not one of its arguments
    if compare(version, "0.15.0") < 0:
        return Generation(None, "", "", False)  # no GRPOTrainer before 0.14, no check in 0.14
    if (steps is not None or given is not None) and compare(version, "0.18.0") < 0:
        return Generation(None, "", "", False)  # the flag is not an argument there: the launch fails otherwise
    if compare(version, "0.17.0") < 0:
        size = world * batch
        return Generation(size, f"{world} processes × per-device batch {batch}",
                          f"The global train batch size ({world} x {batch}) must be evenly divisible by the number of "
                          f"generations per prompt ({n})", True)
    if compare(version, "0.18.0") < 0:
        size = world * batch * accumulation
        return Generation(size, f"{world} processes × per-device batch {batch} × gradient accumulation {accumulation}",
                          f"The effective train batch size ({world} x {batch} x {accumulation}) must be evenly divisible by "
                          f"the number of generations per prompt ({n})", True)
    if given is not None:
        size, how = given, f"generation_batch_size {given}"
    else:
        per = steps if steps is not None else accumulation
        size = world * batch * per
        how = f"{world} processes × per-device batch {batch} × {'steps_per_generation' if steps is not None else 'gradient accumulation'} {per}"
    if compare(version, "0.20.0") < 0 and kind == "trl-grpo":
        per = size // (world * batch) if world * batch else 0
        quoted = (f"The effective train batch size ({world} x {batch} x {per}) must be evenly divisible by the number of "
                  f"generations per prompt ({n})")
    else:
        quoted = f"generation_batch_size ({size}) must be divisible by num_generations ({n})"
    return Generation(size, how, quoted, True)


def eval_checked(kind: str, version: str, separate_groups: bool) -> bool:
    """Whether ``version`` checks the eval batch against the group size (``separate_groups``:
    ``num_generations_eval`` is given, an argument from 0.26.0)."""
    if kind == "trl-rloo" and compare(version, "0.22.0") < 0:
        return False
    if separate_groups and compare(version, "0.26.0") < 0:
        return False
    return compare(version, "0.15.0") >= 0


__all__ = ["DEFAULT_GENERATIONS", "Generation", "LABEL", "TRL_ON_POLICY_ARGS", "Trainer", "config_file_unread", "eval_checked", "explain",
           "generation", "trainer"]


def explain(plan, settings=None):
    """The generation batch of a TRL GRPO/RLOO launch, by the newest TRL release the evidence allows."""
    from dslint.frameworks import Check, FrameworkBatch, Quantity, position
    from dslint.launch.args import integer
    from dslint.evidence.versions import candidates

    found = trainer(plan)
    if found is None:
        return None
    if config_file_unread(plan):
        out = FrameworkBatch("trl-grpo" if found.kind == "trl-grpo" else "trl-rloo", found.label,
                             "the batch settings are in the --config file, which dslint does not read")
        return out
    out = FrameworkBatch("trl-grpo" if found.kind == "trl-grpo" else "trl-rloo", found.label, "")
    if not found.established:
        out.notes.append(found.evidence)
    label = found.label

    def factor(name: str, meaning: str, default: int | None = None):
        value = integer(plan, name, default=default, note=f"{label}'s default")
        arg = value.arg
        if arg is not None:
            path, line = position(arg.span)
            return value, Quantity(f"--{name}", meaning, value.value, arg.origin, path, line)
        return value, Quantity(f"--{name}", meaning, value.value, f"{name} = {value.value} ({label}'s default)" if default is not None else "not set",
                               None, None, True)

    n, n_q = factor("num_generations", "completions sampled per prompt", DEFAULT_GENERATIONS[found.kind])
    bs, bs_q = factor("per_device_train_batch_size", "completions per process per optimizer micro step", 8)
    gas, gas_q = factor("gradient_accumulation_steps", "micro steps per optimizer step", 1)
    steps, steps_q = factor("steps_per_generation", "optimizer micro steps per generation round")
    given, given_q = factor("generation_batch_size", "completions per generation round")
    world = plan.world_size
    out.factors = [n_q, bs_q, gas_q]
    if steps.given:
        out.factors.append(steps_q)
    if given.given:
        out.factors.append(given_q)
    if world is not None and isinstance(world.value, int):
        path, line = position(world.span)
        out.factors.append(Quantity("world size", "training processes", world.value, world.origin, path, line, world.default))
    else:
        out.summary = "the number of training processes is unknown"
        return out
    start = plan.origin.path if plan.origin is not None else None
    versions = candidates("trl", start, settings, plan.program)
    newest = versions.newest
    if not all(isinstance(v.value, int) for v in (n, bs, gas)):
        out.summary = "a batch setting is not a number"
        return out
    now = generation(found.kind, newest, world.value, bs.value, gas.value, steps.value if steps.given else None,
                     given.value if given.given else None, n.value)
    if now.size is None:
        out.summary = f"TRL {newest} has no generation-batch check for {label}"
        return out
    out.derived.append(Quantity("generation batch", f"completions per generation round (TRL {newest})", now.size, now.how))
    if n.value:
        out.derived.append(Quantity("prompts per generation", "groups of num_generations", now.size / n.value if now.size % n.value else now.size // n.value,
                                    f"{now.size} / num_generations {n.value}"))
    out.checks.append(Check(now.size % n.value == 0 and n.value >= 2,
                            f"generation batch {now.size} is a multiple of num_generations {n.value} (TRL {newest})"))
    out.summary = f"{now.how} = {now.size} completions per generation round, {now.size // n.value if n.value and now.size % n.value == 0 else '?'} prompts of {n.value}"
    out.notes.append(f"versions: {versions.describe()}")
    return out
