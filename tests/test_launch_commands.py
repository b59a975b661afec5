"""Recognising launches in scripts: launcher, its options, the program and the program's flags."""

from __future__ import annotations

from pathlib import Path

import pytest

from dslint.documents.shell import parse_script
from dslint.launch.commands import LaunchCommand, find_launches
from dslint.source import SourceFile

FIXTURES = Path(__file__).parent / "fixtures" / "scripts"


def launches(text: str) -> list[LaunchCommand]:
    return find_launches(parse_script(SourceFile("t.sh", text)))


def one(text: str) -> LaunchCommand:
    found = launches(text)
    assert len(found) == 1, found
    return found[0]


def fixture(name: str) -> list[LaunchCommand]:
    path = FIXTURES / name
    return find_launches(parse_script(SourceFile.from_bytes(str(path), path.read_bytes())))


def opts(launch: LaunchCommand) -> dict:
    return {k: (o.text if o.value is not None else True) for k, o in launch.launcher_options.items()}


def args(launch: LaunchCommand) -> list[tuple]:
    return [(o.key, [w.value for w in o.values]) for o in launch.program_args]


def pos(span) -> tuple[int, int]:
    return span.source.position(span.start)


# ---------------------------------------------------------------------------------------
# deepspeed
# ---------------------------------------------------------------------------------------


def test_deepspeed_options_program_and_args():
    launch = one(
        "deepspeed --num_gpus 4 --num_nodes=2 -H hostfile --include localhost:0,1 --master_port 29501 "
        "--master_addr 10.0.0.1 --module --no_local_rank train.main --deepspeed_config ds.json --lr -1e-4 --bf16\n"
    )
    assert launch.launcher == "deepspeed"
    assert opts(launch) == {
        "num_gpus": "4",
        "num_nodes": "2",
        "hostfile": "hostfile",
        "include": "localhost:0,1",
        "master_port": "29501",
        "master_addr": "10.0.0.1",
        "module": True,
        "no_local_rank": True,
    }
    assert launch.module and launch.program.value == "train.main"
    assert args(launch) == [("deepspeed_config", ["ds.json"]), ("lr", ["-1e-4"]), ("bf16", [])]
    assert launch.arg("deepspeed-config").text == "ds.json"
    nodes = launch.option("num_nodes")
    assert nodes.inline and pos(nodes.name_span) == (1, 24) and nodes.value.span.text == "2"


def test_deepspeed_abbreviations_and_spellings():
    launch = one("deepspeed --num_gpu 2 --num-nodes 1 --num_accelerators 8 t.py\n")
    gpus = launch.launcher_option_list[0]
    assert gpus.key == "num_gpus" and gpus.known
    dashed = launch.launcher_option_list[1]
    assert dashed.key == "num_nodes" and not dashed.known  # deepspeed's argparse only has --num_nodes
    assert launch.option("num_gpus").text == "8"  # --num_accelerators is the same option; the last wins
    assert launch.program.value == "t.py"


def test_deepspeed_examples_fixture():
    (launch,) = fixture("ds_example.sh")
    assert launch.option("num_gpus").value.assumed == "8" and launch.option("num_gpus").text is None
    assert launch.option("master_port").text == "29501"
    assert launch.program.value == "main.py"
    assert launch.arg("per_device_train_batch_size").text == "4"
    assert launch.arg("deepspeed").value is None  # bare flag
    assert launch.arg("zero_stage").value.raw == "$ZERO_STAGE"


# ---------------------------------------------------------------------------------------
# torchrun
# ---------------------------------------------------------------------------------------


def test_torchrun_value_and_flag_options():
    launch = one(
        "torchrun --standalone --nproc-per-node=gpu --nnodes 1:4 --rdzv_backend c10d --rdzv-endpoint h:29400 "
        "--max-restarts=3 -r 3 --no-python train.py --x 1\n"
    )
    assert opts(launch) == {
        "standalone": True,
        "nproc_per_node": "gpu",
        "nnodes": "1:4",
        "rdzv_backend": "c10d",
        "rdzv_endpoint": "h:29400",
        "max_restarts": "3",
        "redirects": "3",
        "no_python": True,
    }
    assert launch.program.value == "train.py"
    assert args(launch) == [("x", ["1"])]
    assert all(o.known for o in launch.launcher_option_list)


