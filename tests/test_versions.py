"""Version evidence (dslint.evidence.pins, dslint.evidence.versions) on small fixture repositories, and verdicts over candidates."""

from __future__ import annotations

from pathlib import Path

import pytest

from dslint.config import ConfigError, Setting, Settings, apply_table
from dslint.evidence.pins import Pin, pins_in
from dslint.evidence.versions import (
    Candidates, Evidence, allows, candidates, clear_cache, compare, evidence, known_releases, parse_spec, parse_version,
)


@pytest.fixture(autouse=True)
def _fresh_cache():
    clear_cache()
    yield
    clear_cache()


def _repo(tmp_path: Path, files: dict[str, str], git: bool = True) -> Path:
    if git:
        (tmp_path / ".git").mkdir(parents=True)
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def _versions(package: str, start: Path, settings=None) -> tuple[str, ...]:
    return candidates(package, start, settings).versions


# ---- requirements files ----------------------------------------------------------------------


def test_requirements_exact_pin_with_its_line(tmp_path):
    root = _repo(tmp_path, {"requirements.txt": "torch>=2\ntransformers==4.45.2  # pinned\nms-swift[llm]==3.12.6\n",
                            "configs/sft.yaml": "model: m\n"})
    found = evidence("transformers", root / "configs" / "sft.yaml")
    assert (found.kind, found.exact, found.pins[0].line) == ("pin", ("4.45.2",), 2)
    assert _versions("ms-swift", root / "configs" / "sft.yaml") == ("3.12.6",)
    assert evidence("accelerate", root / "configs" / "sft.yaml") is None
    assert "transformers==4.45.2 in requirements.txt:2" in candidates("transformers", root / "configs", Settings(root=root)).why()


def test_a_range_is_the_known_releases_it_allows(tmp_path):
    root = _repo(tmp_path, {"requirements-train.txt": "transformers>=4.41,<4.47\nllamafactory~=0.9.1\ntrl\n"})
    assert _versions("transformers", root) == ("4.45.0", "4.45.1", "4.45.2", "4.46.1", "4.46.2", "4.46.3")
    assert _versions("llamafactory", root) == ("0.9.1", "0.9.2", "0.9.3", "0.9.4", "0.9.5")
    assert evidence("trl", root) is None  # a name without a version says nothing
    assert _versions("trl", root) == known_releases("trl")


def test_a_range_outside_the_known_releases_takes_its_lowest_version(tmp_path):
    root = _repo(tmp_path, {"requirements.txt": "transformers>=6.1\naccelerate<0.30\n"})
    assert _versions("transformers", root) == ("6.1",)
    assert _versions("accelerate", root) == (known_releases("accelerate")[0],)


def test_includes_and_constraints_are_read_relative_to_the_including_file(tmp_path):
    root = _repo(tmp_path, {
        "requirements.txt": "-r reqs/base.txt\n--constraint=reqs/constraints.txt\n",
        "reqs/base.txt": "deepspeed>=0.15\n-r ../requirements.txt\n",  # a cycle back to the top
        "reqs/constraints.txt": "deepspeed<0.16\ntransformers==4.46.0\n",
    })
    found = evidence("deepspeed", root)
    assert found.kind == "range" and len(found.pins) == 2
    assert _versions("deepspeed", root) == ("0.15.0", "0.15.1", "0.15.2", "0.15.3", "0.15.4")
    why = candidates("transformers", root, Settings(root=root)).why()
    assert why == "transformers==4.46.0 in reqs/constraints.txt:2, constraint from requirements.txt:2"


