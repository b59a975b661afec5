"""A Hydra app's command line and composed config (dslint.launch.hydra), as Hydra 1.3 reads them."""

from __future__ import annotations

import pytest

from dslint.config import Settings
from dslint.run.engine import Engine
from dslint.frameworks import verl
from dslint.launch.hydra import Unknown, parse_value


@pytest.mark.parametrize("text,expected", [
    ("1024", 1024), ("1_024", 1024), ("-3", -3), ("1e-6", 1e-6), ("0.5", 0.5), ("5.", 5.0), ("inf", float("inf")),
    ("True", True), ("FALSE", False), ("null", None), ("NULL", None), ("'1024'", "1024"), ('"a b"', "a b"),
    ("vllm", "vllm"), ("Qwen/Qwen2.5-7B", "Qwen/Qwen2.5-7B"), ("08", "08"),
])
def test_values_are_typed_by_the_override_grammar(text, expected):
    assert parse_value(text) == expected


@pytest.mark.parametrize("text", ["${data.train_batch_size}", "[1,2]", "{a: 1}", "1,2,4", "choice(1,2)"])
def test_values_hydra_computes_are_unknown(text):
    assert isinstance(parse_value(text), Unknown)


def _plan(tmp_path, monkeypatch, script: str, files: dict | None = None):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.sh").write_text(script)
    for name, text in (files or {}).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    result = Engine(Settings(select=["DS901"], root=tmp_path)).lint_paths(["run.sh"])
    return result.plans[0]


def test_overrides_apply_in_order_and_the_last_wins(tmp_path, monkeypatch):
    plan = _plan(tmp_path, monkeypatch, "python3 -m verl.trainer.main_ppo data.train_batch_size=64 +trainer.x=1 "
                                        "++data.train_batch_size=128 ~actor_rollout_ref.rollout.n\n")
    cfg = verl.config(plan)
    found = cfg.get("data.train_batch_size")
    assert found.value == 128 and found.origin == "++data.train_batch_size=128 at run.sh:1"
    assert isinstance(cfg.get("actor_rollout_ref.rollout.n").value, Unknown)  # deleted
    assert cfg.get("trainer.nnodes").value == 1 and not cfg.get("trainer.nnodes").written


def test_hydra_flags_are_not_overrides(tmp_path, monkeypatch):
    plan = _plan(tmp_path, monkeypatch, "python3 -m verl.trainer.main_ppo --config-name ppo_megatron_trainer -m "
                                        "hydra.run.dir=out trainer.nnodes=2\n")
    cfg = verl.config(plan)
    assert cfg.command.config_name.value == "ppo_megatron_trainer" and cfg.command.multirun
    assert [o.key for o in cfg.command.overrides] == ["hydra.run.dir", "trainer.nnodes"]
    assert cfg.get("actor_rollout_ref.actor.strategy").value == "megatron"


def test_a_variable_set_in_the_script_is_read(tmp_path, monkeypatch):
    plan = _plan(tmp_path, monkeypatch, "BS=512\nN=${N:-4}\npython3 -m verl.trainer.main_ppo data.train_batch_size=$BS "
                                        "actor_rollout_ref.rollout.n=$N data.train_files=$HOME/x\n")
    cfg = verl.config(plan)
    assert cfg.get("data.train_batch_size").value == 512
    n = cfg.get("actor_rollout_ref.rollout.n")
    assert n.value == 4 and "assuming" in n.origin
    assert isinstance(cfg.get("data.train_files").value, Unknown)
    assert cfg.command.complete


def test_an_expansion_that_may_hold_overrides_makes_the_command_incomplete(tmp_path, monkeypatch):
    plan = _plan(tmp_path, monkeypatch, "python3 -m verl.trainer.main_ppo data.train_batch_size=64 $EXTRA\n")
    assert not verl.config(plan).command.complete


def test_a_config_of_an_unknown_place_makes_its_keys_unknown(tmp_path, monkeypatch):
    plan = _plan(tmp_path, monkeypatch, "python3 -m verl.trainer.main_ppo --config-path=/nowhere --config-name=mine\n")
    cfg = verl.config(plan)
    assert isinstance(cfg.get("data.train_batch_size").value, Unknown) and cfg.unread


def test_a_reference_in_the_primary_config_is_followed(tmp_path, monkeypatch):
    plan = _plan(tmp_path, monkeypatch, "python3 -m verl.trainer.main_ppo --config-dir=conf --config-name=mine\n",
                 {"conf/mine.yaml": "defaults:\n  - ppo_trainer\n  - _self_\ndata:\n  train_batch_size: 96\n"
                                    "actor_rollout_ref:\n  actor:\n    ppo_mini_batch_size: ${data.train_batch_size}\n"})
    cfg = verl.config(plan)
    assert cfg.get("actor_rollout_ref.actor.ppo_mini_batch_size").value == 96
    assert cfg.get("trainer.n_gpus_per_node").value == 8  # from verl's ppo_trainer under it


def test_references_in_a_circle_are_unknown(tmp_path, monkeypatch):
    plan = _plan(tmp_path, monkeypatch, "python3 -m verl.trainer.main_ppo --config-dir=conf --config-name=mine\n",
                 {"conf/mine.yaml": "defaults:\n  - ppo_trainer\n  - _self_\ndata:\n  train_batch_size: ${data.gen_batch_size}\n"
                                    "  gen_batch_size: ${data.train_batch_size}\n"})
    assert isinstance(verl.config(plan).get("data.train_batch_size").value, Unknown)
