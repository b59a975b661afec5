"""DeepSpeed failures visible in the config: raises at parse, at `deepspeed.initialize` or at the first step (DS230-DS249).

Each rule mirrors one check of deepspeed 0.19.8 (deepspeed/runtime/config.py, engine.py,
zero/stage_1_and_2.py, zero/stage3.py, lr_schedules.py) and fires only when the config alone
decides the outcome.

## Out of static reach

These config-driven failures and silent behaviours (research rows §3 and S1-S10) are not
reported by any DS2xx rule, for the reason given:

- §3 row 23, `Type bf16 is not supported on your device`: depends on the GPU the job lands
  on, not on the config (a hardware-aware rule needs the `hardware` setting and the launch).
- §3 row 26, `You are using an untested ZeRO Optimizer`: depends on the optimizer class the
  training code passes to `deepspeed.initialize`.
- §3 row 29, `zero stage N requires an optimizer`: depends on whether the code passes an
  optimizer (HF Trainer always does; inference-only scripts do not).
- §3 rows 37-38, pipeline parallelism with ZeRO-2/3 or with `overlap_comm`: depend on the model
  being a `PipelineModule`, which only the code knows; row 39 (`pipeline.pipe_partitioned`
  not a boolean) is reported by `unchecked-value-type` when the value is a string, and only
  fails with a `PipelineModule`.
- §3 row 46 and S1, `"auto"` read by DeepSpeed alone (`gradient_clipping: "auto"` crashing
  at the first step, `"stage": "auto"` meaning ZeRO off): depend on the launcher, so they
  belong to the launch-linking rules, which know whether HF Trainer or accelerate fills them.
- S7, `gradient_allreduce_op: "sum"` at stages 0-2: the key exists to request summed
  gradients; a config that writes it means it.
- S8, `overlap_comm` absent (on for stage 3 only): the stage-dependent default is
  DeepSpeed's recommendation, not a mistake.
- S10, `CUDA_VISIBLE_DEVICES` ignored by the deepspeed launcher with `--include`/`--num_gpus`:
  a property of the launch command, not of the config (launch rules).

Everything else in §3 and S1-S10 has a rule: rows 1-4 (DS203, DS002, DS101, DS102), 5
(DS241), 6 and 10 (DS212), 7 (DS201), 8 (DS210), 9 and 14-15 (DS210, DS213), 11 (DS236),
12 and 30 (DS234), 13 (DS205), 16-17 (DS212, DS231), 18 and 34 (DS242), 19-20 (DS212), 21
(DS237), 22 and 28 (DS244), 24 (DS238), 25 (DS240), 27 (DS230), 31 (DS232), 32 (DS233), 33
(DS246), 35-36 (DS235), 40-43 (DS239), 44 (DS247), 45 (DS245), 47 (DS248); S2 (DS202), S3
(DS220), S4 (DS235), S5 (DS249), S6 (DS222), S9 (DS204).
"""

from __future__ import annotations


from dslint.diagnostics import Finding, Fix, Related, Severity
from dslint.documents.model import Mapping, Scalar
from dslint.documents.edits import remove_json_entry, replace_value
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules import _deepspeed_schema as dss

# torch 2.13 `torch.optim` optimizer classes (tests/test_deepspeed_rules.py compares this with
# the installed torch). DeepSpeed accepts any `getattr(torch.optim, name)` (engine.py:1985-1986).
TORCH_OPTIMIZERS = (
    "ASGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS", "Muon", "NAdam",
    "RAdam", "RMSprop", "Rprop", "SGD", "SparseAdam",
)
# torch 2.13 `torch.optim.lr_scheduler` scheduler classes (engine.py:1926-1932 accepts any attribute).
TORCH_SCHEDULERS = (
    "ChainedScheduler", "ConstantLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts", "CyclicLR",
    "ExponentialLR", "LambdaLR", "LinearLR", "MultiStepLR", "MultiplicativeLR", "OneCycleLR", "PolynomialLR",
    "ReduceLROnPlateau", "SequentialLR", "StepLR",
)
# deepspeed/runtime/config.py:63-66 (lowercase; the config's `type` is compared case-insensitively).
DEEPSPEED_OPTIMIZERS = ("adagrad", "adam", "adamw", "lamb", "muadam", "muadamw", "musgd", "lion", "muon")
# Removed in 0.19.7 (present in the 0.19.6 DEEPSPEED_OPTIMIZERS, absent from 0.19.7's).
ONEBIT_OPTIMIZERS = {"onebitadam": "OneBitAdam", "onebitlamb": "OneBitLamb", "zerooneadam": "ZeroOneAdam"}
ONEBIT_REMOVED = "0.19.7"

# deepspeed/runtime/lr_schedules.py: constructor keyword arguments (besides `optimizer`), required ones first.
DEEPSPEED_SCHEDULERS = {
    "LRRangeTest": ((), ("lr_range_test_min_lr", "lr_range_test_step_size", "lr_range_test_step_rate", "lr_range_test_staircase", "last_batch_iteration")),
    "OneCycle": (("cycle_min_lr", "cycle_max_lr"), ("decay_lr_rate", "cycle_first_step_size", "cycle_second_step_size", "cycle_first_stair_count", "cycle_second_stair_count", "decay_step_size", "cycle_momentum", "cycle_min_mom", "cycle_max_mom", "decay_mom_rate", "last_batch_iteration")),
    "WarmupLR": ((), ("warmup_min_lr", "warmup_max_lr", "warmup_num_steps", "warmup_type", "last_batch_iteration")),
    "WarmupDecayLR": (("total_num_steps",), ("warmup_min_lr", "warmup_max_lr", "warmup_num_steps", "warmup_type", "last_batch_iteration")),
    "WarmupCosineLR": (("total_num_steps",), ("warmup_min_ratio", "warmup_num_steps", "cos_min_ratio", "warmup_type", "last_batch_iteration")),
}
_WARMUP_VALIDATED = "0.19.3"  # lr_schedules.py:733-734, 874-875 (deepspeedai/DeepSpeed PR #8126)


def _related(item, label=None):
    if item is None:
        return []
    return [Related(label or f"{item.key} = {ds.show(item.value)}", item.value.span)]


def _stage_related(config: Mapping):
    zero = ds.zero_section(config)
    item = zero.entry("stage") if zero is not None else None
    return _related(item, f"ZeRO stage {ds.show(item.value)}" if item else None)


def _optimizer_type(config: Mapping):
    """(entry of optimizer.type or None, the type string lowercased when it is a DeepSpeed name)."""
    optimizer = config.get("optimizer")
    if not isinstance(optimizer, Mapping):
        return None, None
    item = optimizer.entry("type")
    if item is None:
        return None, None
    value = ds.raw(item.value)
    if not isinstance(value, str):
        return item, None
    return item, value.lower() if value.lower() in DEEPSPEED_OPTIMIZERS else value


def _client_optimizer_severity(use):
    """DeepSpeed builds the config's optimizer/scheduler only when the code passes none: HF Trainer
    and accelerate never do when the block exists (DummyOptim), the deepspeed launcher's scripts
    usually do not, Megatron-DeepSpeed always passes its own. An error only for the former, and
    only when the launch's program was read (a consumer guessed from the flags is a guess)."""
    program = getattr(use.launch, "program", None)
    if program is not None and not program.established:
        return Severity.WARNING
    return None if use.consumer in ds.HF_LIKE + ("deepspeed",) else Severity.WARNING


def _truthy(node) -> bool | None:
    """Python truthiness of a value DeepSpeed reads with dict.get (None for "auto")."""
    if node is None:
        return None
    if ds.is_auto(node):
        return None
    return bool(ds.raw(node))


