"""Tests for schemas/deepspeed.schema.json and its generator (dslint.schemagen.deepspeed)."""

from __future__ import annotations

import csv
import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from dslint.schemagen import drop_auto, object_schema, resolve_ref

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_FILE = ROOT / "schemas" / "deepspeed.schema.json"
VERSIONS_FILE = ROOT / "schemas" / "deepspeed-versions.json"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


@pytest.fixture(scope="module")
def schema() -> dict:
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def zero(schema) -> dict:
    return object_schema(schema, schema["properties"]["zero_optimization"])


def _validator(schema):
    jsonschema = pytest.importorskip("jsonschema")
    return jsonschema.Draft202012Validator(schema)


def _section_validator(schema, key):
    jsonschema = pytest.importorskip("jsonschema")
    sub = dict(schema["properties"][key])
    sub["$defs"] = schema["$defs"]
    return jsonschema.Draft202012Validator(sub)


# ---------------------------------------------------------------------------
# (a) the shipped schema, no deepspeed needed
# ---------------------------------------------------------------------------


def test_schema_is_canonical_json_draft_2020_12(schema):
    text = SCHEMA_FILE.read_text(encoding="utf-8")
    assert text == json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["x-dslint-deepspeed-version"]


def test_schema_is_valid_against_metaschema(schema):
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator.check_schema(schema)


def test_top_level_is_lax(schema):
    assert schema["additionalProperties"] is True
    assert schema["x-dslint-lax"] is True


def test_zero_optimization_is_strict(schema, zero):
    assert zero["additionalProperties"] is False
    assert zero["x-dslint-strict"] is True
    assert zero["x-dslint-drops-auto"] is True
    assert schema["x-dslint-sections"]["zero_optimization"]["kind"] == "strict"
    stage = zero["properties"]["stage"]
    assert stage["enum"] == [0, 1, 2, 3] and stage["default"] == 0
    assert zero["properties"]["reduce_bucket_size"]["exclusiveMinimum"] == 0
    offload = object_schema(schema, zero["properties"]["offload_optimizer"])
    assert offload["additionalProperties"] is False
    assert offload["properties"]["device"]["enum"] == ["none", "cpu", "nvme"]


def test_every_strict_section_forbids_unknown_keys(schema):
    strict = [k for k, v in schema["x-dslint-sections"].items() if v["kind"] == "strict"]
    assert {"zero_optimization", "fp16", "bf16", "comms_logger", "tensorboard", "wandb", "csv_monitor",
            "comet", "hybrid_engine", "compile", "tensor_parallel", "timers.throughput"} <= set(strict)
    for key in strict:
        assert schema["$defs"][schema["x-dslint-sections"][key]["def"]]["additionalProperties"] is False, key


def test_lax_sections(schema):
    lax = {k for k, v in schema["x-dslint-sections"].items() if v["kind"] == "lax"}
    assert {"activation_checkpointing", "flops_profiler", "aio", "autotuning", "checkpoint", "data_types",
            "data_efficiency", "pipeline", "torch_autocast", "expert_parallel"} <= lax
    for key in lax:
        node = schema["$defs"][schema["x-dslint-sections"][key]["def"]]
        assert node["additionalProperties"] is True and node["x-dslint-lax"] is True, key
    act = resolve_ref(schema, schema["properties"]["activation_checkpointing"])
    assert "partition_activations" in act["properties"]
    assert "partitioned_activations" not in act["properties"]  # the docstring's spelling is not read
    assert "intra_op_parallelism" in resolve_ref(schema, schema["properties"]["aio"])["properties"]


def test_aliases(zero, schema):
    alias = zero["properties"]["stage3_prefetch_bucket_size"]
    assert alias["x-dslint-alias-of"] == "prefetch_bucket_size"
    assert alias["x-dslint-alias-conflict"] == "error"
    assert zero["properties"]["prefetch_bucket_size"]["x-dslint-aliases"] == ["stage3_prefetch_bucket_size"]
    assert {"not": {"required": ["prefetch_bucket_size", "stage3_prefetch_bucket_size"]},
            "x-dslint-conflict": "alias"} in zero["allOf"]
    for name in ("param_persistence_threshold", "model_persistence_threshold", "max_live_parameters",
                 "max_reuse_distance", "gather_16bit_weights_on_model_save", "module_granularity_threshold",
                 "use_all_reduce_for_fetch_params", "allgather_sequential"):
        assert zero["properties"][f"stage3_{name}"]["x-dslint-alias-of"] == name
    bfloat16 = schema["properties"]["bfloat16"]
    assert bfloat16["x-dslint-alias-of"] == "bf16" and bfloat16["x-dslint-alias-conflict"] == "ignored"


def test_deprecated_fields(zero):
    cpu_offload = zero["properties"]["cpu_offload"]
    assert cpu_offload["deprecated"] is True
    assert cpu_offload["x-dslint-replaced-by"] == "offload_optimizer"
    assert cpu_offload["x-dslint-set-new-param"] is True
    assert zero["properties"]["cpu_offload_use_pin_memory"]["x-dslint-set-new-param"] is False
    assert {"not": {"required": ["cpu_offload", "offload_optimizer"]}, "x-dslint-conflict": "deprecated"} in zero["allOf"]


