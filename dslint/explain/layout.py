"""The layout section: the multi-node layout a launch is one node of (dslint.launch.layout)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from dslint.explain.lines import line, more, shown
from dslint.explain.origins import Value, dict_or_none, from_sourced, position
from dslint.launch.plan import LaunchPlan

if TYPE_CHECKING:
    from dslint.explain import Explanation


@dataclass
class NodeLaunch:
    """One node launch of a multi-node layout."""

    path: str
    line: int
    launcher: str
    program: str | None
    rank: Value | None  # value None: decided at run time
    processes: Value | None
    master_addr: Value | None
    master_port: Value | None
    visible_devices: Value | None
    starts_every_node: bool
    this_launch: bool

    def to_dict(self) -> dict:
        def out(value: Value | None):
            return value.to_dict() if value is not None else None

        return {
            "path": self.path, "line": self.line, "launcher": self.launcher, "program": self.program,
            "rank": out(self.rank), "processes": out(self.processes), "master_addr": out(self.master_addr),
            "master_port": out(self.master_port), "visible_devices": out(self.visible_devices),
            "starts_every_node": self.starts_every_node, "this_launch": self.this_launch,
        }


@dataclass
class LayoutInfo:
    """The multi-node layout a launch is one node of (dslint.launch.layout)."""

    grouping: str  # why these launches are one layout
    several_jobs: bool
    alone: bool  # one launch that is a whole job by itself, never a node of another launch's job
    nodes: Value | None  # the node count, as the node of rank 0 declares it
    world_size: int | None  # the sum over the nodes, when all are here and known
    members: list[NodeLaunch]

    def to_dict(self) -> dict:
        return {
            "grouping": self.grouping,
            "several_jobs": self.several_jobs,
            "alone": self.alone,
            "nodes": dict_or_none(self.nodes),
            "world_size": self.world_size,
            "members": [m.to_dict() for m in self.members],
        }


def layout_info(plan: LaunchPlan) -> LayoutInfo | None:
    layout = getattr(plan, "layout", None)
    if layout is None:
        return None

    def value(sourced):
        return from_sourced(sourced) if sourced is not None else None

    members = []
    for node in layout.nodes:
        path, number = position(node.span)
        devices = node.devices
        members.append(NodeLaunch(
            path=path or node.document.path, line=number or 1, launcher=node.launcher, program=node.program,
            rank=value(node.rank), processes=value(node.procs), master_addr=value(node.master_addr),
            master_port=value(node.master_port),
            visible_devices=from_sourced(devices) if devices is not None else None,
            starts_every_node=node.one_command, this_launch=node.plan is plan,
        ))
    reference = layout.reference
    return LayoutInfo(layout.why, layout.several_jobs, layout.alone, value(reference.nodes), layout.world_size(), members)


# ---- text ----------------------------------------------------------------------------------------


def render(e: Explanation) -> list[str]:
    """The multi-node layout: one line per node launch, each value with where it came from."""
    layout = e.layout
    if layout is None:
        return []
    members = layout.members
    out = [line("layout", _heading(layout))]
    if layout.several_jobs:
        out.append(more("! look-alike launches of several jobs: not compared with each other"))
    for member in members:
        out += _member_lines(member, len(members) > 1)
    if layout.world_size is not None:
        counts = " + ".join(shown(m.processes) for m in layout.members)
        out.append(more(f"world over the layout: {counts} = {layout.world_size} process(es)"))
    return out


def _heading(layout: LayoutInfo) -> str:
    members = layout.members
    if len(members) != 1:
        return layout.grouping
    # the launch alone: say what kind of node launch it is, not who else
    only = members[0]
    if only.starts_every_node:
        return "one command starts every node"
    if only.rank is None or only.rank.value is None:
        return "this launch runs on every node, its rank known at run time"
    if layout.alone:  # started by the scheduler: its nodes are the allocation's, not other scripts'
        return layout.grouping
    return f"node rank {shown(only.rank)}; no other node launch of its job in {only.path.rsplit('/', 1)[0] if '/' in only.path else '.'}"


def _member_lines(member: NodeLaunch, several: bool) -> list[str]:
    """One node launch; with several, who it is and the values only a comparison needs."""
    out = []
    rank = member.rank
    if several:
        who = "every node" if member.starts_every_node else (f"rank {shown(rank, 'at run time')}")
        mark = "  ← this launch" if member.this_launch else ""
        out.append(more(f"{who}  {member.path}:{member.line}{mark}"))
    indent = "  " if several else ""
    if rank is not None and not member.starts_every_node:
        out.append(more(f"{indent}rank: {rank.origin}"))
    if member.processes is not None and several:
        out.append(more(f"{indent}{shown(member.processes)} process(es): {member.processes.origin}"))
    if member.master_addr is not None or member.master_port is not None:
        out.append(more(f"{indent}{_master(member)}"))
    if member.visible_devices is not None and member.visible_devices.value is not None and several:
        out.append(more(f"{indent}devices {','.join(map(str, member.visible_devices.value))}: {member.visible_devices.origin}"))
    return out


def _master(member: NodeLaunch) -> str:
    address = shown(member.master_addr, "(run time)") if member.master_addr is not None else "(not set)"
    port = shown(member.master_port, "?") if member.master_port is not None else "?"
    why = "; ".join(v.origin for v in (member.master_addr, member.master_port) if v is not None)
    return f"master {address}:{port}: {why}"
