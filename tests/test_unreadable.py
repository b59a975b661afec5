"""Configs no reader can read are errors; data files and training output are skipped, never errors.

A file that has to be a config (named on the command line, named by a launch, or named like a
DeepSpeed config: ``ds_config*.json``, ``*zero*.json``) and that is empty, binary, UTF-16/32 or
not UTF-8 gets an error that names the readers that fail. Every such claim is checked here
against the real reader on the same bytes: DeepSpeed's ``hjson.load(open(path))``
(deepspeed/runtime/config.py), HF's and accelerate's ``json.load(open(path, encoding="utf-8"))``
(accelerate/utils/deepspeed.py HfDeepSpeedConfig), and ``yaml.safe_load`` of
``Path.read_text(encoding="utf-8")`` (transformers HfArgumentParser.parse_yaml_file).
"""

from __future__ import annotations

import codecs
import json
import os
import subprocess
import sys
from pathlib import Path

import hjson
import pytest
import yaml

CONFIG = '{"train_batch_size": 8, "train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 2}}\n'
TRAINING = "model_name_or_path: Qwen/Qwen2.5-7B\noutput_dir: out\nper_device_train_batch_size: 1\n"

HF_PROGRAM = """from transformers import HfArgumentParser, Trainer, TrainingArguments

(args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()
Trainer(model=None, args=args).train()
"""
DEEPSPEED_PROGRAM = """import argparse
import deepspeed

parser = deepspeed.add_config_arguments(argparse.ArgumentParser())
engine, _, _, _ = deepspeed.initialize(args=parser.parse_args(), model=None)
"""

