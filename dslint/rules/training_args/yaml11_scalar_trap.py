"""DS703: a plain YAML scalar that YAML 1.1 reads as something else."""

from __future__ import annotations

import re

from dslint.diagnostics import Edit, Finding, Fix, Severity
from dslint.documents.model import Scalar
from dslint.rule import rule
from dslint.rules.training_args._common import json_types
from dslint.rules.training_args._context import TrainingContext, training_context


# PyYAML's YAML 1.1 resolver, as the consumers load YAML (yaml.safe_load; OmegaConf differs only for floats).
_BOOL_WORDS = re.compile(r"^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$")
_OCTAL = re.compile(r"^[-+]?0[0-7_]+$")
_HEX = re.compile(r"^[-+]?0x[0-9a-fA-F_]+$")
_SEXAGESIMAL = re.compile(r"^[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$")


@rule("DS703", "yaml11-scalar-trap", severity="error", target="launch", fix="safe or unsafe", consumers=("hf", "swift", "llamafactory", "megatron"))
def yaml11_scalar_trap(plan, context):
    """A plain YAML scalar that YAML 1.1 reads as something else: `no` → false, `010` → 8.

    ## What it checks
    PyYAML (and OmegaConf) resolve plain scalars with YAML 1.1 rules: `yes/no/on/off` in any
    of their spellings (`NO`, `Off`) are booleans, `010` is octal 8, `0x10` is 16 and `1:30` is 90.
    - A boolean word for a field that takes a string or a choice (`save_strategy: no`,
      `eval_strategy: no`, `lr_scheduler_type: off`): the consumer gets `False` (ms-swift the
      token `False`), which is not a valid choice: error. Quote it: `"no"`.
    - An octal, hexadecimal or base-60 number for a numeric field (warning).

    It speaks only where the reader of the values is established (a known console, a program read
    statically that parses them, or a config whose own keys name LLaMA-Factory or ms-swift), and
    not where a training script reads its YAML with OmegaConf itself (see `unknown-training-argument`).

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
    ctx = training_context(plan, context)
    if not ctx.active:
        return
    for name, arg in plan.args.items():
        node = ctx.node(arg)
        if node is None or not isinstance(node, Scalar) or node.style != "plain":
            continue
        found = ctx.lookup(name)
        if found is None:
            continue
        raw = node.span.text
        if isinstance(node.value, bool) and _BOOL_WORDS.match(raw) and raw.lower() not in ("true", "false"):
            yield from _boolean_word(ctx, name, found[1], node)
        elif isinstance(node.value, int) and not isinstance(node.value, bool):
            yield from _unusual_integer(name, node)


def _boolean_word(ctx: TrainingContext, name: str, prop: dict, node):
    """``no``, ``off``, ... for a field that is not a boolean: a choice or a string."""
    kinds = json_types(prop)
    raw = node.span.text
    if "boolean" in kinds:
        return
    choices = prop.get("enum")
    if choices is not None:
        yield _boolean_for_a_choice(ctx, name, node, [c for c in choices if c is not None])
    elif "string" in kinds:
        yield Finding(node.span, f"{name}: {raw} is the boolean {node.value} in YAML 1.1, not the string '{raw}'",
                      fix=Fix.safe(f'Quote it: "{raw}"', Edit.replace(node.span, f'"{raw}"')),
                      severity=Severity.WARNING)


def _boolean_for_a_choice(ctx: TrainingContext, name: str, node, valid: list) -> Finding:
    raw = node.span.text
    if raw.lower() in [str(c).lower() for c in valid] or raw in valid:
        return Finding(
            node.span,
            f"{name}: {raw} is the boolean {node.value} in YAML 1.1, not the choice '{raw.lower()}'",
            note=f"{ctx.label()} rejects it (valid: {', '.join(map(str, valid))})",
            fix=Fix.safe(f'Quote it: "{raw.lower()}"', Edit.replace(node.span, f'"{raw.lower()}"')),
        )
    # no fix: quoted, the word is still not a choice (DS705); which choice was meant is the author's call
    return Finding(node.span, f"{name}: {raw} is the boolean {node.value} in YAML 1.1, not a choice",
                   note=f"{ctx.label()} expects one of {', '.join(map(str, valid))}")


def _unusual_integer(name: str, node):
    """An octal, hexadecimal or base-60 integer: YAML 1.1 reads another number than the one written."""
    raw = node.span.text
    kind = "octal" if _OCTAL.match(raw) and raw.strip("+-") != "0" else "hexadecimal" if _HEX.match(raw) else \
        "base-60" if _SEXAGESIMAL.match(raw) else None
    if kind is None:
        return
    plain = raw.lstrip("0") or "0" if kind == "octal" else None
    fix = Fix.unsafe(f"Write {plain}", Edit.replace(node.span, plain)) if plain else None
    yield Finding(node.span, f"{name}: {raw} is the {kind} number {node.value} in YAML 1.1",
                  fix=fix, severity=Severity.WARNING)
