"""Consumer identification: the program a launch runs, read statically, says who reads its files.

Every kind has a small program written in the shape of real training code; the tests check the
kind, whether it is established, and that the evidence names the file and line that prove it.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from dslint.config import Settings
from dslint.run.engine import Engine
from programs import ACCELERATE_LOOP, DEEPSPEED_LOOP, HF_TRAINER


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # paths in evidence are shown relative to the working directory


def plans(root: Path, files: dict[str, str], paths=(".",)):
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text))
    (root / ".git").mkdir(exist_ok=True)  # the repository root: imports are followed inside it
    result = Engine(Settings(root=root, select=["DS101"])).lint_paths([str(root / p) for p in paths])
    assert not result.internal_errors, result.internal_errors
    return result.plans


def program_of(root: Path, files: dict[str, str]):
    [plan] = [p for p in plans(root, files) if p.launcher != "yaml"]
    return plan, plan.program


TRL_SFT = """\
from datasets import load_dataset
from trl import SFTConfig, SFTTrainer

args = SFTConfig(output_dir="out")
trainer = SFTTrainer(model="Qwen/Qwen2.5-0.5B", args=args, train_dataset=load_dataset("x")["train"])
trainer.train()
"""

HYDRA_APP = """\
import hydra
from omegaconf import DictConfig


@hydra.main(config_path="conf", config_name="config", version_base=None)
def main(cfg: DictConfig):
    print(cfg.optim.lr)


if __name__ == "__main__":
    main()
"""

INFERENCE = """\
import deepspeed
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