def test_standalone_is_not_followed_by_a_value():
    launch = one("torchrun --standalone train.py --lr 1\n")
    assert launch.program.value == "train.py" and launch.option("standalone").value is None


@pytest.mark.parametrize(
    "text",
    [
        "python -m torch.distributed.run --nproc_per_node 2 t.py --a 1\n",
        "python3 -m torch.distributed.launch --use_env --nproc_per_node=2 t.py --a 1\n",
        "/usr/bin/env python -m torch.distributed.run --nproc_per_node 2 t.py --a 1\n",
        "python -u -m torch.distributed.run --nproc_per_node 2 t.py --a 1\n",
        "python -um torch.distributed.run --nproc_per_node 2 t.py --a 1\n",
        "/opt/conda/bin/python3.10 -W ignore -m torch.distributed.run --nproc_per_node 2 t.py --a 1\n",
    ],
)
def test_python_module_torchrun(text):
    launch = one(text)
    assert launch.launcher == "torchrun" and launch.via.startswith("python -m torch.distributed.")
    assert launch.option("nproc_per_node").text == "2"
    assert launch.program.value == "t.py" and args(launch) == [("a", ["1"])]


def test_torchrun_multinode_fixture():
    (launch,) = fixture("torchrun_multinode.sh")
    assert opts(launch) == {
        "master_port": "29500",
        "nproc_per_node": "8",
        "nnodes": "2",
        "node_rank": "0",
        "master_addr": "127.0.0.1",
    }
    assert launch.entry == "swift sft"
    assert launch.arg("gradient_accumulation_steps").text == "2"
    assert launch.environment["CUDA_VISIBLE_DEVICES"].value == "0,1,2,3,4,5,6,7"


def test_megatron_style_distributed_args_are_resolved():
    (launch,) = fixture("megatron_dist.sh")
    assert opts(launch) == {
        "nproc_per_node": "8",
        "nnodes": "1",
        "node_rank": "0",
        "master_addr": "localhost",
        "master_port": "6000",
    }
    assert launch.program.value == "pretrain_gpt.py"
    assert launch.arg("global_batch_size").text == "32"
    assert launch.arg("tensor_model_parallel_size").text == "2"
    assert not launch.complete  # $EXTRA_ARGS may be anything


def test_unknown_distributed_args_are_kept_opaque():
    launch = one("torchrun $DISTRIBUTED_ARGS pretrain_gpt.py --save x\n")
    assert [w.raw for w in launch.opaque] == ["$DISTRIBUTED_ARGS"]
    assert launch.program.value == "pretrain_gpt.py" and not launch.complete
    launch = one('torchrun --nproc_per_node 2 "$SCRIPT" --lr 1\n')
    assert launch.program.raw == '"$SCRIPT"' and launch.program.value is None
    assert args(launch) == [("lr", ["1"])]


# ---------------------------------------------------------------------------------------
# accelerate
# ---------------------------------------------------------------------------------------


def test_accelerate_launch():
    launch = one(
        "accelerate launch --config_file acc.yaml --num_processes=8 --num-machines 2 --use_deepspeed "
        "--deepspeed_config_file ds.json --zero_stage 3 --gradient_accumulation_steps 4 --mixed_precision bf16 "
        "-m --same_network trainer.main --per_device_train_batch_size 2\n"
    )
    assert launch.launcher == "accelerate" and launch.subcommand == "launch"
    assert opts(launch) == {
        "config_file": "acc.yaml",
        "num_processes": "8",
        "num_machines": "2",
        "use_deepspeed": True,
        "deepspeed_config_file": "ds.json",
        "zero_stage": "3",
        "gradient_accumulation_steps": "4",
        "mixed_precision": "bf16",
        "module": True,
        "same_network": True,
    }
    assert launch.module and launch.program.value == "trainer.main"
    assert args(launch) == [("per_device_train_batch_size", ["2"])]