def test_git_pins_know_a_version_only_from_a_release_tag(tmp_path):
    root = _repo(tmp_path, {
        "requirements.txt": ("transformers @ git+https://github.com/huggingface/transformers@v4.45.2\n"
                             "git+https://github.com/modelscope/ms-swift.git@main#egg=ms-swift\n"
                             "-e git+ssh://git@github.com/hiyouga/LLaMA-Factory.git\n"
                             "https://example.org/wheels/deepspeed-0.15.4-cp311-cp311-linux_x86_64.whl\n"),
    })
    assert _versions("transformers", root) == ("4.45.2",)
    swift = candidates("ms-swift", root, Settings(root=root))
    assert swift.versions == known_releases("ms-swift") and swift.evidence.kind == "git"
    assert "the ref main names no release" in swift.why() and "version unknown" in swift.why()
    assert "unknown" in swift.describe() and "judged against every known version" in swift.describe()
    assert evidence("llamafactory", root).kind == "git"  # the repository name says which package
    assert _versions("deepspeed", root) == ("0.15.4",)  # an archive's name carries its version


# ---- pyproject.toml, setup.py, setup.cfg, environment.yml -------------------------------------


def test_pyproject_pep621_groups_uv_poetry_and_pdm(tmp_path):
    root = _repo(tmp_path, {"pyproject.toml": (
        '[project]\nname = "x"\ndependencies = ["deepspeed==0.16.4"]\n'
        '[project.optional-dependencies]\ntrain = ["accelerate>=1.2,<1.4"]\n'
        '[dependency-groups]\ndev = ["trl==0.12.2", {include-group = "test"}]\n'
        '[tool.uv]\noverride-dependencies = ["transformers==4.46.3"]\n'
        '[tool.uv.sources]\nms-swift = { git = "https://github.com/modelscope/ms-swift", tag = "v3.1.0" }\n'
        '[tool.pdm.dev-dependencies]\nlint = ["llamafactory==0.8.3"]\n')})
    assert _versions("deepspeed", root) == ("0.16.4",)
    assert _versions("accelerate", root) == ("1.2.0", "1.2.1", "1.3.0")
    assert _versions("trl", root) == ("0.12.2",)
    assert _versions("transformers", root) == ("4.46.3",)
    assert evidence("transformers", root).pins[0].via == "[tool.uv] override-dependencies"
    assert _versions("ms-swift", root) == ("3.1.0",)
    assert _versions("llamafactory", root) == ("0.8.3",)


def test_poetry_caret_tilde_tables_and_groups(tmp_path):
    root = _repo(tmp_path, {"pyproject.toml": (
        '[tool.poetry.dependencies]\npython = "^3.10"\ntrl = "^0.12.1"\n'
        'deepspeed = {version = "~0.15.1", extras = ["autotuning"]}\n'
        '[tool.poetry.group.train.dependencies]\ntransformers = "4.45.2"\n'
        'accelerate = {git = "https://github.com/huggingface/accelerate.git", rev = "abc123"}\n')})
    assert _versions("trl", root) == ("0.12.1", "0.12.2")
    assert _versions("deepspeed", root) == ("0.15.1", "0.15.2", "0.15.3", "0.15.4")
    assert _versions("transformers", root) == ("4.45.2",)  # a bare poetry version is exact
    assert evidence("accelerate", root).kind == "git"
    assert evidence("transformers", root).pins[0].line == 6


def test_setup_py_follows_module_level_lists(tmp_path):
    root = _repo(tmp_path, {"setup.py": (
        "from setuptools import setup\n"
        "_deps = [\n    'transformers==4.51.3',\n    'torch',\n]\n"
        "extras = {'ds': ['deepspeed>=0.16,<0.17'] + _deps}\n"
        "setup(name='x', install_requires=_deps, extras_require=extras)\n")})
    assert evidence("transformers", root).pins[0].line == 3
    assert _versions("deepspeed", root)[0] == "0.16.0" and _versions("deepspeed", root)[-1] == "0.16.9"


