"""``dslint explain`` as text: one block per launch, read top to bottom.

Each line is one fact and where it came from (a file:line, the command line, or the default
that applied); the memory table lists every term with the formula it was computed with.
"""

from __future__ import annotations

from dslint.explain import Explanation, Value
from dslint.explain.memory import GiB, show_range
from dslint.evidence.models import format_count

CONSUMERS = {
    "hf": "HF Trainer",
    "swift": "ms-swift (HF Trainer)",
    "llamafactory": "LLaMA-Factory (HF Trainer)",
    "accelerate": "accelerate",
    "deepspeed": "DeepSpeed",
    "megatron": "Megatron-SWIFT",
}
WIDTH = 11


def render(explanations: list[Explanation]) -> str:
    if not explanations:
        return "dslint explain: no launch script, training config or DeepSpeed config found\n"
    return "\n".join(render_one(e) for e in explanations)


def _v(value: Value | None, unknown: str = "unknown") -> str:
    if value is None or value.value is None:
        return unknown
    v = value.value
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, bool):
        return "on" if v else "off"
    return str(v)


def _why(value: Value | None) -> str:
    if value is None:
        return ""
    return f"  ({value.origin})"


def _line(label: str, text: str) -> str:
    return f"  {label:<{WIDTH}}{text}"


def _more(text: str) -> str:
    return f"  {'':<{WIDTH}}{text}"


def _bytes(value: float) -> str:
    if value < 1024**3:
        return f"{value / 1024**2:.0f} MiB"
    return f"{value / GiB:.1f} GiB"


def _layout_lines(layout) -> list[str]:
    """The multi-node layout: one line per node launch, each value with where it came from."""
    members = layout.members
    if len(members) == 1:  # the launch alone: say what kind of node launch it is, not who else
        only = members[0]
        if only.starts_every_node:
            header = "one command starts every node"
        elif only.rank is None or only.rank.value is None:
            header = "this launch runs on every node, its rank known at run time"
        else:
            header = f"node rank {_v(only.rank)}; no other node launch of its job in {only.path.rsplit('/', 1)[0] if '/' in only.path else '.'}"
        out = [_line("layout", header)]
    else:
        out = [_line("layout", layout.grouping)]
    if layout.several_jobs:
        out.append(_more("! look-alike launches of several jobs: not compared with each other"))
    for member in members:
        rank = member.rank
        if len(members) > 1:
            who = "every node" if member.starts_every_node else (f"rank {_v(rank, 'at run time')}")
            mark = "  ← this launch" if member.this_launch else ""
            out.append(_more(f"{who}  {member.path}:{member.line}{mark}"))
        indent = "  " if len(members) > 1 else ""
        if rank is not None and not member.starts_every_node:
            out.append(_more(f"{indent}rank: {rank.origin}"))
        if member.processes is not None and len(members) > 1:
            out.append(_more(f"{indent}{_v(member.processes)} process(es): {member.processes.origin}"))
        if member.master_addr is not None or member.master_port is not None:
            address = _v(member.master_addr, "(run time)") if member.master_addr is not None else "(not set)"
            port = _v(member.master_port, "?") if member.master_port is not None else "?"
            why = "; ".join(v.origin for v in (member.master_addr, member.master_port) if v is not None)
            out.append(_more(f"{indent}master {address}:{port}: {why}"))
        if member.visible_devices is not None and member.visible_devices.value is not None and len(members) > 1:
            out.append(_more(f"{indent}devices {','.join(map(str, member.visible_devices.value))}: {member.visible_devices.origin}"))
    if layout.world_size is not None:
        counts = " + ".join(_v(m.processes) for m in layout.members)
        out.append(_more(f"world over the layout: {counts} = {layout.world_size} process(es)"))
    return out


def _framework(f) -> list[str]:
    """A framework's own batch arithmetic (verl, OpenRLHF, TRL GRPO), each number with its origin."""
    out = [_line("framework", f"{f.label}: {f.summary}")]
    for q in f.factors:
        shown = "unknown" if q.value is None else _v(Value(q.value, q.origin))
        out.append(_more(f"{q.key} {shown}: {q.meaning}  ({q.origin})"))
    for q in f.derived:
        shown = "unknown" if q.value is None else _v(Value(q.value, q.origin))
        out.append(_more(f"= {q.key} {shown}: {q.meaning}  ({q.origin})"))
    for check in f.checks:
        mark = {True: "ok", False: "FAILS", None: "?"}[check.holds]
        out.append(_more(f"{mark}: {check.text}"))
    for note in f.notes:
        out.append(_more(f"! {note}"))
    return out


