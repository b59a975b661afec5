"""DS324 max-grad-norm-ignored: `--max_grad_norm` on an HF Trainer launch whose DeepSpeed config has no `gradient_clipping`."""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix, Related
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules import _deepspeed_schema as dss
from dslint.rules._trainer_args import parsed
from dslint.rules._using_launch import launch_related
from dslint.rules.trainer._common import HF_READERS


@rule("DS324", "max-grad-norm-ignored", severity="warning", target="deepspeed", fix="unsafe", consumers=HF_READERS)
def max_grad_norm_ignored(use, context):
    """`--max_grad_norm` on an HF Trainer launch whose DeepSpeed config has no `gradient_clipping`: the value is lost.

    ## What it checks
    A launch read by the HF Trainer (also under ms-swift and LLaMA-Factory) that sets
    `max_grad_norm` itself (on the command line, in its training YAML), with a DeepSpeed config
    that has no top-level `gradient_clipping`.

    Under DeepSpeed the Trainer does not clip: it calls accelerate's `clip_grad_norm_`, which
    for DeepSpeed only returns the engine's global norm (accelerate 1.15 accelerator.py:3023-3027);
    the engine clips at the config's `gradient_clipping`. The Trainer copies `max_grad_norm`
    there only into a key that is present as `"auto"`: `fill_match("gradient_clipping",
    args.max_grad_norm)` returns when the key is absent (transformers 5.23
    integrations/deepspeed.py:119-125, :161). So DeepSpeed clips at its own default: none
    before 0.19.3, norm 1.0 from 0.19.3 (`GRADIENT_CLIPPING_DEFAULT`, PR #8068). Nothing is
    reported where the value given equals that default in every DeepSpeed release the
    repository allows.

    ## Why it matters
    The run clips differently from what its arguments say, with no warning: `--max_grad_norm
    0.3` for an RL or long-context run trains unclipped on an older DeepSpeed, or at 1.0 on a
    newer one.

    ## Example
    `--max_grad_norm 0.3 --deepspeed ds.json` with
    ```json
    {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}}
    ```
    Use instead: `"gradient_clipping": "auto"` in the config (the Trainer fills it from
    `--max_grad_norm`).

    ## Fix safety
    Unsafe: `"auto"` changes the clipping of every launch that reads the config (one without
    `--max_grad_norm` then clips at the Trainer's default 1.0). Offered only where every launch
    that reads the config fills `"auto"`.
    """
    plan = use.launch
    config = use.config
    if plan is None or "gradient_clipping" in config or not ds.trains(use) or not ds.hf_like(use):
        return
    arg = plan.arg("max_grad_norm")
    if arg is None or arg.assumed:
        return
    value = parsed("max_grad_norm", arg.value)
    if value is None or isinstance(value, bool):
        return
    versions = dss.Versions(use, context)
    history = dss.key_history("gradient_clipping").get("default_changed", {})
    changed, norm = history.get("version", "0.19.3"), float(history.get("to", 1.0))
    clipping, unclipped = versions.since(changed), versions.before(changed)
    defaults = ({norm} if clipping else set()) | ({0.0} if unclipped else set())
    if defaults == {max(float(value), 0.0)}:
        return  # what DeepSpeed does anyway, in every release allowed
    if not unclipped:
        happens = f"{versions.judge(clipping).where()} clips at its default norm {norm}"
    elif not clipping:
        happens = f"{versions.judge(unclipped).where()} does not clip by default"
    else:
        happens = f"DeepSpeed clips at norm {norm} from {changed} and not at all before ({versions.candidates.why()})"
    fix = None
    if ds.every_reader_fills_auto(use.document, context):
        fix = Fix.unsafe('Add "gradient_clipping": "auto" so the Trainer fills it from max_grad_norm',
                         ds.insert_json_entry(config, "gradient_clipping", '"auto"'))
    yield Finding(
        ds.opening(config),
        f"max_grad_norm {arg.value} is ignored: this DeepSpeed config has no gradient_clipping",
        note=f"the Trainer fills gradient_clipping only where it is \"auto\"; {happens}",
        related=[Related(f"max_grad_norm = {arg.value} ({arg.origin})", arg.span)] + launch_related(use),
        fix=fix,
    )
