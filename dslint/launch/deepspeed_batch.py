"""DeepSpeed's own batch arithmetic: how it derives the batch values a config does not give, and its check.

Shared by the batch rules and ``dslint explain`` (one derivation, so the two never disagree).
"""

from __future__ import annotations

from dataclasses import dataclass


def format_number(value) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if abs(value) < 1e15 else repr(value)
    return repr(value) if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class BatchFailure:
    """Why DeepSpeed's batch check fails: a kind for the rules, DeepSpeed's own words for people."""

    kind: str  # "missing", "division", "not-positive" or "mismatch"
    text: str

    def __str__(self) -> str:
        return self.text


def derive(tbs, mbs, gas, world):
    """DeepSpeed's derivation and assertion (deepspeed/runtime/config.py:590-656).

    Returns (tbs, mbs, gas, failure) where failure is None or DeepSpeed's own message.
    Values absent from the config are None. Arithmetic is Python's, as in DeepSpeed
    (floor division, floats stay floats).
    """
    try:
        if tbs is not None and mbs is not None and gas is not None:
            pass
        elif tbs is not None and mbs is not None:
            gas = tbs // mbs // world
        elif tbs is not None and gas is not None:
            mbs = tbs // world // gas
        elif mbs is not None and gas is not None:
            tbs = mbs * gas * world
        elif tbs is not None:
            gas, mbs = 1, tbs // world
        elif mbs is not None:
            tbs, gas = mbs * world, 1
        else:
            return tbs, mbs, gas, BatchFailure("missing", "Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided")
    except ZeroDivisionError:
        return tbs, mbs, gas, BatchFailure("division", "division by zero while deriving the batch values (ZeroDivisionError)")
    if not tbs > 0:
        return tbs, mbs, gas, BatchFailure("not-positive", f"Train batch size: {format_number(tbs)} has to be greater than 0")
    if not mbs > 0:
        return tbs, mbs, gas, BatchFailure("not-positive", f"Micro batch size per gpu: {format_number(mbs)} has to be greater than 0")
    if not gas > 0:
        return tbs, mbs, gas, BatchFailure("not-positive", f"Gradient accumulation steps: {format_number(gas)} has to be greater than 0")
    if tbs != mbs * gas * world:
        return tbs, mbs, gas, BatchFailure("mismatch", f"{format_number(tbs)} != {format_number(mbs)} * {format_number(gas)} * {format_number(world)}")
    return tbs, mbs, gas, None
