"""``dslint explain``: the resolved launch, every number with where it came from."""

from __future__ import annotations

import json
import math
from pathlib import Path

import jsonschema
import pytest
from cli_support import invoke

from dslint.config import Settings
from dslint.run.engine import Engine
from dslint.explain import Options, explain_result, to_json
from dslint.explain.memory import GiB
from dslint.explain.text import render

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "schemas" / "explain.schema.json").read_text(encoding="utf-8"))

MULTI_NODE_SWIFT = """\
#!/bin/bash
# 2 nodes x 8 GPUs, full-parameter SFT of Qwen2.5-7B with ZeRO-3 (run on every node)
NNODES=2 \\
NODE_RANK=$NODE_RANK \\
MASTER_ADDR=$MASTER_ADDR \\
NPROC_PER_NODE=8 \\
swift sft \\
    --model Qwen/Qwen2.5-7B-Instruct \\
    --train_type full \\
    --dataset data/train.jsonl \\
    --torch_dtype bfloat16 \\
    --num_train_epochs 3 \\
    --per_device_train_batch_size 2 \\
    --max_length 4096 \\
    --gradient_checkpointing true \\
    --deepspeed zero3 \\
    --output_dir output
"""


def _explain(tmp_path, monkeypatch, files: dict[str, str], paths=(".",), **options):
    monkeypatch.chdir(tmp_path)
    for name, text in files.items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    result = Engine(Settings(select=["DS001"], root=tmp_path)).lint_paths(list(paths))
    explanations = explain_result(result, Options(cwd=tmp_path, **options))
    jsonschema.validate(to_json(explanations), SCHEMA)
    return explanations


def test_multi_node_swift_launch(tmp_path, monkeypatch):
    (e,) = _explain(tmp_path, monkeypatch, {"train.sh": MULTI_NODE_SWIFT}, samples=10_000, device_memory=80 * GiB)
    assert (e.launcher, e.consumer, e.entry) == ("swift", "swift", "swift sft")
    assert (e.nodes.value, e.procs_per_node.value, e.world_size.value) == (2, 8, 16)
    assert (e.nodes.line, e.procs_per_node.line) == (3, 6)
    assert e.parallel.data_parallel.value == 16
    batch = e.batch
    assert (batch.micro_batch.value, batch.micro_batch.line) == (2, 13)
    # ms-swift's default accumulation: max(1, ceil(16 / (2 × 16))) = 1
    assert batch.accumulation.value == 1 and batch.accumulation.default
    assert "ceil(16 / (2 × 16))" in batch.accumulation.origin
    assert batch.global_batch == 32 and batch.passes_per_step == 1
    steps = e.steps
    assert steps.batches_per_epoch == math.ceil(10_000 / 32)
    assert steps.steps_per_epoch == 313 and steps.total_steps == 939
    assert "0/939" in steps.progress_bar
    assert e.precision.mixed_precision.value == "bf16" and e.precision.deepspeed_bf16.value is True
    assert e.zero.stage.value == 3 and e.zero.stage.line == 16
    assert e.model.shape.name == "Qwen2.5-7B" and e.model.how == "recognised-name"
    assert e.model.seq_len.value == 4096 and e.model.checkpointing.value is True
    memory = e.memory
    assert memory.fits is True
    keys = {t.key for t in memory.estimate.terms}
    assert {"weights", "optimizer_states", "largest_layer", "live_parameters", "activations", "logits"} <= keys
    # Model states as DeepSpeed's ZeRO-3 estimator counts them: 18·P/16 + 4·L.
    shape = e.model.shape
    assert memory.estimate.model_states() == pytest.approx(18 * shape.params / 16 + 4 * shape.largest_layer)
    text = render([e])
    assert "2 node(s) × 8 process(es) per node = 16" in text
    assert "global batch = 2 × 1 × 16 = 32" in text
    assert "fits" in text


