"""Launch context for a subset of files (issue 13): a config named alone is linted with the launches that name it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


from dslint.run.cache import NameIndex
from dslint.config import Scopes, Settings
from dslint.run.context import mentioned_names
from dslint.rule import load_rules
from dslint.run import workspace
from programs import HF_TRAINER

LAUNCH = "torchrun --nproc_per_node 4 train.py --deepspeed configs/ds.json --bf16 True --per_device_train_batch_size 2\n"
FP16 = '{"fp16": {"enabled": true}, "train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}}\n'


def repository(root: Path, files: dict[str, str]) -> Path:
    (root / ".git").mkdir()
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def run(root: Path, paths: list[str], monkeypatch, *, select=("DS301",), fix: bool = False):
    monkeypatch.chdir(root)
    monkeypatch.setenv("DSLINT_CACHE_DIR", str(root / ".cache-for-test"))
    scopes = Scopes.fixed(Settings(root=root, select=list(select)))
    rules, errors = load_rules()
    found = workspace.find(paths, scopes)
    return workspace.lint(found, scopes, rules, errors).result


def test_a_config_named_alone_meets_the_launch_that_names_it(tmp_path, monkeypatch):
    repository(tmp_path, {"scripts/train.sh": LAUNCH, "train.py": HF_TRAINER, "configs/ds.json": FP16})
    result = run(tmp_path, ["configs/ds.json"], monkeypatch)
    [found] = result.diagnostics
    assert (found.code, found.path, found.severity.label) == ("DS301", "configs/ds.json", "error")
    assert "fp16.enabled=True" in found.message
    assert any(r.span is not None and r.span.path == "scripts/train.sh" for r in found.related), found.related
    assert result.files == 1  # the given file; the launch script was read for its context only


def test_without_the_context_the_same_config_says_nothing_about_the_launch(tmp_path, monkeypatch):
    repository(tmp_path, {"scripts/train.sh": LAUNCH, "train.py": HF_TRAINER, "configs/ds.json": FP16})
    monkeypatch.chdir(tmp_path)
    scopes = Scopes.fixed(Settings(root=tmp_path, select=["DS301"]))
    rules, errors = load_rules()
    assert workspace.lint(workspace.find(["configs/ds.json"], scopes), scopes, rules, errors, context=False).result.diagnostics == []


def test_findings_of_the_context_launch_that_do_not_involve_the_given_file_are_not_reported(tmp_path, monkeypatch):
    script = "NPROC_PER_NODE=8 \\\n\n" + LAUNCH  # a blank line after a continuation: a finding in the script itself
    repository(tmp_path, {"scripts/train.sh": script, "train.py": HF_TRAINER, "configs/ds.json": FP16})
    result = run(tmp_path, ["configs/ds.json"], monkeypatch, select=("DS301", "DS601"))
    assert [d.code for d in result.diagnostics] == ["DS301"]
    both = run(tmp_path, ["configs/ds.json", "scripts/train.sh"], monkeypatch, select=("DS301", "DS601"))
    assert sorted(d.code for d in both.diagnostics) == ["DS301", "DS601"]


def test_the_context_follows_a_training_config_to_the_script_that_launches_it(tmp_path, monkeypatch):
    repository(tmp_path, {
        "run.sh": "FORCE_TORCHRUN=1 CUDA_VISIBLE_DEVICES=0,1 llamafactory-cli train examples/sft.yaml\n",
        "examples/sft.yaml": "model_name_or_path: m\nstage: sft\nfinetuning_type: full\ntemplate: qwen\n"
                             "per_device_train_batch_size: 2\ngradient_accumulation_steps: 4\nbf16: true\n"
                             "deepspeed: examples/ds_z3.json\n",
        "examples/ds_z3.json": '{"train_batch_size": 4, "train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 3}}\n',
    })
    result = run(tmp_path, ["examples/ds_z3.json"], monkeypatch)
    [found] = result.diagnostics
    assert found.path == "examples/ds_z3.json" and "train_batch_size" in found.message
    assert "16" in found.message  # 2 × 4 × two processes, which only run.sh says


def test_a_gitignored_script_is_no_context(tmp_path, monkeypatch):
    repository(tmp_path, {"scratch/train.sh": LAUNCH, ".gitignore": "scratch/\n", "train.py": HF_TRAINER, "configs/ds.json": FP16})
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")  # a real work tree for dslint.files.gitignore
    (tmp_path / ".git" / "objects").mkdir()
    assert run(tmp_path, ["configs/ds.json"], monkeypatch).diagnostics == []


def test_a_fix_never_edits_a_context_file(tmp_path, monkeypatch):
    from dslint.fix.apply import fix_paths

    launch = LAUNCH.replace("--per_device_train_batch_size 2", "--per_device_train_batch_size 2 --deepspeed_config configs/ds.json")
    repository(tmp_path, {"scripts/train.sh": launch, "train.py": HF_TRAINER, "configs/ds.json": FP16})
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DSLINT_CACHE_DIR", str(tmp_path / ".cache-for-test"))
    scopes = Scopes.fixed(Settings(root=tmp_path))
    rules, errors = load_rules()
    found = workspace.find(["configs/ds.json"], scopes)
    outcome = fix_paths(lambda overrides: workspace.lint(found, scopes, rules, errors, overrides).result, unsafe=True, write=True)
    assert {path for path, _, _ in outcome.applied} <= {"configs/ds.json"}
    assert (tmp_path / "scripts/train.sh").read_text() == launch


def test_mentioned_names():
    text = 'deepspeed train.py --deepspeed_config "${ROOT}/configs/ds_z3.json" --config=cfg/sft.YAML # see zero2.json.bak\n'
    assert mentioned_names(text) == frozenset({"ds_z3.json", "sft.YAML"})


def test_the_name_index_reads_a_file_again_only_when_it_changed(tmp_path, monkeypatch):
    script = tmp_path / "train.sh"
    script.write_text("deepspeed train.py --deepspeed_config ds.json\n")
    index = NameIndex(tmp_path / "cache")
    assert index.names(script) == {"ds.json"}
    index.save()
    reads = []
    original = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: reads.append(self) or original(self))
    again = NameIndex(tmp_path / "cache")
    assert again.names(script) == {"ds.json"} and reads == []
    script.write_text("deepspeed train.py --deepspeed_config ds_z3.json\n")
    assert again.names(script) == {"ds.json"}  # one run asks a file once (each step up asks again)
    next_run = NameIndex(tmp_path / "cache")
    assert next_run.names(script) == {"ds_z3.json"} and len(reads) == 1
    assert (tmp_path / "cache" / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (tmp_path / "cache" / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")


def test_the_cli_names_the_launch_script_for_a_staged_config(tmp_path):
    repository(tmp_path, {"scripts/train.sh": LAUNCH, "train.py": HF_TRAINER, "configs/ds.json": FP16})
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSLINT_")}
    proc = subprocess.run([sys.executable, "-m", "dslint", "check", "--select", "DS301", "--format", "json", "configs/ds.json"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    [found] = json.loads(proc.stdout)["diagnostics"]
    assert found["code"] == "DS301" and any(r["path"] == "scripts/train.sh" for r in found["related"])
    assert (tmp_path / ".dslint_cache" / ".gitignore").is_file()  # the index persisted for the next commit


def test_mentioned_names_are_the_last_parts_of_config_paths():
    from dslint.run.context import mentioned_names

    assert mentioned_names("deepspeed --deepspeed cfg/ds_config.json train.py") == {"ds_config.json"}
    assert mentioned_names("cfg=configs/a.yaml; x=$(cat b.yml) --x=\"c.JSON\" 'd.hjson'") == {"a.yaml", "b.yml", "c.JSON", "d.hjson"}
    assert mentioned_names("a.json.bak ds.json,other.json path/f.yaml:3") == {"ds.json", "other.json", "f.yaml"}
    assert mentioned_names("\0" * 100_000 + ".json") == {"\0" * 4096 + ".json"}  # a word is at most 4096 characters


def test_a_file_dslint_does_not_read_names_nothing(tmp_path):
    from dslint.run.cache import NameIndex
    from dslint.source import MAX_FILE_BYTES

    big = tmp_path / "huge.json"
    with open(big, "wb") as handle:
        handle.write(b"see ds.json ")
        handle.truncate(MAX_FILE_BYTES + 1)
    assert NameIndex(None).names(big) == frozenset()
