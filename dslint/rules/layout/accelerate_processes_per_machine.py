"""DS318 accelerate-processes-per-machine: `num_processes` not a multiple of `num_machines`."""

from __future__ import annotations

from dslint.diagnostics import Finding, Related
from dslint.documents.model import Scalar
from dslint.rule import rule
from dslint.values import as_int


@rule("DS318", "accelerate-processes-per-machine", severity="error", target="document", kinds=("accelerate-yaml",))
def accelerate_processes_per_machine(document, context):
    """An accelerate config whose `num_processes` is not a multiple of `num_machines`.

    ## What it checks
    `num_processes` (all processes, on all machines) and `num_machines` of an accelerate config:
    each machine starts `num_processes // num_machines` (accelerate 1.15 utils/launch.py:217 for
    torchrun, :476 `--num_gpus` for the deepspeed launcher, :489 for DeepSpeed's `standard`
    launcher), so the remainder never starts. The file is judged on its own; a launch that
    overrides either value on the command line is `accelerate-processes`.

    ## Why it matters
    The job starts, with fewer processes than the config says: 8 over 3 machines is 2 per
    machine, 6 in all. Every number derived from the world size (the global batch, DeepSpeed's
    `train_batch_size` check, steps per epoch) is computed for a job that does not run.

    ## Example
    ```yaml
    num_machines: 3
    num_processes: 8
    ```
    Use instead: `num_processes: 24` for three machines of eight devices.
    """
    mapping = document.mapping
    if mapping is None:
        return
    procs, machines = mapping.entry("num_processes"), mapping.entry("num_machines")
    if procs is None or machines is None or not isinstance(procs.value, Scalar) or not isinstance(machines.value, Scalar):
        return
    total, count = as_int(procs.value.value), as_int(machines.value.value)
    if total is None or count is None or total <= 0 or count <= 1 or total % count == 0:
        return
    per = total // count
    yield Finding(
        procs.value.span,
        f"num_processes: {total} does not divide over num_machines: {count}",
        note=f"accelerate starts {per} per machine, {per * count} in all; {total - per * count} never start{'s' if total - per * count == 1 else ''}",
        related=[Related(f"num_machines: {count}", machines.value.span)],
    )
