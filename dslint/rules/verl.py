"""verl rules (DS901-DS904): the batch and GPU arithmetic verl's PPO trainer checks at start-up.

They run only on launches whose program is established as verl's PPO trainer
(``python3 -m verl.trainer.main_ppo``; a recipe's own program only for the checks it is seen to
run: it calls ``validate_config``, uses the FSDP workers, builds a ``ResourcePoolManager``), on the config
as Hydra composes it (dslint.frameworks.verl): the command line's overrides, the primary config
the command names, and verl's shipped defaults. An override list that ends in ``$@`` (or another
expansion dslint cannot read) may still change any of them: the findings are warnings there.
"""

from __future__ import annotations

from dslint.diagnostics import Edit, Finding, Fix, Related, Severity
from dslint.frameworks import verl
from dslint.launch.hydra import Setting
from dslint.rule import rule


def _related(*settings: Setting) -> list[Related]:
    out = []
    for setting in settings:
        if setting.known and setting.origin:
            out.append(Related(setting.origin, setting.span))
    return out


def _at(plan, *settings: Setting):
    """Where to report: the first of ``settings`` written in the launch, else the launch."""
    for setting in settings:
        if setting.written and setting.span is not None:
            return setting.span
    return plan.span


def _severity(model: verl.PPO) -> Severity | None:
    """A warning where words dslint cannot read (``$@``) may still override the settings."""
    return Severity.WARNING if not model.cfg.command.complete else None


def _within_versions(plan, context, findings):
    """The findings, where the verl the launch runs is one whose checks dslint knows (0.4.0-0.7.0)."""
    if verl.judged(plan, context.settings):
        yield from findings


def _hedge(model: verl.PPO) -> str:
    opaque = model.cfg.command.opaque
    if not opaque:
        return ""
    return f" (unless {opaque[0].raw} overrides them)"


@rule("DS901", "verl-train-batch", severity="error", target="launch", facts=("verl_sft", "verl_ppo"))
def verl_train_batch(plan, context, *, verl_sft, verl_ppo):
    """verl's train batch: the responses of a step must split evenly over the GPUs, and hold a mini batch.

    ## What it checks
    For `python3 -m verl.trainer.main_ppo` (and recipes that call verl's `validate_config`), with the
    config as Hydra composes it (overrides, `--config-name`, verl's `ppo_trainer.yaml` defaults):
    - `data.train_batch_size × actor_rollout_ref.rollout.n` (the responses of one step) must be
      divisible by `trainer.n_gpus_per_node × trainer.nnodes`; with the Megatron backend, by
      Megatron's data-parallel size × `ppo_micro_batch_size_per_gpu` (verl 0.7.0
      verl/utils/config.py:87-113 `validate_config`; ray_trainer.py `_validate_config` in 0.4-0.5).
    - `data.train_batch_size` must be at least `actor_rollout_ref.actor.ppo_mini_batch_size`
      (verl/workers/config/actor.py:198-206 `ActorConfig.validate`; an assert in 0.4-0.5).
    Both are skipped with `use_dynamic_bsz=True`, as verl skips them.

    For verl's SFT trainer (`torchrun -m verl.trainer.fsdp_sft_trainer`, defaults from
    `sft_trainer.yaml`: batch 256, micro batch 4): `data.train_batch_size` must be divisible by
    the data-parallel size (processes / `ulysses_sequence_parallel_size`), and each rank's share
    by `data.micro_batch_size_per_gpu` (verl 0.7.0 verl/trainer/fsdp_sft_trainer.py:144-155
    `_normalize_config_bsz`; the same from 0.4.0): "Global batch size 250 is not divisible by dp
    size 8".

    ## Why it matters
    `AssertionError: real_train_batch_size (5000) must be divisible by minimal possible batch
    size (8)` or `ValueError: train_batch_size (128) must be >= actor.ppo_mini_batch_size (256)`,
    after Ray has started and the dataset has been read.

    ## Example
    ```sh
    python3 -m verl.trainer.main_ppo data.train_batch_size=1000 actor_rollout_ref.rollout.n=5 \\
        actor_rollout_ref.actor.ppo_mini_batch_size=250 trainer.n_gpus_per_node=8 trainer.nnodes=1
    ```
    1000 × 5 = 5000 responses do not split over 8 GPUs.

    ## Use instead
    `data.train_batch_size=1024` (5120 responses, 640 per GPU), or a GPU count that divides 5000.

    ## Fix safety
    No fix: which of the batch, the group size or the GPU count to change is a training decision.
    """
    yield from _within_versions(plan, context, _verl_train_batch(plan, verl_sft, verl_ppo))


