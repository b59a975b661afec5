"""DS711: `load_best_model_at_end` with evaluation and save schedules that cannot line up."""

from __future__ import annotations

from dslint.diagnostics import Finding
from dslint.rule import rule
from dslint.rules.training_args._common import arg_related, truthy
from dslint.rules.training_args._context import TrainingContext, training_context


# The arguments the check reads: a program that assigns one after parsing decides it itself.
_SCHEDULE = ("load_best_model_at_end", "save_strategy", "eval_strategy", "evaluation_strategy", "save_steps",
             "eval_steps", "logging_steps")


@rule("DS711", "load-best-strategy-mismatch", severity="error", target="launch", consumers=("hf", "swift", "llamafactory", "megatron"))
def load_best_strategy_mismatch(plan, context):
    """`load_best_model_at_end` with evaluation and save schedules that cannot line up.

    ## What it checks
    `TrainingArguments.__post_init__` (transformers training_args.py) requires, with
    `load_best_model_at_end` and `save_strategy` other than `best`:
    - `eval_strategy == save_strategy`: `--load_best_model_at_end requires the save and eval
      strategy to match`;
    - with `steps`, `save_steps` a round multiple of `eval_steps`: `... requires the saving steps
      to be a round multiple of the evaluation steps`.
    Values not given take the consumer's defaults from the schema (transformers: `eval_strategy`
    `no`, `save_strategy` `steps`, `save_steps` 500; ms-swift sets `eval_strategy` to
    `save_strategy` and `eval_steps` to `save_steps` when they are not given).

    It speaks only where the reader is established (a launch of a known console, a program read
    that builds the Trainer, or a config whose own keys name LLaMA-Factory or ms-swift), and
    not when the program assigns one of these arguments itself after parsing (`args.save_steps =
    args.eval_steps * 5`, read statically): the values in the file are then not the ones used.

    ## Why it matters
    The check runs while the arguments are parsed, so the job exits right after its queue wait
    instead of training. A default is enough to trip it: under transformers, `eval_strategy:
    steps` and `eval_steps: 300` with no `save_steps` meet the default 500, which is not a
    multiple of 300.

    ## Example
    ```yaml
    load_best_model_at_end: true
    eval_strategy: steps
    eval_steps: 300
    save_steps: 500
    ```
    Use instead: `save_steps: 600`.
    """
    ctx = training_context(plan, context)
    if not ctx.active:
        return
    best = plan.arg("load_best_model_at_end")
    if best is None or not truthy(best.value) or ctx.overwritten(*_SCHEDULE) is not None:
        return

    strategies = _strategies(ctx)
    if strategies is None:
        return
    save, save_arg, evals, eval_arg = strategies
    span = best.name_span or best.span or plan.span
    related = [r for r in (arg_related(a) for a in (save_arg, eval_arg) if a is not None)]
    if str(evals) != str(save):
        yield Finding(span,
                      f"load_best_model_at_end with eval_strategy {evals!s} and save_strategy {save!s}"
                      f"{' (defaults)' if not related else ''}", related=related + [ctx.version_related()],
                      note="TrainingArguments raises '--load_best_model_at_end requires the save and eval strategy to match'")
        return
    if str(evals) == "steps":
        yield from _steps_mismatch(ctx, span)


def _value(ctx: TrainingContext, name: str, *aliases: str):
    """(value, argument) as the launch gives it, else (the consumer's default, None)."""
    arg = ctx.plan.arg(name, *aliases)
    if arg is not None:
        return arg.value, arg
    return ctx.default(name), None


def _strategies(ctx: TrainingContext):
    """(save_strategy, its argument, eval_strategy, its argument) when the check applies: both known,
    not YAML booleans (DS703's), and the save strategy not ``best``."""
    save, save_arg = _value(ctx, "save_strategy")
    evals, eval_arg = _value(ctx, "eval_strategy", "evaluation_strategy")
    if isinstance(save, bool) or isinstance(evals, bool):
        return None  # DS703
    if ctx.package == "ms-swift" and evals is None:
        evals = save
    if save is None or evals is None or str(save) == "best":
        return None
    return save, save_arg, evals, eval_arg


def _steps_mismatch(ctx: TrainingContext, span):
    """With ``steps``, save_steps must be a round multiple of eval_steps."""
    plan = ctx.plan
    save_steps, ss_arg = _value(ctx, "save_steps")
    eval_steps, es_arg = _value(ctx, "eval_steps")
    if ctx.package == "ms-swift" and eval_steps is None:
        eval_steps = save_steps
    if eval_steps is None and ctx.package != "ms-swift":
        eval_steps = plan.arg("logging_steps").value if plan.arg("logging_steps") else ctx.default("logging_steps")
    try:
        s, e = float(save_steps), float(eval_steps)
    except (TypeError, ValueError):
        return
    if s >= 1 and e >= 1 and s % e:
        related = [arg_related(a) for a in (ss_arg, es_arg) if a is not None]
        yield Finding(span,
                      f"load_best_model_at_end with save_steps {save_steps} not a multiple of eval_steps {eval_steps}",
                      note="TrainingArguments raises 'requires the saving steps to be a round multiple of the evaluation steps'",
                      related=related + [ctx.version_related()])
