"""The world of a launch run by ``srun`` or ``mpirun``, or inside an sbatch job.

``srun`` and ``mpirun`` start copies of the command they wrap, one per task:

- a plain ``python train.py`` under them is one process per task, so the world is the task count
  (the program reads its rank from ``SLURM_PROCID``/``OMPI_COMM_WORLD_RANK``);
- a distributed launcher under them (``srun torchrun ...``) is one launcher per task, and each
  launcher starts the processes its own flags say: the world is the launcher's (``--nnodes`` ×
  ``--nproc_per_node``), and the task count only says how many launchers there are.

srun's task count (srun(1) ``-n``): ``-n``; else ``--ntasks-per-node`` × nodes; else the job's
``SLURM_NTASKS`` (sbatch ``-n``/``--ntasks-per-node``); else one task per node. Nodes: srun
``-N``, else the job's. A batch script's own GPUs per node (``--gpus-per-node``, ``--gres=gpu:N``)
are the devices SLURM makes visible, which a launcher that counts visible devices uses.
"""

from __future__ import annotations

import os
import re

from dslint.launch.plan import LaunchPlan, Sourced
from dslint.values import as_int

_MPI_TOTAL = ("-np", "-n", "--np", "-c")


def _where(span) -> str:
    return f"{span.path}:{span.source.position(span.start)[0]}"


def _number(word) -> tuple[int | None, str]:
    """(the word's number, a note when it is only the value assumed for it)."""
    if word.value is not None:
        return as_int(word.value, argparse_text=True), ""
    if word.assumed is not None:
        return as_int(word.assumed, argparse_text=True), f", assuming {word.raw} is {word.assumed}"
    return None, ""


def _wrapper_words(command) -> list:
    """The wrappers around a command, and around the ``bash -c``/``eval`` that runs its string (``srun bash -c '...'``)."""
    out = []
    while command is not None:
        out.extend(getattr(command, "wrappers", []))
        command = getattr(command, "runner", None)
    return out


def wrapper_options(command, name: str) -> dict[str, tuple]:
    """Options of the ``srun`` (or ``mpirun``) among a command's wrappers: key -> (Word of the value, option text)."""
    words = _wrapper_words(command)
    start = next((k for k, w in enumerate(words) if os.path.basename(w.value or "") in name.split("|")), None)
    if start is None:
        return {}
    from dslint.documents.shell import split_word  # here: a run on training configs reads no script
    from dslint.documents.shell.slurm import OPTIONS
    from dslint.documents.shell.wrappers import SRUN_LONG_FLAGS, SRUN_SHORT_FLAGS

    out: dict[str, tuple] = {}
    k = start + 1
    while k < len(words):
        word = words[k]
        text = word.prefix
        if not text.startswith("-"):
            if word.value is None and word.may_split and not text:
                k += 1  # `${SRUN_ARGS}`: options only known at run time
                continue
            break
        option, eq, _ = text.partition("=")
        key = OPTIONS.get(option) if name == "srun" else (option if option in _MPI_TOTAL else None)
        if eq:
            rest = split_word(word)
            if key is not None and rest is not None:
                out[key] = (rest[1], word.raw)
        elif key is not None and k + 1 < len(words):
            out[key] = (words[k + 1], f"{option} {words[k + 1].raw}")
            k += 1
        elif name == "srun" and (option[2:] not in SRUN_LONG_FLAGS if option.startswith("--") else option[1:] not in SRUN_SHORT_FLAGS):
            k += 1  # an option with a value dslint does not read (`-p PARTITION`)
        k += 1
    return out


def srun_tasks(command, job) -> Sourced | None:
    options = wrapper_options(command, "srun")
    span = command.span

    def given(key: str) -> Sourced | None:
        if key in options:
            word, text = options[key]
            number, note = _number(word)
            return None if number is None else Sourced(number, f"srun {text} ({_where(word.span)}{note})", word.span)
        if job is not None and job.count(key) is not None:
            directive = job.directives[key]
            return Sourced(job.count(key), f"#SBATCH {directive.text} ({_where(directive.span)})", directive.span)
        return None

    tasks = given("ntasks") if "ntasks" in options else None
    if tasks is not None:
        return tasks
    nodes, per_node = given("nodes"), given("ntasks_per_node")
    if per_node is not None and nodes is not None:
        return Sourced(per_node.value * nodes.value, f"{per_node.origin} × {nodes.origin} node(s)", per_node.span)
    job_tasks = given("ntasks")
    if job_tasks is not None:
        return job_tasks
    if per_node is not None and nodes is None:
        return Sourced(per_node.value, f"{per_node.origin} on one node", per_node.span)
    if nodes is not None:
        return Sourced(nodes.value, f"one task per node (srun's default) on {nodes.origin}", nodes.span)
    return Sourced(1, "one task (srun's default outside a multi-node job)", span, default=True) if job is not None else None


