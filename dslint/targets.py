"""What rules look at beyond single documents: a DeepSpeed config in the context of its use."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dslint.config import Setting
from dslint.documents.model import Document, Mapping

# Who reads the DeepSpeed config: None when no launch reaches it (a standalone file).
CONSUMERS = ("deepspeed", "hf", "accelerate", "swift", "llamafactory", "megatron")


@dataclass(eq=False)
class DeepSpeedUse:
    """One DeepSpeed config as one launch (or no launch) will use it."""

    document: Document
    config: Mapping
    world_size: Setting | None = None
    consumer: str | None = None
    launch: Any = None  # the launch plan that reaches it, when there is one
    extra: dict = field(default_factory=dict)
