"""DS705: a training argument's value is not one of the choices the consumer accepts.
"""

from __future__ import annotations

import difflib

from dslint.diagnostics import Edit, Finding, Fix, Related, Severity
from dslint.documents.model import Scalar
from dslint.rule import rule
from dslint.rules import _training
from dslint.rules._training import PACKAGE_LABEL, ArgSpace, arg_space, generations, in_use
from dslint.rules.training_args._common import shown_value
from dslint.rules.training_args._context import training_context


@rule("DS705", "invalid-training-choice", severity="error", target="launch", fixable=True, consumers=("hf", "swift", "llamafactory", "megatron"))
def invalid_training_choice(plan, context):
    """A training argument's value is not one of the choices the consumer accepts.

    ## What it checks
    Fields with a fixed set of values in the version in use: `lr_scheduler_type`, `optim`,
    `eval_strategy`/`save_strategy`/`logging_strategy`, `torch_dtype` (ms-swift), `quant_bits`,
    `attn_implementation` where it is a choice, and every other `Literal`/`Enum` field of the
    generated schemas. HfArgumentParser rejects a bad token (`argument --optim: invalid choice`)
    and the dataclass rejects a bad YAML value (`ValueError: 'cosin' is not a valid SchedulerType`).
    A value valid in another version is reported as a warning unless the version is known.

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
    for name, arg, field, prop, negated in ctx.known_args():
        choices = prop.get("enum")
        if not choices or negated:
            continue
        node = ctx.node(arg)
        if node is not None:
            if not isinstance(node, Scalar):
                continue
            value = node.value
            span = node.span
            if isinstance(value, bool):
                continue  # DS703
            if ctx.reader() == "tokens" and value is not None:
                value = str(value)
        else:
            if arg.value is True or arg.assumed or not isinstance(arg.value, str) or "$" in arg.value:
                continue
            value, span = arg.value, arg.span
        if value is None:
            continue
        use = ctx.in_use
        sets = ctx.sets
        if ctx.space.lookup(name) is None:  # a TRL field of a transformers launch: TRL's version decides
            use, sets = in_use("trl", plan.origin.path, context.settings) or use, ()
        spaces = {g.version: arg_space(g.schema_name, sets) for g in generations(use.package)}
        rejected = {version for version, space in spaces.items() if _rejects(space, name, value)}
        if not rejected and not _rejects(ctx.space, name, value):
            continue
        verdict = use.judge(sets, lambda space: _rejects(space, name, value))
        if not verdict.anywhere:
            continue
        if _rejects(ctx.space, name, value):
            choices = ctx.lookup(name)[1]["enum"]
        else:  # valid in the newest candidate: list what an older one accepts
            older = arg_space(_training.primary(use.package, (verdict.failing or verdict.unsure)[-1]).schema_name, sets).lookup(name)
            choices = older[1].get("enum") or choices if older else choices
        valid = [c for c in choices if c is not None]
        elsewhere = [version for version, space in spaces.items() if version not in rejected and space.lookup(name) is not None]
        lowered_any = isinstance(value, str) and any(isinstance(c, str) and c.lower() == value.lower() for c in choices)
        same_everywhere = len(rejected) == len(spaces) and len({tuple(sorted(map(str, sp.lookup(name)[1].get("enum") or [])))
                                                                for sp in spaces.values()}) == 1
        lowered = [c for c in valid if isinstance(c, str) and isinstance(value, str) and c.lower() == value.lower()]
        close = lowered or difflib.get_close_matches(str(value), [str(c) for c in valid], n=1, cutoff=0.6)
        fix = None
        if close and span is not None and verdict.everywhere:
            text = close[0] if span.text[:1] not in "\"'" else f"{span.text[0]}{close[0]}{span.text[0]}"
            fix = (Fix.safe if lowered else Fix.unsafe)(f"Use {close[0]}", Edit.replace(span, text))
        shown = [str(c) for c in (close or [])] + [str(c) for c in valid if str(c) not in (close or [])]
        listed = ", ".join(shown[:12]) + (f", … ({len(shown) - 12} more)" if len(shown) > 12 else "")
        note = f"valid: {listed}"
        if elsewhere:
            note += f"; {PACKAGE_LABEL.get(use.package, use.package)} {', '.join(elsewhere)} accepts it"
        unpinned = None if lowered_any or same_everywhere else Severity.WARNING
        yield Finding(span or plan.span, f"{name}: {shown_value(value)} is not a valid choice for {verdict.where()}",
                      related=[Related(use.describe())], fix=fix, severity=verdict.severity(unpinned=unpinned), note=note)


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