def _verl_train_batch(plan, trainer: verl.SFT | None, model: verl.PPO | None):
    if trainer is not None:
        yield from _sft_batch(plan, trainer)
        return
    if model is None or verl.flag(model.dynamic) is not False or not verl.runs(plan, "driver"):
        return
    train, n, gpus = verl.number(model.train), verl.number(model.n), model.n_gpus
    mini = verl.number(model.mini)
    severity, hedge = _severity(model), _hedge(model)
    if train is not None and mini is not None and train < mini:
        yield Finding(
            _at(plan, model.mini, model.train),
            f"data.train_batch_size {train} is smaller than actor.ppo_mini_batch_size {mini}",
            note=f"verl stops with 'train_batch_size ({train}) must be >= actor.ppo_mini_batch_size ({mini})'{hedge}",
            related=_related(model.train, model.mini), severity=severity,
        )
    if train is None or n is None or not gpus:
        return
    real = train * n
    if model.megatron is False:
        minimal, how, why, factors = gpus, f"the {gpus} GPUs", "", (model.gpus_per_node, model.nnodes)
    elif model.megatron:
        dp, parts = model.megatron_dp()
        micro = verl.number(model.micro)
        if dp is None or micro is None:
            return
        minimal = dp * micro
        how, why = str(minimal), f"{minimal} = Megatron's data parallel {dp} × ppo_micro_batch_size_per_gpu {micro}; "
        factors = (model.gpus_per_node, model.nnodes, *parts, model.micro)
    else:
        return
    if real % minimal == 0:
        return
    yield Finding(
        _at(plan, model.train, model.n),
        f"data.train_batch_size {train} × rollout.n {n} = {real} responses per step do not divide by {how}",
        note=f"{why}verl asserts 'real_train_batch_size ({real}) must be divisible by minimal possible batch size ({minimal})'{hedge}",
        related=_related(model.train, model.n, *factors), severity=severity,
    )


