"""Multi-node layouts (DS313-DS318): the node launches of one job, checked against each other.

A layout is what ``dslint.launch.layout`` groups (the rule page of `node-ranks` says how): the
node launches of one job on several machines. Each rule page names the launcher behaviour it
mirrors. Look-alike launches of several jobs are judged node by node only.
"""

from __future__ import annotations

from dslint.diagnostics import Edit, Finding, Fix, Related, Severity
from dslint.documents.model import Scalar
from dslint.launch.layout import Layout, Node, colocated, is_loopback, rank_counts
from dslint.rule import rule
from dslint.values import as_int


def _related(node: Node, what: str) -> Related:
    return Related(f"{what}: {node.describe()}", node.span)


def _at(sourced, node: Node):
    return sourced.span if sourced is not None and sourced.span is not None else node.span


def _across(layout: Layout) -> bool:
    """Whether the layout's nodes may be compared with each other."""
    return len(layout.nodes) >= 2 and not layout.several_jobs


# ---- ranks ------------------------------------------------------------------------------------------


@rule("DS313", "node-ranks", severity="error", target="layout")
def node_ranks(layout: Layout, context):
    """The node ranks of a multi-node job are not 0..N-1, each once.

    ## What it checks
    Every node launch of a multi-node job (see *Multi-node layouts* below) has a node rank:
    torchrun's `--node_rank`, ms-swift's and LLaMA-Factory's `NODE_RANK`, accelerate's
    `--machine_rank` / `machine_rank`, deepspeed's `--node_rank` with `--no_ssh`.
    - A rank outside 0..N-1 for the node count N the launch declares. Error. deepspeed asserts
      `0 <= node_rank < len(active_resources)` ("Launching training without ssh, but --node_rank
      is not set correctly", deepspeed 0.19.8 launcher/runner.py:530-532; its default is -1).
    - Two node launches of one layout with the same rank. Error.
    - Node launches of one layout, each with its rank written, that leave ranks of 0..N-1 to
      no launch. Warning: the missing node's script may live elsewhere.

    ## Why it matters
    With torchrun's static rendezvous the store is sized for N nodes and the node of rank 0
    hosts it (torch 2.13 elastic/rendezvous/static_tcp_rendezvous.py:62-78); the agent of rank 0 then
    waits for the role information of every rank 0..N-1 (elastic/agent/server/api.py:625-660).
    Two nodes of rank 0 each host a store of their own, and a rank that no node takes is waited
    for: the job hangs at start-up until the rendezvous times out (600 s by default), on every
    node it holds.

    ## Multi-node layouts
    A node launch is a launch that declares more than one node: `torchrun --nnodes`, `NNODES`
    for `swift`/`megatron`/`llamafactory-cli`, accelerate's `num_machines`, `deepspeed --no_ssh`
    with a hostfile; an accelerate config no launch names, with `num_machines` above 1 and its
    `machine_rank` written, is one too. Without `machine_rank` such a config is every node's
    template (each node passes `--machine_rank`, and the file fills only what the command line
    left unset: accelerate 1.15 commands/launch.py:1278-1283) and is judged alone. Node launches are one layout when they are written in the same folder, run the same
    launcher and program, and name the same rendezvous: the same node count and master port
    (written, or the launcher's default). Nothing else about them is compared to group them:
    the node scripts of one job are copies that differ in each node's own values, sometimes in
    its data. Launches with different ranks are then the nodes of one job. Two with the same
    rank are one job with a rank left unchanged only when they pass the program the same
    arguments (a copied script); otherwise, as when there are more launches than nodes, the
    group is several look-alike jobs and no rule compares its launches. A launch whose rank is
    only known at run time (`--node_rank $NODE_RANK`) serves every rank. One command that
    starts every node (`deepspeed --hostfile`, accelerate's `pdsh` launcher) is a layout of its
    own. No file or folder name is read. `dslint explain` shows each launch's layout.

    ## Example
    ```sh
    # node0.sh
    torchrun --nnodes 2 --node_rank 0 --master_addr 10.0.0.1 --master_port 29500 --nproc_per_node 8 train.py
    # node1.sh: copied, the rank not changed
    torchrun --nnodes 2 --node_rank 0 --master_addr 10.0.0.1 --master_port 29500 --nproc_per_node 8 train.py
    ```
    Use instead: `--node_rank 1` in node1.sh.
    """
    for node in layout.nodes:
        count, rank = node.node_count, node.static_rank
        if node.outside or count is None or rank is None or 0 <= rank < count:
            continue
        what = "--no_ssh without --node_rank" if node.rank.default and node.launcher == "deepspeed" else f"node rank {rank}"
        yield Finding(
            _at(node.rank, node),
            f"{what} is outside 0..{count - 1} for {count} nodes",
            note="the rendezvous waits for ranks no node takes",
            related=[Related(f"node count from {node.nodes.origin}", node.nodes.span)],
        )
    if not _across(layout):
        return
    seen: dict[int, Node] = {}
    duplicated = False
    for node in layout.nodes:
        rank = node.static_rank
        if rank is None or node.node_count is None or not 0 <= rank < node.node_count:
            continue
        if rank in seen:
            duplicated = True
            first = seen[rank]
            if node.outside:  # report it where the run can: at the launch it lists
                node, first = first, node
            if node.outside:
                continue
            yield Finding(
                _at(node.rank, node),
                f"node rank {rank} is also the rank of {first.where()}",
                note="two nodes claim it, and the rendezvous waits for a missing rank",
                related=[_related(first, "the other launch"), Related(f"this rank from {node.rank.origin}", node.rank.span)],
            )
            continue
        seen[rank] = node
    reference = layout.reference
    count = reference.node_count
    if duplicated or not layout.static or count is None or any(n.node_count != count for n in layout.nodes):
        return
    missing = [r for r in range(count) if r not in rank_counts(layout)]
    at = next((n for n in [reference, *layout.nodes] if not n.outside), None)
    if missing and at is not None:
        shown = ", ".join(str(r) for r in missing)
        yield Finding(
            _at(at.nodes, at),
            f"{count} nodes, but no node launch of this layout starts rank{'s' if len(missing) > 1 else ''} {shown}",
            note=f"the rendezvous waits for it; {layout.why}",
            related=[_related(n, "node launch") for n in layout.nodes],
            severity=Severity.WARNING,
        )


