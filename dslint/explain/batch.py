"""The batch section: global batch = per-device micro batch × gradient accumulation × data parallel,
each factor as its consumer resolves it.

- transformers' TrainingArguments defaults: ``per_device_train_batch_size`` 8,
  ``gradient_accumulation_steps`` 1 (transformers/training_args.py).
- ms-swift: micro batch 1; accumulation ``max(1, ceil(16 / per_device_train_batch_size /
  WORLD_SIZE))`` when unset (swift/trainers/arguments.py:283-286).
- Megatron-SWIFT: ``micro_batch_size`` 1, ``global_batch_size`` 16
  (swift/megatron/arguments/megatron_args.py:482-483).
- DeepSpeed itself: the batch triple derived as deepspeed/runtime/config.py:590-656 does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dslint.documents.model import Mapping, Scalar
from dslint.explain.lines import line, more, shown, why
from dslint.explain.origins import Value, defaulted, dict_or_none, fmt, from_arg
from dslint.explain.reading import Reading
from dslint.launch.args import is_training
from dslint.launch.plan import HF_LIKE
from dslint.values import as_int

if TYPE_CHECKING:
    from dslint.explain import Explanation

DS_BATCH_KEYS = ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")


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
            "micro_batch": dict_or_none(self.micro_batch),
            "gradient_accumulation": dict_or_none(self.accumulation),
            "data_parallel": dict_or_none(self.data_parallel),
            "global_batch": self.global_batch,
            "passes_per_optimizer_step": self.passes_per_step,
            "formula": self.formula,
            "notes": list(self.notes),
        }


def build(reading: Reading, world: Value | None, dp: Value | None) -> Batch:
    if not is_training(reading.plan):  # swift export / infer / deploy, llamafactory-cli export: no optimizer step
        return Batch(None, None, dp, None, None, f"no training batch: {reading.plan.entry} does not train")
    if reading.megatron:
        return _megatron_batch(reading, dp)
    if reading.consumer in HF_LIKE:
        return _hf_batch(reading, world, dp)
    return _deepspeed_batch(reading, dp)


def _unseen(reading: Reading, name: str | None = None) -> str | None:
    """Why a flag the launch does not show may still be given, so that the consumer's default for it
    does not stand: an unquoted expansion dslint cannot read (``$EXTRA_ARGS``) may hold any flag
    (argparse takes the last of a repeated one), or a config it cannot read sets the arguments;
    or the launch passes the field under a namespace of the program's own config system
    (``--config.training.per_device_train_batch_size 4``), which the program hands on."""
    plan = reading.plan
    if plan.unseen_arguments:
        return plan.unseen_arguments
    if not getattr(plan.command, "program_complete", True):
        return "an expansion dslint cannot read among the program's arguments may give it"
    if name is not None:
        nested = next((key for key in plan.args if "." in key and key.rsplit(".", 1)[-1].lstrip("-") == name), None)
        if nested is not None:
            return f"the launch passes --{nested}, which the program's own config system may hand on as {name}"
    return None


# ---- HF Trainer (ms-swift, LLaMA-Factory) ------------------------------------------------------


def _hf_batch(reading: Reading, world: Value | None, dp: Value | None) -> Batch:
    notes: list[str] = []
    micro = _hf_micro(reading, notes)
    accumulation = _hf_accumulation(reading, micro, world, notes)
    for key, mine in (("train_micro_batch_size_per_gpu", micro), ("gradient_accumulation_steps", accumulation)):
        value, _ = reading.ds_value(key)
        if mine is not None and value is not None and value != "auto" and value != mine.value:
            notes.append(f"the DeepSpeed config sets {key} {value!r} but the Trainer uses {mine.value}: the HF Trainer stops with a mismatch error (DS301)")
    return _product(reading, micro, accumulation, dp, notes)


def _hf_micro(reading: Reading, notes: list[str]) -> Value | None:
    arg = reading.arg("per_device_train_batch_size", "micro_batch_size", "batch_size")  # micro_batch_size: axolotl
    built = _built(reading, "per_device_train_batch_size")
    if built is not None:
        return built
    if arg is not None:
        number = as_int(arg.value)
        if number is None:
            notes.append(f"per_device_train_batch_size {arg.value!r} is not a number")
            return None
        return from_arg(arg, number)
    if (unseen := _unseen(reading, "per_device_train_batch_size")) is not None:
        notes.append(f"per_device_train_batch_size is not in the launch, and its default does not stand: {unseen}")
        return None
    default = 1 if reading.consumer == "swift" else 8
    return _own_default(reading, "per_device_train_batch_size") or defaulted(
        default, f"{reading.defaults_name()} per_device_train_batch_size {default} (not set)")


def _hf_accumulation(reading: Reading, micro: Value | None, world: Value | None, notes: list[str]) -> Value | None:
    arg = reading.arg("gradient_accumulation_steps")
    own = _own_default(reading, "gradient_accumulation_steps")
    built = _built(reading, "gradient_accumulation_steps")
    if built is not None:
        return built
    if arg is not None:
        number = as_int(arg.value)
        return from_arg(arg, number) if number is not None else None
    if (unseen := _unseen(reading, "gradient_accumulation_steps")) is not None:
        notes.append(f"gradient_accumulation_steps is not in the launch, and its default does not stand: {unseen}")
        return None
    if own is not None:
        return own
    if reading.consumer != "swift":
        return defaulted(1, f"{reading.defaults_name()} gradient_accumulation_steps 1 (not set)")
    if micro is not None and micro.value and world is not None and isinstance(world.value, int):
        value = max(1, math.ceil(16 / micro.value / world.value))
        return defaulted(value, f"ms-swift's default max(1, ceil(16 / ({micro.value} × {world.value}))) = {value} (gradient_accumulation_steps not set; swift/trainers/arguments.py:283-286)")
    notes.append("ms-swift derives gradient_accumulation_steps = ceil(16 / (micro batch × world size)); the world size is unknown")
    return None


def _built(reading: Reading, name: str) -> Value | None:
    """A literal keyword of the TrainingArguments the program builds itself
    (``TrainingArguments(per_device_train_batch_size=4)``): it wins over the command line."""
    from dslint.launch.consumer import ProgramValue, program_training

    training = program_training(reading.plan.program)
    if training is None or not training.built or training.parsed:
        return None
    said = training.value(name)
    number = as_int(said.value) if isinstance(said, ProgramValue) and isinstance(said.value, int) else None
    if number is None:
        return None
    evidence = said.evidence
    return Value(number, f"{evidence.text} ({evidence.where()})", evidence.path, evidence.line, False)


def _own_default(reading: Reading, name: str) -> Value | None:
    """The default the program's own dataclass gives a batch field (a TrainingArguments subclass
    that changes per_device_train_batch_size, say), when the program was read."""
    program = reading.plan.program
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


# ---- Megatron ----------------------------------------------------------------------------------


def _megatron_batch(reading: Reading, dp: Value | None) -> Batch:
    notes: list[str] = []
    unseen = _unseen(reading)
    arg = reading.arg("micro_batch_size")
    if arg is not None and as_int(arg.value):
        micro = from_arg(arg, as_int(arg.value))
    elif arg is None and unseen is None:
        micro = defaulted(1, "Megatron's default micro_batch_size 1")
    else:
        micro = None
        notes.append(f"unknown micro batch: {'--micro-batch-size is not a number dslint can read' if arg is not None else unseen}")
    arg = reading.arg("global_batch_size")
    if arg is not None and as_int(arg.value):
        global_value = from_arg(arg, as_int(arg.value))
    elif arg is not None or unseen is not None:
        notes.append(f"unknown global batch: {'--global-batch-size is not a number dslint can read' if arg is not None else unseen}")
        return _product(reading, micro, None, dp, notes)
    elif reading.consumer == "megatron":
        global_value = defaulted(16, "Megatron-SWIFT's default global_batch_size 16 (megatron_args.py:482-483)")
    elif dp is not None and micro is not None and micro.value:
        # Megatron-LM / Megatron-DeepSpeed: no --global-batch-size is one micro batch per data-parallel rank
        global_value = defaulted(micro.value * dp.value, "Megatron's default global_batch_size: micro batch × data parallel "
                                 "(megatron/arguments.py, `if args.global_batch_size is None`)")
    else:
        return _product(reading, micro, None, dp, notes)
    accumulation = None
    if dp is not None and micro is not None and micro.value:
        step = micro.value * dp.value
        if global_value.value % step:
            notes.append(f"global_batch_size {global_value.value} is not divisible by micro batch {micro.value} × data parallel {dp.value}: Megatron refuses it")
        else:
            value = global_value.value // step
            accumulation = Value(value, f"global_batch_size {global_value.value} / (micro {micro.value} × data parallel {dp.value}) ({global_value.where})", global_value.path, global_value.line, global_value.default)
    rampup = reading.arg("rampup_batch_size")
    if rampup is not None:
        # megatron/microbatches.py build_num_microbatches_calculator: with --rampup-batch-size START
        # INCREMENT SAMPLES the global batch grows from START to --global-batch-size
        # (RampupBatchsizeNumMicroBatches); the value here is the one after the ramp.
        notes.append(f"--rampup-batch-size {rampup.value if isinstance(rampup.value, str) else ' '.join(map(str, rampup.value or ()))}: "
                     f"the global batch ramps up to {global_value.value}, the value shown")
    batch = _product(reading, micro, accumulation, dp, notes)
    if batch.global_batch is None:
        batch.global_batch = global_value.value
    return batch


# ---- DeepSpeed ---------------------------------------------------------------------------------


def _deepspeed_batch(reading: Reading, dp: Value | None) -> Batch:
    from dslint.launch.deepspeed_batch import derive

    notes: list[str] = []
    if reading.config is None:
        return Batch(None, None, dp, None, None, "unknown: no DeepSpeed config or training arguments that say it", notes)
    values, nodes = _deepspeed_triple(reading, notes)
    tbs, mbs, gas = (values[key] for key in DS_BATCH_KEYS)
    if dp is None:
        micro = reading.node_value(nodes["train_micro_batch_size_per_gpu"], "train_micro_batch_size_per_gpu", mbs) if mbs is not None else None
        accumulation = reading.node_value(nodes["gradient_accumulation_steps"], "gradient_accumulation_steps", gas) if gas is not None else None
        batch = _product(reading, micro, accumulation, dp, notes)
        if tbs is not None:
            batch.global_batch = tbs
        return batch
    _, d_mbs, d_gas, failure = derive(tbs, mbs, gas, dp.value)
    if failure:
        notes.append(f"DeepSpeed's batch check fails: {failure}")

    def sourced(key, given, derived_value, how):
        if given is not None:
            return reading.node_value(nodes[key], key, given)
        if derived_value is None:
            return None
        return defaulted(derived_value, how)

    micro = sourced("train_micro_batch_size_per_gpu", mbs, d_mbs, f"DeepSpeed derives train_micro_batch_size_per_gpu = {d_mbs}")
    accumulation = sourced("gradient_accumulation_steps", gas, d_gas, f"DeepSpeed derives gradient_accumulation_steps = {d_gas}" if tbs is not None else "DeepSpeed's default gradient_accumulation_steps 1")
    batch = _product(reading, micro, accumulation, dp, notes)
    if tbs is not None:
        batch.global_batch = tbs
    return batch


def _deepspeed_triple(reading: Reading, notes: list[str]) -> tuple[dict, dict]:
    """The batch keys the DeepSpeed config sets (numbers only) and their nodes; accelerate's own
    gradient_accumulation_steps fills in when the config leaves it out."""
    values, nodes = {}, {}
    for key in DS_BATCH_KEYS:
        value, node = reading.ds_value(key)
        nodes[key] = node
        values[key] = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
        if value == "auto":
            if reading.consumer == "accelerate":
                notes.append(f"{key} is \"auto\": accelerate fills it from the training script's data loader")
            else:
                notes.append(f"{key} is \"auto\", which DeepSpeed itself never fills (crash at start-up)")
    accel = reading.accelerate_config()
    if accel is not None and values["gradient_accumulation_steps"] is None:
        section = accel.get("deepspeed_config")
        if isinstance(section, Mapping) and isinstance(section.get("gradient_accumulation_steps"), Scalar):
            node = section.get("gradient_accumulation_steps")
            values["gradient_accumulation_steps"] = as_int(node.value)
            nodes["gradient_accumulation_steps"] = node
    return values, nodes


# ---- the product -------------------------------------------------------------------------------


def _product(reading: Reading, micro: Value | None, accumulation: Value | None, dp: Value | None, notes: list[str]) -> Batch:
    known = micro is not None and accumulation is not None and dp is not None and micro.value is not None and accumulation.value is not None
    global_batch = micro.value * accumulation.value * dp.value if known else None

    def part(v, name):
        return str(v.value) if v is not None and v.value is not None else name

    formula = f"global batch = {part(micro, 'micro')} × {part(accumulation, 'accumulation')} × {part(dp, 'data parallel')}"
    if global_batch is not None:
        formula += f" = {fmt(global_batch)}"
    else:
        notes.extend(_unknown_factors(reading, micro, accumulation, dp, notes))
    passes = accumulation.value if accumulation is not None and isinstance(accumulation.value, int) else None
    return Batch(micro, accumulation, dp, global_batch, passes, formula, notes)


def _unknown_factors(reading: Reading, micro: Value | None, accumulation: Value | None, dp: Value | None, notes: list[str]) -> list[str]:
    """Why each factor of the global batch that stays unknown is unknown (one note each)."""
    out = []
    said = " ".join(notes)
    plan = reading.plan
    if dp is None:
        reason = next((n for n in plan.notes if "world size" in n or "processes" in n), None)
        out.append(f"unknown data parallel size: {reason or 'the launch does not say how many processes it starts'}")
    for value, name, key in ((micro, "micro batch", "train_micro_batch_size_per_gpu"),
                             (accumulation, "gradient accumulation", "gradient_accumulation_steps")):
        if value is not None and value.value is not None:
            continue
        if key in said or f"unknown {name}" in said:
            continue  # a note above already says what is wrong with it
        if reading.megatron:
            out.append(f"unknown {name}: Megatron derives it from the global batch, the micro batch and the data-parallel size")
        elif reading.consumer in HF_LIKE:
            out.append(f"unknown {name}: the training argument is not a number dslint can read")
        elif reading.config is None:
            out.append(f"unknown {name}: no DeepSpeed config is linked"
                       + ("" if plan.deepspeed is None else f" ({plan.deepspeed.raw} is written by the script with a text only the run decides)"
                          if plan.deepspeed.written is not None else f" ({plan.deepspeed.raw} could not be read)"))
        else:
            out.append(f"unknown {name}: the DeepSpeed config sets neither {key} nor train_batch_size with the other factors"
                       + (f"; {plan.program.program} may set it in code" if plan.program is not None
                          and plan.program.facts is not None else ""))
    return out


# ---- text ----------------------------------------------------------------------------------------


def render(e: Explanation) -> list[str]:
    b = e.batch
    out = [line("batch", b.formula)]
    out.append(more(f"micro batch {shown(b.micro_batch)}{why(b.micro_batch)}"))
    out.append(more(f"accumulation {shown(b.accumulation)}{why(b.accumulation)}"))
    out.append(more(f"data parallel {shown(b.data_parallel)}"))
    if b.passes_per_step is not None:
        out.append(more(f"{b.passes_per_step} forward/backward pass(es) per device per optimizer step"))
    for note in b.notes:
        out.append(more(f"! {note}"))
    return out