model = AutoModelForCausalLM.from_pretrained("gpt2")
engine = deepspeed.init_inference(model, dtype=torch.half)
print(engine.module.generate(**AutoTokenizer.from_pretrained("gpt2")("hi", return_tensors="pt")))
"""


@pytest.mark.parametrize("program,kind,reader,proof", [
    (HF_TRAINER, "hf", "hf", "calls transformers.Trainer"),
    (DEEPSPEED_LOOP, "deepspeed", "deepspeed", "calls deepspeed.initialize"),
    (ACCELERATE_LOOP, "accelerate", "accelerate", "calls accelerate.Accelerator"),
    (TRL_SFT, "trl", "hf", "calls trl.SFTConfig"),
    (HYDRA_APP, "hydra", None, "decorated with hydra.main"),
    (INFERENCE, "inference", None, "calls deepspeed.init_inference"),
])
def test_each_kind_is_established_from_the_program(tmp_path, program, kind, reader, proof):
    plan, consumer = program_of(tmp_path, {"run.sh": "deepspeed train.py --deepspeed ds.json\n", "train.py": program})
    assert consumer.kind == kind and consumer.established
    assert plan.consumer == reader
    assert any(proof in e.text and e.path == "train.py" and e.line > 0 for e in consumer.evidence), consumer.evidence


def test_a_trainer_subclass_counts_as_the_trainer(tmp_path):
    _, consumer = program_of(tmp_path, {"run.sh": "torchrun train.py --deepspeed ds.json\n", "train.py": """\
        from transformers import Trainer as HFTrainer

        class WeightedLossTrainer(HFTrainer):
            def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
                return super().compute_loss(model, inputs, return_outputs, **kwargs)
        """})
    assert consumer.kind == "hf"
    assert consumer.evidence[0].describe() == "class WeightedLossTrainer derives from transformers.Trainer (train.py:3)"


def test_the_projects_own_imports_are_followed(tmp_path):
    plan, consumer = program_of(tmp_path, {
        "scripts/run.sh": "cd .. && deepspeed train.py --deepspeed_config configs/ds.json\n",
        "train.py": "from mypkg.cli import main\n\nmain()\n",
        "mypkg/__init__.py": "",
        "mypkg/cli.py": "from .engine import build\n\ndef main():\n    build()\n",
        "mypkg/engine.py": "import deepspeed\n\ndef build():\n    return deepspeed.initialize(model=None)\n",
    })
    assert consumer.kind == "deepspeed" and consumer.established
    assert consumer.evidence[0].describe() == "calls deepspeed.initialize (mypkg/engine.py:4)"
    assert consumer.facts.files == ["train.py", "mypkg/cli.py", "mypkg/engine.py"]


def test_imports_are_followed_only_a_few_levels(tmp_path):
    files = {"run.sh": "deepspeed train.py\n", "train.py": "import m1\n"}
    for level in range(1, 6):
        files[f"m{level}.py"] = f"import m{level + 1}\n"
    files["m6.py"] = "import deepspeed\ndeepspeed.initialize(model=None)\n"
    _, consumer = program_of(tmp_path, files)
    assert consumer.kind == "unknown" and not consumer.established
    assert consumer.facts.truncated


def test_python_m_module_in_the_repository(tmp_path):
    _, consumer = program_of(tmp_path, {
        "run.sh": "torchrun --nproc_per_node 8 -m src.train --deepspeed ds.json\n",
        "src/__init__.py": "", "src/train.py": HF_TRAINER,
    })
    assert consumer.kind == "hf" and consumer.program == "src/train.py"


@pytest.mark.parametrize("command,kind,reader", [
    ("deepspeed --module openrlhf.cli.train_sft --zero_stage 2 --bf16", "openrlhf", None),
    ("accelerate launch -m axolotl.cli.train config.yml", "axolotl", "hf"),
    ("python -m verl.trainer.main_ppo data.train_batch_size=256", "verl", None),
])
def test_a_module_of_a_known_package(tmp_path, command, kind, reader):
    plan, consumer = program_of(tmp_path, {"run.sh": command + "\n"})
    assert consumer.kind == kind and consumer.established and plan.consumer == reader
    assert consumer.evidence[0].text.startswith("runs the module ")


@pytest.mark.parametrize("command,entry", [
    ("NPROC_PER_NODE=2 swift sft --model m --deepspeed zero2", "swift sft"),
    ("megatron sft --model m", "megatron sft"),
    ("FORCE_TORCHRUN=1 llamafactory-cli train cfg.yaml", "llamafactory train"),
])
def test_console_entry_points_are_their_own_evidence(tmp_path, command, entry):
    _, consumer = program_of(tmp_path, {"run.sh": command + "\n"})
    assert consumer.established and consumer.program == entry


@pytest.mark.parametrize("files,assumption,reader", [
    ({"run.sh": "torchrun train.py --deepspeed ds.json\n"},
     "assuming HF Trainer (--deepspeed with a value is TrainingArguments' flag): train.py was not found", "hf"),
    ({"run.sh": "deepspeed $ENTRY --deepspeed_config ds.json\n"},
     "assuming a plain deepspeed.initialize loop (--deepspeed_config is deepspeed.add_config_arguments' flag): "
     "the program `$ENTRY` is only known at run time", "deepspeed"),
    ({"run.sh": "deepspeed --module company.trainer\n"},
     "assuming a plain deepspeed.initialize loop (the deepspeed launcher): the module company.trainer is not in the repository",
     "deepspeed"),
    ({"run.sh": "torchrun train.py --deepspeed ds.json\n", "train.py": "import torch\nprint(torch.__version__)\n"},
     "assuming HF Trainer (--deepspeed with a value is TrainingArguments' flag): train.py shows no trainer, Accelerator, "
     "deepspeed.initialize or known framework", "hf"),
    ({"run.sh": "torchrun train.py --deepspeed ds.json\n", "train.py": "def broken(:\n"},
     "assuming HF Trainer (--deepspeed with a value is TrainingArguments' flag): train.py could not be read as Python", "hf"),
])
def test_without_evidence_the_consumer_is_assumed_and_says_why(tmp_path, files, assumption, reader):
    plan, consumer = program_of(tmp_path, files)
    assert not consumer.established
    assert consumer.assumption == assumption
    assert plan.consumer == reader


def test_a_plain_deepspeed_loop_is_not_judged_as_hf_trainer(tmp_path):
    """`--deepspeed cfg.json` on a plain deepspeed.initialize script: no HF mismatch, and "auto" is an error."""
    files = {
        "run.sh": "deepspeed train.py --deepspeed ds.json --per_device_train_batch_size 2\n",
        "train.py": """\
            import argparse
            import deepspeed

            parser = argparse.ArgumentParser()
            parser.add_argument("--deepspeed", type=str)
            parser.add_argument("--per_device_train_batch_size", type=int, default=4)
            parser.add_argument("--local_rank", type=int)
            args = parser.parse_args()
            engine, *_ = deepspeed.initialize(model=None, config=args.deepspeed)
            """,
        "ds.json": '{"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}}\n',
    }
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    result = Engine(Settings(root=tmp_path, select=["DS301", "DS302"])).lint_paths([str(tmp_path)])
    assert [(d.code, d.severity.label, d.fix) for d in result.diagnostics] == [("DS302", "error", None)]


def test_explain_shows_the_consumer_and_its_evidence(tmp_path):
    from dslint.explain import Options, explain_result
    from dslint.explain.text import render_one

    (tmp_path / "run.sh").write_text("deepspeed --num_gpus 2 train.py --deepspeed_config ds.json\n")
    (tmp_path / "train.py").write_text(DEEPSPEED_LOOP)
    (tmp_path / "ds.json").write_text('{"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 1}}\n')
    [explanation] = explain_result(Engine(Settings(root=tmp_path)).lint_paths([str(tmp_path / "run.sh")]), Options())
    text = render_one(explanation)
    program_line = next(line for line in text.splitlines() if line.strip().startswith("program"))
    assert program_line.split(None, 1)[1].endswith("train.py: a plain deepspeed.initialize loop")
    assert "calls deepspeed.initialize" in text
    payload = explanation.to_dict()["program"]
    assert payload["kind"] == "deepspeed" and payload["established"] is True
    assert payload["evidence"][0]["text"] == "calls deepspeed.initialize"


def test_explain_takes_a_batch_default_from_the_programs_own_dataclass(tmp_path):
    from dslint.explain import Options, explain_result

    (tmp_path / "run.sh").write_text("torchrun --nproc_per_node 4 train.py --deepspeed ds.json --output_dir out\n")
    (tmp_path / "train.py").write_text(textwrap.dedent("""\
        from dataclasses import dataclass, field

        from transformers import HfArgumentParser, Trainer, TrainingArguments


        @dataclass
        class MyTrainingArguments(TrainingArguments):
            per_device_train_batch_size: int = field(default=2)
            gradient_accumulation_steps: int = 16


        (args,) = HfArgumentParser(MyTrainingArguments).parse_args_into_dataclasses()
        Trainer(model=None, args=args).train()
        """))
    (tmp_path / "ds.json").write_text('{"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}}\n')
    [explanation] = explain_result(Engine(Settings(root=tmp_path)).lint_paths([str(tmp_path / "run.sh")]), Options())
    batch = explanation.batch
    assert batch.global_batch == 2 * 16 * 4
    assert batch.micro_batch.origin == "the default of per_device_train_batch_size in MyTrainingArguments (train.py:8; not set)"
    assert batch.accumulation.path == "train.py" and batch.accumulation.line == 9


def test_explain_says_which_batch_factor_is_unknown_and_why(tmp_path):
    from dslint.explain import Options, explain_result

    (tmp_path / "run.sh").write_text("deepspeed train.py --deepspeed_config ds.json\n")
    (tmp_path / "train.py").write_text(DEEPSPEED_LOOP)
    (tmp_path / "ds.json").write_text('{"zero_optimization": {"stage": 2}, "gradient_accumulation_steps": 4}\n')
    [explanation] = explain_result(Engine(Settings(root=tmp_path)).lint_paths([str(tmp_path / "run.sh")]), Options())
    assert explanation.batch.global_batch is None
    assert any(n.startswith("unknown data parallel size") for n in explanation.batch.notes), explanation.batch.notes


def test_a_config_only_an_inference_program_reads_gets_no_training_rules(tmp_path):
    files = {
        "infer.sh": "deepspeed --num_gpus 2 infer.py --deepspeed ds_inference.json\n",
        "infer.py": INFERENCE,
        "ds_inference.json": '{"train_batch_size": 3, "train_micro_batch_size_per_gpu": 2, "fp16": {"enabled": true}}\n',
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    result = Engine(Settings(root=tmp_path)).lint_paths([str(tmp_path)])
    assert [d.code for d in result.diagnostics if d.path.endswith("ds_inference.json")] == []
    # The same config under a training program is judged: 3 is not 2 × 1 × 2.
    (tmp_path / "infer.py").write_text(DEEPSPEED_LOOP)
    result = Engine(Settings(root=tmp_path)).lint_paths([str(tmp_path)])
    assert "DS101" in [d.code for d in result.diagnostics]


def test_explain_takes_the_batch_from_the_training_arguments_the_program_builds(tmp_path):
    from dslint.explain import Options, explain_result

    (tmp_path / "run.sh").write_text("deepspeed --num_gpus 2 train.py --per_device_train_batch_size 16\n")
    (tmp_path / "train.py").write_text(textwrap.dedent("""\
        from transformers import Trainer, TrainingArguments

        args = TrainingArguments(
            output_dir="out",
            deepspeed="ds.json",
            per_device_train_batch_size=4,
            gradient_accumulation_steps=8,
        )
        Trainer(model=None, args=args).train()
        """))
    (tmp_path / "ds.json").write_text('{"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}}\n')
    [explanation] = explain_result(Engine(Settings(root=tmp_path)).lint_paths([str(tmp_path / "run.sh")]), Options())
    batch = explanation.batch
    assert batch.global_batch == 4 * 8 * 2
    assert batch.micro_batch.origin == "per_device_train_batch_size=4 in TrainingArguments(...) (train.py:6)"


# A package that offers several pipelines and imports them all into one registry module: the entry
# picks one by name at run time, so the trainers the registry brings in are not the entry's.
PIPELINE_REGISTRY = {
    "toolkit/__init__.py": "",
    "toolkit/registry.py": """\
        from toolkit.tune import Tuner
        from toolkit.serve import Server

        PIPELINES = {"tuner": Tuner, "server": Server}


        def get_pipeline(name, **kwargs):
            return PIPELINES[name](**kwargs)
        """,
    "toolkit/tune.py": """\
        from transformers import Trainer


        class Tuner:
            def run(self, model, args, data):
                return Trainer(model=model, args=args, train_dataset=data).train()
        """,
    "toolkit/serve.py": """\
        import deepspeed


        class Server:
            def __init__(self, model):
                self.engine = deepspeed.initialize(model=model)[0]
        """,
}


def test_rival_trainers_behind_a_registry_are_not_the_entrys_evidence(tmp_path):
    files = dict(PIPELINE_REGISTRY)
    files["chat.sh"] = "accelerate launch chat.py --deepspeed ds_chat.json\n"
    files["chat.py"] = """\
        import json
        import sys

        from toolkit.registry import get_pipeline

        config = json.load(open(sys.argv[2]))
        server = get_pipeline("server", model=None)
        """
    plan, consumer = program_of(tmp_path, files)
    assert consumer.kind == "unknown" and not consumer.established
    assert plan.consumer is None  # nor guessed from `--deepspeed` (TrainingArguments' flag): the rivals say otherwise
    assert consumer.assumption.startswith("chat.py names no trainer itself")
    assert "toolkit/tune.py:6" in consumer.assumption and "toolkit/serve.py:6" in consumer.assumption


def test_a_trainer_in_the_entry_itself_decides_over_a_registry(tmp_path):
    files = dict(PIPELINE_REGISTRY)
    files["train.sh"] = "deepspeed train.py --deepspeed ds.json\n"
    files["train.py"] = """\
        from transformers import Trainer

        from toolkit.registry import get_pipeline

        Trainer(model=None).train()
        """
    _, consumer = program_of(tmp_path, files)
    assert consumer.kind == "hf" and consumer.established
    assert consumer.evidence[0].path == "train.py"


def test_a_config_behind_a_registry_gets_no_hf_only_error(tmp_path):
    """HF's checks of a config (no zero_optimization section, TrainingArguments mismatches) need an HF consumer."""
    files = dict(PIPELINE_REGISTRY)
    files["chat.sh"] = "accelerate launch chat.py --deepspeed ds_chat.json\n"
    files["chat.py"] = "from toolkit.registry import get_pipeline\n\nget_pipeline('server', model=None)\n"
    files["ds_chat.json"] = '{"bf16": {"enabled": true}, "train_micro_batch_size_per_gpu": 1}\n'
    for name, text in files.items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text))
    (tmp_path / ".git").mkdir()
    result = Engine(Settings(root=tmp_path)).lint_paths([str(tmp_path)])
    assert not result.internal_errors
    assert [d.code for d in result.diagnostics if d.code in ("DS250", "DS301")] == []