# ---- the master address ------------------------------------------------------------------------------


def _value(sourced):
    return sourced.value if sourced is not None else None


@rule("DS315", "loopback-master-address", severity="error", target="layout")
def loopback_master_address(layout: Layout, context):
    """A node other than rank 0 is told to meet the others at localhost.

    ## What it checks
    A multi-node launch whose master address is `localhost`, `127.x.x.x`, `::1` or `0.0.0.0`
    (`--master_addr`, torchrun's default 127.0.0.1 when it is not given, `MASTER_ADDR`,
    `main_process_ip`, the host of `--rdzv_endpoint`), where the launch is
    - a node of rank 1 or more;
    - run on every node, its rank known only at run time (`--node_rank $NODE_RANK`), or decided
      by a dynamic rendezvous (every node with a loopback endpoint hosts a store of its own);
    - one command that starts every host of a hostfile (`deepspeed --hostfile`, accelerate's
      `pdsh` launcher): the address is handed to every host.
    The node of rank 0 may use a loopback address: it hosts the store. An address the caller
    may override (`${MASTER_ADDR:-127.0.0.1}`) is not judged, nor an unset `MASTER_ADDR` of
    ms-swift or LLaMA-Factory (a scheduler may set it).

    Several "nodes" may also run on one machine (a test of a multi-node setup): then loopback
    is right. A layout whose nodes each list their devices, no device twice, is read as one
    machine shared that way and not judged; a node without a device list binds devices 0..n-1
    by its local ranks, and a launch that serves every rank lists the same devices on each, so
    neither can share. A node of rank 1 or more with no other node of its job in sight (alone,
    or among look-alike jobs) gets a warning, since its partners are not known.

    ## Why it matters
    With torchrun's static rendezvous the node of rank 0 hosts the TCPStore and the others
    connect to `master_addr:master_port` (torch 2.13 elastic/rendezvous/static_tcp_rendezvous.py:62-78;
    run.py:630-637: "For single node multi-proc training the --master-addr can simply be
    127.0.0.1"). Told to connect to 127.0.0.1, a node reaches itself, where no store listens,
    and waits until the rendezvous times out; rank 0 waits for it. deepspeed passes its
    `--master_addr` to the launcher on every host (launcher/multinode_runner.py:110 for pdsh,
    :236 and :310 for the MPI launchers).

    ## Example
    ```sh
    # node1.sh
    torchrun --nnodes 2 --node_rank 1 --master_addr 127.0.0.1 --nproc_per_node 8 train.py
    ```
    Use instead: `--master_addr <the address of the node of rank 0>`.
    """
    shared_machine = colocated(layout)
    for node in layout.nodes:
        if node.outside or not node.multi or node.master_addr is None:
            continue
        address = node.master_addr.value
        if not isinstance(address, str) or not is_loopback(address):
            continue
        rank = node.static_rank
        severity = None
        if node.one_command:
            why = f"one command starts all {node.node_count} nodes and hands each this address"
        elif rank == 0:
            continue
        elif rank is not None:
            if shared_machine:
                continue
            why = f"node rank {rank} connects to itself, not to the node of rank 0"
            if layout.several_jobs or len(layout.nodes) < 2:
                why += " (unless the nodes share one machine)"
                severity = Severity.WARNING
        else:
            why = f"this launch runs on all {node.node_count} nodes, and those other than rank 0 connect to themselves"
            if node.devices is not None and node.devices.value is None:
                continue  # its devices are only known at run time: the nodes may share a machine
        related = [Related(f"node count from {node.nodes.origin}", node.nodes.span)]
        if node.rank is not None and rank is not None:
            related.append(Related(f"node rank from {node.rank.origin}", node.rank.span))
        if node.master_addr.span is not None and node.master_addr.span.source is not node.span.source:
            related.append(Related(f"the launch of {node.describe()}", node.span))
        yield Finding(
            _at(node.master_addr, node),
            f"master address {address} on a {node.node_count}-node job",
            note=why,
            help="use the address of the node of rank 0",
            related=related,
            severity=severity,
        )


