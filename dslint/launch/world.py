"""How many processes a launch starts, per launcher (ground truth in
shared/research/swift_npu_rules.md §1, §3 and deepspeed_rules.md §2, §5).

Each launcher is one small function in ``WORLDS``, keyed by the launcher's kind: given the plan
(its launcher flags, environment and visible devices already read) it sets the processes per
node, the nodes, the world size and whether the launch is distributed, each with its origin.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dslint.documents.model import ACCELERATE, DEEPSPEED, Mapping, Scalar
from dslint.launch.lookup import Files
from dslint.launch.plan import Arg, LaunchPlan, Sourced, where
from dslint.launch.wrapped import granted_gpus, sbatch_assumption
from dslint.values import as_int

TRUTHY = ("true", "y", "1", "yes")
# torchrun's --nproc_per_node words that mean "every visible device".
_DEVICE_WORDS = ("gpu", "auto", "cuda", "xpu", "npu")


def launcher_int(value) -> int | None:
    """Launcher flags are argparse ``type=int``: "8" counts, "8.0" does not."""
    return as_int(value, argparse_text=True)


def said(arg: Arg, text: str, plan: LaunchPlan | None = None) -> str:
    """``text`` about an argument, plus the assumption it rests on."""
    at = where(arg.span)
    if arg.assumed:
        job = getattr(getattr(plan.origin, "script", None), "sbatch", None) if plan is not None else None
        from_job = sbatch_assumption(arg.assumed, job)
        return f"{text} ({at}, {from_job or f'assuming {arg.assumed} keeps its default'})"
    return f"{text} ({at})"


def _flag(arg: Arg | None, flag: str, plan: LaunchPlan) -> Sourced | None:
    """The number a launcher flag gives (``--num_gpus 8``), or None when it gives none."""
    if arg is None or launcher_int(arg.value) is None:
        return None
    return Sourced(launcher_int(arg.value), said(arg, f"{flag} {arg.value}", plan), arg.span)


def env_text(value) -> tuple:
    """(text, note) of a shell Value; a default only the caller could override is used and said."""
    if value.value is not None:
        return value.value, ""
    if getattr(value, "assumed", None) is not None:
        return value.assumed, " assuming the caller does not set it"
    return None, ""


def _env_int(env: dict, name: str) -> Sourced | None:
    value = env.get(name)
    if value is None:
        return None
    text, note = env_text(value)
    number = launcher_int(text) if text is not None else None
    if number is None:
        return None
    return Sourced(number, f"{name}={text} ({where(value.span)}{',' if note else ''}{note})", value.span)


def visible_devices(env: dict, ascend=None) -> Sourced | None:
    """The devices a launch sees. On Ascend only ASCEND_RT_VISIBLE_DEVICES counts: torch_npu
    counts NPUs from it alone (torch_npu/npu/__init__.py `_parse_visible_devices`), and so does
    DeepSpeed's NPU accelerator (npu_accelerator.py:336-337); CUDA_VISIBLE_DEVICES (and
    NPU_VISIBLE_DEVICES) leave every NPU of the machine visible. ``ascend``: the script's own
    evidence of Ascend (dslint.launch.target.ascend_environment)."""
    for name in ("ASCEND_RT_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"):
        value = env.get(name)
        if value is None:
            continue
        if name == "CUDA_VISIBLE_DEVICES" and ascend is not None:
            return Sourced(None, f"every NPU of the machine: Ascend does not read CUDA_VISIBLE_DEVICES ({ascend.reason})", value.span)
        text, note = env_text(value)
        if text is None:
            return Sourced(None, f"{name} (set, value unknown)", value.span)
        ids = [part for part in text.split(",") if part.strip()]
        return Sourced(ids, f"{name}={text} ({where(value.span)}{',' if note else ''}{note})", value.span)
    return None


def _world(plan: LaunchPlan) -> None:
    procs, nodes = plan.procs_per_node, plan.nodes
    if procs is None or procs.value is None or nodes is None or nodes.value is None:
        return
    if nodes.value == 1:
        plan.world_size = Sourced(procs.value, procs.origin, procs.span, procs.default)
    else:
        plan.world_size = Sourced(procs.value * nodes.value, f"{procs.origin} × {nodes.origin}", procs.span or nodes.span, procs.default and nodes.default)


def _one_node(plan: LaunchPlan, why: str) -> None:
    """A launch that runs one process: world, processes per node and nodes all 1."""
    plan.world_size = Sourced(1, why, plan.span, default=True)
    plan.procs_per_node = plan.world_size
    plan.nodes = Sourced(1, "one node", None, default=True)


# ---- deepspeed ---------------------------------------------------------------------------


def _include(plan: LaunchPlan, include: Arg) -> tuple[Sourced | None, Sourced | None]:
    """(processes per node, nodes) from ``--include host:0,1@host2:0,1``, when every host has as many slots."""
    hosts = [h for h in include.value.split("@") if h]
    counts = [len([s for s in h.split(":", 1)[1].split(",") if s]) for h in hosts if ":" in h]
    if not (counts and len(set(counts)) == 1 and len(counts) == len(hosts)):
        return None, None
    text = said(include, f"--include {include.value}", plan)
    return Sourced(counts[0], text, include.span), Sourced(len(hosts), text, include.span)


def _deepspeed_procs(plan: LaunchPlan) -> tuple[Sourced | None, Sourced | None]:
    """(processes per node, nodes --include gives): --num_gpus, --include, else the visible devices."""
    opts = plan.launcher_args
    num_gpus, include, exclude = opts.get("num_gpus"), opts.get("include"), opts.get("exclude")
    if num_gpus is not None and launcher_int(num_gpus.value) is not None:
        return _flag(num_gpus, "--num_gpus", plan), None
    if include is not None and isinstance(include.value, str):
        return _include(plan, include)
    if exclude is not None:
        return None, None
    devices = plan.visible_devices
    if "hostfile" not in opts and devices is not None and devices.value is not None:
        # With a hostfile the runner takes each host's slots, not the visible devices (runner.py:446-458).
        count = len(devices.value)
        return Sourced(count, f"{devices.origin}: {count} device{'s' if count != 1 else ''}", devices.span), None
    if devices is None:
        return granted_gpus(plan), None  # the deepspeed launcher uses every visible GPU
    return None, None


def _hostfile(files: Files, hostfile: Arg, base: Path) -> list[tuple[str, int | None]]:
    """(host, its slots=) per line of the hostfile the launch names, when it is found."""
    if not isinstance(hostfile.value, str):
        return []
    text = files.text(hostfile.value, base)
    if text is None:
        return []
    hosts = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        slots = None
        for part in parts[1:]:
            if part.startswith("slots="):
                slots = launcher_int(part[6:])
        hosts.append((parts[0], slots))
    return hosts


def _hostfile_nodes(plan: LaunchPlan, files: Files, hostfile: Arg, base: Path) -> None:
    """Nodes from the hostfile's hosts; processes per node from their slots when all agree."""
    hosts = _hostfile(files, hostfile, base)
    if not hosts:
        return
    plan.nodes = Sourced(len(hosts), f"{len(hosts)} hosts in the hostfile {hostfile.value}", hostfile.span)
    slots = {s for _, s in hosts}
    if plan.procs_per_node is None and len(slots) == 1 and None not in slots:
        plan.procs_per_node = Sourced(slots.pop(), f"slots= in the hostfile {hostfile.value}", hostfile.span)


