"""DS704: a list argument given as one comma-separated string."""

from __future__ import annotations

from dslint.diagnostics import Edit, Finding, Fix
from dslint.documents.model import Scalar
from dslint.rule import rule
from dslint.rules.training_args._context import training_context


@rule("DS704", "list-as-comma-string", severity="warning", target="launch", fix="unsafe", consumers=("hf", "swift", "llamafactory", "megatron"))
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
    ctx = training_context(plan, context)
    if not ctx.active or ctx.package != "ms-swift":
        return
    for name, arg, _, prop, _ in ctx.known_args():
        if prop.get("x-dslint-nargs") not in ("+", "*"):
            continue
        node = ctx.node(arg)
        value = node.value if isinstance(node, Scalar) else (arg.value if node is None else None)
        parts = _comma_parts(value)
        if parts is None:
            continue
        yield Finding((node.span if node is not None else arg.span) or plan.span,
                      f"{name} takes several values (nargs='+'), but '{value}' is one token", fix=_fix(arg, node, value, parts),
                      note=f"ms-swift reads it as the single item '{value}'")


def _comma_parts(value) -> list[str] | None:
    """The items of a plain comma-separated string; None for anything else (a dict, a call, a shell variable)."""
    if not isinstance(value, str) or "," not in value or "{" in value or "(" in value or "$" in value:
        return None
    parts = [p.strip() for p in value.split(",")]
    return parts if all(parts) else None


def _fix(arg, node, value: str, parts: list[str]) -> Fix | None:
    """A YAML list for a plain YAML scalar; separate tokens for a command-line word written as given."""
    if isinstance(node, Scalar) and node.style == "plain":
        return Fix.unsafe("Write a YAML list", Edit.replace(node.span, "[" + ", ".join(parts) + "]"))
    if node is None and arg.span is not None and arg.span.text == value:
        return Fix.unsafe("Pass each value as its own token", Edit.replace(arg.span, " ".join(parts)))
    return None
