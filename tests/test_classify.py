"""What a file is to dslint, decided by its content."""

from __future__ import annotations

import json

import pytest

from dslint.documents import Skipped, read_document
from dslint.documents.model import DEEPSPEED


def kind_of(name: str, payload: dict) -> str | None:
    try:
        return read_document(name, json.dumps(payload).encode()).kind
    except Skipped:
        return None


def test_a_programs_own_config_with_a_deepspeed_section_among_its_settings_is_not_a_deepspeed_config():
    own = {f"model-setting-{i}": i for i in range(20)}  # GPT-NeoX style: the program's own arguments
    deepspeed = {"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 1}, "gradient_clipping": 1.0,
                 "fp16": {"enabled": True}, "steps_per_print": 10}
    assert kind_of("neox.json", {**own, **deepspeed}) is None


@pytest.mark.parametrize("payload", [
    {"train_micro_batch_size_per_gpu": 4, "fp16_enabled": True, "log": {"steps_per_print": 50}},  # flattened keys
    {"train_batch_size": 8, "zero_optimization": {"stage": 2}, "sequence_parallel_size": 2, "dataloader_drop_last": True,
     "zero_force_ds_cpu_optimizer": False, "graph_harvesting": False},  # rarer keys the schema knows
])
def test_a_deepspeed_config_with_misspelt_or_rare_keys_stays_one(payload):
    assert kind_of("ds.json", payload) == DEEPSPEED


def test_a_launch_that_names_a_programs_config_as_deepspeeds_still_has_it_read_as_one(tmp_path):
    from dslint.config import Settings
    from dslint.run.engine import Engine

    own = {f"model-setting-{i}": i for i in range(20)}
    (tmp_path / "ds.json").write_text(json.dumps({**own, "train_batch_size": 3, "train_micro_batch_size_per_gpu": 2}))
    (tmp_path / "run.sh").write_text("deepspeed --num_gpus 1 train.py --deepspeed --deepspeed_config ds.json\n")
    result = Engine(Settings(root=tmp_path, select=["DS101"])).lint_paths([str(tmp_path)])
    assert [d.code for d in result.diagnostics] == ["DS101"]
