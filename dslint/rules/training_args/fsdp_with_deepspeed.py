"""DS710: `--fsdp` and `--deepspeed` together."""

from __future__ import annotations

from dslint.diagnostics import Finding
from dslint.rule import rule
from dslint.rules.training_args._common import arg_related
from dslint.rules.training_args._context import training_context


@rule("DS710", "fsdp-with-deepspeed", severity="error", target="launch", consumers=("hf", "swift", "llamafactory", "megatron"))
def fsdp_with_deepspeed(plan, context):
    """`--fsdp` and `--deepspeed` together: the Trainer refuses to start.

    ## What it checks
    transformers' Trainer raises `ValueError: Using --fsdp xxx together with --deepspeed is not
    possible, deactivate one of those flags.` (trainer.py); ms-swift raises `FSDP2 is not
    compatible with DeepSpeed.` (swift/arguments/sft_args.py). LLaMA-Factory hands both to the
    Trainer. An empty `--fsdp ""` or `fsdp: false` is FSDP off.

    It speaks only where the reader of the arguments is established (a known console, a program read
    statically that parses them, or a config whose own keys name LLaMA-Factory or ms-swift), and
    not where a training script reads its YAML with OmegaConf itself (see `unknown-training-argument`).

    ## Why it matters
    The job dies at start-up, after its queue wait. ms-swift refuses while it parses its
    arguments (`SftArguments._init_fsdp`); the Trainer refuses in its constructor
    (`Trainer.__init__`), which takes the model, so a plain transformers script or LLaMA-Factory
    has already loaded the model (and LLaMA-Factory tokenized the dataset) when it fails.

    ## Example
    `torchrun train.py --fsdp "full_shard auto_wrap" --deepspeed ds_z3.json`
    Use instead: one of the two.
    """
    if plan.consumer not in ("hf", "swift", "llamafactory") or not training_context(plan, context).active:
        return
    fsdp, ds = plan.arg("fsdp"), plan.arg("deepspeed")
    if fsdp is None or ds is None:
        return
    if fsdp.value in (False, None, "", "false", "False") or ds.value in (False, None, "", "false", "False", True):
        return
    if isinstance(fsdp.value, list) and not fsdp.value:
        return
    who = "ms-swift raises 'FSDP2 is not compatible with DeepSpeed.'" if plan.consumer == "swift" else \
        "the Trainer raises 'Using --fsdp xxx together with --deepspeed is not possible, deactivate one of those flags.'"
    yield Finding(fsdp.name_span or fsdp.span or plan.span, "fsdp together with deepspeed", note=who,
                  related=[arg_related(ds)])
