"""Training arguments as HF transformers, ms-swift, LLaMA-Factory and accelerate parse them (DS7xx).

Every fact about names, types, choices and defaults comes from the schemas generated from the
packages (schemas/transformers*, ms-swift*, llamafactory*, trl*, accelerate*); the version in
use from dslint.evidence.versions (settings, installed distribution, repository pins). A verdict that
depends on the version says which version it assumed and where that came from, and is an error
only when that version is known; otherwise a warning.
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

from dslint.diagnostics import Edit, Finding, Fix, Related, Severity
from dslint.documents.model import Mapping, Scalar
from dslint.launch.consumer import program_arguments
from dslint.rule import rule
from dslint.rules import _training
from dslint.rules._training import (
    PACKAGE_LABEL, ArgSpace, InUse, arg_space, documented, generations, in_use, plan_sets,
)
from dslint.evidence.versions import compare, parse_version

# Names another rule owns (DS312: ms-swift's tuner flag generations; DS311: --config).
OWNED_ELSEWHERE = {"ms-swift": {"sft_type", "train_type", "tuner_type", "config", "config_file"}}

# PyYAML's YAML 1.1 resolver, as the consumers load YAML (yaml.safe_load; OmegaConf differs only for floats).
_BOOL_WORDS = re.compile(r"^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$")
_FLOAT_AS_STRING = re.compile(r"^[-+]?(?:\d[\d_]*)(?:\.\d*)?[eE][-+]?\d+$")  # 1e-4, 5E-5, 1.e-3 (no dot before e)
_YAML11_FLOAT = re.compile(r"^[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?$")
_OCTAL = re.compile(r"^[-+]?0[0-7_]+$")
_HEX = re.compile(r"^[-+]?0x[0-9a-fA-F_]+$")
_SEXAGESIMAL = re.compile(r"^[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$")


# ---------------------------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------------------------


_CONTEXTS: dict[int, tuple] = {}  # id(plan) -> (plan, context, _Context): built once per plan, not once per rule


def _context(plan, context) -> "_Context":
    hit = _CONTEXTS.get(id(plan))
    if hit is not None and hit[0] is plan and hit[1] is context:
        return hit[2]
    if len(_CONTEXTS) > 4096:
        _CONTEXTS.clear()
    found = _Context(plan, context)
    _CONTEXTS[id(plan)] = (plan, context, found)
    return found


class _Context:
    """What the DS7xx launch rules need about one plan."""

    def __init__(self, plan, context):
        self.plan = plan
        found = plan_sets(plan)
        self.package, self.sets, self.strict = found if found else (None, (), False)
        start = plan.origin.path if plan.origin is not None else None
        self.in_use: InUse | None = in_use(self.package, start, context.settings, plan.program) if self.package else None
        self.space: ArgSpace | None = arg_space(self.in_use.generation.schema_name, self.sets) if self.in_use else None
        self.config_doc = None
        if plan.training_config is not None and plan.training_config.document is not None:
            self.config_doc = plan.training_config.document
        elif plan.launcher == "yaml":
            self.config_doc = plan.origin
        flavor = getattr(self.config_doc, "flavor", None) if self.config_doc is not None else None
        if flavor == "axolotl":  # axolotl YAML follows axolotl's own schema
            self.package = None
        if self.package == "transformers":
            # A custom script parses its own dataclasses besides TrainingArguments; TRL's configs
            # extend TrainingArguments: a field of either is "known" for value checks.
            self.extra_spaces = [arg_space(g.schema_name, ()) for g in generations("trl")[-1:]]
        else:
            self.extra_spaces = []
        # What the program's own parsers accept, when its program was read: the union of the
        # parsers that really parse this command line, and whether that union is complete.
        self.own: dict = {}
        self.parsers = None
        program = getattr(plan, "program", None)
        if self.package == "transformers" and program is not None and program.established:
            self.parsers = program_arguments(program)
            if self.parsers is not None:
                self.own = self.parsers.own
                self.strict = self.parsers.complete
                classes = tuple(schema.partition(":")[2] for schema in self.parsers.schemas if schema.startswith("transformers:"))
                if classes and self.in_use is not None:
                    self.sets = classes  # Seq2SeqTrainingArguments has fields TrainingArguments lacks
                    self.space = arg_space(self.in_use.generation.schema_name, self.sets)
                others = [schema for schema in self.parsers.schemas if not schema.startswith("transformers:")]
                self.extra_spaces = [space for space in map(_trl_space, others) if space]
                if len(self.extra_spaces) < len(others):
                    self.strict = False  # a TRL config dslint has no schema for: its fields are unknown

        # A checkout of the package in the repository that the launch runs (dslint.launch.vendored):
        # a name its argument dataclasses define is an argument of the version that runs.
        source = getattr(program, "sources", {}).get(self.package) if program is not None and self.package else None
        self.vendored: dict = source.fields if source is not None else {}

        if self.package is not None and not self._belongs():
            self.package = None

    def _belongs(self) -> bool:
        """False for a file that is not this consumer's config after all.

        A config no launch reaches was given its consumer by its keys alone: LLaMA-Factory's v1
        configs, verl's Hydra configs and ms-swift's Ray pipeline configs (nested sections) look
        like ms-swift or LLaMA-Factory YAML. Such a file is judged only when most of its keys
        are arguments of some shipped version. ms-swift's Ray pipeline (`use_ray`) and
        LLaMA-Factory's Megatron mode (`USE_MCA=1`, mcore_adapter's arguments) parse other
        dataclasses: not judged.
        """
        plan = self.plan
        if self.package == "ms-swift" and _truthy(getattr(plan.arg("use_ray"), "value", None)):
            return False
        if self.package == "llamafactory" and _use_mca(plan):
            return False
        if plan.launcher != "yaml" or not self.strict:
            return True
        names = [n for n in plan.args if n != "ENV"]
        if not names:
            return False
        spaces = [arg_space(g.schema_name, ()) for g in generations(self.package)]
        unknown = [n for n in names if n not in self.vendored and all(sp.lookup(n) is None for sp in spaces)]
        if self.package == "ms-swift" and any(isinstance(plan.args[n].value, dict) for n in unknown):
            return False  # the Ray pipeline's nested sections (train:, rollout:, teacher:)
        return (len(names) - len(unknown)) * 10 >= len(names) * 7

    @property
    def active(self) -> bool:
        return self.package is not None and self.space is not None

    def label(self) -> str:
        return PACKAGE_LABEL.get(self.package or "", self.package or "")

    def from_yaml(self, arg) -> bool:
        if arg.span is None:
            return False
        if self.config_doc is not None and arg.span.source is self.config_doc.source:
            return True
        return False

    def node(self, arg):
        """The YAML node of an argument that came from the training config."""
        if not self.from_yaml(arg) or self.config_doc is None or self.config_doc.mapping is None:
            return None
        entry = self.config_doc.mapping.entry(arg.name)
        return entry.value if entry is not None else None

    def reader(self) -> str:
        """How the YAML values reach the dataclass: tokens | omegaconf-dict | pyyaml-dict | defaults | unknown."""
        if self.package == "ms-swift":
            return "tokens"
        if self.package == "llamafactory":
            return "omegaconf-dict" if self.space.reader.get("loader") == "omegaconf" else "pyyaml-dict"
        return "unknown"

    def version_related(self) -> Related:
        return Related(self.in_use.describe())

    def lookup(self, name: str):
        found = self.space.lookup(name)
        if found is None:
            for space in self.extra_spaces:
                found = space.lookup(name)
                if found is not None:
                    break
        if found is None and self.own:
            key = name.lstrip("-").replace("-", "_")
            definition = self.own.get(key)
            if definition is not None:
                found = (definition.name, _own_property(definition), False)
        return found

    def parsers_text(self) -> str:
        """The parsers of the program, as a message names them."""
        shown = [e.describe() for e in self.parsers.evidence] or [self.own[next(iter(self.own))].evidence.describe()]
        return "; ".join(shown[:2])

    def known_args(self):
        """(name, arg, field, schema property, negated) for each argument the consumer knows."""
        for name, arg in self.plan.args.items():
            found = self.lookup(name)
            if found is not None:
                yield (name, arg, *found)


# TRL configs named in a program's HfArgumentParser/TrlParser -> the TRL schema set that holds them.
_TRL_SETS = {"SFTConfig": "sft", "DPOConfig": "dpo", "GRPOConfig": "grpo"}
_JSON_TYPES = {"int": "integer", "float": "number", "bool": "boolean", "str": "string", "list": "array", "dict": "object"}


def _trl_space(schema: str) -> ArgSpace | None:
    package, _, name = schema.partition(":")
    if package != "trl" or name not in _TRL_SETS:
        return None
    newest = generations("trl")[-1:]
    return arg_space(newest[0].schema_name, (_TRL_SETS[name],)) if newest else None


def _own_property(definition) -> dict:
    """A field or flag the program defines, shaped like a schema property for the value checks."""
    prop: dict = {"x-dslint-python-type": definition.type or "any", "x-dslint-defined-at": definition.evidence.where()}
    kind = _JSON_TYPES.get(definition.type or "")
    if kind is not None:
        prop["type"] = [kind, "null"] if definition.default is None else kind
    if definition.type in ("int", "float", "bool") and not definition.flag:
        prop["x-dslint-cli-type"] = definition.type
    return prop


def _rename_edit(arg, new: str) -> Edit | None:
    span = arg.name_span
    if span is None:
        return None
    text = span.text
    if text.startswith("--"):
        return Edit.replace(span, f"--{new}")
    quote = text[:1] if text[:1] in ('"', "'") else ""
    return Edit.replace(span, f"{quote}{new}{quote}")


def _shown(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


# ---------------------------------------------------------------------------------------------
# DS701 unknown argument
# ---------------------------------------------------------------------------------------------


def _use_mca(plan) -> bool | None:
    """Does the launch set USE_MCA as LLaMA-Factory reads it (is_env_enabled: true, y, 1)? None: not said."""
    value = plan.env.get("USE_MCA") if plan.env else None
    text = getattr(value, "value", None)
    if text is None:
        return None
    return str(text).lower() in ("true", "y", "1")


def _megatron_core_space():
    """Megatron-Core's argument names, from the newest ms-swift's Megatron set (which mirrors them)."""
    newest = generations("ms-swift")[-1]
    return arg_space(newest.schema_name, ("megatron-sft",))


@rule("DS701", "unknown-training-argument", severity="error", target="launch", fixable=True, consumers=("hf", "swift", "llamafactory", "megatron"))
def unknown_training_argument(plan, context):
    """A training argument the consumer's parser does not have in the version in use.

    ## What it checks
    ms-swift parses its command line (and the YAML it turns into flags) with `HfArgumentParser`
    and stops with `ValueError: remaining_argv: ['--sft_type', 'lora']` on anything left over
    (swift/pipelines/base.py). LLaMA-Factory raises `Some keys are not used by the
    HfArgumentParser: [...]` for a YAML key no dataclass has (llamafactory/hparams/parser.py).
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
    the installed package with `detect-installed-versions`, or the nearest pin in
    `requirements*.txt`, `pyproject.toml`, `setup.py`, `setup.cfg`, `environment.yml`, a
    Dockerfile or a lock file; with none, every version dslint knows), from the schema of its
    generation and the lifetimes the projects document (transformers 5.0 removed
    `overwrite_output_dir`, `adafactor`, `no_cuda`, ...). A release that no schema describes
    is judged by the argument names its own wheel defines where they differ from the releases
    the schemas were made from (`schemas/<package>-names.json`, read from every known ms-swift,
    TRL and LLaMA-Factory wheel and one transformers wheel per minor version): ms-swift 3.4's
    `--num_infer_workers` is in neither the 2.6 nor the 3.12 schema. A name that only some of those versions
    lack is info that names them (`--warmup_ratio` with nothing pinned: transformers 5.23 has no
    such field, 4.x has); a name that no known version has is a warning when nothing pins the
    package (a newer release may have added it) and an error when a pin says which versions run.
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
    ctx = _context(plan, context)
    if not ctx.active:
        return
    owned = OWNED_ELSEWHERE.get(ctx.package, set())
    megatron = _megatron_core_space() if ctx.package == "llamafactory" and _use_mca(plan) is not False else None
    spaces = [arg_space(g.schema_name, ctx.sets) for g in generations(ctx.package)]
    for name, arg in plan.args.items():
        if not name or name in owned or name.startswith("$") or name == "ENV":
            continue
        life = documented(ctx.package, name)
        having = [g for g, space in zip(generations(ctx.package), spaces) if space.lookup(name) is not None]
        if life is None and len(having) == len(spaces):
            continue  # every generation has it
        if ctx.space.lookup(name) is None and any(space.lookup(name) is not None for space in ctx.extra_spaces):
            continue  # a TRL field of a transformers launch
        if megatron is not None and megatron.lookup(name) is not None:
            continue  # with USE_MCA=1 LLaMA-Factory parses mcore_adapter's TrainingArguments, Megatron-Core's names
        if not ctx.from_yaml(arg) and ctx.space.prefix_match(name, ctx.own):
            continue  # argparse accepts a unique prefix of an option on the command line
        if name.lstrip("-").replace("-", "_") in ctx.own:
            continue  # a field or flag the program's own parsers define
        if name.lstrip("-").replace("-", "_") in ctx.vendored:
            continue  # a field of the argument dataclasses of the checkout the launch runs
        if not ctx.strict and not having and life is None:
            continue  # a custom script's own dataclass field
        verdict = ctx.in_use.judge_name(ctx.sets, name)
        if not verdict.anywhere:
            continue
        own_verdict = ctx.parsers is not None and not having and life is None and verdict.everywhere
        target, why = None, ""
        if life is not None and life.renamed_to and ctx.space.lookup(life.renamed_to) is not None:
            target, why = life.renamed_to, life.source
        else:
            for gen in having:
                prop = arg_space(gen.schema_name, ctx.sets).lookup(name)[1]
                replaced = prop.get("x-dslint-replaced-by")
                if replaced and ctx.space.lookup(replaced) is not None:
                    target, why = replaced, f"{PACKAGE_LABEL[ctx.package]} {gen.version}'s help text says to use it"
                    break
            if target is None and ctx.own:
                close = difflib.get_close_matches(name, list(ctx.own), n=1, cutoff=0.75)
                target = close[0] if close else None
            if target is None:
                target = ctx.space.closest(name)
        if target == name:
            target = None  # the newest version has it: older ones lack it
        label = ctx.label()
        flag = f"--{name}" if not ctx.from_yaml(arg) else name
        if ctx.package == "ms-swift":
            effect = f"ms-swift stops with ValueError: remaining_argv: ['{flag}', ...]"
        elif ctx.package == "llamafactory":
            effect = f"LLaMA-Factory raises 'Some keys are not used by the HfArgumentParser: [\\'{name}\\']'"
        elif ctx.parsers is not None and ctx.parsers.tolerant:
            effect = f"the program's parser returns it unused and the run goes on without it ({ctx.parsers_text()})"
        elif ctx.parsers is not None:
            effect = f"the program's parsers do not accept it ({ctx.parsers_text()})"
        else:
            effect = "HfArgumentParser does not accept it (parse_dict/parse_args raise on unused keys)"
        message = f"{flag} is not an argument of {plan.program.program if own_verdict else verdict.where()}"
        note = effect
        if having:
            note += f"; it exists in {label} {', '.join(g.version for g in having)}"
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
        severity = verdict.severity(unpinned=Severity.WARNING)
        if ctx.parsers is not None and ctx.parsers.tolerant and ctx.package not in ("ms-swift", "llamafactory"):
            severity = min(severity or Severity.ERROR, Severity.WARNING)  # ignored, not fatal
        yield Finding(arg.name_span or arg.span or plan.span, message, related=[ctx.version_related()], fix=fix,
                      severity=severity, note=note, help=help)


