"""Facts: what several rules need to know about a target, computed once per target per run.

A rule declares the facts it needs (``@rule(..., facts=("npu_target",))``, the names in
``dslint.rule.FACTS``); the engine computes each here, once per target and run whichever rules
ask, and hands it to the rule as a keyword argument. Whether a launch runs on an Ascend NPU, the
configured hardware, a verl launch's composed Hydra config: each is worked out once, in
one place, instead of in every rule body or in a cache that outlives the run.

The memo is the run's (``Context.facts``, emptied by the engine when a run starts), keyed by the
fact's name and the target's identity; an entry keeps its target, so an identity is never reused
while the entry lives. A fact of a DeepSpeed use (a ``deepspeed`` target) is that of the launch
that reaches the config, memoised under the launch, so launch rules and DeepSpeed rules share it.

The modules a fact reads (the launch's target detection, the framework readers) are imported when
the fact is first computed: a run on one DeepSpeed JSON imports none of them.
"""

from __future__ import annotations

from typing import Any, Callable

from dslint.rule import Context

REGISTRY: dict[str, Callable[[Any, Context], Any]] = {}


def _fact(function: Callable[[Any, Context], Any]) -> Callable[[Any, Context], Any]:
    REGISTRY[function.__name__] = function
    return function


def value(name: str, target: Any, context: Context) -> Any:
    """The fact ``name`` of ``target``, computed on the first request of this run."""
    key = (name, id(target))
    hit = context.facts.get(key)
    if hit is not None and hit[0] is target:
        return hit[1]
    found = REGISTRY[name](target, context)
    context.facts[key] = (target, found)
    return found


def values(names: tuple[str, ...], target: Any, context: Context) -> dict[str, Any]:
    """The declared facts of a rule for one target: its check's keyword arguments."""
    out = {}
    memo = context.facts
    for name in names:  # ``value`` inlined for the memo's hits: asked for every rule on every launch
        hit = memo.get((name, id(target)))
        out[name] = hit[1] if hit is not None and hit[0] is target else value(name, target, context)
    return out


def _plan(target):
    """The launch plan a target is about: a plan itself, or the launch that reaches a DeepSpeed use."""
    if hasattr(target, "program"):
        return target
    return getattr(target, "launch", None)


@_fact
def launch_target(target, context: Context):
    from dslint.launch import target as targets

    plan = _plan(target)
    if plan is not target and plan is not None:
        return value("launch_target", plan, context)
    return targets.launch_target(plan, context.settings) if plan is not None else None


@_fact
def npu_target(target, context: Context):
    from dslint.launch import target as targets

    plan = _plan(target)
    if plan is None:  # a DeepSpeed config no launch reaches, or a file
        document = getattr(target, "document", None) or (target if hasattr(target, "source") else None)
        return targets.npu_document_target(document, context.settings)
    if plan is not target:
        return value("npu_target", plan, context)
    found = value("launch_target", plan, context)
    return found if found is not None and found.npu else None


@_fact
def hardware(target, context: Context):
    from dslint.launch import target as targets

    plan = _plan(target)
    if plan is not target and plan is not None:
        return value("hardware", plan, context)
    return targets.hardware(plan, context.settings)


def _launch_fact(build: Callable[[Any, Context], Any]) -> Callable[[Any, Context], Any]:
    """A fact of launch plans only (None for any other target), named after ``build``."""

    def fact(target, context: Context):
        plan = _plan(target)
        if plan is None:
            return None
        if plan is not target:
            return value(build.__name__, plan, context)
        return build(plan, context)

    fact.__name__ = build.__name__
    fact.__doc__ = build.__doc__
    return _fact(fact)


@_launch_fact
def framework_batch(plan, context: Context):
    from dslint.frameworks import batch_of

    return batch_of(plan, context.settings)


@_launch_fact
def verl_config(plan, context: Context):
    from dslint.frameworks import verl

    return verl.config(plan)


@_launch_fact
def verl_ppo(plan, context: Context):
    from dslint.frameworks import verl

    return verl.ppo(plan, value("verl_config", plan, context))


@_launch_fact
def verl_sft(plan, context: Context):
    from dslint.frameworks import verl

    return verl.sft(plan, value("verl_config", plan, context))


@_launch_fact
def trl_trainer(plan, context: Context):
    from dslint.frameworks import grpo

    return grpo.trainer(plan)


@_launch_fact
def openrlhf_batch(plan, context: Context):
    from dslint.frameworks import openrlhf

    return openrlhf.batch(plan)


__all__ = ["REGISTRY", "value", "values"]
