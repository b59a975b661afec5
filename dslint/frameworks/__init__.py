"""Training frameworks that run their own launch logic: verl, OpenRLHF, TRL's on-policy trainers, axolotl.

Each module reads a launch the way its framework does (its command line, its config format, its
defaults) and computes what the framework computes from it, every factor with where it came from.
The framework rules (DS9xx: dslint/rules/verl.py, openrlhf.py, trl.py, axolotl.py) check that
arithmetic against the framework's own validation, each reading the models it declares as facts
(dslint/facts.py: computed once per launch and run); ``dslint explain`` shows it (``FrameworkBatch``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from dslint.source import Span


def established_program(plan, kind: str):
    """The launch's program when dslint has evidence it is ``kind`` (``verl``, ``openrlhf``), else None."""
    consumer = getattr(plan, "program", None)
    if consumer is None or consumer.kind != kind or not consumer.established:
        return None
    return consumer


def program_name(plan, kind: str) -> str | None:
    """The name of the launch's ``kind`` program (a module, or a path with forward slashes) when
    dslint has evidence it is ``kind``, else None."""
    consumer = established_program(plan, kind)
    if consumer is None:
        return None
    return (consumer.program or "").replace("\\", "/")


def position(span: Span | None) -> tuple[str | None, int | None]:
    if span is None or span.virtual:
        return None, None
    return span.source.path, span.source.position(span.start)[0]


@dataclass(frozen=True)
class Quantity:
    """One number of a framework's batch arithmetic and why it has that value."""

    key: str  # the setting's name as the framework spells it: "data.train_batch_size", "--micro_train_batch_size"
    meaning: str  # "prompts per training step"
    value: Any
    origin: str  # where it was written, the default that applied, or the formula it was computed with
    path: str | None = None
    line: int | None = None
    default: bool = False

    def to_dict(self) -> dict:
        return {"key": self.key, "meaning": self.meaning, "value": self.value, "origin": self.origin, "path": self.path,
                "line": self.line, "default": self.default}


@dataclass(frozen=True)
class Check:
    """One of the framework's own start-up checks, applied to the launch: passes, fails, or cannot be told."""

    holds: bool | None
    text: str  # "5120 responses per step are divisible by 8 GPUs"

    def to_dict(self) -> dict:
        return {"holds": self.holds, "text": self.text}


@dataclass
class FrameworkBatch:
    """A framework's batch arithmetic for one launch (``dslint explain``)."""

    framework: str  # verl | openrlhf | trl-grpo
    label: str  # "verl PPO (verl.trainer.main_ppo)"
    summary: str  # one line: "1024 prompts × 5 responses = 5120 samples per step on 8 GPUs"
    factors: list[Quantity] = field(default_factory=list)  # what the launch sets (or the defaults it gets)
    derived: list[Quantity] = field(default_factory=list)  # what the framework computes from them
    checks: list[Check] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # The processes that train (the launch itself may be one Ray driver) and the samples per
    # optimizer step, as the framework computes them; None when unknown.
    world: Quantity | None = None
    global_batch: Quantity | None = None

    def to_dict(self) -> dict:
        return {"framework": self.framework, "label": self.label, "summary": self.summary,
                "factors": [q.to_dict() for q in self.factors], "derived": [q.to_dict() for q in self.derived],
                "checks": [c.to_dict() for c in self.checks], "notes": list(self.notes),
                "world": self.world.to_dict() if self.world else None,
                "global_batch": self.global_batch.to_dict() if self.global_batch else None}


@dataclass(frozen=True)
class Releases:
    """The releases of a framework a launch may run with: those dslint knows that the repository's pins allow."""

    package: str
    label: str
    versions: tuple[str, ...]
    why: str  # "axolotl==0.12.2 in requirements.txt:3", "nothing pins axolotl"
    known: tuple[str, ...]
    pinned: bool = True  # False: nothing bounds the version, the launch may run any known release

    def judge(self, fails: Callable[[str], bool]) -> tuple[tuple[str, ...], str]:
        """(the releases ``fails`` holds for, a note: empty when it holds for all of them).

        With nothing pinning the framework, a check that holds in only some releases says
        nothing about this launch (dslint.evidence.versions.Verdict.anywhere): none are returned."""
        failing = tuple(v for v in self.versions if fails(v))
        if not failing or len(failing) == len(self.versions):
            return failing, ""
        if not self.pinned:
            return (), ""
        shown = failing[0] if len(failing) == 1 else f"{failing[0]}–{failing[-1]}"
        return failing, f"fails on {self.label} {shown}; {self.why}"

    def describe(self) -> str:
        shown = self.versions[0] if len(self.versions) == 1 else f"{self.versions[0]}–{self.versions[-1]}"
        return f"{self.label} {shown} ({self.why})"


def releases(package: str, label: str, known: tuple[str, ...], start, settings=None) -> Releases:
    """The ``known`` releases of ``package`` that the pins nearest ``start`` allow (dslint.evidence.pins, read as
    dslint.evidence.versions reads them; a git checkout of a branch says nothing)."""
    import os

    from dslint.evidence.versions import allows, repository_evidence

    if start is None:
        return Releases(package, label, known, f"nothing pins {package}", known, pinned=False)
    folder = os.path.abspath(str(start))
    folder = folder if os.path.isdir(folder) else os.path.dirname(folder)
    root = getattr(settings, "root", None)
    found = repository_evidence(folder, package, os.path.abspath(root) if root is not None else None)
    if found is None or found.kind == "git":
        return Releases(package, label, known, f"nothing pins {package}", known, pinned=False)
    why = found.sources(root)
    if found.exact:
        return Releases(package, label, found.exact, why, known)
    inside = tuple(v for v in known if allows(found.clauses, v))
    return Releases(package, label, inside or known[:1], why, known)


def batch_of(plan, settings=None) -> FrameworkBatch | None:
    """The framework arithmetic of a launch, when its program is one of the frameworks dslint reads."""
    from dslint.frameworks import grpo, openrlhf, verl

    for module in (verl, openrlhf, grpo):
        found = module.explain(plan, settings)
        if found is not None:
            return found
    return None


__all__ = ["Check", "FrameworkBatch", "Quantity", "Releases", "batch_of", "established_program", "position", "program_name", "releases"]
