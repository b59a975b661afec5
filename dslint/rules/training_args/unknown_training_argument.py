"""DS701: a training argument the consumer's parser does not have in the version in use."""

from __future__ import annotations

import difflib

from dslint.diagnostics import Edit, Finding, Fix, Severity
from dslint.rule import rule
from dslint.rules._training import PACKAGE_LABEL, arg_space
from dslint.rules.training_args._context import TrainingContext, training_context


@rule("DS701", "unknown-training-argument", severity="error", target="launch", fix="safe or unsafe", consumers=("hf", "swift", "llamafactory", "megatron"))
def unknown_training_argument(plan, context):
    """A training argument the consumer's parser does not have in the version in use.

    ## What it checks
    Names are judged against the parser of the program that reads them, so only where that
    reader is established: a launch of a known console (`swift sft`, `llamafactory-cli train`),
    a program read statically that parses `TrainingArguments`/a TRL config, or a config whose
    own keys name LLaMA-Factory or ms-swift. A launch whose program was not found (the
    `--deepspeed` flag only suggests HF), a program that shows no known framework (PaddleNLP's
    `PdArgumentParser`, a Hydra app) and a config no launch names with only common keys
    (`learning_rate`, `output_dir`) are not judged.

    ms-swift parses its command line (and the YAML it turns into flags) with `HfArgumentParser`
    and stops with `ValueError: remaining_argv: ['--sft_type', 'lora']` on anything left over
    (swift/pipelines/base.py). LLaMA-Factory raises `Some keys are not used by the
    HfArgumentParser: [...]` for a YAML key no dataclass has, and `Some specified arguments are
    not used by the HfArgumentParser: [...]` for a command-line word (llamafactory/hparams/parser.py).
    Megatron-Core's argument names (`tensor_model_parallel_size`, `sequence_parallel`, ...; taken
    from the newest ms-swift schema's Megatron set) in a LLaMA-Factory config count as known
    unless the launch sets `USE_MCA` off: with `USE_MCA=1` LLaMA-Factory parses mcore_adapter's
    TrainingArguments instead of HF's (llamafactory/hparams/parser.py, `_parse_train_mca_args`).
    For a `python train.py` script that parses its own dataclasses only fields that
    `TrainingArguments` had in another transformers version and lacks in this one are reported
    (`evaluation_strategy`, removed in transformers 4.51). The names come from the schemas generated
    from each package version (`dslint schema ms-swift`), including `--no_*` complements, dashed
    spellings and argparse's unique-prefix abbreviations.

    Each version the launch may run with is judged (dslint/evidence/versions.py: a `*-version` setting,
    the installed package with `detect-installed-versions`, or the pin nearest the program that
    parses them (its own file when it was read, else the launching script) in
    `requirements*.txt`, `pyproject.toml`, `setup.py`, `setup.cfg`, `environment.yml`, a
    Dockerfile or a lock file; with none, every version dslint knows), from the schema of its
    generation and the lifetimes the projects document (transformers 5.0 removed
    `overwrite_output_dir`, `adafactor`, `no_cuda`, ...). A release that no schema describes
    is judged by the argument names its own wheel defines where they differ from the releases
    the schemas were made from (`schemas/<package>-names.json`, read from every known ms-swift,
    TRL and LLaMA-Factory wheel and one transformers wheel per minor version): ms-swift 3.4's
    `--num_infer_workers` is in neither the 2.6 nor the 3.12 schema. A name that only some of
    the versions a pinned range allows lack is info that names them (`--warmup_ratio` with
    `transformers>=4.40`: 5.23 has no such field, 4.x has); where nothing pins the package (or a
    git ref names no release, or a checkout's version cannot be read) the releases that run are
    unknown and such a name is not reported (a checkout the script runs in may pin 4.x). A
    name that no known version has is a warning when nothing pins the package (a newer release
    may have added it) and an error when a pin says which versions run.
    A program whose parser returns what it does not know (`parse_known_args`,
    `parse_args_into_dataclasses(return_remaining_strings=True)`, transformers hf_argparser.py)
    runs on without the flag: a warning that says it is ignored.

    ## Why it matters
    The job stops while it parses its arguments: it waited for its nodes only to exit before
    anything has loaded. Commands copied from an older tutorial fail this way after an upgrade
    (ms-swift 2.x's `--sft_type` is `--tuner_type` in 4.x). Under ms-swift with
    `--ignore_args_error true`, which its web UI adds to the commands it starts
    (swift/ui/llm_train/llm_train.py), the leftover is only logged as a warning (`_parse_args`
    in swift/pipelines/base.py) and the run trains without the setting.

    ## Example
    `swift sft --model m --sft_type lora` with `ms-swift==4.6.0` in requirements.txt.
    Use instead: `--tuner_type lora`.

    ## Fix safety
    Safe for renames the project documents (`evaluation_strategy` → `eval_strategy`) when the
    version is known; otherwise unsafe (the closest known name).
    """
    ctx = training_context(plan, context)
    if not ctx.active:
        return
    for name, arg in plan.args.items():
        if not ctx.accepts(name):
            yield _finding(ctx, name, arg)


