"""Precision rules (DS401-DS406): fp16/bf16/fp32 as every file of a launch decides it.

A launch's precision can be written in four places at once: the training flags (or ms-swift's
derivation from ``torch_dtype``), the weights' ``torch_dtype``, accelerate's ``mixed_precision``
and the DeepSpeed config. These rules look at all of them together (dslint/rules/_precision.py);
a conflict inside one DeepSpeed JSON is DS241's, and an explicit DeepSpeed value that differs
from an HF training argument is DS301's.
"""

from __future__ import annotations

from dslint.diagnostics import Edit, Finding, Fix, Related, Severity
from dslint.launch.target import NO_BF16, PRE_AMPERE
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.launch.args import as_bool, complete, flag, model_name, where, written
from dslint.rules._precision import DTYPE_NAMES, LONG, OTHER, Precision, Vote, bf16_family, weights_vote

HF_MESSAGE = "transformers stops with 'At most one of fp16 and bf16 can be True, but not both' (training_args.py:1784-1785)"
MEGATRON_MESSAGE = "Megatron-Core stops with 'Only one of self.fp16: True and self.bf16 True should be True.' (megatron/core/transformer/transformer_config.py)"
MEGATRON_DS_MESSAGE = "Megatron-DeepSpeed asserts `not args.bf16` / `not args.fp16` when it parses its arguments (megatron/arguments.py, validate_args)"
SWIFT_DERIVATION = (
    "ms-swift sets every flag you did not give from torch_dtype (float16 and float32 imply fp16, bfloat16 implies bf16; "
    "swift/arguments/base_args/model_args.py _init_mixed_precision)"
)
MEGATRON_ARGS = ("tensor_model_parallel_size", "pipeline_model_parallel_size", "micro_batch_size", "global_batch_size", "num_layers")


def _megatron_deepspeed(plan) -> bool:
    return plan.consumer == "deepspeed" and any(name in plan.args for name in MEGATRON_ARGS)


# TrainingArguments flags that show an unlabelled `python|torchrun train.py` parses HF arguments.
HF_TRAINING_FLAGS = ("output_dir", "model_name_or_path", "per_device_train_batch_size", "gradient_accumulation_steps", "num_train_epochs", "learning_rate", "save_strategy")


def _conflict_message(plan) -> str | None:
    if plan.consumer in ("hf", "swift", "llamafactory"):
        return HF_MESSAGE
    if plan.consumer is None and sum(name in plan.args for name in HF_TRAINING_FLAGS) >= 2:
        return HF_MESSAGE
    if plan.consumer == "megatron":
        return MEGATRON_MESSAGE
    if _megatron_deepspeed(plan):
        return MEGATRON_DS_MESSAGE
    return None


