"""Launch plans: one per launch command (or per training YAML no script launches).

A plan says who runs the job (launcher), who reads the DeepSpeed config (consumer), how many
processes there are and where that number came from, which DeepSpeed config and training
arguments apply, and in which precedence. Every value is ``Sourced``: it carries the text
that explains it and, when it was written in a file, the range it was written at.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from dslint.documents.model import Document, Mapping
from dslint.source import Span

# Who reads the DeepSpeed config.
HF_LIKE = ("hf", "swift", "llamafactory")  # through transformers' Trainer: it fills and checks "auto"
FILLS_AUTO = HF_LIKE + ("accelerate",)


def where(span: Span | None) -> str:
    """Where a value was written, as origins say it: ``path:line``, or the command line."""
    if span is None:
        return "the command line"
    line = span.source.position(span.start)[0]
    return f"{span.path}:{line}"


@dataclass(frozen=True)
class Sourced:
    """A value and where it came from."""

    value: Any
    origin: str
    span: Span | None = None
    default: bool = False  # the consumer's default applied; nobody wrote it


@dataclass(eq=False)
class Arg:
    """A training argument as the consumer will see it (flag, YAML key or key=value override)."""

    name: str
    value: Any  # str for command-line flags, the YAML value for YAML keys; True for bare flags
    span: Span | None
    # Where it was set, as said in messages ("lr in cfg.yaml:3"); may be given as a function,
    # because a config plan has an argument per key and few of them are ever mentioned.
    where: str | Callable[[], str]
    name_span: Span | None = None
    assumed: str | None = None  # the raw text whose default was assumed (``$NUM_GPUS``)

    @property
    def origin(self) -> str:
        if callable(self.where):
            self.where = self.where()
        return self.where


@dataclass(eq=False)
class Reference:
    """A file a launch names: resolved to a document, a preset, or nothing."""

    role: str  # "deepspeed", "training-config", "accelerate-config", "hostfile"
    raw: str | None  # the text as written (None when not statically known)
    span: Span
    document: Document | None = None
    preset: str | None = None  # an ms-swift preset name
    inline: bool = False  # a JSON string given in place of a path
    tried: list[str] = field(default_factory=list)  # paths looked at, for missing-reference
    assumed: str | None = None  # the raw text whose default gave the path (`${DS:-ds.json}`): the caller may override it
    written: Any = None  # the script writes the file before the launch (dslint.documents.written.Written)

    @property
    def resolved(self) -> bool:
        """The file is there when the launch runs: found, a preset, or written by the script first."""
        return self.document is not None or self.preset is not None or self.written is not None

    @property
    def config(self) -> Mapping | None:
        return self.document.mapping if self.document is not None else None


@dataclass(eq=False)
class LaunchPlan:
    """One launch: its launcher, program, arguments and the configs it reads."""

    origin: Document  # the script or YAML that describes the launch
    span: Span  # the launch command, or the YAML's first line
    launcher: str  # deepspeed | torchrun | accelerate | swift | megatron | llamafactory | python | yaml
    consumer: str | None  # deepspeed | hf | accelerate | swift | llamafactory | megatron
    entry: str | None = None  # e.g. "swift sft"
    command: Any = None  # the LaunchCommand (scripts only)
    nodes: Sourced | None = None
    procs_per_node: Sourced | None = None
    world_size: Sourced | None = None  # all processes
    data_parallel: Sourced | None = None  # the world size DeepSpeed's batch arithmetic uses
    distributed: bool | None = None  # started by a distributed launcher (None: cannot tell)
    visible_devices: Sourced | None = None  # list[str] of device ids
    env: dict[str, Any] = field(default_factory=dict)  # shell Values the launcher sees
    deepspeed: Reference | None = None
    training_config: Reference | None = None
    accelerate_config: Reference | None = None
    args: dict[str, Arg] = field(default_factory=dict)
    launcher_args: dict[str, Arg] = field(default_factory=dict)
    references: list[Reference] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # assumptions a rule may repeat
    # Why some of the program's arguments are not known (a training config dslint cannot read, a
    # positional config it cannot expand): the consumer's defaults do not stand in for them.
    unseen_arguments: str | None = None
    # Who reads the launch's files and the evidence (dslint.launch.consumer.Consumer); ``consumer``
    # above is its DeepSpeed-reader role, or a guess from the flags when this is not established.
    program: Any = None
    # The folder the script cd's into before the launch (a Path), when the script says it.
    workdir: Sourced | None = None
    # Why a relative path the launch names cannot be judged missing: the script cd's into a folder
    # dslint cannot name (`cd "$ROOT"`, `cd ~/x`) or one outside the repository (dslint.launch.prior).
    runs_elsewhere: str | None = None
    # The multi-node layout this launch is one node of (dslint.launch.layout.Layout), set by the engine.
    layout: Any = None

    @property
    def folder(self):
        """The folder the script cd's into before the launch (a Path), or None."""
        return self.workdir.value if self.workdir is not None else None

    def arg(self, *names: str) -> Arg | None:
        for name in names:
            if name in self.args:
                return self.args[name]
        return None

    @property
    def fills_auto(self) -> bool:
        return self.consumer in FILLS_AUTO

    def describe(self) -> str:
        where = self.origin.path
        line = self.span.source.position(self.span.start)[0]
        return f"{self.entry or self.launcher} launch at {where}:{line}"
