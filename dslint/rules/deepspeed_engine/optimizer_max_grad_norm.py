"""DS237 optimizer-max-grad-norm."""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix
from dslint.documents.model import Mapping
from dslint.documents.edits import remove_json_entry
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules.deepspeed_engine._common import NOT_BUILT, client_optimizer_severity, optimizer_type, related_to


@rule("DS237", "optimizer-max-grad-norm", severity="error", target="deepspeed", fix="safe or unsafe")
def optimizer_max_grad_norm(use, context):
    """`optimizer.params.max_grad_norm`: DeepSpeed refuses it; clipping is the top-level `gradient_clipping`.

    ## What it checks
    An `optimizer` block with a `type` whose `params` contain `max_grad_norm`, whatever its value.

    Only where DeepSpeed builds the block: an error under HF Trainer, accelerate, ms-swift and
    LLaMA-Factory (they pass no optimizer when the block exists) and under a plain
    `deepspeed.initialize` program dslint read that passes no `optimizer=`; a warning where that
    reader is only assumed, or a config no launch reaches has `"auto"` values (only HF Trainer and
    accelerate fill them). Nothing under Megatron-DeepSpeed, which passes its own optimizer and LR
    scheduler to `deepspeed.initialize` (megatron/training.py `setup_model_and_optimizer`), under
    a program that passes one, or where the reader is not known.

    ## Why it matters
    DeepSpeed warns when it parses the config (config.py:723-730) and raises
    `ValueError: 'max_grad_norm' is not supported as an optimizer parameter, please switch to
    using the deepspeed parameter 'gradient_clipping'` when it builds the optimizer
    (deepspeed/runtime/engine.py:2480-2484).

    ## Example
    ```json
    {"optimizer": {"type": "AdamW", "params": {"lr": 1e-4, "max_grad_norm": 1.0}}}
    ```
    Use instead:
    ```json
    {"optimizer": {"type": "AdamW", "params": {"lr": 1e-4}}, "gradient_clipping": 1.0}
    ```

    ## Fix safety
    Moving the value to `gradient_clipping` is safe when `gradient_clipping` is absent or holds
    the same value; when it holds another value, removing `max_grad_norm` is unsafe.
    """
    config = use.config
    optimizer = config.get("optimizer")
    if not isinstance(optimizer, Mapping):
        return
    type_item, _ = optimizer_type(config)
    params = optimizer.get("params")
    if type_item is None or ds.raw(type_item.value) is None or not isinstance(params, Mapping):
        return
    item = params.entry("max_grad_norm")
    severity = client_optimizer_severity(use) if item is not None else NOT_BUILT
    if severity == NOT_BUILT:
        return  # the code passes its own optimizer, or may: DeepSpeed then never builds this one
    clip = config.entry("gradient_clipping")
    remove = remove_json_entry(params, item)
    value_text = item.value.span.text.strip()
    if clip is None:
        fix = Fix.safe(f"Move it to the top-level gradient_clipping ({value_text})", remove, ds.insert_json_entry(config, "gradient_clipping", value_text))
    elif ds.raw(clip.value) == ds.raw(item.value):
        fix = Fix.safe("Remove it (gradient_clipping already holds the same value)", remove)
    else:
        fix = Fix.unsafe(f"Remove it (keeps gradient_clipping = {ds.show(clip.value)})", remove)
    yield Finding(
        item.key_span,
        "optimizer.params.max_grad_norm is not an optimizer parameter",
        note="DeepSpeed raises \"'max_grad_norm' is not supported as an optimizer parameter, please switch to using the deepspeed "
        "parameter 'gradient_clipping'\" when it builds the optimizer (engine.py:2480-2484)",
        related=related_to(clip),
        fix=fix,
        severity=severity,
    )
