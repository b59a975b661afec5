"""Engine-init refusals against DeepSpeed itself: dslint reports an error for a release iff that
release's `DeepSpeedEngine.__init__` refuses the config.

- the installed DeepSpeed: its own method is called with a stand-in engine, and stopped (by a
  patched `groups._init_tp_mesh_device`) right after the place where a refusal would be;
- every release `python -m dslint.schemagen.generations --prepare DIR` downloaded: the method's
  source in the sdist says whether that release refuses (skipped without the downloads).
"""

from __future__ import annotations

import ast
import json
import tarfile
import types
from pathlib import Path

import pytest

from dslint.config import Setting, Settings
from dslint.diagnostics import Severity
from dslint.run.engine import Engine
from oracle_support import judged_as_installed, prepared_downloads

pytestmark = pytest.mark.oracle

AUTOTP_ZERO3 = {"train_micro_batch_size_per_gpu": 1, "tensor_parallel": {"autotp_size": 2}, "zero_optimization": {"stage": 3}}


class _Passed(Exception):
    """Raised where DeepSpeed goes on to build the tensor-parallel mesh: nothing refused the config."""


def _codes(settings: Settings, config: dict, severity=Severity.ERROR) -> list[str]:
    result = Engine(settings).lint_bytes("ds_config.json", json.dumps(config, indent=2).encode())
    assert not result.internal_errors, result.internal_errors
    return [d.code for d in result.diagnostics if d.severity == severity]


def test_autotp_zero3_as_the_installed_deepspeed(tmp_path):
    pytest.importorskip("deepspeed")
    from deepspeed.runtime.engine import DeepSpeedEngine
    from deepspeed.utils import groups

    stand_in = types.SimpleNamespace(
        zero_optimization_stage=lambda: 3, autotp_size=lambda: 2, _set_client_model=lambda model: None,
        client_optimizer=None, optimizer_name=lambda: None)
    saved = groups._init_tp_mesh_device

    def stop(*args, **kwargs):
        raise _Passed

    groups._init_tp_mesh_device = stop
    try:
        DeepSpeedEngine._configure_tensor_parallel_states(stand_in, model=None)
    except _Passed:
        refused = None
    except (AssertionError, NotImplementedError) as exc:
        refused = str(exc)
    finally:
        groups._init_tp_mesh_device = saved
    errors = _codes(judged_as_installed(Settings(select=["DS224"], root=tmp_path)), AUTOTP_ZERO3)
    assert bool(errors) == bool(refused), f"DeepSpeed refuses: {refused!r}; dslint errors: {errors}"


def _refuses_autotp_zero3(sdist: Path) -> bool:
    """Does the release's `_configure_tensor_parallel_states` assert or raise on the ZeRO stage?"""
    with tarfile.open(sdist) as archive:
        member = next(m for m in archive.getmembers() if m.name.endswith("/deepspeed/runtime/engine.py"))
        source = archive.extractfile(member).read().decode("utf-8")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name == "_configure_tensor_parallel_states":
            for inner in ast.walk(node):
                test = inner.test if isinstance(inner, (ast.Assert, ast.If)) else None
                refuses = isinstance(inner, ast.Assert) or any(isinstance(n, ast.Raise) for n in getattr(inner, "body", ()))
                if test is not None and refuses and "zero_optimization_stage" in ast.unparse(test):
                    return True
    return False


def test_autotp_zero3_in_every_downloaded_release(tmp_path):
    from dslint.schemagen.generations import DEEPSPEED_SDISTS

    folder = prepared_downloads(DEEPSPEED_SDISTS, "deepspeed-*.tar.gz", "the DeepSpeed sdists")
    wrong = []
    for sdist in sorted(folder.glob("deepspeed-*.tar.gz")):
        version = sdist.name[len("deepspeed-"):-len(".tar.gz")]
        settings = Settings(select=["DS224"], root=tmp_path)
        settings.deepspeed_version = Setting(version, "the release under test")
        errors = _codes(settings, AUTOTP_ZERO3)
        if bool(errors) != _refuses_autotp_zero3(sdist):
            wrong.append((version, errors))
    assert wrong == []
