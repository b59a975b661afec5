"""Whether an accelerate launch told of several machines runs on one (rules of the layout and launch
families both ask)."""

from __future__ import annotations

from dslint.launch.layout import Layout, Node, is_loopback


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
