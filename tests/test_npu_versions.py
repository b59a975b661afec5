"""Version verdicts of the Ascend NPU rules (dslint/rules/npu_versions.py).

``judge`` takes the versions a launch may run with (an exact version, a range, or every known
release) and the failing ranges; the oracle tests check the facts against the installed packages.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from dslint.config import Setting, Settings
from dslint.rule import Context
from dslint.rules._npu_releases import FLASH_ATTENTION_2_ON_NPU, judge
from dslint.rules.npu_versions import NVME_ON_NPU
from dslint.evidence.versions import SETTINGS


def outcome(package: str, spec: str | None, broken) -> str:
    """fails (every allowed version fails), may (some do), ok (none does)."""
    settings = Settings()
    if spec is not None:
        setattr(settings, SETTINGS[package], Setting(spec, "the test"))
    verdict, hit = judge(package, None, Context(settings=settings), None, broken)
    if hit is None:
        return "ok"
    return "fails" if verdict.everywhere else "may"


@pytest.mark.parametrize(
    "spec,expected",
    [
        ("4.45.2", "fails"),
        ("4.51.0", "ok"),
        ("4.53.3", "ok"),
        ("4.54.0", "fails"),
        ("4.55.4", "fails"),
        ("4.56.0", "ok"),
        ("5.23.0", "ok"),
        (">=4.40,<4.49", "fails"),  # every allowed version fails
        (">=4.50,<4.53", "may"),
        (">=4.52,<4.54", "ok"),
        (">=4.52", "may"),  # 4.54 and 4.55 are allowed
        (">=4.56", "ok"),
        (None, "may"),  # nothing pins it: every known release, some of which fail
    ],
)
def test_flash_attention_2_verdict(spec, expected):
    assert outcome("transformers", spec, FLASH_ATTENTION_2_ON_NPU) == expected


@pytest.mark.parametrize(
    "version,expected",
    [("0.14.4", "ok"), ("0.15.0", "fails"), ("0.16.9", "fails"), ("0.18.7", "fails"), ("0.18.8", "ok"), ("0.19.8", "ok")],
)
def test_nvme_verdict(version, expected):
    assert outcome("deepspeed", version, NVME_ON_NPU) == expected


@pytest.mark.oracle
def test_installed_deepspeed_builds_the_npu_io_handle():
    """DeepSpeed 0.19.8 (installed) is past the fix: its NPU async_io builder lists the I/O handle source."""
    spec = importlib.util.find_spec("deepspeed")
    if spec is None or spec.origin is None:
        pytest.skip("deepspeed is not installed")
    builder = Path(spec.origin).parent / "ops" / "op_builder" / "npu" / "async_io.py"
    sources = re.findall(r"'(csrc/[^']+)'", builder.read_text(encoding="utf-8"))
    assert "csrc/aio/py_lib/deepspeed_py_io_handle.cpp" in sources


@pytest.mark.oracle
def test_installed_transformers_routes_flash_attention_2_to_torch_npu():
    spec = importlib.util.find_spec("transformers")
    if spec is None or spec.origin is None:
        pytest.skip("transformers is not installed")
    text = (Path(spec.origin).parent / "modeling_flash_attention_utils.py").read_text(encoding="utf-8")
    assert "Detect using FlashAttention2 on Ascend NPU." in text and "npu_flash_attn_func as flash_attn_func" in text