# ---- processes and devices ----------------------------------------------------------------------------


@rule("DS314", "uneven-node-processes", severity="warning", target="layout")
def uneven_node_processes(layout: Layout, context):
    """The nodes of one job start different numbers of processes.

    ## What it checks
    The processes each node launch of a layout starts (`--nproc_per_node`, `NPROC_PER_NODE`,
    `--num_gpus`, accelerate's `num_processes // num_machines`), each compared with the node of
    rank 0. A node whose count is its visible device count is left to `node-visible-devices`.
    Nodes that share one machine (each lists its own devices, none twice; see
    `loopback-master-address`) are sized on purpose and not judged.

    ## Why it matters
    torchrun accepts nodes of different sizes: the agents sum their local world sizes
    (torch 2.13 elastic/agent/server/api.py:585-660). So the job starts, with a world size that is
    the sum, not `nodes × processes per node` that each node script and its batch arithmetic
    assume (`--gradient_accumulation_steps $(expr 32 / $nproc_per_node / $nnodes)`, DeepSpeed's
    `train_batch_size = micro × accumulation × world size` check). Megatron-style tensor and
    pipeline groups of consecutive ranks then straddle nodes. Usually one script was edited and
    the other forgotten.

    ## Example
    ```sh
    # node0.sh
    NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 NPROC_PER_NODE=8 swift sft --model Qwen/Qwen3-8B
    # node1.sh
    NNODES=2 NODE_RANK=1 MASTER_ADDR=10.0.0.1 NPROC_PER_NODE=4 swift sft --model Qwen/Qwen3-8B
    ```
    Use instead: `NPROC_PER_NODE=8` on both nodes.
    """
    if not _across(layout) or colocated(layout):
        return
    reference = layout.reference
    ref = _value(reference.procs)
    if not isinstance(ref, int) or reference.procs.default:
        return
    for node in layout.nodes:
        procs = _value(node.procs)
        if node is reference or node.outside or not isinstance(procs, int) or procs == ref or node.procs_follow_devices \
                or node.procs.default:
            continue
        world = layout.world_size()
        total = f"the job has {world} processes, not {ref * len(layout.nodes)}" if world is not None else "the world size is their sum"
        yield Finding(
            _at(node.procs, node),
            f"{procs} processes on this node, {ref} on {reference.describe()}",
            note=total,
            related=[Related(f"{reference.describe()}: {reference.procs.origin}", reference.procs.span),
                     Related(f"this node: {node.procs.origin}", node.procs.span)],
        )


