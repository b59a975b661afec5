"""The training precision of a launch, from every file that decides it.

Sources (research: deepspeed_rules.md §3 row 5, §5.2, §5.4; swift_npu_rules.md §1.6, §3.2):

- training flags ``fp16`` / ``bf16`` (command line, training YAML, ``key=value``), LLaMA-Factory's
  ``pure_bf16``; Megatron's ``--fp16`` / ``--bf16``;
- ms-swift (and Megatron-SWIFT) derive the flags nobody gave from ``torch_dtype``: float16 and
  float32 → fp16, bfloat16 → bf16 (swift/arguments/base_args/model_args.py ``_init_mixed_precision``);
- ``torch_dtype`` / ``dtype``: the dtype the weights are loaded in;
- accelerate's ``mixed_precision`` (``--mixed_precision``, or the accelerate config file);
- the DeepSpeed config's ``fp16.enabled`` / ``bf16.enabled``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from dslint.documents.model import Mapping, Node, Scalar
from dslint.launch.plan import Arg
from dslint.rules import _deepspeed as ds
from dslint.launch.args import as_bool, as_text, is_training, where, written
from dslint.source import Span

DTYPE_NAMES = {
    "bfloat16": "bf16", "bf16": "bf16", "torch.bfloat16": "bf16",
    "float16": "fp16", "fp16": "fp16", "half": "fp16", "torch.float16": "fp16",
    "float32": "fp32", "fp32": "fp32", "float": "fp32", "torch.float32": "fp32",
}
LONG = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}
OTHER = {"fp16": "bf16", "bf16": "fp16"}

# Model families pretrained in bf16 (their config.json says torch_dtype bfloat16), matched
# against the lowercased model id or path.
BF16_FAMILIES = (
    ("Qwen2/Qwen2.5/Qwen3", re.compile(r"qwen[-_ ]?(?:2|3)(?:[._]\d)?(?!\d)")),
    ("QwQ", re.compile(r"(?<![a-z])qwq(?![a-z])")),
    ("Llama 3/4", re.compile(r"llama[-_ ]?(?:3|4)(?:[._]\d)?(?!\d)")),
    ("Mistral", re.compile(r"(?<![a-z])(?:mistral|mixtral|ministral|codestral)")),
    ("Gemma", re.compile(r"(?<![a-z])gemma")),
    ("DeepSeek V2/V3/R1", re.compile(r"deepseek[-_ ]?(?:v[23]|r1)")),
    ("InternLM2/3", re.compile(r"internlm[-_ ]?(?:2|3)")),
    ("GLM-4", re.compile(r"(?<![a-z])glm[-_ ]?4")),
    ("Phi-3/4", re.compile(r"(?<![a-z])phi[-_ ]?(?:3|4)(?!\d)")),
    ("Yi-1.5", re.compile(r"(?<![a-z])yi[-_ ]?1\.5")),
)


def bf16_family(model: str | None) -> str | None:
    if not model:
        return None
    lowered = model.lower()
    for name, pattern in BF16_FAMILIES:
        if pattern.search(lowered):
            return name
    return None


def dtype_of(value: Any) -> str | None:
    text = as_text(value)
    if text is None:
        return None
    return DTYPE_NAMES.get(text.strip().strip("'\"").lower())


@dataclass
class Vote:
    """One source saying the run uses a dtype."""

    dtype: str  # fp16 | bf16 | fp32
    text: str  # what was written, e.g. "--bf16 true", "bf16.enabled: true"
    span: Span | None
    kind: str  # flag | derived | weights | accelerate | deepspeed
    arg: Arg | None = None
    node: Node | None = None

    def describe(self) -> str:
        return f"{self.text} ({where(self.span)})" if self.span is not None else self.text


@dataclass
class Flag:
    """fp16 or bf16 as the trainer sees it: given, derived from torch_dtype, or unset."""

    value: bool | None
    arg: Arg | None = None
    derived_from: Arg | None = None  # the torch_dtype argument it was derived from

    @property
    def given(self) -> bool:
        return self.arg is not None


class Precision:
    """Every precision source of one launch plan."""

    def __init__(self, plan):
        self.plan = plan
        self.consumer = plan.consumer
        self.swift = plan.consumer in ("swift", "megatron")
        self.training = is_training(plan)
        self.weights_arg = self._weights_arg()
        self.weights = dtype_of(self.weights_arg.value) if self.weights_arg is not None else None
        self.fp16 = self._flag("fp16")
        self.bf16 = self._flag("bf16")
        pure = plan.arg("pure_bf16") if plan.consumer == "llamafactory" else None
        self.pure_bf16 = Flag(as_bool(pure.value), pure) if pure is not None else Flag(None)
        self.accelerate = self._accelerate()
        self.ds_config: Mapping | None = None
        reference = plan.deepspeed
        if reference is not None and reference.document is not None and reference.document.mapping is not None:
            self.ds_config = reference.document.mapping
        self.ds_real = self.ds_config is not None and not reference.document.source.virtual

    # ---- sources --------------------------------------------------------------------

    def _weights_arg(self) -> Arg | None:
        if self.plan.consumer == "llamafactory":
            return None
        arg = self.plan.arg("torch_dtype", "dtype")
        if arg is None or not isinstance(arg.value, str):
            return None
        return arg

    def _flag(self, name: str) -> Flag:
        arg = self.plan.arg(name)
        if arg is not None:
            return Flag(as_bool(arg.value), arg)
        if self.swift and self.training and self.weights is not None:
            derived = {"fp16": ("fp16", "fp32"), "bf16": ("bf16",)}[name]
            return Flag(self.weights in derived, None, self.weights_arg)
        return Flag(None)

    def _accelerate(self) -> Vote | None:
        plan = self.plan
        arg = plan.launcher_args.get("mixed_precision") if plan.launcher == "accelerate" else None
        if arg is not None and isinstance(arg.value, str):
            return Vote(arg.value.strip().lower(), f"--mixed_precision {arg.value}", arg.span, "accelerate", arg=arg)
        reference = plan.accelerate_config
        if reference is not None and reference.config is not None:
            entry = reference.config.entry("mixed_precision")
            if entry is not None and isinstance(entry.value, Scalar) and isinstance(entry.value.value, str):
                return Vote(entry.value.value.strip().lower(), f"mixed_precision: {entry.value.value}", entry.value.span, "accelerate", node=entry.value)
        return None

    # ---- questions ------------------------------------------------------------------

    def flag_vote(self, name: str) -> Vote | None:
        flag = self.fp16 if name == "fp16" else self.bf16
        if flag.value is not True:
            return None
        if flag.arg is not None:
            return Vote(name, written(flag.arg), flag.arg.span, "flag", arg=flag.arg)
        source = flag.derived_from
        return Vote(name, f"{name} derived by ms-swift from torch_dtype {source.value}", source.span, "derived", arg=source)

    def ds_vote(self, name: str) -> Vote | None:
        if self.ds_config is None:
            return None
        if ds.precision_enabled(self.ds_config, name) is not True:
            return None
        section = ds.precision_section(self.ds_config, name)
        node = section.entry("enabled").value
        return Vote(name, f"{name}.enabled: {ds.show(node)} in {self.plan.deepspeed.document.path}", node.span, "deepspeed", node=node)

    def training_votes(self) -> list[Vote]:
        """What the run trains in, as its consumer decides: the votes that win (possibly two: a conflict)."""
        if not self.training:
            return []
        consumer = self.consumer
        flags = [v for v in (self.flag_vote("fp16"), self.flag_vote("bf16")) if v is not None]
        if self.pure_bf16.value is True:
            flags.append(Vote("bf16", written(self.pure_bf16.arg), self.pure_bf16.arg.span, "flag", arg=self.pure_bf16.arg))
        if consumer in ("hf", "swift", "llamafactory", "megatron"):
            return flags
        if consumer == "accelerate":
            ds_votes = [v for v in (self.ds_vote("fp16"), self.ds_vote("bf16")) if v is not None]
            if ds_votes:
                return ds_votes
            acc = self.accelerate
            if acc is not None and acc.dtype in ("fp16", "bf16"):
                return [acc]
            return []
        if consumer == "deepspeed":
            ds_votes = [v for v in (self.ds_vote("fp16"), self.ds_vote("bf16")) if v is not None]
            return ds_votes or flags
        return flags

    def training_dtype(self) -> str | None:
        votes = self.training_votes()
        kinds = {v.dtype for v in votes}
        return kinds.pop() if len(kinds) == 1 else None


def weights_vote(precision: Precision) -> Vote | None:
    if precision.weights in ("fp16", "bf16") and precision.weights_arg is not None:
        arg = precision.weights_arg
        return Vote(precision.weights, written(arg), arg.span, "weights", arg=arg)
    if precision.pure_bf16.value is True:
        return Vote("bf16", written(precision.pure_bf16.arg), precision.pure_bf16.arg.span, "weights", arg=precision.pure_bf16.arg)
    return None