def test_accelerate_fixture_with_llamafactory_yaml():
    (launch,) = fixture("accelerate_fsdp.sh")
    assert launch.option("config_file").text == "examples/accelerate/fsdp_config.yaml"
    assert launch.program.value == "src/train.py"
    assert launch.positionals[0].value == "examples/extras/fsdp_qlora/llama3_lora_sft.yaml"
    assert launch.environment["CUDA_VISIBLE_DEVICES"].value == "0,1,2,3"


def test_accelerate_other_subcommands_are_not_launches():
    assert launches("accelerate config\naccelerate env\n") == []


# ---------------------------------------------------------------------------------------
# ms-swift, megatron, llamafactory
# ---------------------------------------------------------------------------------------


def test_swift_fixture():
    (launch,) = fixture("swift_lora_sft.sh")
    assert (launch.launcher, launch.subcommand, launch.entry) == ("swift", "sft", "swift sft")
    assert launch.program is None and launch.config_file is None
    assert launch.arg("model").text == "Qwen/Qwen2.5-7B-Instruct"
    assert [w.value for w in launch.arg("dataset").values] == [
        "AI-ModelScope/alpaca-gpt4-data-en#500",
        "swift/self-cognition#500",
    ]
    assert launch.arg("deepspeed").text == "zero2"
    assert launch.environment["NPROC_PER_NODE"].value == "2"
    assert pos(launch.arg("deepspeed").name_span) == (16, 5)


def test_swift_config_file_and_megatron():
    first, second, third = launches(
        "swift sft examples/sft.yaml --lr 1e-4\n"
        "swift rlhf --rlhf_type dpo\n"
        "megatron sft --tensor_model_parallel_size 2\n"
    )
    assert first.config_file.value == "examples/sft.yaml" and args(first) == [("lr", ["1e-4"])]
    assert second.subcommand == "rlhf" and second.arg("rlhf_type").text == "dpo"
    assert (third.launcher, third.entry) == ("megatron", "megatron sft")
    assert third.arg("tensor_model_parallel_size").text == "2"


def test_npu_fixture():
    (launch,) = fixture("swift_npu.sh")
    assert launch.arg("gradient_accumulation_steps").text == "4"
    assert launch.environment["ASCEND_RT_VISIBLE_DEVICES"].value == "0,1,2,3"


def test_llamafactory_overrides():
    first, second = fixture("lf_train.sh")
    assert (first.launcher, first.subcommand) == ("llamafactory", "train")
    assert first.config_file.value == "examples/train_lora/llama3_lora_sft.yaml"
    assert [(o.key, o.text) for o in first.overrides] == [
        ("model_name_or_path", "meta-llama/Meta-Llama-3-8B-Instruct"),
        ("learning_rate", "1e-5"),
        ("bf16", "true"),
    ]
    assert first.environment["FORCE_TORCHRUN"].value == "1"
    assert pos(first.overrides[1].name_span) == (7, 38)
    assert (second.subcommand, second.config_file.value) == ("export", "examples/merge_lora/llama3_lora_sft.yaml")


def test_llamafactory_with_flags_instead_of_a_yaml():
    launch = one("llamafactory-cli train --stage sft --model_name_or_path m --do_train\n")
    assert launch.config_file is None and launch.overrides == []
    assert args(launch) == [("stage", ["sft"]), ("model_name_or_path", ["m"]), ("do_train", [])]


# ---------------------------------------------------------------------------------------
# python and wrappers
# ---------------------------------------------------------------------------------------


def test_plain_python():
    launch = one("python3 -u train.py --per_device_train_batch_size=4 --flag --output_dir out pos1\n")
    assert launch.launcher == "python" and launch.program.value == "train.py"
    assert args(launch) == [("per_device_train_batch_size", ["4"]), ("flag", []), ("output_dir", ["out", "pos1"])]
    assert launch.program_args[0].inline


