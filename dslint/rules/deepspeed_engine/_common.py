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


def client_optimizer_severity(use):
    """DeepSpeed builds the config's optimizer/scheduler only when the code passes none: HF Trainer
    and accelerate never do when the block exists (DummyOptim), the deepspeed launcher's scripts
    usually do not, Megatron-DeepSpeed always passes its own. An error only for the former, and
    only when the launch's program was read (a consumer guessed from the flags is a guess)."""
    program = getattr(use.launch, "program", None)
    if program is not None and not program.established:
        return Severity.WARNING
    return None if use.consumer in ds.HF_LIKE + ("deepspeed",) else Severity.WARNING


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
