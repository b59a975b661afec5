"""DS720: a training config file the consumer will not read as a config."""

from __future__ import annotations

from dslint.diagnostics import Finding, Severity
from dslint.rule import rule
from dslint.rules import _training
from dslint.rules._training import arg_space
from dslint.rules.training_args._context import TrainingContext, training_context


CONFIG_SUFFIXES = (".yaml", ".yml", ".json")


@rule("DS720", "config-file-not-read", severity="error", target="launch", consumers=("hf", "swift", "llamafactory", "megatron"))
def config_file_not_read(plan, context):
    """A training config file the consumer will not read as a config, in the version in use.

    ## What it checks
    How each version reads a config file is taken from its source (the schemas' `x-dslint-reader`):
    - ms-swift 4.x reads a first argument ending in `.json`, `.yaml` or `.yml`; ms-swift 2.x and
      3.x read only a `.json` first argument (3.x takes YAML through `--config file.yaml`), so
      `swift sft config.yaml` stops with `remaining_argv: ['config.yaml']`.
    - LLaMA-Factory 0.9 reads `.yaml`, `.yml` and `.json` and `key=value` overrides after it;
      0.8 reads only `.yaml`/`.json`, and only as the single argument: `train config.yml` or
      `train config.yaml key=value` goes to the command-line parser and raises `Some specified
      arguments are not used by the HfArgumentParser`.
    - A `.yaml`/`.json` word that is not the first argument is not read as a config: ms-swift
      reports it in `remaining_argv`.

    ## Why it matters
    The job stops while it parses its arguments, after the queue wait, with an error that lists
    the file as a leftover argument rather than saying it was not read as a config. A command
    written for one version breaks this way under another with no change to the script. Under
    ms-swift with `--ignore_args_error true` it is worse: the leftover is only logged as a
    warning (swift/pipelines/base.py `_parse_args`) and the run trains without any of the
    file's settings.

    ## Example
    `swift sft --model m sft.yaml`
    Use instead: `swift sft sft.yaml --model m`.
    """
    ctx = training_context(plan, context)
    if not ctx.active or plan.command is None or ctx.package not in ("ms-swift", "llamafactory"):
        return
    launch = plan.command
    config = launch.config_file
    if config is not None and config.value:
        yield from _config_file(ctx, launch, config)
    for index, option in enumerate(launch.program_args):
        if index == 0 and option.name is None:
            continue  # the first argument of the program (src/train.py cfg.yaml) is read as the config
        yield from _config_words_later(ctx, option)


def _config_file(ctx: TrainingContext, launch, config):
    """The config file in first place: a suffix the version does not read, or overrides after it
    where LLaMA-Factory 0.8 reads it only alone."""
    suffix = "." + config.value.rsplit(".", 1)[-1].lower() if "." in config.value else ""

    def unread(space) -> bool:
        accepted = space.reader.get("positional-suffixes") or []
        return bool(accepted) and suffix not in accepted

    verdict = ctx.in_use.judge(ctx.sets, unread)
    only = ctx.in_use.judge(ctx.sets, lambda space: bool(space.reader.get("config-must-be-only-argument"))) \
        if ctx.package == "llamafactory" and launch.overrides else None
    if verdict.anywhere:
        reader = _reader_of(ctx, verdict)
        help = None
        if ctx.package == "ms-swift" and reader.get("flag"):
            help = f"it reads YAML through {reader['flag']} {config.value}"
        message = f"{verdict.where()} does not read '{config.value}' as its config file"
        note = (f"it reads only {', '.join(reader.get('positional-suffixes') or [])} files as the first argument: "
                "this one is left over as an argument and the parser stops")
        yield Finding(config.span, message, related=[ctx.version_related()], severity=verdict.severity(),
                      note=verdict.qualify(note), help=help)
    elif only is not None and only.anywhere:
        note = (f"{only.where()} reads the config file only when it is the single argument; otherwise the whole command "
                "line goes to HfArgumentParser, which raises 'Some specified arguments are not used by the HfArgumentParser'")
        yield Finding(launch.overrides[0].span, "key=value after the config file: the config file is not read",
                      related=[ctx.version_related()], severity=only.severity(), note=only.qualify(note))


def _config_words_later(ctx: TrainingContext, option):
    """Config file names among an option's values (or a later positional): left over, not read."""
    values = option.values[1:] if option.name is not None else option.values
    for word in values:
        text = word.value
        if not text or not text.lower().endswith(CONFIG_SUFFIXES) or "$" in text:
            continue
        if option.name is not None:
            found = ctx.lookup(option.name.lstrip("-"))
            if found is not None and found[1].get("x-dslint-nargs") in ("+", "*"):
                continue  # a list argument may hold files
        yield Finding(word.span, f"'{text}' is not the first argument, so {ctx.label()} does not read it as a config",
                      note="it is left over and the parser stops" + (" (remaining_argv)" if ctx.package == "ms-swift" else ""),
                      related=[ctx.version_related()], severity=Severity.WARNING if option.name is not None else None)


def _reader_of(ctx: TrainingContext, verdict) -> dict:
    """How the newest version a verdict names reads its config (schemas' x-dslint-reader)."""
    newest = (verdict.failing or verdict.unsure)[-1]
    return arg_space(_training.primary(ctx.package, newest).schema_name, ctx.sets).reader
