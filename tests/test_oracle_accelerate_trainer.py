"""accelerate-training-mismatch (DS323) against the real transformers and accelerate.

For every combination of accelerate settings (mixed_precision, deepspeed_config's
gradient_accumulation_steps and gradient_clipping) and training flags, the test runs what
`accelerate launch` and the HF Trainer run: the environment accelerate's launcher sets
(accelerate utils/launch.py), `TrainingArguments(...)` (which builds the DeepSpeedPlugin from it)
and the Trainer's `trainer_config_process` comparison. Where that comparison collects a mismatch,
dslint must report an error; where it does not, no error.
"""

from __future__ import annotations

import itertools
import textwrap

import pytest

from dslint.config import Settings
from dslint.run.engine import Engine

PRECISIONS = ("no", "bf16", "fp16", "fp8")
ACCUMULATION = (None, 1, 4)
CLIPPING = (None, 0.5, 1.0)
FLAGS = ((), ("--bf16",), ("--fp16",), ("--gradient_accumulation_steps", "4"), ("--max_grad_norm", "0.5", "--bf16"))

PROGRAM = textwrap.dedent("""\
    from transformers import HfArgumentParser, Trainer, TrainingArguments

    (args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()
    Trainer(model=None, args=args).train()
    """)


def _mismatches(monkeypatch, tmp_path, precision, accumulation, clipping, flags) -> list[str]:
    pytest.importorskip("deepspeed")
    pytest.importorskip("accelerate")
    transformers = pytest.importorskip("transformers")
    from transformers.integrations.deepspeed import HfTrainerDeepSpeedConfig

    monkeypatch.setenv("ACCELERATE_USE_DEEPSPEED", "true")
    monkeypatch.setenv("ACCELERATE_MIXED_PRECISION", precision)
    monkeypatch.setenv("ACCELERATE_DEEPSPEED_ZERO_STAGE", "2")
    for name, value in (("ACCELERATE_GRADIENT_ACCUMULATION_STEPS", accumulation), ("ACCELERATE_GRADIENT_CLIPPING", clipping)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, str(value))
    parser = transformers.HfArgumentParser(transformers.TrainingArguments)
    (args,) = parser.parse_args_into_dataclasses(["--output_dir", str(tmp_path / "out"), "--use_cpu", *flags])
    config = HfTrainerDeepSpeedConfig(args.deepspeed_plugin.hf_ds_config.config)
    config.trainer_config_process(args)  # what propagate_args_to_deepspeed runs
    return list(config.mismatches)


def _dslint_errors(tmp_path, precision, accumulation, clipping, flags) -> list[str]:
    lines = ["distributed_type: DEEPSPEED", f'mixed_precision: "{precision}"', "num_processes: 2", "deepspeed_config:",
             "  zero_stage: 2"]
    if accumulation is not None:
        lines.append(f"  gradient_accumulation_steps: {accumulation}")
    if clipping is not None:
        lines.append(f"  gradient_clipping: {clipping}")
    (tmp_path / "acc.yaml").write_text("\n".join(lines) + "\n")
    (tmp_path / "train.py").write_text(PROGRAM)
    (tmp_path / "train.sh").write_text(f"accelerate launch --config_file acc.yaml train.py --output_dir out {' '.join(flags)}\n")
    (tmp_path / ".git").mkdir(exist_ok=True)
    result = Engine(Settings(root=tmp_path, select=["DS323"])).lint_paths([str(tmp_path)])
    assert not result.internal_errors, result.internal_errors
    return [d.message for d in result.diagnostics if d.severity.label == "error"]


@pytest.mark.oracle
@pytest.mark.parametrize("precision,accumulation,clipping,flags",
                         list(itertools.product(PRECISIONS, ACCUMULATION, CLIPPING, FLAGS)))
def test_accelerate_settings_against_the_trainer(precision, accumulation, clipping, flags, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    mismatches = _mismatches(monkeypatch, tmp_path, precision, accumulation, clipping, flags)
    errors = _dslint_errors(tmp_path, precision, accumulation, clipping, flags)
    assert bool(errors) == bool(mismatches), (mismatches, errors)
    assert len(errors) == len(mismatches), (mismatches, errors)
