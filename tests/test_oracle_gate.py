"""With DSLINT_REQUIRE_ORACLES=1 (as CI sets it), a skipped oracle test fails the run."""

import shutil
from pathlib import Path

pytest_plugins = ["pytester"]

CASE = """
import pytest

@pytest.mark.oracle
def test_needs_deepspeed():
    pytest.importorskip("a_package_that_is_not_installed")

def test_plain():
    pytest.skip("ordinary skip")
"""


def _run(pytester, monkeypatch, required: bool):
    shutil.copy(Path(__file__).with_name("conftest.py"), pytester.path / "conftest.py")
    pytester.makeini("[pytest]\nmarkers =\n    oracle: needs the real libraries\n")
    pytester.makepyfile(test_case=CASE)
    monkeypatch.setenv("DSLINT_REQUIRE_ORACLES", "1" if required else "0")
    return pytester.runpytest("-p", "no:cacheprovider")


def test_oracle_skip_fails_when_required(pytester, monkeypatch):
    _run(pytester, monkeypatch, required=True).assert_outcomes(failed=1, skipped=1)


def test_oracle_skip_is_a_skip_otherwise(pytester, monkeypatch):
    _run(pytester, monkeypatch, required=False).assert_outcomes(skipped=2)
