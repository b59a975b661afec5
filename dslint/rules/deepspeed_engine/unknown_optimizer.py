"""DS238 unknown-optimizer."""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix, Severity
from dslint.documents.model import Mapping
from dslint.documents.edits import replace_value
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules import _deepspeed_schema as dss
from dslint.rules.deepspeed_engine._common import NOT_BUILT, client_optimizer_severity
from dslint.rules.deepspeed_engine._names import DEEPSPEED_OPTIMIZERS, ONEBIT_OPTIMIZERS, ONEBIT_REMOVED, TORCH_OPTIMIZERS


@rule("DS238", "unknown-optimizer", severity="error", target="deepspeed", fix="safe")
def unknown_optimizer(use, context):
    """`optimizer.type` names no optimizer DeepSpeed can build.

    ## What it checks
    `optimizer.type` must be a DeepSpeed optimizer name in any case (`Adam`, `AdamW`,
    `Adagrad`, `Lamb`, `Lion`, `Muon`, `MuAdam`, `MuAdamW`, `MuSGD`;
    deepspeed/runtime/config.py:63-66, 579-581) or, with the exact case, a `torch.optim` class
    (`SGD`, `RMSprop`, `Adamax`, ...; engine.py:1985-1986). The 1-bit optimizers (`OneBitAdam`,
    `OneBitLamb`, `ZeroOneAdam`) were removed in DeepSpeed 0.19.7 and are reported only for
    that version and later (`deepspeed-version`). An `optimizer` block with no `type` is
    reported as a warning: DeepSpeed then builds no optimizer at all.

    Only where DeepSpeed builds the block, as for optimizer-max-grad-norm (DS237): under HF
    Trainer, accelerate, ms-swift and LLaMA-Factory, or a plain `deepspeed.initialize` program read
    that passes no `optimizer=` (a warning where the reader is only assumed or `"auto"` says it);
    never under Megatron-DeepSpeed or where the reader is not known.

    ## Why it matters
    `AssertionError: OneBitAdam is not a supported DeepSpeed Optimizer` at
    `deepspeed.initialize` (engine.py:2016-2019); `sgd` fails the same way (torch's class is
    `SGD`).

    ## Example
    ```json
    {"optimizer": {"type": "sgd", "params": {"lr": 0.01}}}
    ```
    Use instead:
    ```json
    {"optimizer": {"type": "SGD", "params": {"lr": 0.01}}}
    ```

    ## Fix safety
    Correcting the case to the `torch.optim` class it names is safe.
    """
    config = use.config
    optimizer = config.get("optimizer")
    if not isinstance(optimizer, Mapping):
        return
    item = optimizer.entry("type")
    versions = dss.Versions(use, context)
    if item is None:
        if optimizer.entries:
            yield Finding(
                ds.opening(optimizer),
                "the optimizer block has no 'type'",
                note="DeepSpeed builds no optimizer from it and ignores its params silently",
                severity=Severity.WARNING,
            )
        return
    not_text = ds.not_lowerable(item, "optimizer.type", "not a name", " when it parses the config")
    if not_text is not None:
        yield not_text
    value = ds.raw(item.value)
    if not isinstance(value, str):
        return
    lowered = value.lower()
    if lowered in DEEPSPEED_OPTIMIZERS or value in TORCH_OPTIMIZERS:
        return
    severity = client_optimizer_severity(use)
    if severity == NOT_BUILT:
        return  # the code passes its own optimizer, or may: DeepSpeed then never builds this one
    if lowered in ONEBIT_OPTIMIZERS:
        yield from versions.within([Finding(
            item.value.span,
            f"optimizer.type {value!r}: the 1-bit optimizers were removed in DeepSpeed {ONEBIT_REMOVED}",
            severity=severity,
            note=f"{versions.label} raises '{value} is not a supported DeepSpeed Optimizer' at deepspeed.initialize",
            help=f"use Adam/AdamW, or pin deepspeed<{ONEBIT_REMOVED}",
        )], versions.since(ONEBIT_REMOVED))
        return
    by_case = {name.lower(): name for name in TORCH_OPTIMIZERS}
    fix = None
    note = f"DeepSpeed raises '{value} is not a supported DeepSpeed Optimizer' at deepspeed.initialize"
    if lowered in by_case:
        fix = Fix.safe(f"Write '{by_case[lowered]}'", replace_value(item.value, by_case[lowered]))
        note += f"; torch's class is '{by_case[lowered]}' (torch.optim names are case-sensitive)"
    yield Finding(
        item.value.span,
        f"optimizer.type {value!r} is neither a DeepSpeed optimizer nor a torch.optim class",
        note=note,
        help=None if fix else "DeepSpeed's optimizers: adam, adamw, adagrad, lamb, lion, muon, ...",
        fix=fix,
        severity=severity,
    )
