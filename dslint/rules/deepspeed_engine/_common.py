"""What the DeepSpeed engine rules (DS230-DS249) share: the related spans they cite, the optimizer a config names, who builds it, and how DeepSpeed reads a flag."""

from __future__ import annotations

from dslint.diagnostics import Related, Severity
from dslint.documents.model import Mapping
from dslint.rules import _deepspeed as ds
from dslint.rules.deepspeed_engine._names import DEEPSPEED_OPTIMIZERS


def related_to(item, label=None):
    if item is None:
        return []
    return [Related(label or f"{item.key} = {ds.show(item.value)}", item.value.span)]


def stage_related(config: Mapping):
    zero = ds.zero_section(config)
    item = zero.entry("stage") if zero is not None else None
    return related_to(item, f"ZeRO stage {ds.show(item.value)}" if item else None)


def optimizer_type(config: Mapping):
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


NOT_BUILT = "not built"  # client_optimizer_severity: the code passes its own, or whether it does is not known


def program_read(use):
    """What the static read of the launch's program shows (pyprogram.Program), when the program is
    established; None for a config no launch reaches, or a program not read or not recognised."""
    program = getattr(use.launch, "program", None) if use.launch is not None else None
    return program.facts if program is not None and program.established else None


def initialize_calls(facts) -> list:
    """The program's ``deepspeed.initialize(...)`` calls, with their keywords."""
    return [call for call in facts.calls if call.callee == "deepspeed.initialize"]


def client_optimizer_severity(use):
    """The severity of a finding about the config's optimizer/scheduler blocks, which DeepSpeed
    builds only when the code passes none (engine.py `_configure_optimizer`); NOT_BUILT when that
    is not shown, and the finding is then not a fact about the launch.

    - HF Trainer and accelerate never pass one when the block exists (DummyOptim): built. Their
      program read: the rule's own severity; only assumed from the flags: a warning.
    - A plain `deepspeed.initialize` program read: built when no call passes `optimizer=` (and
      none spreads `**kwargs`); one that passes an optimizer keeps the block unbuilt.
    - Megatron-DeepSpeed always passes its own (megatron/training.py `setup_model_and_optimizer`).
    - A config no launch reaches: built where an accelerate config names it (accelerate reads
      it), or its `"auto"` values say HF Trainer or accelerate read it (nothing else fills them:
      a warning); otherwise not known."""
    launch = use.launch
    if launch is None:  # an accelerate config names it (accelerate reads it), or "auto" says HF/accelerate
        if use.consumer in ds.HF_LIKE:
            return None
        return Severity.WARNING if use.consumer is None and ds.has_auto(use.config) else NOT_BUILT
    program = getattr(launch, "program", None)
    if use.consumer in ds.HF_LIKE:
        return None if program is not None and program.established else Severity.WARNING
    facts = program_read(use)
    if use.consumer != "deepspeed" or facts is None:
        return NOT_BUILT
    calls = initialize_calls(facts)
    if not calls or any(call.spread or call.keywords.get("optimizer") is not None for call in calls):
        return NOT_BUILT
    return None


def truthy(node) -> bool | None:
    """Python truthiness of a value DeepSpeed reads with dict.get (None for "auto")."""
    if node is None:
        return None
    if ds.is_auto(node):
        return None
    return bool(ds.raw(node))


def bf16_zero1_optimizer(config: Mapping, stage) -> bool:
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
