"""DS418 ulysses-heads: the rule and the helpers only it uses."""

from __future__ import annotations

from dslint.diagnostics import Finding, Severity
from dslint.frameworks import verl
from dslint.launch.args import integer, written
from dslint.rule import rule
from dslint.rules.parallelism._common import megatron_flavor
from dslint.rules.parallelism._heads import Heads, of_flags, of_model


@rule("DS418", "ulysses-heads", severity="error", target="launch", facts=("verl_sft", "verl_ppo"))
def ulysses_heads(plan, context, *, verl_sft, verl_ppo):
    """Ulysses sequence parallelism whose size does not divide the model's attention heads.

    ## What it checks
    Ulysses splits each attention layer's heads over the sequence-parallel ranks, so the
    frameworks that use it check the model's heads against its size S when they build the model:
    - verl (0.4.0-0.7.0), FSDP actor of `verl.trainer.main_ppo` and the SFT trainer
      `verl.trainer.fsdp_sft_trainer` with `ulysses_sequence_parallel_size` S > 1:
      `apply_monkey_patch` asserts `num_attention_heads 28 must be divisible by ulysses_sp_size 8`
      and that the key/value heads are a multiple or a divisor of S (`num_key_value_heads 4 must
      be divisible by ulysses_sp_size 3or vise versa`), verl 0.7.0
      verl/models/transformers/monkey_patch.py:291-298 (the same asserts from 0.4.0,
      monkey_patch.py:155-157), called for the actor when it is built (workers/fsdp_workers.py:418)
      and by the SFT trainer (fsdp_sft_trainer.py:248-251). The model is
      `actor_rollout_ref.model.path` / `model.partial_pretrain`: its local `config.json`, or
      dslint's table of published configs.
    - Megatron-DeepSpeed with `--ds-sequence-parallel-size` S > 1 (DeepSpeed-Ulysses):
      `ParallelAttention` asserts `args.num_attention_heads % sequence_parallel_world_size == 0`
      (megatron/model/transformer.py:618 at commit 4efb479), heads from `--num-attention-heads`.

    Not reported: ms-swift's `--sequence_parallel_size` (from 3.9 ms-swift splits the heads
    over the greatest common divisor of S and the key/value heads and runs ring attention over
    the rest, swift/sequence_parallel/sequence_parallel.py `_init_device_mesh`, so no size is
    refused), and verl's critic.

    ## Why it matters
    The assertion stops every worker while the model is being built, after Ray has started and
    placed them (verl) or the process groups are set up (Megatron-DeepSpeed). The size is the
    user's choice (a divisor of the heads), so there is no fix.

    ## Example
    ```sh
    python3 -m verl.trainer.main_ppo actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct actor_rollout_ref.actor.ulysses_sequence_parallel_size=8
    ```
    Qwen2.5-7B has 28 attention heads.
    Use instead: `actor_rollout_ref.actor.ulysses_sequence_parallel_size=4` (or 2).
    """
    root = getattr(context.settings, "root", None)
    if verl_ppo is not None and verl.runs(plan, "workers") and verl_ppo.megatron is False and verl.judged(plan, context.settings):
        yield from _verl(plan, verl_ppo, verl_ppo.sp, verl_ppo.get("actor_rollout_ref.model.path"), root)
    elif verl_sft is not None and verl.judged(plan, context.settings):
        yield from _verl(plan, verl_sft, verl_sft.sp, verl_sft.cfg.get("model.partial_pretrain"), root)
    elif megatron_flavor(plan) == "megatron-deepspeed":
        yield from _megatron_deepspeed(plan)


def _verl(plan, model, sp_setting, path, root):
    """verl's apply_monkey_patch: heads divisible by S, key/value heads a multiple or divisor of S."""
    size = verl.number(sp_setting)
    if size is None or size < 2 or not path.known:
        return
    heads = of_model(plan, path.value, path.span, root)
    if heads is None:
        return
    severity = Severity.WARNING if not model.cfg.command.complete else None
    anchor = sp_setting.span or plan.span
    related = list(heads.related)
    if heads.heads % size:
        yield Finding(
            anchor,
            f"ulysses_sequence_parallel_size {size} does not divide the model's {heads.heads} attention heads",
            note=f"verl asserts 'num_attention_heads {heads.heads} must be divisible by ulysses_sp_size {size}'; "
            f"heads from {heads.source}",
            related=related, severity=severity,
        )
        return
    kv = heads.kv
    if kv is not None and kv % size and size % kv:
        yield Finding(
            anchor,
            f"ulysses_sequence_parallel_size {size} neither divides nor is a multiple of the model's {kv} key/value heads",
            note=f"verl asserts 'num_key_value_heads {kv} must be divisible by ulysses_sp_size {size}or vise versa'; "
            f"heads from {heads.source}",
            related=related, severity=severity,
        )


def _megatron_deepspeed(plan):
    """Megatron-DeepSpeed's DeepSpeed-Ulysses: the attention heads divisible by --ds-sequence-parallel-size."""
    sp = integer(plan, "ds_sequence_parallel_size")
    if not sp.given or not isinstance(sp.value, int) or sp.value < 2:
        return
    heads: Heads | None = of_flags(plan, "num_attention_heads", None)
    if heads is None or heads.heads % sp.value == 0:
        return
    yield Finding(
        sp.span or plan.span,
        f"{written(sp.arg)} does not divide the model's {heads.heads} attention heads",
        note="Megatron-DeepSpeed's ParallelAttention asserts 'args.num_attention_heads % "
        f"parallel_state.get_sequence_parallel_world_size() == 0'; heads from {heads.source}",
        related=list(heads.related),
    )
