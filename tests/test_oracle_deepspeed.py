"""The DS2xx rules against the real DeepSpeed: dslint reports an error iff `DeepSpeedConfig` raises.

Only parse-time behaviour is compared (``deepspeed.runtime.config.DeepSpeedConfig(dict)`` with
``dist.get_world_size``/``get_rank`` patched to a single process, as in the research notes);
engine-time rules are covered by their fixtures. Skipped when deepspeed is not installed.
"""

from __future__ import annotations

import copy
import itertools
import json
import logging
import warnings
from pathlib import Path

import pytest

from dslint.config import Setting, Settings
from dslint.diagnostics import Severity
from dslint.run.engine import Engine
from oracle_support import judged_as_installed

pytestmark = pytest.mark.oracle

# Rules whose errors are raised by DeepSpeedConfig itself (besides the batch rules, whose
# inputs these cases keep valid).
PARSE_TIME = ["DS101", "DS102", "DS201", "DS203", "DS205", "DS210", "DS212", "DS213", "DS231", "DS234", "DS236", "DS241", "DS242"]

BASE = {"train_micro_batch_size_per_gpu": 1}


@pytest.fixture(scope="module")
def parse():
    pytest.importorskip("deepspeed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from deepspeed.runtime import config as dsc
        from deepspeed.utils import logger
    logger.setLevel(logging.ERROR)
    saved = dsc.dist.get_world_size, dsc.dist.get_rank
    dsc.dist.get_world_size = lambda *a, **k: 1
    dsc.dist.get_rank = lambda *a, **k: 0

    def run(config: dict):
        try:
            dsc.DeepSpeedConfig(copy.deepcopy(config))
        except BaseException as exc:  # noqa: BLE001 - any raise is a rejection
            return f"{type(exc).__name__}: {exc}"
        return None

    yield run
    dsc.dist.get_world_size, dsc.dist.get_rank = saved


@pytest.fixture(scope="module")
def engine():
    settings = judged_as_installed(Settings(select=PARSE_TIME, root=Path.cwd()))
    settings.world_size = Setting(1, "oracle")
    return Engine(settings)


def _errors(engine, config: dict) -> list[str]:
    result = engine.lint_bytes("ds_config.json", json.dumps(config, indent=2).encode())
    assert not result.internal_errors, result.internal_errors
    return [f"{d.code} {d.message}" for d in result.diagnostics if d.severity == Severity.ERROR and _parse_time(d)]


def _cases():
    zero_values = [3, "3", 3.0, "3.0", "3.5", "5e8", 5e8, 1.5, 0, -1, True, "true", "yes1", None, "auto", [], {}]
    int_fields = ["reduce_bucket_size", "allgather_bucket_size", "stage3_prefetch_bucket_size", "prefetch_bucket_size",
                  "stage3_max_live_parameters", "sub_group_size", "zero_hpz_partition_size", "stage3_module_granularity_threshold"]
    for field, value in itertools.product(int_fields, zero_values):
        yield f"zero.{field}={value!r}", {"zero_optimization": {"stage": 3, field: value}}
    bool_fields = ["overlap_comm", "contiguous_gradients", "stage3_gather_16bit_weights_on_model_save", "round_robin_gradients"]
    bool_values = [True, False, "true", "True", "no", "off", 1, 0, 2, 1.0, 0.5, "yes1", "", None, "auto", [], "on "]
    for field, value in itertools.product(bool_fields, bool_values):
        yield f"zero.{field}={value!r}", {"zero_optimization": {"stage": 2, field: value}}
    for stage in [0, 1, 2, 3, 4, -1, "2", "2.0", 2.5, None, "auto", "two", True, False]:
        yield f"stage={stage!r}", {"zero_optimization": {"stage": stage}}
    for device in ["cpu", "none", "nvme", "CPU", "Cpu", "gpu", None, "auto", 1]:
        for stage in (1, 3):
            yield f"offload_optimizer.device={device!r}@{stage}", {"zero_optimization": {"stage": stage, "offload_optimizer": {"device": device, "nvme_path": "/nvme"}}}
            yield f"offload_param.device={device!r}@{stage}", {"zero_optimization": {"stage": stage, "offload_param": {"device": device, "nvme_path": "/nvme"}}}
    for ratio, stage in itertools.product([1, 1.0, 0.5, "0.5", 0, 1.5, -0.1, "auto"], (1, 2, 3)):
        yield f"ratio={ratio!r}@{stage}", {"zero_optimization": {"stage": stage, "offload_optimizer": {"device": "cpu", "ratio": ratio}}}
    for section in [None, True, "auto", [], 1, {}]:
        for key in ["zero_optimization", "fp16", "bf16", "bfloat16", "optimizer", "scheduler", "activation_checkpointing",
                    "aio", "tensorboard", "wandb", "comms_logger", "compile", "hybrid_engine", "checkpoint", "data_types", "flops_profiler"]:
            yield f"{key}={section!r}", {key: section}
    # unknown, aliased, deprecated and removed keys
    for key in ["stage3_param_persitence_threshold", "stage_3", "Stage", "offload_optimiser", "zero_hpz_partition_sizes", "mics_shard_size", "zeropp_loco_param"]:
        yield f"zero key {key}", {"zero_optimization": {"stage": 3, key: 1}}
        yield f"zero key {key}=auto", {"zero_optimization": {"stage": 3, key: "auto"}}
    for key in ["zero_optimisation", "fp16_enabled", "nebula", "amp", "elasticity", "curriculum_learning", "sparse_attention",
                "compression_training", "progressive_layer_drop", "eigenvalue", "_comment", "log"]:
        yield f"top key {key}", {key: {"enabled": False}}
    for section, key in [("fp16", "loss_scale_power"), ("bf16", "auto_cast"), ("wandb", "name"), ("compile", "enabled"),
                         ("tensor_parallel", "tp_size"), ("comms_logger", "verbose"), ("csv_monitor", "job_name"),
                         ("hybrid_engine", "max_out_token")]:
        yield f"{section}.{key}", {section: {key: 1 if section != "csv_monitor" else "x"}}
    pairs = [("prefetch_bucket_size", "stage3_prefetch_bucket_size"), ("max_live_parameters", "stage3_max_live_parameters"),
             ("gather_16bit_weights_on_model_save", "stage3_gather_16bit_weights_on_model_save"),
             ("cpu_offload", "offload_optimizer"), ("cpu_offload_param", "offload_param"),
             ("stage3_gather_fp16_weights_on_model_save", "stage3_gather_16bit_weights_on_model_save"),
             ("cpu_offload_use_pin_memory", "offload_optimizer")]
    values = {"offload_optimizer": {"device": "cpu"}, "offload_param": {"device": "cpu"}}
    for first, second in pairs:
        for a, b in [(1, 2), ("auto", 2), (1, "auto"), (True, None), (None, None), (False, "auto")]:
            a_value = a if first not in values else values[first]
            b_value = values.get(second, b) if b not in ("auto", None) else b
            yield f"{first}={a!r}+{second}={b!r}", {"zero_optimization": {"stage": 3, first: a_value, second: b_value}}
    # fp16 / bf16
    for fp16, bf16 in itertools.product([True, False, "true", 1, "auto", None], repeat=2):
        yield f"fp16={fp16!r} bf16={bf16!r}", {"fp16": {"enabled": fp16}, "bf16": {"enabled": bf16}}
    yield "fp16 + bfloat16", {"fp16": {"enabled": True}, "bfloat16": {"enabled": True}}
    yield "bf16 off + bfloat16 on", {"bf16": {"enabled": False}, "bfloat16": {"enabled": True}, "fp16": {"enabled": True}}
    for key, value in itertools.product(["loss_scale", "loss_scale_window", "min_loss_scale", "hysteresis", "initial_scale_power"],
                                        [0, 0.0, 1, -1, 0.5, "128", "1000.0", "x", True, None, "Infinity", 1e9]):
        for enabled in (True, False):
            yield f"fp16.{key}={value!r} enabled={enabled}", {"fp16": {"enabled": enabled, key: value}}
    for key, value in itertools.product(["fp16_master_weights_and_grads"], [True, False]):
        for stage in (0, 2):
            offload = {"offload_optimizer": {"device": "cpu"}} if stage else {}
            yield f"fp16.{key}={value}@{stage}", {"fp16": {"enabled": True, key: value}, "zero_optimization": {"stage": stage, **offload}}
    for mw, states, stage in itertools.product([True, False], [True, False], (0, 1, 3)):
        yield f"bf16 mw={mw} states={states}@{stage}", {"bf16": {"enabled": True, "bf16_master_weights_and_grads": mw, "bf16_optimizer_states": states}, "zero_optimization": {"stage": stage, "offload_optimizer": {"device": "cpu"}}}
    # top-level dict.get values DeepSpeed checks at parse time
    for value in ["fp16", "bf16", "fp32", "BF16", "bfloat16", "float32", "half", "auto", None, 16, "int8"]:
        yield f"communication_data_type={value!r}", {"communication_data_type": value}
        yield f"seq_parallel_communication_data_type={value!r}", {"seq_parallel_communication_data_type": value}
    for op, stage in itertools.product(["mean", "sum", "SUM", "Mean", "avg", None, 1], (2, 3)):
        yield f"gradient_allreduce_op={op!r}@{stage}", {"gradient_allreduce_op": op, "zero_optimization": {"stage": stage}}
    yield "sum + zenflow", {"gradient_allreduce_op": "sum", "zero_optimization": {"stage": 2, "zenflow": {}}}
    yield "sum + deepcompile", {"gradient_allreduce_op": "sum", "compile": {"deepcompile": True}}
    for grad_norm, stage in itertools.product([False, "false", "no", True, "auto"], (0, 1, 2, 3)):
        yield f"compute_grad_norm={grad_norm!r}@{stage}", {"zero_optimization": {"stage": stage, "compute_grad_norm": grad_norm}, "gradient_clipping": 0.0}
    for value in ["warn", "IGNORE", "Fail", "strict", 1]:
        yield f"checkpoint.tag_validation={value!r}", {"checkpoint": {"tag_validation": value}}
    for value in [True, False, 1, "true", None]:
        yield f"checkpoint.parallel_write.pipeline_stage={value!r}", {"checkpoint": {"parallel_write": {"pipeline_stage": value}}}
    for value in ["mock", "PYTHON", "fast", "slow", None]:
        yield f"checkpoint.writer.type={value!r}", {"checkpoint": {"writer": {"type": value}}}
    for value in ["auto", ["lm_head"], "lm_head", [1], None]:
        yield f"keep_in_fp32_modules={value!r}", {"data_types": {"keep_in_fp32_modules": value}}
    for value in ["bf16", "bfloat16", "torch.float16", "BF16", "float64"]:
        yield f"torch_autocast.dtype={value!r}", {"torch_autocast": {"enabled": True, "dtype": value}}


CASES = list(_cases())


def test_oracle_has_a_few_hundred_cases():
    assert 300 <= len(CASES) <= 1500


@pytest.mark.parametrize("name,config", CASES, ids=[name for name, _ in CASES])
def test_error_iff_deepspeed_rejects(name, config, parse, engine):
    full = {**BASE, **config}
    raised = parse(full)
    errors = _errors(engine, full)
    if raised:
        assert errors, f"DeepSpeed raises {raised!r}, dslint reports no error"
    else:
        assert not errors, f"DeepSpeed accepts the config, dslint reports {errors}"


# ---- pydantic lax coercion, mirrored without importing pydantic at lint time ---------------

_VALUES = ["3", " 3 ", "3.0", "3.", ".0", "3.5", "5e8", "1_000", "1__000", "_1", "+3", "-3", "0x10", "", " ", "3.000",
           "3.0001", 3.0, 3.5, 1e20, 9e18, float("inf"), float("nan"), True, False, None, [], {}, "true", "True", "TRUE",
           "yes", "Yes", "y", "on", "off", "t", "f", "n", "no", "0", "1", "2", 2, 0, 1, 0.0, 1.0, 1.5, "1.0", "0.5",
           "5e-1", "inf", "nan", "Infinity", "1e3", "1_0.5", "auto", " true ", "1_000.0", "007"]


@pytest.mark.parametrize("kind", ["int", "bool", "float"])
def test_lax_coercion_matches_pydantic(kind):
    pydantic = pytest.importorskip("pydantic")
    from dslint.rules import _deepspeed as ds

    adapter = pydantic.TypeAdapter({"int": int, "bool": bool, "float": float}[kind])
    mine = {"int": ds.lax_int, "bool": ds.lax_bool, "float": ds.lax_float}[kind]
    for value in _VALUES:
        try:
            expected = adapter.validate_python(value)
        except pydantic.ValidationError:
            expected = "rejected"
        try:
            got = mine(value)
        except ds.Invalid:
            got = "rejected"
        if isinstance(expected, float) and expected != expected:
            assert isinstance(got, float) and got != got, value
            continue
        assert got == expected and type(got) is type(expected), f"{kind}({value!r}): pydantic {expected!r}, dslint {got!r}"


# ---- the real-world corpus ----------------------------------------------------------------------

def _parse_time(diagnostic) -> bool:
    """DS234 and DS242 also report failures at deepspeed.initialize; their parse-time ones say so in the note."""
    return diagnostic.code not in ("DS234", "DS242") or any("when it parses" in note for note in diagnostic.notes)


def test_corpus_configs_agree_with_deepspeed(corpus, parse):
    """Every parseable DeepSpeed config of the corpus (batch keys replaced by a valid micro batch):
    dslint's parse-time errors appear iff DeepSpeedConfig raises."""
    import hjson

    from dslint.rules._deepspeed import template_placeholders

    settings = judged_as_installed(Settings(select=[c for c in PARSE_TIME if c not in ("DS101", "DS102")], root=corpus))
    engine = Engine(settings)
    result = engine.lint_paths([str(corpus)])
    flagged = {d.path for d in result.diagnostics if d.severity == Severity.ERROR and _parse_time(d)}
    # A template no launch names is filled in before DeepSpeed reads it: dslint does not judge its
    # placeholders, and DeepSpeedConfig on the unfilled text says nothing about the filled copy.
    templates = {id(use.document) for use in engine.deepspeed_uses(result.documents, result.plans) if template_placeholders(use)}
    checked, wrong = 0, []
    for document in result.documents:
        if document.kind != "deepspeed-json" or document.mapping is None or id(document) in templates:
            continue
        config = json.loads(json.dumps(hjson.loads(document.source.text)))
        if config.get("aio", {}).get("use_gds"):
            continue  # GPUDirect Storage: DeepSpeed checks the accelerator (CUDA) at parse time
        for key in ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps"):
            config.pop(key, None)
        raised = parse({**config, **BASE})
        checked += 1
        if bool(raised) != (document.path in flagged):
            wrong.append((document.path, raised))
    assert checked >= 150
    assert wrong == []