def test_a_project_class_named_like_its_outside_base_is_not_its_own_base(tmp_path):
    """`class Arguments(other.Arguments)`: the outside base is not the project class again (no endless recursion)."""
    files = {
        "run.sh": "deepspeed train.py --deepspeed ds.json\n",
        "train.py": """\
            from dataclasses import dataclass

            import peft_tools
            from transformers import HfArgumentParser, Trainer


            @dataclass
            class TrainingArguments(peft_tools.TrainingArguments):
                lora_rank: int = 8


            (args,) = HfArgumentParser((TrainingArguments,)).parse_args_into_dataclasses()
            Trainer(model=None, args=args).train()
            """,
        "ds.json": '{"train_micro_batch_size_per_gpu": "auto", "optimizer": {"type": "AdamW"}, "zero_optimization": {"stage": 2}}\n',
    }
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    (tmp_path / ".git").mkdir()
    result = Engine(Settings(root=tmp_path)).lint_paths([str(tmp_path)])
    assert not result.internal_errors, result.internal_errors


# ---- evaluation only: an Accelerator or deepspeed.initialize loop that never trains or saves ------

EVAL_LOOP = """\
import torch
from accelerate import Accelerator


@torch.no_grad()
def evaluate(model, batches):
    return [model(**batch).logits.argmax(-1) for batch in batches]


accelerator = Accelerator()
model = accelerator.prepare(torch.nn.Linear(8, 8))
model.eval()
print(evaluate(model, []))
"""


