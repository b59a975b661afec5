"""Training frameworks that run their own launch logic: verl, OpenRLHF, TRL's on-policy trainers, axolotl.

Each module reads a launch the way its framework does (its command line, its config format, its
defaults) and computes what the framework computes from it, every factor with where it came from.
The framework rules (DS9xx, dslint/rules/frameworks.py) check that arithmetic against the
framework's own validation; ``dslint explain`` shows it (``FrameworkBatch``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable
from weakref import WeakKeyDictionary

from dslint.source import Span

_CACHE: WeakKeyDictionary = WeakKeyDictionary()


def cached(plan, key: str, build: Callable[[], Any]) -> Any:
    """``build()`` once per plan and key: several rules and explain read the same model."""
    slot = _CACHE.setdefault(plan, {})
    if key not in slot:
        slot[key] = build()
    return slot[key]


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

    def to_dict(self) -> dict:
        return {"framework": self.framework, "label": self.label, "summary": self.summary,
                "factors": [q.to_dict() for q in self.factors], "derived": [q.to_dict() for q in self.derived],
                "checks": [c.to_dict() for c in self.checks], "notes": list(self.notes)}


def batch_of(plan, settings=None) -> FrameworkBatch | None:
    """The framework arithmetic of a launch, when its program is one of the frameworks dslint reads."""
    from dslint.frameworks import verl

    for module in (verl,):
        found = module.explain(plan, settings)
        if found is not None:
            return found
    return None


__all__ = ["Check", "FrameworkBatch", "Quantity", "batch_of", "cached", "position"]