@rule("DS317", "node-visible-devices", severity="warning", target="layout")
def node_visible_devices(layout: Layout, context):
    """One node's visible devices leave it fewer processes than the other nodes.

    ## What it checks
    In a layout, a node launch whose process count is its number of visible devices
    (`CUDA_VISIBLE_DEVICES`, `ASCEND_RT_VISIBLE_DEVICES`) and whose list is shorter than another
    node's. The process count follows the devices with torchrun `--nproc_per_node gpu|auto`
    (torch distributed/run.py:745-785 counts the visible devices) and with LLaMA-Factory without
    `NPROC_PER_NODE` (it defaults to the visible device count, launcher.py:64-68). (The
    `deepspeed` launcher counts them only on one node without a hostfile, runner.py:446-458.) Where
    the process count is given and exceeds the devices, `processes-exceed-devices` reports it.
    Nodes that share one machine (each lists its own devices, none twice) are not judged.

    ## Why it matters
    That node starts fewer processes than the others: the world size is smaller than the
    layout suggests and every node's batch arithmetic is off (see `uneven-node-processes`).
    A device list trimmed for a test on one machine is easily left in its script.

    ## Example
    ```sh
    # node0.sh
    CUDA_VISIBLE_DEVICES=0,1,2,3 FORCE_TORCHRUN=1 NNODES=2 NODE_RANK=0 MASTER_ADDR=192.168.0.1 llamafactory-cli train sft.yaml
    # node1.sh
    CUDA_VISIBLE_DEVICES=0,1 FORCE_TORCHRUN=1 NNODES=2 NODE_RANK=1 MASTER_ADDR=192.168.0.1 llamafactory-cli train sft.yaml
    ```
    Use instead: the same four devices on both nodes.
    """
    if not _across(layout) or colocated(layout):
        return
    known = [n for n in layout.nodes if n.devices is not None and isinstance(n.devices.value, list)]
    if len(known) < 2:
        return
    for node in known:
        if node.outside or not node.procs_follow_devices:
            continue
        widest = max((n for n in known if n is not node), key=lambda n: len(n.devices.value))
        have, want = len(node.devices.value), len(widest.devices.value)
        if have >= want:
            continue
        yield Finding(
            _at(node.devices, node),
            f"{have} visible device{'s' if have != 1 else ''} here, while {widest.describe()} sees {want}",
            note=f"so this node starts {have} process{'es' if have != 1 else ''}, fewer than the others",
            related=[Related(f"{widest.describe()}: {widest.devices.origin}", widest.devices.span),
                     Related(f"this node's processes: {node.procs.origin}", node.procs.span)],
        )