def test_setup_cfg_and_environment_yml(tmp_path):
    root = _repo(tmp_path, {
        "setup.cfg": "[options]\ninstall_requires =\n    accelerate==0.34.2\n[options.extras_require]\ntrl = trl>=1.15\n",
        "environment.yml": ("name: train\ndependencies:\n  - python=3.11\n  - conda-forge::deepspeed=0.15\n"
                            "  - transformers=4.45.2=pyhd8ed1ab_0\n  - pip:\n    - ms-swift==2.6.1\n")})
    assert _versions("accelerate", root) == ("0.34.2",)
    assert _versions("trl", root) == ("1.15.0", "1.16.0")
    assert _versions("deepspeed", root) == ("0.15.0", "0.15.1", "0.15.2", "0.15.3", "0.15.4")  # conda =0.15 is 0.15.*
    assert _versions("transformers", root) == ("4.45.2",)
    assert _versions("ms-swift", root) == ("2.6.1",)


# ---- Dockerfiles and lock files ----------------------------------------------------------------


def test_dockerfile_pip_install_lines(tmp_path):
    root = _repo(tmp_path, {"Dockerfile": (
        "FROM nvcr.io/nvidia/pytorch:24.05-py3\n"
        "ARG DS_VERSION=0.15.4\n"
        "RUN apt-get update && pip install --no-cache-dir -i https://mirror/simple \\\n"
        "        'transformers>=4.45,<4.46' \\\n"
        "        deepspeed==${DS_VERSION} && \\\n"
        "    python3 -m pip install -U ms-swift==3.1.0\n"
        "RUN echo trl==9.9  # not a pip install\n"),
        "docker/Dockerfile.npu": "FROM x\nRUN uv pip install --system accelerate==1.2.1\n"})
    assert _versions("transformers", root) == ("4.45.0", "4.45.1", "4.45.2")
    found = evidence("deepspeed", root)
    assert found.exact == ("0.15.4",) and found.pins[0].line == 5 and found.pins[0].via == "RUN pip install"
    assert evidence("ms-swift", root).pins[0].line == 6
    assert evidence("trl", root) is None
    assert _versions("accelerate", root) == ("1.2.1",)


def test_lock_files_beat_a_range_in_the_same_folder(tmp_path):
    root = _repo(tmp_path, {
        "pyproject.toml": '[project]\nname = "x"\ndependencies = ["transformers>=4.40", "trl", "deepspeed>=0.14"]\n',
        "uv.lock": ('version = 1\n\n[[package]]\nname = "transformers"\nversion = "4.46.3"\n'
                    'source = { registry = "https://pypi.org/simple" }\ndependencies = [\n    { name = "trl" },\n]\n'),
        "poetry.lock": '[[package]]\nname = "trl"\nversion = "0.12.2"\ndescription = "x"\n',
        "pdm.lock": '[[package]]\nname = "deepspeed"\nversion = "0.16.4"\nrequires_python = ">=3.8"\n',
    })
    found = evidence("transformers", root)
    assert (found.kind, found.exact, found.pins[0].line) == ("lock", ("4.46.3",), 4)
    assert _versions("trl", root) == ("0.12.2",)
    assert _versions("deepspeed", root) == ("0.16.4",)


# ---- which folder -------------------------------------------------------------------------------


def test_monorepo_nearest_folder_that_pins_wins(tmp_path):
    root = _repo(tmp_path, {
        "requirements.txt": "transformers==4.45.2\ndeepspeed==0.16.4\n",
        "projects/a/pyproject.toml": '[project]\nname = "a"\ndependencies = ["transformers==5.23.0", "deepspeed"]\n',
        "projects/a/configs/sft.yaml": "x: 1\n",
        "projects/b/requirements.txt": "ms-swift==3.1.0\n",
        "projects/b/train.sh": "swift sft\n",
    })
    a = root / "projects" / "a" / "configs" / "sft.yaml"
    b = root / "projects" / "b" / "train.sh"
    assert _versions("transformers", a) == ("5.23.0",)
    assert _versions("deepspeed", a) == ("0.16.4",)  # "deepspeed" without a version: the root's pin
    assert _versions("transformers", b) == ("4.45.2",)  # past b's project root, up to the repository root


