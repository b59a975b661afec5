"""DS313 node-ranks: the node ranks of a multi-node job are not 0..N-1, each once."""

from __future__ import annotations

from dslint.diagnostics import Finding, Related, Severity
from dslint.launch.layout import Layout, Node, rank_counts
from dslint.rule import rule
from dslint.rules.layout._common import comparable, node_related, report_at


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
    left unset: accelerate 1.15 commands/launch.py:1278-1283) and is judged alone.

    Launches are nodes of one job only when something ties them. A launch is a whole job by
    itself, never a node of another's, when one command starts every node (`deepspeed
    --hostfile`, accelerate's `pdsh` launcher), when its rank is only known at run time
    (`--node_rank $SLURM_NODEID`, a `$NODE_RANK` the caller sets, a dynamic rendezvous: the
    same launch runs on every node), or when the scheduler places it (`srun` or `mpirun` starts
    it, or it runs inside an sbatch job). Other node launches are one layout when they are
    written in the same folder, run the same launcher and program, and name the same rendezvous:
    the same node count, master port (written, or the launcher's default) and master host (a
    loopback or unset address on one node is that node's mistake). Nothing else about them is
    compared to group them: the node scripts of one job are copies that differ in each node's
    own values, sometimes in its data. Launches with different ranks are then the nodes of one
    job. Two with the same rank written are one job with a rank left unchanged only when they
    pass the program the same arguments (a copied script); otherwise, as when both start the
    launcher's default rank or there are more launches than nodes, the group is several
    look-alike jobs and no rule compares its launches. No file or folder name is read.
    `dslint explain` shows each launch's layout.

    ## Example
    ```sh
    # node0.sh
    torchrun --nnodes 2 --node_rank 0 --master_addr 10.0.0.1 --master_port 29500 --nproc_per_node 8 train.py
    # node1.sh: copied, the rank not changed
    torchrun --nnodes 2 --node_rank 0 --master_addr 10.0.0.1 --master_port 29500 --nproc_per_node 8 train.py
    ```
    Use instead: `--node_rank 1` in node1.sh.
    """
    yield from _outside_ranks(layout)
    if not comparable(layout):
        return
    duplicates = _duplicates(layout)
    for node, first in duplicates:
        if node.outside:  # report it where the run can: at the launch it lists
            node, first = first, node
        if node.outside:
            continue
        yield Finding(
            report_at(node.rank, node),
            f"node rank {node.static_rank} is also the rank of {first.where()}",
            note="two nodes claim it, and the rendezvous waits for a missing rank",
            related=[node_related(first, "the other launch"), Related(f"this rank from {node.rank.origin}", node.rank.span)],
        )
    if not duplicates:  # a rank claimed twice already leaves one missing
        yield from _missing_ranks(layout)


def _outside_ranks(layout: Layout):
    """Each node launch whose rank is outside 0..N-1 for the node count N it declares."""
    for node in layout.nodes:
        count, rank = node.node_count, node.static_rank
        if node.outside or count is None or rank is None or 0 <= rank < count:
            continue
        what = "--no_ssh without --node_rank" if node.rank.default and node.launcher == "deepspeed" else f"node rank {rank}"
        yield Finding(
            report_at(node.rank, node),
            f"{what} is outside 0..{count - 1} for {count} nodes",
            note="the rendezvous waits for ranks no node takes",
            related=[Related(f"node count from {node.nodes.origin}", node.nodes.span)],
        )


def _duplicates(layout: Layout) -> list[tuple[Node, Node]]:
    """(node, the earlier node of the same rank) for each node launch whose valid rank another already has."""
    seen: dict[int, Node] = {}
    found = []
    for node in layout.nodes:
        rank = node.static_rank
        if rank is None or node.node_count is None or not 0 <= rank < node.node_count:
            continue
        if rank in seen:
            found.append((node, seen[rank]))
            continue
        seen[rank] = node
    return found


def _missing_ranks(layout: Layout):
    """Ranks of 0..N-1 that no node launch of a layout with every rank written takes."""
    reference = layout.reference
    count = reference.node_count
    if not layout.static or count is None or any(n.node_count != count for n in layout.nodes):
        return
    missing = [r for r in range(count) if r not in rank_counts(layout)]
    at = next((n for n in [reference, *layout.nodes] if not n.outside), None)
    if missing and at is not None:
        shown = ", ".join(str(r) for r in missing)
        yield Finding(
            report_at(at.nodes, at),
            f"{count} nodes, but no node launch of this layout starts rank{'s' if len(missing) > 1 else ''} {shown}",
            note=f"the rendezvous waits for it; {layout.why}",
            related=[node_related(n, "node launch") for n in layout.nodes],
            severity=Severity.WARNING,
        )
