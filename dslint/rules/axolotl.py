"""axolotl rules (DS931): what axolotl's config validator refuses before it loads anything.

They run on configs established as axolotl's (its keys, or a launch of ``axolotl.cli``), judged
against the axolotl releases the repository's pins allow (dslint/frameworks/axolotl.py).
"""

from __future__ import annotations

from dslint.diagnostics import Finding, Related, Severity
from dslint.frameworks import axolotl, releases
from dslint.rule import rule


@rule("DS931", "axolotl-config-rejected", severity="error", target="launch")
def axolotl_config_rejected(plan, context):
    """A combination of keys axolotl's config validator refuses.

    ## What it checks
    axolotl validates the YAML with pydantic before it loads the model (`load_cfg` →
    `validate_config`), and these model validators raise `ValueError` (src/axolotl/utils/schemas/validation.py
    on main and since 0.11; schemas/config.py in 0.8-0.10; utils/config/models/input/v0_4_1 before):
    - `gradient_accumulation_steps` with `batch_size` (`check_gas_bsz`); `warmup_steps` with
      `warmup_ratio` (`check_warmup`);
    - `save_steps` with a `save_strategy` other than `steps`, or with `saves_per_epoch`
      (`check_saves`); `eval_steps` with an `eval_strategy` other than `steps`, or with
      `evals_per_epoch`; `evals_per_epoch` with an `eval_strategy` other than `steps`;
      `eval_steps`/`eval_strategy` with `val_set_size: 0` and no `test_datasets` (`check_evals`);
    - `deepspeed` with `fsdp` (`check_fsdp_deepspeed`); `fsdp` for a Falcon `base_model`
      (`check_falcon_fsdp`);
    - `torch_compile` with `deepspeed` (`check_torch_compile_deepspeed`, "torch_compile should
      be set within your deepspeed config file"): axolotl 0.12.2 and before; 0.13.0 removed the
      check (axolotl-ai-cloud/axolotl#3195).
    The validators test the values as written for truth (`0`, `false` count as not set). dslint
    knows axolotl 0.6.0-0.18.0 and judges the releases the repository's pins allow: an error
    where all of them refuse the config, info naming the releases otherwise.

    ## Why it matters
    `ValueError` from `axolotl train` before training starts; on a cluster, after the job waited
    for its GPUs.

    ## Example
    ```yaml
    base_model: NousResearch/Meta-Llama-3-8B
    micro_batch_size: 2
    gradient_accumulation_steps: 4
    batch_size: 32
    ```

    ## Use instead
    Keep one: `gradient_accumulation_steps: 4` (axolotl derives `batch_size`).

    ## Fix safety
    No fix: which of the two settings is meant is the author's choice.
    """
    if not axolotl.program(plan):
        return
    data = axolotl.values(plan)
    found = None
    for rejection in axolotl.REJECTIONS:
        if not rejection.refuses(data):
            continue
        if found is None:
            start = plan.origin.path if plan.origin is not None else None
            found = releases("axolotl", "axolotl", axolotl.KNOWN, start, context.settings)
        failing, note = found.judge(rejection.fails_in)
        if not failing:
            continue
        args = [plan.args[key] for key in rejection.keys if key in plan.args]
        at = args[0] if args else None
        shown = " with ".join(f"{arg.name}: {_text(arg.value)}" for arg in args)
        why = f"axolotl refuses the config with '{rejection.quoted}' ({rejection.validator})"
        yield Finding(
            (at.name_span or at.span) if at is not None else plan.span,
            f"{shown}: axolotl refuses this config",
            note=f"{why} ({note})" if note else why,
            related=[*(Related(arg.origin, arg.name_span or arg.span) for arg in args[1:]), Related(found.describe())],
            severity=Severity.INFO if note else None,
        )


def _text(value) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    return str(value)
