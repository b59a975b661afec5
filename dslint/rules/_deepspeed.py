"""Shared knowledge for the DeepSpeed config rules (DS2xx): no rules live here.

How DeepSpeed reads a config's values, what the config turns on, who reads it, and the edits
the fixes make; what the schema and the release history say is ``_deepspeed_schema``. Nothing
imports deepspeed. The coercion helpers mirror pydantic 2 *lax* mode, which is what DeepSpeed's
``DeepSpeedConfigModel`` sections use (deepspeed/runtime/config_utils.py:105-113), so that
``"3"`` and ``5e8`` are accepted where DeepSpeed accepts them and ``"5e8"`` and ``1.5`` are not.
"""

from __future__ import annotations

import json
import math
import re
from functools import wraps
from typing import Any, Iterator

from dslint.diagnostics import Edit, Finding
from dslint.documents.model import Entry, Mapping, Node, Scalar, Sequence
from dslint.source import Span

# Consumers that read the config through HF Trainer / accelerate's DeepSpeedPlugin
# (transformers TrainingArguments builds the plugin; ms-swift and LLaMA-Factory use HF Trainer).
HF_LIKE = ("hf", "accelerate", "swift", "llamafactory")
# Consumers that read the file with strict `json` (HfDeepSpeedConfig, accelerate/utils/deepspeed.py:136-156).
STRICT_JSON_CONSUMERS = HF_LIKE

CONSUMER_LABEL = {
    "hf": "HF Trainer",
    "accelerate": "accelerate",
    "swift": "ms-swift",
    "llamafactory": "LLaMA-Factory",
    "deepspeed": "the deepspeed launcher",
    "megatron": "Megatron-DeepSpeed",
}

# The help of a finding on a value that looks like a template's placeholder (`GB_SIZE,`).
PLACEHOLDER_HELP = "it looks like a template placeholder: if a script fills it in before launch, exclude the template from dslint"

# A template's placeholder, as hjson reads it unquoted: `CONFIG_GBSIZE,`, `GBSIZE,`, `$MBS`, `${GAS}`,
# `{{ stage }}` (hjson keeps a trailing comma in quoteless text).
PLACEHOLDER = re.compile(r"^(\$\{?\w+\}?|\{\{\s*\w+\s*\}\}|[A-Z][A-Z0-9_]*),?$")
# Upper-case words that are values some DeepSpeed field reads in another case (pydantic's lax
# booleans, "auto", the enum spellings): `TRUE` or `CPU` is judged as the value it is.
_VALUE_WORDS = frozenset("auto true false yes no on off t f y n null none nan inf infinity cpu nvme "
                         "fp16 bf16 fp32 fp8 int8 mean sum avg warn ignore fail mock python fast".split())


def is_placeholder_text(text: str) -> bool:
    text = text.strip()
    return bool(PLACEHOLDER.match(text)) and text.rstrip(",").lower() not in _VALUE_WORDS


def is_placeholder(node: Node | None) -> bool:
    """Is ``node`` a quoteless placeholder: text a script substitutes, not a value anyone meant."""
    return (isinstance(node, Scalar) and getattr(node, "style", "") == "quoteless"
            and isinstance(node.value, str) and is_placeholder_text(node.value))


def template_placeholders(use) -> frozenset:
    """Spans of the placeholders of a template: a config with quoteless placeholder values that
    no launch passes to a program as it is. A script fills such a file in (sed, envsubst) and
    hands DeepSpeed the copy, so its placeholders are not values DeepSpeed reads. Empty when a
    launch names the config itself: then the placeholders reach DeepSpeed, and are wrong."""
    if getattr(use, "launch", None) is not None:
        return frozenset()
    return frozenset(node.span for _, node in scalars(use.config) if is_placeholder(node))


def judges_values(check):
    """For a rule that judges single values: drop its findings on a template's placeholders
    (``template_placeholders``); everything else in the template is still judged."""

    @wraps(check)
    def run(use, context):
        skip = template_placeholders(use)
        for finding in check(use, context):
            if not skip or finding.span not in skip:
                yield finding

    return run

MISSING = object()  # "the key is absent"
UNKNOWN = object()  # "the value is decided later (\"auto\") or cannot be judged"


# ---- reading values the way DeepSpeed does ------------------------------------------------


def dotted(path: tuple) -> str:
    return ".".join(str(p) for p in path)


