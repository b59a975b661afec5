"""Generated cases against the real libraries: dslint reports an error iff the library raises.

Four oracles, each with cases that hypothesis generates (derandomized, so every run checks the
same cases) around the decision boundaries:

- ``DeepSpeedConfig`` (deepspeed 0.19.8), world size patched in: the batch triple with world
  sizes 1-16, precision sections, keys and typos in strict sections, removed and deprecated keys,
  ``"auto"``, value coercions, duplicate keys and hjson syntax. dslint reads the same file through a
  generated ``deepspeed --num_gpus W train.py --deepspeed --deepspeed_config ds.json`` launch, so
  the consumer is DeepSpeed itself and the world size comes from the launch;
- HF Trainer (transformers 5.23): ``HfTrainerDeepSpeedConfig`` + ``trainer_config_process``, the
  ``DeepSpeedPlugin`` that ``TrainingArguments`` builds, ``set_mixed_precision`` and
  ``trainer_config_finalize``, with the arguments HF's own parser reads from a generated
  ``torchrun --nproc_per_node W train.py --deepspeed ds.json ...`` launch that dslint reads;
- accelerate (1.15): a generated accelerate YAML and ``accelerate launch`` script; the oracle is
  accelerate's own launch-argument handling (``_validate_launch_command``,
  ``prepare_deepspeed_cmd_env``) followed by ``DeepSpeedPlugin()`` in that environment and
  ``set_mixed_precision``;
- ``deepspeed.initialize`` on CPU (gloo, one rank, a tiny model), for a few init-time checks.

Each oracle compares only the rules that model it (``*_RULES``). Every disagreement is either in
that oracle's ``DELIBERATE`` dict, with its reason (and the rule page that documents it), or fails
the test. The tables are printed at the end of the run (see conftest.py).
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dslint.config import Settings
from dslint.diagnostics import Severity
from dslint.run.engine import Engine
from oracle_support import Deliberate, Obj, Style, Verdicts, judged_as_installed, render, short, to_python
from programs import ACCELERATE_LOOP, DEEPSPEED_LOOP, HF_TRAINER

pytestmark = pytest.mark.oracle

SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "schemas" / "deepspeed.schema.json").read_text())
# Derandomized: every run checks the same cases. DSLINT_ORACLE_EXPLORE=1 draws fresh ones (to hunt
# for new disagreements; not for CI).
HYPOTHESIS = dict(derandomize=os.environ.get("DSLINT_ORACLE_EXPLORE") != "1", database=None, deadline=None,
                  suppress_health_check=list(HealthCheck), print_blob=False)

# Cases per oracle (at least 1,500 in all, as the issue asks).
DS_CASES = 1200
HF_CASES = 400
ACCELERATE_CASES = 200
INIT_CASES = 30


def _report(request, verdicts: Verdicts) -> None:
    unused = [name for name in verdicts.deliberate if not any(r.deliberate == name for r in verdicts.records)]
    if unused:
        verdicts.notes.append(f"deliberate differences no case in this run shows: {unused}")
    tables = getattr(request.config, "_dslint_oracle_tables", None)
    if tables is None:
        tables = request.config._dslint_oracle_tables = []
    tables.append(verdicts.table())


def _assert_agreement(verdicts: Verdicts, minimum: int) -> None:
    assert len(verdicts.records) >= minimum, f"only {len(verdicts.records)} cases were generated"
    unexplained = verdicts.unexplained
    assert not unexplained, "dslint disagrees with the oracle:\n" + verdicts.table()
    # Which deliberate differences a run exercises depends on the cases hypothesis draws, which
    # differ between hypothesis versions even when derandomized: _report lists them, no failure.


def _errors(result, rules, keep=lambda d: True) -> list[str]:
    assert not result.internal_errors, result.internal_errors
    return [d.code for d in result.diagnostics if d.severity == Severity.ERROR and d.code in rules and keep(d)]


class _Workdir:
    """One directory per oracle; every case overwrites its files."""

    def __init__(self, path: Path):
        self.path = path

    def write(self, files: dict[str, str | bytes]) -> None:
        for old in self.path.iterdir():
            old.unlink()
        for name, content in files.items():
            target = self.path / name
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8")


# ---- value pools ----------------------------------------------------------------------------------

INT_VALUES = [0, 1, 2, 3, 7, 8, 500000000, 5e8, 1.5, 3.0, "3", "3.0", "5e8", -1, True, False, None, "auto", "Auto", " 3 ", "1_000", "", [], {}]
BOOL_VALUES = [True, False, "true", "false", "True", "yes", "no", "on", "off", 1, 0, 2, 0.5, 1.0, "yes1", None, "auto", "Auto", "", "t", "1", [], {}]
NUMBER_VALUES = [0, 0.0, 0.5, 1, 1.0, 2, -1, -0.1, 1.5, "0.5", "x", True, None, "auto", "Auto", "1e3", []]
STRING_VALUES = ["cpu", "none", "nvme", "CPU", "x", "", 1, None, "auto", True, "/tmp/out", []]
_BY_TYPE = {"integer": INT_VALUES, "boolean": BOOL_VALUES, "number": NUMBER_VALUES, "string": STRING_VALUES, "array": [[], ["a"], "a", None, 1], "object": [{}, None, 1, "x"]}


def _defs(name: str) -> dict:
    return SCHEMA["$defs"][name]


def _type_of(prop: dict) -> str:
    if "type" in prop:
        return prop["type"] if isinstance(prop["type"], str) else prop["type"][0]
    for branch in prop.get("anyOf", []):
        if "type" in branch and branch["type"] != "null":
            return branch["type"]
        if "$ref" in branch:
            return "object"
    if "$ref" in prop:
        return "object"
    return "string"


# strict sections (pydantic, extra="forbid"), with the path they sit at
STRICT_SECTIONS = {
    ("zero_optimization",): "DeepSpeedZeroConfig",
    ("zero_optimization", "offload_optimizer"): "DeepSpeedZeroOffloadOptimizerConfig",
    ("zero_optimization", "offload_param"): "DeepSpeedZeroOffloadParamConfig",
    ("fp16",): "DeepSpeedFP16Config",
    ("bf16",): "DeepSpeedBF16Config",
    ("wandb",): "WandbConfig",
    ("tensorboard",): "TensorBoardConfig",
    ("csv_monitor",): "CSVConfig",
    ("comms_logger",): "CommsLoggerConfig",
    ("compile",): "CompileConfig",
    ("hybrid_engine",): "HybridEngineConfig",
    ("timers", "throughput"): "DeepSpeedThroughputTimerConfig",
}
# keys DeepSpeed removed (any presence raises) and the deprecated ones it still takes
REMOVED_TOP = ["nebula", "compression_training", "amp", "quantize_training", "sparse_gradients", "eigenvalue", "sparse_attention",
               "elasticity", "graph_harvesting", "curriculum_learning", "progressive_layer_drop"]
REMOVED_ZERO = ["mics_shard_size", "mics_hierarchical_params_gather", "zeropp_loco_param"]
DEPRECATED_PAIRS = [("cpu_offload", "offload_optimizer"), ("cpu_offload_param", "offload_param"),
                    ("stage3_gather_fp16_weights_on_model_save", "stage3_gather_16bit_weights_on_model_save"),
                    ("stage3_gather_fp16_weights_on_model_save", "gather_16bit_weights_on_model_save"),
                    ("cpu_offload_use_pin_memory", "offload_optimizer"),
                    ("prefetch_bucket_size", "stage3_prefetch_bucket_size"), ("max_live_parameters", "stage3_max_live_parameters"),
                    ("param_persistence_threshold", "stage3_param_persistence_threshold")]


def _typo(key: str, how: int) -> str:
    if how == 0 and len(key) > 3:
        return key[:2] + key[3:]  # a letter dropped
    if how == 1 and len(key) > 3:
        return key[:1] + key[2] + key[1] + key[3:]  # two letters swapped
    if how == 2:
        return key + "s"
    if how == 3:
        return key.replace("_", "", 1) if "_" in key else key.upper()
    if how == 4:
        return key[:1].upper() + key[1:]
    return key.replace("optimization", "optimisation").replace("persistence", "persitence") if ("optimization" in key or "persistence" in key) else key + "_"


@st.composite
def typed_value(draw, prop: dict):
    kind = _type_of(prop)
    pool = list(_BY_TYPE.get(kind, STRING_VALUES))
    if "enum" in prop:
        pool += list(prop["enum"])
    if draw(st.integers(0, 2)) == 0 and "default" in prop and prop["default"] is not None:
        return prop["default"]
    return draw(st.sampled_from(pool))


def _nest(path: tuple, leaf: Obj) -> Obj:
    for key in reversed(path):
        leaf = Obj([(key, leaf)])
    return leaf


def _merge(base: Obj, extra: Obj) -> Obj:
    for key, value in extra:
        existing = base.get(key)
        if isinstance(existing, Obj) and isinstance(value, Obj):
            _merge(existing, value)
        else:
            base.set(key, value)
    return base


@st.composite
def batch_case(draw):
    world = draw(st.integers(1, 16))
    mbs = draw(st.integers(1, 8))
    gas = draw(st.integers(1, 8))
    exact = mbs * gas * world
    tbs = draw(st.sampled_from([exact, exact, exact + 1, exact - 1, mbs * gas * draw(st.integers(1, 16)), mbs * draw(st.integers(0, 12)),
                                draw(st.integers(0, 300)), world - 1, world, exact * 2]))
    odd = st.sampled_from([0, -2, 2.0, 2.5, "8", "auto", "Auto", True, None, [8]])
    values = {"train_batch_size": tbs, "train_micro_batch_size_per_gpu": mbs, "gradient_accumulation_steps": gas}
    config = Obj()
    for key in ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps"):
        presence = draw(st.sampled_from(["given", "given", "given", "absent", "absent", "odd"]))
        if presence == "given":
            config.append((key, values[key]))
        elif presence == "odd":
            config.append((key, draw(odd)))
    if draw(st.booleans()):
        config.append(("zero_optimization", Obj([("stage", draw(st.integers(0, 3)))])))
    return "batch", world, config


@st.composite
def precision_case(draw):
    world = draw(st.integers(1, 16))
    enabled = st.sampled_from([True, False, "true", "false", 1, 0, "auto", "Auto", None, "yes", 2, "on"])
    config = Obj([("train_micro_batch_size_per_gpu", 1)])
    for name in draw(st.lists(st.sampled_from(["fp16", "bf16", "bfloat16"]), unique=True, max_size=3)):
        section = Obj([("enabled", draw(enabled))])
        props = _defs("DeepSpeedFP16Config" if name == "fp16" else "DeepSpeedBF16Config")["properties"]
        for key in draw(st.lists(st.sampled_from(sorted(props) + ["loss_scale_power", "auto_cast", "enable", "master_weights"]), unique=True, max_size=3)):
            if key == "enabled":
                continue
            section.append((key, draw(typed_value(props.get(key, {"type": "integer"})))))
        config.append((name, section))
    if draw(st.booleans()):
        zero = Obj([("stage", draw(st.integers(0, 3)))])
        if draw(st.booleans()):
            zero.append(("offload_optimizer", Obj([("device", draw(st.sampled_from(["cpu", "none"])))])))
        config.append(("zero_optimization", zero))
    if draw(st.integers(0, 3)) == 0:
        config.append((draw(st.sampled_from(["communication_data_type", "seq_parallel_communication_data_type"])),
                       draw(st.sampled_from(["fp16", "bf16", "fp32", "BF16", "bfloat16", "float32", None, 16]))))
    return "precision", world, config


@st.composite
def strict_case(draw):
    world = draw(st.integers(1, 16))
    path = draw(st.sampled_from(sorted(STRICT_SECTIONS)))
    props = _defs(STRICT_SECTIONS[path])["properties"]
    leaf = Obj()
    for key in draw(st.lists(st.sampled_from(sorted(props)), min_size=1, max_size=3, unique=True)):
        if draw(st.integers(0, 2)) == 0:
            key = _typo(key, draw(st.integers(0, 5)))
        value = draw(typed_value(props.get(key, {"type": "integer"})))
        if key in ("offload_optimizer", "offload_param", "leaf_module", "zenflow", "tp", "tensor_parallel"):
            value = Obj()
        leaf.set(key, value)
    config = _merge(Obj([("train_micro_batch_size_per_gpu", 1)]), _nest(path, leaf))
    if path[0] == "zero_optimization" and "stage" not in dict(config.get("zero_optimization")):
        config.get("zero_optimization").insert(0, ("stage", draw(st.integers(0, 3))))
    return "strict-section", world, config


@st.composite
def removed_case(draw):
    world = draw(st.integers(1, 16))
    config = Obj([("train_micro_batch_size_per_gpu", 1)])
    zero = Obj([("stage", draw(st.integers(0, 3)))])
    kind = draw(st.sampled_from(["removed-top", "removed-zero", "deprecated", "deprecated-pair", "legacy-bool"]))
    value = st.sampled_from([Obj([("enabled", False)]), Obj([("enabled", True)]), Obj(), True, False, 1, None, "auto"])
    if kind == "removed-top":
        config.append((draw(st.sampled_from(REMOVED_TOP)), draw(value)))
    elif kind == "removed-zero":
        zero.append((draw(st.sampled_from(REMOVED_ZERO)), draw(st.sampled_from([1, 8, True, False, None, "auto"]))))
    elif kind in ("deprecated", "deprecated-pair"):
        old, new = draw(st.sampled_from(DEPRECATED_PAIRS))
        old_value = draw(st.sampled_from([True, False, None, "auto", 1]))
        zero.append((old, old_value))
        if kind == "deprecated-pair":
            new_value = Obj([("device", "cpu")]) if new.startswith("offload") else draw(st.sampled_from([True, False, 1, 1000, None, "auto"]))
            zero.append((new, new_value))
    if kind == "legacy-bool":
        config.append(("zero_optimization", draw(st.sampled_from([True, False]))))
        if draw(st.booleans()):
            config.append(("allgather_size", draw(st.sampled_from([500000000, "x", None]))))
    else:
        config.append(("zero_optimization", zero))
    return "removed-deprecated", world, config


AUTO_PLACES = [("train_batch_size",), ("train_micro_batch_size_per_gpu",), ("gradient_accumulation_steps",), ("gradient_clipping",),
               ("zero_optimization", "stage"), ("zero_optimization", "reduce_bucket_size"), ("zero_optimization", "stage3_prefetch_bucket_size"),
               ("zero_optimization", "prefetch_bucket_size"), ("zero_optimization", "overlap_comm"), ("zero_optimization", "sub_group_size"),
               ("fp16", "enabled"), ("bf16", "enabled"), ("fp16", "loss_scale"), ("optimizer", "params", "lr"),
               ("scheduler", "params", "warmup_num_steps"), ("zero_optimization", "offload_optimizer", "device"),
               ("communication_data_type",), ("steps_per_print",), ("wandb", "project")]


@st.composite
def auto_case(draw):
    world = draw(st.integers(1, 16))
    config = Obj([("train_micro_batch_size_per_gpu", draw(st.integers(1, 4))), ("zero_optimization", Obj([("stage", 2)]))])
    for path in draw(st.lists(st.sampled_from(AUTO_PLACES), min_size=1, max_size=3, unique=True)):
        spelling = draw(st.sampled_from(["auto", "auto", "auto", "Auto", "AUTO"]))
        _merge(config, _nest(path[:-1], Obj([(path[-1], spelling)])))
    if config.get("optimizer") is not None:
        config.get("optimizer").insert(0, ("type", "AdamW"))
    if config.get("scheduler") is not None:
        config.get("scheduler").insert(0, ("type", "WarmupLR"))
    return "auto", world, config


COERCION_FIELDS = {
    ("zero_optimization", "reduce_bucket_size"): INT_VALUES, ("zero_optimization", "allgather_bucket_size"): INT_VALUES,
    ("zero_optimization", "stage3_max_live_parameters"): INT_VALUES, ("zero_optimization", "sub_group_size"): INT_VALUES,
    ("zero_optimization", "stage"): INT_VALUES + ["2", "2.0", 2.5, 4, "two"],
    ("zero_optimization", "overlap_comm"): BOOL_VALUES, ("zero_optimization", "contiguous_gradients"): BOOL_VALUES,
    ("zero_optimization", "offload_optimizer", "device"): STRING_VALUES + ["Cpu", " cpu", "gpu"],
    ("zero_optimization", "offload_optimizer", "ratio"): NUMBER_VALUES, ("zero_optimization", "offload_param", "pin_memory"): BOOL_VALUES,
    ("fp16", "loss_scale"): NUMBER_VALUES, ("fp16", "initial_scale_power"): INT_VALUES, ("fp16", "hysteresis"): INT_VALUES,
    ("fp16", "min_loss_scale"): INT_VALUES, ("fp16", "loss_scale_window"): INT_VALUES, ("bf16", "enabled"): BOOL_VALUES,
    ("communication_data_type",): ["fp16", "bf16", "fp32", "FP16", "bfloat16", "float32", None, 16, "", "auto"],
    ("gradient_allreduce_op",): ["mean", "sum", "SUM", "Mean", "avg", None, 1, ""],
    ("checkpoint", "tag_validation"): ["warn", "IGNORE", "Fail", "strict", 1, None],
    ("data_types", "keep_in_fp32_modules"): ["auto", ["lm_head"], "lm_head", [1], None, []],
    ("tensorboard", "enabled"): BOOL_VALUES, ("wandb", "project"): STRING_VALUES, ("csv_monitor", "output_path"): STRING_VALUES,
    ("comms_logger", "prof_ops"): [[], ["all_reduce"], "all_reduce", None, [1]],
    ("hybrid_engine", "max_out_tokens"): INT_VALUES,
}


@st.composite
def coercion_case(draw):
    world = draw(st.integers(1, 16))
    config = Obj([("train_micro_batch_size_per_gpu", 1)])
    stage = draw(st.integers(0, 3))
    config.append(("zero_optimization", Obj([("stage", stage)])))
    for path in draw(st.lists(st.sampled_from(sorted(COERCION_FIELDS)), min_size=1, max_size=3, unique=True)):
        value = draw(st.sampled_from(COERCION_FIELDS[path]))
        if isinstance(value, dict):
            value = Obj(value.items())
        _merge(config, _nest(path[:-1], Obj([(path[-1], value)])))
    offload = config.get("zero_optimization").get("offload_optimizer")
    if isinstance(offload, Obj) and offload.get("device") is None and draw(st.booleans()):
        offload.insert(0, ("device", "cpu"))
    return "coercion", world, config


@st.composite
def base_config(draw):
    """A small, valid-looking config to carry duplicate keys or hjson syntax."""
    config = Obj([("train_micro_batch_size_per_gpu", draw(st.integers(1, 4))), ("gradient_accumulation_steps", draw(st.integers(1, 4)))])
    zero = Obj([("stage", draw(st.integers(0, 3)))])
    if draw(st.booleans()):
        zero.append(("offload_optimizer", Obj([("device", draw(st.sampled_from(["cpu", "none"]))), ("pin_memory", True)])))
    if draw(st.booleans()):
        zero.append(("reduce_bucket_size", draw(st.sampled_from([500000000, 5e8, 1000]))))
    config.append(("zero_optimization", zero))
    if draw(st.booleans()):
        config.append(("bf16", Obj([("enabled", draw(st.booleans()))])))
    if draw(st.booleans()):
        config.append(("optimizer", Obj([("type", "AdamW"), ("params", Obj([("lr", 1e-5), ("weight_decay", 0.0)]))])))
    if draw(st.booleans()):
        config.append(("aio", Obj([("block_size", 1048576), ("queue_depth", 8)])))
    if draw(st.booleans()):
        config.append(("gradient_clipping", 1.0))
    if draw(st.booleans()):
        config.append(("wandb", Obj([("enabled", False), ("project", "proj")])))
    return config


def _objects(value, path=()):
    if isinstance(value, Obj):
        yield path, value
        for key, item in value:
            yield from _objects(item, path + (key,))


@st.composite
def duplicate_case(draw):
    world = draw(st.integers(1, 16))
    config = draw(base_config())
    targets = [(p, o) for p, o in _objects(config) if len(o)]
    _, target = draw(st.sampled_from(targets))
    key, value = draw(st.sampled_from(list(target)))
    how = draw(st.sampled_from(["same", "different", "case", "nested-copy"]))
    if how == "same":
        target.append((key, value))
    elif how == "different":
        other = Obj([("enabled", True)]) if isinstance(value, Obj) else draw(st.sampled_from([0, 1, 2, 3, True, "x", None]))
        target.insert(draw(st.integers(0, len(target))), (key, other))
    elif how == "case":
        target.append((key.upper(), value))
    else:
        target.append((key + "_copy", value))
    return "duplicate-keys", world, config


@st.composite
def hjson_style(draw):
    return Style(
        comments=tuple(draw(st.lists(st.sampled_from(["//", "#", "/**/"]), unique=True, max_size=3))),
        trailing_commas=draw(st.booleans()),
        unquoted_keys=draw(st.booleans()),
        quoteless_values=draw(st.booleans()),
        no_commas=draw(st.integers(0, 3)) == 0,
        quoteless_comma_trap=draw(st.integers(0, 4)) == 0,
        braceless_root=draw(st.integers(0, 5)) == 0,
    )


@st.composite
def hjson_case(draw):
    world = draw(st.integers(1, 16))
    config = draw(base_config())
    if draw(st.booleans()):
        config.get("zero_optimization").append(("offload_param", Obj([("device", draw(st.sampled_from(["cpu", "nvme", "none"]))),
                                                                        ("nvme_path", "/local_nvme")])))
    return "hjson-syntax", world, config


def ds_cases():
    return st.one_of(batch_case(), precision_case(), strict_case(), removed_case(), auto_case(), coercion_case(), duplicate_case(), hjson_case())


# ---- oracle 1: DeepSpeedConfig ------------------------------------------------------------------

# Rules whose errors DeepSpeedConfig raises itself.
DS_PARSE_RULES = {"DS001", "DS002", "DS101", "DS102", "DS201", "DS203", "DS205", "DS210", "DS211", "DS212", "DS213", "DS231",
                  "DS234", "DS236", "DS241", "DS242", "DS302"}
_PARSE_TIME_DS302 = ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")


def _ds_parse_time(diagnostic) -> bool:
    if diagnostic.code in ("DS234", "DS242"):  # the note names where DeepSpeed decides it
        return any("when it parses" in note for note in diagnostic.notes)
    if diagnostic.code == "DS302":  # only the batch keys fail while DeepSpeed parses; the rest later
        return diagnostic.message.startswith(_PARSE_TIME_DS302)
    return True


def _only(codes: set):
    return lambda record, info: set(record.dslint) <= codes and not record.raised


def _batch_values(info) -> list:
    config = to_python(info[0])
    return [config.get(k) for k in ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps") if isinstance(config, dict)]


def _wrong_case_auto(value) -> bool:
    if isinstance(value, dict):
        return any(_wrong_case_auto(v) for v in value.values())
    if isinstance(value, list):
        return any(_wrong_case_auto(v) for v in value)
    return isinstance(value, str) and value != "auto" and value.strip().lower() == "auto"


def _fraction_or_bool(value) -> bool:
    return isinstance(value, bool) or (isinstance(value, float) and not value.is_integer())


DS_DELIBERATE = {
    "Auto-outside-validation": Deliberate(
        '"Auto"/"AUTO" is an error anywhere; DeepSpeedConfig accepts it in values it does not validate '
        "(gradient_clipping, optimizer/scheduler params, string fields), which then fail later or mean nothing",
        "DS211",
        lambda record, info: record.dslint == ["DS211"] and _wrong_case_auto(to_python(info[0])),
    ),
    "fraction-or-bool-batch": Deliberate(
        "a fractional or boolean batch value is an error; DeepSpeedConfig checks no types and computes with it "
        "(True is 1), the data loader fails later",
        "DS102",
        lambda record, info: record.dslint == ["DS102"] and any(_fraction_or_bool(v) for v in _batch_values(info)),
    ),
}


@pytest.fixture(scope="module")
def ds_config_class():
    pytest.importorskip("deepspeed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from deepspeed.runtime import config as dsc
        from deepspeed.utils import logger
    logger.setLevel(logging.ERROR)

    def parse(path: Path, size: int):
        # deepspeed.comm itself is patched, so only for the duration of one parse: the
        # deepspeed.initialize oracle needs the real one.
        saved = dsc.dist.get_world_size, dsc.dist.get_rank
        dsc.dist.get_world_size = lambda *a, **k: size
        dsc.dist.get_rank = lambda *a, **k: 0
        try:
            with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                warnings.simplefilter("ignore")
                dsc.DeepSpeedConfig(str(path))
        except Exception as exc:  # noqa: BLE001 - any raise is a rejection
            return f"{type(exc).__name__}: {exc}"
        finally:
            dsc.dist.get_world_size, dsc.dist.get_rank = saved
        return None

    return parse


def test_deepspeed_config_oracle(ds_config_class, tmp_path_factory, request):
    work = _Workdir(tmp_path_factory.mktemp("ds-oracle"))
    engine = Engine(judged_as_installed(Settings(select=sorted(DS_PARSE_RULES), root=work.path)))
    verdicts = Verdicts("DeepSpeedConfig (deepspeed launcher)", DS_DELIBERATE)

    @settings(max_examples=DS_CASES, **HYPOTHESIS)
    @given(case=ds_cases(), style=st.one_of(st.just(Style()), st.just(Style()), hjson_style()))
    def run(case, style):
        category, world, config = case
        if category == "hjson-syntax" and not style.hjson:
            style = Style(comments=("//",), trailing_commas=True)
        text = render(config, style)
        work.write({"ds.json": text, "train.py": DEEPSPEED_LOOP, "run.sh": f"deepspeed --num_gpus {world} train.py --deepspeed --deepspeed_config ds.json\n"})
        raised = ds_config_class(work.path / "ds.json", world)
        result = engine.lint_paths([str(work.path)])
        errors = _errors(result, DS_PARSE_RULES, _ds_parse_time)
        verdicts.add(category, f"W={world} {style.describe()} {short(config)}", errors, raised, info=(config, style, world))

    try:
        run()
    finally:
        _report(request, verdicts)
    _assert_agreement(verdicts, DS_CASES * 9 // 10)


# ---- oracle 2: HF Trainer ------------------------------------------------------------------------

HF_RULES = {"DS001", "DS221", "DS250", "DS251", "DS301"}
HIDDEN = 64  # the tiny model's hidden size, for the "auto" ZeRO bucket sizes
STEPS = 1000  # num_training_steps


@st.composite
def hf_case(draw):
    world = draw(st.integers(1, 16))
    flags: list[str] = []
    bs = draw(st.sampled_from([None, 1, 2, 4, 8, 16]))
    gas = draw(st.sampled_from([None, None, 1, 2, 4]))
    lr = draw(st.sampled_from([None, None, "1e-5", "2e-5", "5e-5", "0.0001"]))
    decay = draw(st.sampled_from([None, None, "0.0", "0.1"]))
    clip = draw(st.sampled_from([None, None, "1.0", "0.5", "0", "1"]))
    betas = draw(st.sampled_from([None, None, None, ("0.9", "0.95")]))
    eps = draw(st.sampled_from([None, None, None, "1e-6"]))
    warmup = draw(st.sampled_from([None, None, None, "0", "10", "0.1", "1"]))
    precision = draw(st.sampled_from([[], [], ["--bf16"], ["--fp16"], ["--bf16", "True"], ["--bf16", "false"], ["--fp16", "true"], ["--bf16_full_eval"]]))
    for name, value in (("per_device_train_batch_size", bs), ("gradient_accumulation_steps", gas), ("learning_rate", lr),
                        ("weight_decay", decay), ("max_grad_norm", clip), ("adam_epsilon", eps), ("warmup_steps", warmup)):
        if value is not None:
            flags += [f"--{name}", str(value)]
    if betas:
        flags += ["--adam_beta1", betas[0], "--adam_beta2", betas[1]]
    flags += precision
    if draw(st.integers(0, 9)) == 0:
        flags += ["--auto_find_batch_size"]

    bs_eff, gas_eff = bs or 8, gas or 1
    lr_eff = float(lr) if lr else 5e-5
    # One value (the focus) may be anything; the others agree with the arguments, so that each
    # case sits next to one decision boundary.
    focus = draw(st.sampled_from(["mbs", "gas", "tbs", "clip", "lr", "betas", "eps", "decay", "sched_lr", "warmup", "fp16", "bf16",
                                  "stage", "zero_auto", "zero_section", "syntax", "none"]))
    missing = object()

    def choice(name, benign, other):
        return draw(st.sampled_from(list(benign) + (list(other) if name == focus else [])))

    config = Obj()
    for key, value in (
        ("train_micro_batch_size_per_gpu", choice("mbs", [missing, "auto", bs_eff], [float(bs_eff), str(bs_eff), bs_eff * 2, "Auto", 0])),
        ("gradient_accumulation_steps", choice("gas", [missing, "auto", gas_eff], [gas_eff + 1, str(gas_eff), float(gas_eff)])),
        ("train_batch_size", choice("tbs", [missing, "auto"], [world * bs_eff * gas_eff, world * bs_eff * gas_eff + world, bs_eff * gas_eff])),
        ("gradient_clipping", choice("clip", [missing, "auto", float(clip) if clip else 1.0], [1, 0.5, "1.0", 0])),
    ):
        if value is not missing:
            config.append((key, value))
    if draw(st.booleans()):
        params = Obj()
        for key, value in (("lr", choice("lr", [missing, "auto", lr_eff], [3e-4, str(lr_eff)])),
                           ("betas", choice("betas", [missing, "auto"], [[0.9, 0.999], [0.9, 0.95]])),
                           ("eps", choice("eps", [missing, "auto"], [1e-8, 1e-6])),
                           ("weight_decay", choice("decay", [missing, "auto", float(decay) if decay else 0.0], [0.1, 0]))):
            if value is not missing:
                params.append((key, value))
        config.append(("optimizer", Obj([("type", "AdamW"), ("params", params)])))
    if draw(st.booleans()):
        params = Obj([("warmup_min_lr", 0), ("warmup_max_lr", choice("sched_lr", ["auto", lr_eff], [1e-3])),
                      ("warmup_num_steps", choice("warmup", ["auto"], [1, 0, 10, 100, 1.0]))])
        config.append(("scheduler", Obj([("type", "WarmupLR"), ("params", params)])))
    for name in ("fp16", "bf16"):
        if draw(st.booleans()):
            config.append((name, Obj([("enabled", choice(name, ["auto"], [True, False, "true", 1, "Auto"]))])))
    if focus != "zero_section" or draw(st.booleans()):
        zero = Obj([("stage", choice("stage", [0, 1, 2, 3], ["auto", "3"]))])
        if focus == "zero_auto":
            for key in draw(st.lists(st.sampled_from(["reduce_bucket_size", "stage3_prefetch_bucket_size", "stage3_param_persistence_threshold",
                                                      "stage3_max_live_parameters", "sub_group_size", "allgather_bucket_size",
                                                      "prefetch_bucket_size", "stage3_gather_16bit_weights_on_model_save"]), min_size=1, max_size=2, unique=True)):
                zero.append((key, draw(st.sampled_from(["auto", "auto", 1000000]))))
        config.append(("zero_optimization", zero))
    style = draw(st.sampled_from([Style(comments=("//",)), Style(trailing_commas=True), Style(unquoted_keys=True)])) if focus == "syntax" else Style()
    return world, flags, config, style


@pytest.fixture(scope="module")
def hf_pipeline():
    pytest.importorskip("deepspeed")
    pytest.importorskip("accelerate")
    transformers = pytest.importorskip("transformers")
    from accelerate.utils import DeepSpeedPlugin
    from transformers import HfArgumentParser, TrainingArguments
    from transformers.integrations.deepspeed import HfTrainerDeepSpeedConfig, unset_hf_deepspeed_config

    transformers.logging.set_verbosity_error()
    parser = HfArgumentParser(TrainingArguments)
    model = SimpleNamespace(config=SimpleNamespace(hidden_size=HIDDEN))

    def run(path: Path, world: int, flags: list[str]):
        """What HF Trainer does with the config from TrainingArguments to accelerate's prepare()."""
        namespace = parser.parse_args(flags)
        args = SimpleNamespace(**vars(namespace), world_size=world)
        args.get_warmup_steps = lambda n: TrainingArguments.get_warmup_steps(args, n)
        args.mixed_precision = "fp16" if args.fp16 else ("bf16" if args.bf16 else "no")
        saved = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("ACCELERATE_")}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                # TrainingArguments.__post_init__ (training_args.py:1705-1715)
                hf = HfTrainerDeepSpeedConfig(str(path))
                hf.trainer_config_process(args)
                plugin = DeepSpeedPlugin(hf_ds_config=hf)
                # Accelerator(mixed_precision=args.mixed_precision) → AcceleratorState (state.py:975-981)
                plugin.set_mixed_precision(args.mixed_precision)
                if args.auto_find_batch_size:
                    if plugin.zero_stage == 3:  # Trainer.__init__ (trainer.py:898-906)
                        raise ValueError("`auto_find_batch_size` isn't supported yet with DeepSpeed Zero-3")
                    # Trainer._update_auto_batch_size → propagate_args_to_deepspeed(auto_find_batch_size=True)
                    hf = plugin.hf_ds_config = HfTrainerDeepSpeedConfig(hf.config)
                    plugin.deepspeed_config = hf.config
                    hf.trainer_config_process(args, True)
                # deepspeed_init (integrations/deepspeed.py:640)
                hf.trainer_config_finalize(args, model, STEPS)
                # Accelerator._prepare_deepspeed: every key still "auto" must be in config_kwargs (accelerator.py:2220-2345)
                kwargs = {"gradient_clipping": args.max_grad_norm, "zero_optimization.stage3_gather_16bit_weights_on_model_save": False,
                          "zero_optimization.reduce_bucket_size": HIDDEN * HIDDEN,
                          "zero_optimization.stage3_prefetch_bucket_size": int(0.9 * HIDDEN * HIDDEN),
                          "zero_optimization.stage3_param_persistence_threshold": 10 * HIDDEN}
                bs = hf.get_value("train_micro_batch_size_per_gpu")
                if bs is not None:
                    kwargs.update({"train_micro_batch_size_per_gpu": bs, "train_batch_size": bs * hf.get_value("gradient_accumulation_steps") * world})
                if "optimizer" in hf.config:
                    kwargs.update({"optimizer.params.lr": args.learning_rate, "optimizer.params.weight_decay": args.weight_decay})
                if "scheduler" in hf.config:
                    kwargs.update({"scheduler.params.warmup_min_lr": 0, "scheduler.params.warmup_max_lr": args.learning_rate,
                                   "scheduler.params.warmup_num_steps": max(1, args.get_warmup_steps(STEPS)),
                                   "scheduler.params.total_num_steps": STEPS})
                plugin.deepspeed_config_process(must_match=False, **kwargs)
        except Exception as exc:  # noqa: BLE001 - any raise is a rejection
            return f"{type(exc).__name__}: {exc}"
        finally:
            os.environ.update(saved)
            unset_hf_deepspeed_config()
        return None

    return run