def _deepspeed(plan: LaunchPlan, files: Files, base: Path) -> None:
    """--num_gpus / --include / --num_nodes / a hostfile decide the processes; CUDA_VISIBLE_DEVICES
    only counts when none of num_gpus/include/exclude is given."""
    opts = plan.launcher_args
    plan.procs_per_node, nodes_from_include = _deepspeed_procs(plan)
    num_nodes, hostfile = opts.get("num_nodes"), opts.get("hostfile")
    if num_nodes is not None and launcher_int(num_nodes.value) is not None:
        plan.nodes = _flag(num_nodes, "--num_nodes", plan)
    elif nodes_from_include is not None:
        plan.nodes = nodes_from_include
    elif hostfile is not None:
        _hostfile_nodes(plan, files, hostfile, base)
    else:
        plan.nodes = Sourced(1, "one node (no hostfile and no --num_nodes)", None, default=True)
    _world(plan)
    plan.distributed = True


# ---- torchrun ----------------------------------------------------------------------------


def _torchrun_procs(plan: LaunchPlan, nproc: Arg | None) -> Sourced | None:
    """--nproc_per_node (default 1; gpu/auto = the visible devices)."""
    if nproc is None:
        return Sourced(1, "torchrun's default --nproc_per_node 1", plan.span, default=True)
    if isinstance(nproc.value, str) and nproc.value in _DEVICE_WORDS:
        if plan.visible_devices is not None and plan.visible_devices.value is not None:
            count = len(plan.visible_devices.value)
            return Sourced(count, f"--nproc_per_node {nproc.value} = {plan.visible_devices.origin}", nproc.span)
        if plan.visible_devices is None and (gpus := granted_gpus(plan)) is not None:
            return Sourced(gpus.value, f"--nproc_per_node {nproc.value} = {gpus.origin}", nproc.span)
        return None
    return _flag(nproc, "--nproc_per_node", plan)


