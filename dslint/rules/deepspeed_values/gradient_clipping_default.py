"""DS219 gradient-clipping-default."""

from __future__ import annotations

from dslint.diagnostics import Finding
from dslint.documents.model import Mapping
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules import _deepspeed_schema as dss


@rule("DS219", "gradient-clipping-default", severity="info", target="deepspeed")
def gradient_clipping_default(use, context):
    """`gradient_clipping` is absent, and its default depends on the DeepSpeed version.

    ## What it checks
    DeepSpeed configs with no top-level `gradient_clipping` that describe a training run: they
    have a section (`zero_optimization`, `optimizer`, `fp16`, ... even misspelled), or HF Trainer,
    accelerate, ms-swift or LLaMA-Factory launch them. (A file with batch sizes only is often a
    fragment.) A launch whose program is established as evaluation only (gradients off, no
    backward pass or optimizer in the files read, no save in the entry; `dslint explain` shows it) is not judged: it computes no gradients to clip.
    Where no established program reads the config (no launch, or a program not found), it is
    judged only when the launch asks for training (`--do_train`, `--learning_rate`, ...) or the
    config is a training config by its own keys (an optimizer or scheduler, gradient
    accumulation, ZeRO stage 1 or 2, an optimizer offload): a ZeRO-3 inference config is not.

    With nothing pinning DeepSpeed (and no key of the config that only newer releases read),
    either default may apply: nothing is said.

    ## Why it matters
    The default changed from 0.0 (no clipping) to 1.0 in DeepSpeed 0.19.3
    (deepspeedai/DeepSpeed PR #8068, deepspeed/runtime/constants.py `GRADIENT_CLIPPING_DEFAULT`):
    the same config clips gradients at norm 1.0 on new installs and not at all on old ones. HF
    Trainer's `--max_grad_norm` does not help: it only fills a `gradient_clipping` that is
    present (as `"auto"`).

    ## Example
    ```json
    {"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2}}
    ```
    Use instead (or `"auto"` under HF Trainer/accelerate):
    ```json
    {"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2}, "gradient_clipping": 1.0}
    ```

    ## Fix safety
    No fix: only you know whether the run should clip.
    """
    config = use.config
    if "gradient_clipping" in config or not ds.trains(use):
        return
    if not (ds.hf_like(use) or any(isinstance(entry.value, Mapping) for entry in config.entries)):
        return  # a fragment with batch sizes only (no section at all) says nothing about the training run
    versions = dss.Versions(use, context)
    history = dss.key_history("gradient_clipping").get("default_changed", {})
    changed = history.get("version", "0.19.3")
    clips = versions.since(changed)
    if clips and len(clips) < len(versions.key) and versions.candidates.unbounded:
        return  # nothing says which release runs, so which default applies is not known
    clipping = versions.judge(clips)
    norm = history.get("to", 1.0)
    if clipping.everywhere:
        now = f"{clipping.where()} clips gradients at norm {norm} by default; DeepSpeed before {changed} did not clip"
    elif not clips:
        now = f"{versions.judge(versions.key).where()} does not clip by default; DeepSpeed {changed} and later clip at norm {norm}"
    else:
        now = (f"{clipping.where()} clips gradients at norm {norm} by default and older releases do not "
               f"({versions.candidates.why()})")
    # "auto" only where every launch that reads the config fills it (a plain deepspeed.initialize
    # loop or Megatron-DeepSpeed would compare the string with 0)
    auto = ds.every_reader_fills_auto(use.document, context)
    yield Finding(
        ds.opening(use.config),
        "gradient_clipping is absent, and its default depends on the DeepSpeed version",
        note=f"{now} (default changed in PR #8068)",
        help='set gradient_clipping explicitly' + (' (or "auto" to take --max_grad_norm)' if auto else ""),
    )
