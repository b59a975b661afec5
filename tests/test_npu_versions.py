"""Version verdicts of the Ascend NPU rules (dslint/rules/npu_versions.py).

``verdict`` turns the version in use (exact, a range, or unknown) and the failing ranges into
fails / may / ok / unknown; the oracle tests check the facts against the installed packages.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from dslint.rules.npu_versions import FLASH_ATTENTION_2_ON_NPU, NVME_ON_NPU, verdict
from dslint.versions import VersionInfo


def info(spec: str, version: str, exact: bool = True, upper: str | None = None) -> VersionInfo:
    return VersionInfo("transformers", version, spec, "test", "pin", exact, upper)


@pytest.mark.parametrize(
    "pinned,expected",
    [
        (info("==4.45.2", "4.45.2"), "fails"),
        (info("==4.51.0", "4.51.0"), "ok"),
        (info("==4.53.3", "4.53.3"), "ok"),
        (info("==4.54.0", "4.54.0"), "fails"),
        (info("==4.55.4", "4.55.4"), "fails"),
        (info("==4.56.0", "4.56.0"), "ok"),
        (info("==5.23.0", "5.23.0"), "ok"),
        (info(">=4.40,<4.49", "4.40", False, "4.49"), "fails"),  # every allowed version fails
        (info(">=4.50,<4.53", "4.50", False, "4.53"), "may"),
        (info(">=4.52,<4.54", "4.52", False, "4.54"), "ok"),
        (info(">=4.52", "4.52", False, None), "may"),  # 4.54 and 4.55 are allowed
        (info(">=4.56", "4.56", False, None), "ok"),
        (None, "unknown"),
    ],
)
def test_flash_attention_2_verdict(pinned, expected):
    assert verdict(pinned, FLASH_ATTENTION_2_ON_NPU)[0] == expected


@pytest.mark.parametrize(
    "version,expected",
    [("0.14.4", "ok"), ("0.15.0", "fails"), ("0.16.9", "fails"), ("0.18.7", "fails"), ("0.18.8", "ok"), ("0.19.8", "ok")],
)
def test_nvme_verdict(version, expected):
    assert verdict(info(f"=={version}", version), NVME_ON_NPU)[0] == expected


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
