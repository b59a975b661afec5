"""DS722: non-reentrant gradient checkpointing with frozen weights under ZeRO-3."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from dslint.diagnostics import Edit, Finding, Fix, Related
from dslint.documents.model import Mapping, Scalar
from dslint.evidence.versions import compare
from dslint.rule import rule
from dslint.rules.training_args._common import arg_related, truthy, zero_stage
from dslint.rules.training_args._context import TrainingContext, training_context


#: The first DeepSpeed with PR #8148 ("Z3: Support for activation ckpt with frozen params").
_REENTRANT_FIXED_IN = "0.19.3"
# `use_reentrant: false` inside a JSON (or Python-repr) string, as written on a command line or in YAML.
_USE_REENTRANT_FALSE = re.compile(r"""use_reentrant[\\"']*\s*:\s*(false|False)\b""")


def _use_reentrant_false(ctx: TrainingContext, arg):
    """(span to point at, Edit that makes it true or None) when ``gradient_checkpointing_kwargs``
    explicitly sets ``use_reentrant`` to false; None otherwise."""
    value = arg.value
    node = ctx.node(arg)
    if isinstance(value, dict):
        if value.get("use_reentrant") is not False:
            return None
        entry = node.entry("use_reentrant") if isinstance(node, Mapping) else None
        target = entry.value if entry is not None else None
        if isinstance(target, Scalar) and target.style == "plain" and target.value is False:
            return target.span, Edit.replace(target.span, "true")
        return (target.span if target is not None else arg.span), None
    if not isinstance(value, str) or "$" in value:
        return None
    try:
        parsed = json.loads(value)
    except ValueError:
        parsed = None  # ms-swift repairs malformed JSON (json_repair); judge the text instead
    written_false = len(_USE_REENTRANT_FALSE.findall(value))
    if isinstance(parsed, dict):
        if parsed.get("use_reentrant") is not False:
            return None
    elif written_false != 1:
        return None
    span = node.span if isinstance(node, Scalar) else arg.span
    if span is None:
        return None
    hits = list(_USE_REENTRANT_FALSE.finditer(span.text))
    if len(hits) != 1 or written_false != 1:
        return span, None  # not one exact place to edit
    word = hits[0]
    start, end = span.start + word.start(1), span.start + word.end(1)
    edit = Edit(span.source, start, end, "True" if word.group(1) == "False" else "true")
    return span, edit


def _deepspeed_before_fix(plan, context):
    """Where the DeepSpeed versions the launch may run with lack the fix; None when none does."""
    from dslint.evidence.versions import candidates

    start = plan.origin.path if plan.origin is not None else None
    verdict = candidates("deepspeed", start, context.settings).judge(lambda v: compare(v, _REENTRANT_FIXED_IN) < 0)
    return verdict if verdict.anywhere else None