def test_python_module_entries():
    first, second = launches("python -m swift.cli.sft --model m\npython swift/cli/_megatron/sft.py x.json\n")
    assert first.module and first.entry == "swift sft"
    assert second.entry == "megatron sft" and second.config_file.value == "x.json"


def test_ms_swift_entry_files_read_a_json_config_only():
    """swift/cli/sft.py run directly (torchrun, deepspeed) parses with swift.utils.parse_args, which
    reads a first positional ending in .json (swift/utils/utils.py:126 in 2.6.1); the YAML form is the
    `swift` command's own (swift/cli/main.py), so a .yaml stays an argument ms-swift leaves over."""
    json_launch, yaml_launch, example = launches(
        "torchrun --nproc_per_node 8 swift/cli/sft.py cfg.json --lr 1e-4\n"
        "deepspeed swift/cli/sft.py cfg.yaml\n"
        "torchrun --nproc_per_node 2 examples/pytorch/llm/llm_sft.py --model_type qwen-7b\n")
    assert json_launch.entry == "swift sft" and json_launch.config_file.value == "cfg.json"
    assert yaml_launch.entry == "swift sft" and yaml_launch.config_file is None
    assert [o.value.value for o in yaml_launch.program_args] == ["cfg.yaml"]
    assert example.entry == "swift sft" and example.launcher == "torchrun"


@pytest.mark.parametrize(
    "text",
    [
        "python -c 'import torch'\n",
        "python\n",
        "python <<EOF\nprint(1)\nEOF\n",
        "echo deepspeed train.py\n",
        "pip install deepspeed\n",
        "accelerate config default\n",
        "command -v torchrun\n",
    ],
)
def test_not_launches(text):
    assert launches(text) == []


def test_wrapped_launches():
    found = launches(
        "CUDA_VISIBLE_DEVICES=0,1 nohup deepspeed --num_gpus 2 a.py > log 2>&1 &\n"
        "exec torchrun --nproc_per_node 2 b.py\n"
        "time env NCCL_DEBUG=INFO accelerate launch c.py\n"
    )
    assert [(launch.launcher, launch.program.value) for launch in found] == [
        ("deepspeed", "a.py"),
        ("torchrun", "b.py"),
        ("accelerate", "c.py"),
    ]
    assert found[0].environment["CUDA_VISIBLE_DEVICES"].value == "0,1" and found[0].command.background
    assert found[2].environment["NCCL_DEBUG"].value == "INFO"


def test_slurm_and_mpi_wrappers():
    first, second = launches(
        "srun --nodes=2 -N 2 --ntasks-per-node 1 -l --gres=gpu:8 torchrun --nnodes 2 t.py\n"
        "mpirun -np 16 -H a:8,b:8 -x NCCL_DEBUG=INFO -x LD_LIBRARY_PATH -genv OMP_NUM_THREADS 4 "
        "--mca btl ^openib --allow-run-as-root python train.py --lr 1\n"
    )
    assert first.launcher == "torchrun" and first.option("nnodes").text == "2" and first.program.value == "t.py"
    assert [w.value for w in first.command.wrappers][0] == "srun"
    assert second.launcher == "python" and second.program.value == "train.py"
    assert second.command.wrappers[0].value == "mpirun"
    assert {k: v.value for k, v in second.environment.items()} == {"NCCL_DEBUG": "INFO", "OMP_NUM_THREADS": "4"}


