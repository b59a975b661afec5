"""Launch plans: what the linker makes of each launcher's real shapes.

Each case writes a small repository (script, configs), builds the plans and checks the
launcher, consumer, processes, world size with its provenance, and the files resolved.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dslint.config import Settings
from dslint.run.engine import Engine

DS = '{"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}}\n'
SFT_YAML = "model_name_or_path: Qwen/Qwen2.5-7B\nstage: sft\nfinetuning_type: lora\ntemplate: qwen\ndeepspeed: examples/deepspeed/ds_z3_config.json\n"
ACCEL = "compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: configs/ds.json\nnum_machines: 2\nnum_processes: 16\nmachine_rank: 0\n"


def plans_for(tmp_path: Path, monkeypatch, files: dict[str, str]):
    for name, text in files.items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    result = Engine(Settings(select=["DS001"], root=tmp_path)).lint_paths(["."])
    assert not result.internal_errors
    return result.plans


CASES = [
    pytest.param(
        {"scripts/run.sh": "#!/bin/bash\nGPUS=${GPUS:-8}\ndeepspeed --num_gpus $GPUS --num_nodes 2 main.py --deepspeed --deepspeed_config ../configs/ds.json\n", "configs/ds.json": DS},
        dict(launcher="deepspeed", consumer="deepspeed", procs=8, nodes=2, world=16, ds="configs/ds.json", origin=["--num_gpus 8", "assuming $GPUS keeps its default"]),
        id="deepspeed-num-gpus-nodes",
    ),
    pytest.param(
        {"run.sh": "export CUDA_VISIBLE_DEVICES=0,1,2\ndeepspeed train.py --deepspeed ds.json\n", "ds.json": DS},
        dict(launcher="deepspeed", consumer="hf", procs=3, nodes=1, world=3, ds="ds.json", origin=["CUDA_VISIBLE_DEVICES=0,1,2"]),
        id="deepspeed-visible-devices-hf",
    ),
    pytest.param(
        {"run.sh": "deepspeed --hostfile hosts.txt train.py --deepspeed ds.json\n", "hosts.txt": "worker-0 slots=4\nworker-1 slots=4\n", "ds.json": DS},
        dict(launcher="deepspeed", consumer="hf", procs=4, nodes=2, world=8, ds="ds.json", origin=["hostfile"]),
        id="deepspeed-hostfile",
    ),
    pytest.param(
        {"run.sh": "export CUDA_VISIBLE_DEVICES=0,1\ndeepspeed --hostfile hosts.txt --no_ssh --node_rank 1 train.py --deepspeed ds.json\n",
         "hosts.txt": "worker-0 slots=8\nworker-1 slots=8\n", "ds.json": DS},
        dict(launcher="deepspeed", consumer="hf", procs=8, nodes=2, world=16, ds="ds.json", origin=["slots= in the hostfile"]),
        id="deepspeed-hostfile-ignores-visible-devices",
    ),
    pytest.param(
        {"run.sh": "source /usr/local/Ascend/ascend-toolkit/set_env.sh\nexport CUDA_VISIBLE_DEVICES=0,1\ndeepspeed train.py --deepspeed ds.json\n",
         "ds.json": DS},
        dict(launcher="deepspeed", consumer="hf", procs=None, nodes=1, world=None, ds="ds.json", origin=[]),
        id="deepspeed-on-ascend-counts-every-npu-not-cuda-visible-devices",
    ),
    pytest.param(
        {"run.sh": "torchrun --nproc_per_node=4 --nnodes 2 train.py --deepspeed configs/ds.json\n", "configs/ds.json": DS},
        dict(launcher="torchrun", consumer="hf", procs=4, nodes=2, world=8, ds="configs/ds.json", origin=["--nproc_per_node 4"]),
        id="torchrun",
    ),
    pytest.param(
        {"run.sh": "CUDA_VISIBLE_DEVICES=0,1 python -m torch.distributed.run --nproc_per_node gpu train.py --deepspeed ds.json\n", "ds.json": DS},
        dict(launcher="torchrun", consumer="hf", procs=2, nodes=1, world=2, ds="ds.json", origin=["--nproc_per_node gpu"]),
        id="torch-distributed-run-gpu",
    ),
    pytest.param(
        {"run.sh": "torchrun --nnodes 1:4 --nproc_per_node 8 train.py\n"},
        dict(launcher="torchrun", consumer=None, procs=8, nodes=None, world=None, ds=None, origin=[]),
        id="torchrun-elastic-range",
    ),
    pytest.param(
        {"run.sh": "accelerate launch --config_file configs/acc.yaml train.py\n", "configs/acc.yaml": ACCEL, "configs/ds.json": DS},
        dict(launcher="accelerate", consumer="accelerate", procs=8, nodes=2, world=16, ds="configs/ds.json", origin=["num_processes: 16"]),
        id="accelerate-config-file",
    ),
    pytest.param(
        {"run.sh": "CUDA_VISIBLE_DEVICES=0,1,2,3 \\\nNPROC_PER_NODE=4 \\\nswift sft \\\n    --model Qwen/Qwen2.5-7B-Instruct \\\n    --deepspeed zero3\n"},
        dict(launcher="swift", consumer="swift", procs=4, nodes=1, world=4, ds="<ms-swift preset zero3>", origin=["NPROC_PER_NODE=4"]),
        id="swift-preset",
    ),
    pytest.param(
        {"run.sh": "swift sft --model m --deepspeed zero2\n"},
        dict(launcher="swift", consumer="swift", procs=1, nodes=1, world=1, ds="<ms-swift preset zero2>", origin=["neither NPROC_PER_NODE nor NNODES"]),
        id="swift-single-process",
    ),
    pytest.param(
        {"run.sh": "nproc_per_node=8\nNPROC_PER_NODE=$nproc_per_node NNODES=2 megatron sft --model m\n"},
        dict(launcher="megatron", consumer="megatron", procs=8, nodes=2, world=16, ds=None, origin=["NPROC_PER_NODE=8", "NNODES=2"]),
        id="megatron",
    ),
    pytest.param(
        {"run.sh": "FORCE_TORCHRUN=1 NNODES=1 NPROC_PER_NODE=2 llamafactory-cli train examples/sft.yaml learning_rate=1e-5\n", "examples/sft.yaml": SFT_YAML, "examples/deepspeed/ds_z3_config.json": DS},
        dict(launcher="llamafactory", consumer="llamafactory", procs=2, nodes=1, world=2, ds="examples/deepspeed/ds_z3_config.json", origin=["NPROC_PER_NODE=2"]),
        id="llamafactory",
    ),
    pytest.param(
        {"run.sh": "python train.py --deepspeed ds.json --per_device_train_batch_size 2\n", "ds.json": DS},
        dict(launcher="python", consumer="hf", procs=None, nodes=None, world=1, ds="ds.json", origin=["plain python process"]),
        id="python-hf",
    ),
    pytest.param(
        {"run.sh": 'CMD="deepspeed --num_gpus 4 train.py --deepspeed ds.json"\neval "$CMD"\n', "ds.json": DS},
        dict(launcher="deepspeed", consumer="hf", procs=4, nodes=1, world=4, ds="ds.json", origin=["--num_gpus 4"]),
        id="eval-constant-string",
    ),
    # containers and remote shells (issue 22 item 4): the world of the launch inside them
    pytest.param(
        {"run.sh": "export CUDA_VISIBLE_DEVICES=0,1,2,3\nsingularity exec --nv img.sif deepspeed train.py --deepspeed ds.json\n", "ds.json": DS},
        dict(launcher="deepspeed", consumer="hf", procs=4, nodes=1, world=4, ds="ds.json", origin=["CUDA_VISIBLE_DEVICES=0,1,2,3"]),
        id="apptainer-passes-the-host-environment-in",
    ),
    pytest.param(
        {"run.sh": "export CUDA_VISIBLE_DEVICES=0,1,2,3\ndocker run --gpus 2 -v $PWD:/ws -w /ws img deepspeed train.py --deepspeed ds.json\n", "ds.json": DS},
        dict(launcher="deepspeed", consumer="hf", procs=2, nodes=1, world=2, ds="ds.json", origin=["docker run --gpus 2 (run.sh:2): the container sees 2 GPU(s)"]),
        id="docker-gpus-count-not-the-host-exports",
    ),
    pytest.param(
        {"run.sh": "docker run --gpus '\"device=1,3,5\"' img torchrun --nproc_per_node gpu train.py --deepspeed ds.json\n", "ds.json": DS},
        dict(launcher="torchrun", consumer="hf", procs=3, nodes=1, world=3, ds="ds.json", origin=["the container sees 3 GPU(s)"]),
        id="docker-gpus-devices",
    ),
    pytest.param(
        {"run.sh": "export CUDA_VISIBLE_DEVICES=0\nssh node1 'cd /ws && deepspeed train.py --deepspeed ds.json'\n", "ds.json": DS},
        dict(launcher="deepspeed", consumer="hf", procs=None, nodes=1, world=None, ds="ds.json", origin=[]),
        id="ssh-the-local-exports-do-not-reach-the-remote-shell",
    ),
]


def test_a_launch_in_a_container_or_on_another_host_runs_in_a_folder_the_wrapper_chooses(tmp_path, monkeypatch):
    script = (
        "docker run img deepspeed train.py --deepspeed a.json\n"  # the image's working directory
        "docker run -v $PWD:/ws -w /ws/ img deepspeed train.py --deepspeed b.json\n"  # the caller's folder, mounted
        "singularity exec img.sif deepspeed train.py --deepspeed c.json\n"  # the caller's folder, a default bind
        "singularity exec --pwd /opt/app img.sif deepspeed train.py --deepspeed d.json\n"
        'ssh node1 "deepspeed train.py --deepspeed e.json"\n'
        'pdsh -w node[1-4] "cd /ws; torchrun --nnodes 4 --nproc_per_node 8 train.py --deepspeed f.json"\n'
    )
    plans = plans_for(tmp_path, monkeypatch, {"run.sh": script})
    away = {plan.deepspeed.raw: plan.runs_elsewhere for plan in plans}
    assert away["a.json"] == "it runs inside a container started at run.sh:1, in the image's working directory"
    assert away["b.json"] is None and away["c.json"] is None
    assert "with --pwd" in away["d.json"]
    assert away["e.json"] == "it runs on node1 through ssh (run.sh:5), from the folder the remote shell starts in"
    pdsh = plans[-1]
    assert any(note.startswith("pdsh runs a copy of torchrun on each of its 4 hosts (node[1-4], run.sh:6)") for note in pdsh.notes)
    assert pdsh.world_size.value == 32


@pytest.mark.parametrize("files,want", CASES)
def test_plan(tmp_path, monkeypatch, files, want):
    plans = [p for p in plans_for(tmp_path, monkeypatch, files) if p.launcher != "yaml"]
    assert len(plans) == 1, plans
    plan = plans[0]
    assert plan.launcher == want["launcher"]
    assert plan.consumer == want["consumer"]
    assert (plan.procs_per_node.value if plan.procs_per_node else None) == want["procs"]
    assert (plan.nodes.value if plan.nodes else None) == want["nodes"]
    assert (plan.world_size.value if plan.world_size else None) == want["world"]
    if want["ds"] is None:
        assert plan.deepspeed is None or plan.deepspeed.document is None
    else:
        assert plan.deepspeed is not None and plan.deepspeed.document is not None
        assert Path(plan.deepspeed.document.path).as_posix().endswith(want["ds"]) or plan.deepspeed.document.path == want["ds"]
    origin = " ".join(s.origin for s in (plan.world_size, plan.procs_per_node, plan.nodes) if s is not None)
    for fragment in want["origin"]:
        assert fragment in origin


def test_training_yaml_without_a_script_still_links_its_deepspeed_config(tmp_path, monkeypatch):
    plans = plans_for(tmp_path, monkeypatch, {"examples/sft.yaml": SFT_YAML, "examples/deepspeed/ds_z3_config.json": DS})
    (plan,) = plans
    assert plan.launcher == "yaml" and plan.consumer == "llamafactory"
    assert plan.world_size is None
    assert plan.deepspeed.document.path.endswith("ds_z3_config.json")


def test_linting_only_the_script_loads_the_files_it_names(tmp_path, monkeypatch):
    files = {"run.sh": "deepspeed --num_gpus 4 train.py --deepspeed --deepspeed_config ds.json\n", "ds.json": '{"train_batch_size": 10, "train_micro_batch_size_per_gpu": 2}\n'}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    result = Engine(Settings(select=["DS101"], root=tmp_path)).lint_paths(["run.sh"])
    (diagnostic,) = result.diagnostics
    assert diagnostic.path == "ds.json"
    assert "10 != 2 * 1 * 4" in diagnostic.message
    assert any(r.span is not None and r.span.path == "run.sh" for r in diagnostic.related)


def test_a_config_reached_by_two_launches_is_checked_against_each(tmp_path, monkeypatch):
    files = {
        "run.sh": "deepspeed --num_gpus 2 t.py --deepspeed --deepspeed_config ds.json\ndeepspeed --num_gpus 3 t.py --deepspeed --deepspeed_config ds.json\n",
        "ds.json": '{"train_batch_size": 8, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 2}\n',
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    result = Engine(Settings(select=["DS101"], root=tmp_path)).lint_paths(["."])
    (diagnostic,) = result.diagnostics
    assert "8 != 2 * 2 * 3" in diagnostic.message


def test_preset_findings_are_reported_at_the_flag(tmp_path, monkeypatch):
    files = {"run.sh": "NPROC_PER_NODE=2 swift sft --model m --deepspeed zero3 --fp16 true --torch_dtype bfloat16\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    result = Engine(Settings(root=tmp_path)).lint_paths(["."])
    assert not result.internal_errors
    for diagnostic in result.diagnostics:
        assert not diagnostic.path.startswith("<")


def test_ascend_visible_devices_win_over_cuda_ones(tmp_path, monkeypatch):
    files = {"run.sh": "export CUDA_VISIBLE_DEVICES=0,1\nexport ASCEND_RT_VISIBLE_DEVICES=0,1,2,3\nNPROC_PER_NODE=4 swift sft --model m\n"}
    (plan,) = plans_for(tmp_path, monkeypatch, files)
    assert plan.visible_devices.value == ["0", "1", "2", "3"]
    assert "ASCEND_RT_VISIBLE_DEVICES" in plan.visible_devices.origin


def test_an_ms_swift_entry_file_reads_a_json_config_first_and_flags_over_it(tmp_path, monkeypatch):
    [plan] = plans_for(tmp_path, monkeypatch, {
        "run.sh": "torchrun --nproc_per_node 4 swift/cli/sft.py sft.json --learning_rate 1e-4\n",
        "sft.json": '{"learning_rate": 2e-5, "per_device_train_batch_size": 2}\n',
    })
    assert plan.training_config.raw == "sft.json" and plan.training_config.document is not None
    assert plan.args["learning_rate"].value == "1e-4" and plan.args["per_device_train_batch_size"].value == 2


def test_a_yaml_after_an_ms_swift_entry_file_is_not_its_config(tmp_path, monkeypatch):
    """swift.utils.parse_args reads only .json by position; the YAML is left over (remaining_argv)."""
    plans = plans_for(tmp_path, monkeypatch, {"run.sh": "torchrun swift/cli/sft.py sft.yaml\n",
                                              "sft.yaml": "model: Qwen/Qwen2.5-7B\ntrain_type: lora\n"})
    [launch] = [p for p in plans if p.launcher == "torchrun"]
    assert launch.training_config is None


def test_llamafactorys_own_train_script_reads_its_positional_yaml(tmp_path, monkeypatch):
    plans = plans_for(tmp_path, monkeypatch, {
        "src/train.py": "from llamafactory.train.tuner import run_exp\n\nrun_exp()\n",
        "src/llamafactory/__init__.py": "", "src/llamafactory/hparams/__init__.py": "",
        "src/llamafactory/extras/env.py": 'VERSION = "0.9.3"\n',
        "scripts/run.sh": "torchrun --nproc_per_node 2 src/train.py examples/sft.yaml\n",
        "examples/sft.yaml": SFT_YAML,
    })
    [plan] = plans
    assert plan.program.kind == "llamafactory" and plan.program.established
    assert plan.training_config.document is not None and plan.args["finetuning_type"].value == "lora"


TRL_SFT = """\
from trl import ModelConfig, ScriptArguments, SFTConfig, SFTTrainer, TrlParser

