"""verl's PPO-family trainer: its Hydra config and the batch arithmetic it checks at start-up.

How it launches: ``python3 -m verl.trainer.main_ppo key=value ...`` (or a recipe module whose
trainer derives from ``RayPPOTrainer``), one driver process that starts Ray and places its
workers on ``trainer.nnodes × trainer.n_gpus_per_node`` GPUs. The config is Hydra's
(dslint.launch.hydra): ``@hydra.main(config_path="config", config_name="ppo_trainer")`` in
verl/trainer/main_ppo.py, overridden by the command line.

The defaults dslint uses are verl's ``ppo_trainer.yaml`` / ``ppo_megatron_trainer.yaml``
(``_generated_ppo_trainer.yaml`` from 0.5 on); the keys below have the same defaults in every
release from 0.4.0 to 0.7.0 and on main (checked release by release), so no pin changes them.

The arithmetic (verl 0.4.0-0.7.0; files as of 0.7.0):

- n_gpus = ``trainer.n_gpus_per_node × trainer.nnodes`` (verl/utils/config.py:87,
  ray_trainer.py ``_validate_config`` before 0.6).
- responses per step = ``data.train_batch_size × actor_rollout_ref.rollout.n``; it must be
  divisible by n_gpus (FSDP) or by Megatron's data-parallel size × micro batch (config.py:90-113).
- ``data.train_batch_size >= actor.ppo_mini_batch_size`` (workers/config/actor.py:200-207).
- each worker's mini batch = ``ppo_mini_batch_size × rollout.n // (n_gpus // ulysses_sequence_parallel_size)``
  (FSDP; ``// data parallel`` for Megatron), which must be positive and, under FSDP, divisible by
  ``ppo_micro_batch_size_per_gpu`` (workers/fsdp_workers.py:240-262; the critic at :1232-1252).
- the rollout's tensor × data × pipeline parallel size must divide n_gpus
  (fsdp_workers.py:618-628 "rollout world_size ... is not divisible by infer_world_size").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dslint.frameworks import Check, FrameworkBatch, Quantity, established_program, position, program_name
from dslint.launch.hydra import Base, Composition, Setting, Unknown, compose

_CITE = "verl/trainer/config/{}.yaml, the same in verl 0.4.0-0.7.0"
_SHARED = {
    "data.train_batch_size": 1024,
    "actor_rollout_ref.rollout.n": 1,
    "actor_rollout_ref.actor.ppo_mini_batch_size": 256,
    "actor_rollout_ref.actor.ppo_micro_batch_size": None,
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu": None,
    "actor_rollout_ref.actor.use_dynamic_bsz": False,
    "actor_rollout_ref.actor.ppo_epochs": 1,
    "actor_rollout_ref.rollout.tensor_model_parallel_size": 2,
    "actor_rollout_ref.rollout.data_parallel_size": 1,
    "actor_rollout_ref.rollout.pipeline_model_parallel_size": 1,
    "critic.ppo_mini_batch_size": "${actor_rollout_ref.actor.ppo_mini_batch_size}",
    "critic.ppo_micro_batch_size": None,
    "critic.ppo_micro_batch_size_per_gpu": None,
    "critic.use_dynamic_bsz": "${actor_rollout_ref.actor.use_dynamic_bsz}",
    "critic.ulysses_sequence_parallel_size": 1,
    "critic.enable": None,
    "algorithm.adv_estimator": "gae",
    "trainer.n_gpus_per_node": 8,
    "trainer.nnodes": 1,
}
BASES = {
    "ppo_trainer": Base("verl", {
        **_SHARED,
        "actor_rollout_ref.actor.strategy": "fsdp",
        "critic.strategy": "fsdp",
        "actor_rollout_ref.actor.ulysses_sequence_parallel_size": 1,
    }, _CITE.format("ppo_trainer")),
    "ppo_megatron_trainer": Base("verl", {
        **_SHARED,
        "actor_rollout_ref.actor.strategy": "megatron",
        "critic.strategy": "megatron",
        "actor_rollout_ref.actor.megatron.tensor_model_parallel_size": 1,
        "actor_rollout_ref.actor.megatron.pipeline_model_parallel_size": 1,
        "actor_rollout_ref.actor.megatron.context_parallel_size": 1,
    }, _CITE.format("ppo_megatron_trainer")),
}

BASES["sft_trainer"] = Base("verl", {
    "data.train_batch_size": 256,
    "data.micro_batch_size_per_gpu": 4,
    "ulysses_sequence_parallel_size": 1,
}, _CITE.format("sft_trainer"))

#: The verl releases dslint has read (git tags of volcengine/verl) for the checks that differ between them.
KNOWN = ("0.4.0", "0.4.1", "0.5.0", "0.6.0", "0.6.1", "0.7.0")

ACTOR = "actor_rollout_ref.actor"
ROLLOUT = "actor_rollout_ref.rollout"


MAIN_PPO = "verl.trainer.main_ppo"
#: What a program must use for each part of verl's start-up checks to run in it (recipes pick and choose):
#: the driver's ``validate_config`` (verl/utils/config.py), the FSDP workers' normalisation
#: (verl/workers/fsdp_workers.py) and the Ray resource pool's GPU count (ResourcePoolManager).
PARTS = {
    "driver": ("verl.utils.config.validate_config",),
    "workers": ("verl.workers.fsdp_workers",),
    "resources": ("verl.trainer.ppo.ray_trainer.ResourcePoolManager", "verl.single_controller.ray.base.ResourcePoolManager"),
}


def _is_main_ppo(consumer) -> bool:
    name = (consumer.program or "").replace("\\", "/")
    return name == MAIN_PPO or name.endswith("verl/trainer/main_ppo.py")


def ppo_program(plan) -> str | None:
    """The verl PPO-family program a launch runs (``verl.trainer.main_ppo``, a recipe's file), or None."""
    consumer = established_program(plan, "verl")
    if consumer is None:
        return None
    if _is_main_ppo(consumer):
        return consumer.program
    facts = consumer.facts
    if facts is not None and any(facts.first_use(*names) is not None for names in PARTS.values()):
        return consumer.program
    return None


def judged(plan, settings=None) -> bool:
    """Whether the verl this launch runs is one whose checks dslint knows (0.4.0-0.7.0, where they agree).

    A copy of verl in the repository (a fork, a vendored tree) says its version in
    ``verl/version/version``; otherwise the pins do (dslint.frameworks.releases: an exact pin outside
    the known releases, such as 0.3.0, is not judged; a range is judged by the known releases it allows).
    """
    from dslint.frameworks import releases
    from dslint.evidence.versions import compare, parse_version

    local = _local_version(plan)
    if local is not None:
        return bool(parse_version(local)) and compare(local, "0.4.0") >= 0
    start = plan.origin.path if plan.origin is not None else None
    found = releases("verl", "verl", KNOWN, start, settings)
    return any(compare(v, "0.4.0") >= 0 for v in found.versions)


def _local_version(plan) -> str | None:
    """The version a copy of verl in the repository declares (verl/version/version), if the program is in one."""
    import os

    consumer = getattr(plan, "program", None)
    if consumer is None or consumer.facts is None or not consumer.program:
        return None
    here = os.path.dirname(os.path.abspath(consumer.program))
    for _ in range(6):
        candidate = os.path.join(here, "verl", "version", "version")
        if os.path.isfile(candidate):
            try:
                with open(candidate, encoding="utf-8") as handle:
                    return handle.read().strip().split()[0] if handle else None
            except (OSError, IndexError):
                return None
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    return None


def runs(plan, part: str) -> bool:
    """Whether the launch's program runs ``part`` of verl's checks: main_ppo runs them all; another
    program (a recipe) only what its own code (the files in its folder) is seen to use. What the
    project modules it imports use elsewhere does not count: importing a helper from main_ppo
    does not run main_ppo's validation."""
    import os

    consumer = getattr(plan, "program", None)
    if ppo_program(plan) is None:
        return False
    if _is_main_ppo(consumer):
        return True
    facts = consumer.facts
    if facts is None:
        return False
    home = os.path.dirname(facts.entry)
    return any(name == prefix or name.startswith(prefix + ".")
               for name, evidence in facts.uses.items() for prefix in PARTS[part]
               if os.path.dirname(evidence.path) == home)


SFT_MODULE = "verl.trainer.fsdp_sft_trainer"


def sft_program(plan) -> str | None:
    """verl's FSDP SFT trainer (``torchrun -m verl.trainer.fsdp_sft_trainer``), or None."""
    name = program_name(plan, "verl")
    return name if name is not None and (name == SFT_MODULE or name.endswith("verl/trainer/fsdp_sft_trainer.py")) else None


def _default_config(plan) -> str | None:
    name = (plan.program.program or "").replace("\\", "/")
    if name == MAIN_PPO or name.endswith("verl/trainer/main_ppo.py"):
        return "ppo_trainer"  # @hydra.main(config_path="config", config_name="ppo_trainer")
    if sft_program(plan):
        return "sft_trainer"  # @hydra.main(config_path="config", config_name="sft_trainer")
    return None


def config(plan) -> Composition | None:
    """The composed config of a verl PPO or SFT launch, composed on each call (the rules get it once
    per run, as the ``verl_config`` fact of dslint.facts)."""
    if (ppo_program(plan) is None and sft_program(plan) is None) or plan.command is None:
        return None
    return compose(plan, BASES.get, _default_config(plan), "config")


@dataclass
class SFT:
    """The settings verl's FSDP SFT trainer normalises (fsdp_sft_trainer.py ``_normalize_config_bsz``)."""

    cfg: Composition
    train: Setting
    micro: Setting
    sp: Setting
    world: Any  # the launcher's Sourced world size

    @property
    def dp(self) -> int | None:
        sp, world = number(self.sp), getattr(self.world, "value", None)
        if not isinstance(world, int) or not sp or world % sp:
            return None
        return world // sp


def sft(plan, cfg: Composition | None = None) -> SFT | None:
    """``cfg``: the launch's ``config(plan)`` when the caller has it."""
    if sft_program(plan) is None:
        return None
    cfg = cfg if cfg is not None else config(plan)
    if cfg is None:
        return None
    return SFT(cfg, cfg.get("data.train_batch_size"), cfg.get("data.micro_batch_size_per_gpu"),
               cfg.get("ulysses_sequence_parallel_size"), plan.world_size)


@dataclass
class PPO:
    """The settings verl's PPO trainer checks, as the launch sets them."""

    cfg: Composition
    train: Setting
    n: Setting
    mini: Setting
    micro: Setting
    micro_old: Setting
    dynamic: Setting
    sp: Setting
    strategy: Setting
    gpus_per_node: Setting
    nnodes: Setting

    @property
    def n_gpus(self) -> int | None:
        per, nodes = number(self.gpus_per_node), number(self.nnodes)
        return per * nodes if per is not None and nodes is not None else None

    @property
    def megatron(self) -> bool | None:
        if not self.strategy.known:
            return None
        return self.strategy.value == "megatron"

    def get(self, key: str) -> Setting:
        return self.cfg.get(key)

    def megatron_dp(self) -> tuple[int | None, list[Setting]]:
        """Megatron's data-parallel size n_gpus / (tp × pp × cp) and the settings it came from."""
        parts = [self.get(f"{ACTOR}.megatron.{name}_parallel_size") for name in ("tensor_model", "pipeline_model", "context")]
        sizes = [number(s) for s in parts]
        if self.n_gpus is None or any(s is None or s < 1 for s in sizes):
            return None, parts
        product = sizes[0] * sizes[1] * sizes[2]
        return (self.n_gpus // product if self.n_gpus % product == 0 else None), parts


def ppo(plan, cfg: Composition | None = None) -> PPO | None:
    """``cfg``: the launch's ``config(plan)`` when the caller has it."""
    cfg = cfg if cfg is not None else config(plan)
    if cfg is None:
        return None
    return PPO(cfg, cfg.get("data.train_batch_size"), cfg.get(f"{ROLLOUT}.n"), cfg.get(f"{ACTOR}.ppo_mini_batch_size"),
               cfg.get(f"{ACTOR}.ppo_micro_batch_size_per_gpu"), cfg.get(f"{ACTOR}.ppo_micro_batch_size"),
               cfg.get(f"{ACTOR}.use_dynamic_bsz"), cfg.get(f"{ACTOR}.ulysses_sequence_parallel_size"),
               cfg.get(f"{ACTOR}.strategy"), cfg.get("trainer.n_gpus_per_node"), cfg.get("trainer.nnodes"))


def number(setting: Setting) -> int | None:
    """An integer setting's value; None when unknown, null, or not an integer verl could use."""
    value = setting.value
    if isinstance(value, bool) or isinstance(value, Unknown):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def flag(setting: Setting) -> bool | None:
    value = setting.value
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return None


def uses_critic(model: PPO) -> bool | None:
    """verl's need_critic: ``critic.enable`` when set, else the GAE estimator (trainer/ppo/utils.py)."""
    enable = model.get("critic.enable")
    if enable.known and isinstance(enable.value, bool):
        return enable.value
    if enable.known and enable.value is None:
        estimator = model.get("algorithm.adv_estimator")
        return estimator.value == "gae" if estimator.known and isinstance(estimator.value, str) else None
    return None


def shown(setting: Setting, name: str | None = None) -> str:
    """``data.train_batch_size 1024`` for messages."""
    return f"{name or setting.key.rsplit('.', 1)[-1]} {_text(setting.value)}"


def _text(value: Any) -> str:
    if isinstance(value, Unknown):
        return "?"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "null" if value is None else str(value)


@dataclass(frozen=True)
class MiniBatch:
    """One worker's share of a PPO mini batch, as verl's workers normalise it."""

    role: str  # "actor" | "critic"
    mini: Setting
    micro: Setting  # ppo_micro_batch_size_per_gpu (or the deprecated ppo_micro_batch_size, already divided)
    sp: Setting
    per_worker: int | None  # mini × n // (n_gpus // sp)
    micro_value: int | None
    divisor: int | None  # n_gpus // sp


def mini_batches(model: PPO) -> list[MiniBatch]:
    """The actor's (and the critic's, when it runs) mini batch per FSDP worker."""
    out = []
    roles = [("actor", ACTOR)]
    if uses_critic(model):
        roles.append(("critic", "critic"))
    n, gpus = number(model.n), model.n_gpus
    for role, section in roles:
        strategy = model.get(f"{section}.strategy")
        if not strategy.known or strategy.value not in ("fsdp", "fsdp2"):
            continue
        mini = model.get(f"{section}.ppo_mini_batch_size")
        micro = model.get(f"{section}.ppo_micro_batch_size_per_gpu")
        old = model.get(f"{section}.ppo_micro_batch_size")
        sp = model.get(f"{section}.ulysses_sequence_parallel_size")
        mini_value, sp_value = number(mini), number(sp)
        divisor = gpus // sp_value if gpus is not None and sp_value and gpus % sp_value == 0 else None
        per_worker = mini_value * n // divisor if mini_value is not None and n is not None and divisor else None
        micro_value = number(micro)
        if number(old) is not None and divisor:  # the deprecated global micro batch, divided the same way
            micro, micro_value = old, number(old) // divisor
        out.append(MiniBatch(role, mini, micro, sp, per_worker, micro_value, divisor))
    return out


def _factor(setting: Setting, meaning: str) -> Quantity:
    path, line = position(setting.span)
    if setting.known:
        return Quantity(setting.key, meaning, setting.value, setting.origin, path, line, not setting.written)
    return Quantity(setting.key, meaning, None, f"unknown: {setting.value.why}", path, line, False)


def _explain_sft(plan, trainer: SFT) -> FrameworkBatch:
    out = FrameworkBatch("verl", f"verl SFT ({sft_program(plan)})", "")
    out.factors = [_factor(trainer.train, "samples per optimizer step"),
                   _factor(trainer.micro, "samples per GPU per forward/backward pass"),
                   _factor(trainer.sp, "GPUs that share one sequence (Ulysses)")]
    world = trainer.world
    if world is not None and isinstance(world.value, int):
        path, line = position(world.span)
        out.factors.append(Quantity("world size", "processes", world.value, world.origin, path, line, world.default))
    train, micro, dp = number(trainer.train), number(trainer.micro), trainer.dp
    if dp is None or train is None:
        out.summary = "the data-parallel size or the batch is unknown"
        return out
    out.derived.append(Quantity("data parallel", "ranks the batch is split over", dp, f"world {world.value} // ulysses_sequence_parallel_size {_text(trainer.sp.value)}"))
    per = train // dp
    out.derived.append(Quantity("batch per rank", "samples per rank per step", per, f"data.train_batch_size {train} // data parallel {dp}"))
    if micro:
        out.derived.append(Quantity("accumulation", "micro batches per rank per step", per // micro, f"{per} // micro_batch_size_per_gpu {micro}"))
    out.checks.append(Check(train % dp == 0, f"data.train_batch_size {train} divisible by data parallel {dp}"))
    if micro:
        out.checks.append(Check(per % micro == 0, f"batch per rank {per} divisible by micro batch {micro}"))
    out.summary = f"{train} samples per step = {dp} ranks × {per}" + (f" = {dp} × micro {micro} × accumulation {per // micro}" if micro and per % micro == 0 else "")
    return out


def explain(plan, settings=None) -> FrameworkBatch | None:
    trainer = sft(plan)
    out = _explain_sft(plan, trainer) if trainer is not None else _explain_ppo(plan)
    if out is not None and not judged(plan, settings):
        out.notes.append("this verl is older than 0.4.0 (its pin or its verl/version/version): its checks may differ from those shown")
    return out


def _explain_ppo(plan) -> FrameworkBatch | None:
    model = ppo(plan)
    if model is None:
        return None
    program = ppo_program(plan)
    factor = _factor

    out = FrameworkBatch("verl", f"verl PPO ({program})", "")
    out.factors = [factor(model.train, "prompts per training step"), factor(model.n, "responses sampled per prompt"),
                   factor(model.mini, "prompts per PPO mini batch"),
                   factor(model.micro, "samples per GPU per forward/backward pass"),
                   factor(model.get(f"{ACTOR}.ppo_epochs"), "passes over each step's batch"),
                   factor(model.gpus_per_node, "GPUs per node"), factor(model.nnodes, "nodes"),
                   factor(model.strategy, "actor training backend")]
    train, n, mini, gpus = number(model.train), number(model.n), number(model.mini), model.n_gpus
    if train is not None and n is not None:
        out.derived.append(Quantity("responses per step", "samples generated and trained on per step", train * n,
                                    f"data.train_batch_size {train} × rollout.n {n}"))
    if gpus is not None:
        out.world = Quantity("n_gpus", "GPUs Ray places the workers on", gpus,
                             f"trainer.n_gpus_per_node {_text(model.gpus_per_node.value)} × trainer.nnodes {_text(model.nnodes.value)}")
        out.derived.append(out.world)
    if mini is not None and n is not None:
        # each mini batch is one optimizer step of the actor (verl/workers/actor/dp_actor.py update_policy)
        out.global_batch = Quantity("actor samples per optimizer step", "ppo_mini_batch_size prompts × their responses",
                                    mini * n, f"ppo_mini_batch_size {mini} × rollout.n {n}")
    if train is not None and mini:
        out.derived.append(Quantity("mini batches per step", "optimizer steps per training step and epoch",
                                    train // mini, f"data.train_batch_size {train} // ppo_mini_batch_size {mini}"))
    for batch in mini_batches(model):
        if batch.per_worker is not None:
            out.derived.append(Quantity(f"{batch.role} mini batch per GPU", "samples each worker trains on per mini batch",
                                        batch.per_worker, f"ppo_mini_batch_size {_text(batch.mini.value)} × rollout.n {n} // "
                                        f"(n_gpus {gpus} // ulysses_sequence_parallel_size {_text(batch.sp.value)})"))
            if batch.micro_value:
                out.derived.append(Quantity(f"{batch.role} accumulation", "micro batches per mini batch on each GPU",
                                            batch.per_worker // batch.micro_value,
                                            f"{batch.per_worker} // ppo_micro_batch_size_per_gpu {batch.micro_value}"))
    for check in checks(model):
        out.checks.append(check)
    parts = []
    if train is not None and n is not None:
        parts.append(f"{train} prompts × {n} responses = {train * n} samples per step")
    if gpus is not None:
        parts.append(f"on {gpus} GPUs")
    out.summary = " ".join(parts) or "the batch settings are unknown"
    if not model.cfg.complete:
        why = [f"{w.raw} may add overrides" for w in model.cfg.command.opaque[:2]] + model.cfg.unread[:2]
        out.notes.append("values may differ: " + "; ".join(why))
    return out


def checks(model: PPO) -> list[Check]:
    """verl's start-up checks on the batch, as statements about this launch."""
    out = []
    train, n, gpus = number(model.train), number(model.n), model.n_gpus
    dynamic = flag(model.dynamic)
    if train is not None and n is not None and gpus:
        if model.megatron is False:
            out.append(Check((train * n) % gpus == 0, f"responses per step {train * n} divisible by n_gpus {gpus}"))
    mini = number(model.mini)
    if train is not None and mini is not None and dynamic is False:
        out.append(Check(train >= mini, f"data.train_batch_size {train} >= ppo_mini_batch_size {mini}"))
    for batch in mini_batches(model):
        if batch.per_worker is not None and batch.micro_value:
            out.append(Check(batch.per_worker % batch.micro_value == 0 and batch.per_worker > 0,
                             f"{batch.role} mini batch per GPU {batch.per_worker} divisible by micro batch {batch.micro_value}"))
    return out


__all__ = ["BASES", "KNOWN", "PARTS", "PPO", "judged", "runs", "SFT", "MiniBatch", "checks", "config", "explain", "flag", "mini_batches", "number", "ppo", "ppo_program",
           "sft", "sft_program", "shown", "uses_critic"]