@rule("DS230", "offload-with-client-optimizer", severity="error", target="deepspeed", fixable=True)
def offload_with_client_optimizer(use, context):
    """Optimizer offload with no DeepSpeed `optimizer` block: a torch optimizer from the code makes DeepSpeed refuse to start.

    ## What it checks
    Optimizer offload to `cpu` or `nvme` (`offload_optimizer.device`, or the deprecated
    `cpu_offload: true`), no `optimizer` with a `type` in the config, and
    `zero_force_ds_cpu_optimizer` not set to false. A launch whose program is established as
    evaluation only (gradients off, no backward pass or optimizer in the files read, no save in
    the entry; `dslint explain` shows it) is not judged: it passes no optimizer, so DeepSpeed
    neither builds nor refuses one.

    - HF Trainer, accelerate, ms-swift, LLaMA-Factory: accelerate replaces the torch optimizer
      with `DeepSpeedCPUAdam` when it sees `zero_optimization.offload_optimizer`
      (accelerate/accelerator.py `_prepare_deepspeed`, `map_pytorch_optim_to_deepspeed`, since
      accelerate 1.2 per optimizer class), so only the deprecated `cpu_offload: true`, which
      accelerate does not look at, fails there: an error.
      The conversion is silent, and where the Trainer's optimizer is not AdamW (`--optim
      adafactor`, `sgd`, `adamw_bnb_8bit`, `lion_32bit`, `--adafactor` ...) it changes the
      optimizer: accelerate before 1.2.0 makes every client optimizer `DeepSpeedCPUAdam` in AdamW
      mode (accelerator.py `_prepare_deepspeed`, 1.1.1:1832-1836); from 1.2.0
      `map_pytorch_optim_to_deepspeed` (accelerate utils/deepspeed.py:29-95) keeps AdamW only for
      `torch.optim.AdamW` and 32-bit bitsandbytes AdamW, maps Adagrad to `DeepSpeedCPUAdagrad`
      and 32-bit bitsandbytes Lion to `DeepSpeedCPULion`, and turns everything else into Adam
      with L2 weight decay (`adamw_mode=False`). That is a warning, naming what the accelerate
      versions the repository allows do (Adagrad only before 1.2.0).
    - Releases that do not convert yet: accelerate before 0.18.0 passes the client optimizer to
      DeepSpeed unchanged (the swap appears in 0.18.0, accelerator.py:1402-1409; 0.17.1 has
      none), and the HF Trainer before transformers 4.30.0 calls `deepspeed.initialize` itself with
      `Trainer.create_optimizer()` (4.29.2 deepspeed.py:296 and 378; 4.30.0 prepares through
      accelerate, trainer.py:1752). Where the pins allow only such releases it is an error (a
      warning when the launch's program was not read), info when they allow newer ones too, and
      nothing when every allowed release converts.
    - A config no launch reaches that an accelerate config names (`deepspeed_config_file`) is read
      by accelerate whichever program runs (DeepSpeedPlugin), so it is judged as accelerate's.
      One that has `"auto"` values is read by HF Trainer or accelerate (nothing else fills
      them), so it is judged as theirs too.
    - Any other config no launch reaches, or the plain deepspeed launcher: a warning, because it
      fails whenever the training code passes its own torch optimizer.

    ## Why it matters
    With offload, DeepSpeed requires its own CPU optimizer: a client optimizer that is not
    `DeepSpeedCPUAdam`/`DeepSpeedCPULion` raises `ZeRORuntimeException: You are using
    ZeRO-Offload with a client provided optimizer ...` at `deepspeed.initialize`
    (deepspeed/runtime/engine.py:2339-2346), at any ZeRO stage (OpenMOSS/MOSS#272,
    deepspeedai/DeepSpeed#7524).

    ## Example
    ```json
    {"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}
    ```
    Use instead (DeepSpeed builds DeepSpeedCPUAdam; HF fills the "auto" values):
    ```json
    {"optimizer": {"type": "AdamW", "params": {"lr": "auto", "weight_decay": "auto"}},
     "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}
    ```

    ## Fix safety
    Adding an `optimizer` block (AdamW with `"auto"` parameters) is unsafe: it replaces the
    optimizer the code chose. It is offered only where the launch's program is established as
    one that fills `"auto"` (HF Trainer, accelerate, ms-swift, LLaMA-Factory). Setting `zero_force_ds_cpu_optimizer` to false is offered as an
    unsafe alternative: DeepSpeed then runs the client optimizer on the CPU, which DeepSpeed
    warns is slow. The finding about releases that do not convert yet has no fix: upgrading
    accelerate or transformers is the remedy, and dslint does not edit pins.
    """
    if use.consumer == "megatron" or not ds.trains(use):
        return  # an evaluation passes no optimizer: DeepSpeed builds none and checks none
    device = ds.offload_device(use.config, "offload_optimizer")
    if device not in ("cpu", "nvme"):
        return
    type_item, _ = _optimizer_type(use.config)
    if type_item is not None and ds.raw(type_item.value) is not None:
        return
    force = use.config.get("zero_force_ds_cpu_optimizer")
    if force is not None and _truthy(force) is not True:
        return
    zero = ds.zero_section(use.config)
    section = zero.get("offload_optimizer")
    via_section = isinstance(section, Mapping) and ds.raw(section.get("device")) in ("cpu", "nvme")
    anchor_item = zero.entry("offload_optimizer") if via_section else zero.entry("cpu_offload")
    # "auto" values in a config no launch reaches say who reads it: only HF Trainer and accelerate fill them.
    hf = ds.hf_like(use) or (use.consumer is None and ds.has_auto(use.config))
    if hf and via_section:
        # accelerate swaps the torch optimizer for DeepSpeedCPUAdam: silent, and a change of
        # optimizer when the Trainer's is not AdamW. Releases from before the swap pass it on.
        unconverted = list(_unconverted(use, context, anchor_item, device))
        yield from unconverted or _swapped_optimizer(use, context, anchor_item, device)
        return
    if hf:
        why = (
            f"{ds.consumer_label(use) or 'HF Trainer or accelerate'} passes its own torch optimizer, and accelerate converts it "
            "to DeepSpeedCPUAdam only "
            "when it sees zero_optimization.offload_optimizer, not the deprecated cpu_offload"
        )
    else:
        why = (
            "if the training code passes its own torch optimizer (accelerate and HF Trainer convert theirs to "
            "DeepSpeedCPUAdam; plain deepspeed.initialize(optimizer=...) does not)"
        )
    config = use.config
    fix = None
    alternatives = []
    if "optimizer" not in config and ds.fills_auto(use):
        fix = Fix.unsafe(
            'Add "optimizer": {"type": "AdamW", "params": {"lr": "auto", "weight_decay": "auto"}} (DeepSpeed builds DeepSpeedCPUAdam)',
            ds.insert_json_entry(config, "optimizer", '{"type": "AdamW", "params": {"lr": "auto", "weight_decay": "auto"}}'),
        )
    if force is None:
        alternatives.append(Fix.unsafe('Add "zero_force_ds_cpu_optimizer": false (runs the client optimizer on the CPU)', ds.insert_json_entry(config, "zero_force_ds_cpu_optimizer", "false")))
    else:
        alternatives.append(Fix.unsafe("Set zero_force_ds_cpu_optimizer to false", replace_value(force, False)))
    if fix is None and alternatives:
        fix = alternatives.pop(0)
    yield Finding(
        anchor_item.key_span,
        f"optimizer offload to {device} with no DeepSpeed 'optimizer' block",
        note=f"{why}; DeepSpeed then raises 'ZeRORuntimeException: You are using ZeRO-Offload with a client provided optimizer' "
        "(engine.py:2339-2346)",
        fix=fix,
        alternatives=alternatives,
        # "auto" suggests HF, it does not establish it; an accelerate config naming the file says
        # who reads it, not whether the program passes an optimizer
        severity=None if ds.hf_like(use) and use.extra.get("named_by") is None else Severity.WARNING,
    )


# Where the client optimizer is first swapped for DeepSpeedCPUAdam under optimizer offload:
# accelerate 0.18.0 Accelerator._prepare_deepspeed (accelerator.py:1402-1409; 0.17.1 passes it on
# unchanged), and the HF Trainer once it goes through accelerate (ds.TRAINER_VIA_ACCELERATE).
_CONVERTS = {"accelerate": ("accelerate", "0.18.0", "Accelerator.prepare passes the client optimizer to DeepSpeed unchanged"),
             "hf": ("transformers", ds.TRAINER_VIA_ACCELERATE,
                    "the Trainer hands its own optimizer to deepspeed.initialize, not through accelerate")}


def _unconverted(use, context, anchor_item, device):
    """Optimizer offload without a DeepSpeed optimizer under the releases of the reader (accelerate,
    or the HF Trainer) that do not yet swap the client optimizer for DeepSpeedCPUAdam: DeepSpeed
    raises there. Nothing where every allowed release converts it."""
    if use.consumer not in _CONVERTS:
        return
    from dslint.evidence.versions import compare

    package, since, what = _CONVERTS[use.consumer]
    plan = use.launch
    program = getattr(plan, "program", None)
    found = ds.reader_versions(use, context, package)
    verdict = found.judge(lambda v: compare(v, since) < 0)
    if not verdict.anywhere:
        return
    severity = verdict.severity()
    if plan is None or program is None or not program.established:
        severity = min(severity or Severity.ERROR, Severity.WARNING)  # the reader is known; the program is not
    named_by = use.extra.get("named_by")
    yield Finding(
        anchor_item.key_span,
        f"optimizer offload to {device} with no DeepSpeed 'optimizer' block",
        related=[Related("named by an accelerate config", named_by)] if named_by is not None else [],
        note=verdict.qualify(f"before {found.label} {since} {what}; DeepSpeed then raises 'ZeRORuntimeException: You are "
                             "using ZeRO-Offload with a client provided optimizer' (engine.py:2339-2346)"),
        severity=severity,
    )


# transformers `OptimizerNames` that build torch.optim.AdamW (kept AdamW by accelerate under offload).
_ADAMW_OPTIMS = ("adamw_torch", "adamw_torch_fused", "adamw_hf", "adamw_torch_xla", "adamw_torch_npu_fused", "adamw_apex_fused")
_MAPS_OPTIMIZER = "1.2.0"  # accelerate utils/deepspeed.py map_pytorch_optim_to_deepspeed: absent from 1.1.1, in 1.2.0


def _swapped_optimizer(use, context, anchor_item, device):
    """The Trainer's own optimizer (`--optim`, `--adafactor`) under optimizer offload without a
    DeepSpeed optimizer block: accelerate replaces it with a DeepSpeed CPU optimizer."""
    plan = use.launch
    if plan is None:
        return
    from dslint.rules.launch import TrainingArgs
    from dslint.evidence.versions import candidates, compare

    args = TrainingArgs(plan)
    optim, related = args.get("optim")
    adafactor, adafactor_related = args.get("adafactor")
    if adafactor is True or str(adafactor).lower() in ("true", "1", "yes"):
        optim, related = "adafactor", adafactor_related
    if not isinstance(optim, str) or optim.lower() in _ADAMW_OPTIMS:
        return
    optim = optim.lower()
    start = plan.origin.path if plan.origin is not None else None
    found = candidates("accelerate", start, context.settings, plan.program)
    mapped = found.where(lambda v: compare(v, _MAPS_OPTIMIZER) >= 0)
    if optim == "adagrad":  # from 1.2.0 it becomes DeepSpeedCPUAdagrad: the same algorithm
        verdict = found.judge(lambda v: compare(v, _MAPS_OPTIMIZER) < 0)
        if not verdict.anywhere:
            return
        note = f"accelerate before {_MAPS_OPTIMIZER} replaces the Trainer's optimizer with DeepSpeedCPUAdam (AdamW) silently"
        yield Finding(anchor_item.key_span, f"optim {optim} with optimizer offload to {device} and no DeepSpeed 'optimizer' block",
                      related=[r for r in [related] if r is not None], severity=verdict.severity() or Severity.WARNING,
                      note=verdict.qualify(note))
        return
    modes = []
    if mapped:
        modes.append(f"Adam with L2 weight decay (adamw_mode=False) from accelerate {_MAPS_OPTIMIZER}, which keeps AdamW only for "
                     "torch.optim.AdamW and 32-bit bitsandbytes AdamW")
    if len(mapped) < len(found.versions):
        modes.append(f"AdamW before accelerate {_MAPS_OPTIMIZER}, which converts every optimizer")
    yield Finding(
        anchor_item.key_span,
        f"optim {optim} with optimizer offload to {device} and no DeepSpeed 'optimizer' block",
        note=f"accelerate replaces the Trainer's optimizer with DeepSpeedCPUAdam silently, as {'; or '.join(modes)} ({found.why()})",
        related=[r for r in [related] if r is not None],
        severity=Severity.WARNING,
    )