@rule("DS722", "zero3-non-reentrant-checkpointing", severity="error", target="launch", fix="unsafe", consumers=("hf", "swift", "llamafactory", "megatron"))
def zero3_non_reentrant_checkpointing(plan, context):
    """Non-reentrant gradient checkpointing with frozen weights under ZeRO-3 crashes in the first backward (DeepSpeed before 0.19.3).

    ## What it checks
    An ms-swift or LLaMA-Factory launch that trains adapters (the base model is frozen), with
    DeepSpeed ZeRO-3 (`zero_optimization.stage: 3`, also through ms-swift's `--deepspeed zero3`
    preset), gradient checkpointing on, and torch's non-reentrant checkpoint chosen explicitly:
    - ms-swift 3.x/4.x: `--gradient_checkpointing_kwargs '{"use_reentrant": false}'` (or the YAML
      equivalent). ms-swift's `_fix_gradient_checkpointing` (swift/trainers/mixin.py) takes
      `use_reentrant` from `gradient_checkpointing_kwargs` when it is set and uses `True` under
      DeepSpeed otherwise, so only the explicit `false` is reported; with `--tuner_type`
      (`--train_type` in 3.x) other than `full` (the default is `lora`) and
      `--gradient_checkpointing` not turned off (it is on by default).
    - LLaMA-Factory 0.9: `use_reentrant_gc: false` (model/model_utils/checkpointing.py passes
      `gradient_checkpointing_kwargs={"use_reentrant": model_args.use_reentrant_gc}`, default
      true) with `finetuning_type` other than `full` (default `lora`; `freeze` and `oft` freeze
      weights too) and without `disable_gradient_checkpointing: true`. LLaMA-Factory 0.8 always
      uses reentrant checkpointing.

    Not reported: TRL 1.x trainers (they force `use_reentrant=True` for PEFT + ZeRO-3 + gradient
    checkpointing, with a warning), `python train.py` scripts on the HF Trainer (whether the model
    has frozen parameters is not in the launch), and full fine-tuning, even where the consumer
    freezes part of the model (a vision tower).

    The DeepSpeed versions come from the `deepspeed-version` setting, the installed package
    (`detect-installed-versions`) or a pin in the repository: an error when every version they
    allow is before 0.19.3, nothing when all are 0.19.3 or later, and info naming the versions
    that crash when a range (or nothing pinned: every version dslint knows) allows both.

    It speaks only where the reader of the arguments is established (a known console, a program read
    statically that parses them, or a config whose own keys name LLaMA-Factory or ms-swift), and
    not where a training script reads its YAML with OmegaConf itself (see `unknown-training-argument`).

    ## Why it matters
    In the first backward pass, torch recomputes each checkpointed layer, and ZeRO-3 partitions the
    frozen base weights again during that recompute; the run stops with
    `torch.utils.checkpoint.CheckpointError: Recomputed values for the following tensors have
    different metadata than during the forward pass ... saved {'shape': [1024]} vs recomputed
    {'shape': [0]}` after the job waited for its nodes and loaded the model (huggingface/transformers
    issue #47254, huggingface/trl issue #2514, hiyouga/LlamaFactory issue #6438). DeepSpeed PR
    #8148 ("Z3: Support for activation ckpt with frozen params") fixed it in 0.19.3:
    `fetch_sub_module` in deepspeed/runtime/zero/partitioned_param_coordinator.py detects the
    recompute (`in_checkpoint_recompute`); 0.19.2 does not have it.

    ## Example
    ```sh
    swift sft --model Qwen/Qwen2.5-7B-Instruct --deepspeed zero3 \\
        --gradient_checkpointing_kwargs '{"use_reentrant": false}'
    ```
    Use instead: `--gradient_checkpointing_kwargs '{"use_reentrant": true}'` (or leave
    `use_reentrant` out: ms-swift then uses reentrant checkpointing under DeepSpeed), or
    DeepSpeed 0.19.3 or later.

    ## Fix safety
    Unsafe: reentrant checkpointing behaves differently (memory, speed, inputs that need
    `requires_grad`). The fix turns the explicit `false` into `true` where it is one exact value:
    `use_reentrant_gc: false`, a YAML `use_reentrant: false`, or the single `false` after
    `use_reentrant` inside the JSON string.
    """
    if plan.consumer not in ("swift", "llamafactory"):
        return
    ctx = training_context(plan, context)
    if not ctx.active:
        return
    stage, stage_node = zero_stage(plan)
    if stage != 3:
        return
    setting = _llamafactory_setting(ctx) if ctx.package == "llamafactory" else _swift_setting(ctx)
    if setting is None:
        return
    trained = _trained_method(ctx, setting.tuner, setting.tuner_name)
    if trained is None:
        return
    method, tuner_related = trained
    if method.strip().lower() == "full":
        return
    verdict = _deepspeed_before_fix(plan, context)
    if verdict is None:
        return
    related = [Related("zero_optimization.stage 3 in the DeepSpeed config", stage_node.span if stage_node is not None else None),
               tuner_related, Related(verdict.candidates.describe())]
    tail = "" if verdict.everywhere else f" ({verdict.candidates.why()})"
    message = f"non-reentrant checkpointing of {method} training under ZeRO-3 crashes on {verdict.where()}"
    note = (f"{setting.what}: in the first backward, torch.utils.checkpoint.CheckpointError 'Recomputed values for the following "
            "tensors have different metadata than during the forward pass' (saved shape [N], recomputed [0]), because ZeRO-3 "
            f"partitions the frozen base weights again during the recompute{tail}")
    fix = Fix.unsafe(setting.fix_title, setting.edit) if setting.edit is not None else None
    yield Finding(setting.span or setting.arg.name_span or plan.span, message, related=related, fix=fix,
                  severity=verdict.severity(), note=note, help=f"{setting.remedy}, or use DeepSpeed >= {_REENTRANT_FIXED_IN}")