@rule("DS401", "precision-conflict", severity="error", target="launch", fix="unsafe")
def precision_conflict(plan, context):
    """fp16 and bf16 are both switched on, by flags, ms-swift's derivation or accelerate.

    ## What it checks
    The precision sources of one launch, across every file it reads (the single-file case inside
    one DeepSpeed JSON is DS241; a DeepSpeed value that differs from an HF flag is DS301):

    - `fp16` and `bf16` both true among the training flags (command line, training YAML,
      LLaMA-Factory `key=value`): transformers raises `ValueError: At most one of fp16 and bf16
      can be True, but not both` (transformers 5.23 training_args.py:1784-1785; ms-swift and
      LLaMA-Factory parse into `TrainingArguments` too); Megatron-SWIFT's Megatron-Core raises
      `Only one of self.fp16: True and self.bf16 True should be True.`
      (megatron/core/transformer/transformer_config.py); Megatron-DeepSpeed asserts in
      `validate_args` (megatron/arguments.py).
    - ms-swift / Megatron-SWIFT (4.x, swift/arguments/base_args/model_args.py
      `_init_mixed_precision`): a flag you do not give is derived from `--torch_dtype` —
      float16 **and float32** give `fp16=True`, bfloat16 gives `bf16=True`. So
      `--torch_dtype float16 --bf16 true` (or `bfloat16` with `--fp16 true`) enables both.
      Without `--torch_dtype`, ms-swift takes the dtype from the model's config.json: for a
      model family pretrained in bf16 (Qwen2+, Llama 3, Mistral, ...) `--fp16 true` alone
      enables both as well; that case depends on the checkpoint, so it is a warning.
    - accelerate (`accelerate launch` of a script that prepares DeepSpeed itself):
      `mixed_precision` fp16/bf16 (command line or accelerate config) while the DeepSpeed config
      enables the other one: `ValueError: --mixed_precision arg cannot be set to bf16 when fp16
      is set in the DeepSpeed config file.` (accelerate 1.15 utils/dataclasses.py:1436-1441).
      accelerate compares the text: `true` and `"True"` count as enabled, `1` and `"yes"` do not.

    ## Why it matters
    Each combination stops the run at start-up, after the job has waited for its nodes.

    ## Example
    ```sh
    swift sft --model Qwen/Qwen2.5-7B-Instruct --torch_dtype float16 --bf16 true
    ```
    Use instead: `--torch_dtype bfloat16` (bf16 then follows), or `--bf16 true --fp16 false`.

    ## Fix safety
    Unsafe, for the ms-swift case only: it sets `--torch_dtype` to the dtype of the flag you gave,
    which changes the dtype the weights are loaded in.
    """
    precision = Precision(plan)
    if not precision.training:
        return
    message = _conflict_message(plan)
    fp16, bf16 = precision.flag_vote("fp16"), precision.flag_vote("bf16")
    if message is not None and fp16 is not None and bf16 is not None:
        derived = next((v for v in (fp16, bf16) if v.kind == "derived"), None)
        given = bf16 if derived is fp16 else fp16 if derived is bf16 else None
        if derived is not None and not complete(plan):
            return  # a hidden --fp16/--bf16 false may switch the derived flag off
        if derived is None:
            first, second = sorted((fp16, bf16), key=lambda v: (v.span.path, v.span.start) if v.span else ("", 0))
            yield Finding(
                second.span or plan.span,
                f"{second.text} together with {first.text}: both fp16 and bf16 are enabled",
                related=[Related(first.describe(), first.span)],
                note=message,
            )
        else:
            dtype_arg = derived.arg
            want = LONG[given.dtype]
            fix = Fix.unsafe(f"Set torch_dtype to {want}", Edit.replace(dtype_arg.span, want)) if dtype_arg.span is not None else None
            if given.dtype == "fp16" and bf16_family(model_name(plan).value) is not None:
                # float16 weights for a model trained in bfloat16 trade this error for DS404: keep
                # the model's dtype and switch the fp16 flag off instead
                written_true = given.span is not None and given.span.text.strip("\"'").lower() in ("true", "1", "yes")
                fix = Fix.unsafe("Set fp16 to false (bf16 follows torch_dtype bfloat16, the dtype the model was trained in)",
                                 Edit.replace(given.span, "false")) if written_true else None
            off = f"--{derived.dtype} false" if given.arg.origin.startswith("-") else f"{derived.dtype}: false"
            yield Finding(
                given.span or plan.span,
                f"{given.text} with {written(dtype_arg)} turns on both fp16 and bf16",
                related=[Related(f"{written(dtype_arg)} ({where(dtype_arg.span)}) implies {derived.dtype}", dtype_arg.span)],
                fix=fix,
                note=f"{SWIFT_DERIVATION}, so {derived.dtype} is enabled too, and {message}",
                help=f"set torch_dtype to {want}, or add {off}" if fix is None else f"or add {off}",
            )
        return
    if plan.consumer in ("swift", "megatron") and fp16 is not None and fp16.kind == "flag" and precision.bf16.value is None and precision.weights is None and complete(plan):
        model = model_name(plan)
        family = bf16_family(model.value)
        if family is not None:
            yield Finding(
                fp16.span or plan.span,
                f"{fp16.text} without --torch_dtype turns on both fp16 and bf16 for {model.value}",
                related=[Related(f"model {model.value} ({where(model.span)})", model.span)],
                severity=Severity.WARNING,
                note=f"ms-swift takes torch_dtype from {model.value}'s config.json, bfloat16 for {family}, and derives bf16=True "
                f"from it, and {message}",
                help="add --bf16 false (or train in bf16)",
            )
    if plan.consumer == "accelerate" and precision.accelerate is not None and precision.ds_config is not None:
        acc = precision.accelerate
        if acc.dtype not in ("fp16", "bf16"):
            return
        other = OTHER[acc.dtype]
        node = _ds_enabled_node(precision, other)
        if node is None:
            return
        if acc.kind == "accelerate" and acc.node is not None:
            section = plan.accelerate_config.config.get("deepspeed_config") if plan.accelerate_config and plan.accelerate_config.config else None
            if section is not None and hasattr(section, "entry") and section.entry("deepspeed_config_file") is not None:
                return  # DS309: mixed_precision is not allowed next to deepspeed_config_file at all
        yield Finding(
            acc.span or plan.span,
            f"{acc.text} while the DeepSpeed config enables {other}",
            note=f"accelerate raises '`--mixed_precision` arg cannot be set to `{acc.dtype}` when `{other}` is set in the DeepSpeed "
            "config file.' (accelerate utils/dataclasses.py:1436-1441)",
            related=[Related(f"{other}.enabled: {ds.show(node)} ({where(node.span)})", node.span if not node.span.virtual else None)],
        )