def _torchrun(plan: LaunchPlan, files: Files, base: Path) -> None:
    """--nproc_per_node × --nnodes (default 1; a range is unknown)."""
    opts = plan.launcher_args
    procs = _torchrun_procs(plan, opts.get("nproc_per_node"))
    if procs is not None:
        plan.procs_per_node = procs
    nnodes = opts.get("nnodes")
    if nnodes is None:
        plan.nodes = Sourced(1, "torchrun's default --nnodes 1", None, default=True)
    elif isinstance(nnodes.value, str):
        low, _, high = nnodes.value.partition(":")
        if launcher_int(low) is not None and (not high or high == low):
            plan.nodes = Sourced(launcher_int(low), said(nnodes, f"--nnodes {nnodes.value}", plan), nnodes.span)
        elif high:
            plan.notes.append(f"--nnodes {nnodes.value} is an elastic range: the node count is decided at run time")
    _world(plan)
    plan.distributed = True


# ---- accelerate --------------------------------------------------------------------------


def _accelerate_file(plan: LaunchPlan, files: Files, base: Path, config: Arg) -> dict[str, tuple]:
    """The accelerate config ``--config_file`` names, linked: its counts as key -> (value, span),
    and the DeepSpeed config its ``deepspeed_config_file`` names."""
    reference = files.resolve("accelerate-config", config.value if isinstance(config.value, str) else None, config.span or plan.span, base,
                              expect=ACCELERATE, assumed=config.assumed, workdir=plan.folder)
    plan.accelerate_config = reference
    plan.references.append(reference)
    mapping = reference.config
    values: dict[str, tuple] = {}
    if mapping is None:
        return values
    for key in ("num_processes", "num_machines", "mixed_precision", "distributed_type"):
        entry = mapping.entry(key)
        if entry is not None:
            values[key] = (entry.value.to_python(), entry.value.span)
    section = mapping.get("deepspeed_config")
    if isinstance(section, Mapping):
        entry = section.entry("deepspeed_config_file")
        if entry is not None and isinstance(entry.value, Scalar) and isinstance(entry.value.value, str):
            ds_base = Path(reference.document.path).parent
            ref = files.resolve("deepspeed", entry.value.value, entry.value.span, ds_base, expect=DEEPSPEED, workdir=plan.folder)
            plan.deepspeed = ref
            plan.references.append(ref)
    return values


def _flag_or_file(plan: LaunchPlan, key: str, file_values: dict[str, tuple]) -> Sourced | None:
    """``--key N`` on the command line, else ``key: N`` in the accelerate config. A flag given
    with a value dslint cannot read (``--num_processes=${GPU}``) still overrides the config
    (accelerate's command line wins): the count is then unknown, not the config's."""
    found = _flag(plan.launcher_args.get(key), f"--{key}", plan)
    if found is not None or key in plan.launcher_args:
        return found
    if key in file_values and launcher_int(file_values[key][0]) is not None:
        value, span = file_values[key]
        return Sourced(launcher_int(value), f"{key}: {value} in {where(span)}", span)
    return None


