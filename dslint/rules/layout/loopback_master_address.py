"""DS315 loopback-master-address: a node other than rank 0 meets the others at localhost."""

from __future__ import annotations

from dslint.diagnostics import Finding, Related, Severity
from dslint.launch.layout import Layout, colocated, is_loopback
from dslint.rule import rule
from dslint.rules.layout._common import report_at


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
            report_at(node.master_addr, node),
            f"master address {address} on a {node.node_count}-node job",
            note=why,
            help="use the address of the node of rank 0",
            related=related,
            severity=severity,
        )