parser = TrlParser((ScriptArguments, SFTConfig, ModelConfig))
script_args, training_args, model_args = parser.parse_args_and_config()
SFTTrainer(model=model_args.model_name_or_path, args=training_args).train()
"""


def test_trl_parser_reads_config_as_defaults_and_accelerates_config_file_stays_the_launchers(tmp_path, monkeypatch):
    """TrlParser.parse_args_and_config: `--config` YAML sets defaults, `env:` sets variables, flags win
    (trl/scripts/utils.py:303-344 in TRL 1.16.0)."""
    [plan] = [p for p in plans_for(tmp_path, monkeypatch, {
        "run.sh": "accelerate launch --config_file recipes/zero3.yaml sft.py --config recipes/sft.yaml --learning_rate 1e-5\n",
        "recipes/zero3.yaml": "compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\nnum_processes: 8\n",
        "recipes/sft.yaml": "learning_rate: 2.0e-5\nper_device_train_batch_size: 4\nenv:\n  WANDB_PROJECT: sft\n",
        "sft.py": TRL_SFT,
    }) if p.launcher == "accelerate"]
    assert plan.training_config.raw == "recipes/sft.yaml"
    assert plan.accelerate_config.raw == "recipes/zero3.yaml"
    assert plan.args["learning_rate"].value == "1e-5" and plan.args["per_device_train_batch_size"].value == 4
    assert "env" not in plan.args
    assert any("parse_args_and_config" in note for note in plan.notes)


@pytest.mark.parametrize("program,linked", [
    ("import argparse\nfrom transformers import HfArgumentParser, Trainer, TrainingArguments\n\np = argparse.ArgumentParser()\n"
     "p.add_argument('--config_file')\nargs = p.parse_args()\n"
     "(training_args,) = HfArgumentParser(TrainingArguments).parse_yaml_file(args.config_file)\n"
     "Trainer(args=training_args).train()\n", True),
    ("import argparse, yaml\nfrom transformers import Trainer, TrainingArguments\n\np = argparse.ArgumentParser()\n"
     "p.add_argument('--config_file')\nargs = p.parse_args()\ncfg = yaml.safe_load(open(args.config_file))\n"
     "Trainer(args=TrainingArguments(**cfg['trainer'])).train()\n", False),
    (TRL_SFT.replace("parse_args_and_config", "parse_args_into_dataclasses"), False),
])
def test_a_config_flag_is_a_training_config_only_where_the_program_parses_it_as_one(tmp_path, monkeypatch, program, linked):
    plans = plans_for(tmp_path, monkeypatch, {
        "run.sh": "torchrun --nproc_per_node 2 train.py --config_file args.yaml --config args.yaml\n",
        "args.yaml": "per_device_train_batch_size: 4\n",
        "train.py": program,
    })
    launch = next(p for p in plans if p.launcher == "torchrun")
    assert (launch.training_config is not None) is linked
