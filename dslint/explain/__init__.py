"""``dslint explain``: a launch as its consumer will run it, every number with where it came from.

Built from the launch plans (dslint.launch.plan) with pure functions; ``explain_result`` returns
one ``Explanation`` per launch (and per DeepSpeed config no launch reaches, when a world size is
given). ``Explanation.to_dict`` is the JSON form documented in docs/explain.md and
schemas/explain.schema.json; dslint/explain/text.py renders the text form.

The arithmetic follows the consumers:

- global batch = per-device micro batch × gradient accumulation × data-parallel size, with
  data parallel = world size / (tensor × pipeline × context × sequence parallel).
- transformers' TrainingArguments defaults: ``per_device_train_batch_size`` 8,
  ``gradient_accumulation_steps`` 1, ``num_train_epochs`` 3 (transformers/training_args.py).
- ms-swift: micro batch 1; accumulation ``max(1, ceil(16 / per_device_train_batch_size /
  WORLD_SIZE))`` when unset (swift/trainers/arguments.py:283-286); ``train_type`` lora;
  ``gradient_checkpointing`` on; fp16/bf16 derived from ``--torch_dtype``.
- Megatron-SWIFT: ``micro_batch_size`` 1, ``global_batch_size`` 16, data parallel =
  world / (TP × PP × CP) (swift/megatron/arguments/megatron_args.py:482-483, 943-959).
- DeepSpeed itself: the batch triple derived as deepspeed/runtime/config.py:590-656 does.
- Optimizer steps per epoch as transformers' Trainer computes them
  (``set_initial_training_values``): ``max(ceil(len(dataloader) / accumulation), 1)`` with
  ``len(dataloader) = ceil(samples / (micro × data parallel))``; the progress bar counts
  optimizer steps, ``ceil(epochs × steps per epoch)`` unless ``max_steps`` is set.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from dslint.documents.model import Mapping, Scalar
from dslint.launch.plan import HF_LIKE, Arg, LaunchPlan, Sourced
from dslint.explain.memory import (
    AMBIGUOUS_HARDWARE,
    ActivationInputs,
    MemoryEstimate,
    MemoryInputs,
    ZeroSetup,
    estimate,
    hardware_memory,
)
from dslint.evidence.models import ModelShape, from_count, read_local_config, recognise
from dslint.values import as_int

SCHEMA_VERSION = 1
TRUE_TEXT = ("true", "yes", "1", "t", "y", "on")
FALSE_TEXT = ("false", "no", "0", "f", "n", "off")
MODEL_ARGS = ("model", "model_name_or_path", "model_id_or_path", "pretrained_model_name_or_path", "base_model")
SEQ_ARGS = ("max_length", "cutoff_len", "max_seq_length", "seq_length", "sequence_len", "block_size", "model_max_length", "max_seq_len")

# ---- values with their origin -----------------------------------------------------------------


@dataclass(frozen=True)
class Value:
    """One resolved value and why: a file position, the command line, or a default."""

    value: Any
    origin: str
    path: str | None = None
    line: int | None = None
    default: bool = False

    def to_dict(self) -> dict:
        return {"value": self.value, "origin": self.origin, "path": self.path, "line": self.line, "default": self.default}

    @property
    def where(self) -> str:
        if self.path is not None and self.line is not None:
            return f"{self.path}:{self.line}"
        return self.origin


def _position(span) -> tuple[str | None, int | None]:
    if span is None:
        return None, None
    if span.virtual:
        return span.source.path, None
    return span.source.path, span.source.position(span.start)[0]


def _from_arg(arg: Arg, value: Any, name: str | None = None) -> Value:
    path, line = _position(arg.span)
    shown = f"--{arg.name}" if arg.origin.startswith("--") else arg.name
    if name:
        shown = name
    where = f"{path}:{line}" if line is not None else (path or "the command line")
    origin = f"{shown} at {where}"
    if arg.assumed:
        origin += f" (assuming {arg.assumed} keeps its default)"
    return Value(value, origin, path if line is not None else None, line)


def _from_sourced(sourced: Sourced) -> Value:
    path, line = _position(sourced.span)
    return Value(sourced.value, sourced.origin, path if line is not None else None, line, sourced.default)


def _from_node(node, key: str, value: Any, reference=None) -> Value:
    """A value read from a config node; inside a preset or inline JSON, located where the
    launch names that config."""
    path, line = _position(node.span)
    if line is None:
        if reference is not None:
            ref_path, ref_line = _position(reference.span)
            return Value(value, f"{key} in {path.strip('<>')} ({ref_path}:{ref_line})", ref_path, ref_line)
        return Value(value, f"{key} in {path}", None, None)
    return Value(value, f"{key} at {path}:{line}", path, line)


def _default(value: Any, origin: str) -> Value:
    return Value(value, origin, None, None, True)


def _float(value) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _bool(value) -> bool | None:
    if value is True or value is False:
        return value
    if value is None:
        return None
    text = str(value).strip().lower()
    if text in TRUE_TEXT:
        return True
    if text in FALSE_TEXT:
        return False
    return None


# ---- the explanation ---------------------------------------------------------------------------


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
            "data_parallel": self.data_parallel.to_dict() if self.data_parallel else None,
        }


@dataclass
class Batch:
    micro_batch: Value | None
    accumulation: Value | None
    data_parallel: Value | None
    global_batch: int | float | None
    passes_per_step: int | None  # forward+backward passes per device per optimizer step
    formula: str
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "micro_batch": self.micro_batch.to_dict() if self.micro_batch else None,
            "gradient_accumulation": self.accumulation.to_dict() if self.accumulation else None,
            "data_parallel": self.data_parallel.to_dict() if self.data_parallel else None,
            "global_batch": self.global_batch,
            "passes_per_optimizer_step": self.passes_per_step,
            "formula": self.formula,
            "notes": list(self.notes),
        }


@dataclass
class Steps:
    samples: Value | None
    epochs: Value | None
    max_steps: Value | None
    batches_per_epoch: int | None  # micro-batches each device sees per epoch
    steps_per_epoch: int | None
    total_steps: int | None
    progress_bar: str

    def to_dict(self) -> dict:
        return {
            "samples": self.samples.to_dict() if self.samples else None,
            "epochs": self.epochs.to_dict() if self.epochs else None,
            "max_steps": self.max_steps.to_dict() if self.max_steps else None,
            "micro_batches_per_epoch": self.batches_per_epoch,
            "optimizer_steps_per_epoch": self.steps_per_epoch,
            "optimizer_steps_total": self.total_steps,
            "progress_bar": self.progress_bar,
        }


@dataclass
class Precision:
    weights_dtype: Value
    mixed_precision: Value  # "bf16" | "fp16" | "fp32" | None (unknown)
    deepspeed_bf16: Value | None
    deepspeed_fp16: Value | None

    def to_dict(self) -> dict:
        return {
            "weights_dtype": self.weights_dtype.to_dict(),
            "mixed_precision": self.mixed_precision.to_dict(),
            "deepspeed": {
                "bf16": self.deepspeed_bf16.to_dict() if self.deepspeed_bf16 else None,
                "fp16": self.deepspeed_fp16.to_dict() if self.deepspeed_fp16 else None,
            },
        }


@dataclass
class Setting:
    """A ZeRO setting with the memory it implies."""

    key: str
    value: Value
    bytes: float | None
    meaning: str

    def to_dict(self) -> dict:
        return {"key": self.key, **self.value.to_dict(), "bytes": self.bytes, "meaning": self.meaning}


@dataclass
class Zero:
    engine: str  # deepspeed | megatron | ddp
    stage: Value | None
    offload_optimizer: Value | None
    offload_param: Value | None
    settings: list[Setting] = field(default_factory=list)
    config: str | None = None  # the DeepSpeed config's path or preset

    def to_dict(self) -> dict:
        return {
            "engine": self.engine,
            "config": self.config,
            "stage": self.stage.to_dict() if self.stage else None,
            "offload_optimizer": self.offload_optimizer.to_dict() if self.offload_optimizer else None,
            "offload_param": self.offload_param.to_dict() if self.offload_param else None,
            "settings": [s.to_dict() for s in self.settings],
        }


@dataclass
class ModelInfo:
    shape: ModelShape
    how: str  # params-option | local-config | recognised-name
    trainable: tuple[int, int] | None
    training: Value  # full | lora | qlora ...
    seq_len: Value | None
    checkpointing: Value | None
    attention: Value | None

    def to_dict(self) -> dict:
        return {
            **self.shape.as_dict(),
            "how": self.how,
            "training": self.training.to_dict(),
            "trainable_params": list(self.trainable) if self.trainable else None,
            "sequence_length": self.seq_len.to_dict() if self.seq_len else None,
            "activation_checkpointing": self.checkpointing.to_dict() if self.checkpointing else None,
            "attention": self.attention.to_dict() if self.attention else None,
        }


@dataclass
class Memory:
    estimate: MemoryEstimate
    inputs: MemoryInputs
    device_memory: Value | None

    @property
    def fits(self) -> bool | None:
        if self.device_memory is None:
            return None
        if self.estimate.device_high <= self.device_memory.value:
            return True
        if self.estimate.device_low > self.device_memory.value:
            return False
        return None

    def to_dict(self) -> dict:
        est = self.estimate
        return {
            "device": {"low": round(est.device_low), "high": round(est.device_high)},
            "model_states": round(est.model_states("high")),
            "cpu_per_node": {"low": round(est.cpu_low), "high": round(est.cpu_high)},
            "nvme_per_node": round(est.nvme_high),
            "terms": [
                {"key": t.key, "label": t.label, "group": t.group, "place": t.place, "low": round(t.low), "high": round(t.high), "formula": t.formula}
                for t in est.terms
            ],
            "device_memory": self.device_memory.to_dict() if self.device_memory else None,
            "fits": self.fits,
            "notes": list(est.notes),
        }


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
    nodes: Value | None  # the node count, as the node of rank 0 declares it
    world_size: int | None  # the sum over the nodes, when all are here and known
    members: list[NodeLaunch]

    def to_dict(self) -> dict:
        return {
            "grouping": self.grouping,
            "several_jobs": self.several_jobs,
            "nodes": self.nodes.to_dict() if self.nodes else None,
            "world_size": self.world_size,
            "members": [m.to_dict() for m in self.members],
        }


def layout_info(plan: LaunchPlan) -> LayoutInfo | None:
    layout = getattr(plan, "layout", None)
    if layout is None:
        return None

    def value(sourced):
        return _from_sourced(sourced) if sourced is not None else None

    members = []
    for node in layout.nodes:
        path, line = _position(node.span)
        devices = node.devices
        members.append(NodeLaunch(
            path=path or node.document.path, line=line or 1, launcher=node.launcher, program=node.program,
            rank=value(node.rank), processes=value(node.procs), master_addr=value(node.master_addr),
            master_port=value(node.master_port),
            visible_devices=_from_sourced(devices) if devices is not None else None,
            starts_every_node=node.one_command, this_launch=node.plan is plan,
        ))
    reference = layout.reference
    return LayoutInfo(layout.why, layout.several_jobs, value(reference.nodes), layout.world_size(), members)


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
    versions: list["PackageVersions"] = field(default_factory=list)
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
            "nodes": self.nodes.to_dict() if self.nodes else None,
            "processes_per_node": self.procs_per_node.to_dict() if self.procs_per_node else None,
            "world_size": self.world_size.to_dict() if self.world_size else None,
            "layout": self.layout.to_dict() if self.layout else None,
            "parallelism": self.parallel.to_dict(),
            "batch": self.batch.to_dict(),
            "steps": self.steps.to_dict(),
            "precision": self.precision.to_dict(),
            "zero": self.zero.to_dict(),
            "model": self.model.to_dict() if self.model else None,
            "memory": self.memory.to_dict() if self.memory else None,
            "notes": list(self.notes),
            "versions": [v.to_dict() for v in self.versions],
            "framework": self.framework.to_dict() if self.framework is not None else None,
        }


@dataclass
class PackageVersions:
    """The versions of one package a launch may run with, and the evidence (dslint.evidence.versions)."""

    candidates: Any  # dslint.evidence.versions.Candidates

    def to_dict(self) -> dict:
        from dslint.evidence.versions import display_path

        found = self.candidates
        evidence = found.evidence
        pin = evidence.pins[0] if evidence is not None and evidence.pins else None
        return {
            "package": found.package,
            "versions": list(found.versions),
            "evidence": evidence.kind if evidence is not None else "none",
            "source": found.why(),
            "text": found.describe(),
            "path": display_path(pin.path, found.root) if pin is not None else None,
            "line": pin.line if pin is not None else None,
        }


def launch_packages(plan: LaunchPlan) -> list[str]:
    """The packages whose versions decide how the launch runs."""
    packages = []
    if plan.deepspeed is not None or plan.consumer in ("deepspeed", "megatron"):
        packages.append("deepspeed")
    if plan.consumer in ("hf", "swift", "llamafactory", "accelerate"):
        packages.append("transformers")
    if plan.consumer == "accelerate" or plan.launcher == "accelerate" or plan.accelerate_config is not None:
        packages.append("accelerate")
    if plan.consumer in ("swift", "megatron") and (plan.launcher in ("swift", "megatron") or plan.consumer == "swift"):
        packages.append("ms-swift")
    if plan.consumer == "llamafactory":
        packages.append("llamafactory")
    if getattr(plan.program, "kind", None) == "trl":
        packages.append("trl")
    return packages


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
    return _Builder(plan, options).build(kind)


# ---- building -------------------------------------------------------------------------------


def _via(plan: LaunchPlan) -> list[str]:
    """What runs the launch, outermost first: the command that runs the string it is read from
    (``bash -c``, ``eval``, ``sbatch --wrap``) and the wrappers in front of it (``srun``, ``uv run``)."""
    command = getattr(plan.command, "command", None)
    out: list[str] = []
    while command is not None:
        line = command.span.source.position(command.span.start)[0]
        if command.wrappers:
            written = []  # the words as written (one unquoted `$ARGS` gives several words)
            for word in command.wrappers:
                if not written or written[-1].span != word.span:
                    written.append(word)
            out.append(f"{' '.join(w.raw for w in written)} (line {line})")
        runner = command.runner
        if runner is not None:
            out.append(f"the string `{runner.basename}` runs (line {runner.span.source.position(runner.span.start)[0]}), read as a script")
        command = runner
    return list(reversed(out))


def _slurm(plan: LaunchPlan) -> str | None:
    job = getattr(getattr(plan.origin, "script", None), "sbatch", None)
    if job is None:
        return None
    lines = sorted(d.span.source.position(d.span.start)[0] for d in job.directives.values())
    shown = f"{lines[0]}" if lines[0] == lines[-1] else f"{lines[0]}-{lines[-1]}"
    return f"#SBATCH {job.describe()} ({plan.origin.path}:{shown})"



class _Builder:
    def __init__(self, plan: LaunchPlan, options: Options):
        self.plan = plan
        self.options = options
        self.notes: list[str] = list(plan.notes)
        self.consumer = plan.consumer
        self.megatron = plan.consumer == "megatron" or (plan.consumer is None and "global_batch_size" in plan.args and "micro_batch_size" in plan.args)
        self.config: Mapping | None = plan.deepspeed.config if plan.deepspeed is not None else None

    # -- helpers

    def arg(self, *names: str) -> Arg | None:
        return self.plan.arg(*names)

    def ds(self, dotted: str):
        node = self.config
        for part in dotted.split("."):
            if not isinstance(node, Mapping):
                return None
            node = node.get(part)
        return node

    def ds_value(self, dotted: str) -> tuple[Any, Any]:
        node = self.ds(dotted)
        if isinstance(node, Scalar):
            return node.value, node
        if node is not None:
            return node.to_python(), node
        return None, None

    def node_value(self, node, key: str, value: Any) -> Value:
        return _from_node(node, key, value, self.plan.deepspeed)

    def loc(self, node) -> tuple[str, str | None, int | None]:
        """(text, path, line) of a config node, for origins of "auto" values."""
        found = self.node_value(node, "", None)
        text = found.where if found.line is not None else (found.origin.strip() or "the config")
        return text, found.path, found.line

    def defaults_name(self) -> str:
        return {
            "swift": "ms-swift's default",
            "megatron": "Megatron-SWIFT's default",
            "llamafactory": "the transformers default (LLaMA-Factory)",
            "hf": "the transformers default",
        }.get(self.consumer or "", "the default")

    # -- sections

    def build(self, kind: str | None) -> Explanation:
        plan = self.plan
        path, line = _position(plan.span)
        if kind is None:
            kind = "launch" if plan.launcher != "yaml" else "training-config"
        nodes = _from_sourced(plan.nodes) if plan.nodes is not None and plan.nodes.value is not None else None
        procs = _from_sourced(plan.procs_per_node) if plan.procs_per_node is not None and plan.procs_per_node.value is not None else None
        world = _from_sourced(plan.world_size) if plan.world_size is not None and plan.world_size.value is not None else None
        if world is None and kind != "deepspeed-config" and self.options.world_size is not None:
            world = Value(self.options.world_size, self.options.world_size_origin)
        self.world = world
        parallel = self.parallelism(world)
        self._parallel_cache = parallel
        self.dp = parallel.data_parallel
        batch = self.batch(world)
        steps = self.steps(batch)
        precision = self.precision()
        zero = self.zero_info(precision)
        model = self.model()
        memory = self.memory(batch, precision, zero, model, procs)
        return Explanation(
            kind=kind, path=path or plan.origin.path, line=line or 1, launcher=plan.launcher if plan.launcher != "yaml" else None,
            consumer=plan.consumer, entry=plan.entry, nodes=nodes, procs_per_node=procs, world_size=world,
            parallel=parallel, batch=batch, steps=steps, precision=precision, zero=zero, model=model, memory=memory,
            notes=self.notes, plan=plan, program=plan.program, via=_via(plan), slurm=_slurm(plan),
            versions=self.versions() if self.options.versions else [], layout=layout_info(plan),
            framework=self.framework(),
        )

    def framework(self):
        from dslint.frameworks import batch_of

        return batch_of(self.plan, self.options.settings) if self.plan.command is not None or self.plan.program is not None else None

    def versions(self) -> list[PackageVersions]:
        from dslint.evidence.versions import candidates

        start = self.plan.origin.path if self.plan.origin is not None else None
        return [PackageVersions(candidates(package, start, self.options.settings, self.plan.program))
                for package in launch_packages(self.plan)]

    def _degree(self, names: tuple[str, ...], label: str, default_text: str) -> Value:
        arg = self.arg(*names)
        if arg is not None:
            number = as_int(arg.value)
            if number is not None and number >= 1:
                return _from_arg(arg, number)
        return _default(1, default_text)

    def parallelism(self, world: Value | None) -> Parallelism:
        tp = self._degree(("tensor_model_parallel_size", "tp", "tensor_parallel_size"), "tensor", "no tensor parallelism")
        pp = self._degree(("pipeline_model_parallel_size", "pp", "pipeline_parallel_size"), "pipeline", "no pipeline parallelism")
        cp = self._degree(("context_parallel_size", "cp"), "context", "no context parallelism")
        if "no_pipeline_parallel" in self.plan.args:
            pp = _from_arg(self.plan.args["no_pipeline_parallel"], 1)
        sp = _default(1, "no sequence parallelism")
        if not self.megatron:
            arg = self.arg("sequence_parallel_size", "ulysses_size")
            if arg is not None and as_int(arg.value):
                sp = _from_arg(arg, as_int(arg.value))
            else:
                value, node = self.ds_value("sequence_parallel_size")
                if as_int(value):
                    sp = self.node_value(node, "sequence_parallel_size", as_int(value))
        if self.consumer in HF_LIKE or self.consumer == "accelerate":
            if tp.value > 1 or pp.value > 1:
                self.notes.append("tensor/pipeline sizes in the training arguments are not read by the HF Trainer; data parallel ignores them")
                tp, pp = _default(1, "not used by the HF Trainer"), _default(1, "not used by the HF Trainer")
            value, node = self.ds_value("tensor_parallel.autotp_size")
            if as_int(value) and as_int(value) > 1:
                self.notes.append(f"DeepSpeed AutoTP (tensor_parallel.autotp_size {value}) shards the weights; DeepSpeed's batch check does not divide the world size by it")
        dp = None
        if world is not None and isinstance(world.value, int):
            divisor = tp.value * pp.value * cp.value * sp.value
            parts = [f"{name} {v.value}" for name, v in (("tensor", tp), ("pipeline", pp), ("context", cp), ("sequence", sp)) if v.value > 1]
            if divisor == 1:
                dp = Value(world.value, f"the world size ({world.origin})", world.path, world.line, world.default)
            elif world.value % divisor == 0:
                dp = Value(world.value // divisor, f"world size {world.value} / ({' × '.join(parts)} parallel)", world.path, world.line)
            else:
                self.notes.append(f"world size {world.value} is not divisible by {' × '.join(parts)} = {divisor}: the launch fails")
        return Parallelism(tp, pp, cp, sp, dp)

    # -- batch

    def batch(self, world: Value | None) -> Batch:
        if self.megatron:
            return self._megatron_batch()
        if self.consumer in HF_LIKE:
            return self._hf_batch(world)
        return self._deepspeed_batch()

    def _hf_batch(self, world: Value | None) -> Batch:
        swift = self.consumer == "swift"
        notes: list[str] = []
        arg = self.arg("per_device_train_batch_size", "micro_batch_size", "batch_size")  # micro_batch_size: axolotl
        micro = None
        built = self._built("per_device_train_batch_size")
        if built is not None:
            micro = built
        elif arg is not None:
            number = as_int(arg.value)
            micro = _from_arg(arg, number) if number is not None else None
            if number is None:
                notes.append(f"per_device_train_batch_size {arg.value!r} is not a number")
        else:
            micro = self._own_default("per_device_train_batch_size") or _default(
                1 if swift else 8, f"{self.defaults_name()} per_device_train_batch_size {1 if swift else 8} (not set)")
        arg = self.arg("gradient_accumulation_steps")
        accumulation = None
        own = self._own_default("gradient_accumulation_steps")
        built = self._built("gradient_accumulation_steps")
        if built is not None:
            accumulation = built
        elif arg is not None:
            number = as_int(arg.value)
            accumulation = _from_arg(arg, number) if number is not None else None
        elif own is not None:
            accumulation = own
        elif swift:
            if micro is not None and micro.value and world is not None and isinstance(world.value, int):
                value = max(1, math.ceil(16 / micro.value / world.value))
                accumulation = _default(value, f"ms-swift's default max(1, ceil(16 / ({micro.value} × {world.value}))) = {value} (gradient_accumulation_steps not set; swift/trainers/arguments.py:283-286)")
            else:
                notes.append("ms-swift derives gradient_accumulation_steps = ceil(16 / (micro batch × world size)); the world size is unknown")
        else:
            accumulation = _default(1, f"{self.defaults_name()} gradient_accumulation_steps 1 (not set)")
        for key, mine in (("train_micro_batch_size_per_gpu", micro), ("gradient_accumulation_steps", accumulation)):
            value, node = self.ds_value(key)
            if mine is not None and value is not None and value != "auto" and value != mine.value:
                notes.append(f"the DeepSpeed config sets {key} {value!r} but the Trainer uses {mine.value}: the HF Trainer stops with a mismatch error (DS301)")
        return self._product(micro, accumulation, notes)

    def _unknown_factors(self, micro: Value | None, accumulation: Value | None, dp: Value | None, notes: list[str]) -> list[str]:
        """Why each factor of the global batch that stays unknown is unknown (one note each)."""
        out = []
        said = " ".join(notes)
        if dp is None:
            reason = next((n for n in self.plan.notes if "world size" in n or "processes" in n), None)
            out.append(f"unknown data parallel size: {reason or 'the launch does not say how many processes it starts'}")
        for value, name, key in ((micro, "micro batch", "train_micro_batch_size_per_gpu"),
                                 (accumulation, "gradient accumulation", "gradient_accumulation_steps")):
            if value is not None and value.value is not None:
                continue
            if key in said:
                continue  # a note above already says what is wrong with it
            if self.consumer in HF_LIKE:
                out.append(f"unknown {name}: the training argument is not a number dslint can read")
            elif self.config is None:
                out.append(f"unknown {name}: no DeepSpeed config is linked"
                           + ("" if self.plan.deepspeed is None else f" ({self.plan.deepspeed.raw} could not be read)"))
            else:
                out.append(f"unknown {name}: the DeepSpeed config sets neither {key} nor train_batch_size with the other factors"
                           + (f"; {self.plan.program.program} may set it in code" if self.plan.program is not None
                              and self.plan.program.facts is not None else ""))
        return out

    def _built(self, name: str) -> Value | None:
        """A literal keyword of the TrainingArguments the program builds itself
        (``TrainingArguments(per_device_train_batch_size=4)``): it wins over the command line."""
        from dslint.launch.consumer import ProgramValue, program_training

        training = program_training(self.plan.program)
        if training is None or not training.built or training.parsed:
            return None
        said = training.value(name)
        number = as_int(said.value) if isinstance(said, ProgramValue) and isinstance(said.value, int) else None
        if number is None:
            return None
        evidence = said.evidence
        return Value(number, f"{evidence.text} ({evidence.where()})", evidence.path, evidence.line, False)

    def _own_default(self, name: str) -> Value | None:
        """The default the program's own dataclass gives a batch field (a TrainingArguments subclass
        that changes per_device_train_batch_size, say), when the program was read."""
        program = self.plan.program
        if program is None or not program.established or program.facts is None:
            return None
        from dslint.launch.consumer import program_arguments

        parsed = program_arguments(program)
        definition = parsed.own.get(name) if parsed is not None else None
        number = as_int(definition.default) if definition is not None and isinstance(definition.default, int) else None
        if number is None:
            return None
        evidence = definition.evidence
        return Value(number, f"the default of {name} in {evidence.text.split(' of ', 1)[-1]} ({evidence.where()}; not set)",
                     evidence.path, evidence.line, True)

    def _megatron_batch(self) -> Batch:
        notes: list[str] = []
        arg = self.arg("micro_batch_size")
        micro = _from_arg(arg, as_int(arg.value)) if arg is not None and as_int(arg.value) else _default(1, "Megatron's default micro_batch_size 1")
        arg = self.arg("global_batch_size")
        if arg is not None and as_int(arg.value):
            global_value = _from_arg(arg, as_int(arg.value))
        else:
            global_value = _default(16, "Megatron-SWIFT's default global_batch_size 16 (megatron_args.py:482-483)")
        accumulation = None
        dp = self.dp
        if dp is not None and micro.value:
            step = micro.value * dp.value
            if global_value.value % step:
                notes.append(f"global_batch_size {global_value.value} is not divisible by micro batch {micro.value} × data parallel {dp.value}: Megatron refuses it")
            else:
                value = global_value.value // step
                accumulation = Value(value, f"global_batch_size {global_value.value} / (micro {micro.value} × data parallel {dp.value}) ({global_value.where})", global_value.path, global_value.line, global_value.default)
        batch = self._product(micro, accumulation, notes)
        if batch.global_batch is None:
            batch.global_batch = global_value.value
        return batch

    def _deepspeed_batch(self) -> Batch:
        from dslint.launch.deepspeed_batch import derive

        notes: list[str] = []
        config = self.config
        if config is None:
            return Batch(None, None, self.dp, None, None, "unknown: no DeepSpeed config or training arguments that say it", notes)
        values, nodes = {}, {}
        for key in ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps"):
            value, node = self.ds_value(key)
            nodes[key] = node
            values[key] = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
            if value == "auto":
                if self.consumer == "accelerate":
                    notes.append(f"{key} is \"auto\": accelerate fills it from the training script's data loader")
                else:
                    notes.append(f"{key} is \"auto\", which DeepSpeed itself never fills (crash at start-up)")
        accel = self.consumer == "accelerate" and self.plan.accelerate_config is not None and self.plan.accelerate_config.config is not None
        if accel and values["gradient_accumulation_steps"] is None:
            section = self.plan.accelerate_config.config.get("deepspeed_config")
            if isinstance(section, Mapping) and isinstance(section.get("gradient_accumulation_steps"), Scalar):
                node = section.get("gradient_accumulation_steps")
                values["gradient_accumulation_steps"] = as_int(node.value)
                nodes["gradient_accumulation_steps"] = node
        dp = self.dp
        tbs, mbs, gas = values["train_batch_size"], values["train_micro_batch_size_per_gpu"], values["gradient_accumulation_steps"]
        if dp is None:
            micro = self.node_value(nodes["train_micro_batch_size_per_gpu"], "train_micro_batch_size_per_gpu", mbs) if mbs is not None else None
            accumulation = self.node_value(nodes["gradient_accumulation_steps"], "gradient_accumulation_steps", gas) if gas is not None else None
            batch = self._product(micro, accumulation, notes)
            if tbs is not None:
                batch.global_batch = tbs
            return batch
        d_tbs, d_mbs, d_gas, failure = derive(tbs, mbs, gas, dp.value)
        if failure:
            notes.append(f"DeepSpeed's batch check fails: {failure}")

        def sourced(key, given, derived_value, how):
            if given is not None:
                return self.node_value(nodes[key], key, given)
            if derived_value is None:
                return None
            return _default(derived_value, how)

        micro = sourced("train_micro_batch_size_per_gpu", mbs, d_mbs, f"DeepSpeed derives train_micro_batch_size_per_gpu = {d_mbs}")
        accumulation = sourced("gradient_accumulation_steps", gas, d_gas, f"DeepSpeed derives gradient_accumulation_steps = {d_gas}" if tbs is not None else "DeepSpeed's default gradient_accumulation_steps 1")
        batch = self._product(micro, accumulation, notes)
        if tbs is not None:
            batch.global_batch = tbs
        return batch

    def _product(self, micro: Value | None, accumulation: Value | None, notes: list[str]) -> Batch:
        dp = self.dp
        known = micro is not None and accumulation is not None and dp is not None and micro.value is not None and accumulation.value is not None
        global_batch = micro.value * accumulation.value * dp.value if known else None

        def part(v, name):
            return str(v.value) if v is not None and v.value is not None else name

        formula = f"global batch = {part(micro, 'micro')} × {part(accumulation, 'accumulation')} × {part(dp, 'data parallel')}"
        if global_batch is not None:
            formula += f" = {_fmt(global_batch)}"
        else:
            notes.extend(self._unknown_factors(micro, accumulation, dp, notes))
        passes = accumulation.value if accumulation is not None and isinstance(accumulation.value, int) else None
        return Batch(micro, accumulation, dp, global_batch, passes, formula, notes)

    # -- steps

    def steps(self, batch: Batch) -> Steps:
        hf_like = self.consumer in HF_LIKE
        samples = None
        if self.options.samples is not None:
            samples = Value(self.options.samples, "--samples on the command line")
        else:
            samples = self._dataset_size()
        epochs_arg = self.arg("num_train_epochs", "epochs", "num_epochs")
        if epochs_arg is not None and _float(epochs_arg.value) is not None:
            epochs = _from_arg(epochs_arg, _float(epochs_arg.value))
        elif hf_like or self.megatron:
            epochs = _default(3.0, f"{self.defaults_name()} num_train_epochs 3") if not self.megatron else None
        else:
            epochs = None
        max_steps = None
        arg = self.arg("max_steps", "train_iters")
        if arg is not None and as_int(arg.value) is not None and as_int(arg.value) > 0:
            max_steps = _from_arg(arg, as_int(arg.value))
        batches = steps_per_epoch = total = None
        micro, gas, dp = batch.micro_batch, batch.accumulation, batch.data_parallel
        if samples is not None and micro is not None and gas is not None and dp is not None and micro.value and gas.value:
            if self.megatron:
                steps_per_epoch = max(math.ceil(samples.value / batch.global_batch), 1) if batch.global_batch else None
                batches = steps_per_epoch * gas.value if steps_per_epoch else None
            else:
                batches = math.ceil(samples.value / (micro.value * dp.value))
                steps_per_epoch = max(math.ceil(batches / gas.value), 1)
        if max_steps is not None:
            total = max_steps.value
        elif steps_per_epoch is not None and epochs is not None:
            total = math.ceil(epochs.value * steps_per_epoch)
        if hf_like:
            bar = "the HF/ms-swift progress bar counts optimizer steps"
            if total is not None:
                bar += f": 0/{total}"
            if gas is not None and gas.value:
                bar += f"; each step is {gas.value} forward/backward pass(es) per device"
        elif self.megatron:
            bar = "Megatron logs iterations: one per optimizer step (global batch)"
        else:
            bar = "the training script decides what its progress bar counts"
        if samples is None:
            bar += " (pass --samples N for step counts)"
        return Steps(samples, epochs, max_steps, batches, steps_per_epoch, total, bar)

    def _dataset_size(self) -> Value | None:
        arg = self.arg("dataset")
        if arg is not None and self.consumer == "swift":
            items = arg.value if isinstance(arg.value, list) else [arg.value]
            total = 0
            for item in items:
                if not isinstance(item, str) or "#" not in item:
                    return None
                count = as_int(item.rsplit("#", 1)[1])
                if count is None:
                    return None
                total += count
            if items:
                return _from_arg(arg, total, "--dataset sample counts (name#N)")
        arg = self.arg("max_samples", "max_train_samples")
        if arg is not None and as_int(arg.value):
            value = _from_arg(arg, as_int(arg.value))
            self.notes.append(f"{arg.name} caps the dataset at {value.value} samples; steps assume the dataset is at least that large")
            return value
        return None

    # -- precision

    def precision(self) -> Precision:
        consumer = self.consumer
        dtype_arg = self.arg("torch_dtype", "dtype", "infer_dtype")
        dtype = None
        if dtype_arg is not None and isinstance(dtype_arg.value, str) and dtype_arg.value not in ("auto",):
            dtype = _from_arg(dtype_arg, _dtype_name(dtype_arg.value))
        flags = {}
        for name in ("bf16", "fp16", "pure_bf16"):
            arg = self.arg(name)
            if arg is not None and _bool(arg.value) is not None:
                flags[name] = _from_arg(arg, _bool(arg.value))
        mixed: Value
        if flags.get("pure_bf16") is not None and flags["pure_bf16"].value:
            mixed = flags["pure_bf16"]
            mixed = replace(mixed, value="bf16")
        elif flags.get("bf16") is not None and flags["bf16"].value:
            mixed = replace(flags["bf16"], value="bf16")
        elif flags.get("fp16") is not None and flags["fp16"].value:
            mixed = replace(flags["fp16"], value="fp16")
        elif consumer in ("swift", "megatron") and dtype is not None and not ("bf16" in flags or "fp16" in flags):
            derived = "bf16" if dtype.value == "bfloat16" else "fp16"
            mixed = replace(dtype, value=derived, origin=f"derived from torch_dtype {dtype.value} ({dtype.where}): ms-swift sets {derived}", default=True)
        elif consumer in ("swift", "megatron"):
            mixed = _default(None, "ms-swift derives fp16/bf16 from the model's torch_dtype (usually bfloat16); not set in the launch")
        elif consumer in ("hf", "llamafactory") and flags:
            mixed = _default("fp32", "neither --bf16 nor --fp16 is on: fp32 training")
        elif consumer in ("hf",):
            mixed = _default("fp32", "the transformers default (bf16 and fp16 off): fp32 training")
        elif consumer == "llamafactory":
            mixed = _default(None, "LLaMA-Factory infers the compute dtype from the device (bf16 > fp16 > fp32)")
        else:
            mixed = _default(None, "not stated")
        if consumer == "accelerate" and self.plan.accelerate_config is not None and self.plan.accelerate_config.config is not None:
            entry = self.plan.accelerate_config.config.entry("mixed_precision")
            if entry is not None and isinstance(entry.value, Scalar) and entry.value.value in ("bf16", "fp16"):
                mixed = self.node_value(entry.value, "mixed_precision", entry.value.value)
        ds_bf16 = ds_fp16 = None
        if self.config is not None:
            resolved = {}
            for section in ("bf16", "fp16"):
                name = section
                if section == "bf16" and self.config.get("bf16") is None and self.config.get("bfloat16") is not None:
                    name = "bfloat16"  # read only when "bf16" is absent (precision_config.py:34-38)
                value, node = self.ds_value(f"{name}.enabled")
                if node is None:
                    resolved[section] = _default(False, f"no {section} section: off")
                    continue
                if value == "auto":
                    if self.plan.fills_auto:
                        filled = None if mixed.value is None else mixed.value == section
                        text, path, line = self.loc(node)
                        resolved[section] = Value(filled, f'"auto" at {text}, filled from the training arguments ({mixed.origin})', path, line)
                    else:
                        text, path, line = self.loc(node)
                        resolved[section] = Value(False, f'"auto" at {text}: DeepSpeed alone drops it, so {section} is off', path, line)
                else:
                    resolved[section] = self.node_value(node, f"{section}.enabled", _bool(value))
            ds_bf16, ds_fp16 = resolved["bf16"], resolved["fp16"]
            if consumer in ("deepspeed", None) or (consumer == "accelerate" and mixed.value is None):
                if ds_bf16.value:
                    mixed = replace(ds_bf16, value="bf16")
                elif ds_fp16.value:
                    mixed = replace(ds_fp16, value="fp16")
                elif consumer == "deepspeed":
                    mixed = _default("fp32", "neither bf16 nor fp16 is enabled in the DeepSpeed config: fp32 training")
            elif mixed.value in (None, "fp32") and (ds_bf16.value is True or ds_fp16.value is True) and not ds_bf16.origin.startswith('"auto"'):
                on = "bf16" if ds_bf16.value else "fp16"
                src = ds_bf16 if ds_bf16.value else ds_fp16
                mixed = replace(src, value=on)
        if mixed.value in ("bf16", "fp16"):
            if self.config is not None:
                weights = Value("bfloat16" if mixed.value == "bf16" else "float16", f"DeepSpeed casts the model to {mixed.value} ({mixed.where})", mixed.path, mixed.line, mixed.default)
            elif dtype is not None:
                weights = dtype
            elif consumer == "llamafactory":
                weights = replace(mixed, value="bfloat16" if mixed.value == "bf16" else "float16", origin=f"LLaMA-Factory loads the model in its compute dtype ({mixed.where})")
            else:
                weights = _default("float32", f"{mixed.value} autocast keeps fp32 weights (no DeepSpeed)")
        elif dtype is not None:
            weights = dtype
        elif mixed.value == "fp32":
            weights = _default("float32", "fp32 training")
        else:
            weights = _default(None, "unknown (the model's config.json torch_dtype)")
        return Precision(weights, mixed, ds_bf16, ds_fp16)

    # -- ZeRO

    def zero_info(self, precision: Precision) -> Zero:
        plan = self.plan
        if self.megatron:
            arg = self.arg("use_distributed_optimizer")
            value = _from_arg(arg, _bool(arg.value) if arg.value is not True else True) if arg is not None else _default(None, "use_distributed_optimizer not set in the launch")
            return Zero("megatron", None, None, None, [Setting("use_distributed_optimizer", value, None, "partitions fp32 master weights and Adam moments over data parallel (ZeRO-1-like)")])
        if self.config is None and self._fsdp() is not None:
            fsdp = self._fsdp()
            self.notes.append(f"FSDP ({fsdp.origin}): its memory is not estimated")
            return Zero("fsdp", None, None, None, [], None)
        if self.config is None:
            if plan.deepspeed is not None or self.consumer == "deepspeed":
                raw = plan.deepspeed.raw if plan.deepspeed is not None else None
                self.notes.append(f"the DeepSpeed config {raw!r} could not be read: ZeRO and memory are unknown" if raw else "the DeepSpeed config is not in the launch (the script may build it): ZeRO and memory are unknown")
                return Zero("unknown", None, None, None, [], raw)
            if plan.launcher == "yaml":
                self.notes.append("no DeepSpeed config in this training config: the memory estimate assumes plain DDP, but the launcher may add FSDP or DeepSpeed")
            return Zero("ddp", None, None, None, [], None)
        reference = plan.deepspeed
        where = reference.preset and f"ms-swift preset {reference.preset}" or (reference.document.path if reference.document else reference.raw)
        section = self.config.get("zero_optimization")
        stage_value, stage_node = self.ds_value("zero_optimization.stage")
        if section is None:
            stage = _default(0, "no zero_optimization section: ZeRO off (stage 0)")
        elif stage_value == "auto":
            text, path, line = self.loc(stage_node)
            if plan.fills_auto:
                stage = Value(2, f'"auto" at {text}: HF/accelerate use stage 2', path, line)
            else:
                stage = Value(0, f'"auto" at {text}: DeepSpeed alone drops it, stage 0', path, line)
        elif as_int(stage_value) is not None:
            stage = self.node_value(stage_node, "zero_optimization.stage", as_int(stage_value))
        elif isinstance(section, Scalar) and section.value is True:
            stage = self.node_value(section, "zero_optimization", 1)
        else:
            stage = _default(0, "zero_optimization.stage not set: DeepSpeed's default 0")
        offload = {}
        for kind in ("optimizer", "param"):
            value, node = self.ds_value(f"zero_optimization.offload_{kind}.device")
            legacy_value, legacy = self.ds_value("zero_optimization.cpu_offload" if kind == "optimizer" else "zero_optimization.cpu_offload_param")
            if isinstance(value, str) and value.lower() in ("cpu", "nvme", "none"):
                offload[kind] = self.node_value(node, f"offload_{kind}.device", value.lower())
            elif _bool(legacy_value):
                offload[kind] = self.node_value(legacy, "cpu_offload" if kind == "optimizer" else "cpu_offload_param", "cpu")
            else:
                offload[kind] = _default("none", f"no offload_{kind}")
        settings = self.zero_settings(stage.value)
        return Zero("deepspeed", stage, offload["optimizer"], offload["param"], settings, where)

    def _fsdp(self) -> Value | None:
        """Where the launch turns FSDP on (HF --fsdp, an fsdp config, accelerate's FSDP)."""
        for name in ("fsdp", "fsdp_config", "fsdp_version"):
            arg = self.arg(name)
            if arg is not None and arg.value not in (None, "", False, "false", "False", [], {}):
                return _from_arg(arg, True)
        accel = self.plan.accelerate_config
        if accel is not None and accel.config is not None:
            entry = accel.config.entry("distributed_type")
            if entry is not None and isinstance(entry.value, Scalar) and str(entry.value.value).upper() == "FSDP":
                return self.node_value(entry.value, "distributed_type", True)
        return None

    def zero_settings(self, stage: int) -> list[Setting]:
        hidden = None
        shape = self._shape_only()
        if shape is not None:
            hidden = shape.hidden
        fills = self.plan.fills_auto
        grad_bytes = 2
        out = []

        def resolve(key, default, auto_from_hidden=None, auto_text=""):
            value, node = self.ds_value(f"zero_optimization.{key}")
            if node is None:
                return _default(default, f"DeepSpeed's default {_fmt(default)}")
            if value == "auto":
                text, path, line = self.loc(node)
                if fills and auto_from_hidden is not None and hidden:
                    filled = auto_from_hidden(hidden)
                    return Value(filled, f'"auto" at {text}, filled by HF as {auto_text} = {filled:,} (hidden size {hidden})', path, line)
                if fills and auto_from_hidden is not None:
                    return Value(None, f'"auto" at {text}: HF fills it as {auto_text} from the model\'s hidden size (unknown here)', path, line)
                return Value(default, f'"auto" at {text} is dropped by DeepSpeed: default {_fmt(default)}', path, line)
            number = _float(value)
            return self.node_value(node, key, int(number) if number is not None and number.is_integer() else value)

        overlap = resolve("overlap_comm", None)
        if overlap.value is None or overlap.default:
            overlap = _default(stage == 3, f"DeepSpeed's default ({'true at stage 3' if stage == 3 else 'false below stage 3'})")
        else:
            overlap = replace(overlap, value=_bool(overlap.value))
        reduce = resolve("reduce_bucket_size", 5e8, lambda h: h * h, "hidden²")
        if reduce.value is not None:
            count = 2 if (overlap.value and stage in (1, 2)) else 1
            out.append(Setting("reduce_bucket_size", reduce, reduce.value * grad_bytes * count, f"gradient reduce buffer: {count} × {_fmt(reduce.value)} elements × {grad_bytes} bytes" if stage >= 1 else "gradients are reduced in buckets of this many elements"))
        else:
            out.append(Setting("reduce_bucket_size", reduce, None, "gradient reduce buffer"))
        out.append(Setting("overlap_comm", overlap, None, "stages 1-2: a second reduce buffer; stage 3: overlaps gathering with compute"))
        if stage in (1, 2):
            allgather = resolve("allgather_bucket_size", 5e8)
            out.append(Setting("allgather_bucket_size", allgather, None, "chunks the all-gather of updated weights; recent torch gathers in place (no extra buffer)"))
        if stage == 3:
            live = resolve("stage3_max_live_parameters", 1e9)
            prefetch = resolve("stage3_prefetch_bucket_size", 5e7, lambda h: int(0.9 * h * h), "int(0.9 × hidden²)")
            persist = resolve("stage3_param_persistence_threshold", 1e5, lambda h: 10 * h, "10 × hidden")
            reuse = resolve("stage3_max_reuse_distance", 1e9)
            sub = resolve("sub_group_size", 1e9)
            out.append(Setting("stage3_max_live_parameters", live, live.value * 2 if isinstance(live.value, (int, float)) else None, "at most this many gathered parameters at once (16-bit)"))
            out.append(Setting("stage3_prefetch_bucket_size", prefetch, prefetch.value * 2 if isinstance(prefetch.value, (int, float)) else None, "parameters fetched ahead of use; counts inside the live budget"))
            out.append(Setting("stage3_param_persistence_threshold", persist, None, "parameters smaller than this stay whole on every device (norms, biases)"))
            out.append(Setting("stage3_max_reuse_distance", reuse, None, "a parameter reused within this many elements is kept gathered"))
            partition = None
            if isinstance(sub.value, (int, float)):
                partition = sub.value
                if shape is not None and self.dp is not None:
                    partition = min(sub.value, shape.params / self.dp.value)
            out.append(Setting("sub_group_size", sub, partition * 4 if partition is not None else None, "optimizer step tiling: the fp32 gradients of one sub-group (at most the partition) exist at a time"))
        return out

    # -- model

    def _shape_only(self) -> ModelShape | None:
        if hasattr(self, "_shape_cache"):
            return self._shape_cache
        shape, how = self._resolve_model()
        self._shape_cache = shape
        self._shape_how = how
        return shape

    def _model_arg(self) -> Arg | None:
        return self.arg(*MODEL_ARGS)

    def _resolve_model(self) -> tuple[ModelShape | None, str | None]:
        arg = self._model_arg()
        name = arg.value if arg is not None and isinstance(arg.value, str) else None
        found = None
        how = None
        if name:
            bases = [Path(self.plan.origin.path).parent]
            if arg.span is not None and not arg.span.source.virtual:
                bases.insert(0, Path(arg.span.source.path).parent)
            if self.options.cwd is not None:
                bases.append(self.options.cwd)
            found = read_local_config(name, bases)
            how = "local-config" if found else None
            if found is None:
                found = recognise(name)
                how = "recognised-name" if found else None
        if self.options.params is not None:
            counted = from_count(self.options.params, "--params on the command line")
            if found is not None and found.has_shape and abs(found.params - self.options.params) <= 0.1 * self.options.params:
                counted = replace(found, params=self.options.params, source=f"--params on the command line; shape from {found.source}")
            return counted, "params-option"
        return found, how

    def model(self) -> ModelInfo | None:
        shape = self._shape_only()
        if shape is None:
            arg = self._model_arg()
            if arg is not None:
                self.notes.append(f"model {arg.value!r} is neither a local folder with config.json nor a recognised name: pass --params (e.g. --params 7B)")
            else:
                self.notes.append("no model in the launch: pass --params (e.g. --params 7B) for a memory estimate")
            return None
        training, trainable = self._training(shape)
        seq = self._seq_len()
        checkpointing = self._checkpointing()
        attention = self._attention()
        return ModelInfo(shape, self._shape_how, trainable, training, seq, checkpointing, attention)

    def _training(self, shape: ModelShape) -> tuple[Value, tuple[int, int] | None]:
        arg = self.arg("train_type", "tuner_type", "finetuning_type", "sft_type", "train_mode", "adapter")
        if arg is not None and isinstance(arg.value, str):
            kind = _from_arg(arg, arg.value.lower())
        elif _bool(getattr(self.arg("use_peft"), "value", None)):
            kind = _from_arg(self.arg("use_peft"), "lora")
        elif self.consumer == "swift":
            kind = _default("lora", "ms-swift's default train_type lora")
        elif self.consumer == "llamafactory":
            kind = _default("lora", "LLaMA-Factory's default finetuning_type lora")
        else:
            kind = _default("full", "full-parameter training (no adapter in the launch)")
        bits_arg = self.arg("quant_bits", "quantization_bit", "load_in_4bit", "load_in_8bit")
        if bits_arg is not None:
            if bits_arg.name == "load_in_4bit" and _bool(bits_arg.value):
                self._quant_bits = 4
            elif bits_arg.name == "load_in_8bit" and _bool(bits_arg.value):
                self._quant_bits = 8
            else:
                self._quant_bits = as_int(bits_arg.value)
        else:
            self._quant_bits = None
        if kind.value == "qlora" and self._quant_bits is None:
            self._quant_bits = 4
        if kind.value in ("full",):
            return kind, None
        if kind.value in ("lora", "qlora", "dora", "longlora", "adalora", "lora+", "pissa", "olora", "rslora"):
            rank_arg = self.arg("lora_rank", "lora_r", "r")
            rank_default = 16 if self.consumer == "hf" else 8
            rank = as_int(rank_arg.value) if rank_arg is not None else rank_default
            target = self.arg("target_modules", "lora_target", "lora_target_modules")
            target_text = target.value if target is not None else "all-linear"
            all_linear = isinstance(target_text, str) and target_text.lower() in ("all-linear", "all") or (isinstance(target_text, list) and target_text and str(target_text[0]).lower() in ("all-linear", "all"))
            count = _lora_params(shape, rank or 8)
            if count is None:
                high = int(0.02 * shape.params)
                return replace(kind, origin=kind.origin + f" (rank {rank}; adapter size unknown without the model shape: up to 2% assumed)"), (0, high)
            if all_linear:
                return replace(kind, origin=kind.origin + f" (rank {rank}, all linear layers)"), (count, count)
            return replace(kind, origin=kind.origin + f" (rank {rank}, target modules {target_text})"), (0, count)
        if kind.value in ("freeze",):
            return replace(kind, origin=kind.origin + " (some layers trainable)"), (0, shape.params)
        return replace(kind, origin=kind.origin + " (trainable share unknown)"), (0, shape.params)

    def _seq_len(self) -> Value | None:
        arg = self.arg(*SEQ_ARGS)
        if arg is not None and as_int(arg.value):
            return _from_arg(arg, as_int(arg.value))
        if self.consumer == "llamafactory":
            return _default(2048, "LLaMA-Factory's default cutoff_len 2048")
        return None

    def _checkpointing(self) -> Value | None:
        arg = self.arg("gradient_checkpointing", "activation_checkpointing", "checkpoint_activations")
        if arg is not None:
            return _from_arg(arg, _bool(arg.value) if arg.value is not True else True)
        arg = self.arg("disable_gradient_checkpointing")
        if arg is not None:
            return _from_arg(arg, not bool(_bool(arg.value) if arg.value is not True else True))
        arg = self.arg("recompute_granularity")
        if arg is not None and isinstance(arg.value, str):
            return _from_arg(arg, arg.value == "full")
        if self.consumer == "swift" and not self.megatron:
            return _default(True, "ms-swift's default gradient_checkpointing true")
        if self.consumer == "llamafactory":
            return _default(True, "LLaMA-Factory turns gradient checkpointing on unless disable_gradient_checkpointing")
        if self.consumer == "hf":
            return _default(False, "the transformers default gradient_checkpointing false")
        return _default(None, "unknown (the training script decides)")

    def _attention(self) -> Value | None:
        arg = self.arg("attn_impl", "attn_implementation", "flash_attn", "attention_backend", "use_flash_attn")
        if arg is not None:
            text = str(arg.value).lower()
            if text in ("eager", "disabled", "unfused", "false", "local"):
                return _from_arg(arg, "eager")
            return _from_arg(arg, "flash")
        arg = self.arg("recompute_granularity")
        if arg is not None and arg.value == "selective":
            return _from_arg(arg, "flash")
        if self.consumer in ("swift", "hf", "llamafactory") or self.megatron:
            return _default("flash", "sdpa/flash attention (the default): attention scores are not stored")
        return _default(None, "unknown attention implementation")

    # -- memory

    def memory(self, batch: Batch, precision: Precision, zero: Zero, model: ModelInfo | None, procs: Value | None) -> Memory | None:
        if model is None or zero.engine in ("unknown", "fsdp"):
            return None
        shape = model.shape
        dp = batch.data_parallel.value if batch.data_parallel is not None else None
        if dp is None:
            self.notes.append("the data-parallel size is unknown: the memory estimate assumes 1 (nothing partitioned)")
            dp = 1
        mixed = precision.mixed_precision.value
        mixed_precision = mixed != "fp32"
        if mixed is None:
            self.notes.append("precision unknown: the estimate assumes 16-bit mixed precision")
        adapter = model.training.value != "full" and model.trainable is not None and model.training.value not in ("freeze",)
        quant = getattr(self, "_quant_bits", None)
        weight_bytes = 2 if mixed_precision else 4
        if zero.engine == "ddp" and precision.weights_dtype.value in ("bfloat16", "float16"):
            weight_bytes = 2
        elif zero.engine == "ddp" and precision.weights_dtype.value == "float32":
            weight_bytes = 4
        if quant in (4, 8) and adapter:
            weight_bytes = quant / 8
        tp = self.dp_parts("tensor")
        pp = self.dp_parts("pipeline")
        setup = self._zero_setup(zero)
        largest = shape.largest_layer
        act = None
        if shape.has_shape and model.seq_len is not None and batch.micro_batch is not None and batch.micro_batch.value:
            seq_split = self.dp_parts("context") * self.dp_parts("sequence")
            sp_arg = self.arg("sequence_parallel")
            act = ActivationInputs(
                seq_len=model.seq_len.value, micro_batch=batch.micro_batch.value, hidden=shape.hidden, layers=shape.layers,
                heads=shape.heads, vocab=shape.vocab, checkpointing=model.checkpointing.value if model.checkpointing else None,
                attention=model.attention.value if model.attention else None, tensor_parallel=tp,
                sequence_parallel=bool(sp_arg is not None and _bool(sp_arg.value if sp_arg.value is not True else True) and tp > 1),
                sequence_split=seq_split, pipeline_parallel=pp,
            )
        elif model.seq_len is None:
            self.notes.append("sequence length unknown (max_length / cutoff_len / max_seq_length): activations are not estimated")
        if zero.engine == "ddp":
            inputs = MemoryInputs(
                params=shape.params, dp=dp, trainable=model.trainable, adapter=adapter, weight_bytes=weight_bytes,
                mixed_precision=False, model_parallel=tp * pp, procs_per_node=procs.value if procs else 1,
                largest_layer=(largest, largest) if largest else None, zero=setup, activations=act, load_bytes=weight_bytes,
            )
        else:
            inputs = MemoryInputs(
                params=shape.params, dp=dp, trainable=model.trainable, adapter=adapter, weight_bytes=weight_bytes,
                mixed_precision=mixed_precision, model_parallel=tp * pp, procs_per_node=procs.value if procs else 1,
                largest_layer=(largest, largest) if largest else None, zero=setup, activations=act,
                load_bytes=2 if precision.weights_dtype.value in ("bfloat16", "float16") else 4,
            )
        result = estimate_for(inputs)
        return Memory(result, inputs, self._device_memory())

    def dp_parts(self, which: str) -> int:
        return int(getattr(self._parallel_cache, which).value or 1)

    def _zero_setup(self, zero: Zero) -> ZeroSetup:
        if zero.engine == "megatron":
            dist = zero.settings[0].value.value if zero.settings else None
            return ZeroSetup(scheme="megatron", distributed_optimizer=dist)
        if zero.engine == "ddp":
            return ZeroSetup(scheme="ddp")
        values = {s.key: s.value.value for s in zero.settings}

        def number(key, default):
            value = values.get(key)
            return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default

        zero_init = self.plan.fills_auto and self.consumer != "accelerate"
        if self.consumer == "accelerate" and self.plan.accelerate_config is not None and self.plan.accelerate_config.config is not None:
            section = self.plan.accelerate_config.config.get("deepspeed_config")
            if isinstance(section, Mapping):
                zero_init = bool(_bool(section.value_of("zero3_init_flag")))
        contiguous, _ = self.ds_value("zero_optimization.contiguous_gradients")
        return ZeroSetup(
            stage=zero.stage.value if zero.stage else 0,
            offload_optimizer=zero.offload_optimizer.value if zero.offload_optimizer else "none",
            offload_param=zero.offload_param.value if zero.offload_param else "none",
            zero_init=zero_init,
            reduce_bucket_size=number("reduce_bucket_size", 5e8),
            allgather_bucket_size=number("allgather_bucket_size", 5e8),
            overlap_comm=bool(values.get("overlap_comm")),
            contiguous_gradients=_bool(contiguous) is not False,
            max_live_parameters=number("stage3_max_live_parameters", 1e9),
            prefetch_bucket_size=number("stage3_prefetch_bucket_size", 5e7),
            sub_group_size=number("sub_group_size", 1e9),
        )

    def _device_memory(self) -> Value | None:
        options = self.options
        if options.device_memory is not None:
            return Value(options.device_memory, options.device_memory_origin or "--device-memory on the command line")
        if options.hardware:
            size = hardware_memory(options.hardware)
            if size is not None:
                return Value(size, f"hardware {options.hardware} ({options.hardware_origin})")
            if options.hardware.lower() in AMBIGUOUS_HARDWARE:
                self.notes.append(f"hardware {options.hardware} comes in two memory sizes: set {AMBIGUOUS_HARDWARE[options.hardware.lower()]} or --device-memory")
        return None


def estimate_for(inputs: MemoryInputs) -> MemoryEstimate:
    """The estimate, with plain PyTorch DDP (no DeepSpeed) handled: every state replicated,
    Adam moments in the weights' dtype, and DDP's gradient buckets (a second gradient copy)."""
    if inputs.zero.scheme != "ddp":
        return estimate(inputs)
    from dslint.explain.memory import Term, activation_terms

    wb = inputs.weight_bytes
    mp = max(inputs.model_parallel, 1)
    P = inputs.params / mp
    t_low, t_high = (inputs.trainable if inputs.trainable is not None else (inputs.params, inputs.params))
    t_low, t_high = t_low / mp, t_high / mp
    train_bytes = 2 if wb < 4 else 4
    weights_low = (P - (0 if inputs.adapter else t_low)) * wb + (t_low * train_bytes if inputs.adapter else 0)
    if not inputs.adapter:
        weights_low = P * wb
    weights_high = P * wb + (t_high * train_bytes if inputs.adapter else 0)
    terms = [
        Term("weights", f"weights ({'16-bit' if wb == 2 else 'fp32' if wb == 4 else 'quantized'})", weights_low if inputs.adapter else P * wb, weights_high if inputs.adapter else P * wb, f"{_fmt(wb)}·P"),
        Term("gradients", "gradients", train_bytes * t_low, train_bytes * t_high, f"{train_bytes}·T"),
        Term("optimizer_states", "Adam moments (in the weights' dtype)", 2 * train_bytes * t_low, 2 * train_bytes * t_high, f"{2 * train_bytes}·T"),
        Term("ddp_buckets", "DDP gradient buckets (a copy of the gradients)", train_bytes * t_low, train_bytes * t_high, f"{train_bytes}·T", "buffers"),
        Term("cpu_loading", "model loading (CPU, per node)", wb * P * inputs.procs_per_node, wb * P * inputs.procs_per_node, f"{_fmt(wb)}·P·{inputs.procs_per_node}", "loading", "cpu"),
    ]
    if inputs.activations is not None:
        terms += activation_terms(inputs.activations)
    return MemoryEstimate(terms, ["no DeepSpeed config: plain PyTorch DDP assumed (FSDP is not estimated)"])


def _lora_params(shape: ModelShape, rank: int) -> int | None:
    """LoRA on every linear layer of the decoder (peft ``all-linear``; the output head excluded)."""
    if not shape.has_shape or shape.intermediate is None:
        return None
    h = shape.hidden
    d = shape.head_dim or h // shape.heads
    q = shape.heads * d
    kv = (shape.kv_heads or shape.heads) * d
    attention = (h + q) + 2 * (h + kv) + (q + h)
    if shape.experts:
        mlp = shape.experts * 3 * (h + (shape.moe_intermediate or shape.intermediate))
    else:
        mlp = 3 * (h + shape.intermediate)
    return rank * shape.layers * (attention + mlp)


def _dtype_name(text: str) -> str:
    text = text.lower().replace("torch.", "")
    return {"bf16": "bfloat16", "fp16": "float16", "half": "float16", "fp32": "float32", "float": "float32"}.get(text, text)


def _fmt(value) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) >= 1e6:
        return f"{value:.3g}"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def to_json(explanations: list[Explanation]) -> dict:
    from dslint import __version__

    return {"version": SCHEMA_VERSION, "dslint": __version__, "launches": [e.to_dict() for e in explanations]}
