"""Multi-node layouts: the node launches of one job, read together.

A job on N machines is started once per machine. Each start is a *node launch*: it says how
many nodes there are, which one it is (its node rank), how many processes it starts, and where
the nodes meet (the master address and port). Who reads which value:

- ``torchrun`` / ``python -m torch.distributed.run`` (torch 2.13): ``--nnodes``, ``--node_rank`` (default 0),
  ``--master_addr`` (default 127.0.0.1), ``--master_port`` (default 29500), or
  ``--rdzv_endpoint`` (torch/distributed/run.py:426-440, 621-651, 790-792). With the default
  static rendezvous the node of rank 0 hosts the TCPStore and every other node connects to the
  master address (elastic/rendezvous/static_tcp_rendezvous.py:62-78); another rendezvous
  backend assigns node ranks itself (run.py:860-868).
- ``swift``/``megatron`` (ms-swift) and ``llamafactory-cli``: the environment variables
  ``NNODES``, ``NODE_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``, ``NPROC_PER_NODE``, handed to
  torchrun (ms-swift swift/cli/main.py:78-82; LLaMA-Factory launcher.py:64-68). A variable the
  script does not set may come from the caller (a scheduler sets them), so it is unknown here.
- ``accelerate launch``: ``--num_machines``, ``--machine_rank``, ``--main_process_ip``,
  ``--main_process_port`` over the config file's ``num_machines``, ``machine_rank`` (default 0),
  ``main_process_ip``, ``main_process_port`` (accelerate 1.15 commands/config/config_args.py:180-187);
  each machine starts ``num_processes // num_machines`` processes (utils/launch.py:216-224). With
  ``distributed_type: DEEPSPEED`` and a multi-node launcher other than ``standard`` (``pdsh``, the
  default, and the MPI ones) one command starts every machine through the deepspeed launcher
  (utils/launch.py:452-487); ``nossh`` is per machine again, with ``--node_rank``.
- ``deepspeed`` (0.19.8): one command starts every host of the hostfile (pdsh or MPI,
  launcher/runner.py:535-616); with ``--no_ssh`` it is run on each node with ``--node_rank``,
  which must be in [0, hosts) (runner.py:530-532).

**What makes one layout.** Launches are nodes of one job only when something ties them; looking
alike does not. A launch is a whole job by itself (``whole_job``), a layout of its own, when it
starts every node itself (a hostfile, pdsh), when it is an accelerate config that is every
node's template, when its node rank is only known at run time (``--node_rank $SLURM_NODEID``,
a ``$NODE_RANK`` the caller sets, a dynamic rendezvous: the same launch runs on every node), or
when the scheduler places it (srun or mpirun starts it, or it runs inside an sbatch job). Two
such jobs with the same node count and port are two jobs, never each other's nodes.

The other node launches have a node rank written (or the launcher's default). They are one
layout when they are written in the same folder, run the same launcher and program, and name
the same rendezvous: the same node count, the same master port (written, or the launcher's
default) and the same master host (``_by_address``: a loopback or unset address on one node
is that node's mistake, not another job). The node scripts of one job are copies of each other
that differ in each node's own values (rank, address, devices, sometimes its data), so what
they train is not compared. Ranks decide the rest: node launches with different ranks are the
nodes of one job; two with the same rank written are one job with a rank left unchanged only
when they pass the program the same arguments (a copied script), and otherwise several jobs
that happen to look alike (``several_jobs``), as are two that each start the launcher's default
rank (nothing written ties them) and a group with more node launches than its node count.
accelerate configs that no launch names are node launches of their own when they have
``num_machines`` above 1.

Nothing here decides a verdict; ``dslint.rules.layout`` does, from these facts.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from typing import Any

from dslint.documents.model import Document, Mapping, Scalar
from dslint.launch.plan import LaunchPlan, Sourced
from dslint.source import Span
from dslint.values import as_int

LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost", "ip6-loopback", "::1", "[::1]", "0:0:0:0:0:0:0:1",
                            "[0:0:0:0:0:0:0:1]", "0.0.0.0"})
ENV_LAUNCHERS = ("swift", "megatron", "llamafactory")
# accelerate's DeepSpeed multi-node launchers that start every machine from one command.
ACCELERATE_ONE_COMMAND = ("pdsh", "openmpi", "mvapich", "impi", "mpich", "slurm")
# Keys of an accelerate config that differ from machine to machine, or that the layout compares.
ACCELERATE_NODE_KEYS = frozenset({"machine_rank", "num_machines", "num_processes", "main_process_ip", "main_process_port",
                                  "gpu_ids", "same_network", "rdzv_backend"})


def is_loopback(address: str | None) -> bool:
    if not address:
        return False
    text = address.strip().lower()
    return text in LOOPBACK_NAMES or text.startswith("127.")


def _where(span: Span | None) -> str:
    if span is None:
        return "the command line"
    return f"{span.path}:{span.source.position(span.start)[0]}"


@dataclass(eq=False)
class Node:
    """One node launch: a launch plan, or an accelerate config no launch names."""

    document: Document  # the script (or YAML) that holds the launch, or the accelerate config
    span: Span  # the launch command, or the config's first key
    launcher: str  # torchrun | deepspeed | accelerate | swift | megatron | llamafactory | accelerate-config
    program: str | None  # what runs: "swift sft", "train.py", a module
    plan: LaunchPlan | None = None
    nodes: Sourced | None = None  # the node count this launch declares
    rank: Sourced | None = None  # value None: decided at run time (one launch serves every rank)
    procs: Sourced | None = None  # processes this node starts
    master_addr: Sourced | None = None  # value None: not known statically
    master_port: Sourced | None = None
    devices: Sourced | None = None  # the visible devices (a list of ids)
    procs_follow_devices: bool = False  # the process count is the number of visible devices
    one_command: bool = False  # starts every node's processes itself (deepspeed hostfile, pdsh)
    template: bool = False  # an accelerate config without machine_rank: every node's, not one node's
    identity: tuple = ()  # the program's arguments, to tell a copied script from another job's
    outside: bool = False  # read from the folder to complete the layout, not listed in the run: no findings

    @property
    def folder(self) -> str:
        return os.path.dirname(os.path.realpath(self.document.path))

    @property
    def node_count(self) -> int | None:
        value = self.nodes.value if self.nodes is not None else None
        return value if isinstance(value, int) else None

    @property
    def multi(self) -> bool:
        return (self.node_count or 0) > 1

    @property
    def static_rank(self) -> int | None:
        value = self.rank.value if self.rank is not None else None
        return value if isinstance(value, int) else None

    def where(self) -> str:
        return _where(self.span)

    def describe(self) -> str:
        rank = self.static_rank
        if rank is not None:
            return f"node rank {rank} ({self.where()})"
        return f"the launch at {self.where()}"


@dataclass(eq=False)
class Layout:
    """The node launches of one job."""

    nodes: list[Node]
    why: str  # what grouped them, said in explain and in messages
    several_jobs: bool = False  # look-alike launches of several jobs: not judged across nodes
    alone: bool = False  # one launch that is a whole job by itself (whole_job), never a node of another's

    @property
    def reference(self) -> Node:
        """The node the others are compared with: the one of rank 0, else the first."""
        return next((n for n in self.nodes if n.static_rank == 0), self.nodes[0])

    @property
    def static(self) -> bool:
        """Every node launch has a rank known before run time."""
        return all(n.static_rank is not None for n in self.nodes)

    def world_size(self) -> int | None:
        """The processes of all nodes, when every node's count is known and the nodes are all here."""
        ref = self.reference.node_count
        if not self.static or ref is None or len(self.nodes) != ref or self.several_jobs:
            return None
        counts = [n.procs.value if n.procs is not None else None for n in self.nodes]
        if any(not isinstance(c, int) for c in counts):
            return None
        return sum(counts)


