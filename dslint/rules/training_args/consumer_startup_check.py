"""DS723: the consumer's own start-up check refuses the launch's arguments."""

from __future__ import annotations

from dslint.diagnostics import Finding, Related
from dslint.evidence import argnames, startup_checks
from dslint.evidence.startup_checks import UNKNOWN, Refusal
from dslint.rule import rule
from dslint.rules._training import PACKAGE_LABEL, in_use, reader_start
from dslint.rules.training_args._common import arg_related
from dslint.rules.training_args._context import TrainingContext, training_context

# Checks a rule of their own reports, with a fix or more evidence: not repeated here.
OWNED = {
    "transformers": (("--load_best_model_at_end requires", "DS711"), ("At most one of fp16 and bf16 can be True,", "DS401")),
    "llamafactory": (("Please make sure eval_dataset be provided", "DS712"), ("Please specify dataset for evaluation", "DS712")),
}
_TRANSFORMERS_CLASSES = ("transformers:TrainingArguments", "transformers:Seq2SeqTrainingArguments")


@rule("DS723", "consumer-startup-check", severity="error", target="launch", consumers=("hf", "swift", "llamafactory", "megatron"))
def consumer_startup_check(plan, context):
    """The consumer's own start-up check refuses the launch's arguments.

    ## What it checks
    ms-swift, transformers, TRL and LLaMA-Factory validate their arguments while they parse
    them (`__post_init__` of the argument class and the methods it calls; LLaMA-Factory's
    `get_train_args` with the functions it hands the parsed argument objects) and raise on
    combinations they refuse. `python -m dslint.schemagen.startup_checks` reads that code from every
    release's wheel (with `ast`, never importing it) and keeps each check whose condition is
    made of argument values, constants and simple operations, together with the assignments
    before it that change those values (`schemas/<package>-checks.json`). This rule replays
    them, in order, on the launch's values and the release's own defaults, for every release
    the repository allows, and reports the first check that raises, quoting the consumer's
    message and citing its file and line.

    It speaks only when the check holds in every release the launch may run: those a pin
    allows; with nothing pinned, the known releases that accept every argument the launch
    uses (a launch passing `--padding_free`, new in ms-swift 3.5.0, was written for 3.5.0 or
    later; `dslint explain` shows which arguments narrowed the range). Further, only when the
    launch itself gives at least one of the arguments the check reads, and when every value
    the check reads is known: a value
    from a variable dslint cannot expand, one the program assigns after parsing, or one the
    consumer computes from something outside the arguments (the model's config, the
    installed packages, the devices) leaves it silent. Under transformers it runs only where
    the program's parser takes `TrainingArguments` (or `Seq2SeqTrainingArguments`) or a TRL
    config itself, not a subclass of its own whose `__post_init__` may differ; a TRL config's
    checks are judged for the TRL releases allowed, with what transformers' own `__post_init__`
    may change (in any release dslint knows) taken as unknown after `super().__post_init__()`.

    ## Why it matters
    The check runs as the job starts, after its queue wait: the launch exits before
    training. ms-swift, for instance, refuses `--packing true` without a flash-attention
    implementation (swift/arguments/sft_args.py `_check_padding_free`, ms-swift 4.6.0 line
    196: `The "packing" feature requires a flash attention implementation.`).

    ## Example
    ```bash
    swift sft --model Qwen/Qwen2.5-7B-Instruct --dataset data.jsonl --packing true --attn_impl eager
    ```
    Use instead: `--attn_impl flash_attn`.
    """
    ctx = training_context(plan, context)
    if not ctx.active or ctx.package not in ("ms-swift", "transformers", "llamafactory") or ctx.in_use is None:
        return
    for judged in _judged(ctx, context):
        finding = _finding(ctx, *judged)
        if finding is not None:
            yield finding
            return


