"""DS414 sequence-parallel-without-tp: the rule and the helpers only it uses."""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix
from dslint.rule import rule
from dslint.launch.args import flag, remove_arg, written
from dslint.rules.parallelism._common import Grid, megatron_flavor


@rule("DS414", "sequence-parallel-without-tp", severity="info", target="launch", fix="unsafe")
def sequence_parallel_without_tp(plan, context):
    """Megatron's `--sequence_parallel` without tensor parallelism is switched off silently.

    ## What it checks
    `--sequence_parallel` (true) while the tensor-parallel size is 1 in a Megatron-SWIFT,
    Megatron-DeepSpeed or Megatron-LM launch.

    ## Why it matters
    Megatron's sequence parallelism splits the tensor-parallel region; without tensor
    parallelism there is nothing to split, and the flag is set back to False without an error
    (Megatron-SWIFT megatron_args.py:891-892; Megatron-DeepSpeed megatron/arguments.py "disable
    sequence parallelism when tp=1"). It costs nothing, but it saves nothing either: reported as
    information, since the flag suggests a memory saving the run does not get. For long
    sequences use context parallelism (`--context_parallel_size`).

    ## Example
    `megatron sft --model Qwen/Qwen3-8B --sequence_parallel true`
    Use instead: `--tensor_model_parallel_size 2 --sequence_parallel true`.

    ## Fix safety
    Unsafe: it deletes a feature flag you set. The flag has no effect at tensor parallel size 1,
    but it takes effect as soon as the size is raised, which may be what you meant.
    """
    flavor = megatron_flavor(plan)
    if flavor is None:
        return
    sp = flag(plan, "sequence_parallel")
    if sp.value is not True:
        return
    grid = Grid(plan, flavor)
    if not isinstance(grid.tp.value, int) or grid.tp.value > 1:
        return
    edit = remove_arg(sp.arg)
    yield Finding(
        sp.arg.name_span or sp.span or plan.span,
        f"{written(sp.arg)} with tensor parallel size {grid.tp.value} does nothing",
        note="Megatron turns sequence parallelism off when there is no tensor parallelism, without an error",
        help="use --context_parallel_size for long sequences",
        related=[grid.tp.related("tensor_model_parallel_size")],
        fix=Fix.unsafe("Remove the flag", edit) if edit is not None else None,
    )
