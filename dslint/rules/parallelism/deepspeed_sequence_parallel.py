"""DS415 deepspeed-sequence-parallel: the rule and the helpers only it uses."""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix, Related
from dslint.documents.model import Scalar
from dslint.documents.edits import remove_json_entry
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.launch.args import as_int
from dslint.rules.parallelism._common import HF_LIKE


@rule("DS415", "deepspeed-sequence-parallel", severity="error", target="deepspeed", fix="safe", consumers=("hf", "swift", "llamafactory"))
def deepspeed_sequence_parallel(use, context):
    """DeepSpeed's `sequence_parallel_size` against the world size and HF's batch arithmetic.

    ## What it checks
    A DeepSpeed config with `sequence_parallel_size` S > 1 (Ulysses/ALST):
    - the world size W is not a multiple of S. DeepSpeed divides W by S when it reads the
      config and carries on with a fractional data-parallel size (deepspeed 0.19.8
      runtime/config.py:468-469, no error); the batch check then fails or passes against a
      fraction, and the sequence-parallel groups refuse W: `world_size (W) is not divisible by
      sequence_parallel_size S` (runtime/sequence_parallel/parallel_state_sp.py:37-39).
    - under HF Trainer, ms-swift or LLaMA-Factory, `train_batch_size: "auto"`: transformers
      fills it with all W processes × batch × accumulation (integrations/deepspeed.py:143),
      ignoring S, while DeepSpeed checks it against W / S: `AssertionError: Check batch related
      parameters. train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step *
      world_size 64 != 8 * 1 * 4.0` (research deepspeed_rules.md §5.2; accelerate corrects this
      only for `parallelism_config` with `sp_backend="deepspeed"`). An explicit value is judged
      by DS101/DS301.

    ## Why it matters
    The `"auto"` case stops the job at start-up, after the queue wait: under ZeRO-3 as
    `from_pretrained` begins (`zero.Init` builds a `DeepSpeedConfig`,
    runtime/zero/partition_parameters.py), otherwise when the engine is built after the model
    has loaded. The assertion's numbers (a `train_batch_size` the config never wrote, a world
    size of `4.0`) do not point at S. A world size that is not a multiple of S fails at
    start-up too, at the batch check or when the sequence-parallel groups are built.

    ## Example
    ```json
    {"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto", "sequence_parallel_size": 2}
    ```
    Use instead: leave `train_batch_size` out; DeepSpeed derives it from the micro batch,
    the accumulation and W / S.

    ## Fix safety
    Safe for the `"auto"` case: removing `train_batch_size` lets DeepSpeed derive the value it
    checks against.
    """
    config = use.config
    node = config.get("sequence_parallel_size")
    if not isinstance(node, Scalar) or isinstance(node.value, bool):
        return
    sp = as_int(node.value)
    if sp is None or sp <= 1:
        return
    plan = use.launch
    world = plan.world_size if plan is not None else use.world_size
    value = getattr(world, "value", None) if world is not None else None
    if isinstance(value, int) and value >= 1 and value % sp:
        related = [Related(f"world size {value} from {getattr(world, 'origin', '')}", getattr(world, "span", None))]
        yield Finding(
            node.span,
            f"sequence_parallel_size {sp} does not divide the world size {value}",
            note=f"DeepSpeed computes a data-parallel world of {value / sp:.3g} without an error (runtime/config.py:468-469), and its "
            f"sequence-parallel groups stop with 'world_size ({value}) is not divisible by sequence_parallel_size {sp}'",
            related=related,
        )
        return
    if plan is None or use.consumer not in HF_LIKE:
        return
    if any(k.startswith("parallelism_config") for k in plan.launcher_args):
        return
    entry = config.entry("train_batch_size")
    if entry is None or not ds.is_auto(entry.value):
        return
    shown = ""
    if isinstance(value, int):
        shown = f" ({value} processes, not {value / sp:.3g})"
    yield Finding(
        entry.key_span,
        f"train_batch_size \"auto\" with sequence_parallel_size {sp}",
        note=f"transformers fills it with every process{shown} × batch × accumulation, but DeepSpeed divides the world size by "
        "sequence_parallel_size and asserts 'train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size'",
        related=[Related(f"sequence_parallel_size {sp}", node.span)],
        fix=Fix.safe("Remove train_batch_size so DeepSpeed derives it", remove_json_entry(config, entry)),
    )