def test_removed_keys(schema, zero):
    for key in ("nebula", "compression_training", "amp", "elasticity", "curriculum_learning",
                "progressive_layer_drop", "sparse_attention"):
        node = schema["properties"][key]
        assert node["x-dslint-removed"] is True and node["not"] == {}, key
        assert node["x-dslint-removed-message"]
    assert schema["properties"]["curriculum_learning"]["x-dslint-replaced-by"] == \
        "data_efficiency.data_sampling.curriculum_learning"
    for key in ("mics_shard_size", "mics_hierarchical_params_gather", "zeropp_loco_param"):
        assert zero["properties"][key]["x-dslint-removed"] is True, key


def test_unchecked_top_level_keys(schema):
    clip = schema["properties"]["gradient_clipping"]
    assert clip["x-dslint-unchecked"] is True and clip["default"] == 1.0 and clip["type"] == "number"
    assert schema["properties"]["zero_force_ds_cpu_optimizer"]["default"] is True
    tbs = schema["properties"]["train_batch_size"]
    assert tbs["x-dslint-unchecked"] is True and "type" not in tbs
    comm = schema["properties"]["communication_data_type"]
    assert sorted(comm["x-dslint-values"]) == ["bf16", "fp16", "fp32"] and comm["x-dslint-case-insensitive"]


def test_versions_file_consistent_with_schema(schema, zero):
    versions = json.loads(VERSIONS_FILE.read_text(encoding="utf-8"))
    assert versions["keys"]["gradient_clipping"]["default_changed"] == {"version": "0.19.3", "from": 0.0, "to": 1.0}
    for path, entry in versions["keys"].items():
        assert entry.get("source"), path
        if "removed" not in entry:
            continue
        head, _, leaf = path.rpartition(".")
        node = zero["properties"][leaf] if head == "zero_optimization" else schema["properties"][path]
        assert node.get("x-dslint-removed") is True, path


