"""DS311 swift-config-flag: ms-swift given `--config file.yaml`."""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix
from dslint.rule import rule


@rule("DS311", "swift-config-flag", severity="error", target="launch", fix="unsafe", consumers=("swift", "megatron"))
def swift_config_flag(plan, context):
    """ms-swift is given `--config file.yaml`: it takes the config file as the first argument.

    ## What it checks
    `swift sft|pt|rlhf|infer|export` read a YAML/JSON config only as the first positional
    argument (`swift sft config.yaml`, swift/cli/main.py:38-71). `--config` is understood only
    by the Ray Megatron pipeline (`megatron rlhf --use_ray true`); anywhere else argparse leaves
    it over and ms-swift stops with `ValueError: remaining_argv: ['--config', 'x.yaml']`
    (swift/pipelines/base.py:35-40). ms-swift 3.x does read `--config file.yaml`
    (swift/cli/main.py `prepare_config_args`): when a range the repository pins includes 3.x,
    the finding is info and names the versions that stop; when nothing pins ms-swift, which
    release runs is unknown and nothing is reported.

    ## Why it matters
    ms-swift stops at argument parsing, and the settings in the file were never applied.

    ## Example
    `swift sft --config sft.yaml`
    Use instead: `swift sft sft.yaml`.

    ## Fix safety
    Unsafe: it moves the file to the first argument, where ms-swift reads it before the other
    flags, which then override it. No fix when the file is not there (beside the script, in the
    folders above it, or in the working directory): the launch would then stop on a missing file
    instead (DS303), and which file was meant is the author's call.
    """
    if plan.launcher not in ("swift", "megatron") or plan.command is None:
        return
    if plan.launcher == "megatron" and plan.arg("use_ray") is not None:
        return
    verdict = _versions_verdict(plan, context)
    if verdict is not None and not verdict.anywhere:
        return
    for option in plan.command.program_args:
        if option.name in ("--config", "--config_file") and option.value is not None:
            fix = _first_argument_fix(plan, option, verdict)
            note = "as written it stops with remaining_argv"
            yield Finding(option.name_span or option.span, f"{plan.entry or 'ms-swift'} does not read {option.name}", fix=fix,
                          severity=verdict.severity() if verdict else None, note=verdict.qualify(note) if verdict else note,
                          help=None if fix else f"it takes the config file as its first argument (`{plan.entry or 'swift sft'} {option.value.raw}`)")


def _versions_verdict(plan, context):
    """Which of the ms-swift versions the launch may run with stop on ``--config``; None when they are not known."""
    from dslint.rules._training import in_use, reader_start

    use = in_use("ms-swift", reader_start(plan), context.settings, plan.program)
    # ms-swift 3.x reads `--config file.yaml` (swift/cli/main.py prepare_config_args)
    return use.judge((), lambda space: space.reader.get("flag") != "--config") if use is not None else None


def _first_argument_fix(plan, option, verdict):
    """The fix that moves the file to the first argument: only where every version stops on the
    flag and the file is known to be there (or might be)."""
    from dslint.diagnostics import Edit

    source = option.span.source
    entry = plan.command.command.args[0] if plan.command.command.args else None
    if entry is None or not option.value.value or (verdict is not None and not verdict.everywhere) \
            or _missing_file(plan, option.value.value):
        return None
    end = option.span.end
    while end < len(source.text) and source.text[end] in " \t":
        end += 1
    return Fix.unsafe(
        "Pass the config file as the first argument",
        Edit(source, option.span.start, end, ""),
        Edit(source, entry.span.end, entry.span.end, f" {option.value.raw}"),
    )


def _missing_file(plan, raw: str) -> bool:
    """Is the file ``raw`` (as a launch names it) known to be absent? False when unsure ($VAR)."""
    import os
    from pathlib import Path

    if any(char in raw for char in "$`*?") or raw.startswith("~"):
        return False
    path = Path(raw)
    if path.is_absolute():
        return not path.is_file()
    origin = getattr(getattr(plan, "origin", None), "path", None)
    base = Path(os.path.abspath(origin)).parent if origin and not origin.startswith("<") else Path.cwd()
    return not any((folder / path).is_file() for folder in (base, *base.parents, Path.cwd()))