def mpi_tasks(command) -> Sourced | None:
    options = wrapper_options(command, "mpirun|mpiexec|mpiexec.hydra|orterun")
    for key in _MPI_TOTAL:
        if key in options:
            word, text = options[key]
            number, note = _number(word)
            if number is not None:
                return Sourced(number, f"mpirun {text} ({_where(word.span)}{note})", word.span)
    return None


def slurm_gpus(plan: LaunchPlan) -> Sourced | None:
    """GPUs SLURM makes visible on each node: the launch line's srun options, else the #SBATCH lines."""
    options = wrapper_options(plan.command.command, "srun") if plan.command is not None else {}
    for key in ("gpus_per_node", "gres"):
        if key in options:
            word, text = options[key]
            from dslint.documents.shell.slurm import Directive

            value = word.value
            count = Directive(key, text, value, word.span).count if value is not None else None
            if count is not None:
                return Sourced(count, f"srun {text} ({_where(word.span)}): SLURM makes {count} GPU(s) visible", word.span)
    job = getattr(getattr(plan.origin, "script", None), "sbatch", None)
    found = job.gpus_per_node if job is not None else None
    if found is None:
        return None
    count, directive = found
    return Sourced(count, f"#SBATCH {directive.text} ({_where(directive.span)}): SLURM makes {count} GPU(s) visible on each node",
                   directive.span)


TASK_STARTERS = ("srun", "mpirun", "mpiexec", "mpiexec.hydra", "orterun")


def scheduled(plan: LaunchPlan) -> str | None:
    """Why the scheduler, not the script, decides where the launch runs: ``srun``/``mpirun``
    around it (a copy on each node of the allocation) or ``#SBATCH`` lines above it (the batch
    job is the allocation); None when neither is written."""
    command = plan.command.command if plan.command is not None else None
    for word in _wrapper_words(command):
        name = os.path.basename(word.value or "")
        if name in TASK_STARTERS:
            return f"{name} starts it ({_where(word.span)})"
    source = getattr(plan.origin, "source", None)
    from dslint.documents.shell.slurm import first_directive  # a training-YAML run reads no shell

    line = first_directive(source) if source is not None and getattr(plan.origin, "script", None) is not None else None
    if line is not None:
        return f"it runs inside an sbatch job (#SBATCH at {plan.origin.path}:{line})"
    return None


def apply_wrappers(plan: LaunchPlan, command) -> None:
    """Adjust the plan's world for ``srun``/``mpirun`` around the launch (see the module docstring)."""
    names = {os.path.basename(w.value or "") for w in _wrapper_words(command)}
    job = getattr(getattr(plan.origin, "script", None), "sbatch", None)
    if "srun" in names:
        tasks, runner = srun_tasks(command, job), "srun"
    elif names & {"mpirun", "mpiexec", "mpiexec.hydra", "orterun"}:
        tasks, runner = mpi_tasks(command), "mpirun"
    else:
        if job is not None:
            plan.notes.append(f"an sbatch job ({job.describe()}): the launch runs once, on the job's first node")
        return
    if plan.launcher == "python":
        plan.distributed = True
        if tasks is None:
            plan.world_size = plan.procs_per_node = plan.nodes = None
            plan.notes.append(f"the launch runs under {runner}, which starts one process per task; the task count is unknown")
            return
        plan.world_size = Sourced(tasks.value, f"{tasks.value} {runner} task(s), one process each: {tasks.origin}", tasks.span, tasks.default)
        plan.procs_per_node = plan.nodes = None
        return
    if tasks is not None:
        plan.notes.append(f"{runner} starts {tasks.value} cop{'y' if tasks.value == 1 else 'ies'} of {plan.launcher} ({tasks.origin}); "
                          f"each starts the processes its own flags say")


def sbatch_assumption(raw: str, job) -> str | None:
    """How a value written with ``$SLURM_*`` variables was decided: "assuming $SLURM_NNODES is 2,
    as #SBATCH --nodes=2 (train.slurm:3) asks"; None when no such variable is in ``raw``."""
    if job is None:
        return None
    variables = job.variables()
    said = []
    for name in re.findall(r"\$\{?(SLURM_[A-Z_]+)", raw):
        if name in variables:
            value, directive = variables[name]
            said.append(f"${name} is {value}, as #SBATCH {directive.text} ({_where(directive.span)}) asks")
    return "assuming " + " and ".join(said) if said else None
