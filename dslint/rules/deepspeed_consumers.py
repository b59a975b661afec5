"""What HF Trainer, accelerate, ms-swift and LLaMA-Factory require of a DeepSpeed config (DS250-DS251).

These rules need to know who reads the config (``DeepSpeedUse.consumer``, set by launch
linking); for a config no launch reaches they report nothing.
"""

from __future__ import annotations

import json

from dslint.diagnostics import Finding, Fix, Severity
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.source import Span


@rule("DS250", "zero-section-required", severity="error", target="deepspeed", fix="safe", consumers=("hf", "accelerate", "swift", "llamafactory"))
def zero_section_required(use, context):
    """HF Trainer and accelerate refuse a DeepSpeed config without a `zero_optimization` section.

    ## What it checks
    DeepSpeed configs launched through HF Trainer, accelerate, ms-swift or LLaMA-Factory that
    have no `zero_optimization` key. Configs no launch reaches are not reported (plain
    DeepSpeed runs them with ZeRO off). Where the launch's program is not established (not
    found; `--deepspeed` only suggests the Trainer) it speaks only when the launch trains: its
    arguments ask for it (`--do_train`, `--learning_rate`, `--num_train_epochs`, ...) or the
    config is a training config by its own keys (an optimizer or scheduler, gradient
    accumulation or clipping); a chat or inference entry given a config is not the Trainer's.

    ## Why it matters
    accelerate's `DeepSpeedPlugin.__post_init__` raises
    `ValueError: Please specify the ZeRO optimization config in the DeepSpeed config.`
    (accelerate/utils/dataclasses.py:1276-1277); HF Trainer builds that plugin in
    `TrainingArguments.__post_init__` (transformers training_args.py:1704-1721), so the run fails
    before the model loads (zjunlp/KnowLM#87). The Trainer does so from transformers 4.30.0
    (4.30.0 training_args.py:1567-1570); before, it handed the config to `deepspeed.initialize`,
    which runs it with ZeRO off. Judged against the transformers releases the repository allows:
    an error where every one builds the plugin, info naming them where only some do.

    ## Example
    ```json
    {"train_micro_batch_size_per_gpu": "auto", "bf16": {"enabled": "auto"}}
    ```
    Use instead:
    ```json
    {"train_micro_batch_size_per_gpu": "auto", "bf16": {"enabled": "auto"}, "zero_optimization": {"stage": 0}}
    ```

    ## Fix safety
    Adding `"zero_optimization": {"stage": 0}` is safe: it states DeepSpeed's own default
    (ZeRO off), which is what the config already meant.
    """
    if not ds.hf_like(use) or "zero_optimization" in use.config or not ds.trains(use):
        return
    note = f"{ds.consumer_label(use)} goes through accelerate's DeepSpeedPlugin, which raises " \
        "'Please specify the ZeRO optimization config in the DeepSpeed config.'"
    severity = None
    if use.consumer == "hf":
        from dslint.evidence.versions import compare

        found = ds.reader_versions(use, context, "transformers")
        verdict = found.judge(lambda v: compare(v, ds.TRAINER_VIA_ACCELERATE) >= 0)
        if not verdict.anywhere:
            return  # every allowed transformers hands the config to deepspeed.initialize itself
        severity, note = verdict.severity(), verdict.qualify(note)
    yield Finding(
        ds.opening(use.config),
        "no zero_optimization section",
        note=note, severity=severity,
        fix=Fix.safe('Add "zero_optimization": {"stage": 0} (DeepSpeed\'s default: ZeRO off)', ds.insert_json_entry(use.config, "zero_optimization", '{"stage": 0}')),
    )


@rule("DS251", "hjson-syntax-for-json-reader", severity="error", target="deepspeed", consumers=("hf", "accelerate", "swift", "llamafactory"))
def hjson_syntax_for_json_reader(use, context):
    """hjson-only syntax (comments, trailing commas, quoteless values) in a config HF, accelerate or ms-swift read with `json`.

    ## What it checks
    DeepSpeed configs launched through HF Trainer, accelerate, ms-swift or LLaMA-Factory that
    DeepSpeed's hjson loader accepts but strict JSON does not: `//` or `#` comments, trailing
    commas, unquoted keys or values. The finding points where `json` stops reading. Configs no
    launch reaches, or that only the deepspeed launcher reads, are not reported: DeepSpeed
    itself reads hjson.

    ## Why it matters
    `HfDeepSpeedConfig` loads a config path with `json.load` (accelerate/utils/deepspeed.py:136-156),
    so the first comment raises `json.decoder.JSONDecodeError` at `TrainingArguments` time.

    ## Example
    ```json
    {
      "zero_optimization": {"stage": 2},  // ZeRO-2
      "bf16": {"enabled": "auto"},
    }
    ```
    Use instead:
    ```json
    {
      "zero_optimization": {"stage": 2},
      "bf16": {"enabled": "auto"}
    }
    ```

    A UTF-8 byte order mark at the start of the file is the same trap: hjson skips it, `json.load`
    raises `Unexpected UTF-8 BOM (decode using utf-8-sig)` (Python's json/__init__.py, `loads`).
    A BOM is an error under those launchers and a warning for a config no launch reaches, since
    whoever reads it next may be one of them; under the deepspeed launcher it is fine.

    ## Fix safety
    No fix: removing comments loses information the author wrote on purpose.
    """
    if use.document.source.bom and (use.consumer is None or use.consumer in ds.STRICT_JSON_CONSUMERS):
        source = use.document.source
        if use.consumer is None:
            yield Finding(Span(source, 0, 0), "the file starts with a UTF-8 BOM, which json.load rejects", severity=Severity.WARNING,
                          note="HF Trainer, accelerate, ms-swift and LLaMA-Factory read configs with json.load, which raises "
                          "'Unexpected UTF-8 BOM' (DeepSpeed's hjson accepts it)")
        else:
            yield Finding(Span(source, 0, 0), "the file starts with a UTF-8 BOM, which json.load rejects",
                          note=f"{ds.consumer_label(use)} reads this config with json.load, which raises 'Unexpected UTF-8 BOM'")
    if use.consumer not in ds.STRICT_JSON_CONSUMERS or use.document.strict_json:
        return
    source = use.document.source
    text = source.text
    try:
        json.loads(text)
        return
    except json.JSONDecodeError as exc:
        offset = min(exc.pos, len(text))
        reason = exc.msg
    except ValueError as exc:
        offset, reason = 0, str(exc)
    span = Span(source, offset, min(offset + 1, len(text)))
    yield Finding(
        span,
        f"{ds.consumer_label(use)} cannot read this config with Python's json module: {reason}",
        note="comments, trailing commas and unquoted text are hjson, which only DeepSpeed's own loader accepts",
    )
