"""``dslint explain`` as text: one block per launch, read top to bottom.

Each line is one fact and where it came from (a file:line, the command line, or the default
that applied); the memory table lists every term with the formula it was computed with. The
head says what runs the launch and the world it starts, each section then renders itself (its
module in dslint/explain/), and the notes close the block.
"""

from __future__ import annotations

from dslint.explain import (
    Explanation,
    batch,
    device_memory,
    framework,
    layout,
    model,
    parallelism,
    precision,
    steps,
    zero,
)
from dslint.explain.lines import line, more, shown, why

CONSUMERS = {
    "hf": "HF Trainer",
    "swift": "ms-swift (HF Trainer)",
    "llamafactory": "LLaMA-Factory (HF Trainer)",
    "accelerate": "accelerate",
    "deepspeed": "DeepSpeed",
    "megatron": "Megatron-SWIFT",
}
SECTIONS = (layout, parallelism, batch, framework, steps, precision, zero, model, device_memory)


def render(explanations: list[Explanation]) -> str:
    if not explanations:
        return "dslint explain: no launch script, training config or DeepSpeed config found\n"
    return "\n".join(render_one(e) for e in explanations)


def render_one(e: Explanation) -> str:
    lines = _head(e) + _world(e)
    for section in SECTIONS:
        lines += section.render(e)
    lines += [line("note", note) for note in e.notes]
    return "\n".join(lines) + "\n"


def _head(e: Explanation) -> list[str]:
    """Who launches, who reads it, what runs it, and the package versions it runs with."""
    title = e.entry or e.launcher or e.kind
    who = CONSUMERS.get(e.consumer or "", e.consumer or "unknown consumer")
    launcher = f"launcher {e.launcher}, " if e.launcher else ""
    lines = [f"{e.path}:{e.line}: {title} ({launcher}read by {who})"]
    lines += [line("via", step) if k == 0 else more(step) for k, step in enumerate(e.via)]
    if e.slurm:
        lines.append(line("slurm", e.slurm))
    lines += _program(e)
    lines += [line("versions" if index == 0 else "", package.candidates.describe()) for index, package in enumerate(e.versions)]
    return lines


def _program(e: Explanation) -> list[str]:
    program = e.program
    if program is None or (program.established and program.program == e.entry):  # `swift sft` is its own proof
        return []
    if not program.established:
        return [line("program", f"not established: {program.assumption}")]
    return [line("program", f"{program.program}: {program.label}")] + [more(evidence.describe()) for evidence in program.evidence]


def _world(e: Explanation) -> list[str]:
    if e.world_size is None:
        return [line("world", "unknown world size (pass --world-size N)")]
    nodes, procs = e.nodes, e.procs_per_node
    if nodes is None or procs is None:
        return [line("world", f"{shown(e.world_size)} process(es){why(e.world_size)}")]
    return [
        line("world", f"{shown(nodes)} node(s) × {shown(procs)} process(es) per node = {shown(e.world_size)}"),
        more(f"nodes: {nodes.origin}"),
        more(f"processes per node: {procs.origin}"),
    ]
