"""DS230 offload-with-client-optimizer."""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix, Related, Severity
from dslint.documents.model import Mapping
from dslint.documents.edits import replace_value
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules.deepspeed_engine._common import initialize_calls, optimizer_type, program_read, truthy


@rule("DS230", "offload-with-client-optimizer", severity="error", target="deepspeed", fix="unsafe")
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
    - A plain `deepspeed.initialize` program that dslint read and that passes `optimizer=` to it
      (`deepspeed.initialize(model=m, optimizer=opt, config=...)`): an error, citing the call;
      nothing when the files read use `DeepSpeedCPUAdam`/`DeepSpeedCPULion`/`DeepSpeedCPUAdagrad`
      (Megatron-DeepSpeed builds one for `--cpu-optimizer`), which DeepSpeed accepts.
    - Any other config: nothing. Whether the training code passes an optimizer of its own is what
      decides, and a config no launch reaches, or a launch whose program was not read or passes
      none, does not say it.

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
    offload = _offload_without_optimizer(use)
    if offload is None:
        return
    device, force = offload
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
        why = _why(use)
    else:
        passed = _client_optimizer(use)
        if passed is None:
            return  # whether the training code passes an optimizer of its own is not known: nothing to say
        why = f"{passed.describe()} passes the program's own optimizer"
    fix, alternatives = _fixes(use, force)
    yield Finding(
        anchor_item.key_span,
        f"optimizer offload to {device} with no DeepSpeed 'optimizer' block",
        note=f"{why}; DeepSpeed then raises 'ZeRORuntimeException: You are using ZeRO-Offload with a client provided optimizer' "
        "(engine.py:2339-2346)",
        fix=fix,
        alternatives=alternatives,
        # "auto" suggests HF, it does not establish it; an accelerate config naming the file says
        # who reads it, not whether the program passes an optimizer; a program read that passes one fails
        severity=None if not hf or (ds.hf_like(use) and use.extra.get("named_by") is None) else Severity.WARNING,
    )


def _offload_without_optimizer(use):
    """(the offload device, the `zero_force_ds_cpu_optimizer` node) when optimizer offload meets a
    config with no DeepSpeed optimizer and the check is not switched off; None otherwise."""
    if use.consumer == "megatron" or not ds.trains(use):
        return None  # an evaluation passes no optimizer: DeepSpeed builds none and checks none
    device = ds.offload_device(use.config, "offload_optimizer")
    if device not in ("cpu", "nvme"):
        return None
    type_item, _ = optimizer_type(use.config)
    if type_item is not None and ds.raw(type_item.value) is not None:
        return None
    force = use.config.get("zero_force_ds_cpu_optimizer")
    if force is not None and truthy(force) is not True:
        return None
    return device, force


def _why(use) -> str:
    """When the HF Trainer's or accelerate's optimizer reaches DeepSpeed unconverted."""
    return (
        f"{ds.consumer_label(use) or 'HF Trainer or accelerate'} passes its own torch optimizer, and accelerate converts it "
        "to DeepSpeedCPUAdam only "
        "when it sees zero_optimization.offload_optimizer, not the deprecated cpu_offload"
    )


# The client optimizers ZeRO-Offload accepts (engine.py `_configure_zero_optimizer` checks for them).
_DS_CPU_OPTIMIZERS = frozenset({"DeepSpeedCPUAdam", "DeepSpeedCPULion", "DeepSpeedCPUAdagrad"})


def _client_optimizer(use):
    """The program's ``deepspeed.initialize(..., optimizer=...)`` call (its Evidence) when the
    launch's program was read and passes one; None when it passes none or that is not known."""
    facts = program_read(use)
    if facts is None:
        return None
    if any(name.rsplit(".", 1)[-1] in _DS_CPU_OPTIMIZERS for name in facts.uses):
        return None  # it may hand over DeepSpeed's own CPU optimizer (Megatron's --cpu-optimizer), which DeepSpeed takes
    return next((call.evidence for call in initialize_calls(facts) if call.keywords.get("optimizer") is not None), None)


def _fixes(use, force):
    """(the fix, its alternatives): a DeepSpeed optimizer block where "auto" is filled in, or
    `zero_force_ds_cpu_optimizer: false`."""
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
    return fix, alternatives


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
    from dslint.rules._trainer_args import TrainingArgs
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