def _finding(ctx: TrainingContext, name: str, arg) -> Finding:
    plan = ctx.plan
    life, having, verdict = ctx.lifetime(name), ctx.having(name), ctx.name_verdict(name)
    own_verdict = ctx.parsers is not None and not having and life is None and verdict.everywhere
    target, why = _rename_target(ctx, name, life, having)
    flag = f"--{name}" if not ctx.from_yaml(arg) else name
    message = f"{flag} is not an argument of {plan.program.program if own_verdict else verdict.where()}"
    note = _effect(ctx, name, flag)
    if having:
        note += f"; it exists in {ctx.label()} {', '.join(g.version for g in having)}"
    edit = _rename_edit(arg, target) if target and verdict.everywhere else None
    fix = help = None
    if edit is not None:
        safe = life is not None and target == life.renamed_to and verdict.pinned
        fix = (Fix.safe if safe else Fix.unsafe)(f"Rename {name} to {target}", edit)
        if why:
            note += f"; {why}"
    elif target:
        help = f"did you mean {'--' if flag.startswith('--') else ''}{target}?" + (f" ({why})" if why else "")
    # The related version line says what the version was judged on (``nothing pins transformers``).
    return Finding(arg.name_span or arg.span or plan.span, message, related=[ctx.version_related()], fix=fix,
                   severity=_severity(ctx, verdict), note=note, help=help)


def _rename_target(ctx: TrainingContext, name: str, life, having) -> tuple[str | None, str]:
    """The name to use instead and why: a documented rename, a help text's, else the closest known name."""
    if life is not None and life.renamed_to and ctx.space.lookup(life.renamed_to) is not None:
        target, why = life.renamed_to, life.source
    else:
        target, why = _replaced_by(ctx, name, having)
        if target is None:
            target = _closest(ctx, name)
    if target == name:
        target = None  # the newest version has it: older ones lack it
    return target, why


def _replaced_by(ctx: TrainingContext, name: str, having) -> tuple[str | None, str]:
    """The name an older version's help text says to use instead, when the version in use has it."""
    for gen in having:
        prop = arg_space(gen.schema_name, ctx.sets).lookup(name)[1]
        replaced = prop.get("x-dslint-replaced-by")
        if replaced and ctx.space.lookup(replaced) is not None:
            return replaced, f"{PACKAGE_LABEL[ctx.package]} {gen.version}'s help text says to use it"
    return None, ""


def _closest(ctx: TrainingContext, name: str) -> str | None:
    """The closest of the program's own names, else of the consumer's."""
    if ctx.own:
        close = difflib.get_close_matches(name, list(ctx.own), n=1, cutoff=0.75)
        if close:
            return close[0]
    return ctx.space.closest(name)


def _effect(ctx: TrainingContext, name: str, flag: str) -> str:
    """What the consumer does with the unknown argument."""
    if ctx.package == "ms-swift":
        return f"ms-swift stops with ValueError: remaining_argv: ['{flag}', ...]"
    if ctx.package == "llamafactory":
        arg = ctx.plan.args.get(name)
        if arg is not None and not ctx.from_yaml(arg):  # command-line words (llamafactory/hparams/parser.py _parse_args)
            return f"LLaMA-Factory raises 'Some specified arguments are not used by the HfArgumentParser: [\\'{flag}\\', ...]'"
        return f"LLaMA-Factory raises 'Some keys are not used by the HfArgumentParser: [\\'{name}\\']'"
    if ctx.parsers is not None and ctx.parsers.tolerant:
        return f"the program's parser returns it unused and the run goes on without it ({ctx.parsers_text()})"
    if ctx.parsers is not None:
        return f"the program's parsers do not accept it ({ctx.parsers_text()})"
    return "HfArgumentParser does not accept it (parse_dict/parse_args raise on unused keys)"


def _severity(ctx: TrainingContext, verdict) -> Severity | None:
    severity = verdict.severity(unpinned=Severity.WARNING)
    if ctx.parsers is not None and ctx.parsers.tolerant and ctx.package not in ("ms-swift", "llamafactory"):
        severity = min(severity or Severity.ERROR, Severity.WARNING)  # ignored, not fatal
    return severity


def _rename_edit(arg, new: str) -> Edit | None:
    span = arg.name_span
    if span is None:
        return None
    text = span.text
    if text.startswith("--"):
        return Edit.replace(span, f"--{new}")
    quote = text[:1] if text[:1] in ('"', "'") else ""
    return Edit.replace(span, f"{quote}{new}{quote}")