# ---------------------------------------------------------------------------------------------
# DS702 value types and YAML 1.1 traps
# ---------------------------------------------------------------------------------------------


def _json_types(prop: dict) -> set[str]:
    kinds: set[str] = set()
    if "type" in prop:
        kinds.update(prop["type"] if isinstance(prop["type"], list) else [prop["type"]])
    for branch in prop.get("anyOf", []):
        kinds.update(_json_types(branch))
    if "enum" in prop:
        for value in prop["enum"]:
            kinds.add({bool: "boolean", int: "integer", float: "number", str: "string", type(None): "null"}.get(type(value), "string"))
    return kinds


def _cli_convert(prop: dict, token: str):
    """What argparse makes of one command-line token for this field: (ok, value)."""
    kind = prop.get("x-dslint-cli-type")
    if kind == "float":
        try:
            return True, float(token)
        except ValueError:
            return False, None
    if kind == "int":
        try:
            return True, int(token)
        except ValueError:
            return False, None
    if kind == "bool":
        low = token.lower()
        if low in ("yes", "true", "t", "y", "1"):
            return True, True
        if low in ("no", "false", "f", "n", "0"):
            return True, False
        return False, None
    return True, token


@rule("DS702", "training-value-type", severity="error", target="launch", fixable=True, consumers=("hf", "swift", "llamafactory", "megatron"))
def training_value_type(plan, context):
    """A training argument's value is not of the type the consumer reads it as (YAML 1.1 traps included).

    ## What it checks
    - `learning_rate: 1e-4` in YAML: PyYAML (YAML 1.1) reads a float without a dot as a **string**.
      Readers that pass YAML values straight to the dataclass (`HfArgumentParser.parse_yaml_file`
      in training scripts, LLaMA-Factory before 0.9) hand `"1e-4"` to the optimizer. ms-swift
      turns each YAML value into a command-line token and LLaMA-Factory 0.9 reads YAML with
      OmegaConf, so both convert it; there it is reported as a warning only where the reader is
      unknown. Use `1.0e-4`.
    - A command-line token argparse cannot convert (`--per_device_train_batch_size auto`,
      `--learning_rate 2e-5,`): `error: argument --x: invalid float value`.
    - A YAML value of the wrong kind for a numeric or boolean field (`num_train_epochs: three`).

    ## Why it matters
    A token argparse cannot convert stops the job while it parses its arguments, after the
    queue wait. A YAML string gets much further: `TrainingArguments` keeps `"1e-4"` without a
    word, the model and data load, and only the optimizer built when `train()` begins
    (transformers trainer.py `Trainer.create_optimizer`) fails, with `TypeError: '<=' not
    supported between instances of 'float' and 'str'`.

    ## Example
    ```yaml
    learning_rate: 1e-4
    ```
    Use instead: `learning_rate: 1.0e-4`.

    ## Fix safety
    Safe: `1.0e-4` is the same number, and a float for every YAML reader.
    """
    ctx = _context(plan, context)
    if not ctx.active:
        return
    reader = ctx.reader()
    for name, arg, field, prop, negated in ctx.known_args():
        if negated:
            continue
        kinds = _json_types(prop)
        node = ctx.node(arg)
        if node is not None:
            if not isinstance(node, Scalar) or node.style != "plain":
                continue
            raw = node.span.text
            if isinstance(node.value, str) and _FLOAT_AS_STRING.match(raw) and kinds & {"number", "integer"} and "string" not in kinds:
                fixed = _float_text(raw)
                if reader == "tokens":
                    continue  # converted by the consumer
                severity = Severity.WARNING
                who = "readers that pass YAML values unchanged to the dataclass (HfArgumentParser.parse_yaml_file/parse_dict) keep it a string"
                if ctx.package == "llamafactory":
                    verdict = _pyyaml_reader(ctx)
                    if not verdict.anywhere:
                        continue  # OmegaConf (LLaMA-Factory 0.9) converts it
                    who = f"{verdict.where()} reads YAML with PyYAML and passes values unchanged"
                    if not verdict.everywhere:
                        who += f" ({verdict.candidates.why()})"
                    severity = verdict.severity()
                yield Finding(
                    node.span,
                    f"{name}: {raw} is the string '{raw}' in YAML 1.1",
                    note=f"PyYAML needs a dot ({fixed}); {who}, and the optimizer or comparison fails with TypeError",
                    fix=Fix.safe(f"Write {fixed}", Edit.replace(node.span, fixed), any_reader=True),
                    severity=severity,
                )
                continue
            value = node.value
            if isinstance(value, bool) or value is None:
                continue  # DS703 (booleans) / null
            if isinstance(value, str) and kinds and not kinds & {"string", "object", "array"} and reader != "tokens":
                if "number" in kinds or "integer" in kinds:
                    try:
                        float(value)
                        continue
                    except ValueError:
                        pass
                yield Finding(node.span, f"{name}: {_shown(value)} is a string, but {ctx.label()} expects "
                              f"{prop.get('x-dslint-python-type', '/'.join(sorted(kinds)))}",
                              severity=None if ctx.package == "llamafactory" and _pyyaml_reader(ctx).everywhere
                              and _pyyaml_reader(ctx).pinned else Severity.WARNING)
            elif reader == "tokens" and not isinstance(value, (list, dict)):
                ok, _ = _cli_convert(prop, str(value))
                if not ok:
                    yield Finding(node.span, f"{name}: {_shown(str(value))} is not a valid {prop.get('x-dslint-cli-type')} value",
                                  note="ms-swift passes it to argparse, which rejects it")
            continue
        # a command-line token
        if arg.value is True or arg.value is None or arg.span is None or arg.assumed:
            continue
        tokens = arg.value if isinstance(arg.value, list) else [arg.value]
        if "array" not in _json_types(prop):
            # argparse gives a field that is no list one word (a bool at most one: nargs="?");
            # the words after it are positionals, left over or returned as remaining strings
            tokens = tokens[:1]
        for token in tokens:
            if not isinstance(token, str) or "$" in token:
                continue
            ok, _ = _cli_convert(prop, token)
            if not ok:
                defined = prop.get("x-dslint-defined-at")
                who = f"{plan.program.program} ({defined})" if defined else ctx.label()
                yield Finding(arg.span, f"--{name} {token}: argparse rejects it (invalid {prop.get('x-dslint-cli-type')} value)",
                              note=f"{who} expects {prop.get('x-dslint-python-type', '?')}",
                              related=[] if defined else [ctx.version_related()])
                break