@rule("DS231", "allreduce-sum-unsupported", severity="error", target="deepspeed")
def allreduce_sum_unsupported(use, context):
    """`gradient_allreduce_op: "sum"` with ZeRO-3, ZenFlow or DeepCompile, which DeepSpeed rejects.

    ## What it checks
    `gradient_allreduce_op` equal to `sum` (any case) together with ZeRO stage 3, a
    `zero_optimization.zenflow` section, or `compile.deepcompile: true`. The key exists since
    DeepSpeed 0.19.6.

    ## Why it matters
    `DeepSpeedConfig._do_error_check` raises `ValueError: gradient_allreduce_op='sum' is not
    supported with ZeRO stage 3` (or `with ZenFlow`, `with DeepCompile`) at parse time
    (deepspeed/runtime/config.py:694-700).

    ## Example
    ```json
    {"gradient_allreduce_op": "sum", "zero_optimization": {"stage": 3}}
    ```
    Use instead:
    ```json
    {"gradient_allreduce_op": "mean", "zero_optimization": {"stage": 3}}
    ```

    ## Fix safety
    No fix: switching to `mean` changes the gradient scale the run was tuned for.
    """
    config = use.config
    item = config.entry("gradient_allreduce_op")
    versions = dss.Versions(use, context)
    reading = versions.since(dss.introduced_in(("gradient_allreduce_op",)))
    if item is None or not reading:
        return
    value = ds.raw(item.value)
    if not (isinstance(value, str) and value.lower() == "sum"):
        return
    zero = ds.zero_section(config)
    reasons = []
    if ds.zero_stage(config) == 3:
        reasons.append(("ZeRO stage 3", _stage_related(config)))
    if zero is not None and zero.get("zenflow") is not None and ds.raw(zero.get("zenflow")) is not None and not ds.is_auto(zero.get("zenflow")):
        reasons.append(("ZenFlow", _related(zero.entry("zenflow"), "zero_optimization.zenflow")))
    compile_section = config.get("compile")
    if isinstance(compile_section, Mapping) and ds.strict_bool(compile_section, "deepcompile", False) is True:
        reasons.append(("DeepCompile", _related(compile_section.entry("deepcompile"))))
    for what, related in reasons[:1]:
        found = Finding(item.value.span, f"gradient_allreduce_op='sum' with {what}", related=related,
                        note="DeepSpeed raises ValueError when it parses the config (config.py:694-700)")
        yield from versions.within([found], reading)


def _bf16_zero1_optimizer(config: Mapping, stage) -> bool:
    """Stage 1 + bf16 + fp32 gradient accumulation without CPU offload uses the BF16 optimizer, not ZeRO's (engine.py:2303-2309)."""
    data_types = config.get("data_types")
    grad_accum = ds.raw(data_types.get("grad_accum_dtype")) if isinstance(data_types, Mapping) and data_types.get("grad_accum_dtype") is not None else None
    return (
        stage == 1
        and ds.precision_enabled(config, "fp16") is False
        and ds.precision_enabled(config, "bf16") is True
        and grad_accum in ("fp32", "float32", "float", "torch.float32")
        and ds.offload_device(config, "offload_optimizer") != "cpu"
    )


@rule("DS232", "allgather-bucket-odd", severity="error", target="deepspeed", fixable=True)
def allgather_bucket_odd(use, context):
    """An odd `allgather_bucket_size` with ZeRO stage 1 or 2: DeepSpeed asserts it is even.

    ## What it checks
    `zero_optimization.allgather_bucket_size` (after integer coercion; the legacy
    `"zero_optimization": true` reads the top-level `allgather_size`) that is odd, with ZeRO
    stage 1 or 2, except stage 1 with bf16 and `data_types.grad_accum_dtype: fp32` without CPU
    offload, which uses DeepSpeed's BF16 optimizer instead.

    ## Why it matters
    `DeepSpeedZeroOptimizer` aligns all-gather buffers to 4 bytes and asserts
    `allgather_bucket_size must be a multiple of nccl_start_alignment_factor, 2` at
    `deepspeed.initialize` (deepspeed/runtime/zero/stage_1_and_2.py:387-391).

    ## Example
    ```json
    {"zero_optimization": {"stage": 2, "allgather_bucket_size": 200000001}}
    ```
    Use instead:
    ```json
    {"zero_optimization": {"stage": 2, "allgather_bucket_size": 200000002}}
    ```

    ## Fix safety
    Adding one element to make the size even is safe: the bucket grows by one element.
    """
    config = use.config
    stage = ds.zero_stage(config)
    if stage not in (1, 2) or _bf16_zero1_optimizer(config, stage):
        return
    zero = ds.zero_section(config)
    item = zero.entry("allgather_bucket_size") if zero is not None else config.entry("allgather_size")
    if item is None or ds.is_auto(item.value):
        return
    try:
        size = ds.lax_int(ds.raw(item.value))
    except ds.Invalid:
        return
    if size % 2:
        yield Finding(
            item.value.span,
            f"{item.key} {size} is odd",
            note=f"ZeRO stage {stage} asserts 'allgather_bucket_size must be a multiple of nccl_start_alignment_factor, 2' "
            "at deepspeed.initialize (stage_1_and_2.py:389-391)",
            related=_stage_related(config),
            fix=Fix.safe(f"Write {size + 1}", replace_value(item.value, size + 1)),
        )


@rule("DS233", "prescale-with-reduce-scatter", severity="error", target="deepspeed", fixable=True)
def prescale_with_reduce_scatter(use, context):
    """`prescale_gradients` or `gradient_predivide_factor` with ZeRO-2/3 reduce-scatter, which DeepSpeed rejects.

    ## What it checks
    `prescale_gradients` truthy or `gradient_predivide_factor` other than 1.0 (both read
    without a type check, so the string `"false"` counts as true) together with
    `reduce_scatter` on (the default) and either ZeRO stage 3, or ZeRO stage 2 with
    `gradient_allreduce_op` `mean` (the default). ZeRO stage 1 is fine.

    ## Why it matters
    The ZeRO-2 and ZeRO-3 optimizers assert at `deepspeed.initialize`:
    `pre-scale gradients is not yet supported with ZeRO-2 with reduce scatter enabled` and
    `gradient_predivide_factor != 1.0 is not yet supported with ZeRO-3 with reduce scatter enabled`
    (deepspeed/runtime/zero/stage_1_and_2.py:346-351, zero/stage3.py:392-396).

    ## Example
    ```json
    {"prescale_gradients": true, "zero_optimization": {"stage": 2}}
    ```
    Use instead:
    ```json
    {"prescale_gradients": false, "zero_optimization": {"stage": 2}}
    ```

    ## Fix safety
    Removing `prescale_gradients: true` or the predivide factor is safe: the averaged gradient
    is the same, only the order of the division changes, and the config cannot start as written.
    """
    config = use.config
    stage = ds.zero_stage(config)
    if stage not in (2, 3):
        return
    zero = ds.zero_section(config)
    if ds.strict_bool(zero, "reduce_scatter", True) is not True:
        return
    versions = dss.Versions(use, context)
    applies = versions.key
    if stage == 2:
        op = config.get("gradient_allreduce_op")
        value = ds.raw(op) if op is not None else None
        if op is not None and not (isinstance(value, str) and value.lower() == "mean"):
            applies = versions.before(dss.introduced_in(("gradient_allreduce_op",)))  # older releases ignore the op
            if not applies:
                return
    name = f"ZeRO-{stage}"
    prescale = config.entry("prescale_gradients")
    if prescale is not None and _truthy(prescale.value):
        yield from versions.within([Finding(
            prescale.value.span,
            f"prescale_gradients is {ds.show(prescale.value)} with {name} and reduce_scatter",
            note=f"DeepSpeed asserts 'pre-scale gradients is not yet supported with {name} with reduce scatter enabled' at deepspeed.initialize",
            related=_stage_related(config),
            fix=Fix.safe("Remove prescale_gradients", remove_json_entry(config, prescale)),
        )], applies, spelling=True)
    factor = config.entry("gradient_predivide_factor")
    if factor is not None and not ds.is_auto(factor.value) and ds.raw(factor.value) != 1.0:
        yield from versions.within([Finding(
            factor.value.span,
            f"gradient_predivide_factor is {ds.show(factor.value)} with {name} and reduce_scatter",
            note=f"DeepSpeed asserts 'gradient_predivide_factor != 1.0 is not yet supported with {name} with reduce scatter enabled'",
            related=_stage_related(config),
            fix=Fix.safe("Remove gradient_predivide_factor", remove_json_entry(config, factor)),
        )], applies, spelling=True)


