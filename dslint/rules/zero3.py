"""ZeRO-3 parameters: set where they do nothing, left to an "auto" nobody fills, or set so they defeat their purpose (DS220-DS223).

The ZeRO-3 fields and their meaning: deepspeed/runtime/zero/config.py:222-285 (the pydantic
fields and their ``stage3_`` aliases), deepspeed/runtime/zero/partitioned_param_coordinator.py
(prefetching and releasing), deepspeed/runtime/zero/parameter_offload.py (persistence).
"""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix, Related, Severity
from dslint.documents.model import Mapping
from dslint.documents.edits import remove_json_entry, replace_value
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules import _deepspeed_schema as dss

# Fields only the stage-3 code path reads (engine.py:2709-2795 builds them into DeepSpeedZeroOptimizer_Stage3).
_STAGE3_FIELDS = (
    "prefetch_bucket_size",
    "param_persistence_threshold",
    "model_persistence_threshold",
    "max_live_parameters",
    "max_reuse_distance",
    "gather_16bit_weights_on_model_save",
    "module_granularity_threshold",
    "use_all_reduce_for_fetch_params",
    "allgather_sequential",
    "sub_group_size",
    "zero_hpz_partition_size",
    "zero_quantized_weights",
    "zero_quantized_nontrainable_weights",
)
_DEFAULTS = {"zero_hpz_partition_size": 1}


def _field(key: str) -> str:
    spec = (dss.section(("zero_optimization",)) or {}).get("properties", {}).get(key, {})
    return spec.get("x-dslint-alias-of", key)


@rule("DS220", "zero3-option-below-stage3", severity="warning", target="deepspeed", fix="unsafe")
def zero3_option_below_stage3(use, context):
    """A ZeRO-3-only setting in a config whose ZeRO stage is below 3: DeepSpeed ignores it.

    ## What it checks
    With `zero_optimization.stage` 0, 1 or 2 (an absent stage is 0; `"auto"` is not judged:
    accelerate fills it), the keys only the stage-3 optimizer reads: every `stage3_*` key and
    the unprefixed field names (`prefetch_bucket_size`, `param_persistence_threshold`,
    `max_live_parameters`, `max_reuse_distance`, `gather_16bit_weights_on_model_save`, ...),
    `sub_group_size`, `zero_hpz_partition_size` > 1, `zero_quantized_weights`,
    `zero_quantized_nontrainable_weights`, and an `offload_param` with device `cpu` or `nvme`.
    Values of `"auto"` and `false` are not reported.

    ## Why it matters
    DeepSpeed accepts these keys at every stage and uses them only on the stage-3 path
    (deepspeed/runtime/engine.py:2709-2795): a stage-2 config with `offload_param` does not
    offload parameters at all (wenet-e2e/wenet#2499). The config usually means that the
    author believes ZeRO-3 is on, or copied a ZeRO-3 template and lowered the stage.

    ## Example
    ```json
    {"zero_optimization": {"stage": 2, "offload_param": {"device": "cpu"}, "stage3_max_live_parameters": 1e9}}
    ```
    Use instead (or set `"stage": 3`):
    ```json
    {"zero_optimization": {"stage": 2}}
    ```

    ## Fix safety
    Removing the key is offered as an unsafe fix: it changes nothing at this stage, but the
    right repair may be to raise the stage instead.
    """
    stage = ds.zero_stage(use.config)
    zero = ds.zero_section(use.config)
    if zero is None or stage is ds.UNKNOWN or stage >= 3:
        return
    stage_node = zero.entry("stage")
    related = [Related(f"stage = {stage_node.value.span.text.strip()}", stage_node.value.span)] if stage_node else []
    where = f"ZeRO stage {stage}" + ("" if stage_node else " (no stage given)")
    for item in zero.entries:
        node = item.value
        if ds.is_auto(node):
            continue
        value = ds.raw(node)
        if item.key == "offload_param":
            device = ds.offload_device(use.config, "offload_param")
            if device not in ("cpu", "nvme"):
                continue
            what = f"offload_param (device {device})"
        elif item.key.startswith("stage3_") or _field(item.key) in _STAGE3_FIELDS:
            if value is False or value is None or value == _DEFAULTS.get(_field(item.key), object()):
                continue
            what = item.key
        else:
            continue
        yield Finding(
            item.key_span,
            f"{what} is ignored at {where}",
            note="only ZeRO stage 3 reads it; DeepSpeed accepts it at other stages and ignores it",
            related=related,
            fix=Fix.unsafe(f"Remove '{item.key}' (or raise the stage to 3)", remove_json_entry(zero, item)),
        )