def test_swift_accumulation_default_reaches_sixteen(tmp_path, monkeypatch):
    (e,) = _explain(tmp_path, monkeypatch, {"run.sh": "NPROC_PER_NODE=4 swift sft --model m --deepspeed zero2\n"})
    assert e.batch.micro_batch.value == 1 and e.batch.micro_batch.default  # ms-swift's default
    assert e.batch.accumulation.value == 4
    assert e.batch.global_batch == 16


def test_swift_sequence_parallel_divides_data_parallel(tmp_path, monkeypatch):
    (e,) = _explain(tmp_path, monkeypatch, {"run.sh": "NPROC_PER_NODE=8 swift sft --model m --sequence_parallel_size 2 --per_device_train_batch_size 1 --gradient_accumulation_steps 4\n"})
    assert e.parallel.sequence.value == 2
    assert e.parallel.data_parallel.value == 4
    assert e.batch.global_batch == 16


def test_hf_trainer_defaults(tmp_path, monkeypatch):
    files = {
        "run.sh": "torchrun --nproc_per_node 4 train.py --deepspeed ds.json --model_name_or_path meta-llama/Llama-2-7b-hf --bf16\n",
        "ds.json": '{"zero_optimization": {"stage": 2}, "bf16": {"enabled": "auto"}, "train_micro_batch_size_per_gpu": "auto"}\n',
    }
    (e,) = _explain(tmp_path, monkeypatch, files, paths=["run.sh"])
    assert e.consumer == "hf"
    assert e.batch.micro_batch.value == 8 and "transformers default" in e.batch.micro_batch.origin
    assert e.batch.accumulation.value == 1
    assert e.batch.global_batch == 32
    assert e.steps.epochs.value == 3.0
    assert e.precision.mixed_precision.value == "bf16"
    assert e.zero.stage.value == 2
    assert e.model.training.value == "full" and e.model.checkpointing.value is False
    assert e.memory.estimate.model_states() == pytest.approx(2 * e.model.shape.params + 18 * e.model.shape.params / 4)


def test_steps_per_epoch_round_up_the_last_accumulation(tmp_path, monkeypatch):
    script = "NPROC_PER_NODE=2 swift sft --model m --per_device_train_batch_size 2 --gradient_accumulation_steps 8 --num_train_epochs 2\n"
    (e,) = _explain(tmp_path, monkeypatch, {"run.sh": script}, samples=1003)
    assert e.steps.batches_per_epoch == math.ceil(1003 / 4) == 251
    assert e.steps.steps_per_epoch == math.ceil(251 / 8) == 32
    assert e.steps.total_steps == 64


def test_swift_dataset_sample_counts(tmp_path, monkeypatch):
    script = "NPROC_PER_NODE=2 swift sft --model m --dataset 'a#500' 'b#700' --per_device_train_batch_size 1 --gradient_accumulation_steps 1 --num_train_epochs 1\n"
    (e,) = _explain(tmp_path, monkeypatch, {"run.sh": script})
    assert e.steps.samples.value == 1200
    assert e.steps.total_steps == 600


def test_max_steps_wins(tmp_path, monkeypatch):
    script = "NPROC_PER_NODE=2 swift sft --model m --max_steps 100 --per_device_train_batch_size 1\n"
    (e,) = _explain(tmp_path, monkeypatch, {"run.sh": script}, samples=1000)
    assert e.steps.total_steps == 100


def test_megatron_data_parallel_and_accumulation(tmp_path, monkeypatch):
    script = (
        "NPROC_PER_NODE=8 megatron sft --model Qwen/Qwen2.5-7B --tensor_model_parallel_size 2 --pipeline_model_parallel_size 2 "
        "--micro_batch_size 2 --global_batch_size 64 --max_length 2048 --use_distributed_optimizer true\n"
    )
    (e,) = _explain(tmp_path, monkeypatch, {"run.sh": script})
    assert e.parallel.data_parallel.value == 2
    assert e.batch.accumulation.value == 16
    assert e.batch.global_batch == 64
    assert e.zero.engine == "megatron"
    states = e.memory.estimate.model_states()
    p = e.model.shape.params / 4  # tensor × pipeline
    assert states == pytest.approx(6 * p + 12 * p / 2)