def test_an_accelerator_loop_with_gradients_off_and_no_training_is_evaluation_only(tmp_path):
    plan, program = program_of(tmp_path, {"eval.py": EVAL_LOOP, "run.sh": "accelerate launch eval.py\n"})
    assert program.kind == "accelerate" and program.established
    assert program.evaluation is not None and not program.trains
    assert program.evaluation.where() == "eval.py:5"  # the decorator
    assert "evaluation only" in program.label


@pytest.mark.parametrize("training_line", [
    "accelerator.backward(model(torch.ones(8)).sum())",
    "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)",
    "accelerator.save_model(model, 'out')",
    "model.save_pretrained('out')",
    "model.train()",
])
def test_any_training_or_saving_makes_it_a_training_program(tmp_path, training_line):
    _, program = program_of(tmp_path, {"eval.py": EVAL_LOOP + training_line + "\n", "run.sh": "accelerate launch eval.py\n"})
    assert program.evaluation is None and program.trains


def test_a_loop_without_an_evaluation_marker_is_not_called_evaluation_only(tmp_path):
    text = "from accelerate import Accelerator\n\naccelerator = Accelerator()\nmodel = accelerator.prepare(object())\n"
    _, program = program_of(tmp_path, {"loop.py": text, "run.sh": "accelerate launch loop.py\n"})
    assert program.kind == "accelerate" and program.evaluation is None and program.trains