# "auto" ZeRO keys accelerate fills in _prepare_deepspeed (accelerator.py) or in
# DeepSpeedPlugin.__post_init__ (utils/dataclasses.py); every other "auto" raises there.
_FILLED = {
    "stage",
    "reduce_bucket_size",
    "stage3_prefetch_bucket_size",
    "stage3_param_persistence_threshold",
    "stage3_gather_16bit_weights_on_model_save",
    "offload_optimizer.device",
    "offload_param.device",
    "offload_optimizer.nvme_path",
    "offload_param.nvme_path",
}


@rule("DS221", "zero-auto-not-filled", severity="error", target="deepspeed", consumers=("hf", "accelerate", "swift", "llamafactory"))
def zero_auto_not_filled(use, context):
    """A ZeRO setting is `"auto"`, but neither HF Trainer nor accelerate fills that key.

    ## What it checks
    `"auto"` values in `zero_optimization` other than the ones HF and accelerate fill:
    `stage`, `reduce_bucket_size`, `stage3_prefetch_bucket_size`,
    `stage3_param_persistence_threshold` (from the model's hidden size),
    `stage3_gather_16bit_weights_on_model_save` and the offload devices and NVMe paths (from
    the accelerate config). Typical offenders: `stage3_max_live_parameters`,
    `stage3_max_reuse_distance`, `sub_group_size`, `allgather_bucket_size`, and the
    *unprefixed* `prefetch_bucket_size` / `param_persistence_threshold`, which HF never fills.

    Severity: an error when the config is launched through HF Trainer, accelerate, ms-swift or
    LLaMA-Factory; a warning for a config no launch reaches. Under the plain deepspeed
    launcher every `"auto"` is another rule's business (DeepSpeed drops it silently).

    ## Why it matters
    accelerate walks the whole config after filling (`deepspeed_config_process`) and raises
    for any key still `"auto"`: ``ValueError: `zero_optimization.stage3_max_live_parameters`
    not found in kwargs. Please specify ... without `auto` `` (accelerate/utils/dataclasses.py,
    `fill_match`). HF Trainer goes through the same code in `accelerator.prepare`.

    ## Example
    ```json
    {"zero_optimization": {"stage": 3, "stage3_max_live_parameters": "auto", "stage3_prefetch_bucket_size": "auto"}}
    ```
    Use instead:
    ```json
    {"zero_optimization": {"stage": 3, "stage3_max_live_parameters": 1e9, "stage3_prefetch_bucket_size": "auto"}}
    ```

    ## Fix safety
    No fix: the value depends on the model and the memory budget.
    """
    if use.consumer is not None and not ds.hf_like(use):
        return
    zero = ds.zero_section(use.config)
    if zero is None:
        return
    severity = None if ds.hf_like(use) else Severity.WARNING
    who = f"under {ds.consumer_label(use)}" if ds.hf_like(use) else "if this config is used with HF Trainer or accelerate"
    for path, node in ds.scalars(zero):
        if node.value != "auto" or ds.dotted(path) in _FILLED:
            continue
        key = ds.dotted(path)
        help = None
        if key in ("prefetch_bucket_size", "param_persistence_threshold"):
            help = f"HF and accelerate fill only the spelling 'stage3_{key}'"
        yield Finding(
            node.span,
            f"zero_optimization.{key} is \"auto\", which HF Trainer and accelerate do not fill",
            note=f"{who}, accelerate raises '`zero_optimization.{key}` not found in kwargs'",
            help=help,
            severity=severity,
        )


_LIVE = ("stage3_max_live_parameters", "max_live_parameters")
_REUSE = ("stage3_max_reuse_distance", "max_reuse_distance")
_PERSIST = ("stage3_param_persistence_threshold", "param_persistence_threshold")
_PERSIST_HUGE = 10**8  # an 8192-wide model's q/k/v/o matrices hold 67M elements each


def _number(zero: Mapping, names: tuple):
    for name in names:
        item = zero.entry(name)
        if item is None or ds.is_auto(item.value):
            continue
        try:
            return item, ds.lax_int(ds.raw(item.value))
        except ds.Invalid:
            return None, None
    return None, None