@rule("DS234", "compute-grad-norm-off", severity="error", target="deepspeed", fixable=True)
def compute_grad_norm_off(use, context):
    """`compute_grad_norm: false` where DeepSpeed forbids it: ZeRO stage 0 or 3, gradient clipping, offload, ZenFlow.

    ## What it checks
    `zero_optimization.compute_grad_norm` false (DeepSpeed ≥ 0.19.7) with:

    - ZeRO stage 0 or 3 (raises when the config is parsed, zero/config.py:389-393);
    - gradient clipping above 0, **including the default 1.0** when `gradient_clipping` is
      absent; a ZenFlow section; or optimizer offload (raise at `deepspeed.initialize`,
      zero/stage_1_and_2.py:212-218);
    - stage 1 with bf16 and `data_types.grad_accum_dtype: fp32` without CPU offload
      (engine.py:2303-2306).

    ## Why it matters
    `ValueError: compute_grad_norm=false is supported only with ZeRO Stage 1 or 2` at parse, or
    `zero_optimization.compute_grad_norm=false requires gradient_clipping=0` at start-up.

    ## Example
    ```json
    {"zero_optimization": {"stage": 2, "compute_grad_norm": false}}
    ```
    Use instead:
    ```json
    {"zero_optimization": {"stage": 2, "compute_grad_norm": false}, "gradient_clipping": 0.0}
    ```

    ## Fix safety
    Removing `compute_grad_norm: false` is safe: it only switches an optimisation off that
    cannot work with this config.
    """
    config = use.config
    zero = ds.zero_section(config)
    versions = dss.Versions(use, context)
    reading = versions.since(dss.introduced_in(("zero_optimization", "compute_grad_norm")))
    if zero is None or not reading:
        return
    item = zero.entry("compute_grad_norm")
    if item is None or ds.strict_bool(zero, "compute_grad_norm", True) is not False:
        return
    stage = ds.zero_stage(config)
    fix = Fix.safe("Remove compute_grad_norm: false", remove_json_entry(zero, item))
    if stage is ds.UNKNOWN:
        return
    if stage not in (1, 2):
        found = Finding(item.value.span, f"compute_grad_norm=false with ZeRO stage {stage}", related=_stage_related(config), fix=fix,
                        note="DeepSpeed raises 'compute_grad_norm=false is supported only with ZeRO Stage 1 or 2' when it parses the config")
        yield from versions.within([found], reading)
        return
    clip = config.get("gradient_clipping")
    reason = None  # (what conflicts, what DeepSpeed raises)
    related = []
    if clip is None:
        clipping = versions.since(dss.key_history("gradient_clipping").get("default_changed", {}).get("version", "0.19.3"))
        if clipping:
            reading = tuple(v for v in reading if v in clipping)
            reason = ("gradient_clipping absent (default 1.0)", "zero_optimization.compute_grad_norm=false requires gradient_clipping=0")
    elif not ds.is_auto(clip):
        try:
            value = float(ds.raw(clip))
        except (TypeError, ValueError):
            value = None
        if value is not None and value > 0:
            reason = (f"gradient_clipping {ds.show(clip)}", "zero_optimization.compute_grad_norm=false requires gradient_clipping=0")
            related = _related(config.entry("gradient_clipping"))
    if reason is None and ds.offload_device(config, "offload_optimizer") in ("cpu", "nvme"):
        reason = ("optimizer offload", "zero_optimization.compute_grad_norm=false does not support optimizer offload")
    if reason is None and zero.get("zenflow") is not None and ds.raw(zero.get("zenflow")) is not None and not ds.is_auto(zero.get("zenflow")):
        reason = ("ZenFlow", "zero_optimization.compute_grad_norm=false does not support ZenFlow")
    if reason is None and _bf16_zero1_optimizer(config, stage):
        reason = ("the BF16 optimizer (stage 1, bf16, fp32 gradient accumulation)",
                  "compute_grad_norm=false does not support ZeRO Stage 1 with BF16 parameters and FP32 gradient accumulation")
    if reason:
        what, raises = reason
        found = Finding(item.value.span, f"compute_grad_norm=false with {what}", related=related, fix=fix,
                        note=f"DeepSpeed raises '{raises}' at deepspeed.initialize (stage_1_and_2.py:212-218)")
        yield from versions.within([found], reading)


@rule("DS235", "nvme-offload-without-path", severity="error", target="deepspeed")
def nvme_offload_without_path(use, context):
    """NVMe offload without `nvme_path` at ZeRO-3 (a crash), or NVMe optimizer offload at ZeRO-1/2 (plain CPU offload).

    ## What it checks
    `offload_param` or `offload_optimizer` with `device: nvme` and no `nvme_path` (absent or
    null) at ZeRO stage 3: an error. `offload_optimizer.device: nvme` at stage 1 or 2: a
    warning, because those stages offload to CPU memory and never use the NVMe path.

    ## Why it matters
    Stage 3 raises at `deepspeed.initialize`: `"nvme_path" in DeepSpeed Config cannot be None if
    remote device is nvme` for parameters (zero/partition_parameters.py:1217-1230) and
    `TypeError: expected str, bytes or os.PathLike object, not NoneType` for optimizer states
    (zero/stage3.py:840). At stages 1 and 2 the ZeRO optimizer treats any offload device as CPU
    (zero/stage_1_and_2.py:220-222), so the run needs the CPU memory the author meant to save.

    ## Example
    ```json
    {"zero_optimization": {"stage": 3, "offload_param": {"device": "nvme"}}}
    ```
    Use instead:
    ```json
    {"zero_optimization": {"stage": 3, "offload_param": {"device": "nvme", "nvme_path": "/local_nvme"}}}
    ```

    ## Fix safety
    No fix: the path depends on the machine.
    """
    config = use.config
    stage = ds.zero_stage(config)
    zero = ds.zero_section(config)
    if zero is None or stage is ds.UNKNOWN:
        return
    for which in ("offload_param", "offload_optimizer"):
        section = zero.get(which)
        if not isinstance(section, Mapping) or ds.offload_device(config, which) != "nvme":
            continue
        device = section.get("device")
        if stage == 3:
            path = section.get("nvme_path")
            if path is None or (isinstance(path, Scalar) and path.value is None):
                crash = (
                    "'\"nvme_path\" in DeepSpeed Config cannot be None if remote device is nvme'"
                    if which == "offload_param"
                    else "'TypeError: expected str, bytes or os.PathLike object, not NoneType'"
                )
                yield Finding(device.span, f"{which} to nvme without nvme_path", note=f"ZeRO-3 raises {crash} at deepspeed.initialize")
        elif which == "offload_optimizer" and stage in (1, 2):
            yield Finding(
                device.span,
                f"offload_optimizer to nvme at ZeRO stage {stage} offloads to CPU memory",
                note="stages 1 and 2 offload optimizer states to CPU memory and ignore nvme_path (stage_1_and_2.py:220-222)",
                help="NVMe offload needs ZeRO stage 3",
                related=_stage_related(config),
                severity=Severity.WARNING,
            )


@rule("DS236", "partial-offload-below-stage3", severity="error", target="deepspeed", fixable=True)
def partial_offload_below_stage3(use, context):
    """`offload_optimizer.ratio` below 1 without ZeRO-3: DeepSpeed rejects partial offloading.

    ## What it checks
    `zero_optimization.offload_optimizer.ratio` < 1 (after coercion) with a ZeRO stage other than 3.

    ## Why it matters
    The ZeRO config validator asserts `Partial offloading only supported for ZeRO Stage 3.`
    when the config is parsed (deepspeed/runtime/zero/config.py:395-400), whatever the device.

    ## Example
    ```json
    {"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu", "ratio": 0.3}}}
    ```
    Use instead:
    ```json
    {"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}
    ```

    ## Fix safety
    Removing `ratio` is safe in the sense that the config cannot load with it; the run then
    offloads all optimizer states.
    """
    config = use.config
    stage = ds.zero_stage(config)
    zero = ds.zero_section(config)
    if zero is None or stage is ds.UNKNOWN or stage == 3:
        return
    section = zero.get("offload_optimizer")
    if not isinstance(section, Mapping):
        return
    item = section.entry("ratio")
    if item is None or ds.is_auto(item.value):
        return
    try:
        ratio = ds.lax_float(ds.raw(item.value))
    except ds.Invalid:
        return
    if ratio < 1.0:
        yield Finding(
            item.value.span,
            f"offload_optimizer.ratio {ds.show(item.value)} with ZeRO stage {stage}",
            note="DeepSpeed asserts 'Partial offloading only supported for ZeRO Stage 3.' when it parses the config",
            related=_stage_related(config),
            fix=Fix.safe("Remove ratio (offload everything)", remove_json_entry(section, item)),
        )


@rule("DS237", "optimizer-max-grad-norm", severity="error", target="deepspeed", fixable=True)
def optimizer_max_grad_norm(use, context):
    """`optimizer.params.max_grad_norm`: DeepSpeed refuses it; clipping is the top-level `gradient_clipping`.

    ## What it checks
    An `optimizer` block with a `type` whose `params` contain `max_grad_norm`, whatever its value.

    Severity: an error when the launch lets DeepSpeed build the block (the deepspeed launcher, HF
    Trainer, accelerate, ms-swift, LLaMA-Factory); a warning for a config no launch reaches and
    under Megatron-DeepSpeed, which passes its own optimizer and LR scheduler to
    `deepspeed.initialize` (megatron/training.py `setup_model_and_optimizer`), so the block is
    never built.

    ## Why it matters
    DeepSpeed warns when it parses the config (config.py:723-730) and raises
    `ValueError: 'max_grad_norm' is not supported as an optimizer parameter, please switch to
    using the deepspeed parameter 'gradient_clipping'` when it builds the optimizer
    (deepspeed/runtime/engine.py:2480-2484).

    ## Example
    ```json
    {"optimizer": {"type": "AdamW", "params": {"lr": 1e-4, "max_grad_norm": 1.0}}}
    ```
    Use instead:
    ```json
    {"optimizer": {"type": "AdamW", "params": {"lr": 1e-4}}, "gradient_clipping": 1.0}
    ```

    ## Fix safety
    Moving the value to `gradient_clipping` is safe when `gradient_clipping` is absent or holds
    the same value; when it holds another value, removing `max_grad_norm` is unsafe.
    """
    config = use.config
    optimizer = config.get("optimizer")
    if not isinstance(optimizer, Mapping):
        return
    type_item, _ = _optimizer_type(config)
    params = optimizer.get("params")
    if type_item is None or ds.raw(type_item.value) is None or not isinstance(params, Mapping):
        return
    item = params.entry("max_grad_norm")
    if item is None:
        return
    clip = config.entry("gradient_clipping")
    remove = remove_json_entry(params, item)
    value_text = item.value.span.text.strip()
    if clip is None:
        fix = Fix.safe(f"Move it to the top-level gradient_clipping ({value_text})", remove, ds.insert_json_entry(config, "gradient_clipping", value_text))
    elif ds.raw(clip.value) == ds.raw(item.value):
        fix = Fix.safe("Remove it (gradient_clipping already holds the same value)", remove)
    else:
        fix = Fix.unsafe(f"Remove it (keeps gradient_clipping = {ds.show(clip.value)})", remove)
    yield Finding(
        item.key_span,
        "optimizer.params.max_grad_norm is not an optimizer parameter",
        note="DeepSpeed raises \"'max_grad_norm' is not supported as an optimizer parameter, please switch to using the deepspeed "
        "parameter 'gradient_clipping'\" when it builds the optimizer (engine.py:2480-2484)",
        related=_related(clip),
        fix=fix,
        severity=_client_optimizer_severity(use),
    )


