"""DS2xx rules beyond the fixtures: behaviour that depends on the consumer, the static name lists,
the rule pages, and that linting never imports deepspeed or torch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dslint.config import Setting, Settings
from dslint.diagnostics import Severity
from dslint.run.engine import Engine
from dslint.rule import load_rules
from dslint.rules.deepspeed_engine import _names as deepspeed_engine

ROOT = Path(__file__).resolve().parents[1]


def _lint(config: dict | str, consumer: str | None, select: list[str], monkeypatch, version: str = "0.19.8") -> list:
    """Lint one DeepSpeed config as if launch linking had found ``consumer`` for it."""
    original = Engine.deepspeed_uses

    def with_consumer(self, *args, **kwargs):
        uses = original(self, *args, **kwargs)
        for use in uses:
            use.consumer = consumer
        return uses

    monkeypatch.setattr(Engine, "deepspeed_uses", with_consumer)
    settings = Settings(select=select, root=Path.cwd())
    # One DeepSpeed release, so that only the consumer decides the severity here (versions: test_versions.py)
    settings.deepspeed_version = Setting(version, "the test")
    engine = Engine(settings)
    text = config if isinstance(config, str) else json.dumps(config, indent=2)
    result = engine.lint_bytes("ds_config.json", text.encode())
    assert not result.internal_errors, result.internal_errors
    return result.diagnostics


def _severities(diagnostics) -> list[str]:
    return [d.severity.label for d in diagnostics]


OFFLOAD = {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}
OFFLOAD_PLAIN = {"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}
LEGACY_OFFLOAD = {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2, "cpu_offload": True}}


# None: no launch reaches the config; its "auto" values say HF Trainer or accelerate read it, and they
# convert the optimizer. A plain deepspeed.initialize loop fails only when its code is seen to pass an
# optimizer (tests/rules/DS230.yaml); here no program was read: nothing to say.
@pytest.mark.parametrize("consumer,expected", [("hf", []), ("accelerate", []), ("swift", []), ("llamafactory", []),
                                               (None, []), ("deepspeed", []), ("megatron", [])])
def test_offload_with_client_optimizer_depends_on_consumer(consumer, expected, monkeypatch):
    # accelerate converts the torch optimizer to DeepSpeedCPUAdam when it sees offload_optimizer
    assert _severities(_lint(OFFLOAD, consumer, ["DS230"], monkeypatch)) == expected


@pytest.mark.parametrize("consumer,expected", [("hf", ["error"]), ("accelerate", ["error"]), (None, ["warning"])])
def test_legacy_cpu_offload_is_not_converted_by_accelerate(consumer, expected, monkeypatch):
    assert _severities(_lint(LEGACY_OFFLOAD, consumer, ["DS230"], monkeypatch)) == expected


def test_offload_message_names_the_consumer(monkeypatch):
    [found] = _lint(LEGACY_OFFLOAD, "swift", ["DS230"], monkeypatch)
    assert "ms-swift passes its own torch optimizer" in found.notes[0]


UNFILLED = {"zero_optimization": {"stage": 3, "stage3_max_live_parameters": "auto", "stage3_prefetch_bucket_size": "auto"}}


@pytest.mark.parametrize("consumer,expected", [("hf", ["error"]), ("accelerate", ["error"]), (None, ["warning"]),
                                               ("deepspeed", []), ("megatron", [])])
def test_unfilled_auto_depends_on_consumer(consumer, expected, monkeypatch):
    assert _severities(_lint(UNFILLED, consumer, ["DS221"], monkeypatch)) == expected


# These uses have no launch: the config's own keys must show training (gradient accumulation here).
@pytest.mark.parametrize("consumer,config,expected", [
    ("hf", {"zero_optimization": {"stage": 3}, "gradient_accumulation_steps": 4}, ["warning"]),  # no "auto" needed once the consumer is known
    ("hf", {"zero_optimization": {"stage": 3}}, []),  # ZeRO-3 alone is an inference config's too
    ("deepspeed", {"zero_optimization": {"stage": 3}, "train_batch_size": "auto"}, []),
    (None, {"zero_optimization": {"stage": 3}}, []),
    ("accelerate", {"zero_optimization": {"stage": 3, "stage3_gather_16bit_weights_on_model_save": "auto"}}, []),
])
def test_16bit_save_depends_on_consumer(consumer, config, expected, monkeypatch):
    assert _severities(_lint(config, consumer, ["DS223"], monkeypatch)) == expected


@pytest.mark.parametrize("consumer,expected", [("hf", ["error"]), ("accelerate", ["error"]), (None, []), ("deepspeed", [])])
def test_zero_section_required_under_hf(consumer, expected, monkeypatch):
    # no launch: gradient clipping makes it a training config by its own keys
    found = _lint({"train_micro_batch_size_per_gpu": "auto", "gradient_clipping": "auto", "bf16": {"enabled": "auto"}}, consumer,
                  ["DS250"], monkeypatch)
    assert _severities(found) == expected


def test_zero_section_fix_inserts_stage_0(monkeypatch):
    [found] = _lint('{\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_clipping": 1.0\n}\n', "hf", ["DS250"], monkeypatch)
    assert found.fix.applicability == "safe"
    [edit] = found.fix.edits
    assert edit.content == '"zero_optimization": {"stage": 0},\n  '


HJSON = '{\n  "train_micro_batch_size_per_gpu": 4, // four per GPU\n  "zero_optimization": {"stage": 2},\n}\n'


@pytest.mark.parametrize("consumer,expected", [("hf", ["error"]), ("swift", ["error"]), ("llamafactory", ["error"]),
                                               (None, []), ("deepspeed", []), ("megatron", [])])
def test_hjson_syntax_only_for_json_readers(consumer, expected, monkeypatch):
    found = _lint(HJSON, consumer, ["DS251"], monkeypatch)
    assert _severities(found) == expected
    if found:
        line, column = found[0].span.source.position(found[0].span.start)
        assert (line, column) == (2, 40)
        assert "Python's json module" in found[0].message


FLOAT_WARMUP = '{"scheduler": {"type": "WarmupLR", "params": {"warmup_num_steps": 1e3}}, "zero_optimization": {"stage": 0}}'


# None without "auto": nobody is known to build the scheduler (the code may pass its own)
@pytest.mark.parametrize("consumer,expected", [("hf", ["error"]), (None, []), ("deepspeed", [])])
def test_float_warmup_depends_on_the_json_reader(consumer, expected, monkeypatch):
    assert _severities(_lint(FLOAT_WARMUP, consumer, ["DS239"], monkeypatch)) == expected


@pytest.mark.parametrize("code,config", [
    ("DS237", {"optimizer": {"type": "AdamW", "params": {"max_grad_norm": 1.0}}}),
    ("DS238", {"optimizer": {"type": "OneBitAdam", "params": {}}}),
    ("DS239", {"scheduler": {"type": "CosineWarmup", "params": {}}}),
])
def test_optimizer_block_errors_only_when_deepspeed_builds_it(code, config, monkeypatch):
    # Megatron passes its own; a plain loop no program read of shows may pass one; unknown: nothing to say
    for consumer in ("megatron", "deepspeed", None):
        assert _severities(_lint(config, consumer, [code], monkeypatch)) == [], consumer
    for consumer in ("hf", "accelerate"):  # they pass no optimizer when the block exists
        assert _severities(_lint(config, consumer, [code], monkeypatch)) == ["error"], consumer
    with_auto = {**config, "train_micro_batch_size_per_gpu": "auto"}  # only HF Trainer or accelerate fill "auto"
    assert _severities(_lint(with_auto, None, [code], monkeypatch)) == ["warning"]


def test_offload_in_a_config_without_auto_and_no_launch_says_nothing(monkeypatch):
    # whether the code passes an optimizer of its own decides it, and nothing shows the code
    assert _severities(_lint(OFFLOAD_PLAIN, None, ["DS230"], monkeypatch)) == []


def test_one_bit_optimizers_are_info_when_older_releases_may_run(monkeypatch):
    config = {"optimizer": {"type": "OneBitAdam", "params": {}}}
    assert _severities(_lint(config, "hf", ["DS238"], monkeypatch, version=">=0.18")) == ["info"]
    assert _lint(config, "hf", ["DS238"], monkeypatch, version="0.19.6") == []


def test_severity_setting_wins_over_a_findings_own():
    settings = Settings(select=["DS230"], root=Path.cwd(), severity={"DS230": Severity.INFO})
    result = Engine(settings).lint_bytes("ds_config.json", json.dumps(LEGACY_OFFLOAD).encode())
    assert _severities(result.diagnostics) == ["info"]


# ---- static lists -----------------------------------------------------------------------------


def test_torch_optimizer_list_matches_installed_torch():
    torch_optim = pytest.importorskip("torch.optim")
    import inspect

    classes = {name for name, value in vars(torch_optim).items()
               if inspect.isclass(value) and issubclass(value, torch_optim.Optimizer) and value is not torch_optim.Optimizer}
    assert set(deepspeed_engine.TORCH_OPTIMIZERS) == classes


def test_torch_scheduler_list_matches_installed_torch():
    lr_scheduler = pytest.importorskip("torch.optim.lr_scheduler")
    import inspect

    classes = {name for name, value in vars(lr_scheduler).items()
               if inspect.isclass(value) and not name.startswith("_") and value is not lr_scheduler.LRScheduler
               and (issubclass(value, lr_scheduler.LRScheduler) or name == "ReduceLROnPlateau")}
    assert set(deepspeed_engine.TORCH_SCHEDULERS) == classes


@pytest.mark.oracle
def test_deepspeed_names_match_installed_deepspeed():
    pytest.importorskip("deepspeed")
    import inspect

    from deepspeed.runtime import config as dsc
    from deepspeed.runtime import lr_schedules

    assert set(deepspeed_engine.DEEPSPEED_OPTIMIZERS) == set(dsc.DEEPSPEED_OPTIMIZERS)
    for name, (required, optional) in deepspeed_engine.DEEPSPEED_SCHEDULERS.items():
        assert name in lr_schedules.VALID_LR_SCHEDULES
        params = inspect.signature(getattr(lr_schedules, name).__init__).parameters
        names = [p for p in params if p not in ("self", "optimizer")]
        assert set(names) == set(required) | set(optional), name
        assert {p for p in names if params[p].default is inspect.Parameter.empty} == set(required), name
    assert set(deepspeed_engine.DEEPSPEED_SCHEDULERS) == set(lr_schedules.VALID_LR_SCHEDULES)


# ---- rule pages and imports -----------------------------------------------------------------------


def test_every_ds2_rule_has_a_full_page():
    rules, errors = load_rules()
    assert not errors
    ds2 = [r for r in rules if r.code.startswith("DS2")]
    assert len(ds2) >= 30
    for found in ds2:
        for heading in ("## What it checks", "## Why it matters", "## Example", "## Fix safety"):
            assert heading in found.doc, (found.code, heading)
        assert (ROOT / "tests" / "rules" / f"{found.code}.yaml").is_file(), found.code


def test_linting_imports_neither_deepspeed_nor_torch(tmp_path):
    config = tmp_path / "ds.json"
    config.write_text(json.dumps({**OFFLOAD, "optimizer": {"type": "sgd"}, "scheduler": {"type": "WarmupLR"}}), encoding="utf-8")
    code = (
        "import sys\n"
        "from dslint.cli import main\n"
        "try:\n"
        f"    main(['check', {str(config)!r}, '--exit-zero'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "assert 'deepspeed' not in sys.modules and 'torch' not in sys.modules and 'pydantic' not in sys.modules, "
        "[m for m in ('deepspeed', 'torch', 'pydantic') if m in sys.modules]\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
