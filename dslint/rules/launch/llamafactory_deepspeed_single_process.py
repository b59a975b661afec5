"""DS307 llamafactory-deepspeed-single-process: LLaMA-Factory refuses DeepSpeed on one process."""

from __future__ import annotations

from dslint.diagnostics import Finding, Related
from dslint.rule import rule


@rule("DS307", "llamafactory-deepspeed-single-process", severity="error", target="launch", consumers=("llamafactory",))
def llamafactory_deepspeed_single_process(plan, context):
    """LLaMA-Factory with DeepSpeed on one process: it refuses to start.

    ## What it checks
    `llamafactory-cli train` starts torchrun only when `FORCE_TORCHRUN` is truthy or more than
    one device is visible (src/llamafactory/launcher.py:60-62). A config with `deepspeed:` that
    ends up in a single, non-distributed process stops with
    ``ValueError: Please use `FORCE_TORCHRUN=1` to launch DeepSpeed training.``
    (src/llamafactory/hparams/parser.py:471-472).

    ## Why it matters
    The run stops during argument parsing, after the job got its devices.

    ## Example
    ```sh
    CUDA_VISIBLE_DEVICES=0 llamafactory-cli train examples/train_lora/qwen3_lora_sft_ds3.yaml
    ```
    Use instead: `FORCE_TORCHRUN=1 CUDA_VISIBLE_DEVICES=0 llamafactory-cli train ...`.
    """
    if plan.launcher != "llamafactory" or plan.deepspeed is None or plan.distributed is not False:
        return
    world = plan.world_size
    yield Finding(
        plan.span,
        "LLaMA-Factory runs this launch as one non-distributed process, and refuses DeepSpeed there",
        note="LLaMA-Factory raises 'Please use `FORCE_TORCHRUN=1` to launch DeepSpeed training.'",
        related=[Related(world.origin, world.span), Related("DeepSpeed config named here", plan.deepspeed.span)],
    )