# ---- node launches from plans ---------------------------------------------------------------------


def _arg_value(arg) -> tuple[Any, bool]:
    """(value, static) of a launch flag: an assumed default (`${X:-1}`) is the caller's to change."""
    if arg is None:
        return None, False
    if arg.assumed or arg.value is None or arg.value is True:
        return None, False
    return arg.value, True


def _from_flag(arg, name: str, as_number: bool) -> Sourced | None:
    if arg is None:
        return None
    value, static = _arg_value(arg)
    shown = f"--{name} {arg.value if arg.value not in (None, True) else ''}".rstrip()
    if not static:
        return Sourced(None, f"--{name} at {_where(arg.span)} (known only at run time)", arg.span)
    number = as_int(value, argparse_text=True) if as_number else None
    if as_number and number is None:
        return Sourced(None, f"--{name} {value} at {_where(arg.span)} (not a number)", arg.span)
    return Sourced(number if as_number else str(value), f"{shown} ({_where(arg.span)})", arg.span)


def _from_env(env: dict, name: str, as_number: bool) -> Sourced | None:
    value = env.get(name)
    if value is None:
        return None
    span = getattr(value, "span", None)
    text = getattr(value, "value", None)
    if text is None:
        return Sourced(None, f"{name} at {_where(span)} (known only at run time)", span)
    number = as_int(text, argparse_text=True) if as_number else None
    if as_number and number is None:
        return Sourced(None, f"{name}={text} at {_where(span)} (not a number)", span)
    return Sourced(number if as_number else text, f"{name}={text} ({_where(span)})", span)