def _ds_enabled_node(precision: Precision, which: str):
    """`<which>.enabled` when accelerate counts it as set: it checks
    `str(ds_config.get(which, {}).get("enabled", "False")).lower() == "true"` (utils/dataclasses.py:1436),
    so `true` and `"True"` count, `1` and `"yes"` do not, and `bfloat16` is not looked at."""
    config = precision.ds_config
    section = config.get(which) if config is not None else None
    node = section.get("enabled") if section is not None and hasattr(section, "entries") else None
    if node is None or str(node.to_python()).lower() != "true":
        return None
    return node


@rule("DS402", "weights-dtype-mismatch", severity="warning", target="launch", fix="unsafe")
def weights_dtype_mismatch(plan, context):
    """The weights are loaded in one half-precision type and trained in the other.

    ## What it checks
    `--torch_dtype` (or TRL's `--dtype`; LLaMA-Factory's `pure_bf16`) against the precision the
    run trains in, as its consumer decides it: the `fp16`/`bf16` flags (HF Trainer, ms-swift,
    LLaMA-Factory, Megatron), accelerate's `mixed_precision`, or the DeepSpeed config for plain
    DeepSpeed. `torch_dtype: float16` with bf16 training, and `bfloat16` with fp16 training.
    (In ms-swift a flag you leave out follows `torch_dtype`; giving only the opposite flag is a
    conflict, DS401.)

    ## Why it matters
    The weights are converted when training starts. float16 → bfloat16 drops 3 mantissa bits of
    every weight of the float16 checkpoint (and, without DeepSpeed, bf16 autocast runs over
    float16 weights that the optimizer updates in float16 without loss scaling, so small updates
    vanish). bfloat16 → float16 overflows values beyond ±65504 to inf and loses the range the
    model was trained with. Either way the run does not train the model it loaded.

    ## Example
    ```sh
    swift sft --model Qwen/Qwen2.5-7B-Instruct --torch_dtype float16 --bf16 true --fp16 false
    ```
    Use instead: `--torch_dtype bfloat16`.

    ## Fix safety
    Unsafe: it changes `torch_dtype` to the training dtype, which changes how the weights load.
    """
    precision = Precision(plan)
    weights = weights_vote(precision)
    if weights is None or not precision.training:
        return
    others = [v for v in precision.training_votes() if v.kind == "derived" or v.arg is None or v.arg is not weights.arg]
    votes = [v for v in others if v.kind != "derived"]
    dtypes = {v.dtype for v in others}
    if len(dtypes) != 1 or not votes:
        return
    train = votes[0]
    if train.dtype == weights.dtype or train.dtype not in ("fp16", "bf16"):
        return
    if weights.dtype == "fp16":
        cost = ("bfloat16 keeps 3 fewer mantissa bits, so converting the float16 weights loses precision, and float16 "
                "master weights updated without loss scaling underflow")
        advice = f"load them in {LONG[train.dtype]}"
    else:
        cost = "values beyond float16's ±65504 overflow to inf when the bfloat16 weights are cast, and the range they were trained with is lost"
        advice = "train in bf16, or load them in float16"
    fix = None
    if weights.kind == "weights" and weights.arg is not None and weights.arg.name in ("torch_dtype", "dtype") and weights.arg.span is not None:
        fix = Fix.unsafe(f"Load the weights in {LONG[train.dtype]}", Edit.replace(weights.arg.span, LONG[train.dtype]))
    yield Finding(
        weights.span or plan.span,
        f"weights loaded as {LONG[weights.dtype]} ({weights.text}) are trained in {train.dtype} ({train.text})",
        note=cost,
        help=None if fix is not None else advice,
        related=[Related(f"training precision: {train.describe()}", train.span if train.span is None or not train.span.virtual else None)],
        fix=fix,
    )


