"""The steps section: optimizer steps per epoch and in total, and what the progress bar counts.

Steps per epoch as transformers' Trainer computes them (``set_initial_training_values``):
``max(ceil(len(dataloader) / accumulation), 1)`` with ``len(dataloader) = ceil(samples / (micro ×
data parallel))``; the progress bar counts optimizer steps, ``ceil(epochs × steps per epoch)``
unless ``max_steps`` is set. transformers' default ``num_train_epochs`` is 3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dslint.explain.batch import Batch
from dslint.explain.lines import line, more, shown, why
from dslint.explain.origins import Value, defaulted, dict_or_none, from_arg, to_float
from dslint.explain.reading import Reading
from dslint.launch.plan import HF_LIKE
from dslint.values import as_int
from dslint.launch.args import is_training

if TYPE_CHECKING:
    from dslint.explain import Explanation


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
            "samples": dict_or_none(self.samples),
            "epochs": dict_or_none(self.epochs),
            "max_steps": dict_or_none(self.max_steps),
            "micro_batches_per_epoch": self.batches_per_epoch,
            "optimizer_steps_per_epoch": self.steps_per_epoch,
            "optimizer_steps_total": self.total_steps,
            "progress_bar": self.progress_bar,
        }


def build(reading: Reading, batch: Batch) -> Steps:
    if not is_training(reading.plan):
        return Steps(None, None, None, None, None, None, f"{reading.plan.entry} does not train: no optimizer steps")
    if reading.options.samples is not None:
        samples = Value(reading.options.samples, "--samples on the command line")
    else:
        samples = _dataset_size(reading)
    epochs = _epochs(reading)
    max_steps = None
    arg = reading.arg("max_steps", "train_iters")
    if arg is not None and as_int(arg.value) is not None and as_int(arg.value) > 0:
        max_steps = from_arg(arg, as_int(arg.value))
    batches, steps_per_epoch = _per_epoch(reading, samples, batch)
    total = None
    if max_steps is not None:
        total = max_steps.value
    elif steps_per_epoch is not None and epochs is not None:
        total = math.ceil(epochs.value * steps_per_epoch)
    bar = _progress_bar(reading, batch, total)
    if samples is None:
        bar += " (pass --samples N for step counts)"
    return Steps(samples, epochs, max_steps, batches, steps_per_epoch, total, bar)


def _epochs(reading: Reading) -> Value | None:
    arg = reading.arg("num_train_epochs", "epochs", "num_epochs")
    if arg is not None and to_float(arg.value) is not None:
        return from_arg(arg, to_float(arg.value))
    if reading.consumer in HF_LIKE and not reading.megatron:
        return defaulted(3.0, f"{reading.defaults_name()} num_train_epochs 3")
    return None


def _per_epoch(reading: Reading, samples: Value | None, batch: Batch) -> tuple[int | None, int | None]:
    """(micro-batches per device, optimizer steps) in one epoch."""
    micro, gas, dp = batch.micro_batch, batch.accumulation, batch.data_parallel
    if samples is None or micro is None or gas is None or dp is None or not micro.value or not gas.value:
        return None, None
    if reading.megatron:
        steps_per_epoch = max(math.ceil(samples.value / batch.global_batch), 1) if batch.global_batch else None
        return (steps_per_epoch * gas.value if steps_per_epoch else None), steps_per_epoch
    batches = math.ceil(samples.value / (micro.value * dp.value))
    return batches, max(math.ceil(batches / gas.value), 1)


def _progress_bar(reading: Reading, batch: Batch, total: int | None) -> str:
    if reading.consumer in HF_LIKE:
        bar = "the HF/ms-swift progress bar counts optimizer steps"
        if total is not None:
            bar += f": 0/{total}"
        gas = batch.accumulation
        if gas is not None and gas.value:
            bar += f"; each step is {gas.value} forward/backward pass(es) per device"
        return bar
    if reading.megatron:
        return "Megatron logs iterations: one per optimizer step (global batch)"
    return "the training script decides what its progress bar counts"


def _dataset_size(reading: Reading) -> Value | None:
    arg = reading.arg("dataset")
    if arg is not None and reading.consumer == "swift":
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
            return from_arg(arg, total, "--dataset sample counts (name#N)")
    arg = reading.arg("max_samples", "max_train_samples")
    if arg is not None and as_int(arg.value):
        value = from_arg(arg, as_int(arg.value))
        reading.notes.append(f"{arg.name} caps the dataset at {value.value} samples; steps assume the dataset is at least that large")
        return value
    return None


# ---- text ----------------------------------------------------------------------------------------


def render(e: Explanation) -> list[str]:
    s = e.steps
    out = []
    if s.samples is not None and s.steps_per_epoch is not None:
        epochs = f" × {shown(s.epochs)} epoch(s)" if s.epochs is not None and s.max_steps is None else ""
        total = f" = {s.total_steps} optimizer steps" if s.total_steps is not None else ""
        out.append(line("steps", f"{shown(s.samples)} samples{why(s.samples)}"))
        out.append(more(f"{s.batches_per_epoch} micro-batches per device per epoch → {s.steps_per_epoch} optimizer steps per epoch{epochs}{total}"))
        if s.max_steps is not None:
            out.append(more(f"max_steps {shown(s.max_steps)} wins over epochs{why(s.max_steps)}"))
    elif s.max_steps is not None:
        out.append(line("steps", f"max_steps {shown(s.max_steps)}{why(s.max_steps)}"))
    elif s.epochs is not None:
        out.append(line("steps", f"{shown(s.epochs)} epoch(s){why(s.epochs)}"))
    else:
        out.append(line("steps", "unknown"))
    out.append(more(s.progress_bar))
    return out