@dataclass
class _Setting:
    """Where a launch chooses non-reentrant checkpointing, what trains, and how to write it back to reentrant."""

    arg: Any
    span: Any
    edit: Edit | None
    tuner: Any  # the argument that says what is trained, None when not given
    tuner_name: str
    what: str
    remedy: str
    fix_title: str


def _llamafactory_setting(ctx: TrainingContext) -> _Setting | None:
    """LLaMA-Factory 0.9 training with `use_reentrant_gc: false` and gradient checkpointing on."""
    plan = ctx.plan
    if "train" not in (ctx.sets or ("train",)) or ctx.lookup("use_reentrant_gc") is None:
        return None  # not training, or LLaMA-Factory 0.8 (reentrant always)
    arg = plan.arg("use_reentrant_gc")
    if arg is None or arg.assumed or truthy(arg.value) is not False:
        return None
    off = plan.arg("disable_gradient_checkpointing")
    if off is not None and (off.assumed or truthy(off.value) is not False):
        return None
    node = ctx.node(arg)
    span = node.span if isinstance(node, Scalar) else arg.span
    edit = None
    if span is not None and span.text.strip("'\"").lower() in ("false", "no", "off", "n", "f", "0"):
        edit = Edit.replace(span, "true")
    return _Setting(arg, span, edit, plan.arg("finetuning_type"), "finetuning_type", "use_reentrant_gc false",
                    "set use_reentrant_gc: true (the default)", "Set use_reentrant_gc to true")


def _swift_setting(ctx: TrainingContext) -> _Setting | None:
    """ms-swift 3.x/4.x with `use_reentrant` false in gradient_checkpointing_kwargs and gradient checkpointing on."""
    plan = ctx.plan
    if ctx.lookup("gradient_checkpointing_kwargs") is None:
        return None  # ms-swift 2.x
    on = plan.arg("gradient_checkpointing")
    if on is not None and truthy(on.value) is False:
        return None
    if plan.arg("no_gradient_checkpointing") is not None:
        return None
    arg = plan.arg("gradient_checkpointing_kwargs")
    if arg is None or arg.assumed:
        return None
    found = _use_reentrant_false(ctx, arg)
    if found is None:
        return None
    span, edit = found
    tuner = plan.arg("tuner_type", "train_type", "sft_type")
    tuner_name = tuner.name if tuner is not None else \
        next((n for n in ("tuner_type", "train_type", "sft_type") if ctx.lookup(n) is not None), "tuner_type")
    return _Setting(arg, span, edit, tuner, tuner_name, "use_reentrant false in gradient_checkpointing_kwargs",
                    "set use_reentrant to true or leave it out (ms-swift then checkpoints reentrantly under DeepSpeed)",
                    "Set use_reentrant to true")


def _trained_method(ctx: TrainingContext, tuner, tuner_name: str) -> tuple[str, Related] | None:
    """What is trained (lora, full, ...) and where that is said; None when the launch does not tell."""
    if tuner is not None:
        if tuner.assumed or not isinstance(tuner.value, str) or not tuner.value.strip() or "$" in tuner.value:
            return None  # cannot tell what is trained
        return tuner.value, arg_related(tuner)
    method = ctx.default(tuner_name)
    if not isinstance(method, str):
        return None
    return method, Related(f"{tuner_name} {method} ({ctx.label()}'s default)")
