"""DS239 scheduler-config."""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix, Severity
from dslint.documents.model import Mapping
from dslint.documents.edits import replace_value
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules import _deepspeed_schema as dss
from dslint.rules.deepspeed_engine._common import NOT_BUILT, client_optimizer_severity, related_to
from dslint.rules.deepspeed_engine._names import DEEPSPEED_SCHEDULERS, TORCH_SCHEDULERS


_WARMUP_VALIDATED = "0.19.3"  # lr_schedules.py:733-734, 874-875 (deepspeedai/DeepSpeed PR #8126)


@rule("DS239", "scheduler-config", severity="error", target="deepspeed", fix="safe or unsafe")
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

    Only where DeepSpeed builds the block, as for optimizer-max-grad-norm (DS237): under HF
    Trainer, accelerate, ms-swift and LLaMA-Factory, or a plain `deepspeed.initialize` program read
    that passes no `optimizer=` (a warning where the reader is only assumed or `"auto"` says it);
    never under Megatron-DeepSpeed or where the reader is not known.

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
    as `100.0` as `100`, are safe. Writing 1 for a `warmup_num_steps` of 0 or below is unsafe: the
    releases that raise on it leave which warmup was meant to you (older ones clamped it to 2).
    """
    severity = client_optimizer_severity(use)
    if severity == NOT_BUILT:
        return  # the code passes its own optimizer and scheduler, or may: DeepSpeed then never builds this one
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
    unknown = _unknown_type(item, name)
    if unknown is not None:
        yield unknown
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
    if name not in DEEPSPEED_SCHEDULERS:
        yield from _torch_scheduler_on_wrapper(config, item, name)
        return
    if not isinstance(params_entry.value, Mapping):
        return
    yield from _parameter_names(name, params_entry)
    yield from _step_counts(use, context, name, params_entry.value)


def _unknown_type(item, name) -> Finding | None:
    """`scheduler.type` that names nothing DeepSpeed or torch can build (a safe fix when only the case is wrong)."""
    if not isinstance(name, str):
        return Finding(item.value.span, f"scheduler.type is {ds.describe(name)}, not a name",
                       note="DeepSpeed looks it up by name and fails at deepspeed.initialize")
    if name in DEEPSPEED_SCHEDULERS or name in TORCH_SCHEDULERS:
        return None
    known = {n.lower(): n for n in (*DEEPSPEED_SCHEDULERS, *TORCH_SCHEDULERS)}
    fix = None
    note = f"DeepSpeed raises 'DeepSpeed does not recognize LR scheduler {name}' at deepspeed.initialize"
    help = f"DeepSpeed's schedulers: {', '.join(DEEPSPEED_SCHEDULERS)}; or a torch.optim.lr_scheduler class"
    if name.lower() in known:
        fix = Fix.safe(f"Write '{known[name.lower()]}'", replace_value(item.value, known[name.lower()]))
        note += f"; the class is '{known[name.lower()]}' (names are case-sensitive)"
        help = None
    return Finding(item.value.span, f"scheduler.type {name!r} is not a scheduler DeepSpeed knows", fix=fix, note=note, help=help)


def _torch_scheduler_on_wrapper(config, item, name):
    """A torch scheduler handed DeepSpeed's optimizer wrapper instead of a torch Optimizer."""
    wrapper = _optimizer_wrapper(config)
    if wrapper is not None:
        yield Finding(
            item.value.span,
            f"scheduler.type {name!r}, a torch scheduler, would get DeepSpeed's {wrapper}",
            note=f"the {wrapper} is not a torch Optimizer: 'TypeError: {_WRAPPER_CLASS[wrapper]} is not an Optimizer' at deepspeed.initialize",
            help=f"use one of DeepSpeed's schedulers ({', '.join(DEEPSPEED_SCHEDULERS)}) or build the scheduler in code",
        )


def _parameter_names(name, params_entry):
    """Parameters a DeepSpeed scheduler's constructor does not take, and required ones missing."""
    params = params_entry.value
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


def _step_counts(use, context, name, params):
    """`warmup_num_steps` DeepSpeed rejects, and a `total_num_steps` that ends or never leaves warmup."""
    required, optional = DEEPSPEED_SCHEDULERS[name]
    warmup = params.entry("warmup_num_steps")
    if warmup is not None and "warmup_num_steps" in (set(required) | set(optional)) and not ds.is_auto(warmup.value):
        yield from _warmup_steps(use, context, warmup)
    yield from _total_steps(use, name, params.entry("total_num_steps"), warmup)


def _warmup_steps(use, context, warmup):
    """`warmup_num_steps` that is not a positive integer, or a whole number Python's json reads as a float."""
    versions = dss.Versions(use, context)
    validated = versions.since(_WARMUP_VALIDATED)
    if not validated:
        return
    value = ds.raw(warmup.value)
    if not isinstance(value, int) or value <= 0:
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


def _total_steps(use, name, total, warmup):
    """`total_num_steps` at or below 0 (after warmup the learning rate stays down), or below `warmup_num_steps`."""
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
                          note="the schedule never leaves warmup (DeepSpeed only logs a warning)", related=related_to(warmup), severity=Severity.WARNING)
