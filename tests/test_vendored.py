"""A consumer whose source is in the repository (dslint.launch.vendored).

The rule under test: the checkout a launch runs is the folder its script cd's into (when that
is, or is inside, a checkout), else the nearest checkout above or beside the launch's files; a
checkout is recognised by its import package and argument modules, not by the folder's name;
its version comes from its source, with the file and line.
"""

from __future__ import annotations

import json
from pathlib import Path

from dslint.config import Settings
from dslint.run.engine import Engine
from dslint.launch.vendored import locate
from dslint.evidence.versions import Candidates, candidates, clear_cache

LF_YAML = "model_name_or_path: m\nstage: sft\ndo_train: true\nfinetuning_type: lora\ntemplate: qwen\ndataset: a\n"


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def llamafactory(prefix: str, version_line: str = 'VERSION = "0.9.3"\n', fields: str = "image_resolution: int = 512") -> dict[str, str]:
    return {
        f"{prefix}/src/llamafactory/__init__.py": "",
        f"{prefix}/src/llamafactory/hparams/__init__.py": "",
        f"{prefix}/src/llamafactory/hparams/model_args.py":
            f"from dataclasses import dataclass\n\n\n@dataclass\nclass ModelArguments:\n    {fields}\n",
        f"{prefix}/src/llamafactory/extras/env.py": version_line,
    }


def plans_for(tmp_path: Path, monkeypatch, files: dict[str, str]):
    write(tmp_path, files)
    (tmp_path / ".git").mkdir(exist_ok=True)
    monkeypatch.chdir(tmp_path)
    clear_cache()
    result = Engine(Settings(select=["DS001"], root=tmp_path)).lint_paths(["."])
    assert not result.internal_errors
    return result.plans


def only(plans, launcher):
    found = [p for p in plans if p.launcher == launcher]
    assert len(found) == 1, [(p.launcher, p.origin.path) for p in plans]
    return found[0]


# ---- which checkout --------------------------------------------------------------------------


def test_a_cd_into_the_checkout_chooses_it_and_resolves_the_config_from_there(tmp_path, monkeypatch):
    files = {**llamafactory("train/LLaMA-Factory"), "train/LLaMA-Factory/examples/sft.yaml": LF_YAML,
             "train/run.sh": "#!/bin/bash\ncd LLaMA-Factory\nllamafactory-cli train examples/sft.yaml\n"}
    plan = only(plans_for(tmp_path, monkeypatch, files), "llamafactory")
    assert plan.workdir is not None and plan.workdir.value == tmp_path / "train" / "LLaMA-Factory"
    assert plan.training_config.document is not None
    assert plan.training_config.document.path == "train/LLaMA-Factory/examples/sft.yaml"
    source = plan.program.sources["llamafactory"]
    assert source.version == "0.9.3" and "the checkout the script cd's into (cd LLaMA-Factory at train/run.sh:2)" == source.chosen
    assert source.version_at.where() == "train/LLaMA-Factory/src/llamafactory/extras/env.py:1"
    assert "image_resolution" in source.fields


def test_the_cd_wins_over_a_nearer_checkout(tmp_path, monkeypatch):
    files = {**llamafactory("a/LLaMA-Factory", 'VERSION = "0.9.1"\n'), **llamafactory("b/LLaMA-Factory", 'VERSION = "0.9.4"\n'),
             "a/sft.yaml": LF_YAML, "a/run.sh": "cd ../b/LLaMA-Factory/src\nllamafactory-cli train ../../../a/sft.yaml\n"}
    plan = only(plans_for(tmp_path, monkeypatch, files), "llamafactory")
    assert plan.program.sources["llamafactory"].version == "0.9.4"


def test_a_cd_to_an_unknown_folder_forgets_the_earlier_one(tmp_path, monkeypatch):
    files = {**llamafactory("LLaMA-Factory"), "sft.yaml": LF_YAML,
             "run.sh": 'cd LLaMA-Factory\ncd "$WORKDIR"\nllamafactory-cli train /abs/sft.yaml\n'}
    plan = only(plans_for(tmp_path, monkeypatch, files), "llamafactory")
    assert plan.workdir is None
    # Still the nearest checkout beside the script.
    assert plan.program.sources["llamafactory"].chosen == "the checkout nearest run.sh"


def test_a_cd_inside_another_function_does_not_count(tmp_path, monkeypatch):
    files = {**llamafactory("tools/LLaMA-Factory"), "sft.yaml": LF_YAML,
             "run.sh": "setup() {\n  cd tools/LLaMA-Factory\n}\nllamafactory-cli train sft.yaml\n"}
    plan = only(plans_for(tmp_path, monkeypatch, files), "llamafactory")
    assert plan.workdir is None