@rule("DS238", "unknown-optimizer", severity="error", target="deepspeed", fixable=True)
def unknown_optimizer(use, context):
    """`optimizer.type` names no optimizer DeepSpeed can build.

    ## What it checks
    `optimizer.type` must be a DeepSpeed optimizer name in any case (`Adam`, `AdamW`,
    `Adagrad`, `Lamb`, `Lion`, `Muon`, `MuAdam`, `MuAdamW`, `MuSGD`;
    deepspeed/runtime/config.py:63-66, 579-581) or, with the exact case, a `torch.optim` class
    (`SGD`, `RMSprop`, `Adamax`, ...; engine.py:1985-1986). The 1-bit optimizers (`OneBitAdam`,
    `OneBitLamb`, `ZeroOneAdam`) were removed in DeepSpeed 0.19.7 and are reported only for
    that version and later (`deepspeed-version`). An `optimizer` block with no `type` is
    reported as a warning: DeepSpeed then builds no optimizer at all.

    Severity: an error when the launch lets DeepSpeed build the block (the deepspeed launcher, HF
    Trainer, accelerate, ms-swift, LLaMA-Factory); a warning for a config no launch reaches and
    under Megatron-DeepSpeed, which passes its own optimizer and LR scheduler to
    `deepspeed.initialize` (megatron/training.py `setup_model_and_optimizer`), so the block is
    never built.

    ## Why it matters
    `AssertionError: OneBitAdam is not a supported DeepSpeed Optimizer` at
    `deepspeed.initialize` (engine.py:2016-2019); `sgd` fails the same way (torch's class is
    `SGD`).

    ## Example
    ```json
    {"optimizer": {"type": "sgd", "params": {"lr": 0.01}}}
    ```
    Use instead:
    ```json
    {"optimizer": {"type": "SGD", "params": {"lr": 0.01}}}
    ```

    ## Fix safety
    Correcting the case to the `torch.optim` class it names is safe.
    """
    config = use.config
    optimizer = config.get("optimizer")
    if not isinstance(optimizer, Mapping):
        return
    item = optimizer.entry("type")
    versions = dss.Versions(use, context)
    if item is None:
        if optimizer.entries:
            yield Finding(
                ds.opening(optimizer),
                "the optimizer block has no 'type'",
                note="DeepSpeed builds no optimizer from it and ignores its params silently",
                severity=Severity.WARNING,
            )
        return
    value = ds.raw(item.value)
    if value is None:
        return
    if not isinstance(value, str):
        yield Finding(item.value.span, f"optimizer.type is {ds.describe(value)}, not a name",
                      note="DeepSpeed calls .lower() on it and raises AttributeError when it parses the config")
        return
    lowered = value.lower()
    if lowered in DEEPSPEED_OPTIMIZERS or value in TORCH_OPTIMIZERS:
        return
    if lowered in ONEBIT_OPTIMIZERS:
        yield from versions.within([Finding(
            item.value.span,
            f"optimizer.type {value!r}: the 1-bit optimizers were removed in DeepSpeed {ONEBIT_REMOVED}",
            severity=_client_optimizer_severity(use),
            note=f"{versions.label} raises '{value} is not a supported DeepSpeed Optimizer' at deepspeed.initialize",
            help=f"use Adam/AdamW, or pin deepspeed<{ONEBIT_REMOVED}",
        )], versions.since(ONEBIT_REMOVED))
        return
    by_case = {name.lower(): name for name in TORCH_OPTIMIZERS}
    fix = None
    note = f"DeepSpeed raises '{value} is not a supported DeepSpeed Optimizer' at deepspeed.initialize"
    if lowered in by_case:
        fix = Fix.safe(f"Write '{by_case[lowered]}'", replace_value(item.value, by_case[lowered]))
        note += f"; torch's class is '{by_case[lowered]}' (torch.optim names are case-sensitive)"
    yield Finding(
        item.value.span,
        f"optimizer.type {value!r} is neither a DeepSpeed optimizer nor a torch.optim class",
        note=note,
        help=None if fix else "DeepSpeed's optimizers: adam, adamw, adagrad, lamb, lion, muon, ...",
        fix=fix,
        severity=_client_optimizer_severity(use),
    )


@rule("DS239", "scheduler-config", severity="error", target="deepspeed", fixable=True)
def scheduler_config(use, context):
    """An LR scheduler DeepSpeed cannot build: unknown `type`, missing `params`, wrong or missing arguments, bad `warmup_num_steps`.

    ## What it checks
    - `scheduler.type` must be a DeepSpeed scheduler (`LRRangeTest`, `OneCycle`, `WarmupLR`,
      `WarmupDecayLR`, `WarmupCosineLR`) or a `torch.optim.lr_scheduler` class, exact case
      (engine.py:1923-1932);
    - `scheduler.params` must be present (DeepSpeed calls `scheduler(optimizer, **params)`);
    - for DeepSpeed's schedulers, the parameter names (lr_schedules.py:352-880): e.g.
      `WarmupCosineLR` takes `warmup_min_ratio`/`cos_min_ratio`, not `warmup_min_lr`/`warmup_max_lr`,
      and `WarmupDecayLR`/`WarmupCosineLR` need `total_num_steps`;
    - `warmup_num_steps` must be a positive integer (not `0`, not `"auto"` left unfilled)
      since DeepSpeed 0.19.3 (lr_schedules.py:733-734, 874-875; earlier versions clamped it to
      2). `100.0` or `1e3` is an int to DeepSpeed's hjson loader but a float to the `json`
      module HF Trainer and accelerate use: an error under those consumers, a warning for a
      config no launch reaches;
    - `total_num_steps` below `warmup_num_steps` (a warning: DeepSpeed only logs it,
      lr_schedules.py:826-828), and `total_num_steps` of `0` or below: after warmup
      `WarmupDecayLR` multiplies the learning rate by `max(0, (total - step) / ...)` = 0 and
      `WarmupCosineLR` ends its cosine at once (lr_schedules.py:831-839, 917-925), so nothing is
      learned after warmup (a warning; under HF Trainer, ms-swift and LLaMA-Factory the Trainer
      stops instead, see `hf-config-mismatch`);
    - a `torch.optim.lr_scheduler` class (`StepLR`, ...) with ZeRO stage 1-3 or fp16/bf16: DeepSpeed
      builds it on its optimizer wrapper, which torch refuses: `TypeError: DeepSpeedZeroOptimizer
      is not an Optimizer` (engine.py `_scheduler_from_config`; found by the generated
      `deepspeed.initialize` oracle test). It works only with ZeRO off in fp32.

    `"auto"` values are skipped: HF Trainer and accelerate fill them.

    Severity: an error when the launch lets DeepSpeed build the block (the deepspeed launcher, HF
    Trainer, accelerate, ms-swift, LLaMA-Factory); a warning for a config no launch reaches and
    under Megatron-DeepSpeed, which passes its own optimizer and LR scheduler to
    `deepspeed.initialize` (megatron/training.py `setup_model_and_optimizer`), so the block is
    never built.

    ## Why it matters
    `DeepSpeed does not recognize LR scheduler CosineWarmup`, `WarmupCosineLR.__init__() got an
    unexpected keyword argument 'warmup_max_lr'`, `warmup_num_steps must be a positive integer,
    got 0`: all at `deepspeed.initialize`, after the model is loaded.

    ## Example
    ```json
    {"scheduler": {"type": "WarmupCosineLR", "params": {"warmup_max_lr": 1e-4, "warmup_num_steps": 0}}}
    ```
    Use instead:
    ```json
    {"scheduler": {"type": "WarmupCosineLR", "params": {"total_num_steps": 10000, "warmup_num_steps": 100}}}
    ```

    ## Fix safety
    Correcting the case of a scheduler name, and writing a whole-number `warmup_num_steps` such
    as `100.0` as `100`, are safe.
    """
    severity = _client_optimizer_severity(use)
    for finding in _scheduler_findings(use, context):
        if severity is not None and finding.severity is None:
            finding.severity = severity
        yield finding


_WRAPPER_CLASS = {"ZeRO stage 1/2 optimizer": "DeepSpeedZeroOptimizer", "ZeRO stage 3 optimizer": "DeepSpeedZeroOptimizer_Stage3",
                  "fp16/bf16 optimizer wrapper": "FP16_UnfusedOptimizer"}


def _optimizer_wrapper(config) -> str | None:
    """The DeepSpeed wrapper a config-built optimizer ends up in (engine.py `_configure_optimizer`), or None
    when the scheduler gets the torch optimizer itself (ZeRO off, fp32) or it cannot be told."""
    stage = ds.zero_stage(config)
    if stage in (1, 2):
        return "ZeRO stage 1/2 optimizer"
    if stage == 3:
        return "ZeRO stage 3 optimizer"
    if stage == 0 and (ds.precision_enabled(config, "fp16") is True or ds.precision_enabled(config, "bf16") is True):
        return "fp16/bf16 optimizer wrapper"
    return None


