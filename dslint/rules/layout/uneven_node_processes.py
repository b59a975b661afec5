"""DS314 uneven-node-processes: the nodes of one job start different numbers of processes."""

from __future__ import annotations

from dslint.diagnostics import Finding, Related
from dslint.launch.layout import Layout, colocated
from dslint.rule import rule
from dslint.rules.layout._common import comparable, report_at, value_of


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
    if not comparable(layout) or colocated(layout):
        return
    reference = layout.reference
    ref = value_of(reference.procs)
    if not isinstance(ref, int) or reference.procs.default:
        return
    for node in layout.nodes:
        procs = value_of(node.procs)
        if node is reference or node.outside or not isinstance(procs, int) or procs == ref or node.procs_follow_devices \
                or node.procs.default:
            continue
        world = layout.world_size()
        total = f"the job has {world} processes, not {ref * len(layout.nodes)}" if world is not None else "the world size is their sum"
        yield Finding(
            report_at(node.procs, node),
            f"{procs} processes on this node, {ref} on {reference.describe()}",
            note=total,
            related=[Related(f"{reference.describe()}: {reference.procs.origin}", reference.procs.span),
                     Related(f"this node: {node.procs.origin}", node.procs.span)],
        )
