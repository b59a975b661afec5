"""The project's own code passes ruff with the settings in pyproject.toml, so that every `# noqa`
comment names a check that runs (ruff's RUF100 reports one that suppresses nothing)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing():
    run = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "dslint", "tests", "benchmarks"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
