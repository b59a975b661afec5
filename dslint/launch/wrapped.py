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


def granted_gpus(plan: LaunchPlan) -> Sourced | None:
    """GPUs a wrapper makes visible to the launch, when no device variable says: ``docker run
    --gpus N``, else SLURM's (``slurm_gpus``)."""
    return docker_gpus(plan) or slurm_gpus(plan)


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
    remote = remote_runner(command)
    if remote is not None:
        runner, call = remote
        if call.tool == "ssh":
            plan.notes.append(f"it runs on {_hosts(call)} through ssh ({_where(runner.span)})")
        else:
            hosts = call.host_count()
            plan.notes.append(f"pdsh runs a copy of {plan.launcher} on each of {f'its {hosts} hosts' if hosts else 'its hosts'} "
                              f"({_hosts(call)}, {_where(runner.span)}); each starts the processes its own flags say")
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


# ---- containers and remote shells ----------------------------------------------------------


def _levels(command):
    """The command, then each command whose string it is read from (``ssh HOST "..."``, ``bash -c``)."""
    while command is not None:
        yield command
        command = getattr(command, "runner", None)


def containers(command) -> list:
    """The ``docker``/``apptainer`` calls a launch runs inside (dslint.documents.shell.containers)."""
    from dslint.documents.shell.containers import CONTAINER_TOOLS, container_call  # a training-YAML run reads no shell

    out = []
    for level in _levels(command):
        words = [*level.wrappers, *level.argv]
        for index, word in enumerate(level.wrappers):
            if os.path.basename(word.value or "") in CONTAINER_TOOLS:
                call = container_call(words, index)
                if call is not None:
                    out.append((call, word))
    return out


def remote_runner(command):
    """(the ``ssh``/``pdsh`` command whose string the launch is in, its RemoteCall), or None."""
    from dslint.documents.shell.remote import REMOTE_SHELLS, remote_call

    for level in list(_levels(command))[1:]:
        if level.basename in REMOTE_SHELLS:
            call = remote_call(level.basename, level.args)
            if call is not None:
                return level, call
    return None


def on_other_host(command) -> bool:
    """Whether the command runs on another host than the script: in an ``ssh``/``pdsh`` string, or
    under ``srun``/``mpirun``."""
    return remote_runner(command) is not None or any(
        os.path.basename(w.value or "") in TASK_STARTERS for w in _wrapper_words(command))


def _hosts(call) -> str:
    return " ".join(w.raw for w in call.hosts) if call.hosts else "the hosts pdsh is given"


def elsewhere(command) -> str | None:
    """Why a relative path the launch names is not looked up from the script's folder: the
    launch runs in a folder a wrapper chooses. ``ssh``/``pdsh``: the remote user's home folder,
    or where the string ``cd``s to on that host. ``docker``: the image's working directory, or
    ``-w DIR``, unless ``-w`` names where ``-v $PWD:DIR`` mounts the caller's folder.
    ``apptainer``/``singularity``: the caller's folder, which Apptainer mounts and enters (user
    guide, "Bind Paths and Mounts": the current working directory is a default bind), unless
    ``--pwd``/``--cwd`` names another, or ``--contain``/``--containall``/``--compat``/``--no-mount``
    may leave it out."""
    remote = remote_runner(command)
    if remote is not None:
        runner, call = remote
        return f"it runs on {_hosts(call)} through {call.tool} ({_where(runner.span)}), from the folder the remote shell starts in"
    for call, word in containers(command):
        if call.tool == "docker":
            workdir = call.values("workdir")
            mounted = {_mount_target(v.raw) for v in call.values("volume")}
            if workdir and workdir[-1].value is not None and workdir[-1].value.rstrip("/") in mounted:
                continue
            where = f"-w {workdir[-1].raw}" if workdir else "the image's working directory"
            return f"it runs inside a container started at {_where(word.span)}, in {where}"
        moved = [option for option, _, _ in call.options if option in _APPTAINER_AWAY]
        if moved:
            return f"it runs inside a container started at {_where(word.span)} with --{moved[0]}, not in the caller's folder"
    return None


_APPTAINER_AWAY = ("pwd", "cwd", "contain", "containall", "compat", "no-mount")
_CALLER_FOLDER = re.compile(r"""^"?(?:\$PWD|\$\{PWD\}|\$\(pwd\)|`pwd`)"?:""")


def _mount_target(raw: str) -> str | None:
    """The container folder of a ``-v HOST:DIR`` whose HOST is the caller's folder (``$PWD``, ``$(pwd)``)."""
    if not _CALLER_FOLDER.match(raw):
        return None
    target = raw.split(":", 2)[1] if raw.count(":") >= 1 else ""
    return target.strip('"').rstrip("/") or None


def docker_gpus(plan: LaunchPlan) -> Sourced | None:
    """The GPUs ``docker run --gpus`` gives the container (docker/cli opts/gpus.go): ``N`` or
    ``count=N`` the first N, ``device=0,2`` those listed; the container numbers them from 0.
    ``all`` (how many the machine has) is not known."""
    command = plan.command.command if plan.command is not None else None
    for call, _word in containers(command):
        gpus = call.values("gpus")
        text = gpus[-1].value if gpus else None
        if text is None:
            continue
        spec = text.strip().strip('"')
        count = None
        if spec.isdigit():
            count = int(spec)
        elif spec.startswith("count=") and spec[6:].isdigit():
            count = int(spec[6:])
        elif spec.startswith("device="):
            count = len([d for d in spec[7:].split(",") if d.strip()])
        if count:
            return Sourced(count, f"docker run --gpus {gpus[-1].raw} ({_where(gpus[-1].span)}): "
                           f"the container sees {count} GPU(s)", gpus[-1].span)
    return None


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
