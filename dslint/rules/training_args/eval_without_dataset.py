"""DS712: LLaMA-Factory evaluation with no evaluation data."""

from __future__ import annotations

from dslint.diagnostics import Finding, Severity
from dslint.evidence.versions import compare, parse_version
from dslint.rule import rule
from dslint.rules.training_args._common import truthy
from dslint.rules.training_args._context import training_context


@rule("DS712", "eval-without-dataset", severity="error", target="launch", consumers=("llamafactory",))
def eval_without_dataset(plan, context):
    """LLaMA-Factory evaluation with no evaluation data.

    ## What it checks
    `do_eval`, `do_predict` or `predict_with_generate` with neither `eval_dataset` nor
    `val_size` > 1e-6: LLaMA-Factory raises `Please make sure eval_dataset be provided or
    val_size >1e-6` (llamafactory/hparams/parser.py; 0.8.3-0.9.3: `Please specify dataset for
    evaluation.`, and `Cannot use predict_with_generate if eval_dataset is None.`; the 0.8.0-0.8.2
    wheels have no such check, so with those among the candidates it is info). For a training run (`do_train`) with
    `eval_strategy` other than `no` and no evaluation data, the Trainer raises
    `You have set args.eval_strategy to steps but you didn't pass an eval_dataset to Trainer`.

    The Trainer's constructor refuses since transformers 4.46.0 (trainer.py `__init__`; not in the
    4.45.2 wheel); before it, the run stops when its first evaluation is due, in
    `get_eval_dataloader` (`Trainer: evaluation requires an eval_dataset.`, transformers 4.45.2
    trainer.py:964). Which transformers runs is the repository's pin (or that of the LLaMA-Factory
    checkout the launch runs), else what each candidate LLaMA-Factory release requires, from
    `Requires-Dist` in its wheel's METADATA: 0.8.0-0.8.3 `>=4.41.2`; 0.9.0 `>=4.41.2,<=4.45.0`;
    0.9.1 `<=4.46.1`; 0.9.2 `<=4.49.0`; 0.9.3 `>=4.45.0,<=4.52.4`; 0.9.4 `>=4.51.0,<=4.57.1`;
    0.9.5 `>=4.55.0,<=5.6.0`. An error when every candidate runs a transformers ≥ 4.46; a warning
    when some may run an older one (the run still stops, at its first evaluation).

    ## Why it matters
    The first check runs while LLaMA-Factory parses its arguments (`get_train_args`), right
    after the queue wait. The second costs more: `run_sft` tokenizes the dataset and loads the
    model before it builds the Trainer (llamafactory/train/sft/workflow.py), and only then does
    the Trainer's constructor refuse (transformers trainer.py `Trainer._validate_args`); with an
    older transformers the run trains until its first evaluation and then stops.

    ## Example
    ```yaml
    do_train: true
    eval_strategy: steps
    ```
    Use instead: add `val_size: 0.1` or `eval_dataset: ...`, or drop `eval_strategy`.
    """
    ctx = training_context(plan, context)
    if not ctx.active or ctx.package != "llamafactory" or "train" not in (ctx.sets or ("train",)):
        return
    if _may_have_eval_data(plan):
        return
    asked = _evaluation_asked(plan)
    if asked is not None:
        name, arg = asked
        # get_train_args checks it from 0.8.3 on; before, what happens depends on the workflow.
        verdict = ctx.in_use.candidates.judge(lambda version: True if compare(version, "0.8.3") >= 0 else None)
        if verdict.anywhere:
            note = f"LLaMA-Factory raises {_no_eval_data_message(name, verdict.failing)}"
            yield Finding(arg.name_span or arg.span or plan.span, f"{name} without eval_dataset or val_size",
                          related=[ctx.version_related()], severity=verdict.severity(), note=verdict.qualify(note))
        return
    strategy = _training_eval_strategy(plan)
    if strategy is not None:
        yield from _eval_strategy_without_dataset(plan, context, ctx, strategy)


def _may_have_eval_data(plan) -> bool:
    """An eval_dataset, a val_size > 1e-6, or a val_size dslint cannot read."""
    if plan.arg("eval_dataset") is not None and plan.arg("eval_dataset").value not in (None, "", []):
        return True
    val = plan.arg("val_size")
    try:
        return val is not None and float(val.value) > 1e-6
    except (TypeError, ValueError):
        return True


def _evaluation_asked(plan):
    """(name, argument) of the first of do_eval, do_predict, predict_with_generate that is on; None: none is."""
    for name in ("do_eval", "do_predict", "predict_with_generate"):
        arg = plan.arg(name)
        if arg is not None and truthy(arg.value):
            return name, arg
    return None


def _training_eval_strategy(plan):
    """The eval_strategy argument of a training run (do_train) that evaluates; None otherwise."""
    strategy = plan.arg("eval_strategy", "evaluation_strategy")
    train = plan.arg("do_train")
    if strategy is not None and isinstance(strategy.value, str) and strategy.value not in ("no",) and train is not None \
            and truthy(train.value):
        return strategy
    return None


