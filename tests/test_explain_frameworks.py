"""``dslint explain`` for the frameworks with their own batch arithmetic: verl, OpenRLHF, TRL GRPO."""

from __future__ import annotations

from test_explain import _explain

from dslint.explain.text import render

VERL_GRPO = """\
set -x
python3 -m verl.trainer.main_ppo \\
    algorithm.adv_estimator=grpo \\
    data.train_batch_size=1024 \\
    actor_rollout_ref.actor.ppo_mini_batch_size=256 \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=40 \\
    actor_rollout_ref.rollout.n=5 \\
    trainer.n_gpus_per_node=8 \\
    trainer.nnodes=1 $@
"""


def _by_key(quantities):
    return {q.key: q for q in quantities}


def test_verl_batch_arithmetic_with_provenance(tmp_path, monkeypatch):
    (e,) = _explain(tmp_path, monkeypatch, {"run.sh": VERL_GRPO})
    f = e.framework
    assert f.framework == "verl" and f.label == "verl PPO (verl.trainer.main_ppo)"
    factors = _by_key(f.factors)
    assert (factors["data.train_batch_size"].value, factors["data.train_batch_size"].line) == (1024, 4)
    assert factors["actor_rollout_ref.rollout.n"].value == 5 and not factors["actor_rollout_ref.rollout.n"].default
    assert factors["actor_rollout_ref.actor.ppo_epochs"].default
    assert "ppo_trainer.yaml" in factors["actor_rollout_ref.actor.ppo_epochs"].origin
    derived = _by_key(f.derived)
    assert derived["responses per step"].value == 5120
    assert derived["actor mini batch per GPU"].value == 160 and derived["actor accumulation"].value == 4
    assert all(check.holds for check in f.checks)
    assert any("$@ may add overrides" in note for note in f.notes)
    text = render([e])
    assert "framework  verl PPO (verl.trainer.main_ppo): 1024 prompts × 5 responses = 5120 samples per step on 8 GPUs" in text
    assert "= actor mini batch per GPU 160" in text
    # `python3 -m verl.trainer.main_ppo` is one Ray driver: the world that trains is verl's workers
    assert e.world_size.value == 8 and "trainer.n_gpus_per_node 8 × trainer.nnodes 1" in e.world_size.origin
    assert f.global_batch.value == 256 * 5  # each PPO mini batch is one optimizer step of the actor


def test_verl_failed_check_is_shown(tmp_path, monkeypatch):
    (e,) = _explain(tmp_path, monkeypatch, {"run.sh": VERL_GRPO.replace("per_gpu=40", "per_gpu=48")})
    assert [c.holds for c in e.framework.checks] == [True, True, False]
    assert "FAILS: actor mini batch per GPU 160 divisible by micro batch 48" in render([e])


def test_openrlhf_batch_and_the_deepspeed_config_it_builds(tmp_path, monkeypatch):
    script = ("deepspeed --num_gpus 8 --module openrlhf.cli.train_sft --train_batch_size 128 --micro_train_batch_size 2 "
              "--ring_attn_size 2 --packing_samples --zero_stage 3 --bf16\n")
    (e,) = _explain(tmp_path, monkeypatch, {"train_sft.sh": script})
    f = e.framework
    assert f.framework == "openrlhf" and f.label == "OpenRLHF train_sft"
    derived = _by_key(f.derived)
    assert derived["data parallel"].value == 4
    assert derived["train_batch_size (DeepSpeed)"].value == 256
    assert derived["gradient_accumulation_steps"].value == 16
    assert f.checks[0].holds is True
    assert f.summary == "128 samples per step = micro 2 × accumulation 16 × data parallel 4"
    factors = _by_key(f.factors)
    assert factors["--zero_stage"].value == 3 and factors["--zero_stage"].line == 1
    assert factors["world size"].value == 8 and "--num_gpus 8" in factors["world size"].origin


def test_trl_grpo_generation_batch(tmp_path, monkeypatch):
    files = {
        "requirements.txt": "trl==1.16.0\n",
        "train_grpo.py": "from trl import GRPOConfig, GRPOTrainer\nGRPOTrainer(model='m', reward_funcs=[], args=GRPOConfig()).train()\n",
        "run.sh": "accelerate launch --num_processes 4 train_grpo.py --per_device_train_batch_size 2 --gradient_accumulation_steps 4 --num_generations 16\n",
    }
    (e,) = _explain(tmp_path, monkeypatch, files, paths=["run.sh"])
    f = e.framework
    assert f.framework == "trl-grpo"
    derived = _by_key(f.derived)
    assert derived["generation batch"].value == 32
    assert derived["generation batch"].origin == "4 processes × per-device batch 2 × gradient accumulation 4"
    assert derived["prompts per generation"].value == 2
    assert f.checks[0].holds is True
    assert any("TRL 1.16.0 (trl==1.16.0 in requirements.txt:1)" in note for note in f.notes)


def test_other_launches_have_no_framework_section(tmp_path, monkeypatch):
    (e,) = _explain(tmp_path, monkeypatch, {"run.sh": "NPROC_PER_NODE=4 swift sft --model m --deepspeed zero2\n"})
    assert e.framework is None and e.to_dict()["framework"] is None
