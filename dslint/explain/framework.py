"""The framework section: a framework's own batch arithmetic (verl, OpenRLHF, TRL GRPO;
dslint.frameworks.FrameworkBatch), shown after the batch it refines."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dslint.explain.lines import line, more, shown
from dslint.explain.origins import Value
from dslint.explain.reading import Reading

if TYPE_CHECKING:
    from dslint.explain import Explanation


def build(reading: Reading):
    from dslint.frameworks import batch_of

    plan = reading.plan
    return batch_of(plan, reading.options.settings) if plan.command is not None or plan.program is not None else None


def render(e: Explanation) -> list[str]:
    """Each number with its origin, then the checks the framework makes of them."""
    f = e.framework
    if f is None:
        return []
    out = [line("framework", f"{f.label}: {f.summary}")]
    for q in f.factors:
        value = "unknown" if q.value is None else shown(Value(q.value, q.origin))
        out.append(more(f"{q.key} {value}: {q.meaning}  ({q.origin})"))
    for q in f.derived:
        value = "unknown" if q.value is None else shown(Value(q.value, q.origin))
        out.append(more(f"= {q.key} {value}: {q.meaning}  ({q.origin})"))
    for check in f.checks:
        mark = {True: "ok", False: "FAILS", None: "?"}[check.holds]
        out.append(more(f"{mark}: {check.text}"))
    for note in f.notes:
        out.append(more(f"! {note}"))
    return out