def test_a_program_not_read_whole_is_evaluation_only_when_its_entry_makes_the_engine(tmp_path):
    # a project import that cannot be parsed is not where the loop is: the entry makes the Accelerator
    files = {"eval.py": "import helpers\n" + EVAL_LOOP, "helpers.py": "def broken(:\n", "run.sh": "accelerate launch eval.py\n"}
    _, program = program_of(tmp_path, files)
    assert program.evaluation is not None and not program.trains


def test_a_program_not_read_whole_whose_engine_is_made_elsewhere_is_not_evaluation_only(tmp_path):
    # the runner makes the Accelerator; the module that cannot be parsed may hold its training loop
    runner = "import torch\nfrom accelerate import Accelerator\n\nimport loop\n\n\ndef run():\n" \
             "    accelerator = Accelerator()\n    with torch.no_grad():\n        loop.go(accelerator)\n"
    files = {"main.py": "from runner import run\n\nrun()\n", "runner.py": runner, "loop.py": "def go(:\n",
             "run.sh": "accelerate launch main.py\n"}
    _, program = program_of(tmp_path, files)
    assert program.kind == "accelerate" and program.evaluation is None and program.trains


def test_a_save_helper_the_project_defines_elsewhere_does_not_make_it_training(tmp_path):
    helper = "def export(model, path):\n    model.save_pretrained(path)\n"
    files = {"eval.py": "import utils\n" + EVAL_LOOP, "utils.py": helper, "run.sh": "accelerate launch eval.py\n"}
    _, program = program_of(tmp_path, files)
    assert program.evaluation is not None