def _scheduler_findings(use, context):
    config = use.config
    scheduler = config.get("scheduler")
    if not isinstance(scheduler, Mapping):
        return
    item = scheduler.entry("type")
    if item is None or ds.raw(item.value) is None:
        return
    name = ds.raw(item.value)
    if not isinstance(name, str):
        yield Finding(item.value.span, f"scheduler.type is {ds.describe(name)}, not a name",
                      note="DeepSpeed looks it up by name and fails at deepspeed.initialize")
        return
    if name not in DEEPSPEED_SCHEDULERS and name not in TORCH_SCHEDULERS:
        known = {n.lower(): n for n in (*DEEPSPEED_SCHEDULERS, *TORCH_SCHEDULERS)}
        fix = None
        note = f"DeepSpeed raises 'DeepSpeed does not recognize LR scheduler {name}' at deepspeed.initialize"
        help = f"DeepSpeed's schedulers: {', '.join(DEEPSPEED_SCHEDULERS)}; or a torch.optim.lr_scheduler class"
        if name.lower() in known:
            fix = Fix.safe(f"Write '{known[name.lower()]}'", replace_value(item.value, known[name.lower()]))
            note += f"; the class is '{known[name.lower()]}' (names are case-sensitive)"
            help = None
        yield Finding(item.value.span, f"scheduler.type {name!r} is not a scheduler DeepSpeed knows", fix=fix, note=note, help=help)
        return
    params_entry = scheduler.entry("params")
    if params_entry is None or ds.raw(params_entry.value) is None:
        yield Finding(
            item.value.span,
            f"scheduler {name} has no params",
            note=f"DeepSpeed calls {name}(optimizer, **params) and raises TypeError ('argument after ** must be a mapping, not NoneType')",
            help='write "params": {}',
        )
        return
    params = params_entry.value
    if name not in DEEPSPEED_SCHEDULERS:
        wrapper = _optimizer_wrapper(config)
        if wrapper is not None:
            yield Finding(
                item.value.span,
                f"scheduler.type {name!r}, a torch scheduler, would get DeepSpeed's {wrapper}",
                note=f"the {wrapper} is not a torch Optimizer: 'TypeError: {_WRAPPER_CLASS[wrapper]} is not an Optimizer' at deepspeed.initialize",
                help=f"use one of DeepSpeed's schedulers ({', '.join(DEEPSPEED_SCHEDULERS)}) or build the scheduler in code",
            )
        return
    if not isinstance(params, Mapping):
        return
    required, optional = DEEPSPEED_SCHEDULERS[name]
    accepted = set(required) | set(optional)
    for param in params.entries:
        if param.key not in accepted:
            help = None
            if name == "WarmupCosineLR" and param.key in ("warmup_min_lr", "warmup_max_lr"):
                help = "WarmupCosineLR takes ratios of the optimizer's lr: warmup_min_ratio and cos_min_ratio"
            yield Finding(param.key_span, f"{name} has no parameter '{param.key}'", help=help,
                          note=f"DeepSpeed raises \"{name}.__init__() got an unexpected keyword argument '{param.key}'\" at deepspeed.initialize")
    for key in required:
        if key not in params:
            yield Finding(params_entry.key_span, f"{name} needs '{key}'",
                          note=f"DeepSpeed raises \"{name}.__init__() missing 1 required positional argument: '{key}'\" "
                          '(HF fills it only when it is present, as "auto")')
    versions = dss.Versions(use, context)
    validated = versions.since(_WARMUP_VALIDATED)
    warmup = params.entry("warmup_num_steps")
    if warmup is not None and "warmup_num_steps" in accepted and not ds.is_auto(warmup.value) and validated:
        value = ds.raw(warmup.value)
        bad = not isinstance(value, int) or value <= 0
        if bad:
            fix = None
            if isinstance(value, float) and value.is_integer() and value > 0:
                fix = Fix.safe(f"Write {int(value)}", replace_value(warmup.value, int(value)))
            elif isinstance(value, (int, float)) and not isinstance(value, bool) and value <= 0:
                fix = Fix.unsafe("Write 1", replace_value(warmup.value, 1))
            yield from versions.within([Finding(
                warmup.value.span,
                f"warmup_num_steps is {ds.show(warmup.value)}, not a positive integer",
                fix=fix,
                note=f"{versions.label} raises 'warmup_num_steps must be a positive integer, got {value}' "
                "(checked since 0.19.3; older versions clamped it to 2)",
            )], validated)
        elif ds.written_as_float(warmup.value) and use.consumer not in ("deepspeed", "megatron"):
            # hjson (DeepSpeed's loader for a path) reads 100.0 as 100; json (HF, accelerate) as 100.0.
            text = warmup.value.span.text.strip()
            who = ds.consumer_label(use) if ds.hf_like(use) else "HF Trainer and accelerate"
            yield from versions.within([Finding(
                warmup.value.span,
                f"warmup_num_steps is written {text}, a float to Python's json",
                note=f"{who} read the config with Python's json, which gives the float {float(text)}, and {versions.label} raises "
                "'warmup_num_steps must be a positive integer' (DeepSpeed's own hjson loader would read an int)",
                fix=Fix.safe(f"Write {value}", replace_value(warmup.value, value)),
                severity=None if ds.hf_like(use) else Severity.WARNING,
            )], validated)
    total = params.entry("total_num_steps")
    t = ds.raw(total.value) if total is not None and not ds.is_auto(total.value) else None
    if isinstance(t, (int, float)) and not isinstance(t, bool) and t <= 0 and use.consumer not in ("hf", "swift", "llamafactory"):
        # HF Trainer compares it with its training steps and stops (hf-config-mismatch says so).
        decay = "stays at warmup_min_lr" if name == "WarmupDecayLR" else "drops to cos_min_ratio × lr"
        yield Finding(total.value.span, f"total_num_steps is {ds.show(total.value)}: after warmup the learning rate {decay}",
                      note=f"{name} keeps it there for the rest of training (lr_schedules.py:831-839, 917-925)",
                      help="write the number of optimizer steps", severity=Severity.WARNING)
        return
    if total is not None and warmup is not None and not ds.is_auto(total.value) and not ds.is_auto(warmup.value):
        t, w = ds.raw(total.value), ds.raw(warmup.value)
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (t, w)) and t < w:
            yield Finding(total.value.span, f"total_num_steps {ds.show(total.value)} is less than warmup_num_steps {ds.show(warmup.value)}",
                          note="the schedule never leaves warmup (DeepSpeed only logs a warning)", related=_related(warmup), severity=Severity.WARNING)


@rule("DS240", "lamb-static-loss-scale", severity="error", target="deepspeed")
def lamb_static_loss_scale(use, context):
    """The Lamb optimizer with a static fp16 loss scale, which DeepSpeed refuses.

    ## What it checks
    `optimizer.type` Lamb (any case) with `fp16.loss_scale` other than 0. DeepSpeed tests
    `loss_scale == 0` whether or not fp16 is enabled.

    ## Why it matters
    `AssertionError: DeepSpeed lamb optimizer requires dynamic loss scaling` at
    `deepspeed.initialize` (deepspeed/runtime/engine.py:2021-2023, 1781-1782).

    ## Example
    ```json
    {"optimizer": {"type": "Lamb", "params": {"lr": 1e-3}}, "fp16": {"enabled": true, "loss_scale": 1024}}
    ```
    Use instead:
    ```json
    {"optimizer": {"type": "Lamb", "params": {"lr": 1e-3}}, "fp16": {"enabled": true, "loss_scale": 0}}
    ```

    ## Fix safety
    No fix: switching to dynamic loss scaling changes the training dynamics.
    """
    _, name = _optimizer_type(use.config)
    if name != "lamb":
        return
    fp16 = use.config.get("fp16")
    if not isinstance(fp16, Mapping):
        return
    scale = ds.strict_number(fp16, "loss_scale", 0.0)
    if scale is ds.UNKNOWN or scale == 0:
        return
    item = fp16.entry("loss_scale")
    yield Finding(item.value.span, f"static fp16.loss_scale {ds.show(item.value)} with the Lamb optimizer", related=_related(use.config.get("optimizer").entry("type")),
                  note="Lamb requires dynamic loss scaling (loss_scale 0): DeepSpeed asserts at deepspeed.initialize")


@rule("DS241", "fp16-and-bf16", severity="error", target="deepspeed")
def fp16_and_bf16(use, context):
    """Both `fp16.enabled` and `bf16.enabled` are true.

    ## What it checks
    `fp16.enabled` and `bf16.enabled` (or the old `bfloat16.enabled`, read when `bf16` is
    absent) both true after pydantic's boolean coercion (`"true"` and `1` count; `"auto"` does not).

    ## Why it matters
    `DeepSpeedConfig` asserts `bfloat16 and fp16 modes cannot be simultaneously enabled` when it
    parses the config (deepspeed/runtime/config.py:510-511); `zero.Init` under HF ZeRO-3 fails
    the same way (Snowflake-AI-Research/Arctic-Platform#78).

    ## Example
    ```json
    {"fp16": {"enabled": true}, "bf16": {"enabled": true}}
    ```
    Use instead:
    ```json
    {"fp16": {"enabled": false}, "bf16": {"enabled": true}}
    ```

    ## Fix safety
    No fix: only you know which precision the run needs.
    """
    config = use.config
    if ds.precision_enabled(config, "fp16") is True and ds.precision_enabled(config, "bf16") is True:
        bf16 = ds.precision_section(config, "bf16")
        fp16 = ds.precision_section(config, "fp16")
        yield Finding(
            bf16.entry("enabled").value.span,
            "fp16 and bf16 are both enabled",
            note="DeepSpeed asserts 'bfloat16 and fp16 modes cannot be simultaneously enabled' when it parses the config",
            related=[Related("fp16.enabled is true here", fp16.entry("enabled").value.span)],
        )