def _warmup_ratio(flags: list[str]) -> bool:
    if "--warmup_steps" not in flags:
        return False
    value = float(flags[flags.index("--warmup_steps") + 1])
    return 0 < value < 1


HF_DELIBERATE = {
    "warmup-ratio": Deliberate(
        "with --warmup_steps below 1 (a ratio) HF compares warmup_num_steps with ceil(training steps × ratio); "
        "the training steps depend on the data set, which dslint does not see",
        "DS301",
        lambda record, info: not record.dslint and "warmup_num_steps" in (record.raised or "") and _warmup_ratio(info[1]),
    ),
}


def test_hf_trainer_oracle(hf_pipeline, tmp_path_factory, request):
    work = _Workdir(tmp_path_factory.mktemp("hf-oracle"))
    engine = Engine(judged_as_installed(Settings(select=sorted(HF_RULES), root=work.path)))
    verdicts = Verdicts("HF Trainer (torchrun ... --deepspeed)", HF_DELIBERATE)

    @settings(max_examples=HF_CASES, **HYPOTHESIS)
    @given(case=hf_case())
    @example(case=(8, ["--warmup_steps", "0.1"], Obj([("zero_optimization", Obj([("stage", 2)])), ("scheduler", Obj([
        ("type", "WarmupLR"), ("params", Obj([("warmup_num_steps", 10)]))]))]), Style()))  # the deliberate "warmup-ratio"
    def run(case):
        world, flags, config, style = case
        work.write({"ds.json": render(config, style), "train.py": HF_TRAINER,
                    "run.sh": f"torchrun --nproc_per_node {world} train.py --deepspeed ds.json {' '.join(flags)}\n"})
        raised = hf_pipeline(work.path / "ds.json", world, flags)
        errors = _errors(engine.lint_paths([str(work.path)]), HF_RULES)
        verdicts.add("hf", f"W={world} {' '.join(flags)} | {style.describe()} {short(config)}", errors, raised, info=(config, flags, world))

    try:
        run()
    finally:
        _report(request, verdicts)
    _assert_agreement(verdicts, HF_CASES * 9 // 10)


# ---- oracle 3: accelerate ------------------------------------------------------------------------

ACCELERATE_RULES = {"DS001", "DS250", "DS251", "DS309", "DS401"}
ACCELERATE_FIELDS = {
    "zero_stage": [0, 1, 2, 3], "gradient_accumulation_steps": [1, 4], "gradient_clipping": [1.0, 0.5],
    "offload_optimizer_device": ["none", "cpu"], "offload_param_device": ["none", "cpu"], "offload_optimizer_nvme_path": ["/nvme"],
    "offload_param_nvme_path": ["/nvme"], "zero3_init_flag": [True, False], "zero3_save_16bit_model": [True, False],
    # not accelerate's: dropped silently (a warning), and no part of the deepspeed_config_file check
    "stage3_gather_16bit_weights_on_model_save": [True], "zero_force_ds_cpu_optimizer": [False],
}


def _yaml(value) -> str:
    return json.dumps(value) if isinstance(value, str) else ("true" if value is True else "false" if value is False else str(value))


@st.composite
def accelerate_case(draw):
    processes = draw(st.integers(1, 16))
    use_file = draw(st.booleans())
    section = Obj()
    if use_file:
        section.append(("deepspeed_config_file", "ds.json"))
        extra = draw(st.sampled_from([[], [], ["zero3_init_flag"], None]))
        if extra is None:
            extra = draw(st.lists(st.sampled_from(sorted(ACCELERATE_FIELDS)), min_size=1, max_size=2, unique=True))
    else:
        extra = draw(st.lists(st.sampled_from(sorted(ACCELERATE_FIELDS)), max_size=4, unique=True))
    for key in extra:
        section.append((key, draw(st.sampled_from(ACCELERATE_FIELDS[key]))))
    precision = draw(st.sampled_from([None, None, "no", "'no'", "bf16", "fp16", '"fp16"']))
    lines = ["compute_environment: LOCAL_MACHINE", "debug: false", "distributed_type: DEEPSPEED", "deepspeed_config:"]
    lines += [f"  {key}: {_yaml(value)}" for key, value in section] or ["  {}"]
    if not section:
        lines[-1] = "deepspeed_config: {}"
        lines.pop(-2)
    lines += ["machine_rank: 0", "main_training_function: main", "num_machines: 1", f"num_processes: {processes}",
              "rdzv_backend: static", "same_network: true", "use_cpu: false"]
    if precision is not None:
        lines.append(f"mixed_precision: {precision}")
    cli = draw(st.sampled_from([[], [], [], ["--mixed_precision", "fp16"], ["--mixed_precision", "no"], ["--num_processes", "2"]]))
    config = None
    style = Style()
    if use_file:
        config = Obj([("train_micro_batch_size_per_gpu", draw(st.sampled_from(["auto", 4]))), ("gradient_accumulation_steps", draw(st.sampled_from(["auto", 1, 4])))])
        for name in ("fp16", "bf16"):
            if draw(st.booleans()):
                config.append((name, Obj([("enabled", draw(st.sampled_from(["auto", True, False, "true", "false", 1])))])))
        if draw(st.sampled_from([True] * 7 + [False])):
            config.append(("zero_optimization", Obj([("stage", draw(st.sampled_from([0, 1, 2, 3, "auto"])))])))
        style = draw(st.sampled_from([Style()] * 9 + [Style(comments=("//",)), Style(trailing_commas=True)]))
    return processes, "\n".join(lines) + "\n", cli, config, style


@pytest.fixture(scope="module")
def accelerate_pipeline():
    pytest.importorskip("deepspeed")
    pytest.importorskip("accelerate")
    from accelerate.commands.launch import _validate_launch_command, launch_command_parser
    from accelerate.utils import DeepSpeedPlugin
    from accelerate.utils.launch import prepare_deepspeed_cmd_env

    parser = launch_command_parser()

    def run(work: Path, cli: list[str]):
        """`accelerate launch --config_file acc.yaml ... train.py` up to the DeepSpeedPlugin the script's Accelerator builds."""
        cwd, environ = os.getcwd(), dict(os.environ)
        os.chdir(work)
        try:
            for key in [k for k in os.environ if k.startswith("ACCELERATE_")]:
                del os.environ[key]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                args = parser.parse_args(["--config_file", "acc.yaml", *cli, "train.py"])
                args, defaults, mp_from_config = _validate_launch_command(args)  # commands/launch.py:1391-1398
                assert args.use_deepspeed
                fields = list(defaults.deepspeed_config.keys()) if defaults else []
                if mp_from_config:
                    fields.append("mixed_precision")
                args.deepspeed_fields_from_accelerate_config = ",".join(fields)
                _, env = prepare_deepspeed_cmd_env(args)
                os.environ.clear()
                os.environ.update(env)
                plugin = DeepSpeedPlugin()  # Accelerator() in the launched script
                plugin.set_mixed_precision(env["ACCELERATE_MIXED_PRECISION"])  # AcceleratorState (state.py:975-981)
        except Exception as exc:  # noqa: BLE001 - any raise is a rejection
            return f"{type(exc).__name__}: {exc}"
        finally:
            os.chdir(cwd)
            os.environ.clear()
            os.environ.update(environ)
        return None

    return run


ACCELERATE_DELIBERATE = {
    "file-judged-alone": Deliberate(
        "DS309 judges the accelerate config on its own: deepspeed_config_file with mixed_precision fails every launch "
        "except one that passes --mixed_precision on the command line",
        "DS309",
        lambda record, info: record.dslint == ["DS309"] and "--mixed_precision" in info[1] and "\nmixed_precision:" in info[2],
    ),
}


def test_accelerate_oracle(accelerate_pipeline, tmp_path_factory, request):
    work = _Workdir(tmp_path_factory.mktemp("accelerate-oracle"))
    engine = Engine(judged_as_installed(Settings(select=sorted(ACCELERATE_RULES), root=work.path)))
    verdicts = Verdicts("accelerate (accelerate launch --config_file)", ACCELERATE_DELIBERATE)

    @settings(max_examples=ACCELERATE_CASES, **HYPOTHESIS)
    @given(case=accelerate_case())
    def run(case):
        processes, yaml_text, cli, config, style = case
        files = {"acc.yaml": yaml_text, "train.py": ACCELERATE_LOOP, "run.sh": f"accelerate launch --config_file acc.yaml {' '.join(cli)} train.py\n"}
        if config is not None:
            files["ds.json"] = render(config, style)
        work.write(files)
        raised = accelerate_pipeline(work.path, cli)
        errors = _errors(engine.lint_paths([str(work.path)]), ACCELERATE_RULES)
        shown = " ".join(line.strip() for line in yaml_text.splitlines() if line.startswith(("  ", "mixed", "deepspeed_config:")))
        verdicts.add("accelerate", f"{' '.join(cli)} | {shown} | {style.describe()} {short(config) if config is not None else '-'}", errors, raised,
                     info=(config, cli, yaml_text))

    try:
        run()
    finally:
        _report(request, verdicts)
    _assert_agreement(verdicts, ACCELERATE_CASES * 9 // 10)


# ---- oracle 4: deepspeed.initialize on CPU ---------------------------------------------------------

INIT_RULES = DS_PARSE_RULES - {"DS302"} | {"DS230", "DS232", "DS233", "DS234", "DS235", "DS237", "DS238", "DS239", "DS240", "DS242",
                                          "DS243", "DS244", "DS245", "DS246", "DS247", "DS225"}
ADAMW = Obj([("type", "AdamW"), ("params", Obj([("lr", 0.001), ("torch_adam", True)]))])  # torch's AdamW: no op to compile


@st.composite
def init_case(draw):
    kind = draw(st.sampled_from(["allgather", "prescale", "grad-norm", "optimizer", "max-grad-norm", "scheduler", "legacy-stage1",
                                 "managed-accumulation", "param-dtype", "muon"]))
    config = Obj([("train_micro_batch_size_per_gpu", 1), ("optimizer", ADAMW)])
    zero = Obj([("stage", draw(st.sampled_from([1, 2])))])
    if kind == "allgather":
        zero.append(("allgather_bucket_size", draw(st.sampled_from([500000000, 500000001, 3]))))
    elif kind == "prescale":
        zero.set("stage", draw(st.sampled_from([1, 2, 3])))
        key, value = draw(st.sampled_from([("prescale_gradients", True), ("prescale_gradients", False), ("gradient_predivide_factor", 2.0),
                                           ("gradient_predivide_factor", 1.0)]))
        config.append((key, value))
    elif kind == "grad-norm":
        zero.append(("compute_grad_norm", False))
        clip = draw(st.sampled_from([None, 0, 0.0, 1.0]))
        if clip is not None:
            config.append(("gradient_clipping", clip))
    elif kind == "optimizer":
        zero.set("stage", 0)
        name = draw(st.sampled_from(["OneBitAdam", "FusedAdam", "sgd", "SGD", "RMSprop", "rmsprop"]))
        config.set("optimizer", Obj([("type", name), ("params", Obj([("lr", 0.01)]))]))
    elif kind == "max-grad-norm":
        params = Obj([("lr", 0.001), ("torch_adam", True)])
        if draw(st.booleans()):
            params.append(("max_grad_norm", 1.0))
        config.set("optimizer", Obj([("type", "AdamW"), ("params", params)]))
    elif kind == "scheduler":
        name, params = draw(st.sampled_from([
            ("WarmupLR", Obj([("warmup_num_steps", 0)])), ("WarmupLR", Obj([("warmup_num_steps", 10)])),
            ("CosineWarmup", Obj([("warmup_num_steps", 10)])), ("WarmupCosineLR", Obj([("warmup_max_lr", 0.001), ("total_num_steps", 100)])),
            ("WarmupCosineLR", Obj([("total_num_steps", 100), ("warmup_num_steps", 10)])), ("WarmupDecayLR", Obj([("warmup_num_steps", 10)])),
            ("StepLR", Obj([("step_size", 10)]))]))
        zero.set("stage", draw(st.sampled_from([0, 1, 2])))
        config.append(("scheduler", Obj([("type", name), ("params", params)])))
    elif kind == "legacy-stage1":
        zero.set("stage", 1)
        zero.append(("legacy_stage1", draw(st.booleans())))
    elif kind == "managed-accumulation":
        zero.set("stage", draw(st.sampled_from([2, 3])))
        config.append(("managed_gradient_accumulation", False))
    elif kind == "param-dtype":
        config.append(("data_types", Obj([("param_dtype", draw(st.sampled_from(["fp32", "bf16"])))])))
    elif kind == "muon":
        zero.set("stage", draw(st.sampled_from([2, 3])))
        reduce_scatter = draw(st.sampled_from([None, True, False]))
        if reduce_scatter is not None:
            zero.append(("reduce_scatter", reduce_scatter))
        config.set("optimizer", Obj([("type", draw(st.sampled_from(["Muon", "muon"]))), ("params", Obj([("lr", 0.02)]))]))
    config.append(("zero_optimization", zero))
    return kind, config


@pytest.fixture(scope="session")
def deepspeed_initialize():
    """`deepspeed.initialize` on CPU: gloo, one rank, a tiny model; the process group is set up once."""
    pytest.importorskip("deepspeed")
    import socket

    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import importlib

        import deepspeed
        from deepspeed.utils import logger

        ds_comm_torch = importlib.import_module("deepspeed.comm.torch")  # not `import ... as`: deepspeed.comm.torch is also torch
    logger.setLevel(logging.ERROR)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    saved = {k: os.environ.get(k) for k in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK")}
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK="0", WORLD_SIZE="1", LOCAL_RANK="0")
    build_shm_op = ds_comm_torch.build_shm_op
    ds_comm_torch.build_shm_op = lambda: None  # a shared-memory all-reduce for many CPU ranks: a C++ build, useless with one
    started = not torch.distributed.is_initialized()
    with contextlib.redirect_stdout(io.StringIO()):
        deepspeed.init_distributed(dist_backend="gloo")

    def run(config: dict):
        model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 2))
        try:
            with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                warnings.simplefilter("ignore")
                deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
        except Exception as exc:  # noqa: BLE001 - any raise is a rejection
            return f"{type(exc).__name__}: {exc}"
        return None

    yield run
    ds_comm_torch.build_shm_op = build_shm_op
    if started and torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


INIT_DELIBERATE = {}


def test_deepspeed_initialize_oracle(deepspeed_initialize, tmp_path_factory, request):
    work = _Workdir(tmp_path_factory.mktemp("init-oracle"))
    engine = Engine(judged_as_installed(Settings(select=sorted(INIT_RULES), root=work.path)))
    verdicts = Verdicts("deepspeed.initialize (CPU, gloo, 1 rank)", INIT_DELIBERATE)

    @settings(max_examples=INIT_CASES, **HYPOTHESIS)
    @given(case=init_case())
    def run(case):
        kind, config = case
        work.write({"ds.json": render(config), "train.py": DEEPSPEED_LOOP, "run.sh": "deepspeed --num_gpus 1 train.py --deepspeed --deepspeed_config ds.json\n"})
        raised = deepspeed_initialize(to_python(config))
        errors = _errors(engine.lint_paths([str(work.path)]), INIT_RULES)
        verdicts.add(kind, short(config), errors, raised, info=config)

    try:
        run()
    finally:
        _report(request, verdicts)
    _assert_agreement(verdicts, INIT_CASES * 2 // 3)
