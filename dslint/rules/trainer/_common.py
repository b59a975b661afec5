"""What the trainer rules share: the readers that run a DeepSpeed config through the HF Trainer."""

from __future__ import annotations

# HF Trainer passes these to DeepSpeed through accelerate; none of them reads `--optim` when the
# config has an `optimizer` block.
HF_READERS = ("hf", "swift", "llamafactory")