@rule("DS242", "master-weights-config", severity="error", target="deepspeed")
def master_weights_config(use, context):
    """Low-precision master weights or optimizer states where DeepSpeed cannot keep them.

    ## What it checks
    `fp16.fp16_master_weights_and_grads`, `bf16.bf16_master_weights_and_grads` and
    `bf16.bf16_optimizer_states`:

    - any of them with ZeRO stage 0, or `bf16_optimizer_states` without
      `bf16_master_weights_and_grads`: raises when the config is parsed
      (deepspeed/runtime/config.py:702-714);
    - `fp16_master_weights_and_grads`, or `bf16_master_weights_and_grads` without
      `bf16_optimizer_states`, with ZeRO 1-3 but no optimizer offload to cpu/nvme: raises at
      `deepspeed.initialize` (`Master weights feature requires ZeRO-N Offload with
      DeepSpeedCPUAdam`, zero/stage_1_and_2.py:331-333, zero/stage3.py:299-301);
    - fp16 and bf16 master weights together (base_optimizer.py:499-500).

    ## Why it matters
    Each is an assertion before training starts.

    ## Example
    ```json
    {"bf16": {"enabled": true, "bf16_master_weights_and_grads": true}, "zero_optimization": {"stage": 2}}
    ```
    Use instead:
    ```json
    {"bf16": {"enabled": true, "bf16_master_weights_and_grads": true},
     "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}
    ```

    ## Fix safety
    No fix: the choice between offloading and full-precision master weights is a memory decision.
    """
    config = use.config
    fp16 = ds.precision_section(config, "fp16")
    bf16 = ds.precision_section(config, "bf16")
    flags = {}
    for section, key in ((fp16, "fp16_master_weights_and_grads"), (bf16, "bf16_master_weights_and_grads"), (bf16, "bf16_optimizer_states")):
        if section is not None and ds.strict_bool(section, key, False) is True:
            flags[key] = section.entry(key)
    if not flags:
        return
    stage = ds.zero_stage(config)
    if stage is ds.UNKNOWN:
        return
    if stage == 0:
        for key, item in flags.items():
            yield Finding(item.value.span, f"{key} with ZeRO off (stage 0)", related=_stage_related(config),
                          note="DeepSpeed asserts '... is only supported with ZeRO Stage 1, 2, or 3.' when it parses the config")
        return
    if "bf16_optimizer_states" in flags and "bf16_master_weights_and_grads" not in flags:
        yield Finding(flags["bf16_optimizer_states"].value.span, "bf16_optimizer_states without bf16_master_weights_and_grads",
                      note="DeepSpeed asserts 'bf16_optimizer_states requires bf16_master_weights_and_grads to be enabled.' when it parses the config")
        return
    if "fp16_master_weights_and_grads" in flags and "bf16_master_weights_and_grads" in flags:
        yield Finding(flags["bf16_master_weights_and_grads"].value.span, "fp16 and bf16 master weights are both enabled",
                      note="DeepSpeed asserts 'fp16_master_weights_and_gradients and bf16_master_weights_and_gradients are mutually exclusive.'")
        return
    needs_offload = "fp16_master_weights_and_grads" in flags or ("bf16_master_weights_and_grads" in flags and "bf16_optimizer_states" not in flags)
    device = ds.offload_device(config, "offload_optimizer")
    if needs_offload and device == "none":
        key = "fp16_master_weights_and_grads" if "fp16_master_weights_and_grads" in flags else "bf16_master_weights_and_grads"
        yield Finding(
            flags[key].value.span,
            f"{key} without optimizer offload",
            note=f"ZeRO stage {stage} asserts 'Master weights feature requires ZeRO-{stage} Offload with DeepSpeedCPUAdam' at deepspeed.initialize",
            help="set offload_optimizer.device to cpu or nvme, with a DeepSpeed Adam optimizer",
        )


@rule("DS243", "legacy-stage1", severity="error", target="deepspeed")
def legacy_stage1(use, context):
    """`zero_optimization.legacy_stage1: true`: the old ZeRO-1 is gone and DeepSpeed refuses to start.

    ## What it checks
    `legacy_stage1` true (after boolean coercion) with ZeRO enabled (stage 1-3).

    ## Why it matters
    `Exception: The deprecated version of ZeRO Stage 1 is not supported in deepspeed >= 0.5.9`
    when the ZeRO optimizer is created (deepspeed/runtime/engine.py:2650-2653); the key is
    still accepted when the config is parsed.

    ## Example
    ```json
    {"zero_optimization": {"stage": 1, "legacy_stage1": true}}
    ```
    Use instead:
    ```json
    {"zero_optimization": {"stage": 1}}
    ```

    ## Fix safety
    No automatic fix (removing it switches to the current ZeRO-1, which is what DeepSpeed can run).
    """
    zero = ds.zero_section(use.config)
    stage = ds.zero_stage(use.config)
    if zero is None or stage is ds.UNKNOWN or stage == 0:
        return
    if ds.strict_bool(zero, "legacy_stage1", False) is True:
        yield Finding(zero.entry("legacy_stage1").value.span, "legacy_stage1 is true",
                      note="DeepSpeed raises 'The deprecated version of ZeRO Stage 1 is not supported in deepspeed >= 0.5.9' when it creates the ZeRO optimizer")


_DTYPE_OF = {
    "fp16": "fp16", "float16": "fp16", "half": "fp16", "torch.float16": "fp16",
    "bf16": "bf16", "bfloat16": "bf16", "torch.bfloat16": "bf16",
    "fp32": "fp32", "float32": "fp32", "float": "fp32", "torch.float32": "fp32",
    "int8": "int8", "torch.int8": "int8",
}


# The first release without the BFLOAT16 wrapper for bf16 + fp32 accumulation without ZeRO
# (engine.py _do_optimizer_sanity_check: the branch is in 0.18.4, gone in 0.18.5).
_BF16_FP32_ACCUM_REMOVED = "0.18.5"


@rule("DS244", "dtype-conflict", severity="error", target="deepspeed")
def dtype_conflict(use, context):
    """`data_types` asks for a dtype that contradicts the enabled fp16/bf16 mode.

    ## What it checks
    - `data_types.param_dtype` (DeepSpeed ≥ 0.19.2) different from the model dtype the
      `fp16`/`bf16` flags give (fp32 when neither is on): engine.py:1812-1829;
    - without ZeRO (stage 0), `data_types.grad_accum_dtype` different from that model dtype:
      `_do_optimizer_sanity_check` raises for every mix it has no wrapper for
      (engine.py:2313-2323).

    bf16 training with fp32 accumulation and no ZeRO is the one mix that depends on the
    release: up to DeepSpeed 0.18.4 `_do_optimizer_sanity_check` gives it the BFLOAT16 wrapper
    (`elif model_dtype == torch.bfloat16 and grad_accum_dtype == torch.float32: return BFLOAT16`,
    engine.py:1476-1477 in 0.18.4, 1220-1221 in 0.14.0); 0.18.5 removed that branch, so from
    then on it reaches the `NotImplementedError` (engine.py:2322-2323 in 0.19.8). It is an
    error when the repository's DeepSpeed pin allows only releases from 0.18.5 on, info naming
    them when the pin (or its absence) allows older ones too, and nothing when every allowed
    release accepts it.

    `"auto"` precision flags are not judged (HF/accelerate decide them).

    ## Why it matters
    `AssertionError: data_types.param_dtype='bf16' conflicts with the enabled precision mode` and
    `NotImplementedError: unsupported mix of model_dtype=torch.bfloat16 and
    grad_accum_dtype=torch.float32` at `deepspeed.initialize`.

    ## Example
    With DeepSpeed ≥ 0.18.5:
    ```json
    {"bf16": {"enabled": true}, "data_types": {"grad_accum_dtype": "fp32"}}
    ```
    Use instead (fp32 accumulation needs ZeRO there):
    ```json
    {"bf16": {"enabled": true}, "data_types": {"grad_accum_dtype": "fp32"}, "zero_optimization": {"stage": 1}}
    ```

    ## Fix safety
    No fix.
    """
    config = use.config
    data_types = config.get("data_types")
    if not isinstance(data_types, Mapping):
        return
    fp16 = ds.precision_enabled(config, "fp16")
    bf16 = ds.precision_enabled(config, "bf16")
    if fp16 is ds.UNKNOWN or bf16 is ds.UNKNOWN:
        return
    model = "fp16" if fp16 else "bf16" if bf16 else "fp32"
    versions = dss.Versions(use, context)
    param = data_types.entry("param_dtype")
    if param is not None:
        wanted = _DTYPE_OF.get(ds.raw(param.value)) if isinstance(ds.raw(param.value), str) else None
        if wanted is not None and wanted != model:
            found = Finding(param.value.span, f"data_types.param_dtype {ds.show(param.value)} conflicts with the enabled precision ({model})",
                            note="DeepSpeed asserts at deepspeed.initialize", help="set the matching fp16/bf16 'enabled' flag or omit param_dtype")
            yield from versions.within([found], versions.since(dss.introduced_in(("data_types", "param_dtype"))))
    accum = data_types.entry("grad_accum_dtype")
    if accum is not None and ds.zero_stage(config) == 0:
        wanted = _DTYPE_OF.get(ds.raw(accum.value)) if isinstance(ds.raw(accum.value), str) else None
        if wanted is not None and wanted != model:
            found = Finding(accum.value.span, f"data_types.grad_accum_dtype {ds.show(accum.value)} with {model} training and no ZeRO", related=_stage_related(config),
                            note="DeepSpeed raises 'NotImplementedError: unsupported mix of model_dtype and grad_accum_dtype' at deepspeed.initialize (engine.py:2323)",
                            help="use ZeRO stage 1 or higher, or drop grad_accum_dtype")
            failing = versions.since(_BF16_FP32_ACCUM_REMOVED) if (model, wanted) == ("bf16", "fp32") else versions.key
            yield from versions.within([found], failing)