def _no_eval_data_message(name: str, versions) -> str:
    """What get_train_args raises (llamafactory/hparams/parser.py): 0.9.4 merged the checks and reworded them."""
    new = "'Please make sure eval_dataset be provided or val_size >1e-6'"
    old = "'Cannot use `predict_with_generate` if `eval_dataset` is None.'" if name == "predict_with_generate" \
        else "'Please specify dataset for evaluation.'"
    since = [compare(v, "0.9.4") >= 0 for v in versions]
    if all(since):
        return new
    return old if not any(since) else f"{new} (before 0.9.4: {old})"


#: The transformers each LLaMA-Factory release admits: `Requires-Dist` in the METADATA of its wheel
#: on PyPI (the same bounds as `check_dependencies` in llamafactory/extras/misc.py). 0.8.0-0.8.3
#: have no upper bound.
LLAMAFACTORY_TRANSFORMERS = (
    ("0.8", ">=4.41.2"),
    ("0.9.0", ">=4.41.2,<=4.45.0"),
    ("0.9.1", ">=4.41.2,<=4.46.1"),
    ("0.9.2", ">=4.41.2,<=4.49.0,!=4.46.*,!=4.47.*,!=4.48.0"),
    ("0.9.3", ">=4.45.0,<=4.52.4,!=4.46.*,!=4.47.*,!=4.48.0,!=4.52.0"),
    ("0.9.4", ">=4.51.0,<=4.57.1,!=4.52.0,!=4.57.0"),
    ("0.9.5", ">=4.55.0,<=5.6.0,!=4.52.0,!=4.57.0"),
)
#: The first transformers whose Trainer refuses `eval_strategy` without an eval_dataset when it is
#: built (trainer.py `__init__`: in the 4.46.0 wheel, not in 4.45.2's). Before it, `evaluate` raises
#: 'Trainer: evaluation requires an eval_dataset.' (get_eval_dataloader) when the first evaluation is due.
_TRAINER_REFUSES = "4.46"


def _transformers_for(llamafactory: str, pinned) -> tuple[str, ...]:
    """The transformers one LLaMA-Factory release may run with: the repository's pin, else what the release requires."""
    from dslint.evidence.versions import allows, known_releases, parse_spec

    if not pinned.unbounded:
        return pinned.versions
    known = known_releases("transformers")
    series = [spec for release, spec in LLAMAFACTORY_TRANSFORMERS
              if _release_matches(llamafactory, release)]
    clauses = parse_spec(series[-1]) if series else None
    return tuple(v for v in known if allows(clauses, v)) if clauses else known


def _release_matches(version: str, release: str) -> bool:
    wanted = parse_version(release)
    return parse_version(version)[:len(wanted)] == wanted


def _eval_strategy_without_dataset(plan, context, ctx, strategy):
    """The Trainer's refusal of eval_strategy without an eval_dataset, judged over the transformers each candidate runs."""
    from dslint.evidence.versions import candidates

    start = plan.origin.path if plan.origin is not None else None
    pinned = candidates("transformers", start, context.settings, plan.program)
    runs = {version: _transformers_for(version, pinned) for version in ctx.in_use.candidates.versions}
    older = sorted({v for found in runs.values() for v in found if compare(v, _TRAINER_REFUSES) < 0}, key=parse_version)
    newer = any(compare(v, _TRAINER_REFUSES) >= 0 for found in runs.values() for v in found)

    def refuses(version: str) -> bool | None:
        found = runs[version]
        early = [v for v in found if compare(v, _TRAINER_REFUSES) < 0]
        return None if not found else (not early) if len(early) in (0, len(found)) else None

    found = ctx.in_use.candidates
    verdict = found.judge(refuses)
    headline = f"{strategy.name} {strategy.value} without eval_dataset or val_size"
    span = strategy.name_span or strategy.span or plan.span
    if verdict.everywhere:
        note = "the Trainer stops with 'You have set args.eval_strategy to ... but you didn't pass an eval_dataset to Trainer'"
        yield Finding(span, headline, related=[ctx.version_related()], severity=verdict.severity(), note=verdict.qualify(note))
        return
    if not older:
        return  # no known transformers is admitted: dslint cannot tell
    # Some candidate runs a transformers before 4.46, whose Trainer refuses only when the first evaluation is due.
    shown = f"{older[0]}–{older[-1]}" if len(older) > 1 else older[0]
    if not pinned.unbounded:
        why = pinned.why()
    elif found.unbounded:
        why = f"as {ctx.label()} releases require"
    else:
        why = f"as {ctx.label()} {found.versions[0] if len(found.versions) == 1 else found.spans(found.versions)} requires"
    note = (f"with transformers {shown} ({why}) the run stops at its first evaluation with 'Trainer: evaluation "
            f"requires an eval_dataset.'" + ("; newer ones refuse it at start-up" if newer else ""))
    yield Finding(span, headline, related=[ctx.version_related()],
                  severity=Severity.INFO if found.unread_source else Severity.WARNING, note=note)