def _from_key(mapping: Mapping | None, key: str, as_number: bool, where: str) -> Sourced | None:
    if mapping is None:
        return None
    entry = mapping.entry(key)
    if entry is None or not isinstance(entry.value, Scalar):
        return None
    raw = entry.value.value
    if raw is None:
        return None
    if as_number:
        number = as_int(raw)
        if number is None:
            return Sourced(None, f"{key}: {raw} in {where} (not a number)", entry.value.span)
        return Sourced(number, f"{key}: {raw} ({_where(entry.value.span)})", entry.value.span)
    return Sourced(str(raw), f"{key}: {raw} ({_where(entry.value.span)})", entry.value.span)


def _identity(plan: LaunchPlan) -> tuple:
    items = []
    for name, arg in sorted(plan.args.items()):
        value = arg.value
        items.append((name, repr(value) if not isinstance(value, str) else value))
    return tuple(items)


def node_of(plan: LaunchPlan) -> Node | None:
    """The node launch a plan is, or None when it is not a multi-node launch."""
    if plan.launcher in ("torchrun",):
        node = _torchrun_node(plan)
    elif plan.launcher in ENV_LAUNCHERS:
        node = _env_node(plan)
    elif plan.launcher == "accelerate":
        node = _accelerate_node(plan)
    elif plan.launcher == "deepspeed":
        node = _deepspeed_node(plan)
    else:
        return None
    if node is None or not node.multi:
        return None
    return node


def _base(plan: LaunchPlan) -> Node:
    command = plan.command
    program_word = getattr(command, "program", None) if command is not None else None
    program = plan.entry or (program_word.value if program_word is not None else None)
    node = Node(plan.origin, plan.span, plan.launcher, program, plan=plan, identity=_identity(plan))
    node.procs = plan.procs_per_node
    node.devices = plan.visible_devices
    procs, devices = plan.procs_per_node, plan.visible_devices
    if procs is not None and devices is not None and devices.value is not None and procs.value == len(devices.value):
        node.procs_follow_devices = procs.span is devices.span or (devices.origin in procs.origin)
    return node