SWIFT_DTYPES = ("bfloat16", "float16", "float32")


@rule("DS403", "swift-torch-dtype", severity="error", target="launch", fix="safe")
def swift_torch_dtype(plan, context):
    """ms-swift's `--torch_dtype`: a value it rejects, or float32 that turns fp16 on.

    ## What it checks
    For ms-swift and Megatron-SWIFT (4.x; swift/arguments/base_args/model_args.py):
    - `torch_dtype` must be `bfloat16`, `float16` or `float32` (a `Literal` field, so argparse
      stops with `invalid choice: 'bf16' (choose from 'bfloat16', 'float16', 'float32')`;
      `_init_torch_dtype` raises `ValueError: args.torch_dtype: ...` for anything else). Error,
      with a safe fix for the usual aliases (`bf16`, `fp16`, `fp32`, `half`, `torch.bfloat16`).
    - `--torch_dtype float32` without `--fp16`: ms-swift derives `fp16=True` from float32 as
      from float16 (`_init_mixed_precision`; modelscope/ms-swift#3896). Warning: add
      `--fp16 false` for fp32 training.

    `--torch_dtype float16|float32` together with `--bf16 true` enables both precisions: DS401.

    ## Why it matters
    A rejected value ends the job while ms-swift parses its arguments: it waited for its nodes
    only to exit before the model is loaded. float32 does not fail at all, which is worse: the
    weights load in float32, but the run trains with fp16 autocast, not in fp32, so it is not
    the full-precision run the flag asked for and nothing stops to say so.

    ## Example
    ```sh
    swift sft --model Qwen/Qwen2.5-7B-Instruct --torch_dtype bf16
    ```
    Use instead: `--torch_dtype bfloat16`.

    ## Fix safety
    Safe: the alias and ms-swift's name denote the same dtype.
    """
    if plan.consumer not in ("swift", "megatron"):
        return
    arg = plan.arg("torch_dtype")
    if arg is None or arg.value is None:
        return
    value = arg.value
    if not isinstance(value, str):
        yield Finding(arg.span or plan.span, f"torch_dtype {value!r} is not one of {', '.join(SWIFT_DTYPES)}",
                      note="ms-swift's argument parser rejects it")
        return
    text = value.strip()
    if text not in SWIFT_DTYPES:
        canonical = DTYPE_NAMES.get(text.lower())
        fix = None
        if canonical is not None and arg.span is not None:
            fix = Fix.safe(f"Write {LONG[canonical]}", Edit.replace(arg.span, LONG[canonical]))
        yield Finding(
            arg.span or plan.span,
            f"torch_dtype '{text}' is not one of {', '.join(SWIFT_DTYPES)}",
            fix=fix,
            note=f"ms-swift's argument parser stops with \"invalid choice: '{text}'\"",
            help="leave it out to use the model's config.json" if fix is None and text.lower() == "auto" else None,
        )
        return
    precision = Precision(plan)
    if text == "float32" and precision.training and precision.fp16.arg is None and precision.bf16.value is not True and complete(plan):
        yield Finding(
            arg.span or plan.span,
            f"{written(arg)} without --fp16 trains with fp16 mixed precision, not in fp32",
            note=SWIFT_DERIVATION,
            help="add --fp16 false to train in fp32",
            severity=Severity.WARNING,
        )