def test_the_repository_root_stops_the_search(tmp_path):
    outer = tmp_path / "outer"
    outer.mkdir()
    (outer / "requirements.txt").write_text("transformers==4.30.0\n", encoding="utf-8")
    repo = _repo(outer / "repo", {"c.yaml": "x: 1\n"})
    assert evidence("transformers", repo / "c.yaml") is None
    # without .git, the nearest project root stops it
    loose = _repo(outer / "loose", {"pyproject.toml": '[project]\nname = "l"\n', "sub/c.yaml": "x: 1\n"}, git=False)
    assert evidence("transformers", loose / "sub" / "c.yaml") is None


def test_without_a_repository_the_folder_dslint_runs_from_stops_the_search(tmp_path):
    (tmp_path / "requirements.txt").write_text("deepspeed==0.16.4\n", encoding="utf-8")
    run = _repo(tmp_path / "work", {"requirements.txt": "deepspeed==0.15.4\n", "configs/z2/ds.json": "{}"}, git=False)
    start = run / "configs" / "z2" / "ds.json"
    assert _versions("deepspeed", start, Settings(root=run)) == ("0.15.4",)
    assert evidence("deepspeed", start) is None  # no root given: only the file's own folder
    assert _versions("deepspeed", start, Settings(root=tmp_path / "elsewhere")) == known_releases("deepspeed")


def test_pins_are_read_once_per_folder(tmp_path, monkeypatch):
    root = _repo(tmp_path, {"requirements.txt": "deepspeed==0.15.4\n", "a/x.json": "{}", "a/y.json": "{}"})
    import dslint.evidence.pins as pins

    calls = []
    original = pins._pins_requirements
    monkeypatch.setattr(pins, "_pins_requirements", lambda *a, **k: calls.append(a[0]) or original(*a, **k))
    for name in ("x.json", "y.json"):
        for package in ("deepspeed", "transformers"):
            candidates(package, root / "a" / name)
    assert len(calls) == 1
    assert pins_in(str(root)) and pins_in(str(root / "a")) == ()


def test_files_that_name_none_of_the_packages_are_not_parsed(tmp_path, monkeypatch):
    import dslint.evidence.pins as pins

    root = _repo(tmp_path, {"pyproject.toml": '[project]\nname = "tool"\ndependencies = ["click>=8"]\n',
                            "setup.py": "from setuptools import setup\nsetup(name='tool')\n"})
    monkeypatch.setattr(pins, "_pins_pyproject", lambda *a: pytest.fail("parsed"))
    monkeypatch.setattr(pins, "_BY_NAME", {**pins._BY_NAME, "pyproject.toml": pins._pins_pyproject})
    assert evidence("deepspeed", root) is None


# ---- settings and the installed environment -----------------------------------------------------


def test_settings_win_and_installed_is_opt_in(tmp_path, monkeypatch):
    root = _repo(tmp_path, {"requirements.txt": "transformers==4.45.2\n"})
    settings = Settings(root=root)
    apply_table(settings, {"transformers-version": "5.23.0"}, "pyproject.toml")
    found = candidates("transformers", root, settings)
    assert found.versions == ("5.23.0",) and found.why() == "5.23.0 from transformers-version in pyproject.toml"
    import dslint.evidence.versions as versions

    monkeypatch.setattr(versions, "installed", lambda package: "4.46.0")
    plain = Settings(root=root)
    assert _versions("transformers", root, plain) == ("4.45.2",)  # installed: off by default
    plain.detect_installed_versions = Setting(True, "detect-installed-versions in dslint.toml")
    assert _versions("transformers", root, plain) == ("4.46.0",)
    ranged = Settings(root=root)
    apply_table(ranged, {"swift-version": ">=4.5"}, "dslint.toml")
    assert _versions("ms-swift", None, ranged) == ("4.5.0", "4.5.1", "4.5.2", "4.5.3", "4.6.0")


def test_installed_reads_metadata_without_importing():
    import sys

    from dslint.evidence.versions import installed

    before = set(sys.modules)
    installed("deepspeed")
    assert "deepspeed" not in set(sys.modules) - before