def render_one(e: Explanation) -> str:
    lines: list[str] = []
    title = e.entry or e.launcher or e.kind
    who = CONSUMERS.get(e.consumer or "", e.consumer or "unknown consumer")
    launcher = f"launcher {e.launcher}, " if e.launcher else ""
    lines.append(f"{e.path}:{e.line}: {title} ({launcher}read by {who})")
    for k, step in enumerate(e.via):
        lines.append(_line("via", step) if k == 0 else _more(step))
    if e.slurm:
        lines.append(_line("slurm", e.slurm))
    program = e.program
    if program is not None and not (program.established and program.program == e.entry):  # `swift sft` is its own proof
        if program.established:
            lines.append(_line("program", f"{program.program}: {program.label}"))
            for evidence in program.evidence:
                lines.append(_more(evidence.describe()))
        else:
            lines.append(_line("program", f"not established: {program.assumption}"))
    for index, package in enumerate(e.versions):
        lines.append(_line("versions" if index == 0 else "", package.candidates.describe()))

    # world
    if e.world_size is not None:
        nodes, procs = e.nodes, e.procs_per_node
        if nodes is not None and procs is not None:
            lines.append(_line("world", f"{_v(nodes)} node(s) × {_v(procs)} process(es) per node = {_v(e.world_size)}"))
            lines.append(_more(f"nodes: {nodes.origin}"))
            lines.append(_more(f"processes per node: {procs.origin}"))
        else:
            lines.append(_line("world", f"{_v(e.world_size)} process(es){_why(e.world_size)}"))
    else:
        lines.append(_line("world", "unknown world size (pass --world-size N)"))
    if e.layout is not None:
        lines.extend(_layout_lines(e.layout))
    par = e.parallel
    degrees = [f"{name} {_v(v)}" for name, v in (("tensor", par.tensor), ("pipeline", par.pipeline), ("context", par.context), ("sequence", par.sequence)) if v.value and v.value > 1]
    if par.data_parallel is not None:
        detail = f" = world / ({' × '.join(degrees)})" if degrees else " (no tensor, pipeline, context or sequence parallelism)"
        lines.append(_line("parallel", f"data parallel {_v(par.data_parallel)}{detail}"))
        for name, v in (("tensor", par.tensor), ("pipeline", par.pipeline), ("context", par.context), ("sequence", par.sequence)):
            if v.value and v.value > 1:
                lines.append(_more(f"{name} parallel {_v(v)}: {v.origin}"))
    elif degrees:
        lines.append(_line("parallel", ", ".join(degrees)))

    # batch
    b = e.batch
    lines.append(_line("batch", b.formula))
    lines.append(_more(f"micro batch {_v(b.micro_batch)}{_why(b.micro_batch)}"))
    lines.append(_more(f"accumulation {_v(b.accumulation)}{_why(b.accumulation)}"))
    lines.append(_more(f"data parallel {_v(b.data_parallel)}"))
    if b.passes_per_step is not None:
        lines.append(_more(f"{b.passes_per_step} forward/backward pass(es) per device per optimizer step"))
    for note in b.notes:
        lines.append(_more(f"! {note}"))
    if e.framework is not None:
        lines += _framework(e.framework)

    # steps
    s = e.steps
    if s.samples is not None and s.steps_per_epoch is not None:
        epochs = f" × {_v(s.epochs)} epoch(s)" if s.epochs is not None and s.max_steps is None else ""
        total = f" = {s.total_steps} optimizer steps" if s.total_steps is not None else ""
        lines.append(_line("steps", f"{_v(s.samples)} samples{_why(s.samples)}"))
        lines.append(_more(f"{s.batches_per_epoch} micro-batches per device per epoch → {s.steps_per_epoch} optimizer steps per epoch{epochs}{total}"))
        if s.max_steps is not None:
            lines.append(_more(f"max_steps {_v(s.max_steps)} wins over epochs{_why(s.max_steps)}"))
    elif s.max_steps is not None:
        lines.append(_line("steps", f"max_steps {_v(s.max_steps)}{_why(s.max_steps)}"))
    elif s.epochs is not None:
        lines.append(_line("steps", f"{_v(s.epochs)} epoch(s){_why(s.epochs)}"))
    else:
        lines.append(_line("steps", "unknown"))
    lines.append(_more(s.progress_bar))

    # precision
    p = e.precision
    mixed = p.mixed_precision
    mp = {"bf16": "bf16 mixed precision", "fp16": "fp16 mixed precision", "fp32": "fp32 (no mixed precision)"}.get(mixed.value, "unknown")
    lines.append(_line("precision", f"{mp}{_why(mixed)}"))
    lines.append(_more(f"weights {_v(p.weights_dtype)}{_why(p.weights_dtype)}"))
    if p.deepspeed_bf16 is not None:
        lines.append(_more(f"DeepSpeed bf16 {_v(p.deepspeed_bf16)}{_why(p.deepspeed_bf16)}"))
        lines.append(_more(f"DeepSpeed fp16 {_v(p.deepspeed_fp16)}{_why(p.deepspeed_fp16)}"))

    # ZeRO
    z = e.zero
    if z.engine == "deepspeed":
        lines.append(_line("ZeRO", f"stage {_v(z.stage)}{_why(z.stage)}"))
        lines.append(_more(f"offload optimizer {_v(z.offload_optimizer)}, parameters {_v(z.offload_param)}"))
        for setting in z.settings:
            implied = f" → {_bytes(setting.bytes)}" if setting.bytes else ""
            where = ""
            if setting.value.origin.startswith('"auto"'):
                where = f" [{setting.value.origin}]"
            elif setting.value.default:
                where = " [default]"
            lines.append(_more(f"{setting.key} {_v(setting.value)}{implied}: {setting.meaning}{where}"))
    elif z.engine == "megatron":
        setting = z.settings[0]
        lines.append(_line("optimizer", f"Megatron, use_distributed_optimizer {_v(setting.value)}{_why(setting.value)}"))
    elif z.engine == "fsdp":
        lines.append(_line("ZeRO", "FSDP, not DeepSpeed (its memory is not estimated)"))
    elif z.engine == "unknown":
        lines.append(_line("ZeRO", "unknown (the DeepSpeed config could not be read)"))
    else:
        lines.append(_line("ZeRO", "no DeepSpeed config: plain data parallel"))

    # model
    m = e.model
    if m is not None:
        shape = m.shape
        lines.append(_line("model", f"{shape.name}: {format_count(shape.params)} parameters ({shape.source})"))
        if shape.has_shape:
            lines.append(_more(f"hidden {shape.hidden}, {shape.layers} layers, {shape.heads} heads ({shape.kv_heads} kv), intermediate {shape.intermediate}, vocab {shape.vocab}"))
        trainable = ""
        if m.trainable is not None:
            low, high = m.trainable
            trainable = f", {format_count(high)} trainable" if low == high else f", {format_count(low)}–{format_count(high)} trainable"
        lines.append(_more(f"training {_v(m.training)}{trainable}{_why(m.training)}"))
        lines.append(_more(f"sequence length {_v(m.seq_len)}{_why(m.seq_len)}"))
        lines.append(_more(f"activation checkpointing {_v(m.checkpointing)}{_why(m.checkpointing)}"))
        lines.append(_more(f"attention {_v(m.attention)}{_why(m.attention)}"))

    # memory
    mem = e.memory
    if mem is not None:
        est = mem.estimate
        total = show_range(est.device_low, est.device_high)
        verdict = ""
        if mem.device_memory is not None:
            cap = mem.device_memory.value
            verdict = f" of {cap / GiB:.0f} GiB"
            if mem.fits is True:
                verdict += " — fits"
            elif mem.fits is False:
                verdict += " — DOES NOT FIT"
            else:
                verdict += " — may not fit"
        lines.append(_line("memory", f"{total} per device{verdict}"))
        width = max((len(t.label) for t in est.terms), default=10)
        width = min(width, 44)
        for term in est.terms:
            if term.place != "device":
                continue
            lines.append(_more(f"{term.label:<{width}}  {show_range(term.low, term.high):>13}  {term.formula}"))
        groups = []
        for group, name in (("model_states", "model states"), ("buffers", "buffers"), ("activations", "activations")):
            low = sum(t.low for t in est.terms if t.place == "device" and t.group == group)
            high = sum(t.high for t in est.terms if t.place == "device" and t.group == group)
            if high:
                groups.append(f"{name} {show_range(low, high)}")
        if groups:
            counted = " (model states as DeepSpeed's estimators count them)" if e.zero.engine == "deepspeed" else ""
            lines.append(_more(f"= {' + '.join(groups)}{counted}"))
        moved = [t for t in est.terms if t.place == "moved"]
        if moved:
            lines.append(_more("offloaded, per process:"))
        for term in moved:
            lines.append(_more(f"{term.label:<{width}}  {show_range(term.low, term.high):>13}  {term.formula}"))
        host = [t for t in est.terms if t.place in ("cpu", "nvme")]
        if host:
            nvme = f", NVMe {show_range(est.nvme_high, est.nvme_high)}" if est.nvme_high else ""
            lines.append(_more(f"host memory per node: CPU {show_range(est.cpu_low, est.cpu_high)}{nvme}"))
        for term in host:
            lines.append(_more(f"{term.label:<{width}}  {show_range(term.low, term.high):>13}  {term.formula}"))
        if mem.device_memory is not None:
            lines.append(_more(f"device memory: {mem.device_memory.origin}"))
        for note in est.notes:
            lines.append(_more(f"! {note}"))
    for note in e.notes:
        lines.append(_line("note", note))
    return "\n".join(lines) + "\n"