ENCODINGS = {
    "empty": lambda text: b"",
    "blank": lambda text: b" \n\n",
    "utf-16": lambda text: text.encode("utf-16"),
    "utf-16-be": lambda text: codecs.BOM_UTF16_BE + text.encode("utf-16-be"),
    "utf-16-le-without-bom": lambda text: text.encode("utf-16-le"),
    "utf-32": lambda text: text.encode("utf-32"),
    "binary": lambda text: bytes(range(256)) * 4,
    "latin-1": lambda text: text.replace("Qwen", "Qw\xe9n").replace('"stage"', '"st\xe4ge"').encode("latin-1"),
}


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS",)}
    proc = subprocess.run([sys.executable, "-m", "dslint", "--no-config", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def findings(cwd: Path, *args: str) -> tuple[list[tuple], subprocess.CompletedProcess]:
    proc = run(cwd, "--format", "json", "-v", "--select", "DS001,DS003,DS251", *args)
    assert proc.returncode in (0, 1), proc.stderr
    # (path, code, severity, the headline and its notes): the readers that fail are named in the note
    return [(d["path"], d["code"], d["severity"], ": ".join([d["message"], *d["detail"]["notes"]]))
            for d in json.loads(proc.stdout)["diagnostics"]], proc


# ---- the readers really fail ------------------------------------------------------------------


def deepspeed_reads(path: Path):
    with open(path, "r") as handle:  # as deepspeed/runtime/config.py opens it (the locale's encoding; UTF-8 here)
        return hjson.load(handle)


def hf_reads(path: Path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def hf_reads_yaml(path: Path):
    return yaml.safe_load(Path(path).read_text(encoding="utf-8"))


def _fails(reader, path: Path) -> bool:
    try:
        value = reader(path)
    except (UnicodeDecodeError, ValueError, yaml.YAMLError):
        return True
    return value is None  # safe_load of an empty file: parse_yaml_file then calls None.keys()


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_deepspeed_config_named_like_one(tmp_path, encoding):
    data = ENCODINGS[encoding](CONFIG)
    (tmp_path / "ds_config_zero2.json").write_bytes(data)
    found, proc = findings(tmp_path)
    assert proc.returncode == 1
    ((path, code, severity, message),) = found
    assert (path, code, severity) == ("ds_config_zero2.json", "DS001", "error")
    assert "All checks passed" not in proc.stdout
    if encoding in ("empty", "blank"):
        assert message.startswith("empty file: HF's json.load raises 'Expecting value'")
        assert _fails(hf_reads, tmp_path / "ds_config_zero2.json")
        assert deepspeed_reads(tmp_path / "ds_config_zero2.json") == {}  # hjson reads {}: DeepSpeed then needs a batch size
        return
    assert "DeepSpeed's hjson and HF's json.load" in message
    assert _fails(deepspeed_reads, tmp_path / "ds_config_zero2.json") and _fails(hf_reads, tmp_path / "ds_config_zero2.json")
    expected = {
        "utf-16": "UTF-16 text (BOM ff fe)", "utf-16-be": "UTF-16 text (BOM fe ff)", "utf-32": "UTF-32 text (BOM ff fe 00 00)",
        "utf-16-le-without-bom": "UTF-16 text without a BOM", "binary": "binary file (NUL byte at offset 0)", "latin-1": "invalid UTF-8 (byte 0xe4",
    }[encoding]
    assert message.startswith(expected), message


@pytest.mark.parametrize("encoding", ["empty", "utf-16", "utf-32", "binary", "latin-1"])
def test_a_config_named_on_the_command_line(tmp_path, encoding):
    (tmp_path / "train.json").write_bytes(ENCODINGS[encoding](CONFIG))
    (tmp_path / "train.yaml").write_bytes(ENCODINGS[encoding](TRAINING))
    found, proc = findings(tmp_path, "train.json", "train.yaml")
    assert proc.returncode == 1
    assert {(f[0], f[2]) for f in found} == {("train.json", "error"), ("train.yaml", "error")}
    (yaml_message,) = [f[3] for f in found if f[0] == "train.yaml"]
    assert _fails(hf_reads_yaml, tmp_path / "train.yaml")
    if encoding != "empty":
        assert "HF, LLaMA-Factory, ms-swift and accelerate read YAML as UTF-8" in yaml_message or "can read" in yaml_message
    walked, proc = findings(tmp_path)
    if encoding == "latin-1":  # walked, its text still says what it is (DeepSpeed keys, trainer arguments)
        assert sorted((f[0], f[1]) for f in walked) == [("train.json", "DS001"), ("train.yaml", "DS001")]
        return
    # walked instead of named, and nothing says it is a config: skipped with the reason, not an error
    assert walked == [] and proc.returncode == 0
    assert "dslint: skipped train.json: " in proc.stderr and "dslint: skipped train.yaml: " in proc.stderr


@pytest.mark.parametrize("encoding", ["empty", "utf-16", "binary"])
def test_a_config_named_by_a_launch(tmp_path, encoding):
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "ds.json").write_bytes(ENCODINGS[encoding](CONFIG))
    (tmp_path / "accelerate.yaml").write_bytes(ENCODINGS[encoding]("compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\n"))
    (tmp_path / "train.sh").write_text(
        "#!/bin/bash\naccelerate launch --config_file accelerate.yaml train.py --deepspeed configs/ds.json --bf16 True\n", encoding="utf-8"
    )
    found, proc = findings(tmp_path)
    assert proc.returncode == 1
    assert sorted((f[0], f[1], f[2]) for f in found) == [("accelerate.yaml", "DS001", "error"), ("configs/ds.json", "DS001", "error")]


def test_utf8_bom_is_for_the_json_readers(tmp_path):
    bom = codecs.BOM_UTF8 + CONFIG.encode()
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "ds.json").write_bytes(bom)
    (tmp_path / "hf" / "train.sh").write_text("#!/bin/bash\ntorchrun --nproc_per_node 8 train.py --deepspeed ds.json --bf16 True\n", encoding="utf-8")
    (tmp_path / "hf" / "train.py").write_text(HF_PROGRAM, encoding="utf-8")  # the launch's program is established as HF's
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "ds.json").write_bytes(bom)
    (tmp_path / "plain" / "train.sh").write_text("#!/bin/bash\ndeepspeed --num_gpus 8 pretrain.py --deepspeed_config ds.json\n", encoding="utf-8")
    (tmp_path / "plain" / "pretrain.py").write_text(DEEPSPEED_PROGRAM, encoding="utf-8")
    (tmp_path / "alone").mkdir()
    (tmp_path / "alone" / "ds_config.json").write_bytes(bom)
    assert deepspeed_reads(tmp_path / "alone" / "ds_config.json")["train_batch_size"] == 8  # hjson skips the BOM
    with pytest.raises(json.JSONDecodeError, match="Unexpected UTF-8 BOM"):
        hf_reads(tmp_path / "alone" / "ds_config.json")
    found, _ = findings(tmp_path)
    assert [(f[0], f[1], f[2]) for f in found] == [("alone/ds_config.json", "DS251", "warning"), ("hf/ds.json", "DS251", "error")]
    assert "HF Trainer reads this config with json.load, which raises 'Unexpected UTF-8 BOM'" in found[1][3]