def test_cds_are_followed_in_order_and_popd_returns_where_pushd_left(tmp_path, monkeypatch):
    """bash keeps a stack: popd goes back to the folder pushd left; popd past the stack is unknown."""
    files = {**llamafactory("work/LLaMA-Factory"), "work/LLaMA-Factory/examples/sft.yaml": LF_YAML,
             "run.sh": "cd work\ncd LLaMA-Factory\nllamafactory-cli train examples/sft.yaml\n"
                       "pushd /tmp\npopd\nllamafactory-cli train examples/sft.yaml\n"
                       "popd\nllamafactory-cli train examples/sft.yaml\n"}
    plans = [p for p in plans_for(tmp_path, monkeypatch, files) if p.launcher == "llamafactory"]
    checkout = tmp_path / "work" / "LLaMA-Factory"
    assert [p.workdir.value if p.workdir else None for p in plans] == [checkout, checkout, None]
    assert plans[0].workdir.origin == "cd LLaMA-Factory at run.sh:2"
    assert plans[2].runs_elsewhere is not None and "popd at run.sh:7" in plans[2].runs_elsewhere


def test_two_checkouts_side_by_side_are_a_source_of_unknown_version(tmp_path):
    write(tmp_path, {**llamafactory("LLaMA-Factory"), **llamafactory("LLaMA-Factory-old", 'VERSION = "0.8.3"\n')})
    found = locate("llamafactory", [(tmp_path, "run.sh")], None, tmp_path, display=lambda p: str(Path(p).relative_to(tmp_path)))
    assert found is not None and not found.readable and "several side by side (LLaMA-Factory, LLaMA-Factory-old)" in found.problem


def test_a_folder_is_a_checkout_by_its_import_package_not_its_name(tmp_path):
    write(tmp_path, {"LLaMA-Factory/examples/sft.yaml": LF_YAML,
                     "vendor/lf/src/llamafactory/__init__.py": "",  # no hparams/: not the package's source
                     "third_party/anything/llamafactory/__init__.py": "",
                     "third_party/anything/llamafactory/hparams/__init__.py": "",
                     "third_party/anything/llamafactory/extras/env.py": 'VERSION = "0.9.2"\n'})
    assert locate("llamafactory", [(tmp_path, "run.sh")], None, tmp_path) is None  # not beside the root
    found = locate("llamafactory", [(tmp_path / "third_party", "x.yaml")], None, tmp_path)
    assert found is not None and found.version == "0.9.2" and found.root == tmp_path / "third_party" / "anything"


def test_the_search_stops_at_the_repository_root(tmp_path):
    write(tmp_path, llamafactory("LLaMA-Factory"))
    repo = tmp_path / "repo"
    (repo / "configs").mkdir(parents=True)
    assert locate("llamafactory", [(repo / "configs", "x.yaml")], None, repo) is None


# ---- the version and the arguments ------------------------------------------------------------


def test_versions_from_the_source_files(tmp_path):
    write(tmp_path, {
        # llmtuner: LLaMA-Factory before its rename, __version__ in the package
        "old/src/llmtuner/__init__.py": '__version__ = "0.7.1"\n', "old/src/llmtuner/hparams/__init__.py": "",
        # ms-swift: swift/version.py
        "swift3/swift/__init__.py": "", "swift3/swift/version.py": "__version__ = '3.1.0'\n",
        "swift3/swift/llm/argument/__init__.py": "",
        "swift3/swift/llm/argument/train_args.py": "from dataclasses import dataclass\n\n\n@dataclass\nclass TrainArguments:\n    my_flag: int = 0\n",
        # transformers: __init__.py __version__
        "tf/src/transformers/__init__.py": '__version__ = "4.46.0.dev0"\n',
        "tf/src/transformers/training_args.py": "from dataclasses import dataclass\n\n\n@dataclass\nclass TrainingArguments:\n    output_dir: str = None\n",
        # a version only in pyproject.toml
        "pp/src/llamafactory/__init__.py": "", "pp/src/llamafactory/hparams/__init__.py": "",
        "pp/pyproject.toml": '[build-system]\nrequires = ["setuptools"]\n\n[project]\nname = "llamafactory"\nversion = "0.9.5"\n',
    })
    old = locate("llamafactory", [(tmp_path / "old", "x")], None, tmp_path)
    assert (old.version, old.version_at.where().endswith("llmtuner/__init__.py:1")) == ("0.7.1", True)
    swift = locate("ms-swift", [(tmp_path / "swift3", "x")], None, tmp_path)
    assert swift.version == "3.1.0" and "my_flag" in swift.fields
    tf = locate("transformers", [(tmp_path / "tf", "x")], None, tmp_path)
    assert tf.version == "4.46.0.dev0" and "output_dir" in tf.fields
    pp = locate("llamafactory", [(tmp_path / "pp", "x")], None, tmp_path)
    assert pp.version == "0.9.5" and pp.version_at.where().endswith("pyproject.toml:6")


