"""DS705: a training argument's value is not one of the choices the consumer accepts."""

from __future__ import annotations

import difflib
from typing import Any

from dslint.diagnostics import Edit, Finding, Fix, Related, Severity
from dslint.documents.model import Scalar
from dslint.rule import rule
from dslint.rules import _training
from dslint.rules._training import PACKAGE_LABEL, ArgSpace, arg_space, generations, in_use, reader_start
from dslint.rules.training_args._common import shown_value
from dslint.rules.training_args._context import TrainingContext, training_context


@rule("DS705", "invalid-training-choice", severity="error", target="launch", fix="safe or unsafe", consumers=("hf", "swift", "llamafactory", "megatron"))
def invalid_training_choice(plan, context):
    """A training argument's value is not one of the choices the consumer accepts.

    ## What it checks
    Fields with a fixed set of values in the version in use: `lr_scheduler_type`, `optim`,
    `eval_strategy`/`save_strategy`/`logging_strategy`, `torch_dtype` (ms-swift), `quant_bits`,
    `attn_implementation` where it is a choice, and every other `Literal`/`Enum` field of the
    generated schemas. HfArgumentParser rejects a bad token (`argument --optim: invalid choice`)
    and the dataclass rejects a bad YAML value (`ValueError: 'cosin' is not a valid SchedulerType`).
    A value valid in another version is reported as a warning unless the version is known.

    It speaks only where the reader of the choices is established (a known console, a program read
    statically that parses them, or a config whose own keys name LLaMA-Factory or ms-swift), and
    not where a training script reads its YAML with OmegaConf itself (see `unknown-training-argument`).

    ## Why it matters
    Both rejections come while the arguments are parsed: the job exits right after its queue
    wait, before anything has loaded. A value that only another version accepts fails the same
    way once the installed version is not the one the command was written for.

    ## Example
    `--lr_scheduler_type cosin`
    Use instead: `--lr_scheduler_type cosine`.

    ## Fix safety
    Safe when the value differs from a valid one only in case (`Cosine`); otherwise unsafe.
    """
    ctx = training_context(plan, context)
    if not ctx.active:
        return
    for name, arg, _field, prop, negated in ctx.known_args():
        choices = prop.get("enum")
        if not choices or negated:
            continue
        written = _written(ctx, arg)
        if written is not None:
            yield from _judge(ctx, context, name, choices, *written)


def _written(ctx: TrainingContext, arg) -> tuple[Any, Any] | None:
    """(value, span) of an argument as the consumer gets it; None for one this rule leaves alone
    (a YAML boolean is DS703's; a flag, a guess, a shell variable, null)."""
    node = ctx.node(arg)
    if node is not None:
        if not isinstance(node, Scalar) or isinstance(node.value, bool):
            return None
        value = node.value
        if ctx.reader() == "tokens" and value is not None:
            value = str(value)
        return (value, node.span) if value is not None else None
    if arg.value is True or arg.assumed or not isinstance(arg.value, str) or "$" in arg.value:
        return None
    return arg.value, arg.span


def _judge(ctx: TrainingContext, context, name: str, choices, value, span):
    use, sets = ctx.in_use, ctx.sets
    if ctx.space.lookup(name) is None:  # a TRL field of a transformers launch: TRL's version decides
        use, sets = in_use("trl", reader_start(ctx.plan), context.settings) or use, ()
    spaces = {g.version: arg_space(g.schema_name, sets) for g in generations(use.package)}
    rejected = {version for version, space in spaces.items() if _rejects(space, name, value)}
    if not rejected and not _rejects(ctx.space, name, value):
        return
    verdict = use.judge(sets, lambda space: _rejects(space, name, value))
    if not verdict.anywhere:
        return
    choices = _choices_to_list(ctx, use, sets, verdict, name, value, choices)
    yield _finding(ctx, name, value, span, use, verdict, choices, spaces, rejected)


def _choices_to_list(ctx: TrainingContext, use, sets, verdict, name: str, value, choices):
    """The choices of the version in use; when it accepts the value, those of the newest version that does not."""
    if _rejects(ctx.space, name, value):
        return ctx.lookup(name)[1]["enum"]
    older = arg_space(_training.primary(use.package, (verdict.failing or verdict.unsure)[-1]).schema_name, sets).lookup(name)
    return older[1].get("enum") or choices if older else choices


def _finding(ctx: TrainingContext, name: str, value, span, use, verdict, choices, spaces: dict, rejected: set) -> Finding:
    valid = [c for c in choices if c is not None]
    elsewhere = [version for version, space in spaces.items() if version not in rejected and space.lookup(name) is not None]
    lowered = [c for c in valid if isinstance(c, str) and isinstance(value, str) and c.lower() == value.lower()]
    close = lowered or difflib.get_close_matches(str(value), [str(c) for c in valid], n=1, cutoff=0.6)
    fix = _fix(span, close, lowered) if close and span is not None and verdict.everywhere else None
    note = f"valid: {_listed(close, valid)}"
    if elsewhere:
        note += f"; {PACKAGE_LABEL.get(use.package, use.package)} {', '.join(elsewhere)} accepts it"
    unpinned = None if _case_only(value, choices) or _same_everywhere(name, spaces, rejected) else Severity.WARNING
    return Finding(span or ctx.plan.span, f"{name}: {shown_value(value)} is not a valid choice for {verdict.where()}",
                   related=[Related(use.describe())], fix=fix, severity=verdict.severity(unpinned=unpinned), note=note)


def _fix(span, close, lowered) -> Fix:
    """Write the closest choice in the value's place, in its quotes; safe when only the case differs."""
    text = close[0] if span.text[:1] not in "\"'" else f"{span.text[0]}{close[0]}{span.text[0]}"
    return (Fix.safe if lowered else Fix.unsafe)(f"Use {close[0]}", Edit.replace(span, text))


def _listed(close, valid) -> str:
    """The valid choices, the closest first, at most 12."""
    shown = [str(c) for c in (close or [])] + [str(c) for c in valid if str(c) not in (close or [])]
    return ", ".join(shown[:12]) + (f", … ({len(shown) - 12} more)" if len(shown) > 12 else "")


def _case_only(value, choices) -> bool:
    """The value is a choice in another case: an error whatever the version."""
    return isinstance(value, str) and any(isinstance(c, str) and c.lower() == value.lower() for c in choices)


def _same_everywhere(name: str, spaces: dict, rejected: set) -> bool:
    """Every shipped version rejects the value and has the same choices: an error whatever the version."""
    return len(rejected) == len(spaces) and len({tuple(sorted(map(str, sp.lookup(name)[1].get("enum") or [])))
                                                 for sp in spaces.values()}) == 1


def _rejects(space: ArgSpace, name: str, value) -> bool:
    """The field has choices in this parser and ``value`` is none of them (a missing field is DS701's)."""
    found = space.lookup(name)
    if found is None or not found[1].get("enum"):
        return False
    choices = found[1]["enum"]
    if _valid_choice(value, choices):
        return False
    return not (isinstance(value, str) and value.lower() in ("none", "null") and None in choices)


def _valid_choice(value, choices) -> bool:
    if value in choices:
        return True
    text = str(value)
    return any(str(c) == text for c in choices if c is not None)