def _torchrun_node(plan: LaunchPlan) -> Node:
    node = _base(plan)
    opts = plan.launcher_args
    node.nodes = plan.nodes
    backend = opts.get("rdzv_backend")
    backend_value, _ = _arg_value(backend)
    endpoint = opts.get("rdzv_endpoint")
    if backend is not None and backend_value != "static":
        node.rank = Sourced(None, f"assigned by the {backend_value or 'given'} rendezvous ({_where(backend.span)})", backend.span)
    elif "node_rank" in opts:
        node.rank = _from_flag(opts["node_rank"], "node_rank", True)
    else:
        node.rank = Sourced(0, "torchrun's default --node_rank 0", None, default=True)
    if endpoint is not None:
        value, static = _arg_value(endpoint)
        if static and isinstance(value, str) and value:
            host, _, port = value.rpartition(":") if ":" in value else (value, "", "")
            node.master_addr = Sourced(host or value, f"--rdzv_endpoint {value} ({_where(endpoint.span)})", endpoint.span)
            if port:
                node.master_port = Sourced(as_int(port), f"--rdzv_endpoint {value} ({_where(endpoint.span)})", endpoint.span)
        else:
            node.master_addr = Sourced(None, f"--rdzv_endpoint at {_where(endpoint.span)} (known only at run time)", endpoint.span)
        return node
    node.master_addr = _from_flag(opts.get("master_addr"), "master_addr", False) or \
        Sourced("127.0.0.1", "torchrun's default --master_addr 127.0.0.1", None, default=True)
    node.master_port = _from_flag(opts.get("master_port"), "master_port", True) or \
        Sourced(29500, "torchrun's default --master_port 29500", None, default=True)
    return node


def _env_node(plan: LaunchPlan) -> Node | None:
    if plan.distributed is False:
        return None
    node = _base(plan)
    node.nodes = _from_env(plan.env, "NNODES", True)
    # Unset, these come from the caller's environment (a scheduler's), so they stay unknown.
    node.rank = _from_env(plan.env, "NODE_RANK", True) or Sourced(None, "NODE_RANK is not set in the script", None)
    node.master_addr = _from_env(plan.env, "MASTER_ADDR", False)
    node.master_port = _from_env(plan.env, "MASTER_PORT", True)
    return node


def _accelerate_node(plan: LaunchPlan) -> Node:
    node = _base(plan)
    opts = plan.launcher_args
    reference = plan.accelerate_config
    config = reference.config if reference is not None else None
    where = reference.raw if reference is not None else "the accelerate config"
    node.nodes = plan.nodes
    if _one_command(config, opts):
        node.one_command = True
    backend = opts.get("rdzv_backend")
    backend_value, _ = _arg_value(backend)
    if backend is not None and backend_value != "static":
        # torchrun reads the node rank only for the static rendezvous (torch run.py:861-868, 890-891); the
        # config's rdzv_backend never reaches it: the flag's default "static" is not None, so the file's
        # value is not filled in (accelerate 1.15 commands/launch.py:327-331, 1278-1283).
        node.rank = Sourced(None, f"assigned by the {backend_value or 'given'} rendezvous ({_where(backend.span)})", backend.span)
    else:
        node.rank = _from_flag(opts.get("machine_rank"), "machine_rank", True) or _from_key(config, "machine_rank", True, where)
    if node.rank is None:
        node.rank = Sourced(0, "accelerate's default machine_rank 0", None, default=True)
    node.master_addr = _from_flag(opts.get("main_process_ip"), "main_process_ip", False) or \
        _from_key(config, "main_process_ip", False, where)
    node.master_port = _from_flag(opts.get("main_process_port"), "main_process_port", True) or \
        _from_key(config, "main_process_port", True, where) or \
        Sourced(29500, "accelerate's default main_process_port 29500", None, default=True)
    return node