# ---- data and training output are not configs ------------------------------------------------------


def _dataset(path: Path, rows: int, shape: str) -> None:
    records = [{"instruction": f"Summarise item {i}", "input": "x" * 60, "output": "y" * 90} for i in range(rows)]
    data = records if shape == "array" else {"version": "1.0", "data": records}
    path.write_text(json.dumps(data), encoding="utf-8")


@pytest.mark.parametrize("shape", ["array", "object"])
def test_a_large_dataset_is_skipped_after_its_head(tmp_path, shape):
    _dataset(tmp_path / "train_data.json", 130_000, shape)  # about 24 MB: over the 10 MB read limit
    assert (tmp_path / "train_data.json").stat().st_size > 20_000_000
    (tmp_path / "zero_shot_results.json").write_text(json.dumps([{"score": 0.5}] * 20_000), encoding="utf-8")  # named like a config, data all the same
    for args in ((), ("train_data.json", "zero_shot_results.json")):
        found, proc = findings(tmp_path, *args)
        assert found == [] and proc.returncode == 0, proc.stdout
        reason = "a JSON array of" if shape == "array" else "with no DeepSpeed or training key at the top of its first 64 KB"
        assert "dslint: skipped train_data.json: " in proc.stderr and reason in proc.stderr
        assert "dslint: skipped zero_shot_results.json: a JSON array of" in proc.stderr


def test_a_large_config_is_still_read(tmp_path):
    """Only the head decides: a config padded past 64 KB (a long comment string) is linted, not skipped."""
    padded = json.loads(CONFIG) | {"train_batch_size": "8", "comment": "x" * 100_000}
    (tmp_path / "big.json").write_text(json.dumps(padded), encoding="utf-8")
    proc = run(tmp_path, "--format", "json", "--select", "DS102", ".")
    assert [d["code"] for d in json.loads(proc.stdout)["diagnostics"]] == ["DS102"]


def test_training_output_folders_are_not_walked(tmp_path):
    checkpoint = tmp_path / "output" / "checkpoint-500"
    checkpoint.mkdir(parents=True)
    for name, text in {
        "trainer_state.json": json.dumps({"global_step": 500, "log_history": [], "train_batch_size": 4, "max_steps": 1000,
                                          "logging_steps": 10, "save_steps": 500, "num_train_epochs": 3}),
        "config.json": json.dumps({"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "torch_dtype": "bfloat16"}),
        "tokenizer_config.json": json.dumps({"model_max_length": 32768}),
    }.items():
        (checkpoint / name).write_text(text, encoding="utf-8")
    (tmp_path / "output" / "checkpoint-500" / "global_step500").mkdir()
    (tmp_path / "output" / "args.json").write_text(json.dumps({"model": "Qwen/Qwen2.5-7B", "train_type": "lora", "output_dir": "output"}))
    (tmp_path / "ds_config.json").write_text(CONFIG, encoding="utf-8")
    proc = run(tmp_path, "-v", "--format", "json", ".")
    assert [d["path"] for d in json.loads(proc.stdout)["diagnostics"] if d["path"].startswith("output")] == []
    assert "dslint: skipped output/: training output (its checkpoint-500/ holds trainer_state.json), not walked" in proc.stderr
    # what is named is read: the folder itself, or a file in it
    proc = run(tmp_path, "-v", "--format", "json", "output/checkpoint-500")
    assert "dslint: skipped" not in proc.stderr or "output/checkpoint-500/: " not in proc.stderr
    assert json.loads(proc.stdout)["summary"]["files"] >= 1