# ms-swift's entry files, run under torchrun/deepspeed as `swift sft` itself runs them (swift/cli/main.py
# ROUTE_MAPPING): the release range is the tags that have the file (modelscope/ms-swift v1.1.0-v4.5.2).
@pytest.mark.parametrize("command,kind,entry,spec", [
    ("torchrun --nproc_per_node 8 swift/cli/sft.py --model_type qwen-7b --dataset x", "swift", "swift sft", ">=1.3.0"),
    ("deepspeed swift/cli/dpo.py --model_type qwen-7b", "swift", "swift dpo", ">=1.6.0,<2.2.0"),
    ("torchrun --nproc_per_node 8 /opt/ms-swift/swift/cli/_megatron/sft.py --model m", "megatron-swift", "megatron sft", ">=3.2.2"),
    ("torchrun --nproc_per_node 2 ms-swift/examples/pytorch/llm/llm_sft.py --model_type q", "swift", "swift sft", ">=1.3.0,<3.0.0"),
    ("python -m swift.cli.rlhf --rlhf_type dpo", "swift", "swift rlhf", ">=2.2.0"),
])
def test_an_ms_swift_entry_file_is_ms_swift_with_the_releases_that_have_it(tmp_path, command, kind, entry, spec):
    plan, consumer = program_of(tmp_path, {"run.sh": command + "\n"})
    assert consumer.kind == kind and consumer.established and plan.entry == entry
    hint, proof = consumer.version_hints["ms-swift"]
    assert hint == spec and proof.path == "run.sh" and proof.line == 1


def test_an_ms_swift_entry_file_in_the_repository_is_read_and_bounds_the_release(tmp_path):
    """ms-swift 4.x's swift/cli/sft.py imports its main from swift.pipelines (swift/cli/sft.py:19 in 4.0.0)."""
    plan, consumer = program_of(tmp_path, {
        "scripts/sft.sh": "cd ..\nNPROC_PER_NODE=8 torchrun --nproc_per_node 8 swift/cli/sft.py --model Qwen/Qwen2.5-7B\n",
        "swift/__init__.py": "", "swift/cli/__init__.py": "",
        "swift/cli/sft.py": "if __name__ == '__main__':\n    from swift.pipelines import sft_main\n    sft_main()\n",
        "swift/pipelines/__init__.py": "def sft_main():\n    pass\n",
    })
    assert consumer.kind == "swift" and consumer.established
    assert consumer.evidence[0].path == "swift/cli/sft.py"
    assert consumer.version_hints["ms-swift"][0] == ">=1.3.0"