def test_generator_imports_without_deepspeed():
    code = ("import sys; sys.modules['deepspeed'] = None\n"
            "import dslint.schemagen.deepspeed as g\n"
            "assert 'deepspeed' not in [m for m in sys.modules if sys.modules[m] is not None]\n"
            "print(g.SCHEMA_FILE.name)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "deepspeed.schema.json"


def test_schema_rejects_and_accepts(schema):
    validator = _validator(schema)

    def errors(cfg):
        return sorted(e.json_path for e in validator.iter_errors(drop_auto(cfg, schema)))

    assert errors({"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3}}) == []
    assert errors({"zero_optimization": {"stage": 3, "stage3_prefetch_bucket_size": "auto"}}) == []
    assert errors({"zero_optimization": {"stage": 4}}) == ["$.zero_optimization"]
    assert errors({"zero_optimization": {"stage3_param_persitence_threshold": 1}}) == ["$.zero_optimization"]
    assert errors({"zero_optimization": {"prefetch_bucket_size": 1, "stage3_prefetch_bucket_size": 1}}) == \
        ["$.zero_optimization"]
    assert errors({"fp16": {"loss_scale_power": 16}}) == ["$.fp16"]
    assert errors({"nebula": {"enabled": False}}) == ["$.nebula"]
    assert errors({"zero_optimisation": {"stage": 3}}) == []  # DeepSpeed ignores unknown top-level keys
    assert errors({"gradient_clipping": "auto"}) == ["$.gradient_clipping"]


# ---------------------------------------------------------------------------
# (b) drift: regenerating from the installed deepspeed gives the shipped file
# ---------------------------------------------------------------------------


@pytest.mark.oracle
def test_regenerated_schema_matches_shipped(schema):
    deepspeed = pytest.importorskip("deepspeed")
    if deepspeed.__version__ != schema["x-dslint-deepspeed-version"]:
        pytest.skip(f"installed deepspeed {deepspeed.__version__} != "
                    f"schema's {schema['x-dslint-deepspeed-version']}: regenerate to compare")
    # In a fresh interpreter: the generator probes DeepSpeedConfig, whose code path changes once
    # another test has initialised torch.distributed in this process.
    run = _generator("--check", "--output", str(SCHEMA_FILE))
    assert run.returncode == 0, "schemas/deepspeed.schema.json is stale: run python -m dslint.schemagen.deepspeed\n" + run.stdout + run.stderr


@pytest.mark.oracle
def test_check_mode_exit_code(tmp_path, schema):
    deepspeed = pytest.importorskip("deepspeed")
    if deepspeed.__version__ != schema["x-dslint-deepspeed-version"]:
        pytest.skip("installed deepspeed differs from the schema's version")
    stale = tmp_path / "stale.json"
    stale.write_text("{}\n", encoding="utf-8")
    assert _generator("--check", "--output", str(stale)).returncode == 1
    assert _generator("--check", "--output", str(SCHEMA_FILE)).returncode == 0


def _generator(*args: str):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "dslint.schemagen.deepspeed", *args], capture_output=True, text=True, timeout=600)


# ---------------------------------------------------------------------------
# (c) configs from the shared corpus
# ---------------------------------------------------------------------------


def _corpus_ds_json() -> list[Path]:
    manifest = CORPUS / "MANIFEST.tsv"
    if not manifest.is_file():
        pytest.skip(f"the shared corpus is not beside the repository ({CORPUS})")
    with manifest.open(encoding="utf-8", newline="") as fh:
        rows = [r for r in csv.DictReader(fh, delimiter="\t") if r["kind"] == "ds_json"]
    return [CORPUS / r["repo"].replace("/", "__") / r["path"] for r in rows]


def _corpus_file(rel: str) -> Path:
    path = CORPUS / rel
    if not path.is_file():
        pytest.skip(f"{rel} is not in the corpus")
    return path


def test_corpus_configs_validate(schema):
    validator = _validator(schema)
    files = _corpus_ds_json()
    valid = 0
    for path in files:
        cfg = drop_auto(json.loads(path.read_text(encoding="utf-8")), schema)
        valid += not any(True for _ in validator.iter_errors(cfg))
    assert files and valid >= len(files) // 4


@pytest.mark.parametrize("rel, expected", [
    ("haotian-liu__LLaVA/scripts/zero3.json", []),
    ("axolotl-ai-cloud__axolotl/deepspeed_configs/zero1_torch_compile.json", ["$.compile", "$.gradient_clipping"]),
    ("deepspeedai__DeepSpeedExamples/compression/bert/config/ds_config.json", ["$.compression_training"]),
])
def test_corpus_examples(schema, rel, expected):
    validator = _validator(schema)
    cfg = drop_auto(json.loads(_corpus_file(rel).read_text(encoding="utf-8")), schema)
    assert sorted({e.json_path for e in validator.iter_errors(cfg)}) == expected


@pytest.mark.oracle
def test_strict_sections_agree_with_deepspeed(schema):
    """For every strict section in the corpus, the schema and DeepSpeed's model give the same verdict."""
    pytest.importorskip("deepspeed")
    import importlib

    from dslint.schemagen.deepspeed import STRICT_SECTIONS

    models = {}
    for key, info in schema["x-dslint-sections"].items():
        if info["kind"] == "strict" and "." not in key:
            modname, _, cls = schema["$defs"][info["def"]]["x-dslint-model"].rpartition(".")
            models[key] = getattr(importlib.import_module(modname), cls)
    assert set(k for k in STRICT_SECTIONS if "." not in k) <= set(models)
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        checked = 0
        for path in _corpus_ds_json():
            cfg = json.loads(path.read_text(encoding="utf-8"))
            for key, model in models.items():
                section = cfg.get(key)
                if not isinstance(section, dict):
                    continue
                try:
                    model(**section)
                    ds_ok = True
                except Exception:  # noqa: BLE001
                    ds_ok = False
                errors = list(_section_validator(schema, key).iter_errors(
                    drop_auto(section, schema, schema["properties"][key])))
                assert ds_ok == (not errors), (path, key, [e.message for e in errors])
                checked += 1
        assert checked > 50
    finally:
        logging.disable(previous)


@pytest.mark.oracle
@pytest.mark.parametrize("section", [
    {"stage": 3, "reduce_bucket_size": 5e8, "stage3_max_live_parameters": 1e9},
    {"stage": 4},
    {"stage": "auto", "overlap_comm": True},
    {"reduce_bucket_size": 0},
    {"stage3_prefetch_bucket_size": 15099494.4},
    {"prefetch_bucket_size": 1, "stage3_prefetch_bucket_size": 2},
    {"cpu_offload": True, "offload_optimizer": {"device": "cpu"}},
    {"stage3_gather_fp16_weights_on_model_save": True, "stage3_gather_16bit_weights_on_model_save": True},
    {"offload_optimizer": {"device": "CPU"}},
    {"offload_param": {"device": "nvme", "max_in_nvme": 1}},
    {"offload_optimizer": {"device": "cpu", "ratio": 1.5}},
    {"zenflow": {"topk_ratio": 0.0}},
    {"leaf_module": {"names": ["a"], "classes": ["b"]}},
])
def test_zero_mutations_agree_with_deepspeed(schema, section):
    pytest.importorskip("deepspeed")
    from deepspeed.runtime.zero.config import DeepSpeedZeroConfig

    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        try:
            DeepSpeedZeroConfig(**section)
            ds_ok = True
        except Exception:  # noqa: BLE001
            ds_ok = False
    finally:
        logging.disable(previous)
    errors = list(_section_validator(schema, "zero_optimization").iter_errors(
        drop_auto(section, schema, schema["properties"]["zero_optimization"])))
    assert ds_ok == (not errors), [e.message for e in errors]