def test_megatron_defaults(tmp_path, monkeypatch):
    (e,) = _explain(tmp_path, monkeypatch, {"run.sh": "NPROC_PER_NODE=4 megatron sft --model m\n"})
    assert e.batch.micro_batch.value == 1 and e.batch.global_batch == 16
    assert e.batch.accumulation.value == 4


def test_deepspeed_config_with_world_size(tmp_path, monkeypatch):
    files = {"ds.json": '{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 1}, "fp16": {"enabled": true}}\n'}
    (e,) = _explain(tmp_path, monkeypatch, files, world_size=8, params=1_300_000_000)
    assert e.kind == "deepspeed-config"
    assert e.batch.micro_batch.value == 2
    assert e.batch.accumulation.value == 4 and "derives" in e.batch.accumulation.origin
    assert e.batch.global_batch == 64
    assert e.precision.mixed_precision.value == "fp16"
    assert e.model.how == "params-option"
    assert e.memory.estimate.model_states() == pytest.approx(4 * 1.3e9 + 16 * 1.3e9 / 8)


def test_auto_under_plain_deepspeed_is_off(tmp_path, monkeypatch):
    files = {"ds.json": '{"train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": "auto"}, "zero_optimization": {"stage": "auto"}}\n'}
    (e,) = _explain(tmp_path, monkeypatch, files, world_size=2)
    assert e.precision.deepspeed_bf16.value is False
    assert e.precision.mixed_precision.value == "fp32"
    assert e.zero.stage.value == 0


def test_local_config_json_next_to_the_model(tmp_path, monkeypatch):
    config = (
        '{"model_type": "qwen2", "hidden_size": 896, "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2,'
        ' "intermediate_size": 4864, "vocab_size": 151936, "tie_word_embeddings": true}'
    )
    files = {"models/tiny/config.json": config, "run.sh": "NPROC_PER_NODE=2 swift sft --model models/tiny --train_type full --deepspeed zero2 --max_length 1024\n"}
    (e,) = _explain(tmp_path, monkeypatch, files, paths=["run.sh"])
    assert e.model.how == "local-config"
    assert e.model.shape.params == 494_032_768
    assert "config.json" in e.model.shape.source


def test_params_option_without_a_model_name(tmp_path, monkeypatch):
    (e,) = _explain(tmp_path, monkeypatch, {"run.sh": "NPROC_PER_NODE=8 swift sft --model my/private --train_type full --deepspeed zero2\n"}, params=7_000_000_000)
    assert e.model.shape.params == 7_000_000_000 and e.model.how == "params-option"
    assert e.memory is not None
    assert any("sequence length unknown" in n for n in e.notes)


def test_unknown_model_says_how_to_get_an_estimate(tmp_path, monkeypatch):
    (e,) = _explain(tmp_path, monkeypatch, {"run.sh": "NPROC_PER_NODE=8 swift sft --model my/private --deepspeed zero2\n"})
    assert e.model is None and e.memory is None
    assert any("--params" in n for n in e.notes)


def test_lora_trains_an_adapter(tmp_path, monkeypatch):
    (e,) = _explain(tmp_path, monkeypatch, {"run.sh": "NPROC_PER_NODE=2 swift sft --model Qwen/Qwen2.5-7B-Instruct --deepspeed zero2\n"})
    assert e.model.training.value == "lora" and e.model.training.default
    low, high = e.model.trainable
    assert low == high and 0 < high < 0.01 * e.model.shape.params