@rule("DS404", "fp16-on-bf16-model", severity="warning", target="launch", fix="unsafe", facts=("hardware",))
def fp16_on_bf16_model(plan, context, *, hardware):
    """fp16 training of a model family that was pretrained in bf16.

    ## What it checks
    The run trains in fp16 (a flag, ms-swift's derivation from `--torch_dtype float16|float32`,
    accelerate's `mixed_precision`, or the DeepSpeed config) and the model id or path names a
    family pretrained in bf16: Qwen2/2.5/3, QwQ, Llama 3/4, Mistral/Mixtral, Gemma, DeepSeek
    V2/V3/R1, InternLM2/3, GLM-4, Phi-3/4, Yi-1.5.

    ## Why it matters
    Their activations exceed float16's ±65504; the dynamic loss scaler keeps halving until
    DeepSpeed exits with `Current loss scale already at minimum - cannot decrease scale anymore.
    Exiting run.`, or the loss turns NaN (deepspeedai/DeepSpeedExamples#418,
    modelscope/ms-swift#4374). bf16 has float32's range.

    ## Example
    ```yaml
    model_name_or_path: Qwen/Qwen3-8B
    fp16: true
    ```
    Use instead: `bf16: true`.

    ## Fix safety
    Unsafe: it switches the fp16 source to bf16 (and ms-swift's `--torch_dtype` to bfloat16), a
    change of the precision you chose, even on hardware the `hardware` setting names as
    bf16-capable. Not offered on hardware without bf16 (V100, T4, Ascend 910A), where the
    finding's help suggests fp32.
    """
    precision = Precision(plan)
    if not precision.training or precision.training_dtype() != "fp16":
        return
    model = model_name(plan)
    family = bf16_family(model.value)
    if family is None:
        return
    vote = precision.training_votes()[0]
    related = [Related(f"model {model.value} ({where(model.span)})", model.span)]
    if hardware is not None:
        related.append(Related(f"hardware {hardware.name} ({hardware.origin})", hardware.span))
    advice = "train in bf16"
    fix = None
    if hardware is not None and hardware.name in NO_BF16:
        advice = f"{NO_BF16[hardware.name]} has no bf16, so consider fp32 instead"
    else:
        edits = _to_bf16_edits(plan, precision, vote)
        if edits:
            fix = Fix.unsafe("Train in bf16", *edits)  # a change of the precision you chose
    yield Finding(
        vote.span if vote.span is not None and not vote.span.virtual else plan.span,
        f"fp16 training of {model.value}, pretrained in bf16 ({family} family)",
        related=related,
        fix=fix,
        note=f"fp16 from {vote.text}: activations beyond float16's ±65504 overflow, the loss scaler collapses ('Current loss "
        "scale already at minimum - cannot decrease scale anymore') or the loss turns NaN",
        help=None if fix is not None else advice,
    )


def _to_bf16_edits(plan, precision: Precision, vote: Vote) -> list[Edit]:
    edits: list[Edit] = []
    if vote.kind == "flag" and vote.arg is not None and vote.arg.name == "fp16":
        if plan.arg("bf16") is not None or vote.arg.name_span is None:
            return []
        edits.append(Edit.replace(vote.arg.name_span, vote.arg.name_span.text.replace("fp16", "bf16")))
        weights = precision.weights_arg
        if precision.swift and weights is not None and precision.weights in ("fp16", "fp32") and weights.span is not None:
            edits.append(Edit.replace(weights.span, "bfloat16"))
        return edits
    if vote.kind == "derived" and vote.arg is not None and vote.arg.span is not None:
        return [Edit.replace(vote.arg.span, "bfloat16")]
    if vote.kind == "accelerate" and vote.span is not None:
        return [Edit.replace(vote.span, "bf16")]
    return []


