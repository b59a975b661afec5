"""``dslint schema [NAME]``: print a JSON Schema shipped in schemas/, or list them.

That an installed (non-editable) dslint carries the schemas too is checked by the slow
test_integrations.py::test_action_installs_a_working_dslint, which pip-installs a snapshot.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted((ROOT / "schemas").glob("*.schema.json"))


def dslint(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dslint", *args], cwd=cwd, capture_output=True, timeout=60)


def test_schemas_are_shipped():
    assert SHIPPED, "schemas/ holds no *.schema.json"


def test_schema_lists_the_shipped_schemas(tmp_path):
    run = dslint(tmp_path, "schema")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.decode().splitlines()
    assert [line.split()[0] for line in lines] == [p.name[: -len(".schema.json")] for p in SHIPPED]
    assert [Path(line.split(maxsplit=1)[1]) for line in lines] == SHIPPED


def test_schema_prints_a_schema_exactly(tmp_path):
    for path in SHIPPED:
        name = path.name[: -len(".schema.json")]
        for spelling in (name, path.name):
            run = dslint(tmp_path, "schema", spelling)
            assert run.returncode == 0, run.stderr
            assert run.stdout == path.read_bytes()
            assert isinstance(json.loads(run.stdout), dict)


def test_unknown_schema_is_a_usage_error(tmp_path):
    run = dslint(tmp_path, "schema", "no-such-schema")
    assert run.returncode == 2
    assert b"no schema named 'no-such-schema' (available: " in run.stderr