def test_offload_moves_states_to_cpu(tmp_path, monkeypatch):
    files = {
        "run.sh": "deepspeed --num_gpus 8 train.py --deepspeed_config ds.json --model_name_or_path meta-llama/Llama-3.1-8B\n",
        "ds.json": '{"train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": true}, "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}, "offload_param": {"device": "cpu"}}}\n',
    }
    (e,) = _explain(tmp_path, monkeypatch, files, paths=["run.sh"])
    assert e.zero.offload_optimizer.value == "cpu" and e.zero.offload_param.value == "cpu"
    assert e.memory.estimate.model_states() == pytest.approx(4 * e.model.shape.largest_layer)
    assert e.memory.estimate.cpu_high > 0
    assert {t.key for t in e.memory.estimate.terms if t.place == "moved"} == {"weights", "fp32_gradients", "master_weights", "optimizer_states"}


def test_device_memory_from_hardware(tmp_path, monkeypatch):
    (e,) = _explain(tmp_path, monkeypatch, {"train.sh": MULTI_NODE_SWIFT}, hardware="ascend-910b", hardware_origin="hardware in dslint.toml")
    assert e.memory.device_memory.value == 64 * GiB


def test_text_is_one_block_per_launch(tmp_path, monkeypatch):
    files = {"a.sh": MULTI_NODE_SWIFT, "b.sh": "NPROC_PER_NODE=4 swift sft --model m --deepspeed zero2\n"}
    explanations = _explain(tmp_path, monkeypatch, files)
    text = render(explanations)
    assert text.count("(launcher swift, read by ms-swift (HF Trainer))") == 2
    for label in ("world", "parallel", "batch", "steps", "precision", "ZeRO"):
        assert f"  {label}" in text


# ---- the command ---------------------------------------------------------------------------------


def _run(args, cwd):
    for name, text in (("train.sh", MULTI_NODE_SWIFT), ("ds.json", '{"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2}}\n')):
        (cwd / name).write_text(text, encoding="utf-8")
    return invoke(args)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def test_cli_json_validates_against_the_schema(tmp_path):
    run = _run(["explain", "--format", "json", "--world-size", "4", "--samples", "5000", "--device-memory", "80GB", "--no-config", "."], tmp_path)
    assert run.exit_code == 0, run.output
    data = json.loads(run.output)
    jsonschema.validate(data, SCHEMA)
    kinds = sorted(launch["kind"] for launch in data["launches"])
    assert kinds == ["deepspeed-config", "launch"]
    launch = next(item for item in data["launches"] if item["kind"] == "launch")
    assert launch["batch"]["global_batch"] == 32
    assert launch["memory"]["fits"] is True


def test_cli_text(tmp_path):
    run = _run(["explain", "--no-config", "train.sh", "--params", "7B"], tmp_path)
    assert run.exit_code == 0, run.output
    assert "global batch = 2 × 1 × 16 = 32" in run.output
    assert "7B parameters (--params on the command line" in run.output


@pytest.mark.parametrize("args", [["--params", "seven"], ["--device-memory", "lots"]])
def test_cli_rejects_bad_sizes(tmp_path, args):
    run = _run(["explain", "--no-config", "train.sh", *args], tmp_path)
    assert run.exit_code == 2
    assert "dslint: error:" in run.output


def test_check_accepts_device_memory(tmp_path):
    run = _run(["check", "--no-config", "--select", "DS801", "--device-memory", "16GB", "train.sh"], tmp_path)
    assert run.exit_code == 1, run.output
    assert "DS801" in run.output and "exceeds the 16 GiB" in run.output


def test_readme_snippet_shows_real_output(tmp_path):
    """README's "Explain a launch" example: its output is what dslint prints today."""
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    snippet = readme[readme.index("## Explain a launch") :]
    script = re.search(r"```bash\n(.*?)```", snippet, re.S).group(1)
    shown = re.search(r"```text\n\$ dslint explain (\S+) --device-memory 80GB\n(.*?)```", snippet, re.S)
    target = tmp_path / shown.group(1)
    target.parent.mkdir(parents=True)
    target.write_text(script, encoding="utf-8")
    run = invoke(["explain", "--no-config", shown.group(1), "--device-memory", "80GB"])
    assert run.exit_code == 0
    assert run.output == shown.group(2)


