"""Helpers shared by the parallelism rules: Megatron's flavour and parallel grid, the world size,
the evidence of a DeepSpeed pipeline engine and the ZeRO stage it meets."""

from __future__ import annotations

import re

from dslint.diagnostics import Related, Severity
from dslint.documents.model import Mapping
from dslint.rules import _deepspeed as ds
from dslint.launch.args import Value, as_int, complete, integer, where, written


MEGATRON_FLAGS = ("tensor_model_parallel_size", "pipeline_model_parallel_size", "micro_batch_size", "global_batch_size", "num_layers")


HF_LIKE = ("hf", "swift", "llamafactory")


def megatron_flavor(plan) -> str | None:
    """"swift" (Megatron-SWIFT), "megatron-deepspeed", "megatron-lm", or None."""
    if plan.consumer == "megatron":
        return "swift"
    if plan.launcher not in ("deepspeed", "torchrun", "python"):
        return None
    if not any(name in plan.args for name in MEGATRON_FLAGS):
        return None
    if plan.consumer == "deepspeed" or "deepspeed" in plan.args:
        return "megatron-deepspeed"
    program = getattr(getattr(plan.command, "program", None), "value", None) or ""
    if re.search(r"(?:^|/)(?:pretrain|finetune)[\w]*\.py$", program):
        return "megatron-lm"
    return None


def assumed_severity(plan) -> Severity | None:
    """A warning instead of an error when the world size is the launcher's default, not written."""
    world = plan.world_size
    return Severity.WARNING if world is not None and world.default else None


def world_related(plan) -> Related:
    world = plan.world_size
    return Related(f"world size {world.value}: {world.origin}", world.span)


def known_world(plan) -> int | None:
    world = plan.world_size
    if world is None or not isinstance(world.value, int) or world.value < 1:
        return None
    return world.value


class Grid:
    """Megatron's parallel sizes for a launch, with the consumer's defaults."""

    def __init__(self, plan, flavor: str):
        self.flavor = flavor
        default_note = "Megatron-SWIFT's default" if flavor == "swift" else "Megatron's default"
        self.tp = integer(plan, "tensor_model_parallel_size", default=1, note=default_note)
        self.pp = integer(plan, "pipeline_model_parallel_size", default=1, note=default_note)
        # --context-parallel-size is Megatron-core's flag (Megatron-LM and the frameworks built on
        # it); Microsoft's Megatron-DeepSpeed splits sequences with --ds-sequence-parallel-size
        # instead. Whichever the launch passes divides the world, whatever the program was taken for.
        if flavor == "megatron-deepspeed" and "context_parallel_size" not in plan.args:
            self.cp = integer(plan, "ds_sequence_parallel_size", default=1, note=default_note)
            self.cp_name = "sequence parallel size (--ds-sequence-parallel-size)"
        else:
            self.cp = integer(plan, "context_parallel_size", default=1, note=default_note)
            self.cp_name = "context_parallel_size"
        self.ep = integer(plan, "expert_model_parallel_size", default=1, note=default_note)
        etp_default = 1 if flavor == "swift" else self.tp.value
        self.etp = integer(plan, "expert_tensor_parallel_size", default=etp_default, note=default_note if flavor == "swift" else "defaults to the tensor parallel size")
        if flavor == "swift":
            self.mbs = integer(plan, "micro_batch_size", default=1, note="Megatron-SWIFT's default")
            self.gbs = integer(plan, "global_batch_size", default=16, note="Megatron-SWIFT's default")
        else:
            self.mbs = integer(plan, "micro_batch_size")
            self.gbs = integer(plan, "global_batch_size")

    def known(self, *values: Value) -> bool:
        return all(isinstance(v.value, int) and v.value >= 1 for v in values)

    @property
    def model_size(self) -> int:
        return self.tp.value * self.pp.value * self.cp.value


def pipeline_evidence(plan) -> tuple[str, object] | None:
    """(what shows a DeepSpeed pipeline engine, span) or None."""
    flavor = megatron_flavor(plan)
    pp = integer(plan, "pipeline_model_parallel_size")
    disabled = plan.arg("no_pipeline_parallel") is not None
    if flavor == "megatron-deepspeed" and not disabled and complete(plan):
        if isinstance(pp.value, int) and pp.value > 1:
            return f"{written(pp.arg)} without --no-pipeline-parallel at {where(pp.span)}", pp.span
        program = getattr(getattr(plan.command, "program", None), "value", None) or ""
        if program.endswith("pretrain_gpt.py") and plan.arg("deepspeed") is not None and (pp.value in (None, 1)):
            return (
                "Megatron-DeepSpeed's pretrain_gpt.py builds GPTModelPipe, a PipelineModule, whenever --deepspeed is given without "
                "--no-pipeline-parallel, even at pipeline size 1",
                program and plan.command.program.span,
            )
    if flavor == "swift" and isinstance(pp.value, int) and pp.value > 1:
        return f"{written(pp.arg)} at {where(pp.span)}", pp.span
    config = plan.deepspeed.config if plan.deepspeed is not None else None
    if config is not None and plan.consumer not in HF_LIKE + ("accelerate",):
        entry = config.entry("pipeline")
        if entry is not None and isinstance(entry.value, Mapping):
            return f"the DeepSpeed config's \"pipeline\" section at {where(entry.key_span)}", entry.key_span
    return None


def zero_stage_of(plan):
    """(stage, node in the DeepSpeed config or None, --zero-stage Arg or None)."""
    config = plan.deepspeed.config if plan.deepspeed is not None else None
    arg = plan.arg("zero_stage")
    if config is not None:
        stage = ds.zero_stage(config)
        if stage is ds.UNKNOWN:
            return None, None, arg
        zero = config.get("zero_optimization")
        node = zero.get("stage") if isinstance(zero, Mapping) else None
        return stage, node, arg
    if arg is not None:
        return as_int(arg.value), None, arg
    return None, None, None


def real_span(span) -> bool:
    return span is not None and not span.virtual