def test_version_settings_are_validated():
    settings = Settings()
    with pytest.raises(ConfigError, match="swift-version"):
        apply_table(settings, {"swift-version": "latest"}, "dslint.toml")
    with pytest.raises(ConfigError, match="detect-installed-versions"):
        apply_table(settings, {"detect-installed-versions": "yes"}, "dslint.toml")


# ---- verdicts -------------------------------------------------------------------------------------


def test_a_verdict_keeps_severity_only_when_every_candidate_fails(tmp_path):
    from dslint.diagnostics import Severity

    unpinned = candidates("transformers", None)
    newer = unpinned.judge(lambda v: compare(v, "5.0") >= 0)
    # nothing pins the package and only some releases fail: no evidence about this launch, no finding
    assert not newer.anywhere and not newer.everywhere and newer.failing
    assert newer.note() == "fails on transformers ≥ 5.0.0; nothing pins transformers"
    ranged = _repo(tmp_path / "ranged", {"requirements.txt": "transformers>=4.50\n"})
    some = candidates("transformers", ranged).judge(lambda v: compare(v, "5.0") >= 0)
    assert some.anywhere and not some.everywhere and some.severity() is Severity.INFO
    root = _repo(tmp_path, {"requirements.txt": "transformers==5.1.0\n"})
    pinned = candidates("transformers", root).judge(lambda v: compare(v, "5.0") >= 0)
    assert pinned.everywhere and pinned.severity() is None and pinned.note() == ""
    assert pinned.severity(unpinned=Severity.WARNING) is None and pinned.where() == "transformers 5.1.0"
    assert not candidates("transformers", root).judge(lambda v: False).anywhere
    everywhere = unpinned.judge(lambda v: True)
    assert everywhere.severity() is None and everywhere.severity(unpinned=Severity.WARNING) is Severity.WARNING
    assert everywhere.where() == "any transformers version dslint knows (4.45.0–5.23.0)"


def test_verdict_notes_name_the_failing_and_the_unknown_versions():
    pin = Pin("deepspeed", "spec", ">=0.14", "/repo/requirements.txt", 1)
    found = Evidence("deepspeed", "range", clauses=parse_spec(">=0.14"), pins=(pin,))
    ranged = Candidates("deepspeed", known_releases("deepspeed"), found, Path("/repo"))
    older = ranged.judge(lambda v: compare(v, "0.17.1") < 0)
    assert older.note() == "fails on DeepSpeed < 0.17.1; deepspeed>=0.14 in requirements.txt:1"
    middle = ranged.judge(lambda v: compare(v, "0.14.4") >= 0 and compare(v, "0.16.6") < 0)
    assert middle.note().startswith("fails on DeepSpeed 0.14.4–0.16.5;")
    mixed = ranged.judge(lambda v: None if compare(v, "0.15") < 0 else compare(v, "0.19.7") >= 0)
    assert mixed.note().startswith("fails on DeepSpeed ≥ 0.19.7, maybe < 0.15.0;")
    unsure = ranged.judge(lambda v: None if compare(v, "0.15") < 0 else False)
    assert not unsure.anywhere  # where dslint cannot tell and nothing fails for certain, it says nothing


def test_unpinned_spellings_that_the_newest_release_accepts_are_not_reported():
    unpinned = candidates("deepspeed", None)
    assert not unpinned.judge(lambda v: compare(v, "0.17.1") < 0, spelling=True).anywhere
    assert unpinned.judge(lambda v: compare(v, "0.19.3") < 0).note() == "fails on DeepSpeed < 0.19.3; nothing pins deepspeed"
    assert unpinned.judge(lambda v: compare(v, "0.19.7") >= 0).note() == "fails on DeepSpeed ≥ 0.19.7; nothing pins deepspeed"