def _judged(ctx: TrainingContext, context) -> list[tuple]:
    """(package, entry, versions in use) whose validation path parses the launch's arguments: the
    consumer's own command, transformers' TrainingArguments, or the TRL configs the program's
    parser takes itself (a TRL config's checks are TRL's, judged for the TRL releases allowed)."""
    if ctx.package != "transformers":
        if ctx.plan.entry is None and ctx.plan.launcher != "yaml":
            return []  # a script of its own that imports the framework: which arguments reach it is the script's
        entry = ctx.sets[0] if len(ctx.sets) == 1 else None
        return [(ctx.package, entry, ctx.in_use)] if entry is not None else []  # USE_MCA on: not judged (_belongs)
    parsers = ctx.parsers
    if parsers is None:
        return []
    out = []
    if any(s in parsers.direct for s in _TRANSFORMERS_CLASSES) \
            and not any(s.startswith("transformers:") and s not in parsers.direct for s in parsers.schemas):
        out.append(("transformers", "TrainingArguments", ctx.in_use))  # no project subclass with its own __post_init__
    configs = [s.partition(":")[2] for s in parsers.direct if s.startswith("trl:")]
    if configs and not any(s.startswith("trl:") and s not in parsers.direct for s in parsers.schemas):
        trl = in_use("trl", reader_start(ctx.plan), context.settings, ctx.plan.program)
        out += [("trl", config, trl) for config in configs if trl is not None]
    return out


def _finding(ctx: TrainingContext, package: str, entry: str, use) -> Finding | None:
    plan = ctx.plan
    found: dict[str, Refusal] = {}
    settled: list[bool] = []  # a release that does not refuse: no verdict can hold everywhere any more

    def fails(version: str):
        if settled:
            return False
        refusal = _refusal(ctx, package, version, entry)
        if not isinstance(refusal, Refusal):
            settled.append(True)
        if refusal is None or refusal is UNKNOWN:
            return None if refusal is UNKNOWN else False
        found[version] = refusal
        return True

    candidates = argnames.narrowed(use.candidates, [n for n in plan.args if n not in ctx.own and n != "ENV"])
    verdict = candidates.judge(fails)
    if not verdict.everywhere or candidates.unread_source:
        return None
    newest = found[verdict.failing[-1]]
    if any(newest.template.startswith(prefix) for prefix, _ in OWNED.get(package, ())):
        return None
    given = [plan.arg(name) for name in newest.reads if plan.arg(name) is not None]
    anchor = given[-1]
    shown = ", ".join(f"{arg.name}={_shown(arg.value)}" for arg in given)
    label = PACKAGE_LABEL.get(package, package)
    versions = {f"{r.file}:{r.line}" for r in found.values()}
    where = f"{newest.file}:{newest.line}" + (f" in {label} {verdict.failing[-1]}" if len(versions) > 1 else "")
    return Finding(anchor.name_span or anchor.span or plan.span,
                   f"{label} refuses {shown} at start-up ({newest.exception})",
                   note=f"{where} raises {newest.exception}: {newest.message}",
                   related=[arg_related(arg) for arg in given[:-1]] + [Related(candidates.describe())])


def _refusal(ctx: TrainingContext, package: str, version: str, entry: str):
    """The refusal at ``version``: a Refusal, None (none fires, or one fires on defaults alone) or UNKNOWN."""
    fields = startup_checks.fields(package, version, entry)
    if fields is None:
        return UNKNOWN
    plan = ctx.plan
    values = {}
    for name, row in fields.items():
        arg = plan.arg(name)
        if arg is not None:
            values[name] = _value(ctx, arg, row[0])
    refusal = startup_checks.first_refusal(package, version, entry, values, defaults_stand=plan.unseen_arguments is None)
    if refusal is None or refusal is UNKNOWN:
        return refusal
    if not any(values.get(name, UNKNOWN) is not UNKNOWN for name in refusal.reads):
        return UNKNOWN  # the launch gives none of what the check reads: the defaults alone say nothing about it
    if ctx.overwritten(*refusal.reads) is not None:
        return UNKNOWN
    return refusal


def _value(ctx: TrainingContext, arg, kind: str):
    if arg.assumed:
        return UNKNOWN
    if ctx.package in ("transformers", "llamafactory") and ctx.from_yaml(arg):
        # parse_yaml_file / LLaMA-Factory's parse_dict hand the YAML values to the dataclass as they are
        return startup_checks.typed_value(kind, arg.value)
    if ctx.package == "llamafactory" and ctx.config_doc is not None:
        return UNKNOWN  # a key=value after the YAML: OmegaConf.from_cli types it as YAML would
    return startup_checks.parsed_token(kind, arg.value)  # a command-line token (ms-swift makes YAML values tokens)


def _shown(value) -> str:
    if value is True:
        return "true"
    return repr(value) if isinstance(value, str) and (" " in value or not value) else str(value)