# ---- accelerate ------------------------------------------------------------------------------------------


def one_machine(node: Node, layout: Layout | None) -> bool:
    """An accelerate launch with num_machines > 1 that nothing connects to another machine.

    Its machine count comes from the config file, no launch of its layout takes another
    machine rank, the machine rank is not given on the command line (the config's is absent or
    0), and no main process address another machine could reach is given (none, or a loopback
    one). Such a launch runs on the machine it is started on, and waits there for the others.
    """
    plan = node.plan
    if plan is None or node.launcher != "accelerate" or node.one_command or not node.multi:
        return False
    if layout is not None and len(layout.nodes) > 1:
        return False
    opts = plan.launcher_args
    if any(key in opts for key in ("num_machines", "machine_rank", "main_process_ip")):
        return False
    if node.static_rank != 0:
        return False
    address = node.master_addr.value if node.master_addr is not None else None
    if node.master_addr is None:
        return True
    return isinstance(address, str) and is_loopback(address)


@rule("DS316", "machines-on-one-node", severity="error", target="layout", fixable=True)
def machines_on_one_node(layout: Layout, context):
    """accelerate is told there are several machines, but the launch runs on one.

    ## What it checks
    An `accelerate launch` whose config file says `num_machines: 2` (or more) while nothing in
    the launch involves another machine: the machine rank is not given on the command line and
    the config's is 0 or absent, no other launch of its layout takes another machine rank, and
    `main_process_ip` is absent or a loopback address. A config whose main process address is
    absent fails on every machine (below): error. With a loopback address another machine could
    only join through a config of its own naming this machine: warning. Launches that start
    every machine from one command (DeepSpeed's `pdsh`, MPI launchers) are not judged.

    ## Why it matters
    accelerate starts `num_processes // num_machines` processes on this machine and hands
    torchrun `--nnodes num_machines` with the rendezvous at `main_process_ip:main_process_port`
    (accelerate 1.15 utils/launch.py:216-224, 488-496); an absent `main_process_ip` becomes the
    endpoint `None:29500`. So half the processes start (with two machines) and wait for a
    machine that never joins, until the rendezvous times out. Copying a multi-node example
    config to a single machine does exactly this; the fix is `num_machines: 1`, not a per-node
    `--machine_rank` (which needs a second machine to be meaningful).

    ## Example
    ```yaml
    distributed_type: MULTI_GPU
    machine_rank: 0
    num_machines: 2
    num_processes: 8
    ```
    with `accelerate launch --config_file config.yaml train.py` on one machine.
    Use instead: `num_machines: 1`.

    ## Fix safety
    Unsafe: with `num_machines: 1` accelerate starts all `num_processes` on this machine; check
    that it has that many devices.
    """
    if len(layout.nodes) != 1:
        return
    node = layout.nodes[0]
    if not one_machine(node, layout):
        return
    plan = node.plan
    config = plan.accelerate_config.config if plan.accelerate_config is not None else None
    entry = config.entry("num_machines") if config is not None else None
    if entry is None or not isinstance(entry.value, Scalar):
        return
    absent = node.master_addr is None
    how = "main_process_ip is not set" if absent else f"main_process_ip is {node.master_addr.value}"
    procs = _value(node.procs)
    started = f"starts {procs} of num_processes here and " if isinstance(procs, int) else ""
    yield Finding(
        entry.value.span,
        f"num_machines: {node.node_count} but this launch runs on one machine",
        note=f"machine_rank {node.static_rank}, {how}: accelerate {started}waits for machines that never join",
        related=[Related(f"the launch: {plan.describe()}", plan.span)] + (
            [Related(f"main process address from {node.master_addr.origin}", node.master_addr.span)] if not absent else []),
        fix=Fix.unsafe("Write num_machines: 1", Edit.replace(entry.value.span, "1")),
        severity=None if absent else Severity.WARNING,
    )


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
