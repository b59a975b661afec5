"""The launch that uses a DeepSpeed config, as a finding's related location (rules of several families
report on the config and point at the launch that reads it).
"""

from __future__ import annotations

from dslint.diagnostics import Related


def launch_related(use) -> list[Related]:
    plan = use.launch
    if plan is None or use.reference is None:
        return []
    return [Related(f"used by the {plan.entry or plan.launcher} launch here", use.reference)]
