"""What the layout rules share: where to report a node's value, and whether a layout's nodes compare."""

from __future__ import annotations

from dslint.diagnostics import Related
from dslint.launch.layout import Layout, Node


def node_related(node: Node, what: str) -> Related:
    return Related(f"{what}: {node.describe()}", node.span)


def report_at(sourced, node: Node):
    return sourced.span if sourced is not None and sourced.span is not None else node.span


def comparable(layout: Layout) -> bool:
    """Whether the layout's nodes may be compared with each other."""
    return len(layout.nodes) >= 2 and not layout.several_jobs


def value_of(sourced):
    return sourced.value if sourced is not None else None