@rule("DS222", "zero3-value-defeats-purpose", severity="warning", target="deepspeed")
def zero3_value_defeats_purpose(use, context):
    """A ZeRO-3 setting whose value undoes what it is for: no prefetching, no release budget, nothing partitioned.

    ## What it checks
    With ZeRO stage 3:

    - `stage3_max_live_parameters: 0`: prefetching fetches at most
      `max_live_parameters - available` elements (partitioned_param_coordinator.py:452-454),
      so nothing is ever prefetched and every layer waits for its all-gather;
    - `stage3_max_reuse_distance` above `stage3_max_live_parameters`: a parameter reused
      within the distance is not released (coordinator:653-660), so the live budget no longer
      bounds memory;
    - `stage3_param_persistence_threshold` of 1e8 elements or more: every parameter smaller
      than the threshold stays unpartitioned on every GPU (parameter_offload.py:187-190); at
      that size whole attention and MLP matrices (8192 × 8192 = 67M elements) are replicated
      and ZeRO-3 saves little.

    - `stage3_allgather_sequential: true` next to a `stage3_prefetch_bucket_size`: DeepSpeed
      then sets the prefetch bucket to 1 element (engine.py:2742-2744), so the prefetch size
      written has no effect.

    The messages give the memory the values imply at 2 bytes per element (bf16/fp16).

    ## Why it matters
    None of these raise: the run starts, and is slower or uses more memory than the author
    planned, which shows up as an out-of-memory error hours later or as low throughput.

    ## Example
    ```json
    {"zero_optimization": {"stage": 3, "stage3_max_live_parameters": 1e8, "stage3_max_reuse_distance": 1e9}}
    ```
    Use instead:
    ```json
    {"zero_optimization": {"stage": 3, "stage3_max_live_parameters": 1e9, "stage3_max_reuse_distance": 1e9}}
    ```

    ## Fix safety
    No fix: the right values depend on the model and the memory budget.
    """
    if ds.zero_stage(use.config) != 3:
        return
    zero = ds.zero_section(use.config)
    if zero is None:
        return
    live_item, live = _number(zero, _LIVE)
    reuse_item, reuse = _number(zero, _REUSE)
    persist_item, persist = _number(zero, _PERSIST)
    if live_item is not None and live == 0:
        yield Finding(
            live_item.value.span,
            f"{live_item.key} is 0: ZeRO-3 never prefetches",
            note="ZeRO-3 prefetches at most max_live_parameters minus the parameters already gathered, "
            "so every layer waits for its all-gather",
        )
    live_value = live if live is not None else 10**9
    if reuse_item is not None and reuse is not None and live_value > 0 and reuse > live_value:
        related = [Related(f"{live_item.key} = {live_item.value.span.text.strip()}", live_item.value.span)] if live_item else []
        yield Finding(
            reuse_item.value.span,
            f"{reuse_item.key} {ds.pretty_number(reuse)} is larger than max_live_parameters {ds.pretty_number(live_value)}"
            f"{'' if live_item else ' (the default)'}",
            note=f"parameters reused within {ds.pretty_number(reuse)} elements (~{ds.bytes16(reuse)} in 16-bit) are kept gathered, "
            f"so the live budget of ~{ds.bytes16(live_value)} no longer bounds memory",
            related=related,
        )
    sequential = zero.entry("stage3_allgather_sequential") or zero.entry("allgather_sequential")
    prefetch_item, prefetch = _number(zero, ("stage3_prefetch_bucket_size", "prefetch_bucket_size"))
    if sequential is not None and ds.strict_bool(zero, sequential.key, False) is True and prefetch_item is not None and prefetch != 1:
        yield Finding(
            prefetch_item.value.span,
            f"{prefetch_item.key} {ds.pretty_number(prefetch)} has no effect with {sequential.key} true",
            note="DeepSpeed sets the prefetch bucket to 1 element (engine.py:2742-2744), so nothing is prefetched in bulk",
            related=[Related(f"{sequential.key} = {sequential.value.span.text.strip()}", sequential.value.span)],
        )
    if persist_item is not None and persist is not None and persist >= _PERSIST_HUGE:
        yield Finding(
            persist_item.value.span,
            f"{persist_item.key} is {ds.pretty_number(persist)}: ZeRO-3 partitions little",
            note=f"every parameter with fewer elements stays unpartitioned on every GPU (each up to ~{ds.bytes16(persist)} in 16-bit), "
            "which includes whole attention and MLP matrices (8192 × 8192 = 67M elements)",
            help='HF\'s "auto" uses 10 × hidden size, e.g. 40960',
        )


_GATHER = ("stage3_gather_16bit_weights_on_model_save", "gather_16bit_weights_on_model_save", "stage3_gather_fp16_weights_on_model_save")


