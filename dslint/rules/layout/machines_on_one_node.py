"""DS316 machines-on-one-node: accelerate told of several machines, run on one."""

from __future__ import annotations

from dslint.diagnostics import Edit, Finding, Fix, Related, Severity
from dslint.documents.model import Scalar
from dslint.launch.layout import Layout
from dslint.rule import rule
from dslint.rules._one_machine import one_machine
from dslint.rules.layout._common import value_of


@rule("DS316", "machines-on-one-node", severity="error", target="layout", fix="unsafe")
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
    procs = value_of(node.procs)
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