def test_launches_inside_containers_and_remote_shells():
    found = launches(
        "singularity exec --nv img.sif torchrun --nproc_per_node 8 train.py --deepspeed ds.json\n"
        "apptainer run --nv docker://nvcr.io/nvidia/pytorch:24.05-py3 deepspeed --num_gpus 2 a.py\n"
        "docker run --gpus all -e CUDA_VISIBLE_DEVICES=0,1 -v $PWD:/ws img deepspeed b.py --deepspeed ds.json\n"
        "docker exec trainer accelerate launch --num_processes 4 c.py\n"
        'ssh node1 "cd /ws && llamafactory-cli train sft.yaml"\n'
        'pdsh -w node[1-2] "cd /ws; python -m torch.distributed.run --nnodes 2 --nproc_per_node 8 d.py"\n'
        "singularity run img.sif e.py\n"
    )
    assert [(launch.launcher, launch.program.value if launch.program else launch.config_file.value) for launch in found] == [
        ("torchrun", "train.py"), ("deepspeed", "a.py"), ("deepspeed", "b.py"), ("accelerate", "c.py"),
        ("llamafactory", "sft.yaml"), ("torchrun", "d.py"),
    ]
    assert found[0].option("nproc_per_node").text == "8" and found[5].option("nnodes").text == "2"
    assert found[2].environment["CUDA_VISIBLE_DEVICES"].value == "0,1"
    assert [launch.command.runner.basename for launch in found[4:]] == ["ssh", "pdsh"]


def test_launches_in_functions_branches_and_eval():
    found = fixture("functions_eval.sh")
    summary = [
        (launch.launcher, launch.command.in_function, launch.command.conditional, launch.command.from_eval)
        for launch in found
    ]
    assert summary == [
        ("torchrun", "launch", False, False),
        ("accelerate", None, False, True),
        ("deepspeed", None, False, True),
        ("deepspeed", None, True, False),
        ("python", None, False, False),
        ("python", None, True, False),
    ]
    assert found[1].arg("per_device_train_batch_size").text == "4"
    assert found[4].command.in_loop and found[4].arg("seed").text is None


def test_launch_env_values_from_the_traps_fixture():
    found = fixture("traps.sh")
    # the blank line cut the env prefixes off: swift gets nothing
    assert found[0].launcher == "swift" and found[0].environment == {}
    ds = [launch for launch in found if launch.launcher == "deepspeed"][0]
    assert [w.value for w in ds.arg("deepspeed").values] == ["ds.json", "CUDA_VISIBLE_DEVICES=0"]


def test_program_arg_spans():
    launch = one("deepspeed t.py --lr 1e-4 --zero_stage=3\n")
    lr, zero = launch.program_args
    assert pos(lr.span) == (1, 16) and lr.span.text == "--lr 1e-4"
    assert pos(zero.name_span) == (1, 26) and zero.name_span.text == "--zero_stage"
    assert zero.value.span.text == "3"


# bash takes one word after a redirection operator as its target; the words after it are
# arguments of the command (tree-sitter-bash reads them all as targets).
@pytest.mark.parametrize("text", [
    "torchrun --nproc_per_node 4 train.py --a 1 2>err.log --b 2 --c 3\n",
    "torchrun --nproc_per_node 4 train.py --a 1 2>&1 --b 2 --c 3 | tee run.log\n",
    "torchrun --nproc_per_node 4 train.py --a 1 <in.txt \\\n    --b 2 \\\n    --c 3\n",
    "torchrun --nproc_per_node 4 train.py --a 1 > out.log --b 2 2>&1 --c 3\n",
])
def test_words_after_a_redirection_target_are_arguments(text):
    assert args(one(text)) == [("a", ["1"]), ("b", ["2"]), ("c", ["3"])]


def test_redirections_at_the_end_add_no_arguments():
    assert args(one("torchrun --nproc_per_node 4 train.py --a 1 > log.txt 2>&1 &\n")) == [("a", ["1"])]


def test_a_redirection_without_its_target_on_the_line_takes_no_later_words():
    # `--port <node1_port>` then a blank line: bash rejects `>` before the newline; the next
    # command's assignments must not become this command's arguments.
    found = launches("CUDA_VISIBLE_DEVICES=0,1 swift rollout --model m --port <node1_port>\n\n"
                     "NNODES=2 \\\nNPROC_PER_NODE=4 \\\nswift rlhf --rlhf_type grpo --model m\n")
    assert [o.key for o in found[0].program_args] == ["model", "port"]
