"""Version detection (dslint.versions) on small fixture repositories, and the settings that win."""

from __future__ import annotations

from pathlib import Path

import pytest

from dslint.config import ConfigError, Setting, Settings, apply_table
from dslint.versions import compare, parse_version, repository_pins, version_of, clear_cache


@pytest.fixture(autouse=True)
def _fresh_cache():
    clear_cache()
    yield
    clear_cache()


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / ".git").mkdir(parents=True)
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def test_requirements_exact_pin(tmp_path):
    root = _repo(tmp_path, {"requirements.txt": "torch>=2\ntransformers==4.45.2  # pinned\nms-swift[llm]==3.12.6\n",
                            "configs/sft.yaml": "model: m\n"})
    info = version_of("transformers", root / "configs" / "sft.yaml")
    assert (info.version, info.exact, info.kind, info.line) == ("4.45.2", True, "pin", 2)
    assert "requirements.txt:2" in info.origin
    assert version_of("ms-swift", root / "configs" / "sft.yaml").version == "3.12.6"
    assert version_of("accelerate", root / "configs" / "sft.yaml") is None


def test_range_assumes_lowest_and_keeps_upper(tmp_path):
    root = _repo(tmp_path, {"requirements-train.txt": "transformers>=4.41,<4.46\nllamafactory~=0.9.1\ntrl\n"})
    info = version_of("transformers", root)
    assert (info.version, info.exact, info.upper) == ("4.41", False, "4.46")
    assert "assuming 4.41" in info.describe()
    lf = version_of("llamafactory", root)
    assert (lf.version, lf.upper) == ("0.9.1", "0.10")
    assert version_of("trl", root) is None  # unpinned says nothing


def test_pyproject_project_optional_and_poetry(tmp_path):
    root = _repo(tmp_path, {"pyproject.toml": (
        '[project]\nname = "x"\ndependencies = ["deepspeed==0.16.4"]\n'
        '[project.optional-dependencies]\ntrain = ["accelerate>=1.2"]\n'
        '[tool.poetry.dependencies]\ntrl = "^0.12.1"\n')})
    assert version_of("deepspeed", root).version == "0.16.4"
    assert version_of("accelerate", root).version == "1.2"
    trl = version_of("trl", root)
    assert (trl.version, trl.upper) == ("0.12.1", "0.13")


def test_setup_py_and_setup_cfg(tmp_path):
    root = _repo(tmp_path, {
        "setup.py": "from setuptools import setup\nsetup(name='x', install_requires=['transformers==4.51.3', 'torch'])\n",
        "sub/setup.cfg": "[options]\ninstall_requires =\n    accelerate==0.34.2\n",
        "sub/train.yaml": "a: 1\n"})
    assert version_of("transformers", root / "train.yaml").line == 2
    # the nearest folder that pins the package wins; sub/ has a setup.cfg, so it is a project root
    assert version_of("accelerate", root / "sub" / "train.yaml").version == "0.34.2"
    assert version_of("transformers", root / "sub" / "train.yaml") is None


def test_environment_yml_conda_and_pip(tmp_path):
    root = _repo(tmp_path, {"environment.yml": (
        "name: train\ndependencies:\n  - python=3.11\n  - conda-forge::deepspeed=0.15.4\n"
        "  - pip:\n    - ms-swift==2.6.1\n")})
    assert version_of("deepspeed", root).version == "0.15.4"
    assert version_of("ms-swift", root).version == "2.6.1"


def test_nearest_folder_wins_and_root_stops_the_search(tmp_path):
    outer = tmp_path / "outer"
    outer.mkdir()
    (outer / "requirements.txt").write_text("transformers==4.30.0\n", encoding="utf-8")
    root = _repo(outer / "repo", {"requirements.txt": "transformers==4.45.2\n",
                                  "exp/requirements.txt": "transformers==5.23.0\n", "exp/a.yaml": "x: 1\n",
                                  "other/b.yaml": "x: 1\n"})
    assert version_of("transformers", root / "exp" / "a.yaml").version == "5.23.0"
    assert version_of("transformers", root / "other" / "b.yaml").version == "4.45.2"
    bare = _repo(outer / "bare", {"c.yaml": "x: 1\n"})
    assert version_of("transformers", bare / "c.yaml") is None  # .git stops before outer/


def test_settings_win_and_installed_is_opt_in(tmp_path, monkeypatch):
    root = _repo(tmp_path, {"requirements.txt": "transformers==4.45.2\n"})
    settings = Settings(root=root)
    apply_table(settings, {"transformers-version": "5.23.0"}, "pyproject.toml")
    info = version_of("transformers", root, settings)
    assert (info.version, info.kind, info.origin) == ("5.23.0", "setting", "transformers-version in pyproject.toml")
    import dslint.versions as versions

    monkeypatch.setattr(versions, "installed", lambda package: "9.9.9")
    plain = Settings(root=root)
    assert version_of("transformers", root, plain).version == "4.45.2"  # installed: off by default
    plain.detect_installed_versions = Setting(True, "detect-installed-versions in dslint.toml")
    found = version_of("transformers", root, plain)
    assert (found.version, found.kind) == ("9.9.9", "installed")


def test_installed_reads_metadata_without_importing():
    import sys

    from dslint.versions import installed

    before = set(sys.modules)
    installed("deepspeed")
    assert "deepspeed" not in set(sys.modules) - before


def test_version_settings_are_validated():
    settings = Settings()
    with pytest.raises(ConfigError, match="swift-version"):
        apply_table(settings, {"swift-version": "latest"}, "dslint.toml")
    with pytest.raises(ConfigError, match="detect-installed-versions"):
        apply_table(settings, {"detect-installed-versions": "yes"}, "dslint.toml")
    apply_table(settings, {"swift-version": ">=4.1", "detect-installed-versions": True}, "dslint.toml")
    assert settings.swift_version.value == ">=4.1" and settings.detect_installed_versions.value is True
    info = version_of("ms-swift", None, settings)
    assert (info.version, info.exact) == ("4.1", False)


def test_parse_and_compare():
    assert parse_version("4.46.0.dev0") == (4, 46, 0)
    assert compare("4.45.2", "4.46") < 0 and compare("5.0", "5.0.0") == 0
    assert repository_pins("/nonexistent/path/x.yaml", "transformers") == []
