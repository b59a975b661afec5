"""DS417 megatron-tensor-parallel-heads: the rule and the helpers only it uses."""

from __future__ import annotations

from dslint.diagnostics import Finding
from dslint.launch.args import flag
from dslint.rule import rule
from dslint.rules.parallelism._common import Grid, megatron_flavor
from dslint.rules.parallelism._heads import Heads, of_flags, of_model


@rule("DS417", "megatron-tensor-parallel-heads", severity="error", target="launch")
def megatron_tensor_parallel_heads(plan, context):
    """Megatron's tensor parallel size does not divide the model's attention heads or key/value heads.

    ## What it checks
    A Megatron launch whose `--tensor-model-parallel-size` T > 1 is written and whose model
    shape is known:
    - Megatron-SWIFT (ms-swift `megatron sft|pt|rlhf`): the shape of the Hugging Face model
      `--model` names (its local `config.json`, or dslint's table of published configs);
      ms-swift (3.x `swift/megatron/model/config.py`, 4.x through mcore-bridge
      `config/parser.py`) sets `num_attention_heads` from the config's `num_attention_heads`
      and `num_query_groups` from `num_key_value_heads`; `--num_attention_heads` /
      `--num_query_groups` written in the launch override them.
    - Megatron-LM: `--num-attention-heads`, and `--num-query-groups` when
      `--group-query-attention` is given (without it Megatron-LM ignores the groups:
      megatron/training/arguments.py `core_transformer_config_from_args`).
    - Megatron-DeepSpeed: `--num-attention-heads` and `--num-key-value-heads` (default: the
      attention heads).

    Reported when:
    - the attention heads are not a multiple of T: Megatron-Core's `TransformerConfig`
      raises `ValueError: num_attention_heads (28) must be a multiple of
      tensor_model_parallel_size (8).` (core_v0.15.0 transformer_config.py:743-747, core_v0.19.0
      :1323-1327, the same check in every release since core_r0.5.0);
    - the key/value heads (query groups) are neither a multiple nor a divisor of T:
      `ValueError: num_query_groups (4) must be a multiple or divisor of
      tensor_model_parallel_size (3).` (core_v0.16.0 transformer_config.py:939-946 on; releases
      up to core_v0.15.0 require a multiple, :758, so they refuse these too);
    - Megatron-DeepSpeed: heads or key/value heads not a multiple of T: `ParallelAttention`
      divides both by T with `core.utils.divide`, which asserts `"4 is not divisible by 8"`
      (megatron/model/transformer.py:562-567, megatron/core/utils.py:16-20 at commit 4efb479).

    Not reported: key/value heads that divide T but are not a multiple of it (4 groups, T = 8).
    Megatron-Core from 0.16 replicates them; earlier releases refuse them, and which release a
    launch installs is seldom written. Models with multi-head latent attention (DeepSeek-V2/V3,
    `kv_lora_rank` in config.json) are checked for their attention heads only.

    ## Why it matters
    The error comes when the model is built, after the queue wait and the process-group setup
    of every rank. The right tensor parallel size is the user's choice (any divisor of the heads
    that also suits the key/value heads), so there is no fix.

    ## Example
    ```sh
    NPROC_PER_NODE=8 megatron sft --model Qwen/Qwen2.5-7B-Instruct --tensor_model_parallel_size 8
    ```
    Qwen2.5-7B has 28 attention heads: 8 does not divide them.
    Use instead: `--tensor_model_parallel_size 4` (or 2).
    """
    flavor = megatron_flavor(plan)
    if flavor is None:
        return
    tp = Grid(plan, flavor).tp
    if not tp.given or not isinstance(tp.value, int) or tp.value < 2:
        return
    heads = _heads(plan, context, flavor)
    if heads is None:
        return
    size = tp.value
    if heads.heads % size:
        yield Finding(
            tp.span or plan.span,
            f"tensor parallel size {size} does not divide the model's {heads.heads} attention heads",
            note=f"{_stops(flavor, 'num_attention_heads', heads.heads, size)}; heads from {heads.source}",
            related=list(heads.related),
        )
        return
    kv = heads.kv
    if kv is None or kv == heads.heads:
        return
    refused = kv % size != 0 if flavor == "megatron-deepspeed" else (kv % size != 0 and size % kv != 0)
    if refused:
        relation = "is not a multiple of" if flavor == "megatron-deepspeed" else "neither divides nor is a multiple of"
        yield Finding(
            tp.span or plan.span,
            f"tensor parallel size {size} {relation} the model's {kv} key/value heads",
            note=f"{_stops(flavor, 'num_query_groups', kv, size)}; heads from {heads.source}",
            related=list(heads.related),
        )


def _heads(plan, context, flavor: str) -> Heads | None:
    """The heads Megatron builds the attention with, for the launch's flavour."""
    if flavor == "swift":
        if plan.arg("num_attention_heads") is not None:
            return of_flags(plan, "num_attention_heads", "num_query_groups")
        model = plan.arg("model")
        if model is None:
            return None
        return of_model(plan, model.value, model.span, getattr(context.settings, "root", None))
    if flavor == "megatron-lm":
        gqa = flag(plan, "group_query_attention").value is True
        return of_flags(plan, "num_attention_heads", "num_query_groups", kv_enabled=gqa)
    return of_flags(plan, "num_attention_heads", "num_key_value_heads")


def _stops(flavor: str, what: str, count: int, size: int) -> str:
    if flavor == "megatron-deepspeed":
        return f"Megatron-DeepSpeed's ParallelAttention asserts '{count} is not divisible by {size}'"
    if what == "num_attention_heads":
        return f"Megatron-Core raises 'num_attention_heads ({count}) must be a multiple of tensor_model_parallel_size ({size})'"
    return f"Megatron-Core raises 'num_query_groups ({count}) must be a multiple or divisor of tensor_model_parallel_size ({size})'"