def test_ms_swift_1x_2x_example_entry_is_found_above_its_script(tmp_path):
    """examples/pytorch/llm/scripts/<model>/<way>/sft.sh runs `torchrun llm_sft.py` from examples/pytorch/llm."""
    _, consumer = program_of(tmp_path, {
        "examples/pytorch/llm/scripts/qwen_7b_chat/lora_ddp_ds/sft.sh":
            "nproc_per_node=2\nPYTHONPATH=../../.. torchrun --nproc_per_node=$nproc_per_node llm_sft.py --model_type qwen-7b-chat\n",
        "examples/pytorch/llm/llm_sft.py": "import custom\n\nfrom swift.llm import sft_main\n\nif __name__ == '__main__':\n"
                                           "    output = sft_main()\n",
    })
    assert consumer.kind == "swift" and consumer.established
    assert consumer.evidence[0].describe() == "calls swift.llm.sft_main (examples/pytorch/llm/llm_sft.py:6)"
    assert consumer.version_hints["ms-swift"][0] == ">=1.3.0,<3.0.0"


def test_a_bare_llm_sft_py_not_in_the_repository_is_only_assumed_to_be_ms_swift(tmp_path):
    plan, consumer = program_of(tmp_path, {"sft.sh": "torchrun --nproc_per_node=2 llm_sft.py --model_type qwen-7b-chat\n"})
    assert not consumer.established and plan.consumer == "swift"
    assert consumer.assumption.startswith("assuming ms-swift (llm_sft.py is named like ms-swift 1.x-2.x's example entries")


LLAMAFACTORY_CHECKOUT = {
    "LLaMA-Factory/src/train.py": "from llamafactory.train.tuner import run_exp\n\n\ndef main():\n    run_exp()\n\n\n"
                                  "if __name__ == '__main__':\n    main()\n",
    "LLaMA-Factory/src/llamafactory/__init__.py": "",
    "LLaMA-Factory/src/llamafactory/extras/env.py": 'VERSION = "0.9.3"\n',
    "LLaMA-Factory/src/llamafactory/hparams/__init__.py": "",
    "LLaMA-Factory/src/llamafactory/train/__init__.py": "",
    "LLaMA-Factory/src/llamafactory/train/tuner.py": "def run_exp():\n    pass\n",
}


def test_the_program_is_looked_up_in_the_folder_the_script_cds_into(tmp_path):
    """`cd LLaMA-Factory && deepspeed src/train.py`: bash runs LLaMA-Factory/src/train.py (src/train.py:15 in 0.9.3)."""
    plan, consumer = program_of(tmp_path, {
        **LLAMAFACTORY_CHECKOUT,
        "scripts/run.sh": "cd ../LLaMA-Factory\ndeepspeed --num_gpus 8 src/train.py --stage sft --deepspeed ds.json\n",
    })
    assert consumer.kind == "llamafactory" and consumer.established and plan.consumer == "llamafactory"
    assert consumer.evidence[0].path == "LLaMA-Factory/src/train.py"
    assert consumer.sources["llamafactory"].version == "0.9.3"


def test_a_program_beside_the_script_is_not_taken_when_the_script_cds_elsewhere(tmp_path):
    _, consumer = program_of(tmp_path, {
        **LLAMAFACTORY_CHECKOUT,
        "run.sh": "cd LLaMA-Factory\ndeepspeed train.py --deepspeed ds.json\n",
        "train.py": HF_TRAINER,
    })
    assert not consumer.established and "train.py was not found" in consumer.assumption


def test_an_entry_files_release_range_bounds_the_version_only_where_it_excludes_a_known_release(tmp_path):
    """swift/cli/sft.py is in every ms-swift dslint knows: the version stays unbounded, as for `swift sft`, and a
    current flag says nothing; examples/pytorch/llm/llm_sft.py is 1.x-2.x's only: ms-swift 3's --model stops it."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "run.sh").write_text(
        "torchrun --nproc_per_node 2 swift/cli/sft.py --model Qwen/Qwen2.5-7B\n"
        "torchrun --nproc_per_node 2 ms-swift/examples/pytorch/llm/llm_sft.py --model Qwen/Qwen2.5-7B\n")
    result = Engine(Settings(root=tmp_path, select=["DS701"])).lint_paths([str(tmp_path)])
    found = [(d.span.source.position(d.span.start)[0], d.severity.label, d.message) for d in result.diagnostics]
    assert found == [(2, "error", "--model is not an argument of ms-swift 2.6.0–2.6.1")]