def test_fields_with_init_false_are_not_arguments(tmp_path):
    # HfArgumentParser skips them (transformers hf_argparser.py: `if not field.init: continue`).
    write(tmp_path, llamafactory("LLaMA-Factory", fields="compute_dtype: object = field(default=None, init=False)\n"
                                                         "    image_resolution: int = field(default=512, init=True)"))
    path = tmp_path / "LLaMA-Factory/src/llamafactory/hparams/model_args.py"
    path.write_text(path.read_text().replace("from dataclasses import dataclass", "from dataclasses import dataclass, field"))
    found = locate("llamafactory", [(tmp_path, "x")], None, tmp_path)
    assert found.readable and "image_resolution" in found.fields and "compute_dtype" not in found.fields


def test_an_unreadable_argument_module_leaves_the_checkout_unread(tmp_path):
    write(tmp_path, {**llamafactory("LLaMA-Factory"), "LLaMA-Factory/src/llamafactory/hparams/broken.py": "def (:\n"})
    found = locate("llamafactory", [(tmp_path, "x")], None, tmp_path)
    assert found.version == "0.9.3" and not found.readable and "could not be read as Python" in found.problem
    assert "image_resolution" in found.fields


# ---- what the versions module makes of it ------------------------------------------------------


class _Program:
    def __init__(self, sources):
        self.sources = sources
        self.version_hints = {}


def test_the_source_beats_a_repository_pin_but_not_a_setting(tmp_path):
    write(tmp_path, {**llamafactory("LLaMA-Factory", 'VERSION = "0.9.4"\n'), "requirements.txt": "llamafactory==0.9.1\n"})
    clear_cache()
    source = locate("llamafactory", [(tmp_path, "x")], None, tmp_path)
    found = candidates("llamafactory", str(tmp_path / "run.sh"), Settings(root=tmp_path), _Program({"llamafactory": source}))
    assert found.versions == ("0.9.4",) and found.evidence.kind == "source" and found.exact
    assert found.evidence.pins[0].line == 1 and found.evidence.pins[0].path.endswith("extras/env.py")
    from dslint.config import Setting

    settings = Settings(root=tmp_path)
    settings.llamafactory_version = Setting("0.9.2", "llamafactory-version in the test")
    assert candidates("llamafactory", str(tmp_path / "run.sh"), settings, _Program({"llamafactory": source})).versions == ("0.9.2",)


def test_an_unread_source_bounds_nothing_and_caps_findings_at_info(tmp_path):
    write(tmp_path, llamafactory("LLaMA-Factory", "VERSION = compute()\n"))
    clear_cache()
    source = locate("llamafactory", [(tmp_path, "x")], None, tmp_path)
    found: Candidates = candidates("llamafactory", str(tmp_path / "run.sh"), Settings(root=tmp_path), _Program({"llamafactory": source}))
    assert found.unbounded and found.unread_source and len(found.versions) > 1
    verdict = found.judge(lambda version: True)
    from dslint.diagnostics import Severity

    assert verdict.everywhere and verdict.severity() == Severity.INFO
    assert "version could not be read" in found.describe()


def test_the_checkout_requirements_bound_other_packages_where_the_repository_pins_nothing(tmp_path):
    write(tmp_path, {**llamafactory("LLaMA-Factory"), "LLaMA-Factory/requirements.txt": "transformers>=4.45.0,<=4.52.4\n"})
    clear_cache()
    source = locate("llamafactory", [(tmp_path, "x")], None, tmp_path)
    found = candidates("transformers", str(tmp_path / "run.sh"), Settings(root=tmp_path), _Program({"llamafactory": source}))
    assert found.evidence.kind == "range" and found.versions[0] == "4.45.0" and found.versions[-1] == "4.52.4"


def test_explain_shows_the_source_with_its_file_and_line(tmp_path, monkeypatch, capsys):
    from dslint.cli import main

    write(tmp_path, {**llamafactory("train/LLaMA-Factory"), "train/LLaMA-Factory/examples/sft.yaml": LF_YAML,
                     "train/run.sh": "cd LLaMA-Factory\nllamafactory-cli train examples/sft.yaml\n"})
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    clear_cache()
    try:
        main(["explain", "--format", "json", "train/run.sh"])
    except SystemExit as exit:
        assert exit.code in (0, None)
    data = json.loads(capsys.readouterr().out)
    launch = next(item for item in data["launches"] if item["launcher"] == "llamafactory")
    versions = {v["package"]: v for v in launch["versions"]}
    assert versions["llamafactory"]["evidence"] == "source"
    assert versions["llamafactory"]["versions"] == ["0.9.3"]
    assert versions["llamafactory"]["path"] == "train/LLaMA-Factory/src/llamafactory/extras/env.py"
    assert versions["llamafactory"]["line"] == 1
    assert versions["llamafactory"]["text"] == ("LLaMA-Factory 0.9.3 (VERSION in train/LLaMA-Factory/src/llamafactory/extras/env.py:1, "
                                                "the checkout the script cd's into (cd LLaMA-Factory at train/run.sh:1))")