def _one_command(config: Mapping | None, opts: dict) -> bool:
    """accelerate with DeepSpeed and a multi-node launcher that starts every machine itself."""
    kind = opts.get("use_deepspeed") is not None or (
        config is not None and isinstance(config.get("distributed_type"), Scalar)
        and str(config.get("distributed_type").value).upper() == "DEEPSPEED")
    if not kind:
        return False
    launcher = None
    arg = opts.get("deepspeed_multinode_launcher")
    if arg is not None:
        launcher, _ = _arg_value(arg)
    elif config is not None and isinstance(config.get("deepspeed_config"), Mapping):
        launcher = config.get("deepspeed_config").value_of("deepspeed_multinode_launcher")
    launcher = str(launcher or "pdsh").lower()  # accelerate's default (utils/launch.py:448-450)
    return launcher in ACCELERATE_ONE_COMMAND


def _deepspeed_node(plan: LaunchPlan) -> Node:
    node = _base(plan)
    opts = plan.launcher_args
    node.nodes = plan.nodes
    node.master_addr = _from_flag(opts.get("master_addr"), "master_addr", False)
    node.master_port = _from_flag(opts.get("master_port"), "master_port", True) or \
        Sourced(29500, "deepspeed's default --master_port 29500", None, default=True)
    if "no_ssh" in opts:
        node.rank = _from_flag(opts.get("node_rank"), "node_rank", True) or \
            Sourced(-1, "deepspeed's default --node_rank -1", None, default=True)
    else:
        node.one_command = True
    return node


