"""schemas/deepspeed-hf.schema.json: the editor schema for configs HF Trainer or accelerate read.

It accepts HF's documented ZeRO-2 and ZeRO-3 configs (written here from the facts of the
transformers DeepSpeed guide: "auto" for the batch keys, gradient_clipping, fp16, the optimizer
and scheduler parameters and the ZeRO-3 bucket sizes), rejects "auto" where nobody fills it in,
and the keys it allows "auto" at are exactly those transformers and accelerate replace (an
oracle test runs their code on a config with "auto" everywhere).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import types
from pathlib import Path

import pytest

jsonschema = pytest.importorskip("jsonschema")

from dslint.schemagen import deepspeed_hf  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HF_SCHEMA = ROOT / "schemas" / "deepspeed-hf.schema.json"
DS_SCHEMA = ROOT / "schemas" / "deepspeed.schema.json"

FP16_AUTO = {"enabled": "auto", "loss_scale": 0, "loss_scale_window": 1000, "initial_scale_power": 16, "hysteresis": 2, "min_loss_scale": 1}
OPTIMIZER_AUTO = {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto", "weight_decay": "auto"}}
SCHEDULER_AUTO = {"type": "WarmupLR", "params": {"warmup_min_lr": "auto", "warmup_max_lr": "auto", "warmup_num_steps": "auto"}}
BATCH_AUTO = {"gradient_accumulation_steps": "auto", "gradient_clipping": "auto", "steps_per_print": 2000, "train_batch_size": "auto",
              "train_micro_batch_size_per_gpu": "auto", "wall_clock_breakdown": False}

HF_ZERO2 = {
    "fp16": FP16_AUTO,
    "optimizer": OPTIMIZER_AUTO,
    "scheduler": SCHEDULER_AUTO,
    "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu", "pin_memory": True}, "allgather_partitions": True,
                          "allgather_bucket_size": 2e8, "overlap_comm": True, "reduce_scatter": True, "reduce_bucket_size": 2e8,
                          "contiguous_gradients": True},
    **BATCH_AUTO,
}
HF_ZERO3 = {
    "fp16": FP16_AUTO,
    "bf16": {"enabled": "auto"},
    "optimizer": OPTIMIZER_AUTO,
    "scheduler": {"type": "WarmupDecayLR", "params": {**SCHEDULER_AUTO["params"], "total_num_steps": "auto"}},
    "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu", "pin_memory": True}, "offload_param": {"device": "cpu", "pin_memory": True},
                          "overlap_comm": True, "contiguous_gradients": True, "sub_group_size": 1e9, "reduce_bucket_size": "auto",
                          "stage3_prefetch_bucket_size": "auto", "stage3_param_persistence_threshold": "auto", "stage3_max_live_parameters": 1e9,
                          "stage3_max_reuse_distance": 1e9, "stage3_gather_16bit_weights_on_model_save": True},
    **BATCH_AUTO,
}


def _errors(schema_path: Path, config: dict) -> list[str]:
    """Where the config fails the schema, as dotted keys (inside an anyOf, where its best branch failed)."""
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    validator = jsonschema.validators.validator_for(schema)(schema)
    found = set()
    for error in validator.iter_errors(config):
        best = jsonschema.exceptions.best_match([error])
        while best.context:
            best = jsonschema.exceptions.best_match(best.context)
        found.add(".".join(str(p) for p in best.absolute_path))
    return sorted(found)


def test_the_committed_schema_is_what_the_generator_writes():
    assert HF_SCHEMA.read_text(encoding="utf-8") == deepspeed_hf.render(deepspeed_hf.build_schema()), (
        "schemas/deepspeed-hf.schema.json is stale: run python -m dslint.schemagen.deepspeed_hf")


def test_the_generator_check_mode(tmp_path):
    run = subprocess.run([sys.executable, "-m", "dslint.schemagen.deepspeed_hf", "--check"], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0 and "up to date" in run.stdout, run.stdout + run.stderr


@pytest.mark.parametrize("config", [HF_ZERO2, HF_ZERO3], ids=["zero2", "zero3"])
def test_hf_documented_configs_are_valid(config):
    assert _errors(HF_SCHEMA, config) == []
    # the plain DeepSpeed schema flags the "auto" DeepSpeed itself would drop or trip over
    assert "fp16.enabled" in _errors(DS_SCHEMA, config) and "gradient_clipping" in _errors(DS_SCHEMA, config)


@pytest.mark.parametrize("dotted", ["zero_optimization.overlap_comm", "zero_optimization.sub_group_size", "zero_optimization.stage3_max_live_parameters",
                                    "zero_optimization.offload_optimizer.pin_memory", "fp16.loss_scale"])
def test_auto_where_nobody_fills_it_is_still_an_error(dotted):
    config = json.loads(json.dumps(HF_ZERO3))
    node = config
    *parents, leaf = dotted.split(".")
    for part in parents:
        node = node[part]
    node[leaf] = "auto"
    assert _errors(HF_SCHEMA, config) == [dotted]


def test_the_editor_command_prints_it(tmp_path):
    run = subprocess.run([sys.executable, "-m", "dslint", "schema", "deepspeed-hf"], capture_output=True, cwd=tmp_path, timeout=60)
    assert run.returncode == 0 and run.stdout == HF_SCHEMA.read_bytes()


def _nested(dotted_keys) -> dict:
    config: dict = {}
    for dotted in dotted_keys:
        node = config
        *parents, leaf = dotted.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = "auto"
    return config


def _autos(node: dict, path=()) -> list[str]:
    found = []
    for key, value in node.items():
        if isinstance(value, dict):
            found += _autos(value, (*path, key))
        elif value == "auto":
            found.append(".".join((*path, key)))
    return found


@pytest.mark.oracle
def test_transformers_and_accelerate_fill_exactly_these_keys(monkeypatch):
    """accelerate's DeepSpeedPlugin and HF's trainer_config_process/finalize replace every "auto" the schema allows, and no other."""
    pytest.importorskip("accelerate")
    pytest.importorskip("transformers")
    from accelerate.utils import DeepSpeedPlugin
    from transformers import TrainingArguments
    from transformers.integrations.deepspeed import HfTrainerDeepSpeedConfig

    for name in list(os.environ):
        if name.startswith("ACCELERATE_"):
            monkeypatch.delenv(name)
    # as `accelerate launch` with `zero_stage: 3` in its config sets it; HF fills the stage3_* sizes only under ZeRO-3
    monkeypatch.setenv("ACCELERATE_DEEPSPEED_ZERO_STAGE", "3")
    unfilled = ["zero_optimization.overlap_comm", "zero_optimization.sub_group_size", "fp16.loss_scale"]
    config = _nested([*deepspeed_hf.FILLED, *unfilled])
    config["optimizer"]["type"] = "AdamW"
    config["scheduler"]["type"] = "WarmupDecayLR"
    plugin = DeepSpeedPlugin(hf_ds_config=config)  # as TrainingArguments builds it
    args = TrainingArguments(output_dir=tempfile.mkdtemp(), per_device_train_batch_size=2, learning_rate=1e-5, report_to=[])
    hf = HfTrainerDeepSpeedConfig(plugin.hf_ds_config.config)
    hf.trainer_config_process(args)
    hf.trainer_config_finalize(args, types.SimpleNamespace(config=types.SimpleNamespace(hidden_size=64)), 100)
    assert sorted(_autos(hf.config)) == sorted(unfilled)