def _sft_batch(plan, trainer: verl.SFT):
    """verl's SFT trainer splits the global batch over the data-parallel ranks, then into micro batches."""
    train, micro, dp = verl.number(trainer.train), verl.number(trainer.micro), trainer.dp
    if train is None or dp is None:
        return
    world = trainer.world
    severity = Severity.WARNING if not trainer.cfg.command.complete or world.default else None
    hedge = f" (unless {trainer.cfg.command.opaque[0].raw} overrides them)" if trainer.cfg.command.opaque else ""
    sp = verl.number(trainer.sp)
    how = f"{world.value} processes" + (f" // ulysses_sequence_parallel_size {sp}" if sp and sp > 1 else "")
    related = [*_related(trainer.train, trainer.micro, trainer.sp), Related(f"{world.value} processes: {world.origin}", world.span)]
    if train % dp:
        yield Finding(
            _at(plan, trainer.train),
            f"data.train_batch_size {train} does not split over data parallel {dp} ({how})",
            note=f"verl's SFT trainer asserts 'Global batch size {train} is not divisible by dp size {dp}'{hedge}",
            related=related, severity=severity,
        )
        return
    if micro and (train // dp) % micro:
        yield Finding(
            _at(plan, trainer.micro, trainer.train),
            f"each rank's batch {train // dp} is not a multiple of data.micro_batch_size_per_gpu {micro}",
            note=f"data.train_batch_size {train} // data parallel {dp} = {train // dp}; verl's SFT trainer asserts it "
            f"(fsdp_sft_trainer.py `_normalize_config_bsz`){hedge}",
            related=related, severity=severity,
        )


@rule("DS902", "verl-micro-batch", severity="error", target="launch", fix="unsafe", facts=("verl_ppo",))
def verl_micro_batch(plan, context, *, verl_ppo):
    """verl's FSDP workers: each GPU's share of a PPO mini batch must be a whole number of micro batches.

    ## What it checks
    verl's FSDP actor and critic workers normalise the mini batch per GPU:
    `ppo_mini_batch_size × rollout.n // (n_gpus // ulysses_sequence_parallel_size)`, then assert
    that it is positive (actor) and divisible by `ppo_micro_batch_size_per_gpu` (verl 0.7.0
    verl/workers/fsdp_workers.py:240-262 for the actor, :1234-1254 for the critic; the same in
    0.4.0-0.6.1). The deprecated `ppo_micro_batch_size` is divided by the same number first.
    The critic counts only when it runs (`critic.enable`, else the `gae` estimator, verl's default).
    Not checked with `trainer.use_legacy_worker_impl=disable` (the new engine workers) or Megatron.

    ## Why it matters
    `AssertionError: normalized ppo_mini_batch_size 160 should be divisible by
    ppo_micro_batch_size_per_gpu 48` in every worker, after Ray has placed them.

    ## Example
    ```sh
    python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.ppo_mini_batch_size=256 actor_rollout_ref.rollout.n=5 \\
        actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=48 trainer.n_gpus_per_node=8
    ```
    256 × 5 // 8 = 160 samples per GPU: not a multiple of 48.

    ## Use instead
    `ppo_micro_batch_size_per_gpu=40` (or 32, 20, 16, ...): a divisor of 160.

    ## Fix safety
    Unsafe: the fix lowers the micro batch to the largest divisor of the per-GPU mini batch below
    it. The update is the same (verl accumulates micro batches up to the mini batch); memory per
    pass goes down and the step takes longer.
    """
    yield from _within_versions(plan, context, _verl_micro_batch(plan, verl_ppo))


def _verl_micro_batch(plan, model: verl.PPO | None):
    if model is None or not verl.runs(plan, "workers"):
        return
    legacy = model.get("trainer.use_legacy_worker_impl")
    if legacy.known and legacy.value == "disable" or not legacy.known and legacy.written:
        return
    for batch in verl.mini_batches(model):
        if batch.per_worker is not None:
            yield from _mini_batch_per_gpu(plan, model, batch)


def _mini_batch_per_gpu(plan, model: verl.PPO, batch: verl.MiniBatch):
    """One role's mini batch per FSDP worker: positive, and a whole number of micro batches."""
    severity, hedge = _severity(model), _hedge(model)
    n, gpus = verl.number(model.n), model.n_gpus
    section = "actor" if batch.role == "actor" else "critic"
    how = f"{section}.ppo_mini_batch_size {batch.mini.value} × rollout.n {n} // ({gpus} GPUs // ulysses_sequence_parallel_size {batch.sp.value})"
    factors = (batch.mini, model.n, model.gpus_per_node, model.nnodes, batch.micro)
    if batch.per_worker == 0 and batch.role == "actor":
        yield Finding(
            _at(plan, batch.mini, model.n),
            "the actor's mini batch is 0 samples per GPU",
            note=f"{how} = 0; verl asserts 'ppo_mini_batch_size 0 should be larger than 0 after normalization'{hedge}",
            related=_related(*factors), severity=severity,
        )
        return
    micro = batch.micro_value
    if not micro or batch.per_worker % micro == 0:
        return
    key = batch.micro.key.rsplit(".", 1)[-1]
    named = f"{key} {micro}" if key == "ppo_micro_batch_size_per_gpu" else \
        f"{key} {verl.number(batch.micro)} // {batch.divisor} = {micro} per GPU"
    yield Finding(
        _at(plan, batch.micro, batch.mini),
        f"the {batch.role}'s mini batch per GPU {batch.per_worker} is not a multiple of {named}",
        note=f"{how} = {batch.per_worker}; verl asserts 'normalized ppo_mini_batch_size {batch.per_worker} should be divisible by "
        f"ppo_micro_batch_size_per_gpu {micro}'{hedge}",
        related=_related(*factors), severity=severity, fix=_micro_batch_fix(batch, key, micro),
    )


def _micro_batch_fix(batch: verl.MiniBatch, key: str, micro: int) -> Fix | None:
    """The largest micro batch below ``micro`` that divides the mini batch per GPU, where the
    launch's own override wrote the value."""
    divisors = [d for d in range(min(micro, batch.per_worker), 0, -1) if batch.per_worker % d == 0]
    span = batch.micro.span
    if key != "ppo_micro_batch_size_per_gpu" or batch.micro.source != "override" or span is None or batch.micro.assumed \
            or not divisors or span.source.text[span.start:span.end] != str(micro):
        return None
    return Fix.unsafe(f"Set {key} to {divisors[0]}", Edit.replace(span, str(divisors[0])))


@rule("DS903", "verl-parallel-size", severity="error", target="launch", facts=("verl_ppo",))
def verl_parallel_size(plan, context, *, verl_ppo):
    """verl's parallel groups must tile its GPUs: the rollout's, Megatron's and Ulysses' sizes divide n_gpus.

    ## What it checks
    With `n_gpus = trainer.n_gpus_per_node × trainer.nnodes`:
    - the rollout engine's `tensor_model_parallel_size × data_parallel_size × pipeline_model_parallel_size`
      (defaults 2, 1, 1) must divide n_gpus: verl asserts `rollout world_size: 8 is not
      divisible by infer_world_size: 3` (verl 0.7.0 verl/workers/fsdp_workers.py:613-620; `infer_tp`
      alone in 0.4-0.5, megatron_workers.py likewise);
    - with the Megatron backend, `tensor × pipeline × context` parallel sizes of the actor must
      divide n_gpus (verl/utils/config.py:87-102);
    - with FSDP, `ulysses_sequence_parallel_size` must divide n_gpus (the worker's device mesh is
      `(n_gpus // sp, sp)`, fsdp_workers.py:170-176);
    - with the async rollout (`actor_rollout_ref.rollout.mode=async`, the default from 0.7.0), a
      rollout replica larger than a node must be a whole number of nodes: "world_size 12 must be
      divisible by gpus_per_node 8" (verl/workers/rollout/replica.py:96-103, 0.6.0 on). Judged
      over the verl releases the pins allow (0.4.0-0.7.0 when nothing pins verl).

    ## Why it matters
    The assertion fires in every worker after Ray has placed them, or the device mesh cannot be
    built.

    ## Example
    ```sh
    python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.tensor_model_parallel_size=3 trainer.n_gpus_per_node=8
    ```

    ## Use instead
    `actor_rollout_ref.rollout.tensor_model_parallel_size=2` (or 4, 8).

    ## Fix safety
    No fix: the parallel size follows the model's size and the GPUs.
    """
    yield from _within_versions(plan, context, _verl_parallel_size(plan, context, verl_ppo))


def _verl_parallel_size(plan, context, model: verl.PPO | None):
    if model is None or not model.n_gpus:
        return
    workers, driver = verl.runs(plan, "workers"), verl.runs(plan, "driver")
    if workers:
        yield from _rollout_size(plan, context, model)
    if model.megatron and driver:
        yield from _megatron_size(plan, model)
    elif model.megatron is False and workers:
        yield from _ulysses_size(plan, model)


def _rollout_size(plan, context, model: verl.PPO):
    """The rollout's tensor × data × pipeline parallel size divides n_gpus (and spans whole nodes)."""
    gpus = model.n_gpus
    parts = [model.get(f"{verl.ROLLOUT}.{name}_parallel_size") for name in ("tensor_model", "data", "pipeline_model")]
    sizes = [verl.number(p) for p in parts]
    if not all(s is not None and s >= 1 for s in sizes):
        return
    size = sizes[0] * sizes[1] * sizes[2]
    per_node = verl.number(model.gpus_per_node)
    if not gpus % size and per_node and size > per_node and size % per_node:
        yield from _replica_nodes(plan, context, model, parts, size, per_node)
    if gpus % size:
        named = [f"{p.key.rsplit('.', 1)[-1]} {s}" for p, s in zip(parts, sizes) if s > 1 or p is parts[0]]
        shown = " × ".join(named) + (f" = {size}" if len(named) > 1 else "")
        yield Finding(
            _at(plan, *parts),
            f"the rollout's {shown} does not divide the {gpus} GPUs",
            note=f"verl asserts 'rollout world_size: {gpus} is not divisible by infer_world_size: {size}'{_hedge(model)}",
            related=_related(*parts, model.gpus_per_node, model.nnodes), severity=_severity(model),
        )


def _megatron_size(plan, model: verl.PPO):
    """The actor's Megatron tensor × pipeline × context parallel size divides n_gpus."""
    gpus = model.n_gpus
    mparts = [model.get(f"{verl.ACTOR}.megatron.{name}_parallel_size") for name in ("tensor_model", "pipeline_model", "context")]
    msizes = [verl.number(p) for p in mparts]
    if all(s is not None and s >= 1 for s in msizes) and gpus % (msizes[0] * msizes[1] * msizes[2]):
        mp = msizes[0] * msizes[1]
        yield Finding(
            _at(plan, *mparts),
            f"the actor's Megatron tensor {msizes[0]} × pipeline {msizes[1]} × context {msizes[2]} parallel does not divide the "
            f"{gpus} GPUs",
            note=f"verl asserts 'n_gpus ({gpus}) must be divisible by model_parallel_size ({mp}) times "
            f"context_parallel_size ({msizes[2]})'{_hedge(model)}",
            related=_related(*mparts, model.gpus_per_node, model.nnodes), severity=_severity(model),
        )


def _ulysses_size(plan, model: verl.PPO):
    """The FSDP actor's Ulysses sequence-parallel size divides n_gpus."""
    gpus = model.n_gpus
    sp = verl.number(model.sp)
    if sp and sp > 1 and gpus % sp:
        yield Finding(
            _at(plan, model.sp),
            f"actor.ulysses_sequence_parallel_size {sp} does not divide the {gpus} GPUs",
            note=f"the FSDP workers' (data parallel, sequence parallel) device mesh cannot be built{_hedge(model)}",
            related=_related(model.sp, model.gpus_per_node, model.nnodes), severity=_severity(model),
        )


def _replica_nodes(plan, context, model, parts, size: int, per_node: int):
    """An async rollout replica larger than a node must span whole nodes (verl 0.6 on)."""
    from dslint.frameworks import releases
    from dslint.evidence.versions import compare

    mode = model.get(f"{verl.ROLLOUT}.mode")
    if mode.written and not mode.known:
        return

    def fails(version: str) -> bool:
        chosen = mode.value if mode.written else ("async" if compare(version, "0.7.0") >= 0 else "sync")
        return chosen == "async" and compare(version, "0.6.0") >= 0

    found = releases("verl", "verl", verl.KNOWN, plan.origin.path if plan.origin is not None else None, context.settings)
    failing, note = found.judge(fails)
    if not failing:
        return
    yield Finding(
        _at(plan, *parts, model.gpus_per_node),
        f"the rollout's {size} GPUs per replica span {size / per_node:.2g} nodes of {per_node}",
        note=f"verl's async rollout asserts 'world_size {size} must be divisible by gpus_per_node {per_node}'{_hedge(model)}"
        + (f" ({note})" if note else ""),
        related=[*_related(*parts, model.gpus_per_node, mode), Related(found.describe())],
        severity=Severity.INFO if note else _severity(model),
    )


@rule("DS904", "verl-visible-gpus", severity="warning", target="launch", facts=("verl_ppo",))
def verl_visible_gpus(plan, context, *, verl_ppo):
    """verl asks Ray for more GPUs on this node than the launch makes visible.

    ## What it checks
    A single-node verl launch (`trainer.nnodes=1`) whose `CUDA_VISIBLE_DEVICES` (or
    `ASCEND_RT_VISIBLE_DEVICES`) lists fewer devices than `trainer.n_gpus_per_node` (default 8).
    `main_ppo` starts Ray itself when no cluster is running (`ray.init()`), and Ray sees only the
    visible devices; the resource pool then asks for `n_gpus_per_node` of them
    (verl 0.7.0 verl/trainer/ppo/ray_trainer.py:107-125 `_check_resource_available`; the same
    since 0.3). Not reported when the script starts or joins a Ray cluster itself (`ray start`,
    `RAY_ADDRESS`).

    ## Why it matters
    `ValueError: Total available GPUs 4 is less than total desired GPUs 8`, or workers that wait
    for GPUs that never come.

    ## Example
    ```sh
    export CUDA_VISIBLE_DEVICES=0,1,2,3
    python3 -m verl.trainer.main_ppo data.train_batch_size=256 trainer.nnodes=1
    ```

    ## Use instead
    `trainer.n_gpus_per_node=4`, matching the four visible devices.

    ## Fix safety
    No fix. A warning: a Ray cluster started outside the script (with other devices) would be
    joined instead.
    """
    yield from _within_versions(plan, context, _verl_visible_gpus(plan, verl_ppo))


def _verl_visible_gpus(plan, model: verl.PPO | None):
    if model is None or not verl.runs(plan, "resources"):
        return
    visible = plan.visible_devices
    per_node, nodes = verl.number(model.gpus_per_node), verl.number(model.nnodes)
    if visible is None or visible.value is None or per_node is None or nodes != 1:
        return
    count = len(visible.value)
    if count >= per_node or _joins_ray(plan, model):
        return
    yield Finding(
        _at(plan, model.gpus_per_node),
        f"trainer.n_gpus_per_node {per_node} but {count} device{'s are' if count != 1 else ' is'} visible",
        note=f"the Ray cluster main_ppo starts sees {count}, and verl stops with 'Total available GPUs {count} is less than total "
        f"desired GPUs {per_node}'",
        related=[Related(f"{count} visible: {visible.origin}", visible.span), *_related(model.gpus_per_node, model.nnodes)],
    )


def _joins_ray(plan, model: verl.PPO | None) -> bool:
    """The script starts a Ray cluster or points Ray at one, so main_ppo does not start its own."""
    if "RAY_ADDRESS" in plan.env:
        return True
    script = getattr(plan.origin, "script", None)
    for command in getattr(script, "commands", []) or []:
        argv = getattr(command, "argv", []) or []
        if command.basename == "ray" and len(argv) > 1 and argv[1].value == "start":
            return True
    address = model.get("ray_init.address") if model is not None else None
    if address is not None and address.written:
        return True
    return any(o.key.startswith(("ray_init.", "ray_kwargs.ray_init.")) and o.key.endswith("address")
               for o in (model.cfg.command.overrides if model is not None else []))