def _accelerate(plan: LaunchPlan, files: Files, base: Path) -> None:
    """--num_processes (total, all machines) over the config file's."""
    opts = plan.launcher_args
    config = opts.get("config_file")
    file_values = _accelerate_file(plan, files, base, config) if config is not None else {}
    total = _flag_or_file(plan, "num_processes", file_values)
    machines = _flag_or_file(plan, "num_machines", file_values)
    if machines is not None:
        plan.nodes = machines
    plan.world_size = total
    if total is not None and plan.nodes is not None and plan.nodes.value and total.value % plan.nodes.value == 0:
        plan.procs_per_node = Sourced(total.value // plan.nodes.value, f"{total.origin} over {plan.nodes.value} machine(s)", total.span)
    if "deepspeed_config_file" in opts and isinstance(opts["deepspeed_config_file"].value, str):
        arg = opts["deepspeed_config_file"]
        ref = files.resolve("deepspeed", arg.value, arg.span or plan.span, base, expect=DEEPSPEED, assumed=arg.assumed,
                            workdir=plan.folder)
        plan.deepspeed = ref
        plan.references.append(ref)
    plan.distributed = True


# ---- console launchers -------------------------------------------------------------------


def _swift(plan: LaunchPlan, files: Files, base: Path) -> None:
    """torchrun only when NPROC_PER_NODE or NNODES is set, else one process."""
    nproc = _env_int(plan.env, "NPROC_PER_NODE")
    nnodes = _env_int(plan.env, "NNODES")
    plan.distributed = "NPROC_PER_NODE" in plan.env or "NNODES" in plan.env
    if not plan.distributed:
        _one_node(plan, f"{plan.entry or 'ms-swift'} runs one process when neither NPROC_PER_NODE nor NNODES is set")
        return
    plan.procs_per_node = nproc if "NPROC_PER_NODE" in plan.env else Sourced(1, "torchrun's default of one process per node (NPROC_PER_NODE is not set)", None, default=True)
    plan.nodes = nnodes if "NNODES" in plan.env else Sourced(1, "NNODES is not set: one node", None, default=True)
    _world(plan)


def _llamafactory(plan: LaunchPlan, files: Files, base: Path) -> None:
    """torchrun when FORCE_TORCHRUN is truthy or several devices are visible; NPROC_PER_NODE
    defaults to the visible devices."""
    force = plan.env.get("FORCE_TORCHRUN")
    forced = force is not None and (env_text(force)[0] or "").lower() in TRUTHY
    devices = plan.visible_devices.value if plan.visible_devices is not None else None
    plan.distributed = True if forced or (devices is not None and len(devices) > 1) else (False if devices is not None else None)
    if not forced and devices is not None and len(devices) <= 1:
        _one_node(plan, f"llamafactory-cli runs one process: FORCE_TORCHRUN is not set and {plan.visible_devices.origin}")
        return
    if not forced and devices is None:
        plan.notes.append("llamafactory-cli uses torchrun only when FORCE_TORCHRUN is set or several devices are visible; the device count is unknown")
        return
    if "NPROC_PER_NODE" in plan.env:
        plan.procs_per_node = _env_int(plan.env, "NPROC_PER_NODE")
    elif devices is not None:
        plan.procs_per_node = Sourced(len(devices), f"NPROC_PER_NODE defaults to the visible devices ({plan.visible_devices.origin})", plan.visible_devices.span, default=True)
    plan.nodes = _env_int(plan.env, "NNODES") if "NNODES" in plan.env else Sourced(1, "NNODES is not set: one node", None, default=True)
    _world(plan)


def _python(plan: LaunchPlan, files: Files, base: Path) -> None:
    """``python train.py``: one process, unless the script itself is started once per rank by
    its caller (``mpirun -np 8 bash train.sh`` in another script or the README): then each copy
    is one rank of a job whose size the caller's launcher sets (Megatron's ``--use-mpi`` reads it
    from ``OMPI_COMM_WORLD_SIZE``), which dslint does not resolve."""
    called = _ranked_caller(plan, files)
    if called is not None:
        plan.distributed = True
        plan.notes.append(f"{called.where()} starts this script with {called.ranks}: one process per rank, as many as it starts")
        return
    plan.world_size = Sourced(1, "a plain python process (no distributed launcher)", plan.command.command.name.span, default=True)
    plan.distributed = False


def _ranked_caller(plan: LaunchPlan, files: Files):
    """A call of the launch's script under a launcher that starts it once per rank, or None."""
    from dslint.launch.callers import calls_of

    source = getattr(plan.origin, "source", None)
    path = getattr(source, "path", None)
    if path is None or getattr(source, "virtual", False) or not Path(path).is_file():
        return None
    origin = Path(path).resolve()
    root = files.root(origin.parent) or origin.parent
    return next((call for call in calls_of(origin, root) if call.ranks is not None), None)


#: launcher kind (dslint.launch.commands) -> the function that sets the plan's world from its flags and environment.
WORLDS: dict[str, Callable[[LaunchPlan, Files, Path], None]] = {
    "deepspeed": _deepspeed,
    "torchrun": _torchrun,
    "accelerate": _accelerate,
    "swift": _swift,
    "megatron": _swift,
    "llamafactory": _llamafactory,
    "python": _python,
}