def node_of_config(document: Document) -> Node | None:
    """An accelerate config that no launch names, read as the node launch it describes."""
    mapping = document.mapping
    if mapping is None or not mapping.entries:
        return None
    where = document.path
    first = mapping.entries[0]
    node = Node(document, first.key_span, "accelerate-config", None)
    node.nodes = _from_key(mapping, "num_machines", True, where)
    if not node.multi:
        return None
    node.one_command = _one_command(mapping, {})
    # A config that does not write machine_rank is a template for every node: each node passes
    # --machine_rank on its own command line (accelerate's config prompt and docs leave it out
    # for that), so the file is no node of its own and is judged alone.
    node.rank = _from_key(mapping, "machine_rank", True, where) or \
        Sourced(None, "machine_rank is not in the file: each node passes --machine_rank", None)
    node.template = node.rank.value is None
    node.master_addr = _from_key(mapping, "main_process_ip", False, where)
    node.master_port = _from_key(mapping, "main_process_port", True, where) or \
        Sourced(29500, "accelerate's default main_process_port 29500", None, default=True)
    total = _from_key(mapping, "num_processes", True, where)
    count = node.node_count
    if total is not None and isinstance(total.value, int) and total.value > 0 and count:
        node.procs = Sourced(total.value // count, f"{total.origin} over {count} machines", total.span)
    node.identity = tuple(sorted((e.key, repr(e.value.to_python())) for e in mapping.entries if e.key not in ACCELERATE_NODE_KEYS))
    return node


# ---- grouping ----------------------------------------------------------------------------------------


def layouts(plans: list[LaunchPlan], documents: list[Document]) -> list[Layout]:
    """Every multi-node layout of the run, and each plan's ``layout`` set to its own.

    A layout is complete whichever of its files the run lists: the other launch scripts of a
    node launch's folder are read too (``outside``), so that linting one node script in a
    pre-commit hook judges it with its partners, as linting the folder does.
    """
    from dslint.documents.model import ACCELERATE

    nodes: list[Node] = []
    for plan in plans:
        node = node_of(plan)
        if node is not None:
            nodes.append(node)
    nodes += sibling_nodes(nodes, documents)
    named = {id(p.accelerate_config.document) for p in plans if p.accelerate_config is not None and p.accelerate_config.document is not None}
    for document in documents:
        if document.kind == ACCELERATE and id(document) not in named:
            node = node_of_config(document)
            if node is not None:
                nodes.append(node)
    out = []
    groups: dict[tuple, list[Node]] = {}
    for node in nodes:
        alone = whole_job(node)
        if alone is not None:
            out.append(Layout([node], f"a whole job by itself: {alone}", alone=True))
            continue
        port = node.master_port.value if node.master_port is not None else None
        groups.setdefault((node.folder, node.launcher, node.program, node.node_count, port), []).append(node)
    for group in groups.values():
        for members in _by_address(group):
            members.sort(key=lambda n: (n.static_rank, n.document.path, n.span.start))
            out.append(Layout(members, _why(members), _several_jobs(members)))
    for layout in out:
        for member in layout.nodes:
            if member.plan is not None:
                member.plan.layout = layout
    return out


def whole_job(node: Node) -> str | None:
    """Why a node launch is a whole job by itself, never one node of another launch's job; None
    when it may be one.

    It is whole when it starts every node itself, when it is every node's template, when its
    node rank is only known at run time (the scheduler's ``$SLURM_NODEID``, a ``$NODE_RANK`` the
    caller sets, a dynamic rendezvous): then the same launch runs on each node, and when srun or
    mpirun starts it, or it runs inside an sbatch job: the scheduler places its nodes.
    """
    if node.one_command:
        return f"one {node.launcher} command starts every node ({node.where()})"
    if node.template:
        return "machine_rank is not in the config: each node passes its own"
    if node.static_rank is None:
        origin = node.rank.origin if node.rank is not None else "its node rank is not written"
        return f"its node rank is known only at run time ({origin}), so it runs on every node"
    if node.plan is not None:
        from dslint.launch.wrapped import scheduled

        why = scheduled(node.plan)
        if why is not None:
            return f"{why}, so the scheduler places its nodes"
    return None


def meeting_address(node: Node) -> str | None:
    """The master address written for a node launch when it names a host another machine reaches:
    not a default, not a loopback address, not known only at run time."""
    address = node.master_addr
    if address is None or address.default or not isinstance(address.value, str) or is_loopback(address.value):
        return None
    return address.value.strip().lower()


def _by_address(group: list[Node]) -> list[list[Node]]:
    """The node launches of one folder, program, node count and port, split by the host they meet at.

    Launches that name different hosts are different rendezvous, so different jobs. A launch that
    names none another machine can reach (a loopback or default address, one known at run time)
    joins the only host named, since that is its job's with the address left wrong or unset;
    among several hosts it is a job of its own kind.
    """
    named: dict[str, list[Node]] = {}
    rest: list[Node] = []
    for node in group:
        address = meeting_address(node)
        if address is None:
            rest.append(node)
        else:
            named.setdefault(address, []).append(node)
    if len(named) <= 1:
        return [group]
    return list(named.values()) + ([rest] if rest else [])


MAX_SIBLINGS = 64  # files looked at per folder
MAX_SIBLING_BYTES = 256 * 1024


def sibling_nodes(nodes: list[Node], documents: list[Document]) -> list[Node]:
    """Node launches in the folders of ``nodes`` that the run does not list, read to complete layouts."""
    from dslint.launch.link import Linker

    listed = {os.path.realpath(d.path) for d in documents if d.path and not d.path.startswith("<")}
    found: list[Document] = []
    for folder, (display, suffixes, words) in _wanted_folders(nodes).items():
        found += _sibling_scripts(folder, display, suffixes, words, listed)
    if not found:
        return []
    out = []
    for plan in Linker(found).plans():
        node = node_of(plan)
        if node is not None:
            node.outside = True
            out.append(node)
    return out


def _wanted_folders(nodes: list[Node]) -> dict[str, tuple[str, set[str], set[str]]]:
    """real folder -> (display folder, suffixes, words one of which a partner's text must contain)."""
    from dslint.documents.model import SCRIPT

    wanted: dict[str, tuple[str, set[str], set[str]]] = {}
    for node in nodes:
        # A whole job by itself has no partners to compare with; only per-node launches do.
        if node.plan is None or node.document.kind != SCRIPT or whole_job(node) is not None:
            continue
        display = os.path.dirname(node.document.path)
        suffix = os.path.splitext(node.document.path)[1].lower()
        entry = wanted.setdefault(node.folder, (display, set(), set()))
        entry[1].add(suffix)
        entry[2].add(_program_word(node))
    return wanted


def _sibling_scripts(folder: str, display: str, suffixes: set[str], words: set[str], listed: set[str]) -> list[Document]:
    """The scripts of ``folder`` the run does not list that may launch the same program."""
    from dslint.documents import Skipped, read_document
    from dslint.documents.model import SCRIPT

    try:
        names = sorted(os.listdir(folder))[:MAX_SIBLINGS]
    except OSError:
        return []
    found = []
    for name in names:
        real = os.path.join(folder, name)
        if os.path.splitext(name)[1].lower() not in suffixes or real in listed:
            continue
        try:
            if not os.path.isfile(real) or os.path.getsize(real) > MAX_SIBLING_BYTES:
                continue
            with open(real, "rb") as handle:
                data = handle.read()
            if not any(word.encode() in data for word in words):
                continue  # it cannot launch the same program: not worth parsing
            document = read_document(os.path.join(display, name), data)
        except (OSError, Skipped):
            continue
        except Exception:  # noqa: BLE001 - a sibling that cannot be read only leaves its layout incomplete
            continue
        if document.kind == SCRIPT:
            found.append(document)
    return found


def _program_word(node: Node) -> str:
    """A word any launch of the same program has in its text: the program file's name, or the
    console command (``swift sft`` → ``swift``)."""
    program = node.program or node.launcher
    return os.path.basename(program).split()[0] if program else node.launcher


def _several_jobs(members: list[Node]) -> bool:
    """More launches than nodes, or two of one rank that are not copies of each other."""
    count = members[0].node_count or 0
    if len(members) > count:
        return True
    by_rank: dict[int, Node] = {}
    for node in members:
        rank = node.static_rank
        if rank is None:
            continue
        other = by_rank.setdefault(rank, node)
        if other is not node and (other.rank.default or node.rank.default or not _copies(other, node)):
            return True  # a rank no script writes ties nothing: launches that each start the default
    return False


def _copies(a: Node, b: Node) -> bool:
    """Two node launches that pass their program the same arguments, every one of them known."""
    for node in (a, b):
        command = node.plan.command if node.plan is not None else None
        if command is not None and not getattr(command, "complete", True):
            return False
    return a.identity == b.identity


def colocated(layout: Layout) -> bool:
    """The nodes may share one machine: each lists its devices and no device is listed twice.

    A node without a device list binds devices 0..n-1 by local rank (every launcher sets the
    device from LOCAL_RANK), so two of them on one machine would share devices; a launch that
    serves every rank lists the same devices on each node.
    """
    seen: set[str] = set()
    for node in layout.nodes:
        devices = node.devices
        if devices is None or not isinstance(devices.value, list) or node.static_rank is None:
            return False
        ids = {str(d).strip() for d in devices.value}
        if ids & seen:
            return False
        seen |= ids
    return len(layout.nodes) > 1


def _why(members: list[Node]) -> str:
    first = members[0]
    folder = os.path.dirname(first.document.path) or "."
    if first.launcher == "accelerate-config":
        what = "accelerate configs"
    else:
        what = f"{first.launcher} launches of {first.program or 'one program'}"
    count = len(members)
    port = first.master_port.value if first.master_port is not None else None
    address = next((a for a in map(meeting_address, members) if a is not None), None)
    meet = f"{first.node_count} nodes" + (f", master {address or 'port'}" if address or port is not None else "") + \
        (f"{':' if address else ' '}{port}" if port is not None else "")
    return f"{count} node launch{'es' if count != 1 else ''} in {folder}/: {what} ({meet})"


def rank_counts(layout: Layout) -> Counter:
    return Counter(n.static_rank for n in layout.nodes if n.static_rank is not None)


__all__ = ["Layout", "Node", "colocated", "is_loopback", "layouts", "meeting_address", "node_of", "node_of_config", "rank_counts",
           "sibling_nodes", "whole_job"]