def _pyyaml_reader(ctx: _Context):
    """Where LLaMA-Factory reads YAML with PyYAML (0.8) rather than OmegaConf (0.9), among the candidates."""
    return ctx.in_use.judge(ctx.sets, lambda space: space.reader.get("loader") != "omegaconf", spelling=False)


def _float_text(raw: str) -> str:
    """``1e-4`` -> ``1.0e-4``, ``5E5`` -> ``5.0e+5``: the spelling PyYAML's float resolver needs."""
    mantissa, _, exponent = raw.replace("E", "e").partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    elif mantissa.endswith("."):
        mantissa += "0"
    if exponent[:1] not in ("+", "-"):
        exponent = "+" + exponent
    return f"{mantissa}e{exponent}"


@rule("DS703", "yaml11-scalar-trap", severity="error", target="launch", fixable=True, consumers=("hf", "swift", "llamafactory", "megatron"))
def yaml11_scalar_trap(plan, context):
    """A plain YAML scalar that YAML 1.1 reads as something else: `no` → false, `010` → 8.

    ## What it checks
    PyYAML (and OmegaConf) resolve plain scalars with YAML 1.1 rules: `yes/no/on/off` in any
    of their spellings (`NO`, `Off`) are booleans, `010` is octal 8, `0x10` is 16 and `1:30` is 90.
    - A boolean word for a field that takes a string or a choice (`save_strategy: no`,
      `eval_strategy: no`, `lr_scheduler_type: off`): the consumer gets `False` (ms-swift the
      token `False`), which is not a valid choice: error. Quote it: `"no"`.
    - An octal, hexadecimal or base-60 number for a numeric field (warning).

    ## Why it matters
    The boolean case stops the job while it parses its arguments, after the queue wait, with an
    error about a value nobody wrote: `False is not a valid SaveStrategy` from a YAML file, or
    `invalid choice: 'False'` from the command line (transformers 5.23 `HfArgumentParser`).
    The number case stops nothing: the run uses 8 where the file says `010`, and everyone who
    reads the file sees 10.

    ## Example
    ```yaml
    save_strategy: no
    ```
    Use instead: `save_strategy: "no"`.

    ## Fix safety
    Quoting a boolean word is safe (the string is what the choice needs). A word that is not one
    of the choices even as a string (`save_strategy: no` for ms-swift 4.6, which has only
    `steps` and `epoch`) gets no fix: quoting it would trade this error for an invalid choice.
    Rewriting `010` as `10` is unsafe: it changes the value to what was probably meant.
    """
    ctx = _context(plan, context)
    if not ctx.active:
        return
    for name, arg in plan.args.items():
        node = ctx.node(arg)
        if node is None or not isinstance(node, Scalar) or node.style != "plain":
            continue
        found = ctx.lookup(name)
        if found is None:
            continue
        field, prop, _ = found
        kinds = _json_types(prop)
        raw = node.span.text
        if isinstance(node.value, bool) and _BOOL_WORDS.match(raw) and raw.lower() not in ("true", "false"):
            if "boolean" in kinds:
                continue
            choices = prop.get("enum")
            if choices is not None:
                valid = [c for c in choices if c is not None]
                if raw.lower() in [str(c).lower() for c in valid] or raw in valid:
                    yield Finding(
                        node.span,
                        f"{name}: {raw} is the boolean {node.value} in YAML 1.1, not the choice '{raw.lower()}'",
                        note=f"{ctx.label()} rejects it (valid: {', '.join(map(str, valid))})",
                        fix=Fix.safe(f'Quote it: "{raw.lower()}"', Edit.replace(node.span, f'"{raw.lower()}"')),
                    )
                else:  # no fix: quoted, the word is still not a choice (DS705); which choice was meant is the author's call
                    yield Finding(node.span, f"{name}: {raw} is the boolean {node.value} in YAML 1.1, not a choice",
                                  note=f"{ctx.label()} expects one of {', '.join(map(str, valid))}")
            elif "string" in kinds:
                yield Finding(node.span, f"{name}: {raw} is the boolean {node.value} in YAML 1.1, not the string '{raw}'",
                              fix=Fix.safe(f'Quote it: "{raw}"', Edit.replace(node.span, f'"{raw}"')),
                              severity=Severity.WARNING)
            continue
        if isinstance(node.value, int) and not isinstance(node.value, bool):
            kind = "octal" if _OCTAL.match(raw) and raw.strip("+-") != "0" else "hexadecimal" if _HEX.match(raw) else \
                "base-60" if _SEXAGESIMAL.match(raw) else None
            if kind is None:
                continue
            plain = raw.lstrip("0") or "0" if kind == "octal" else None
            fix = Fix.unsafe(f"Write {plain}", Edit.replace(node.span, plain)) if plain else None
            yield Finding(node.span, f"{name}: {raw} is the {kind} number {node.value} in YAML 1.1",
                          fix=fix, severity=Severity.WARNING)