def test_readme_memory_fit_snippet_shows_real_output(tmp_path, monkeypatch):
    """README's DS801 example (`dslint check ... --device-memory 80GB`) is what dslint prints today."""
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    snippet = readme[readme.index("## Explain a launch") :]
    script = re.search(r"```bash\n(.*?)```", snippet, re.S).group(1)
    shown = re.search(r"```text\n\$ dslint (check [^\n]*)\n(.*?)```", snippet, re.S)
    args = shown.group(1).split()
    target = tmp_path / args[-1]
    target.parent.mkdir(parents=True)
    target.write_text(script, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    run = invoke([args[0], "--no-config", *args[1:]])
    assert run.exit_code == 1
    assert run.output == shown.group(2)


def test_the_launch_behind_wrappers_and_a_batch_script(tmp_path, monkeypatch):
    """explain names what runs the launch (srun, the `bash -c` string) and the #SBATCH lines its world comes from."""

    script = (
        "#!/bin/bash\n"
        "#SBATCH --nodes=2\n"
        "#SBATCH --ntasks-per-node=1\n"
        "#SBATCH --gres=gpu:8\n"
        'LAUNCH="torchrun --nnodes $SLURM_NNODES --nproc_per_node 8"\n'
        'srun --ntasks-per-node=1 bash -c "$LAUNCH train.py --output_dir $1"\n'
        "uv run --frozen train.py --output_dir out\n"
    )
    first, second = _explain(tmp_path, monkeypatch, {"train.slurm": script})
    assert first.via == ["srun --ntasks-per-node=1 (line 6)", "the string `bash` runs (line 6), read as a script"]
    assert first.slurm == "#SBATCH --nodes=2, --ntasks-per-node=1, --gres=gpu:8 (train.slurm:2-4)"
    assert first.world_size.value == 16
    assert any("srun starts 2 copies of torchrun" in note for note in first.notes)
    assert (second.launcher, second.via) == ("python", ["uv run --frozen (line 7)"])
    text = render([first])
    assert "  via        srun --ntasks-per-node=1 (line 6)\n" in text and "  slurm      #SBATCH --nodes=2" in text


def test_the_launch_inside_a_container_or_a_remote_shell(tmp_path, monkeypatch):
    """explain names the container or the remote shell that runs the launch (issue 22 item 4)."""
    script = (
        "singularity exec --nv img.sif torchrun --nproc_per_node 8 train.py --deepspeed ds.json\n"
        "docker run --gpus all -e CUDA_VISIBLE_DEVICES=0,1 -v $PWD:/ws img deepspeed train.py --deepspeed ds.json\n"
        'ssh node1 "cd /ws && deepspeed --num_gpus 4 train.py --deepspeed ds.json"\n'
        'pdsh -w node[1-2] "cd /ws && torchrun --nnodes 2 --nproc_per_node 8 train.py --deepspeed ds.json"\n'
    )
    found = _explain(tmp_path, monkeypatch, {"run.sh": script, "ds.json": '{"train_micro_batch_size_per_gpu": 2}\n'})
    assert [e.via for e in found] == [
        ["singularity exec --nv img.sif (line 1)"],
        ["docker run --gpus all -e CUDA_VISIBLE_DEVICES=0,1 -v $PWD:/ws img (line 2)"],
        ["the string `ssh` runs on node1 (line 3), read as a script by the remote shell"],
        ["the string `pdsh` runs on node[1-2] (line 4), read as a script by the remote shell"],
    ]
    assert [e.world_size.value for e in found] == [8, 2, 4, 16]
    assert "  via        singularity exec --nv img.sif (line 1)\n" in render(found[:1])


def test_versions_with_their_evidence(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    files = {
        "requirements.txt": "-c constraints.txt\ntransformers>=4.40,<5\n",
        "constraints.txt": "deepspeed==0.15.4\n",
        "train.sh": "deepspeed train.py --deepspeed ds.json --per_device_train_batch_size 2\n",
        "ds.json": '{"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}}\n',
        "sft.sh": "swift sft --model m --train_type lora\n",
    }
    launches = _explain(tmp_path, monkeypatch, files, ("train.sh", "sft.sh"), settings=Settings(root=tmp_path), versions=True)
    by_entry = {e.path: e for e in launches}
    deepspeed, transformers = (v.to_dict() for v in by_entry["train.sh"].versions)
    assert (deepspeed["package"], deepspeed["versions"], deepspeed["evidence"]) == ("deepspeed", ["0.15.4"], "pin")
    assert (deepspeed["path"], deepspeed["line"]) == ("constraints.txt", 1)
    assert deepspeed["text"] == "DeepSpeed 0.15.4 (deepspeed==0.15.4 in constraints.txt:1, constraint from requirements.txt:1)"
    assert transformers["evidence"] == "range" and transformers["versions"][0] == "4.45.0"
    assert transformers["versions"][-1].startswith("4.57.")
    swift = {v.candidates.package: v.to_dict() for v in by_entry["sft.sh"].versions}["ms-swift"]
    assert swift["evidence"] == "none" and swift["path"] is None
    assert swift["text"] == "ms-swift: unknown (nothing pins it): judged against 3.0.0–4.0.4, the known releases that have everything the launch uses (--model (3.0.0–4.6.0), --train_type (3.0.0–4.0.4))"
    text = render(launches)
    assert "  versions   DeepSpeed 0.15.4 (deepspeed==0.15.4 in constraints.txt:1" in text
    assert "ms-swift: unknown (nothing pins it)" in text


def test_versions_are_resolved_only_when_asked(tmp_path, monkeypatch):
    (e,) = _explain(tmp_path, monkeypatch, {"train.sh": "deepspeed train.py --deepspeed ds.json\n", "ds.json": "{}"},
                    ("train.sh",))
    assert e.versions == [] and e.to_dict()["versions"] == []


NODE_SCRIPT = """\
CUDA_VISIBLE_DEVICES=0,1,2,3 \\
NNODES=2 \\
NODE_RANK={rank} \\
MASTER_ADDR={addr} \\
MASTER_PORT=29500 \\
NPROC_PER_NODE={procs} \\
swift sft \\
    --model Qwen/Qwen2.5-7B-Instruct \\
    --tuner_type full \\
    --deepspeed zero2
"""


def test_a_node_script_shows_its_layout_with_each_node(tmp_path, monkeypatch):
    files = {"multi-node/node1.sh": NODE_SCRIPT.format(rank=0, addr="127.0.0.1", procs=4),
             "multi-node/node2.sh": NODE_SCRIPT.format(rank=1, addr="10.0.0.1", procs=4)}
    first, second = _explain(tmp_path, monkeypatch, files)
    layout = first.layout
    assert layout is not None and not layout.several_jobs and layout.world_size == 8
    assert [(m.path, m.rank.value, m.processes.value, m.master_addr.value, m.this_launch) for m in layout.members] == [
        ("multi-node/node1.sh", 0, 4, "127.0.0.1", True), ("multi-node/node2.sh", 1, 4, "10.0.0.1", False)]
    assert layout.members[1].rank.origin == "NODE_RANK=1 (multi-node/node2.sh:3)"
    assert [m.this_launch for m in second.layout.members] == [False, True]
    text = render([first])
    assert "layout     2 node launches in multi-node/: swift launches of swift sft (2 nodes, master 10.0.0.1:29500)" in text
    assert "rank 1  multi-node/node2.sh:1" in text and "world over the layout: 4 + 4 = 8 process(es)" in text


def test_explaining_one_node_script_reads_the_others_of_its_folder(tmp_path, monkeypatch):
    files = {"multi-node/node1.sh": NODE_SCRIPT.format(rank=0, addr="127.0.0.1", procs=4),
             "multi-node/node2.sh": NODE_SCRIPT.format(rank=1, addr="10.0.0.1", procs=4)}
    (e,) = _explain(tmp_path, monkeypatch, files, paths=("multi-node/node2.sh",))
    assert [(m.path, m.this_launch) for m in e.layout.members] == [("multi-node/node1.sh", False), ("multi-node/node2.sh", True)]


def test_a_launch_on_one_node_has_no_layout(tmp_path, monkeypatch):
    (e,) = _explain(tmp_path, monkeypatch, {"train.sh": "NPROC_PER_NODE=8 swift sft --model Qwen/Qwen2.5-7B-Instruct\n"})
    assert e.layout is None and to_json([e])["launches"][0]["layout"] is None


def test_explain_a_config_shows_the_launches_that_use_it_as_check_does(tmp_path, monkeypatch):
    """`dslint explain ds.json` reads the launches of the repository that name it, as `check ds.json`
    does: the batch with the launch's world size, not "no launch reaches this config"."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / "ds.json").write_text('{"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2, "train_batch_size": 24}\n', encoding="utf-8")
    (tmp_path / "other.json").write_text('{"train_micro_batch_size_per_gpu": 1}\n', encoding="utf-8")
    (tmp_path / "train.py").write_text("import deepspeed\n", encoding="utf-8")
    (tmp_path / "run.sh").write_text("deepspeed --num_gpus 2 train.py --deepspeed_config ds.json\n"
                                     "deepspeed --num_gpus 8 train.py --deepspeed_config other.json\n", encoding="utf-8")
    explained = invoke(["explain", "ds.json"]).stdout
    assert "run.sh:1: deepspeed" in explained and "run.sh:2" not in explained  # only the launch that uses it
    assert "24 != 4 * 2 * 2" in explained and "no launch reaches this config" not in explained
    assert "DS101" in invoke(["check", "--no-cache", "ds.json"]).stdout  # the same launch, the same verdict
    alone = invoke(["explain", "other.json", "--world-size", "3"]).stdout
    assert "run.sh:2: deepspeed" in alone and "run.sh:1" not in alone


def test_megatron_deepspeed_global_batch_comes_from_its_flags_not_the_config(tmp_path, monkeypatch):
    """Megatron-DeepSpeed sets DeepSpeed's train batch from --global-batch-size at every step
    (megatron/training.py set_train_batch_size): the config's train_batch_size is not the run's."""
    (e,) = _explain(tmp_path, monkeypatch, {
        "ds.json": '{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4}\n',
        "run.sh": "deepspeed --num_gpus 8 pretrain_gpt.py --micro-batch-size 4 --global-batch-size 1024 "
                  "--tensor-model-parallel-size 1 --deepspeed --deepspeed_config ds.json\n"})
    assert e.batch.global_batch == 1024
    assert e.batch.accumulation.value == 1024 // (4 * 8)


def test_a_command_that_does_not_train_has_no_batch_and_no_steps(tmp_path, monkeypatch):
    (e,) = _explain(tmp_path, monkeypatch, {"merge.sh": "swift export --adapters out/ckpt --merge_lora true\n"})
    assert e.batch.global_batch is None and "swift export does not train" in e.batch.formula
    assert e.steps.epochs is None and e.steps.total_steps is None


def test_megatron_defaults_do_not_stand_when_an_unread_expansion_may_give_the_flag(tmp_path, monkeypatch):
    """argparse takes the last of a repeated flag, so `$EXTRA_ARGS` after --global-batch-size may
    change it, and may give --micro-batch-size: neither the flag's value nor Megatron's default
    (micro batch 1, global batch = micro × data parallel) is the run's."""
    (e,) = _explain(tmp_path, monkeypatch, {
        "pretrain_gpt.py": "from megatron.training import pretrain\npretrain()\n",
        "run.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 1 --global-batch-size 64 $EXTRA_ARGS\n"})
    assert e.batch.global_batch is None and e.batch.micro_batch is None
    assert any("unknown micro batch" in note for note in e.batch.notes)


def test_hf_defaults_do_not_stand_when_an_unread_expansion_may_give_the_flag(tmp_path, monkeypatch):
    (e,) = _explain(tmp_path, monkeypatch, {
        "run.sh": "torchrun --nproc_per_node 8 train.py --deepspeed ds.json --per_device_train_batch_size 4 $EXTRA_ARGS --output_dir o\n",
        "ds.json": '{"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto"}\n'})
    assert e.batch.accumulation is None and e.batch.global_batch is None


def test_megatron_rampup_says_the_global_batch_is_the_one_after_the_ramp(tmp_path, monkeypatch):
    """megatron/microbatches.py: --rampup-batch-size START INCREMENT SAMPLES grows the global batch
    from START up to --global-batch-size."""
    (e,) = _explain(tmp_path, monkeypatch, {
        "run.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 1 --micro-batch-size 2 "
                  "--global-batch-size 64 --rampup-batch-size 16 16 1000\n"})
    assert e.batch.global_batch == 64
    assert any("ramps up to 64" in note for note in e.batch.notes)


def test_an_unread_expansion_among_the_launchers_options_leaves_the_programs_defaults(tmp_path, monkeypatch):
    """torchrun parses the words before the script as its own options (torch/distributed/run.py):
    `$DISTRIBUTED_ARGS` there gives the program no flag, so Megatron's micro batch default stands."""
    (e,) = _explain(tmp_path, monkeypatch, {
        "pretrain_gpt.py": "from megatron.training import pretrain\npretrain()\n",
        "run.sh": "DISTRIBUTED_ARGS='--nproc_per_node 8'\nif [ -n \"$X\" ]; then DISTRIBUTED_ARGS=$X; fi\n"
                  "torchrun $DISTRIBUTED_ARGS pretrain_gpt.py --global-batch-size 64\n"})
    assert e.batch.micro_batch.value == 1 and e.batch.global_batch == 64


def test_an_accelerate_flag_dslint_cannot_read_still_overrides_the_config(tmp_path, monkeypatch):
    # accelerate launch: the command line wins over the config file (commands/launch.py merges the
    # config's values only into the arguments not given); with --num_processes=${GPU} unread, the
    # world is unknown, not the config's 8
    config = "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_machines: 1\nnum_processes: 8\n"
    script = "GPU=$(nvidia-smi -L | wc -l)\naccelerate launch --config_file=acc.yaml --num_processes=${GPU} train.py\n"
    (e,) = _explain(tmp_path, monkeypatch, {"acc.yaml": config, "run.sh": script}, ("run.sh",))
    assert e.world_size is None
    (e,) = _explain(tmp_path, monkeypatch, {"acc.yaml": config, "run.sh": "accelerate launch --config_file=acc.yaml train.py\n"}, ("run.sh",))
    assert e.world_size.value == 8


def test_a_batch_field_under_a_config_namespace_leaves_the_default_unknown(tmp_path, monkeypatch):
    # the program reads --config.training.* with its own config system and hands them to the Trainer:
    # per_device_train_batch_size is given, under a name dslint does not map, so 8 is not its value
    program = ("from transformers import Trainer, TrainingArguments\n"
               "from mylib import parse_config\n\n"
               "config = parse_config()\n"
               "args = TrainingArguments(**config.training)\n"
               "Trainer(model=None, args=args).train()\n")
    script = "torchrun --nproc_per_node 4 train.py --config.training.per_device_train_batch_size 4 --config.training.gradient_accumulation_steps 8\n"
    (e,) = _explain(tmp_path, monkeypatch, {"train.py": program, "run.sh": script}, ("run.sh",))
    assert e.batch.global_batch is None
    assert any("--config.training.per_device_train_batch_size" in note for note in e.batch.notes)
