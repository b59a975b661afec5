"""DS249 adam-runs-adamw."""

from __future__ import annotations

from dslint.diagnostics import Finding
from dslint.documents.model import Mapping
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules.deepspeed_engine._common import optimizer_type


@rule("DS249", "adam-runs-adamw", severity="info", target="deepspeed")
def adam_runs_adamw(use, context):
    """`optimizer.type: Adam` with weight decay runs AdamW (decoupled weight decay) unless `adam_w_mode` is false.

    ## What it checks
    `optimizer.type` Adam (any case) with a non-zero (or `"auto"`) `params.weight_decay` and no
    `params.adam_w_mode`. A launch whose program is established as evaluation only (gradients off, no
    backward pass or optimizer in the files read, no save in the entry; `dslint explain` shows it) is not judged: it takes no optimizer step.

    ## Why it matters
    DeepSpeed builds its Adam with `adam_w_mode=True` by default (deepspeed/runtime/config.py:71-72,
    engine.py:2487-2491): the weight decay is decoupled, as in AdamW, not the L2 penalty of
    `torch.optim.Adam`. Results differ from a run that used torch's Adam with the same numbers.

    ## Example
    ```json
    {"optimizer": {"type": "Adam", "params": {"lr": 1e-4, "weight_decay": 0.1}}}
    ```
    Use instead (say what you mean):
    ```json
    {"optimizer": {"type": "AdamW", "params": {"lr": 1e-4, "weight_decay": 0.1}}}
    ```

    ## Fix safety
    No fix.
    """
    item, name = optimizer_type(use.config)
    if name != "adam" or not ds.trains(use):
        return
    params = use.config.get("optimizer").get("params")
    if not isinstance(params, Mapping) or "adam_w_mode" in params or "torch_adam" in params:
        return
    decay = params.get("weight_decay")
    if decay is None:
        return
    value = ds.raw(decay)
    if value != "auto" and not (isinstance(value, (int, float)) and not isinstance(value, bool) and value != 0):
        return
    yield Finding(item.value.span, "optimizer.type Adam runs as AdamW (adam_w_mode=true)",
                  note="DeepSpeed applies the weight decay decoupled, as AdamW does",
                  help='write "AdamW", or set params.adam_w_mode to false for L2-style Adam')
