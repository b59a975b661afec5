"""The parallelism section: tensor, pipeline, context and sequence parallel degrees, and the
data-parallel size they leave of the world: world size / (tensor × pipeline × context × sequence)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from dslint.explain.lines import line, more, shown
from dslint.explain.origins import Value, defaulted, dict_or_none, from_arg
from dslint.explain.reading import Reading
from dslint.launch.plan import HF_LIKE
from dslint.values import as_int

if TYPE_CHECKING:
    from dslint.explain import Explanation


@dataclass
class Parallelism:
    tensor: Value
    pipeline: Value
    context: Value
    sequence: Value
    data_parallel: Value | None

    def to_dict(self) -> dict:
        return {
            "tensor": self.tensor.to_dict(),
            "pipeline": self.pipeline.to_dict(),
            "context": self.context.to_dict(),
            "sequence": self.sequence.to_dict(),
            "data_parallel": dict_or_none(self.data_parallel),
        }

    def degrees(self) -> tuple[tuple[str, Value], ...]:
        return (("tensor", self.tensor), ("pipeline", self.pipeline), ("context", self.context), ("sequence", self.sequence))

    def degree(self, which: str) -> int:
        """One degree as a number (1 when unknown)."""
        return int(getattr(self, which).value or 1)


def build(reading: Reading, world: Value | None) -> Parallelism:
    tp = _degree(reading, ("tensor_model_parallel_size", "tp", "tensor_parallel_size"), "no tensor parallelism")
    pp = _degree(reading, ("pipeline_model_parallel_size", "pp", "pipeline_parallel_size"), "no pipeline parallelism")
    cp = _degree(reading, ("context_parallel_size", "cp"), "no context parallelism")
    if "no_pipeline_parallel" in reading.plan.args:
        pp = from_arg(reading.plan.args["no_pipeline_parallel"], 1)
    sp = _sequence(reading)
    if reading.consumer in HF_LIKE or reading.consumer == "accelerate":
        if tp.value > 1 or pp.value > 1:
            reading.notes.append("tensor/pipeline sizes in the training arguments are not read by the HF Trainer; data parallel ignores them")
            tp, pp = defaulted(1, "not used by the HF Trainer"), defaulted(1, "not used by the HF Trainer")
        value, _ = reading.ds_value("tensor_parallel.autotp_size")
        if as_int(value) and as_int(value) > 1:
            reading.notes.append(f"DeepSpeed AutoTP (tensor_parallel.autotp_size {value}) shards the weights; DeepSpeed's batch check does not divide the world size by it")
    parallel = Parallelism(tp, pp, cp, sp, None)
    parallel.data_parallel = _data_parallel(reading, world, parallel)
    return parallel


def _degree(reading: Reading, names: tuple[str, ...], default_text: str) -> Value:
    arg = reading.arg(*names)
    if arg is not None:
        number = as_int(arg.value)
        if number is not None and number >= 1:
            return from_arg(arg, number)
    return defaulted(1, default_text)


def _sequence(reading: Reading) -> Value:
    """Ulysses sequence parallelism, from the launch or the DeepSpeed config (Megatron's
    --sequence_parallel is a different thing: it splits activations over tensor parallel)."""
    if not reading.megatron:
        arg = reading.arg("sequence_parallel_size", "ulysses_size")
        if arg is not None and as_int(arg.value):
            return from_arg(arg, as_int(arg.value))
        value, node = reading.ds_value("sequence_parallel_size")
        if as_int(value):
            return reading.node_value(node, "sequence_parallel_size", as_int(value))
    return defaulted(1, "no sequence parallelism")


def _data_parallel(reading: Reading, world: Value | None, parallel: Parallelism) -> Value | None:
    if world is None or not isinstance(world.value, int):
        return None
    divisor = 1
    for _, v in parallel.degrees():
        divisor *= v.value
    parts = [f"{name} {v.value}" for name, v in parallel.degrees() if v.value > 1]
    if divisor == 1:
        return Value(world.value, f"the world size ({world.origin})", world.path, world.line, world.default)
    if world.value % divisor == 0:
        return Value(world.value // divisor, f"world size {world.value} / ({' × '.join(parts)} parallel)", world.path, world.line)
    reading.notes.append(f"world size {world.value} is not divisible by {' × '.join(parts)} = {divisor}: the launch fails")
    return None


# ---- text ----------------------------------------------------------------------------------------


def render(e: Explanation) -> list[str]:
    par = e.parallel
    degrees = [f"{name} {shown(v)}" for name, v in par.degrees() if v.value and v.value > 1]
    if par.data_parallel is None:
        return [line("parallel", ", ".join(degrees))] if degrees else []
    detail = f" = world / ({' × '.join(degrees)})" if degrees else " (no tensor, pipeline, context or sequence parallelism)"
    out = [line("parallel", f"data parallel {shown(par.data_parallel)}{detail}")]
    for name, v in par.degrees():
        if v.value and v.value > 1:
            out.append(more(f"{name} parallel {shown(v)}: {v.origin}"))
    return out
