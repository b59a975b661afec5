"""Hydra/OmegaConf configs: recognised by their own syntax, read with OmegaConf's rules, judged by nobody else's."""

from __future__ import annotations

import textwrap

import pytest

from dslint.config import Settings
from dslint.documents import read_document
from dslint.run.engine import Engine

HYDRA = """\
defaults:
  - model: llama
  - optim: adamw
  - _self_
seed: 42
model_name_or_path: meta-llama/Llama-2-7b-hf
learning_rate: 1e-5
output_dir: ${hydra:runtime.output_dir}
"""


@pytest.mark.parametrize("text,what", [
    (HYDRA, "a Hydra defaults list"),
    ("model:\n  _target_: transformers.AutoModelForCausalLM.from_pretrained\n  name: gpt2\n", "a Hydra _target_ key"),
    ("learning_rate: 2e-5\noutput_dir: ${oc.env:OUT}/run\nnum_train_epochs: 3\n", "an OmegaConf ${...} interpolation"),
])
def test_hydra_configs_are_recognised_by_their_syntax(text, what):
    from dslint.documents.omegaconf import marker

    document = read_document("conf/config.yaml", text.encode())
    assert document.flavor == "hydra"
    assert marker(document.mapping)[1] == what


def test_an_interpolation_alone_does_not_make_any_yaml_a_config():
    from dslint.documents import Skipped

    with pytest.raises(Skipped):
        read_document("notes.yaml", b"title: ${project}\n")


def test_scalars_are_read_as_omegaconf_reads_them():
    document = read_document("conf/config.yaml", HYDRA.encode())
    assert document.mapping.value_of("learning_rate") == 1e-5  # PyYAML (YAML 1.1) would keep the string '1e-5'
    when = read_document("conf/c.yaml", b"defaults: []\nlearning_rate: 1_000.5\nday: 2024-01-01\n").mapping
    assert when.value_of("learning_rate") == 1000.5 and when.value_of("day") == "2024-01-01"


def test_omegaconf_refuses_duplicate_keys(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.yaml").write_text("defaults:\n  - _self_\nseed: 1\nseed: 2\n")
    result = Engine(Settings(root=tmp_path, select=["DS001"])).lint_paths(["."])
    [found] = result.diagnostics
    assert (found.code, found.span.source.position(found.span.start)) == ("DS001", (4, 1))
    assert "OmegaConf refuses the duplicate key 'seed'" in found.message


def test_training_argument_rules_leave_hydra_configs_alone(tmp_path, monkeypatch):
    """`learning_rate: 1e-5` is a float to OmegaConf, and the keys are the app's own, not TrainingArguments'."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.yaml").write_text(HYDRA + "my_own_option: true\nsave_strategy: no\n")
    result = Engine(Settings(root=tmp_path, select=["DS7"])).lint_paths(["."])
    assert result.diagnostics == []
    [plan] = result.plans
    assert plan.program.kind == "hydra" and plan.program.established and plan.consumer is None
    assert plan.program.evidence[0].describe() == "uses a Hydra defaults list (config.yaml:2)"


def test_the_same_keys_without_hydra_syntax_establish_no_reader(tmp_path, monkeypatch):
    """Without Hydra syntax the common keys still do not say who reads the file (a Hydra app whose
    config has no defaults list, a script of its own, HfArgumentParser): no type verdict."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.yaml").write_text(textwrap.dedent("""\
        model_name_or_path: m
        output_dir: out
        learning_rate: 1e-5
        """))
    result = Engine(Settings(root=tmp_path, select=["DS7"])).lint_paths(["."])
    assert result.diagnostics == []
    [plan] = result.plans
    assert not plan.program.established
