"""The training-argument schemas (transformers, TRL, ms-swift, LLaMA-Factory, accelerate) and their generators.

(a) The shipped files: canonical JSON, valid JSON Schema, each recording the package version it
    was made from, with the facts the DS7xx rules rely on.
(b) Drift: each file is regenerated from its package version and compared (``--check``). The
    current generations import from the running interpreter (``pip install -e ".[schemagen]"``),
    the older ones from the ``--no-deps --target`` copies that ``python -m
    dslint.schemagen.generations --prepare DIR`` makes, found in ``DSLINT_SCHEMAGEN_TARGETS``;
    ``DSLINT_SCHEMAGEN_PYTHON`` names another interpreter to run the generators with. CI does
    both, and there a skipped drift test is a failure (DSLINT_REQUIRE_ORACLES=1, see conftest).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dslint.schemagen import _hfargs as common
from dslint.schemagen.generations import GENERATIONS, command
from dslint.rules._training import arg_space, generations

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = ROOT / "schemas"
FILES = sorted({g.schema for g in GENERATIONS})


def _load(name: str) -> dict:
    return json.loads((SCHEMAS / name).read_text(encoding="utf-8"))


def _fields(name: str, set_name: str) -> dict:
    return arg_space(name[: -len(".schema.json")], (set_name,)).fields


@pytest.mark.parametrize("filename", FILES)
def test_schema_file_is_canonical_and_valid(filename):
    text = (SCHEMAS / filename).read_text(encoding="utf-8")
    schema = json.loads(text)
    assert text == common.render(schema)
    assert schema["$schema"] == common.DRAFT
    assert schema["x-dslint-version"] and schema["x-dslint-package"] and schema["x-dslint-generator"]
    assert schema["x-dslint-sets"] and set(schema["x-dslint-sets"]) <= set(schema["$defs"])
    for set_name in schema["x-dslint-sets"]:
        assert schema["$defs"][set_name]["additionalProperties"] is False
        assert schema["x-dslint-stats"][set_name] == len(schema["$defs"][set_name]["properties"])
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator.check_schema(schema)


def test_every_package_has_a_current_and_an_older_generation():
    for package in ("transformers", "trl", "ms-swift", "llamafactory", "accelerate"):
        versions = [g.version for g in generations(package)]
        assert len(versions) >= 2, package
    assert [g.version for g in generations("ms-swift")] == ["2.6.1", "3.12.6", "4.6.0"]


def test_transformers_rename_between_generations():
    old, new = _fields("transformers-4.45.schema.json", "TrainingArguments"), _fields("transformers.schema.json", "TrainingArguments")
    assert old["evaluation_strategy"]["deprecated"] is True
    assert old["evaluation_strategy"]["x-dslint-replaced-by"] == "eval_strategy"
    assert "evaluation_strategy" not in new and new["eval_strategy"]["enum"] == ["no", "steps", "epoch"]
    assert new["learning_rate"]["x-dslint-cli-type"] == "float" and new["learning_rate"]["default"] == 5e-05
    assert new["remove_unused_columns"]["x-dslint-negation"] == ["--no_remove_unused_columns", "--no-remove-unused-columns"]
    assert "cosine" in new["lr_scheduler_type"]["enum"] and "adamw_torch" in new["optim"]["enum"]
    assert "adamw_hf" in old["optim"]["enum"] and "adamw_hf" not in new["optim"]["enum"]
    assert "predict_with_generate" in _fields("transformers.schema.json", "Seq2SeqTrainingArguments")


def test_swift_tuner_flag_generations_and_readers():
    tuner = {v: [n for n in ("sft_type", "train_type", "tuner_type") if n in _fields(f, "sft")]
             for v, f in (("2", "ms-swift-2.6.schema.json"), ("3", "ms-swift-3.12.schema.json"), ("4", "ms-swift.schema.json"))}
    assert tuner == {"2": ["sft_type"], "3": ["train_type"], "4": ["tuner_type"]}
    current = _load("ms-swift.schema.json")
    assert {"sft", "pt", "rlhf", "export", "megatron-sft", "megatron-pt", "megatron-rlhf", "megatron-export"} <= set(current["x-dslint-sets"])
    assert current["x-dslint-reader"]["positional-suffixes"] == [".json", ".yaml", ".yml"]
    three = _load("ms-swift-3.12.schema.json")["x-dslint-reader"]
    assert three["positional-suffixes"] == [".json"] and three["flag"] == "--config"
    assert _fields("ms-swift.schema.json", "sft")["dataset"]["x-dslint-nargs"] == "+"
    assert _fields("ms-swift.schema.json", "sft")["torch_dtype"]["enum"] == ["bfloat16", "float16", "float32", None]


def test_llamafactory_sets_and_reader():
    current, old = _load("llamafactory.schema.json"), _load("llamafactory-0.8.schema.json")
    assert current["x-dslint-sets"]["train"] == ["ModelArguments", "DataArguments", "TrainingArguments",
                                                  "FinetuningArguments", "GeneratingArguments"]
    assert current["x-dslint-reader"]["loader"] == "omegaconf" and current["x-dslint-reader"]["overrides-after-config"]
    assert old["x-dslint-reader"] == {**old["x-dslint-reader"], "loader": "pyyaml", "positional-suffixes": [".json", ".yaml"],
                                      "config-must-be-only-argument": True}
    train = _fields("llamafactory.schema.json", "train")
    assert {"pure_bf16", "quantization_bit", "finetuning_type", "val_size", "learning_rate"} <= set(train)


def test_trl_and_accelerate():
    sft = _fields("trl.schema.json", "sft")
    assert "max_length" in sft and "dataset_name" in sft and "model_name_or_path" in sft
    assert "max_seq_length" in _fields("trl-0.12.schema.json", "sft")
    assert _load("trl.schema.json")["x-dslint-reader"]["flag"] == "--config"
    new, old = _fields("accelerate.schema.json", "cluster"), _fields("accelerate-0.34.schema.json", "cluster")
    assert "ipex_config" in old and "ipex_config" not in new and "parallelism_config" in new
    assert _load("accelerate.schema.json")["x-dslint-reader"]["legacy-keys"] == ["dynamo_backend", "fp16"]


def test_generators_import_without_their_packages():
    blocked = ["transformers", "trl", "swift", "llamafactory", "accelerate"]
    modules = ["transformers", "trl", "swift", "llamafactory", "accelerate", "generations"]
    code = ("import sys\n" + "".join(f"sys.modules[{b!r}] = None\n" for b in blocked) +
            "".join(f"import dslint.schemagen.{m}\n" for m in modules) + "print('ok')")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_linter_side_never_imports_the_packages():
    code = ("import sys\nfrom dslint.rules import training_args, _training\n"
            "from dslint.evidence import versions\n"
            "bad = [m for m in ('transformers', 'trl', 'swift', 'llamafactory', 'accelerate') if m in sys.modules]\n"
            "print(bad)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    assert out.stdout.strip() == "[]", out.stderr


def _interpreter(generation) -> str | None:
    if os.environ.get("DSLINT_SCHEMAGEN_PYTHON"):
        return os.environ["DSLINT_SCHEMAGEN_PYTHON"]
    if generation.target is not None or importlib.util.find_spec(generation.module) is not None:
        return sys.executable
    return None


@pytest.mark.oracle
@pytest.mark.parametrize("generation", GENERATIONS, ids=[g.schema for g in GENERATIONS])
def test_regenerated_schema_matches_shipped(generation):
    python = _interpreter(generation)
    targets = os.environ.get("DSLINT_SCHEMAGEN_TARGETS")
    if python is None:
        pytest.skip(f"{generation.module} is not installed here (pip install -e \".[schemagen]\"), "
                    "or set DSLINT_SCHEMAGEN_PYTHON to an interpreter that has it")
    if generation.target is not None and (targets is None or not (Path(targets) / generation.target).is_dir()):
        pytest.skip(f"{generation.schema} is made from a --target copy; set DSLINT_SCHEMAGEN_TARGETS "
                    "(python -m dslint.schemagen.generations --prepare DIR)")
    cmd = command(generation, Path(targets) if targets else None, check=True, python=python)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False, env=env, timeout=600)
    if out.returncode in (common.EXIT_MISSING, common.EXIT_OTHER_VERSION):
        pytest.skip(out.stdout.strip() or out.stderr.strip()[-300:])
    assert out.returncode == common.EXIT_OK, out.stdout[-3000:] + out.stderr[-2000:]


def test_check_mode_reports_a_stale_file(tmp_path):
    """--check exits 1 on a stale file and 3 when the file was made from another version."""
    pytest.importorskip("accelerate")
    from dslint.schemagen import accelerate as gen

    stale = tmp_path / "stale.json"
    stale.write_text("{}\n", encoding="utf-8")
    assert gen.main(["--check", "--output", str(stale)]) == common.EXIT_STALE
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"x-dslint-version": "0.0.1"}), encoding="utf-8")
    assert gen.main(["--check", "--output", str(other)]) == common.EXIT_OTHER_VERSION
