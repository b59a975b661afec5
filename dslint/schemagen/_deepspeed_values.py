"""The values DeepSpeed's code accepts for keys it reads unchecked (``x-dslint-values``), read
from deepspeed's own constants and functions.
"""

from __future__ import annotations

from typing import Any, Callable

from dslint.schemagen._deepspeed_common import find_line, import_attr
from dslint.schemagen._json import jsonable



def _dtype_strings() -> list[str]:
    dtype_enum = import_attr("deepspeed.runtime.config", "DtypeEnum")
    out: list[str] = []
    for member in dtype_enum or []:
        for value in getattr(member, "_all_values", ()):
            if isinstance(value, str) and value not in out:
                out.append(value)
    return out


def _accepted(fn: Callable[[Any], Any], candidates: list[str]) -> list[str]:
    ok: list[str] = []
    for value in candidates:
        try:
            fn(value)
        except Exception:  # noqa: BLE001
            continue
        if value not in ok:
            ok.append(value)
    return ok


def _comm_dtype_values(key: str) -> dict:
    fn = import_attr("deepspeed.runtime.config", "get_communication_data_type")
    if fn is None:
        return {}
    lower = _accepted(lambda v: fn({key: v}, key, None), [s.lower() for s in _dtype_strings()])
    upper_ok = bool(lower) and bool(_accepted(lambda v: fn({key: v}, key, None), [lower[0].upper()]))
    return {"x-dslint-values": lower, "x-dslint-case-insensitive": upper_ok,
            "x-dslint-values-source": find_line("deepspeed.runtime.config", "def get_communication_data_type")}


def _const_values(modname: str, attr: str, case_insensitive: bool, needle: str | None = None) -> dict:
    values = import_attr(modname, attr)
    if not values:
        return {}
    out = {"x-dslint-values": [jsonable(v) for v in values], "x-dslint-case-insensitive": case_insensitive}
    src = find_line(modname, needle or attr)
    if src:
        out["x-dslint-values-source"] = src
    return out


def _dtype_values(note: str) -> dict:
    values = _dtype_strings()
    if not values:
        return {}
    return {"x-dslint-values": values, "x-dslint-case-insensitive": False, "x-dslint-checked-at": note,
            "x-dslint-values-source": find_line("deepspeed.runtime.config", "class DtypeEnum")}


VALIDATED_KEYS: dict[str, Callable[[], dict]] = {
    "communication_data_type": lambda: _comm_dtype_values("communication_data_type"),
    "seq_parallel_communication_data_type": lambda: _comm_dtype_values("seq_parallel_communication_data_type"),
    "gradient_allreduce_op": lambda: _const_values(
        "deepspeed.runtime.constants", "GRADIENT_ALLREDUCE_OP_SUPPORTED", True),
    "checkpoint.tag_validation": lambda: _const_values(
        "deepspeed.runtime.constants", "CHECKPOINT_TAG_VALIDATION_MODES", True),
    "checkpoint.writer.type": lambda: _const_values(
        "deepspeed.runtime.model_checkpointing.constants", "CHECKPOINT_WRITER_TYPES", True),
    "checkpoint.writer.data_parallel": lambda: _const_values(
        "deepspeed.runtime.model_checkpointing.constants", "CHECKPOINT_DATA_PARALLEL_UNITS", True),
    "checkpoint.parallel_write.pipeline_stage": lambda: {
        "x-dslint-values": [True, False], "x-dslint-case-insensitive": False,
        "x-dslint-values-source": find_line("deepspeed.runtime.config", "if par_write_pipeline in [True, False]")},
    "torch_autocast.dtype": lambda: _dtype_values("parse"),
    "data_types.grad_accum_dtype": lambda: _dtype_values("initialize"),
    "data_types.param_dtype": lambda: _dtype_values("initialize"),
    "data_types.buffer_dtype": lambda: _dtype_values("initialize"),
    "data_types.keep_in_fp32_modules": lambda: {
        "anyOf": [{"const": "auto"}, {"type": "array", "items": {"type": "string"}}],
        "x-dslint-values-source": find_line("deepspeed.runtime.config", "KEEP_IN_FP32_MODULES_DEFAULT and not")},
}

