"""The argument names of each release, read from the wheels (dslint/schemagen/argument_names.py, dslint/evidence/argnames.py)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from dslint.evidence import argnames
from dslint.schemagen import argument_names as generator
from dslint.schemagen.downloads import wheel_name
from dslint.schemagen.generations import ARGUMENT_WHEELS
from dslint.evidence.versions import known_releases
from oracle_support import prepared_downloads

MIXIN = '''
from dataclasses import dataclass, field


@dataclass
class VllmMixin:
    num_infer_workers: int = 1
    if True:
        vllm_gpu_memory_utilization: float = 0.9
'''

GRPO = '''
from dataclasses import dataclass
from typing import Optional

from trl import GRPOConfig as HfGRPOConfig

from swift.trainers.mixins import VllmMixin as Vllm


@dataclass
class GRPOArguments(Vllm, HfGRPOConfig):
    num_generations: int = 8
    epsilon: Optional[float] = None

    def helper(self):
        local: int = 3
'''


def _wheel(tmp_path: Path, version: str, files: dict[str, str]) -> Path:
    path = tmp_path / wheel_name("ms-swift", version)
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return path


def test_a_class_gets_its_bases_fields_through_the_wheel_and_names_the_package_it_inherits(tmp_path):
    path = _wheel(tmp_path, "3.4.0", {"swift/trainers/mixins.py": MIXIN, "swift/llm/argument/rlhf_args.py": GRPO,
                                      "swift/llm/other.py": "class Unread:\n    not_an_argument: int = 1\n"})
    wheel = generator.Wheel.from_file(generator.PACKAGES["ms-swift"], path)
    assert wheel.version == "3.4.0"
    # the mixin lives outside the argument modules and is imported under another name
    assert wheel.names == {"num_generations", "epsilon", "num_infer_workers", "vllm_gpu_memory_utilization"}
    assert wheel.inherits == {"trl"}
    assert not wheel.unresolved


def test_the_file_stores_deltas_and_reads_back_every_release(tmp_path):
    first = _wheel(tmp_path, "3.3.0", {"swift/llm/argument/a.py": "class A:\n    old: int = 1\n    kept: int = 2\n"})
    second = _wheel(tmp_path, "3.4.0", {"swift/llm/argument/a.py": "class A:\n    kept: int = 2\n    new: int = 3\n"})
    third = _wheel(tmp_path, "3.4.1", {"swift/llm/argument/a.py": "class A:\n    kept: int = 2\n    new: int = 3\n"})
    package = generator.PACKAGES["ms-swift"]
    data = generator.encode(package, [generator.Wheel.from_file(package, p) for p in (third, first, second)])
    assert data["releases"] == [{"version": "3.3.0", "added": ["kept", "old"]},
                                {"version": "3.4.0", "added": ["new"], "removed": ["old"]},
                                {"version": "3.4.1"}]
    assert data["inherits"] == ["transformers"]  # ms-swift always parses transformers' Seq2SeqTrainingArguments
    text = generator.render(data)
    assert json.loads(text) == data
    assert argnames.decode(json.loads(text)) == {"3.3.0": {"kept", "old"}, "3.4.0": {"kept", "new"},
                                                 "3.4.1": {"kept", "new"}}


def test_transformers_reads_the_newest_patch_of_each_minor():
    chosen = generator.releases_to_read(generator.PACKAGES["transformers"], ["4.50.0", "4.50.3", "4.51.0", "5.0.0"])
    assert chosen == ["4.50.3", "4.51.0", "5.0.0"]
    assert generator.releases_to_read(generator.PACKAGES["ms-swift"], ["3.4.0", "3.4.1"]) == ["3.4.0", "3.4.1"]


# ---- the shipped files -----------------------------------------------------------------------


def test_a_release_between_two_schemas_has_the_names_its_wheel_defines():
    # ms-swift 3.4.0's GRPO arguments (swift/trainers/arguments.py); neither 2.6.1 nor 3.12.6 has them
    for name in ("num_infer_workers", "--tensor_parallel_size", "gc_collect_after_offload"):
        assert argnames.has_name("ms-swift", "3.4.0", name) is True
    assert argnames.has_name("ms-swift", "3.12.6", "num_infer_workers") is False
    assert argnames.has_name("ms-swift", "2.6.1", "num_infer_workers") is False
    # inherited from transformers' TrainingArguments, and a --no_ complement
    assert argnames.has_name("ms-swift", "3.4.0", "learning_rate") is True
    assert argnames.has_name("ms-swift", "3.4.0", "--no-remove-unused-columns") is True
    assert argnames.has_name("ms-swift", "3.4.0", "num_infer_workerz") is False


def test_a_transformers_patch_release_is_described_by_its_minor():
    # tp_size: in the 4.50.3 and 4.51.3 wheels' training_args.py, not in 4.49.0's nor 4.52.4's
    assert argnames.has_name("transformers", "4.50.1", "tp_size") is True
    assert argnames.has_name("transformers", "4.50.0", "tp_size") is True  # not a known release: its minor is
    assert argnames.has_name("transformers", "4.49.0", "tp_size") is False
    assert argnames.has_name("transformers", "4.52.2", "tp_size") is False
    assert argnames.has_name("transformers", "4.50.1", "predict_with_generate") is True  # Seq2SeqTrainingArguments


def test_a_release_the_history_does_not_cover_is_not_answered():
    assert argnames.has_name("ms-swift", "9.0.0", "num_infer_workers") is None
    assert argnames.has_name("transformers", "4.44.2", "tp_size") is None
    assert argnames.has_name("accelerate", "1.0.0", "num_processes") is None  # no names file


@pytest.mark.parametrize("name", sorted(generator.PACKAGES))
def test_the_shipped_file_is_what_the_generator_writes(name):
    package = generator.PACKAGES[name]
    text = package.output.read_text(encoding="utf-8")
    data = json.loads(text)
    assert generator.render(data) == text
    assert data["package"] == name and data["by"] == ("minor" if package.by_minor else "release")
    assert data["modules"] == list(package.patterns)
    versions = [row["version"] for row in data["releases"]]
    assert versions == generator.releases_to_read(package, versions)  # oldest first, one per minor for transformers
    wanted = generator.releases_to_read(package, list(known_releases(name)))
    assert set(versions) <= set(wanted)
    assert len(versions) >= len(wanted) - 2, "most known releases are recorded"
    assert set(data["inherits"]) <= set(generator.PACKAGES)
    assert all(argnames.decode(data).values())


@pytest.mark.oracle
def test_regenerated_names_match_shipped():
    folder = prepared_downloads(ARGUMENT_WHEELS, "*.whl", "the wheels")
    status = generator.main(["--wheels", str(folder), "--check"])
    if status == generator.EXIT_OTHER_WHEELS:
        pytest.skip("the folder's wheels are not the ones the shipped files were made from (a download failed?)")
    assert status == 0


def test_the_history_agrees_with_the_documented_lifetimes():
    """Where a project documents when a name came or went (DS312's tuner flags, transformers 5.0's
    removals), the wheels say the same; the history may accept more (a name inherited from some
    transformers release), never less."""
    from dslint.rules._training import DOCUMENTED

    for package, lifetimes in DOCUMENTED.items():
        for name, life in lifetimes.items():
            for version in known_releases(package):
                accepted = None if life.unsure(version) else life.accepts(version)
                found = argnames.has_name(package, version, name)
                if accepted is None or found is None:
                    continue
                assert found or not accepted, f"{package} {version} {name}: documented, but not in its wheel"
                if package != "llamafactory":  # LLaMA-Factory inherits every transformers release's names
                    assert found == accepted, f"{package} {version} {name}: the wheel disagrees with {life.source}"