def test_specifiers():
    assert allows(parse_spec(">=4.40,<5"), "4.57.6") and not allows(parse_spec(">=4.40,<5"), "5.0.0")
    assert allows(parse_spec("~=4.45"), "4.99") and not allows(parse_spec("~=4.45.1"), "4.46.0")
    assert allows(parse_spec("==4.45.*"), "4.45.2") and not allows(parse_spec("!=4.45.*"), "4.45.0")
    assert allows(parse_spec("^0.12.1", "poetry"), "0.12.9") and not allows(parse_spec("^0.12.1", "poetry"), "0.13.0")
    assert allows(parse_spec("^1.2", "poetry"), "1.9") and not allows(parse_spec("^1.2", "poetry"), "2.0")
    assert allows(parse_spec("=4.45", "conda"), "4.45.2") and not allows(parse_spec("=4.45", "conda"), "4.46.0")
    assert parse_spec("4.45.2") is None and parse_spec(">=1 || <0.5") is None and parse_spec("latest") is None


def test_parse_and_compare():
    assert parse_version("4.46.0.dev0") == (4, 46, 0)
    assert compare("4.45.2", "4.46") < 0 and compare("5.0", "5.0.0") == 0
    assert evidence("transformers", "/nonexistent/path/x.yaml") is None


def test_known_releases_cover_the_shipped_schemas():
    from dslint.schemagen.releases import PACKAGES, bounds

    for package in PACKAGES:
        known = known_releases(package)
        assert (known[0], known[-1]) == bounds(package), package
        assert list(known) == sorted(known, key=parse_version)


def test_pip_install_in_a_shell_script_pins(tmp_path):
    """A setup script the README runs first (`. install.sh`) pins what the launches run with, as a
    Dockerfile's RUN pip install does; a comment or an echo is not an install."""
    root = _repo(tmp_path, {
        "install.sh": ("#!/bin/bash\nconda create -n halos python=3.10 -y\n# pip install accelerate==0.20.0\n"
                       "ACC=0.33.0\npip install accelerate==${ACC} \\\n    'transformers>=4.44,<4.45'\necho pip install trl==9.9\n"),
        "scripts/launch.sh": "accelerate launch --config_file fsdp.yaml train.py\n",
    })
    found = evidence("accelerate", root / "scripts" / "launch.sh")
    assert found.exact == ("0.33.0",) and found.pins[0].line == 5 and found.pins[0].via == "pip install in a script"
    assert _versions("transformers", root) and all(v.startswith("4.44") for v in _versions("transformers", root))
    assert evidence("trl", root) is None


def test_a_launch_scripts_own_installs_pin_nothing_for_the_folder(tmp_path):
    root = _repo(tmp_path, {
        "a.sh": "pip install transformers==4.40.0\ntorchrun --nproc_per_node 2 train.py\n",
        "b.sh": "torchrun --nproc_per_node 2 train.py\n",
    })
    assert evidence("transformers", root / "b.sh") is None


def test_a_deepspeed_config_s_own_keys_bound_the_unpinned_releases_from_below():
    from dslint.documents.json_doc import parse_json
    from dslint.evidence.keyhistory import narrowed
    from dslint.source import SourceFile

    unpinned = candidates("deepspeed", None)
    config = parse_json(SourceFile("ds.json", '{"gradient_allreduce_op": "sum", "zero_optimization": {"stage": 3}}'))[0]
    found = narrowed(unpinned, config)
    assert found.versions[0] == "0.19.6" and found.versions[-1] == unpinned.versions[-1]  # read from 0.19.6 on
    assert "gradient_allreduce_op (from 0.19.6)" in found.describe()
    # a key removed later bounds nothing from above (the removal rules report it)
    removed = parse_json(SourceFile("ds.json", '{"amp": {"enabled": true}}'))[0]
    assert narrowed(unpinned, removed).versions == unpinned.versions
    root_pinned = Candidates("deepspeed", ("0.18.0",), Evidence("deepspeed", "pin", ("0.18.0",)))
    assert narrowed(root_pinned, config) is root_pinned
