"""DS317 node-visible-devices: one node's visible devices leave it fewer processes."""

from __future__ import annotations

from dslint.diagnostics import Finding, Related
from dslint.launch.layout import Layout, colocated
from dslint.rule import rule
from dslint.rules.layout._common import comparable, report_at


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
    if not comparable(layout) or colocated(layout):
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
            report_at(node.devices, node),
            f"{have} visible device{'s' if have != 1 else ''} here, while {widest.describe()} sees {want}",
            note=f"so this node starts {have} process{'es' if have != 1 else ''}, fewer than the others",
            related=[Related(f"{widest.describe()}: {widest.devices.origin}", widest.devices.span),
                     Related(f"this node's processes: {node.procs.origin}", node.procs.span)],
        )
