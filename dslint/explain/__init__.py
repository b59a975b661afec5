"""``dslint explain``: a launch as its consumer will run it, every number with where it came from.

Built from the launch plans (dslint.launch.plan) with pure functions; ``explain_result`` returns
one ``Explanation`` per launch (and per DeepSpeed config no launch reaches, when a world size is
given). ``Explanation.to_dict`` is the JSON form documented in docs/explain.md and
schemas/explain.schema.json; dslint/explain/text.py renders the text form.

Each section of an explanation is one module, holding its data, how it is built from the launch
and how it reads as text, with the consumers' arithmetic and defaults it follows:

- parallelism: data parallel = world size / (tensor × pipeline × context × sequence parallel)
  (Megatron-SWIFT: swift/megatron/arguments/megatron_args.py:943-959).
- batch: global batch = per-device micro batch × gradient accumulation × data parallel.
- framework: a framework's own batch arithmetic (verl, OpenRLHF, TRL GRPO).
- steps: optimizer steps as transformers' Trainer counts them.
- precision, zero, model: mixed precision, ZeRO (or what else shards the states), the model and
  what is trained.
- device_memory: the memory estimate (dslint/explain/memory.py) against the device's memory.
- layout: the multi-node layout a launch is one node of; launch: what runs it, package versions.

dslint/explain/reading.py is what they all read (the plan, the options, the DeepSpeed config)
and the notes they add, in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dslint.explain import (
    batch,
    device_memory,
    framework,
    launch,
    model,
    parallelism,
    precision,
    steps,
    zero,
)
from dslint.explain.batch import Batch
from dslint.explain.device_memory import Memory
from dslint.explain.launch import PackageVersions
from dslint.explain.layout import LayoutInfo, layout_info
from dslint.explain.memory import estimate_for
from dslint.explain.model import ModelInfo
from dslint.explain.origins import Value, dict_or_none, from_sourced, position
from dslint.explain.parallelism import Parallelism
from dslint.explain.precision import Precision
from dslint.explain.reading import Reading
from dslint.explain.steps import Steps
from dslint.explain.zero import Zero
from dslint.launch.plan import LaunchPlan, Sourced

__all__ = ["Explanation", "Options", "estimate_for", "explain_plan", "explain_result", "options_from_settings", "to_json"]

SCHEMA_VERSION = 1


@dataclass
class Explanation:
    kind: str  # launch | training-config | deepspeed-config
    path: str
    line: int
    launcher: str | None
    consumer: str | None
    entry: str | None
    nodes: Value | None
    procs_per_node: Value | None
    world_size: Value | None
    parallel: Parallelism
    batch: Batch
    steps: Steps
    precision: Precision
    zero: Zero
    model: ModelInfo | None
    memory: Memory | None
    notes: list[str] = field(default_factory=list)
    plan: Any = None  # the LaunchPlan (not serialised)
    program: Any = None  # who reads the launch's files, with its evidence (dslint.launch.consumer.Consumer)
    via: list[str] = field(default_factory=list)  # what runs the launch: wrappers, the string it is read from
    slurm: str | None = None  # the #SBATCH directives of the script
    versions: list[PackageVersions] = field(default_factory=list)
    layout: LayoutInfo | None = None  # the multi-node layout this launch is a node of
    framework: Any = None  # a framework's own batch arithmetic (dslint.frameworks.FrameworkBatch): verl, OpenRLHF, TRL GRPO

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "path": self.path,
            "line": self.line,
            "launcher": self.launcher,
            "consumer": self.consumer,
            "program": self.program.to_dict() if self.program is not None else None,
            "via": list(self.via),
            "slurm": self.slurm,
            "entry": self.entry,
            "nodes": dict_or_none(self.nodes),
            "processes_per_node": dict_or_none(self.procs_per_node),
            "world_size": dict_or_none(self.world_size),
            "layout": dict_or_none(self.layout),
            "parallelism": self.parallel.to_dict(),
            "batch": self.batch.to_dict(),
            "steps": self.steps.to_dict(),
            "precision": self.precision.to_dict(),
            "zero": self.zero.to_dict(),
            "model": dict_or_none(self.model),
            "memory": dict_or_none(self.memory),
            "notes": list(self.notes),
            "versions": [v.to_dict() for v in self.versions],
            "framework": self.framework.to_dict() if self.framework is not None else None,
        }


@dataclass(frozen=True)
class Options:
    world_size: int | None = None  # for DeepSpeed configs no launch reaches
    world_size_origin: str = "--world-size on the command line"
    samples: int | None = None
    params: int | None = None  # --params
    device_memory: int | None = None
    device_memory_origin: str | None = None
    hardware: str | None = None
    hardware_origin: str | None = None
    cwd: Path | None = None
    settings: Any = field(default=None, compare=False)  # for the package versions (dslint.evidence.versions)
    versions: bool = False  # resolve the package versions (dslint explain)


def options_from_settings(settings, **overrides) -> Options:
    """Options for a rule: the world size, device memory and hardware from the settings."""
    values: dict[str, Any] = {}
    if getattr(settings, "world_size", None) is not None:
        values.update(world_size=settings.world_size.value, world_size_origin=settings.world_size.origin)
    device = getattr(settings, "device_memory", None)
    if device is not None:
        values.update(device_memory=device.value, device_memory_origin=device.origin)
    if getattr(settings, "hardware", None) is not None:
        values.update(hardware=settings.hardware.value, hardware_origin=settings.hardware.origin)
    values["settings"] = settings
    values.update(overrides)
    return Options(**values)


def explain_result(result, options: Options) -> list[Explanation]:
    """One explanation per launch plan, then per DeepSpeed config no plan reaches."""
    from dslint.documents.model import DEEPSPEED

    out = [explain_plan(plan, options) for plan in result.plans]
    reached = {id(p.deepspeed.document) for p in result.plans if p.deepspeed is not None and p.deepspeed.document is not None}
    for doc in result.documents:
        if doc.kind == DEEPSPEED and doc.mapping is not None and id(doc) not in reached:
            out.append(explain_deepspeed(doc, options))
    return out


def explain_deepspeed(document, options: Options) -> Explanation:
    """A DeepSpeed config on its own, as the deepspeed launcher would run it."""
    from dslint.launch.plan import Reference

    plan = LaunchPlan(origin=document, span=document.mapping.span, launcher=None, consumer="deepspeed", entry="DeepSpeed config")
    plan.deepspeed = Reference("deepspeed", document.path, document.mapping.span, document=document)
    if options.world_size is not None:
        plan.world_size = Sourced(options.world_size, options.world_size_origin, None)
    else:
        plan.notes.append("no launch reaches this config: pass --world-size N for the batch arithmetic")
    return explain_plan(plan, options, kind="deepspeed-config")


def explain_plan(plan: LaunchPlan, options: Options, kind: str | None = None) -> Explanation:
    """The sections in the order each needs the ones before it; their notes in that order too."""
    reading = Reading(plan, options)
    path, line = position(plan.span)
    if kind is None:
        kind = "launch" if plan.launcher != "yaml" else "training-config"
    procs = _known(plan.procs_per_node)
    world = _known(plan.world_size)
    if world is None and kind != "deepspeed-config" and options.world_size is not None:
        world = Value(options.world_size, options.world_size_origin)
    the_framework = framework.build(reading)
    if plan.launcher == "python" and the_framework is not None and the_framework.world is not None and the_framework.world.value:
        # `python -m verl.trainer.main_ppo` or an OpenRLHF ray driver is one process that starts the
        # framework's workers: the world that trains is theirs
        world = Value(the_framework.world.value, f"{the_framework.label}: {the_framework.world.origin}")
    parallel = parallelism.build(reading, world)
    the_batch = batch.build(reading, world, parallel.data_parallel)
    the_steps = steps.build(reading, the_batch)
    the_precision = precision.build(reading)
    the_zero = zero.build(reading, parallel.data_parallel)
    the_model = model.build(reading)
    memory = device_memory.build(reading, the_batch, the_precision, the_zero, the_model, procs, parallel)
    return Explanation(
        kind=kind, path=path or plan.origin.path, line=line or 1, launcher=plan.launcher if plan.launcher != "yaml" else None,
        consumer=plan.consumer, entry=plan.entry, nodes=_known(plan.nodes), procs_per_node=procs, world_size=world,
        parallel=parallel, batch=the_batch, steps=the_steps, precision=the_precision, zero=the_zero, model=the_model,
        memory=memory, notes=reading.notes, plan=plan, program=plan.program, via=launch.via(plan), slurm=launch.slurm(plan),
        versions=launch.versions(reading), layout=layout_info(plan), framework=the_framework,
    )


def _known(sourced: Sourced | None) -> Value | None:
    return from_sourced(sourced) if sourced is not None and sourced.value is not None else None


def to_json(explanations: list[Explanation]) -> dict:
    from dslint import __version__

    return {"version": SCHEMA_VERSION, "dslint": __version__, "launches": [e.to_dict() for e in explanations]}
