"""DS312 swift-tuner-flag: an ms-swift tuner flag from another ms-swift generation."""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix, Severity
from dslint.rule import rule


@rule("DS312", "swift-tuner-flag", severity="warning", target="launch", fix="safe", consumers=("swift", "megatron"))
def swift_tuner_flag(plan, context):
    """An ms-swift tuner flag from another ms-swift generation (`--sft_type`, `--train_type`, `--tuner_type`).

    ## What it checks
    ms-swift renamed the tuner flag twice: `--sft_type` (2.x) → `--train_type` (3.x; accepted
    with a deprecation warning in 4.0) → `--tuner_type` (4.1+, where `--train_type` is gone,
    commit fe928a9f1; swift/arguments/base_args/base_args.py:93). A flag the installed
    generation does not know stops ms-swift with `ValueError: remaining_argv: ['--sft_type',
    'lora']` (modelscope/ms-swift#7836, #3763), and a 3.x installation given the 4.x flag stops
    with `remaining_argv: ['--tuner_type', 'lora']`. Which generation has which flag is read from
    the ms-swift schemas (2.6, 3.12, 4.6) and the documented renames (`--train_type` from 3.0 to
    4.0); the versions from the `swift-version` setting, the installed package
    (`detect-installed-versions`) or a pin in the repository. When every version the pin allows
    lacks the flag the finding is an error; when nothing pins ms-swift and no known version has
    it, a warning; when only some versions of a pinned range lack it, info naming them
    (`ms-swift==3.1.0` with `--train_type` is clean). When nothing pins ms-swift and only some
    generations lack the flag (`--sft_type` is 2.x's), which one runs is unknown: nothing is
    reported.

    ## Why it matters
    A flag from another generation stops ms-swift at argument parsing with `remaining_argv`.

    ## Example
    `swift sft --sft_type lora` with `ms-swift==4.6.0` pinned.
    Use instead: `--tuner_type lora` (4.1+), `--train_type lora` (3.x).

    ## Fix safety
    Safe: a fix only when a pin, setting or the program's imports say which versions run, none
    of them reads the flag, and all of them call it the same other name (the value is kept).
    No fix when only some versions lack the flag or nothing says which versions run.
    """
    from dslint.diagnostics import Edit
    from dslint.rules._training import swift_tuner_flag_findings

    if plan.consumer not in ("swift", "megatron"):
        return
    for arg, message, note, (right, calls), verdict in swift_tuner_flag_findings(plan, context.settings):
        certain = verdict.everywhere and verdict.candidates.evidence is not None
        fix = None
        span = arg.name_span
        # Only where a pin or setting says which versions run: a rename for versions nothing
        # names would be a fix built on a guess.
        if right and span is not None and certain:
            text = f"--{right}" if span.text.startswith("--") else right
            fix = Fix.safe(f"Rename to {right}", Edit.replace(span, text))
        yield Finding(arg.name_span or arg.span or plan.span, message, fix=fix, note=note, help=calls,
                      severity=Severity.ERROR if certain else verdict.severity())