@rule("DS405", "precision-unsupported-hardware", severity="error", target="launch", facts=("hardware", "npu_target"))
def precision_unsupported_hardware(plan, context, *, hardware, npu_target):
    """bf16 (or tf32) on hardware that does not have it.

    ## What it checks
    With the `hardware` setting (a comment of the script, `# Env: 8 * V100`, is no evidence of
    the machine the launch runs on):
    - bf16 training (any source: flags, `pure_bf16`, ms-swift's derivation from
      `--torch_dtype bfloat16`, accelerate, the DeepSpeed config) on V100, T4, P100 or Ascend
      910A. On Ascend 910A `torch.npu.is_bf16_supported()` is False, so transformers stops with
      `Your setup doesn't support bf16/gpu` (training_args.py:1776-1782), LLaMA-Factory's
      `pure_bf16` with `This device does not support pure_bf16`, and DeepSpeed with `Type bf16
      is not supported on your device.` (engine.py:2006-2007); "910A支持float16，不支持bf16"
      (vllm-project/vllm-ascend#9294). GPUs before Ampere have no bf16 units: older PyTorch
      reports no bf16 support and the same errors follow; recent PyTorch counts software
      emulation as support (`torch.cuda.is_bf16_supported(including_emulation=True)`).
    - `--tf32 true` on a GPU before Ampere, or on Ascend NPU: `ValueError: --tf32 requires
      Ampere or a newer GPU arch, cuda>=11 and torch>=1.7` (training_args.py:1677-1682;
      `is_torch_tf32_available()` needs CUDA compute capability ≥ 8).

    ## Why it matters
    The job dies at start-up, after its queue wait: transformers' checks run while the
    arguments are parsed (`TrainingArguments.__post_init__`), DeepSpeed's only once the model has
    loaded and the engine is built (`DeepSpeedEngine._do_sanity_check`). Where recent PyTorch
    emulates bf16 on an older GPU the run starts instead, then trains with every bf16 matmul
    emulated, and kernels that need sm80 (FlashAttention-2) fail when they are reached.

    ## Example
    `hardware = "v100"` and `--bf16 true`.
    Use instead: `--fp16 true` (V100, T4, 910A have fp16).
    """
    precision = Precision(plan)
    if hardware is not None and hardware.name in NO_BF16 and precision.training:
        for vote in precision.training_votes():
            if vote.dtype != "bf16":
                continue
            if vote.span is not None and vote.span.virtual:
                continue
            if hardware.name == "ascend-910a":
                effect = ("torch.npu.is_bf16_supported() is False there, so transformers stops with 'Your setup doesn't support bf16/gpu' "
                          "and DeepSpeed with 'Type bf16 is not supported on your device.'")
            else:
                effect = ("it has no bf16 units: older PyTorch stops with 'Your setup doesn't support bf16/gpu ... You need Ampere+ GPU', "
                          "recent PyTorch emulates bf16 many times slower and sm80 kernels such as FlashAttention-2 fail")
            yield Finding(
                vote.span or plan.span,
                f"bf16 ({vote.text}) on {NO_BF16[hardware.name]}",
                note=effect,
                help="use fp16",
                related=[Related(f"hardware {hardware.name} ({hardware.origin})", hardware.span)],
            )
            break
    tf32 = flag(plan, "tf32")
    if tf32.value is True:
        npu = npu_target.reason if npu_target is not None else None
        if hardware is not None and hardware.name in PRE_AMPERE:
            where_ = f"{hardware.name.upper()} (before Ampere)"
            related = [Related(f"hardware {hardware.name} ({hardware.origin})", hardware.span)]
        elif npu is not None or (hardware is not None and hardware.name.startswith("ascend")):
            where_ = "Ascend NPU (tf32 is a CUDA feature)"
            related = [Related(f"Ascend NPU target: {npu}" if npu else f"hardware {hardware.name} ({hardware.origin})", None if npu else hardware.span)]
        else:
            return
        yield Finding(
            tf32.span or plan.span,
            f"{written(tf32.arg)} on {where_}",
            note="transformers stops with '--tf32 requires Ampere or a newer GPU arch, cuda>=11 and torch>=1.7' (training_args.py:1677-1682)",
            help="remove it",
            related=related,
        )


@rule("DS406", "deepspeed-precision-section", severity="warning", target="launch", fix="safe or unsafe",
      consumers=("hf", "accelerate", "swift", "llamafactory"))
