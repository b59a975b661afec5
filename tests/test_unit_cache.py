"""The per-unit cache (dslint.run.units): after an edit only the units it can change are linted
again, and a cached run always prints what a run without the cache prints."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from programs import DEEPSPEED_LOOP, HF_TRAINER

HF_LAUNCH = "torchrun --nproc_per_node 4 train.py --deepspeed configs/{config} --per_device_train_batch_size 2\n"
DS_LAUNCH = "deepspeed --num_gpus 8 loop.py --deepspeed --deepspeed_config configs/{config}\n"
NODE = ("torchrun --nnodes 2 --node_rank {rank} --nproc_per_node 8 --master_addr 10.0.0.1 --master_port 29500 "
        "train.py --deepspeed configs/{config}\n")
CONFIG = '{{"train_micro_batch_size_per_gpu": {micro}, "gradient_accumulation_steps": 1, "zero_optimization": {{"stage": {stage}}}}}\n'
ACCELERATE = ("compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nmachine_rank: 0\nmain_process_ip: 10.0.0.2\n"
              "main_process_port: 29600\nnum_machines: 2\nnum_processes: 16\n")
ROOT = Path(__file__).resolve().parents[1]


def dslint(project: Path, *args: str, cache: bool = True) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSLINT_")}
    env.update(PYTHONPATH=str(ROOT), NO_COLOR="1", DSLINT_CACHE_DIR=str(project.parent / "cache"), DSLINT_WORKERS="1")
    command = [sys.executable, "-m", "dslint", "check", "--no-config", "--format", "concise", *args, "."]
    if not cache:
        command.insert(4, "--no-cache")
    done = subprocess.run(command, cwd=project, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout + done.stderr


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "repo"
    (root / "configs").mkdir(parents=True)
    (root / "scripts").mkdir()
    (root / ".git").mkdir()
    (root / "train.py").write_text(HF_TRAINER)
    (root / "loop.py").write_text(DEEPSPEED_LOOP)
    for index in range(4):
        (root / "configs" / f"ds_{index}.json").write_text(CONFIG.format(micro=index + 1, stage=index % 4))
        (root / "scripts" / f"hf_{index}.sh").write_text(HF_LAUNCH.format(config=f"ds_{index}.json"))
        (root / "scripts" / f"loop_{index}.sh").write_text(DS_LAUNCH.format(config=f"ds_{(index + 1) % 4}.json"))
    (root / "configs" / "alone.json").write_text(CONFIG.format(micro=3, stage=3))
    return root


def edits(root: Path):
    """Generated edits, each a kind of change a unit may depend on (name, function)."""
    yield "a config a launch reads", lambda: (root / "configs" / "ds_1.json").write_text(CONFIG.format(micro=7, stage=2))
    yield "a script now names another config", lambda: (root / "scripts" / "hf_2.sh").write_text(HF_LAUNCH.format(config="alone.json"))
    yield "a named config removed", lambda: (root / "configs" / "ds_3.json").unlink()
    yield "a named config added back", lambda: (root / "configs" / "ds_3.json").write_text(CONFIG.format(micro=2, stage=3))
    yield "a launch naming a missing config", lambda: (root / "scripts" / "new.sh").write_text(HF_LAUNCH.format(config="later.json"))
    yield "the missing config appears", lambda: (root / "configs" / "later.json").write_text(CONFIG.format(micro=5, stage=1))
    yield "the program a launch runs", lambda: (root / "train.py").write_text("print('no trainer here')\n")
    yield "node scripts of one job", lambda: [(root / "scripts" / f"node{rank}.sh").write_text(NODE.format(rank=rank, config="ds_0.json"))
                                              for rank in (0, 1)]
    yield "one node edited", lambda: (root / "scripts" / "node1.sh").write_text(NODE.format(rank=1, config="ds_2.json").replace("29500", "29501"))
    yield "a node script ignored", lambda: (root / ".gitignore").write_text("scripts/node1.sh\n")
    yield "the ignored node script edited", lambda: (root / "scripts" / "node1.sh").write_text(NODE.format(rank=1, config="ds_0.json"))
    yield "an accelerate config of a two-machine job", lambda: (root / "configs" / "acc_a.yaml").write_text(ACCELERATE)
    yield "another machine of that job, with the same rank", lambda: (root / "configs" / "acc_b.yaml").write_text(ACCELERATE)
    yield "a script removed", lambda: (root / "scripts" / "loop_0.sh").unlink()


SETTINGS = [(), ("--select", "DS3"), ("--ignore", "DS301,DS6"), ("--target", "npu")]


def test_a_cached_run_prints_what_an_uncached_run_prints_after_every_edit(project):
    for args in SETTINGS:
        assert dslint(project, *args) == dslint(project, *args, cache=False), f"first run, {args}"
    for name, edit in edits(project):
        edit()
        for args in SETTINGS:
            assert dslint(project, *args) == dslint(project, *args, cache=False), f"after {name}, {args}"


def test_one_edited_config_lints_its_launches_only(project, monkeypatch):
    """In process: which files the second run lints."""
    from dslint import cli
    from dslint.run import units

    monkeypatch.setenv("DSLINT_CACHE_DIR", str(project.parent / "cache"))
    monkeypatch.delenv("DSLINT_NO_CACHE", raising=False)
    monkeypatch.chdir(project)
    linted: list[list[str]] = []
    original = units._lint_unit
    monkeypatch.setattr(units, "_lint_unit", lambda engine, members, batch: linted.append([c.display for c in members])
                        or original(engine, members, batch))

    def run() -> list[str]:
        linted.clear()
        with pytest.raises(SystemExit):
            cli.main(["check", "--no-config", "--format", "concise", "."])
        return sorted(name for unit in linted for name in unit)

    assert len(run()) == 13  # every file, the first time
    (project / "configs" / "ds_1.json").write_text(CONFIG.format(micro=7, stage=2))
    assert run() == ["configs/ds_1.json", "scripts/hf_1.sh", "scripts/loop_0.sh"]
    assert run() == []  # the run cache replays the whole run