@rule("DS245", "unmanaged-accumulation-unsupported", severity="error", target="deepspeed")
def unmanaged_accumulation_unsupported(use, context):
    """`managed_gradient_accumulation: false` with settings it does not support.

    ## What it checks
    `managed_gradient_accumulation` false (DeepSpeed ≥ 0.19.4; any falsy value) together with
    `overlap_comm` true at ZeRO stage 0 or 1, or with `compile.deepcompile: true`.

    ## Why it matters
    `AssertionError: managed_gradient_accumulation=False supports ZeRO overlap_comm only with ZeRO
    stage 2` (the check is `stage >= 2 or not overlap_comm`) or `... is not supported with
    DeepCompile` at `deepspeed.initialize` (deepspeed/runtime/engine.py:2030-2036). The
    pipeline-parallel case needs the model and is out of static reach.

    ## Example
    ```json
    {"managed_gradient_accumulation": false, "zero_optimization": {"stage": 1, "overlap_comm": true}}
    ```
    Use instead:
    ```json
    {"managed_gradient_accumulation": false, "zero_optimization": {"stage": 2, "overlap_comm": true}}
    ```

    ## Fix safety
    No fix.
    """
    config = use.config
    item = config.entry("managed_gradient_accumulation")
    versions = dss.Versions(use, context)
    reading = versions.since(dss.introduced_in(("managed_gradient_accumulation",)))
    if item is None or ds.is_auto(item.value) or bool(ds.raw(item.value)) or not reading:
        return
    stage = ds.zero_stage(config)
    zero = ds.zero_section(config)
    if stage in (0, 1) and zero is not None and ds.strict_bool(zero, "overlap_comm", False) is True:
        found = Finding(item.value.span, f"managed_gradient_accumulation=false with overlap_comm at ZeRO stage {stage}", related=_related(zero.entry("overlap_comm")),
                        note="DeepSpeed asserts 'managed_gradient_accumulation=False supports ZeRO overlap_comm only with ZeRO stage 2' at deepspeed.initialize")
        yield from versions.within([found], reading)
    compile_section = config.get("compile")
    if isinstance(compile_section, Mapping) and ds.strict_bool(compile_section, "deepcompile", False) is True:
        found = Finding(item.value.span, "managed_gradient_accumulation=false with DeepCompile", related=_related(compile_section.entry("deepcompile")),
                        note="DeepSpeed asserts 'managed_gradient_accumulation=False is not supported with DeepCompile'")
        yield from versions.within([found], reading)


@rule("DS246", "quantized-gradients-need-reduce-scatter", severity="error", target="deepspeed")
def quantized_gradients_need_reduce_scatter(use, context):
    """ZeRO++ quantized gradients with `reduce_scatter: false` at ZeRO-3.

    ## What it checks
    ZeRO stage 3 with `zero_quantized_gradients` true and `reduce_scatter` false.

    ## Why it matters
    quantized gradients use an all-to-all reduction that needs reduce-scatter:
    `when enable all_to_all_reduce, reduce_scatter should also be enabled` at
    `deepspeed.initialize` (deepspeed/runtime/zero/stage3.py:389-390).

    ## Example
    ```json
    {"zero_optimization": {"stage": 3, "zero_quantized_gradients": true, "reduce_scatter": false}}
    ```
    Use instead:
    ```json
    {"zero_optimization": {"stage": 3, "zero_quantized_gradients": true}}
    ```

    ## Fix safety
    No fix.
    """
    zero = ds.zero_section(use.config)
    if zero is None or ds.zero_stage(use.config) != 3:
        return
    if ds.strict_bool(zero, "zero_quantized_gradients", False) is True and ds.strict_bool(zero, "reduce_scatter", True) is False:
        yield Finding(zero.entry("reduce_scatter").value.span, "reduce_scatter is false with zero_quantized_gradients at ZeRO-3", related=_related(zero.entry("zero_quantized_gradients")),
                      note="DeepSpeed asserts 'when enable all_to_all_reduce, reduce_scatter should also be enabled' at deepspeed.initialize")


@rule("DS247", "tp-size-mismatch", severity="error", target="deepspeed")
def tp_size_mismatch(use, context):
    """`tensor_parallel.tp.tp_size` disagrees with `tensor_parallel.autotp_size`.

    ## What it checks
    With `tensor_parallel.autotp_size` > 1, `tensor_parallel.tp.tp_size` (or its long spelling
    `tensor_parallel.tensor_parallel.tp_size`) must be 1 or equal to `autotp_size`.

    ## Why it matters
    `ValueError: tensor_parallel.tp.tp_size (4) does not match tensor_parallel.autotp_size (2).`
    when AutoTP partitions the model at `deepspeed.initialize` (deepspeed/runtime/engine.py:1019-1022).

    ## Example
    ```json
    {"tensor_parallel": {"autotp_size": 2, "tp": {"tp_size": 4}}}
    ```
    Use instead:
    ```json
    {"tensor_parallel": {"autotp_size": 2}}
    ```

    ## Fix safety
    No fix.
    """
    section = use.config.get("tensor_parallel")
    if not isinstance(section, Mapping):
        return
    autotp = ds.strict_number(section, "autotp_size", 0, kind=ds.lax_int)
    if autotp is ds.UNKNOWN or autotp <= 1:
        return
    inner = section.get("tp") or section.get("tensor_parallel")
    if not isinstance(inner, Mapping):
        return
    tp = ds.strict_number(inner, "tp_size", 1, kind=ds.lax_int)
    if tp is ds.UNKNOWN or tp in (1, autotp):
        return
    yield Finding(inner.entry("tp_size").value.span, f"tp_size {tp} does not match tensor_parallel.autotp_size {autotp}", related=_related(section.entry("autotp_size")),
                  note="DeepSpeed raises ValueError at deepspeed.initialize (it must be 1 or equal)")


@rule("DS248", "offload-without-zero", severity="warning", target="deepspeed")
def offload_without_zero(use, context):
    """Optimizer offload to CPU with ZeRO disabled (stage 0).

    ## What it checks
    `offload_optimizer.device` `cpu` or `nvme` while the ZeRO stage is 0. A launch whose program is established as evaluation only (gradients off, no
    backward pass or optimizer in the files read, no save in the entry; `dslint explain` shows it) is not judged: it takes no optimizer step.

    ## Why it matters
    Without ZeRO nothing moves optimizer states off the GPU, yet DeepSpeed builds
    `DeepSpeedCPUAdam` from the config (engine.py:2384-2400). On a GPU the first step then
    fails with `CPUAdam param is on cuda:0 and must be 'cpu'` (deepspeed/ops/adam/cpu_adam.py:148;
    read from the source, not reproduced on a GPU).

    ## Example
    ```json
    {"optimizer": {"type": "AdamW"}, "zero_optimization": {"stage": 0, "offload_optimizer": {"device": "cpu"}}}
    ```
    Use instead:
    ```json
    {"optimizer": {"type": "AdamW"}, "zero_optimization": {"stage": 1, "offload_optimizer": {"device": "cpu"}}}
    ```

    ## Fix safety
    No fix: either raise the stage or drop the offload.
    """
    if ds.zero_stage(use.config) != 0 or not ds.trains(use):
        return
    zero = ds.zero_section(use.config)
    device = ds.offload_device(use.config, "offload_optimizer")
    if zero is None or device not in ("cpu", "nvme"):
        return
    item = zero.entry("offload_optimizer") or zero.entry("cpu_offload")
    yield Finding(item.key_span, f"optimizer offload to {device} with ZeRO stage 0", related=_stage_related(use.config),
                  note="nothing partitions or moves the optimizer states, and DeepSpeedCPUAdam fails on GPU parameters at the first step")


@rule("DS249", "adam-runs-adamw", severity="info", target="deepspeed")
def adam_runs_adamw(use, context):
    """`optimizer.type: Adam` with weight decay runs AdamW (decoupled weight decay) unless `adam_w_mode` is false.

    ## What it checks
    `optimizer.type` Adam (any case) with a non-zero (or `"auto"`) `params.weight_decay` and no
    `params.adam_w_mode`. A launch whose program is established as evaluation only (gradients off, no
    backward pass or optimizer in the files read, no save in the entry; `dslint explain` shows it) is not judged: it takes no optimizer step.

    ## Why it matters
    DeepSpeed builds its Adam with `adam_w_mode=True` by default (deepspeed/runtime/config.py:71-72,
    engine.py:2487-2491): the weight decay is decoupled, as in AdamW, not the L2 penalty of
    `torch.optim.Adam`. Results differ from a run that used torch's Adam with the same numbers.

    ## Example
    ```json
    {"optimizer": {"type": "Adam", "params": {"lr": 1e-4, "weight_decay": 0.1}}}
    ```
    Use instead (say what you mean):
    ```json
    {"optimizer": {"type": "AdamW", "params": {"lr": 1e-4, "weight_decay": 0.1}}}
    ```

    ## Fix safety
    No fix.
    """
    item, name = _optimizer_type(use.config)
    if name != "adam" or not ds.trains(use):
        return
    params = use.config.get("optimizer").get("params")
    if not isinstance(params, Mapping) or "adam_w_mode" in params or "torch_adam" in params:
        return
    decay = params.get("weight_decay")
    if decay is None:
        return
    value = ds.raw(decay)
    if value != "auto" and not (isinstance(value, (int, float)) and not isinstance(value, bool) and value != 0):
        return
    yield Finding(item.value.span, "optimizer.type Adam runs as AdamW (adam_w_mode=true)",
                  note="DeepSpeed applies the weight decay decoupled, as AdamW does",
                  help='write "AdamW", or set params.adam_w_mode to false for L2-style Adam')
