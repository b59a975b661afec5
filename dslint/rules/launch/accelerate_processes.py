"""DS310 accelerate-processes: accelerate's process and machine counts against the launch."""

from __future__ import annotations

from dslint.diagnostics import Finding, Related, Severity
from dslint.documents.model import Scalar
from dslint.rule import rule


@rule("DS310", "accelerate-processes", severity="warning", target="launch")
def accelerate_processes(plan, context):
    """accelerate's process and machine counts disagree with the launch.

    ## What it checks
    - `--num_processes` on the command line overrides the config file's `num_processes`; when
      they differ, the file is misleading (info).
    - `num_machines > 1` in a config while the launch passes no `--machine_rank`: every node
      that runs the script starts as the config's `machine_rank` (0 by default), so the other
      ranks never join and the rendezvous waits (warning). Pass `--machine_rank $NODE_RANK`,
      or one script per node with its rank, as ms-swift's multi-node accelerate example does.
      Not reported when node launches tied to it as one job take the other ranks (see
      `node-ranks`; launches that only read the same config are not tied), when one command
      starts every machine (accelerate's DeepSpeed launchers other than `nossh` hand the
      deepspeed launcher a hostfile and no rank, accelerate 1.15 utils/launch.py:452-487), when
      `--rdzv_backend c10d` assigns the ranks (torch reads `--node_rank` only for the static
      rendezvous, distributed/run.py:861-868; the config's `rdzv_backend` never reaches it,
      commands/launch.py:327-331, 1278-1283), nor when nothing in the launch involves a second
      machine (`machines-on-one-node` says so).
    - `num_processes` not a multiple of `num_machines`, where the command line gives one of them:
      accelerate divides processes evenly across machines (`nproc_per_node =
      str(num_processes // num_machines)`, accelerate utils/launch.py:217; `--num_gpus` likewise
      at utils/launch.py:476), so the remainder is lost (error). A config file that disagrees
      with itself is `accelerate-processes-per-machine`.
    - more processes per machine than visible devices (error; see `processes-exceed-devices`).

    ## Why it matters
    Processes that never start leave the others waiting at the rendezvous until it times out;
    an overridden file value makes the config say something the launch does not do.

    ## Example
    `num_processes: 8`, `num_machines: 3` in the accelerate config.
    Use instead: `num_processes: 6` or `9`.
    """
    if plan.launcher != "accelerate" or plan.accelerate_config is None or plan.accelerate_config.config is None:
        return
    mapping = plan.accelerate_config.config
    yield from _overridden_processes(plan, mapping)
    yield from _machine_rank_never_set(plan, mapping)
    yield from _processes_over_machines(plan, mapping)


def _overridden_processes(plan, mapping):
    """--num_processes on the command line that differs from the config file's (info)."""
    file_procs = mapping.get("num_processes")
    cli = plan.launcher_args.get("num_processes")
    if cli is not None and isinstance(file_procs, Scalar) and str(file_procs.value) != str(cli.value) and cli.value is not None:
        yield Finding(
            cli.span or plan.span,
            f"--num_processes {cli.value} overrides num_processes: {file_procs.value} in {plan.accelerate_config.raw}",
            related=[Related("the config file's value", file_procs.span)],
            severity=Severity.INFO,
        )


def _machine_rank_never_set(plan, mapping):
    """Several machines, and every run of the launch starts the same machine rank."""
    machines = plan.nodes
    rank_entry = mapping.entry("machine_rank")
    if machines is not None and machines.value and machines.value > 1 and "machine_rank" not in plan.launcher_args \
            and not _rank_decided_elsewhere(plan):
        rank = rank_entry.value.to_python() if rank_entry is not None else 0
        yield Finding(
            machines.span or plan.span,
            f"num_machines is {machines.value} but every run of this launch starts machine_rank {rank}",
            note=f"{'machine_rank in the config' if rank_entry is not None else 'the default'}, not overridden with --machine_rank: "
            "the other machines never join and the rendezvous waits",
            help="pass --machine_rank per node",
            related=[Related(f"the launch: {plan.describe()}", plan.span)]
            + ([Related("machine_rank in the config", rank_entry.value.span)] if rank_entry is not None else []),
        )


def _processes_over_machines(plan, mapping):
    """A process count the command line gives that does not divide over the machines (a file that
    disagrees with itself is accelerate-processes-per-machine's)."""
    machines = plan.nodes
    total = plan.world_size
    from_file = all(v.span is not None and v.span.source is mapping.span.source for v in (machines, total) if v is not None)
    if machines is not None and total is not None and machines.value and total.value and total.value % machines.value \
            and not from_file:
        yield Finding(
            total.span or plan.span,
            f"{total.value} processes do not divide over {machines.value} machines",
            note=f"accelerate starts {total.value // machines.value} per machine, so {total.value % machines.value} of them never start",
            related=[Related(machines.origin, machines.span)],
            severity=Severity.ERROR,
        )


def _rank_decided_elsewhere(plan) -> bool:
    """Something other than this launch's --machine_rank decides its machines' ranks, or it runs on one machine.

    The node launches of its layout take the other ranks (the launches tied to it as one job:
    dslint.launch.layout), one command starts every machine (accelerate's DeepSpeed launchers
    other than nossh hand the deepspeed launcher a hostfile and no rank, accelerate 1.15
    utils/launch.py:452-487), or a dynamic rendezvous assigns the ranks (--rdzv_backend c10d).
    """
    from dslint.launch.layout import node_of
    from dslint.rules._one_machine import one_machine

    layout = plan.layout
    if layout is not None and len(layout.nodes) > 1 and not layout.several_jobs:
        return True
    node = node_of(plan)
    if node is None:
        return False
    return node.one_command or node.static_rank is None or one_machine(node, layout)
