"""DS702: a training argument's value is not of the type the consumer reads it as."""

from __future__ import annotations

import re

from dslint.diagnostics import Edit, Finding, Fix, Severity
from dslint.documents.model import Scalar
from dslint.rule import rule
from dslint.rules.training_args._common import json_types, shown_value
from dslint.rules.training_args._context import TrainingContext, training_context


# PyYAML's YAML 1.1 resolver, as the consumers load YAML (yaml.safe_load; OmegaConf differs only for floats).
_FLOAT_AS_STRING = re.compile(r"^[-+]?(?:\d[\d_]*)(?:\.\d*)?[eE][-+]?\d+$")  # 1e-4, 5E-5, 1.e-3 (no dot before e)


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


@rule("DS702", "training-value-type", severity="error", target="launch", fix="safe", consumers=("hf", "swift", "llamafactory", "megatron"))
def training_value_type(plan, context):
    """A training argument's value is not of the type the consumer reads it as (YAML 1.1 traps included).

    ## What it checks
    - `learning_rate: 1e-4` in YAML: PyYAML (YAML 1.1) reads a float without a dot as a **string**.
      Readers that pass YAML values straight to the dataclass (`HfArgumentParser.parse_yaml_file`
      in training scripts, LLaMA-Factory before 0.9) hand `"1e-4"` to the optimizer. ms-swift
      turns each YAML value into a command-line token and LLaMA-Factory 0.9 reads YAML with
      OmegaConf, so both convert it. Under a training script of its own it is a warning (the
      script may load the YAML otherwise). Use `1.0e-4`.
    - A command-line token argparse cannot convert (`--per_device_train_batch_size auto`,
      `--learning_rate 2e-5,`): `error: argument --x: invalid float value`.
    - A YAML value of the wrong kind for a numeric or boolean field (`num_train_epochs: three`).

    The values are judged as the established reader reads them: a launch of a known console
    (`swift sft`, `llamafactory-cli`), a program read statically that parses them with
    `HfArgumentParser`/`TrlParser` or its own argparse, or a config whose own keys name
    LLaMA-Factory or ms-swift. A config no launch names with only common keys (`learning_rate`,
    `output_dir`), a launch whose program was not found, and a program that reads its YAML with
    OmegaConf/Hydra (whose floats need no dot) are not judged; nor is a YAML value the program
    assigns itself after parsing (`args.learning_rate = float(...)`). Where only some releases
    keep the string, the releases must be known (a pin or a setting).

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
    ctx = training_context(plan, context)
    if not ctx.active:
        return
    for name, arg, _field, prop, negated in ctx.known_args():
        if negated:
            continue
        node = ctx.node(arg)
        if node is not None:
            if ctx.overwritten(name) is None:  # a YAML value the program replaces after parsing is not the one used
                yield from _yaml_value(ctx, name, prop, node)
        else:
            yield from _command_line_tokens(ctx, name, arg, prop)


def _yaml_value(ctx: TrainingContext, name: str, prop: dict, node):
    """A plain YAML scalar of the training config, against the field's type."""
    if not isinstance(node, Scalar) or node.style != "plain":
        return
    kinds = json_types(prop)
    if isinstance(node.value, str) and _FLOAT_AS_STRING.match(node.span.text) and kinds & {"number", "integer"} \
            and "string" not in kinds:
        yield from _float_as_string(ctx, name, node)
        return
    value = node.value
    if isinstance(value, bool) or value is None:
        return  # DS703 (booleans) / null
    reader = ctx.reader()
    if isinstance(value, str) and kinds and not kinds & {"string", "object", "array"} and reader != "tokens":
        yield from _string_for_number(ctx, name, prop, kinds, node)
    elif reader == "tokens" and not isinstance(value, (list, dict)):
        ok, _ = _cli_convert(prop, str(value))
        if not ok:
            yield Finding(node.span, f"{name}: {shown_value(str(value))} is not a valid {prop.get('x-dslint-cli-type')} value",
                          note="ms-swift passes it to argparse, which rejects it")


def _float_as_string(ctx: TrainingContext, name: str, node):
    """``1e-4``: a string in YAML 1.1, for a numeric field."""
    raw = node.span.text
    fixed = _float_text(raw)
    if ctx.reader() == "tokens":
        return  # converted by the consumer
    kept = _who_keeps_it_a_string(ctx)
    if kept is None:
        return  # OmegaConf (LLaMA-Factory 0.9) converts it
    who, severity = kept
    yield Finding(
        node.span,
        f"{name}: {raw} is the string '{raw}' in YAML 1.1",
        note=f"PyYAML needs a dot ({fixed}); {who}, and the optimizer or comparison fails with TypeError",
        fix=Fix.safe(f"Write {fixed}", Edit.replace(node.span, fixed), any_reader=True),
        severity=severity,
    )


def _who_keeps_it_a_string(ctx: TrainingContext) -> tuple[str, Severity | None] | None:
    """Which readers hand a YAML string to the dataclass unchanged, and the severity that gives; None: none does."""
    if ctx.package != "llamafactory":
        return ("readers that pass YAML values unchanged to the dataclass (HfArgumentParser.parse_yaml_file/parse_dict) "
                "keep it a string"), Severity.WARNING
    verdict = _pyyaml_reader(ctx)
    if not verdict.anywhere:
        return None
    who = f"{verdict.where()} reads YAML with PyYAML and passes values unchanged"
    if not verdict.everywhere:
        who += f" ({verdict.candidates.why()})"
    return who, verdict.severity()


def _string_for_number(ctx: TrainingContext, name: str, prop: dict, kinds: set[str], node):
    """A YAML string for a field that is no string (a number written as one is converted)."""
    value = node.value
    if ("number" in kinds or "integer" in kinds) and _is_number(value):
        return
    yield Finding(node.span, f"{name}: {shown_value(value)} is a string, but {ctx.label()} expects "
                  f"{prop.get('x-dslint-python-type', '/'.join(sorted(kinds)))}",
                  severity=None if ctx.package == "llamafactory" and _pyyaml_reader(ctx).everywhere
                  and _pyyaml_reader(ctx).pinned else Severity.WARNING)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _command_line_tokens(ctx: TrainingContext, name: str, arg, prop: dict):
    """The command-line words of an argument, as argparse converts them; the first it rejects."""
    if arg.value is True or arg.value is None or arg.span is None or arg.assumed:
        return
    tokens = arg.value if isinstance(arg.value, list) else [arg.value]
    if "array" not in json_types(prop):
        # argparse gives a field that is no list one word (a bool at most one: nargs="?");
        # the words after it are positionals, left over or returned as remaining strings
        tokens = tokens[:1]
    for token in tokens:
        if not isinstance(token, str) or "$" in token:
            continue
        ok, _ = _cli_convert(prop, token)
        if not ok:
            defined = prop.get("x-dslint-defined-at")
            who = f"{ctx.plan.program.program} ({defined})" if defined else ctx.label()
            yield Finding(arg.span, f"--{name} {token}: argparse rejects it (invalid {prop.get('x-dslint-cli-type')} value)",
                          note=f"{who} expects {prop.get('x-dslint-python-type', '?')}",
                          related=[] if defined else [ctx.version_related()])
            break


def _pyyaml_reader(ctx: TrainingContext):
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