@rule("DS704", "list-as-comma-string", severity="warning", target="launch", fixable=True, consumers=("hf", "swift", "llamafactory", "megatron"))
def list_as_comma_string(plan, context):
    """A list argument given as one comma-separated string where the parser wants several tokens.

    ## What it checks
    ms-swift's list fields (`--dataset`, `--target_modules`, `--val_dataset`, ...) are
    `nargs='+'`: each value is its own token (`--dataset a b`, or a YAML list). A comma string
    (`dataset: a,b`, `--target_modules q_proj,v_proj`) arrives as a single item `"a,b"`, which
    ms-swift does not split. LLaMA-Factory documents comma strings for its own keys
    (`dataset: a,b`, `lora_target: q_proj,v_proj`) and splits them, so it is not judged.

    ## Why it matters
    ms-swift treats the whole string as one name. PEFT compares each target with the end of the
    module names (peft tuners/tuners_utils.py `check_target_module_exists`), so
    `--target_modules q_proj,v_proj` matches nothing and the job stops after the model has
    loaded: `Target modules {'q_proj,v_proj'} not found in the base model`. `dataset: a,b` is
    looked up as one dataset called `a,b` (swift/dataset/dataset_syntax.py `DatasetSyntax.parse`
    splits only at `::`, `:` and `#`).

    ## Example
    ```yaml
    dataset: alpaca-zh,alpaca-en
    ```
    Use instead: `dataset: [alpaca-zh, alpaca-en]`.

    ## Fix safety
    Unsafe: a comma can be part of a value (a regex in `target_modules`).
    """
    ctx = _context(plan, context)
    if not ctx.active or ctx.package != "ms-swift":
        return
    for name, arg, _, prop, _ in ctx.known_args():
        if prop.get("x-dslint-nargs") not in ("+", "*"):
            continue
        node = ctx.node(arg)
        value = node.value if isinstance(node, Scalar) else (arg.value if node is None else None)
        if not isinstance(value, str) or "," not in value or "{" in value or "(" in value or "$" in value:
            continue
        parts = [p.strip() for p in value.split(",")]
        if not all(parts):
            continue
        fix = None
        if isinstance(node, Scalar) and node.style == "plain":
            fix = Fix.unsafe("Write a YAML list", Edit.replace(node.span, "[" + ", ".join(parts) + "]"))
        elif node is None and arg.span is not None and arg.span.text == value:
            fix = Fix.unsafe("Pass each value as its own token", Edit.replace(arg.span, " ".join(parts)))
        yield Finding((node.span if node is not None else arg.span) or plan.span,
                      f"{name} takes several values (nargs='+'), but '{value}' is one token", fix=fix,
                      note=f"ms-swift reads it as the single item '{value}'")


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
    ctx = _context(plan, context)
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
        yield Finding(span or plan.span, f"{name}: {_shown(value)} is not a valid choice for {verdict.where()}",
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


# ---------------------------------------------------------------------------------------------
# DS71x contradictions the consumers reject at start-up
# ---------------------------------------------------------------------------------------------


def _truthy(value) -> bool | None:
    if value is True or value is False:
        return value
    if value is None:
        return None
    text = str(value).strip().lower()
    if text in ("yes", "true", "t", "y", "1"):
        return True
    if text in ("no", "false", "f", "n", "0", "", "none"):
        return False
    return None


def _zero_stage(plan) -> tuple[int | None, Any]:
    ref = plan.deepspeed
    if ref is None or ref.config is None:
        return None, None
    zero = ref.config.get("zero_optimization")
    if not isinstance(zero, Mapping):
        return None, None
    stage = zero.get("stage")
    if isinstance(stage, Scalar) and isinstance(stage.value, int) and not isinstance(stage.value, bool):
        return stage.value, stage
    return None, None


def _arg_related(arg) -> Related:
    return Related(f"{arg.name} = {arg.value!r} ({arg.origin})", arg.span)


@rule("DS710", "fsdp-with-deepspeed", severity="error", target="launch", consumers=("hf", "swift", "llamafactory", "megatron"))
def fsdp_with_deepspeed(plan, context):
    """`--fsdp` and `--deepspeed` together: the Trainer refuses to start.

    ## What it checks
    transformers' Trainer raises `ValueError: Using --fsdp xxx together with --deepspeed is not
    possible, deactivate one of those flags.` (trainer.py); ms-swift raises `FSDP2 is not
    compatible with DeepSpeed.` (swift/arguments/sft_args.py). LLaMA-Factory hands both to the
    Trainer. An empty `--fsdp ""` or `fsdp: false` is FSDP off.

    ## Why it matters
    The job dies at start-up, after its queue wait. ms-swift refuses while it parses its
    arguments (`SftArguments._init_fsdp`); the Trainer refuses in its constructor
    (`Trainer.__init__`), which takes the model, so a plain transformers script or LLaMA-Factory
    has already loaded the model (and LLaMA-Factory tokenized the dataset) when it fails.

    ## Example
    `torchrun train.py --fsdp "full_shard auto_wrap" --deepspeed ds_z3.json`
    Use instead: one of the two.
    """
    if plan.consumer not in ("hf", "swift", "llamafactory") or not _context(plan, context).active:
        return
    fsdp, ds = plan.arg("fsdp"), plan.arg("deepspeed")
    if fsdp is None or ds is None:
        return
    if fsdp.value in (False, None, "", "false", "False") or ds.value in (False, None, "", "false", "False", True):
        return
    if isinstance(fsdp.value, list) and not fsdp.value:
        return
    who = "ms-swift raises 'FSDP2 is not compatible with DeepSpeed.'" if plan.consumer == "swift" else \
        "the Trainer raises 'Using --fsdp xxx together with --deepspeed is not possible, deactivate one of those flags.'"
    yield Finding(fsdp.name_span or fsdp.span or plan.span, "fsdp together with deepspeed", note=who,
                  related=[_arg_related(ds)])


def _consumer_default(ctx: _Context, name: str):
    found = ctx.lookup(name)
    return found[1].get("default") if found else None


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
    ctx = _context(plan, context)
    if not ctx.active:
        return
    best = plan.arg("load_best_model_at_end")
    if best is None or not _truthy(best.value):
        return

    def value(name, *aliases):
        arg = plan.arg(name, *aliases)
        if arg is not None:
            return arg.value, arg
        return _consumer_default(ctx, name), None

    save, save_arg = value("save_strategy")
    evals, eval_arg = value("eval_strategy", "evaluation_strategy")
    if isinstance(save, bool) or isinstance(evals, bool):
        return  # DS703
    if ctx.package == "ms-swift" and evals is None:
        evals = save
    if save is None or evals is None or str(save) == "best":
        return
    related = [r for r in (_arg_related(a) for a in (save_arg, eval_arg) if a is not None)]
    if str(evals) != str(save):
        yield Finding(best.name_span or best.span or plan.span,
                      f"load_best_model_at_end with eval_strategy {evals!s} and save_strategy {save!s}"
                      f"{' (defaults)' if not related else ''}", related=related + [ctx.version_related()],
                      note="TrainingArguments raises '--load_best_model_at_end requires the save and eval strategy to match'")
        return
    if str(evals) != "steps":
        return
    save_steps, ss_arg = value("save_steps")
    eval_steps, es_arg = value("eval_steps")
    if ctx.package == "ms-swift" and eval_steps is None:
        eval_steps = save_steps
    if eval_steps is None and ctx.package != "ms-swift":
        eval_steps = plan.arg("logging_steps").value if plan.arg("logging_steps") else _consumer_default(ctx, "logging_steps")
    try:
        s, e = float(save_steps), float(eval_steps)
    except (TypeError, ValueError):
        return
    if s >= 1 and e >= 1 and s % e:
        related = [_arg_related(a) for a in (ss_arg, es_arg) if a is not None]
        yield Finding(best.name_span or best.span or plan.span,
                      f"load_best_model_at_end with save_steps {save_steps} not a multiple of eval_steps {eval_steps}",
                      note="TrainingArguments raises 'requires the saving steps to be a round multiple of the evaluation steps'",
                      related=related + [ctx.version_related()])


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
    ctx = _context(plan, context)
    if not ctx.active or ctx.package != "llamafactory" or "train" not in (ctx.sets or ("train",)):
        return
    if plan.arg("eval_dataset") is not None and plan.arg("eval_dataset").value not in (None, "", []):
        return
    val = plan.arg("val_size")
    try:
        if val is not None and float(val.value) > 1e-6:
            return
    except (TypeError, ValueError):
        return
    for name in ("do_eval", "do_predict", "predict_with_generate"):
        arg = plan.arg(name)
        if arg is not None and _truthy(arg.value):
            # get_train_args checks it from 0.8.3 on; before, what happens depends on the workflow.
            verdict = ctx.in_use.candidates.judge(lambda version: True if compare(version, "0.8.3") >= 0 else None)
            if verdict.anywhere:
                note = f"LLaMA-Factory raises {_no_eval_data_message(name, verdict.failing)}"
                yield Finding(arg.name_span or arg.span or plan.span, f"{name} without eval_dataset or val_size",
                              related=[ctx.version_related()], severity=verdict.severity(), note=verdict.qualify(note))
            return
    strategy = plan.arg("eval_strategy", "evaluation_strategy")
    train = plan.arg("do_train")
    if strategy is not None and isinstance(strategy.value, str) and strategy.value not in ("no",) and train is not None and _truthy(train.value):
        yield from _eval_strategy_without_dataset(plan, context, ctx, strategy)


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


@rule("DS713", "incompatible-with-zero3", severity="error", target="launch", consumers=("llamafactory",))
def incompatible_with_zero3(plan, context):
    """LLaMA-Factory options it rejects under DeepSpeed ZeRO-3.

    ## What it checks
    With a DeepSpeed config at `zero_optimization.stage: 3` (llamafactory/hparams/parser.py,
    model/model_utils/quantization.py):
    - `pure_bf16: true`: `` `pure_bf16` is incompatible with DeepSpeed ZeRO-3.``
    - `quantization_bit` other than 4 with bitsandbytes (the default method): `Only 4-bit
      quantized model can use fsdp+qlora or auto device map.`; HQQ/EETQ quantization: `... is
      incompatible with DeepSpeed ZeRO-3 or FSDP.`
    - `predict_with_generate: true`: `` `predict_with_generate` is incompatible with DeepSpeed ZeRO-3.``
    - `use_unsloth`: `Unsloth is incompatible with DeepSpeed ZeRO-3.`; `pissa_init`: `Please use
      scripts/pissa_init.py to initialize PiSSA in DeepSpeed ZeRO-3.`

    ## Why it matters
    Each one ends the job at start-up, after its queue wait. Most are raised while LLaMA-Factory
    parses its arguments (`get_train_args`); the quantization ones only while the model loads
    (`configure_quantization`), after the dataset has already been tokenized
    (llamafactory/train/sft/workflow.py `run_sft` calls `get_dataset` before `load_model`).

    ## Example
    `pure_bf16: true` with `deepspeed: examples/deepspeed/ds_z3_config.json`.
    Use instead: `bf16: true`.
    """
    if plan.consumer != "llamafactory":
        return
    stage, stage_node = _zero_stage(plan)
    if stage != 3:
        return
    related = [Related("zero_optimization.stage 3 in the DeepSpeed config", stage_node.span if stage_node is not None else None)]
    checks = (
        ("pure_bf16", "`pure_bf16` is incompatible with DeepSpeed ZeRO-3."),
        ("predict_with_generate", "`predict_with_generate` is incompatible with DeepSpeed ZeRO-3."),
        ("use_unsloth", "Unsloth is incompatible with DeepSpeed ZeRO-3."),
        ("pissa_init", "Please use scripts/pissa_init.py to initialize PiSSA in DeepSpeed ZeRO-3."),
    )
    for name, message in checks:
        arg = plan.arg(name)
        if arg is not None and _truthy(arg.value):
            yield Finding(arg.name_span or arg.span or plan.span, f"{name} with DeepSpeed ZeRO-3",
                          note=f"LLaMA-Factory raises '{message}'", related=related)
    bits = plan.arg("quantization_bit")
    if bits is None or bits.value is None:
        return
    method = plan.arg("quantization_method")
    method_value = str(method.value).lower() if method is not None and method.value is not None else "bnb"
    try:
        nbits = int(bits.value)
    except (TypeError, ValueError):
        return
    if method_value in ("bnb", "bitsandbytes") and nbits != 4:
        yield Finding(bits.name_span or bits.span or plan.span, f"quantization_bit {nbits} with DeepSpeed ZeRO-3",
                      note="LLaMA-Factory raises 'Only 4-bit quantized model can use fsdp+qlora or auto device map.'", related=related)
    elif method_value in ("hqq", "eetq"):
        yield Finding(bits.name_span or bits.span or plan.span, f"{method_value.upper()} quantization with DeepSpeed ZeRO-3",
                      note=f"LLaMA-Factory raises '{method_value.upper()} quantization is incompatible with DeepSpeed ZeRO-3 or FSDP.'",
                      related=related)


# ---------------------------------------------------------------------------------------------
# DS722 ZeRO-3, non-reentrant activation checkpointing and frozen parameters
# ---------------------------------------------------------------------------------------------

#: The first DeepSpeed with PR #8148 ("Z3: Support for activation ckpt with frozen params").
_REENTRANT_FIXED_IN = "0.19.3"
# `use_reentrant: false` inside a JSON (or Python-repr) string, as written on a command line or in YAML.
_USE_REENTRANT_FALSE = re.compile(r"""use_reentrant[\\"']*\s*:\s*(false|False)\b""")


def _use_reentrant_false(ctx: _Context, arg):
    """(span to point at, Edit that makes it true or None) when ``gradient_checkpointing_kwargs``
    explicitly sets ``use_reentrant`` to false; None otherwise."""
    value = arg.value
    node = ctx.node(arg)
    if isinstance(value, dict):
        if value.get("use_reentrant") is not False:
            return None
        entry = node.entry("use_reentrant") if isinstance(node, Mapping) else None
        target = entry.value if entry is not None else None
        if isinstance(target, Scalar) and target.style == "plain" and target.value is False:
            return target.span, Edit.replace(target.span, "true")
        return (target.span if target is not None else arg.span), None
    if not isinstance(value, str) or "$" in value:
        return None
    try:
        parsed = json.loads(value)
    except ValueError:
        parsed = None  # ms-swift repairs malformed JSON (json_repair); judge the text instead
    written_false = len(_USE_REENTRANT_FALSE.findall(value))
    if isinstance(parsed, dict):
        if parsed.get("use_reentrant") is not False:
            return None
    elif written_false != 1:
        return None
    span = node.span if isinstance(node, Scalar) else arg.span
    if span is None:
        return None
    hits = list(_USE_REENTRANT_FALSE.finditer(span.text))
    if len(hits) != 1 or written_false != 1:
        return span, None  # not one exact place to edit
    word = hits[0]
    start, end = span.start + word.start(1), span.start + word.end(1)
    edit = Edit(span.source, start, end, "True" if word.group(1) == "False" else "true")
    return span, edit


def _deepspeed_before_fix(plan, context):
    """Where the DeepSpeed versions the launch may run with lack the fix; None when none does."""
    from dslint.evidence.versions import candidates

    start = plan.origin.path if plan.origin is not None else None
    verdict = candidates("deepspeed", start, context.settings).judge(lambda v: compare(v, _REENTRANT_FIXED_IN) < 0)
    return verdict if verdict.anywhere else None


@rule("DS722", "zero3-non-reentrant-checkpointing", severity="error", target="launch", fixable=True, consumers=("hf", "swift", "llamafactory", "megatron"))
def zero3_non_reentrant_checkpointing(plan, context):
    """Non-reentrant gradient checkpointing with frozen weights under ZeRO-3 crashes in the first backward (DeepSpeed before 0.19.3).

    ## What it checks
    An ms-swift or LLaMA-Factory launch that trains adapters (the base model is frozen), with
    DeepSpeed ZeRO-3 (`zero_optimization.stage: 3`, also through ms-swift's `--deepspeed zero3`
    preset), gradient checkpointing on, and torch's non-reentrant checkpoint chosen explicitly:
    - ms-swift 3.x/4.x: `--gradient_checkpointing_kwargs '{"use_reentrant": false}'` (or the YAML
      equivalent). ms-swift's `_fix_gradient_checkpointing` (swift/trainers/mixin.py) takes
      `use_reentrant` from `gradient_checkpointing_kwargs` when it is set and uses `True` under
      DeepSpeed otherwise, so only the explicit `false` is reported; with `--tuner_type`
      (`--train_type` in 3.x) other than `full` (the default is `lora`) and
      `--gradient_checkpointing` not turned off (it is on by default).
    - LLaMA-Factory 0.9: `use_reentrant_gc: false` (model/model_utils/checkpointing.py passes
      `gradient_checkpointing_kwargs={"use_reentrant": model_args.use_reentrant_gc}`, default
      true) with `finetuning_type` other than `full` (default `lora`; `freeze` and `oft` freeze
      weights too) and without `disable_gradient_checkpointing: true`. LLaMA-Factory 0.8 always
      uses reentrant checkpointing.

    Not reported: TRL 1.x trainers (they force `use_reentrant=True` for PEFT + ZeRO-3 + gradient
    checkpointing, with a warning), `python train.py` scripts on the HF Trainer (whether the model
    has frozen parameters is not in the launch), and full fine-tuning, even where the consumer
    freezes part of the model (a vision tower).

    The DeepSpeed versions come from the `deepspeed-version` setting, the installed package
    (`detect-installed-versions`) or a pin in the repository: an error when every version they
    allow is before 0.19.3, nothing when all are 0.19.3 or later, and info naming the versions
    that crash when a range (or nothing pinned: every version dslint knows) allows both.

    ## Why it matters
    In the first backward pass, torch recomputes each checkpointed layer, and ZeRO-3 partitions the
    frozen base weights again during that recompute; the run stops with
    `torch.utils.checkpoint.CheckpointError: Recomputed values for the following tensors have
    different metadata than during the forward pass ... saved {'shape': [1024]} vs recomputed
    {'shape': [0]}` after the job waited for its nodes and loaded the model (huggingface/transformers
    issue #47254, huggingface/trl issue #2514, hiyouga/LlamaFactory issue #6438). DeepSpeed PR
    #8148 ("Z3: Support for activation ckpt with frozen params") fixed it in 0.19.3:
    `fetch_sub_module` in deepspeed/runtime/zero/partitioned_param_coordinator.py detects the
    recompute (`in_checkpoint_recompute`); 0.19.2 does not have it.

    ## Example
    ```sh
    swift sft --model Qwen/Qwen2.5-7B-Instruct --deepspeed zero3 \\
        --gradient_checkpointing_kwargs '{"use_reentrant": false}'
    ```
    Use instead: `--gradient_checkpointing_kwargs '{"use_reentrant": true}'` (or leave
    `use_reentrant` out: ms-swift then uses reentrant checkpointing under DeepSpeed), or
    DeepSpeed 0.19.3 or later.

    ## Fix safety
    Unsafe: reentrant checkpointing behaves differently (memory, speed, inputs that need
    `requires_grad`). The fix turns the explicit `false` into `true` where it is one exact value:
    `use_reentrant_gc: false`, a YAML `use_reentrant: false`, or the single `false` after
    `use_reentrant` inside the JSON string.
    """
    if plan.consumer not in ("swift", "llamafactory"):
        return
    ctx = _context(plan, context)
    if not ctx.active:
        return
    stage, stage_node = _zero_stage(plan)
    if stage != 3:
        return
    if ctx.package == "llamafactory":
        if "train" not in (ctx.sets or ("train",)) or ctx.lookup("use_reentrant_gc") is None:
            return  # not training, or LLaMA-Factory 0.8 (reentrant always)
        arg = plan.arg("use_reentrant_gc")
        if arg is None or arg.assumed or _truthy(arg.value) is not False:
            return
        off = plan.arg("disable_gradient_checkpointing")
        if off is not None and (off.assumed or _truthy(off.value) is not False):
            return
        tuner_name = "finetuning_type"
        tuner = plan.arg(tuner_name)
        node = ctx.node(arg)
        span = node.span if isinstance(node, Scalar) else arg.span
        edit = None
        if span is not None and span.text.strip("'\"").lower() in ("false", "no", "off", "n", "f", "0"):
            edit = Edit.replace(span, "true")
        what = "use_reentrant_gc false"
        remedy = "set use_reentrant_gc: true (the default)"
        fix_title = "Set use_reentrant_gc to true"
    else:
        if ctx.lookup("gradient_checkpointing_kwargs") is None:
            return  # ms-swift 2.x
        on = plan.arg("gradient_checkpointing")
        if on is not None and _truthy(on.value) is False:
            return
        if plan.arg("no_gradient_checkpointing") is not None:
            return
        arg = plan.arg("gradient_checkpointing_kwargs")
        if arg is None or arg.assumed:
            return
        found = _use_reentrant_false(ctx, arg)
        if found is None:
            return
        span, edit = found
        tuner = plan.arg("tuner_type", "train_type", "sft_type")
        tuner_name = tuner.name if tuner is not None else \
            next((n for n in ("tuner_type", "train_type", "sft_type") if ctx.lookup(n) is not None), "tuner_type")
        what = "use_reentrant false in gradient_checkpointing_kwargs"
        remedy = "set use_reentrant to true or leave it out (ms-swift then checkpoints reentrantly under DeepSpeed)"
        fix_title = "Set use_reentrant to true"
    if tuner is not None:
        if tuner.assumed or not isinstance(tuner.value, str) or not tuner.value.strip() or "$" in tuner.value:
            return  # cannot tell what is trained
        method = tuner.value
        tuner_related = _arg_related(tuner)
    else:
        method = _consumer_default(ctx, tuner_name)
        if not isinstance(method, str):
            return
        tuner_related = Related(f"{tuner_name} {method} ({ctx.label()}'s default)")
    if method.strip().lower() == "full":
        return
    verdict = _deepspeed_before_fix(plan, context)
    if verdict is None:
        return
    related = [Related("zero_optimization.stage 3 in the DeepSpeed config", stage_node.span if stage_node is not None else None),
               tuner_related, Related(verdict.candidates.describe())]
    tail = "" if verdict.everywhere else f" ({verdict.candidates.why()})"
    message = f"non-reentrant checkpointing of {method} training under ZeRO-3 crashes on {verdict.where()}"
    note = (f"{what}: in the first backward, torch.utils.checkpoint.CheckpointError 'Recomputed values for the following "
            "tensors have different metadata than during the forward pass' (saved shape [N], recomputed [0]), because ZeRO-3 "
            f"partitions the frozen base weights again during the recompute{tail}")
    fix = Fix.unsafe(fix_title, edit) if edit is not None else None
    yield Finding(span or arg.name_span or plan.span, message, related=related, fix=fix, severity=verdict.severity(),
                  note=note, help=f"{remedy}, or use DeepSpeed >= {_REENTRANT_FIXED_IN}")


# ---------------------------------------------------------------------------------------------
# DS720 config files the consumer will not read as a config
# ---------------------------------------------------------------------------------------------

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
    ctx = _context(plan, context)
    if not ctx.active or plan.command is None or ctx.package not in ("ms-swift", "llamafactory"):
        return
    launch = plan.command
    config = launch.config_file
    label = ctx.label()
    if config is not None and config.value:
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
    for index, option in enumerate(launch.program_args):
        if index == 0 and option.name is None:
            continue  # the first argument of the program (src/train.py cfg.yaml) is read as the config
        values = option.values[1:] if option.name is not None else option.values
        for word in values:
            text = word.value
            if not text or not text.lower().endswith(CONFIG_SUFFIXES) or "$" in text:
                continue
            if option.name is not None:
                found = ctx.lookup(option.name.lstrip("-"))
                if found is not None and found[1].get("x-dslint-nargs") in ("+", "*"):
                    continue  # a list argument may hold files
            yield Finding(word.span, f"'{text}' is not the first argument, so {label} does not read it as a config",
                          note="it is left over and the parser stops" + (" (remaining_argv)" if ctx.package == "ms-swift" else ""),
                          related=[ctx.version_related()], severity=Severity.WARNING if option.name is not None else None)


def _reader_of(ctx: _Context, verdict) -> dict:
    """How the newest version a verdict names reads its config (schemas' x-dslint-reader)."""
    newest = (verdict.failing or verdict.unsure)[-1]
    return arg_space(_training.primary(ctx.package, newest).schema_name, ctx.sets).reader


# ---------------------------------------------------------------------------------------------
# DS721 accelerate config file
# ---------------------------------------------------------------------------------------------


@rule("DS721", "accelerate-unknown-key", severity="error", target="document", kinds=("accelerate-yaml",), fixable=True)
def accelerate_unknown_key(document, context):
    """A top-level key of an accelerate config file that accelerate does not know.

    ## What it checks
    `accelerate launch --config_file` builds `ClusterConfig(**yaml)` (`SageMakerConfig` for
    `compute_environment: AMAZON_SAGEMAKER`) after converting the legacy `fp16` and
    `dynamo_backend` keys, and raises `ValueError: The config file at ... had unknown keys
    ([...]), please try upgrading your accelerate version` for anything else
    (accelerate/commands/config/config_args.py). Keys differ between versions (`ipex_config`
    was removed, `parallelism_config` added); the version in use comes from settings, the
    installed package or repository pins.

    ## Why it matters
    `accelerate launch` reads the file before it starts a single process
    (`_validate_launch_command` in accelerate/commands/launch.py), so the job ends right after
    its queue wait. The error's advice to upgrade accelerate does not help with a misspelled
    key, and for a key that newer versions removed (`ipex_config`) it points the wrong way.

    ## Example
    `num_process: 8`
    Use instead: `num_processes: 8`.

    ## Fix safety
    Unsafe: the closest key is a guess.
    """
    mapping = document.mapping
    if mapping is None:
        return
    use = in_use("accelerate", document.path, context.settings)
    if use is None:
        return
    env = mapping.get("compute_environment")
    set_name = "sagemaker" if isinstance(env, Scalar) and env.value == "AMAZON_SAGEMAKER" else "cluster"
    space = arg_space(use.generation.schema_name, (set_name,))
    spaces = {g.version: arg_space(g.schema_name, (set_name,)) for g in generations("accelerate")}
    import difflib

    def unknown(space: ArgSpace, key: str) -> bool:
        return key not in space.fields and key not in space.reader.get("legacy-keys", [])

    for entry in mapping.entries:
        key = entry.key
        if not any(unknown(s, key) for s in spaces.values()):
            continue
        verdict = use.judge((set_name,), lambda s: unknown(s, key))
        if not verdict.anywhere:
            continue
        elsewhere = [version for version, s in spaces.items() if not unknown(s, key)]
        close = [] if elsewhere else difflib.get_close_matches(key, list(space.fields), n=1, cutoff=0.75)
        note = "it raises 'The config file ... had unknown keys'"
        if elsewhere:
            note += f"; accelerate {', '.join(elsewhere)} has it"
        from dslint.documents.edits import rename_key

        fix = Fix.unsafe(f"Rename {key} to {close[0]}", rename_key(entry, close[0])) if close and close[0] != key \
            and verdict.everywhere else None
        help = f"did you mean '{close[0]}'?" if close and close[0] != key and fix is None else None
        yield Finding(entry.key_span, f"unknown config key '{key}' for {verdict.where()}", related=[Related(use.describe())], fix=fix,
                      severity=verdict.severity(unpinned=Severity.WARNING), note=note, help=help)