def raw(node: Node | None) -> Any:
    if node is None:
        return MISSING
    return node.to_python()


def written_as_float(node: Node | None) -> bool:
    """A whole number written with a decimal point or exponent (`100.0`, `1e3`).

    hjson, which DeepSpeed uses to load a config path, reads these as ints; Python's json, which
    HF Trainer and accelerate use, reads them as floats.
    """
    if not isinstance(node, Scalar) or isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
        return False
    text = node.span.text.strip()
    return any(c in text for c in ".eE") and not text.lower().startswith(("0x", "-0x"))


def is_auto(node: Node | None) -> bool:
    return isinstance(node, Scalar) and node.value == "auto"


_INT_TEXT = re.compile(r"^[+-]?\d+(?:_\d+)*(?:\.0+)?$")
_TRUE = {"1", "on", "t", "true", "y", "yes"}
_FALSE = {"0", "off", "f", "false", "n", "no"}
_I64 = 2**63


class Invalid(Exception):
    """A value pydantic's lax mode rejects; ``reason`` is a short explanation."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def lax_int(value: Any) -> int:
    """pydantic 2 lax ``int``: bools, whole floats and whole decimal strings; not ``"5e8"``."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise Invalid("not a finite number")
        if not value.is_integer():
            raise Invalid("a number with a fractional part")
        if abs(value) >= _I64:
            raise Invalid("too large for an integer")
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        if _INT_TEXT.match(text):
            return int(text.replace("_", "").split(".")[0])
        try:
            as_float = float(text)
        except ValueError:
            raise Invalid("a string that is not an integer") from None
        if math.isfinite(as_float) and as_float.is_integer():
            raise Invalid("a string in exponent or decimal notation, which pydantic does not parse as an integer")
        raise Invalid("a string with a fractional part")
    raise Invalid(f"{describe(value)}, not an integer")


def lax_float(value: Any) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            raise Invalid("a string that is not a number") from None
    raise Invalid(f"{describe(value)}, not a number")


def lax_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if value in (0, 1):
            return bool(value)
        raise Invalid("a number other than 0 or 1")
    if isinstance(value, str):
        text = value.lower()  # pydantic does not strip whitespace here
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise Invalid("a string pydantic does not read as a boolean (true/false, yes/no, on/off, 1/0)")
    raise Invalid(f"{describe(value)}, not a boolean")


def lax_read(node: Node | None, kind=lax_int) -> Any:
    """``node`` as a pydantic section reads it with ``kind`` (lax_int, lax_float, lax_bool); None
    when it is absent, "auto" (HF Trainer/accelerate fill it in) or rejected (a value rule reports that)."""
    if node is None or is_auto(node):
        return None
    try:
        return kind(raw(node))
    except Invalid:
        return None


def not_lowerable(item: Entry, where: str, expected: str, when: str = "") -> Finding | None:
    """The finding on a value DeepSpeed calls .lower() on that is neither text nor null: AttributeError."""
    value = raw(item.value)
    if value is None or isinstance(value, str):
        return None
    return Finding(item.value.span, f"{where} is {describe(value)}, {expected}",
                   note=f"DeepSpeed calls .lower() on it and raises AttributeError{when}")


def describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def show(node: Node, limit: int = 40) -> str:
    text = " ".join(node.span.text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def pretty_number(value) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        value = int(value)
    if isinstance(value, int) and abs(value) >= 10**6:
        exponent = len(str(abs(value))) - 1
        mantissa = value / 10**exponent
        if mantissa == int(mantissa):
            return f"{int(mantissa)}e{exponent}" if int(mantissa) != 1 else f"1e{exponent}"
        return f"{value:,}"
    return str(value)


def human_bytes(count: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if abs(count) < 1000 or unit == "PB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}".replace(".0 ", " ")
        count /= 1000
    return f"{count:.1f} PB"


def bytes16(elements: float) -> str:
    """Memory of ``elements`` parameters in a 16-bit dtype (2 bytes each)."""
    return human_bytes(elements * 2)


# ---- what the config turns on ------------------------------------------------------------


def zero_section(config: Mapping) -> Mapping | None:
    node = config.get("zero_optimization")
    return node if isinstance(node, Mapping) else None


def zero_stage(config: Mapping) -> Any:
    """The ZeRO stage DeepSpeed parses: an int 0-3, or UNKNOWN ("auto", invalid, templated).

    Absent section or key: 0. Legacy boolean ``zero_optimization``: 1 or 0
    (deepspeed/runtime/zero/config.py:60-75).
    """
    node = config.get("zero_optimization")
    if node is None:
        return 0
    if isinstance(node, Scalar) and isinstance(node.value, bool):
        return 1 if node.value else 0
    if not isinstance(node, Mapping):
        return UNKNOWN
    stage = node.get("stage")
    if stage is None:
        return 0
    if is_auto(stage):
        return UNKNOWN
    try:
        value = lax_int(raw(stage))
    except Invalid:
        return UNKNOWN
    return value if value in (0, 1, 2, 3) else UNKNOWN


def strict_bool(mapping: Mapping | None, key: str, default: bool) -> Any:
    """A boolean field of a pydantic section: True/False, or UNKNOWN for "auto"/invalid."""
    node = mapping.get(key) if mapping is not None else None
    if node is None:
        return default
    if is_auto(node):
        return UNKNOWN
    try:
        return lax_bool(raw(node))
    except Invalid:
        return UNKNOWN


def strict_number(mapping: Mapping | None, key: str, default: Any, kind=lax_float) -> Any:
    node = mapping.get(key) if mapping is not None else None
    if node is None:
        return default
    if is_auto(node):
        return default  # DeepSpeed drops "auto" in pydantic sections: the default applies
    try:
        return kind(raw(node))
    except Invalid:
        return UNKNOWN


def bfloat16_read(config: Mapping) -> bool:
    """Does DeepSpeed read the old `bfloat16` section? Only when `bf16` is absent or null
    (deepspeed/runtime/precision_config.py:34-38)."""
    node = config.get("bf16")
    return node is None or (isinstance(node, Scalar) and node.value is None)


def precision_section(config: Mapping, which: str) -> Mapping | None:
    """``fp16`` or ``bf16`` (``bf16`` falls back to ``bfloat16`` when absent or null)."""
    node = config.get(which)
    if which == "bf16" and (node is None or (isinstance(node, Scalar) and node.value is None)):
        node = config.get("bfloat16")
    return node if isinstance(node, Mapping) else None


def precision_enabled(config: Mapping, which: str) -> Any:
    """True/False as DeepSpeed parses ``<which>.enabled``; UNKNOWN when "auto" (HF/accelerate decide)."""
    return strict_bool(precision_section(config, which), "enabled", False)


def offload_device(config: Mapping, which: str) -> Any:
    """``offload_optimizer``/``offload_param`` device: "none", "cpu", "nvme", or UNKNOWN."""
    zero = zero_section(config)
    if zero is None:
        legacy = config.get("zero_optimization")
        return "none" if legacy is None or isinstance(legacy, Scalar) else UNKNOWN
    node = zero.get(which)
    legacy_key = {"offload_optimizer": "cpu_offload", "offload_param": "cpu_offload_param"}[which]
    if node is None or (isinstance(node, Scalar) and node.value is None) or is_auto(node):
        old = zero.get(legacy_key)
        if old is not None and not is_auto(old):
            try:
                return "cpu" if lax_bool(raw(old)) else "none"
            except Invalid:
                return UNKNOWN
        return "none"
    if not isinstance(node, Mapping):
        return UNKNOWN
    device = node.get("device")
    if device is None:
        return "none"
    if is_auto(device):
        return UNKNOWN
    value = raw(device)
    return value if value in ("none", "cpu", "nvme") else UNKNOWN


def has_auto(node: Node) -> bool:
    """Does the config use HF's "auto" anywhere: evidence that HF Trainer or accelerate is meant to read it.

    "Auto" and "AUTO" count: they show the same intent (and their safe fix writes "auto"), though
    only the lowercase word is filled in (``is_auto``)."""
    from dslint.documents.model import walk

    return any(isinstance(n, Scalar) and isinstance(n.value, str) and n.value.strip().lower() == "auto" for _, n in walk(node))


# The HF Trainer goes through accelerate from transformers 4.30.0: TrainingArguments builds its
# DeepSpeedPlugin (4.30.0 training_args.py:1567-1570) and the Trainer prepares model and optimizer
# with it (trainer.py:1752); 4.29.2's deepspeed_init calls deepspeed.initialize itself
# (deepspeed.py:296, 378).
TRAINER_VIA_ACCELERATE = "4.30.0"


def reader_versions(use, context, package: str):
    """The releases of ``package`` (versions.Candidates) the launch that reads this config may run,
    or, for a config no launch reaches, those its own folder allows."""
    from dslint.evidence.versions import candidates

    plan = use.launch
    start = plan.origin.path if plan is not None and plan.origin is not None else use.document.path
    return candidates(package, start, context.settings, getattr(plan, "program", None))


def hf_like(use) -> bool:
    return use.consumer in HF_LIKE


def trains(use) -> bool:
    """Does a program that trains read the config in this use? The rules about training and saving
    (saving ZeRO-3 weights, what the Trainer requires of and compares with the config, the
    optimizer DeepSpeed builds or refuses, gradient clipping) speak only then:

    - the launch's program is established: it trains unless it was read and shows inference or
      evaluation only (``Consumer.trains``);
    - it is not (not found, known only at run time, no known framework): the launch's own
      arguments ask for training (``launch_trains``), or the config is a training config by its
      own keys (``training_config``); an inference entry (a chat server, ``zero_inference.py``)
      given a ZeRO-3 config with batch sizes only is neither;
    - no launch reads it: the config's own keys decide alone."""
    plan = use.launch
    program = getattr(plan, "program", None)
    if program is not None and program.established:
        return program.trains
    if plan is not None and launch_trains(plan) is not None:
        return True
    return training_config(use.config) is not None


# Arguments a launch gives only to a program that trains: the Trainer's schedule and optimizer
# (HF, TRL, ms-swift, LLaMA-Factory share TrainingArguments' names) and Megatron's. Batch sizes of
# evaluation, output folders, precision and dtypes are an inference script's too.
_TRAINING_ARGUMENTS = ("num_train_epochs", "max_steps", "learning_rate", "lr", "per_device_train_batch_size",
                       "gradient_accumulation_steps", "warmup_steps", "warmup_ratio", "lr_scheduler_type",
                       "train_iters", "train_samples", "weight_decay", "max_grad_norm", "save_steps")


def launch_trains(plan):
    """The argument by which a launch asks its program to train (``--do_train``, ``--learning_rate``,
    ``--num_train_epochs``, ...; from the command line or its training config), or None."""
    for name in ("do_train",) + _TRAINING_ARGUMENTS:
        arg = plan.args.get(name)
        if arg is None or (name == "do_train" and not _truthy_word(arg.value)):
            continue
        return arg
    return None


def _truthy_word(value) -> bool:
    if value is True:
        return True
    return isinstance(value, str) and value.strip("'\"").lower() in ("true", "1", "yes", "y", "t")


def training_config(config: Mapping) -> Entry | None:
    """The key that makes a DeepSpeed config a training config by itself, or None: an optimizer or
    scheduler, gradient accumulation or clipping, activation checkpointing or a pipeline section
    (recomputation for the backward pass, pipeline training), autotuning (it times training
    steps), an optimizer offload, or ZeRO stage 1 or 2 (they partition optimizer states and
    gradients, which only training has). Batch sizes, precision and ZeRO-3 are an inference
    config's too (deepspeed.initialize with HfDeepSpeedConfig needs a batch size to run ZeRO-3
    inference)."""
    for key in ("optimizer", "scheduler", "gradient_accumulation_steps", "gradient_clipping", "activation_checkpointing",
                "pipeline", "autotuning"):
        entry = config.entry(key)
        if entry is not None:
            return entry
    if zero_stage(config) in (1, 2):  # the legacy boolean `"zero_optimization": true` is stage 1
        zero = zero_section(config)
        return (zero.entry("stage") if zero is not None else None) or config.entry("zero_optimization")
    zero = zero_section(config)
    offload = (zero.entry("offload_optimizer") or zero.entry("cpu_offload")) if zero is not None else None
    if offload is not None and offload_device(config, "offload_optimizer") in ("cpu", "nvme"):
        return offload
    return None


def fills_auto(use) -> bool | None:
    """Does the config's reader replace "auto"? True for an HF Trainer, accelerate, ms-swift or
    LLaMA-Factory launch whose program is established, False for an established plain DeepSpeed
    or Megatron-DeepSpeed one (nothing fills it), None when nobody knows (no launch reaches the
    config, or the reader is only assumed): then no fix may write "auto"."""
    program = getattr(use.launch, "program", None)
    if program is None or not program.established or use.consumer is None:
        return None
    return use.consumer in HF_LIKE


def every_reader_fills_auto(document, context) -> bool:
    """May a fix write "auto" into this config? Only when every launch of the run that reads it is
    established as a training program that fills "auto" (HF Trainer, accelerate, ms-swift,
    LLaMA-Factory): a plain `deepspeed.initialize` loop, a Megatron-DeepSpeed or inference launch,
    or a reader that is only assumed, cannot take "auto"; with no launch reading it nobody knows."""
    plans = context.deepspeed_readers.get(id(document), ())
    return bool(plans) and auto_readers(document, context) == FILL


FILL, UNKNOWN, REFUSE = "fill", "unknown", "refuse"


def auto_readers(document, context, besides=None) -> str:
    """What the launches reading this config, other than ``besides`` (the launch a rule's finding is
    about, which the engine judges for a rule with ``consumers``), make of "auto": REFUSE when one is
    established as a reader that cannot fill it (plain DeepSpeed, Megatron-DeepSpeed, inference),
    UNKNOWN when one is only assumed, FILL otherwise (none left counts as FILL)."""
    refusing, assumed = _reader_kinds(document, context)
    if any(plan is not besides for plan in refusing):
        return REFUSE
    if any(plan is not besides for plan in assumed):
        return UNKNOWN
    return FILL


def _reader_kinds(document, context) -> tuple[list, list]:
    """(readers established as unable to fill "auto", readers only assumed) of a config, once per
    run: a config a thousand launches read is asked about by each of their findings."""
    key = ("auto_readers", id(document))
    found = context.memo.get(key)
    if found is None:
        readers = context.deepspeed_readers.get(id(document), ())
        found = context.memo[key] = ([p for p in readers if _program_established(p) and not _fills_auto_plan(p)],
                                     [p for p in readers if not _program_established(p)])
    return found


def _program_established(plan) -> bool:
    program = getattr(plan, "program", None)
    return program is not None and program.established


def _fills_auto_plan(plan) -> bool:
    return _program_established(plan) and getattr(plan.program, "kind", None) != "inference" and plan.consumer in HF_LIKE


def consumer_label(use) -> str:
    return CONSUMER_LABEL.get(use.consumer, use.consumer or "")


def entry_at(config: Mapping, path: tuple[str, ...]) -> Entry | None:
    node: Node = config
    found = None
    for key in path:
        if not isinstance(node, Mapping):
            return None
        found = node.entry(key)
        if found is None:
            return None
        node = found.value
    return found


def node_at(config: Mapping, path: tuple[str, ...]) -> Node | None:
    found = entry_at(config, path)
    return found.value if found is not None else None


def mappings(node: Node, path: tuple = ()) -> Iterator[tuple[tuple, Mapping]]:
    """Every mapping under ``node`` with its key path (mappings inside lists are skipped)."""
    if isinstance(node, Mapping):
        yield path, node
        for item in node.entries:
            if not item.merged:
                yield from mappings(item.value, path + (item.key,))


def scalars(node: Node, path: tuple = ()) -> Iterator[tuple[tuple, Scalar]]:
    if isinstance(node, Scalar):
        yield path, node
    elif isinstance(node, Mapping):
        for item in node.entries:
            yield from scalars(item.value, path + (item.key,))
    elif isinstance(node, Sequence):
        for index, item in enumerate(node.items):
            yield from scalars(item, path + (index,))


# ---- edits ----------------------------------------------------------------------------------


def opening(node: Node) -> Span:
    return Span(node.span.source, node.span.start, min(node.span.start + 1, node.span.end))


def insert_json_entry(mapping: Mapping, key: str, value_text: str) -> Edit:
    """Insert ``"key": value`` as the first entry of a JSON object, matching its layout."""
    source = mapping.span.source
    text = source.text
    brace = mapping.span.start
    if not mapping.entries:
        return Edit(source, brace + 1, brace + 1, f'"{key}": {value_text}')
    first = mapping.entries[0].key_span.start
    between = text[brace + 1 : first]
    if "\n" in between:
        indent = between[between.rfind("\n") + 1 :]
        if indent.strip():
            indent = ""
        return Edit(source, first, first, f'"{key}": {value_text},\n{indent}')
    return Edit(source, first, first, f'"{key}": {value_text}, ')


def json_text(value: Any) -> str:
    return json.dumps(value)