def deepspeed_precision_section(plan, context):
    """Mixed precision is requested but the DeepSpeed config does not carry it through.

    ## What it checks
    - HF Trainer, ms-swift, LLaMA-Factory with `--bf16` (or `--fp16`, or ms-swift's derivation
      from `--torch_dtype`) and a DeepSpeed config with no `bf16` (`fp16`) section.
      transformers computes its DeepSpeed dtype while the section is missing, so it stays
      float32 (integrations/deepspeed.py:186-192); accelerate adds `bf16: {enabled: true}` only
      later (utils/dataclasses.py:1422-1427).
    - accelerate `mixed_precision: bf16` (or fp16) with an explicit `bf16.enabled: false`
      (`fp16.enabled: false`): `set_mixed_precision` fills only `"auto"` and leaves false alone
      (dataclasses.py:1442-1446). (Under HF flags the same false is a mismatch error, DS301.)

    ## Why it matters
    Nothing fails, so the run quietly differs from what its flags say. With the section
    missing, ZeRO-3's `zero.Init` materialises the weights in float32 at `from_pretrained`
    (deepspeed/runtime/zero/partition_parameters.py:397-407), twice the memory of 16-bit weights
    while the model loads, and the Trainer casts floating-point inputs (pixel values, audio
    features) to float32 before they reach the model (trainer.py:2371-2375). With an explicit
    false, DeepSpeed trains the whole run in fp32, without a word, although the launch asks for
    bf16 (fp16).

    ## Example
    `--bf16 --deepspeed ds_z3.json` with
    ```json
    {"zero_optimization": {"stage": 3}}
    ```
    Use instead:
    ```json
    {"bf16": {"enabled": "auto"}, "zero_optimization": {"stage": 3}}
    ```

    ## Fix safety
    Adding the missing section with `"enabled": "auto"` is safe where every launch that reads the
    config is established as HF Trainer, accelerate, ms-swift or LLaMA-Factory: `"auto"` makes them
    write the precision the flag already asks for (unsafe where another reader is only assumed to
    be one). Replacing an explicit `false` with `"auto"` is unsafe: the run trains in fp32 today
    and would train in the accelerate config's precision, a change of precision. Either fix is
    dropped where another launch is established as a reader that cannot fill `"auto"` (plain
    DeepSpeed, Megatron-DeepSpeed, inference).
    """
    precision = Precision(plan)
    if not precision.training or precision.ds_config is None or not precision.ds_real:
        return
    config = precision.ds_config
    if plan.consumer in ("hf", "swift", "llamafactory"):
        if precision.training_dtype() not in ("bf16", "fp16"):
            return
        missing = _missing_section(plan, context, precision, config)
        if missing is not None:
            yield missing
            return
    yield from _explicit_false(plan, context, precision, config)


def _missing_section(plan, context, precision: Precision, config) -> Finding | None:
    """A bf16 (fp16) flag with no such section in the DeepSpeed config: transformers' dtype stays float32."""
    for name in ("bf16", "fp16"):
        vote = precision.flag_vote(name)
        if vote is None or ds.precision_section(config, name) is not None or config.get(name) is not None:
            continue
        if name == "bf16" and config.get("bfloat16") is not None:
            continue
        zero3 = " and ZeRO-3's zero.Init materialises the weights in float32" if ds.zero_stage(config) == 3 else ""
        others = ds.auto_readers(plan.deepspeed.document, context, besides=plan)
        return Finding(
            ds.opening(config),
            f"{vote.text} but {plan.deepspeed.document.path} has no \"{name}\" section",
            note="transformers fixes its DeepSpeed dtype to float32 before accelerate adds the section, so the Trainer casts "
            f"floating-point inputs to float32{zero3}",
            related=[Related(vote.describe(), vote.span), Related("DeepSpeed config named here", plan.deepspeed.span)],
            fix=(Fix.safe if others == ds.FILL else Fix.unsafe)(f'Add "{name}": {{"enabled": "auto"}}', ds.insert_json_entry(config, name, '{"enabled": "auto"}'))
            if others != ds.REFUSE else None,
            help=None if others != ds.REFUSE else f'add "{name}": {{"enabled": true}} (another launch reads the config and cannot fill "auto")',
        )
    return None


def _explicit_false(plan, context, precision: Precision, config):
    """accelerate's mixed precision with the DeepSpeed section's enabled: false, which accelerate keeps."""
    acc = precision.accelerate
    if acc is None or acc.dtype not in ("fp16", "bf16"):
        return
    if plan.consumer not in ("accelerate", "hf") or (plan.consumer == "hf" and (precision.fp16.given or precision.bf16.given)):
        return
    section = ds.precision_section(config, acc.dtype)
    entry = section.entry("enabled") if section is not None else None
    if entry is None or ds.is_auto(entry.value) or as_bool(ds.raw(entry.value)) is not False:
        return
    fills = ds.auto_readers(plan.deepspeed.document, context, besides=plan) != ds.REFUSE
    yield Finding(
        entry.value.span,
        f"{acc.dtype}.enabled is {ds.show(entry.value)} while accelerate runs {acc.text}",
        note='accelerate fills only "auto" and keeps this false, so DeepSpeed trains in fp32',
        related=[Related(acc.describe(), acc.span)],
        # unsafe: the run trains in fp32 now; "auto" switches it to accelerate's precision
        fix=Fix.unsafe('Set it to "auto"', Edit.replace(entry.value.span, '"auto"')) if fills else None,
        help=None if fills else 'set it to true (another launch reads the config and cannot fill "auto")',
    )