@rule("DS223", "zero3-16bit-save-disabled", severity="warning", target="deepspeed", fix="unsafe", consumers=("hf", "accelerate", "swift", "llamafactory"))
def zero3_16bit_save_disabled(use, context):
    """ZeRO-3 under HF Trainer or accelerate without `stage3_gather_16bit_weights_on_model_save: true`: no model weights are saved.

    ## What it checks
    ZeRO stage 3 configs used by HF Trainer, accelerate, ms-swift or LLaMA-Factory where
    `stage3_gather_16bit_weights_on_model_save` (or its spellings) is `false` or absent. For a
    config no launch reaches, only when the file holds `"auto"` values, the mark of an HF setup,
    and is a training config by its own keys (an optimizer or scheduler, gradient accumulation
    or clipping, an optimizer offload): ZeRO-3 with batch sizes only is also how inference runs
    (`HfDeepSpeedConfig` with `deepspeed.initialize`, an SGLang offload config), which saves
    nothing. The same holds for a launch whose program is not established, unless its
    arguments ask for training (`--do_train`, `--learning_rate`, `--num_train_epochs`, ...).
    `"auto"` itself is not judged: accelerate fills it from its own config. A launch whose program
    is established as evaluation only (gradients off, no backward pass or optimizer in the
    files read, no save in the entry; `dslint explain` shows it) saves nothing: it is not judged.
    Nor is an HF Trainer launch with `--save_strategy no` whose program, read whole, calls no
    save method: the Trainer writes no checkpoint then (trainer.py `_maybe_log_save_evaluate`
    saves only on the strategy's steps), so no weights are lost.

    ## Why it matters
    With ZeRO-3 the weights are partitioned; HF `save_model` only writes a model file when
    this is true. Otherwise it logs `stage3_gather_16bit_weights_on_model_save=false. Saving
    the full checkpoint instead, use zero_to_fp32.py to recover weights` and writes only
    DeepSpeed shards (transformers trainer.py; hiyouga/LlamaFactory#253: a 905 KB
    `pytorch_model.bin`), and accelerate's `get_state_dict` raises.

    ## Example
    ```json
    {"zero_optimization": {"stage": 3, "stage3_gather_16bit_weights_on_model_save": false}, "train_micro_batch_size_per_gpu": "auto"}
    ```
    Use instead:
    ```json
    {"zero_optimization": {"stage": 3, "stage3_gather_16bit_weights_on_model_save": true}, "train_micro_batch_size_per_gpu": "auto"}
    ```

    ## Fix safety
    Setting `false` to `true` is unsafe: saving then gathers the full 16-bit model on one
    process, which needs that much CPU memory.
    """
    if ds.zero_stage(use.config) != 3 or not ds.trains(use) or _never_saves(use):
        return
    if use.consumer is not None and not ds.hf_like(use):
        return
    if (use.consumer is None or use.extra.get("named_by") is not None) and not ds.has_auto(use.config):
        return  # no launch: only "auto" values say an HF Trainer or accelerate training run reads it
    zero = ds.zero_section(use.config)
    if zero is None:
        return
    item = None
    for name in _GATHER:
        item = zero.entry(name)
        if item is not None:
            break
    who = ds.consumer_label(use) if ds.hf_like(use) else "HF Trainer/accelerate (the \"auto\" values say this config is meant for them)"
    if item is None:
        stage = zero.entry("stage")
        yield Finding(
            stage.key_span if stage else item_span(zero),
            "ZeRO-3 without stage3_gather_16bit_weights_on_model_save: saving writes no model weights",
            note=f"under {who}, saving writes only DeepSpeed shards (recover them with zero_to_fp32.py)",
            help='add "stage3_gather_16bit_weights_on_model_save": true',
        )
        return
    on = ds.lax_read(item.value, ds.lax_bool)
    if on is None or on:
        return
    yield Finding(
        item.value.span,
        f"{item.key} is false with ZeRO-3: saving writes no model weights",
        note=f"under {who}, saving writes only DeepSpeed shards (recover them with zero_to_fp32.py)",
        fix=Fix.unsafe("Set it to true (gathers the full 16-bit model when saving)", replace_value(item.value, True)),
    )


def _never_saves(use) -> bool:
    """An HF Trainer launch with `--save_strategy no` whose program, read whole, calls no save
    (`save_model`, `save_pretrained`, `save_checkpoint`, ...): the run writes no model to lose."""
    from dslint.launch.consumer import saves_a_model

    plan = use.launch
    program = getattr(plan, "program", None)
    if use.consumer != "hf" or program is None or not program.established or program.facts is None:
        return False
    strategy = plan.arg("save_strategy")
    if strategy is None or not isinstance(strategy.value, str) or strategy.value.strip("'\"").lower() != "no":
        return False
    return not saves_a_model(program.facts)


def item_span(zero: Mapping):
    return ds.opening(zero)
