"""Configuration files: where they are found, which one wins, and every setting.

``[tool.dslint]`` in pyproject.toml, ``dslint.toml`` or ``.dslint.toml``: the nearest above
each linted file, else the one found upward from the working directory; ``--config`` and
``--no-config``; globs relative to the file's directory.
Runs ``python -m dslint`` in a temporary tree, as a user would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dslint.config import ConfigError, Settings, load_settings
from dslint.diagnostics import Severity

DS101_JSON = '{"train_batch_size": 48, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8}\n'
WORLD_JSON = '{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8}\n'
DS102_JSON = '{"train_micro_batch_size_per_gpu": "4", "gradient_accumulation_steps": 2}\n'
DS002_JSON = '{"steps_per_print": 1, "steps_per_print": 2, "train_micro_batch_size_per_gpu": 4}\n'


# The rules these fixtures are about. Other rules may have things to say about the fixtures, so
# findings are compared for these rules only, and exit codes are checked with --select CORE
# where the configured selection is not what is being tested.
CORE = ("DS001", "DS002", "DS003", "DS101", "DS102")


def run(cwd: Path, *args: str, core: bool = False) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}
    if core:
        args = (*args, "--select", ",".join(CORE))
    proc = subprocess.run(
        [sys.executable, "-m", "dslint", *args], cwd=cwd, capture_output=True, text=True, encoding="utf-8", env=env, timeout=120
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def findings(cwd: Path, *args: str) -> list[tuple[str, str, str]]:
    """(path, code, severity) of a ``--format json`` run (which must not be a usage error)."""
    proc = run(cwd, "--format", "json", *args)
    assert proc.returncode in (0, 1), proc.stderr
    return [(d["path"], d["code"], d["severity"]) for d in json.loads(proc.stdout)["diagnostics"] if d["code"] in CORE]


def write(root: Path, files: dict[str, str]) -> None:
    for name, content in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A repository with a DS101, a DS102 and a DS002 finding in different folders."""
    write(
        tmp_path,
        {
            "configs/ds101.json": DS101_JSON,
            "configs/templates/ds102.json": DS102_JSON,
            "third_party/vendor/ds002.json": DS002_JSON,
        },
    )
    return tmp_path


ALL = [
    ("configs/ds101.json", "DS101", "error"),
    ("configs/templates/ds102.json", "DS102", "error"),
    ("third_party/vendor/ds002.json", "DS002", "error"),
]


# ---- finding the file ----------------------------------------------------------------------


@pytest.mark.parametrize("name,text", [
    ("pyproject.toml", '[project]\nname = "x"\n\n[tool.dslint]\nignore = ["DS101"]\n'),
    ("dslint.toml", 'ignore = ["DS101"]\n'),
    (".dslint.toml", 'ignore = ["DS101"]\n'),
])
def test_found_upward_from_a_subdirectory(tree, name, text):
    write(tree, {name: text})
    deep = tree / "configs" / "templates"
    # The file is found two levels up; walked paths are reported under the path as given.
    assert findings(deep, "..") == [("../templates/ds102.json", "DS102", "error")]
    assert findings(deep) == [("ds102.json", "DS102", "error")]
    assert findings(tree) == [f for f in ALL if f[1] != "DS101"]


def test_pyproject_without_a_dslint_table_is_passed_over(tree):
    write(tree, {"dslint.toml": 'ignore = ["DS102"]\n', "configs/pyproject.toml": '[project]\nname = "inner"\n[tool.ruff]\nline-length = 100\n'})
    assert findings(tree / "configs", ".") == [("ds101.json", "DS101", "error")]


def test_pyproject_table_written_inline_is_found(tree):
    write(tree, {"pyproject.toml": '[tool]\ndslint = { ignore = ["DS1"] }\n'})
    assert findings(tree) == [ALL[2]]


def test_precedence_of_the_three_names(tree):
    write(tree, {
        "pyproject.toml": '[tool.dslint]\nselect = ["DS002"]\n',
        "dslint.toml": 'select = ["DS102"]\n',
        ".dslint.toml": 'select = ["DS101"]\n',
    })
    assert [f[1] for f in findings(tree)] == ["DS101"]
    (tree / ".dslint.toml").unlink()
    assert [f[1] for f in findings(tree)] == ["DS102"]
    (tree / "dslint.toml").unlink()
    assert [f[1] for f in findings(tree)] == ["DS002"]


def test_the_nearest_directory_wins(tree):
    write(tree, {".dslint.toml": 'select = ["DS101"]\n', "configs/pyproject.toml": '[tool.dslint]\nselect = ["DS102"]\n'})
    assert [f[1] for f in findings(tree / "configs", ".")] == ["DS102"]
    # from the top too: each file gets the nearest configuration above it, as in ruff
    assert findings(tree, ".") == [("configs/templates/ds102.json", "DS102", "error")]
    write(tree, {"third_party/dslint.toml": 'select = ["DS002"]\n'})
    assert findings(tree, ".") == [("configs/templates/ds102.json", "DS102", "error"), ("third_party/vendor/ds002.json", "DS002", "error")]
    # named one by one, as pre-commit passes them: the same settings per file
    named = findings(tree, "configs/ds101.json", "configs/templates/ds102.json", "third_party/vendor/ds002.json")
    assert named == findings(tree, ".")


def test_settings_of_a_repository_checked_from_elsewhere(tree, tmp_path_factory):
    write(tree, {"pyproject.toml": '[tool.dslint]\nignore = ["DS101", "DS002"]\n'})
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "dslint.toml").write_text('select = ["DS002"]\n', encoding="utf-8")  # the working directory's: not the repository's
    shown = os.path.relpath(tree, elsewhere)
    assert findings(elsewhere, str(tree)) == [(f"{shown}/configs/templates/ds102.json", "DS102", "error")]
    assert findings(elsewhere, str(tree / "configs" / "ds101.json")) == []


def test_a_broken_nested_configuration_is_a_usage_error(tree):
    write(tree, {"configs/dslint.toml": "select = [\n"})
    proc = run(tree, ".")
    assert proc.returncode == 2
    assert "configs/dslint.toml: not valid TOML" in proc.stderr


def test_config_option_and_no_config(tree):
    write(tree, {"dslint.toml": 'select = ["DS101"]\n', "other/custom.toml": 'select = ["DS002"]\n', "other/pyproject.toml": '[tool.dslint]\nselect = ["DS102"]\n'})
    assert [f[1] for f in findings(tree)] == ["DS101"]
    assert [f[1] for f in findings(tree, "--config", "other/custom.toml")] == ["DS002"]
    assert [f[1] for f in findings(tree, "--config", "other/pyproject.toml")] == ["DS102"]
    assert findings(tree, "--no-config") == ALL


def test_config_option_bad_file(tree):
    write(tree, {"bad.toml": "select = [\n"})
    proc = run(tree, "--config", "bad.toml")
    assert proc.returncode == 2 and "not valid TOML" in proc.stderr
    proc = run(tree, "--config", "configs")
    assert proc.returncode == 2


def test_command_line_wins(tree):
    write(tree, {"dslint.toml": 'select = ["DS101"]\nfail-on = "error"\nworld-size = 4\n'})
    assert [f[1] for f in findings(tree, "--select", "DS102")] == ["DS102"]
    write(tree, {"dslint.toml": 'severity = { DS101 = "warning" }\nfail-on = "error"\n'})
    assert run(tree, "configs/ds101.json", core=True).returncode == 0
    assert run(tree, "configs/ds101.json", "--fail-on", "warning", core=True).returncode == 1


# ---- every setting -------------------------------------------------------------------------


def test_select_ignore_extend_select(tree):
    write(tree, {"dslint.toml": 'select = ["DS1"]\nignore = ["batch-value-type"]\nextend-select = ["duplicate-key"]\n'})
    assert findings(tree) == [ALL[0], ALL[2]]
    write(tree, {"dslint.toml": 'select = "DS101, DS102"\n'})  # a comma-separated string is a list too
    assert findings(tree) == ALL[:2]


def test_per_file_ignores(tree):
    write(tree, {"dslint.toml": 'per-file-ignores = { "configs/templates/*.json" = ["DS101", "DS102"], "third_party/**" = ["duplicate-key"] }\n'})
    assert findings(tree) == [ALL[0]]
    # Globs are relative to the configuration file, wherever dslint runs.
    assert findings(tree / "configs", ".") == [("ds101.json", "DS101", "error")]
    write(tree, {"dslint.toml": 'per-file-ignores = { "*.json" = "DS1" }\n'})  # file name only, a prefix, a string
    assert findings(tree) == [ALL[2]]
    write(tree, {"dslint.toml": 'per-file-ignores = { "**/vendor/*.json" = ["ALL"], "configs/*" = ["all"] }\n'})
    assert findings(tree) == []


def test_per_file_ignores_only_for_matching_files(tree):
    write(tree, {"dslint.toml": 'per-file-ignores = { "templates/*.json" = ["DS102"] }\n'})
    # The glob is relative to the configuration file's directory: configs/templates does not match.
    assert findings(tree) == ALL


def test_severity_override(tree):
    write(tree, {"dslint.toml": 'severity = { DS101 = "warning", batch-value-type = "info" }\n'})
    assert findings(tree) == [
        ("configs/ds101.json", "DS101", "warning"),
        ("configs/templates/ds102.json", "DS102", "info"),
        ALL[2],
    ]
    text = run(tree, "configs", core=True).stdout
    assert "configs/ds101.json:1:22: DS101 [warning]" in text
    assert "Found 1 warning, 1 info in 2 files." in text


def test_fail_on(tree):
    write(tree, {"dslint.toml": 'severity = { DS101 = "warning" }\nfail-on = "error"\n'})
    assert run(tree, "configs/ds101.json", core=True).returncode == 0
    write(tree, {"dslint.toml": 'severity = { DS101 = "info" }\nfail-on = "info"\n'})
    assert run(tree, "configs/ds101.json", core=True).returncode == 1
    write(tree, {"dslint.toml": 'severity = { DS101 = "info" }\n'})
    assert run(tree, "configs/ds101.json", core=True).returncode == 0


def test_exclude_walked_and_explicit_files(tree):
    write(tree, {"dslint.toml": 'exclude = ["third_party/*", "configs/templates"]\n'})
    assert findings(tree) == [ALL[0]]
    proc = run(tree, "-v", ".", core=True)
    assert "dslint: skipped third_party/vendor/: excluded by 'third_party/*' (exclude in dslint.toml)" in proc.stderr
    # A file named on the command line is read, as in ruff ...
    assert findings(tree, "third_party/vendor/ds002.json", "configs/ds101.json") == [ALL[0], ALL[2]]
    # ... unless --force-exclude (or force-exclude = true) asks for the exclusions there too, as pre-commit does.
    proc = run(tree, "-v", "--force-exclude", "third_party/vendor/ds002.json", "configs/ds101.json", core=True)
    assert proc.returncode == 1
    assert "ds002.json" not in proc.stdout
    assert "dslint: skipped third_party/vendor/ds002.json: excluded by 'third_party/*' (exclude in dslint.toml)" in proc.stderr
    write(tree, {"dslint.toml": 'exclude = ["third_party/*", "configs/templates"]\nforce-exclude = true\n'})
    assert findings(tree, "third_party/vendor/ds002.json", "configs/ds101.json") == [ALL[0]]
    assert findings(tree, "--no-force-exclude", "third_party/vendor/ds002.json") == [ALL[2]]
    # Relative to the configuration file, also from a subdirectory.
    assert findings(tree / "third_party", ".") == []
    assert findings(tree / "configs", ".") == [("ds101.json", "DS101", "error")]


def test_exclude_and_extend_exclude_on_the_command_line(tree):
    write(tree, {"dslint.toml": 'exclude = ["third_party"]\nextend-exclude = ["templates"]\n'})
    assert findings(tree) == [ALL[0]]
    # --exclude replaces the exclude setting (extend-exclude stays); its globs are relative to the working directory
    assert findings(tree, "--exclude", "configs/ds1*.json") == [ALL[2]]
    assert findings(tree / "configs", "--exclude", "ds1*.json", "..") == [("../third_party/vendor/ds002.json", "DS002", "error")]
    # --extend-exclude adds to both
    assert findings(tree, "--extend-exclude", "ds101.json") == []
    assert findings(tree, "--exclude", "", "--extend-exclude", "vendor,ds101.json") == []
    assert findings(tree, "--no-config") == ALL
    assert findings(tree, "--no-config", "--extend-exclude", "third_party,templates") == [ALL[0]]


def test_exclude_by_file_name(tree):
    write(tree, {"dslint.toml": 'exclude = ["ds1*.json"]\n'})
    assert findings(tree) == [ALL[2]]


def test_world_size(tree):
    write(tree, {"ws.json": WORLD_JSON, "dslint.toml": "world-size = 4\n"})
    proc = run(tree, "ws.json", "--format", "json", core=True)
    assert proc.returncode == 1
    (diagnostic,) = json.loads(proc.stdout)["diagnostics"]
    assert "64 != 4 * 8 * 4" in diagnostic["message"]
    origin = [r for r in diagnostic["related"] if r["path"] is None]
    assert len(origin) == 1 and origin[0]["message"].startswith("world size 4 from world-size in ")
    assert origin[0]["message"].endswith("dslint.toml")
    assert run(tree, "ws.json", "--world-size", "2", core=True).returncode == 0
    write(tree, {"dslint.toml": "world-size = 2\n"})
    assert run(tree, "ws.json", core=True).returncode == 0


def test_target_hardware_and_deepspeed_version(tree):
    write(tree, {"dslint.toml": 'target = "npu"\nhardware = "Ascend-910B"\ndeepspeed-version = "0.19.8"\n'})
    assert run(tree).returncode == 1  # accepted; the findings are unchanged
    settings = load_settings(tree / "dslint.toml")
    assert settings.target.value == "npu"
    assert settings.hardware.value == "ascend-910b"
    assert settings.deepspeed_version.value == "0.19.8"
    assert settings.target.origin.startswith("target in ")


def test_all_settings_together(tree):
    write(tree, {"pyproject.toml": """
[tool.dslint]
select = ["ALL"]
ignore = ["DS102"]
extend-select = []
per-file-ignores = { "configs/templates/*.json" = ["DS101", "DS102"] }
severity = { DS101 = "warning" }
fail-on = "warning"
exclude = ["third_party/*"]
world-size = 8
target = "gpu"
hardware = "a100-80gb"
deepspeed-version = "0.19.8"
"""})
    assert findings(tree) == [("configs/ds101.json", "DS101", "warning")]
    settings = load_settings(tree / "pyproject.toml")
    assert settings.world_size.value == 8 and settings.fail_on is Severity.WARNING
    assert settings.root == tree


def test_defaults_without_a_file(tmp_path):
    settings = load_settings(None, search_from=tmp_path)
    assert settings == Settings(root=settings.root)
    assert settings.select == ["ALL"] and settings.fail_on is Severity.WARNING and settings.path is None


# ---- mistakes are usage errors -------------------------------------------------------------


@pytest.mark.parametrize("text,message", [
    ('selct = ["DS1"]\n', "unknown setting 'selct'; did you mean 'select'?"),
    ('world_size = 4\n', "unknown setting 'world_size'; did you mean 'world-size'?"),
    ('per-file-ignore = {}\n', "did you mean 'per-file-ignores'?"),
    ('colour = "never"\n', "unknown setting 'colour'; known settings: select, ignore"),
])
def test_unknown_setting(tree, text, message):
    write(tree, {"dslint.toml": text})
    proc = run(tree)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert proc.stdout == ""


def test_unknown_setting_in_pyproject(tree):
    write(tree, {"pyproject.toml": "[tool.dslint]\nexlude = []\n"})
    proc = run(tree)
    assert proc.returncode == 2
    assert "pyproject.toml: unknown setting 'exlude'; did you mean 'exclude'?" in proc.stderr


@pytest.mark.parametrize("text,message", [
    ("select = 3\n", "'select' must be a list of strings, not an integer"),
    ("select = [1]\n", "'select' must be a list of strings, but holds an integer"),
    ('ignore = { DS101 = true }\n', "'ignore' must be a list of strings, not a table"),
    ('exclude = [["a"]]\n', "'exclude' must be a list of strings"),
    ('extend-exclude = [1]\n', "'extend-exclude' must be a list of strings"),
    ('respect-gitignore = "no"\n', "'respect-gitignore' must be true or false, not a string"),
    ('force-exclude = 1\n', "'force-exclude' must be true or false, not an integer"),
    ('world-size = "8"\n', "'world-size' must be an integer, not a string"),
    ("world-size = true\n", "'world-size' must be an integer, not a boolean"),
    ("world-size = 2.0\n", "'world-size' must be an integer, not a number"),
    ("world-size = 0\n", "world-size must be at least 1"),
    ('fail-on = "fatal"\n', "unknown severity 'fatal'"),
    ("fail-on = 2\n", "'fail-on' must be a string"),
    ('severity = "warning"\n', "'severity' must be a table"),
    ('severity = { DS101 = "warn" }\n', "unknown severity 'warn'"),
    ("severity = { DS101 = 2 }\n", "severity of 'DS101' must be a string"),
    ('severity = { DS999 = "info" }\n', "severity: unknown rule(s) DS999"),
    ('severity = { DS1 = "info" }\n', "severity: unknown rule(s) DS1"),
    ('per-file-ignores = ["*.json"]\n', "'per-file-ignores' must be a table"),
    ('per-file-ignores = { "*.json" = 3 }\n', "per-file-ignores '*.json' must be a list of rule codes or names"),
    ('per-file-ignores = { "*.json" = ["DS999"] }\n', "per-file-ignores '*.json': unknown rule selector(s): DS999"),
    ('select = ["DS99"]\n', "unknown rule selector(s): DS99"),
    ('target = "tpu"\n', "target must be one of gpu, npu"),
    ("target = 1\n", "'target' must be a string"),
    ('hardware = "a100-80g"\n', "unknown hardware 'a100-80g'; did you mean 'a100-80gb'?"),
    ('deepspeed-version = 0.19\n', "'deepspeed-version' must be a string, not a number"),
    ("select = [\n", "not valid TOML"),
])
def test_wrong_values(tree, text, message):
    write(tree, {"dslint.toml": text})
    proc = run(tree)
    assert proc.returncode == 2, proc.stdout
    assert message in proc.stderr, proc.stderr
    assert proc.stderr.startswith("dslint: error: ")


def test_tool_dslint_must_be_a_table(tmp_path):
    write(tmp_path, {"pyproject.toml": '[tool]\ndslint = "on"\n'})
    with pytest.raises(ConfigError, match="must be a table"):
        load_settings(tmp_path / "pyproject.toml")
    assert run(tmp_path, "--config", "pyproject.toml").returncode == 2


def test_respect_gitignore_setting(tree):
    write(tree, {".gitignore": "third_party/\n", "dslint.toml": "respect-gitignore = false\n"})
    (tree / ".git").mkdir()
    (tree / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    assert findings(tree) == ALL
    write(tree, {"dslint.toml": "respect-gitignore = true\n"})
    assert findings(tree) == ALL[:2]
    assert findings(tree, "--no-respect-gitignore") == ALL
    write(tree, {"dslint.toml": "respect-gitignore = false\n"})
    assert findings(tree, "--respect-gitignore") == ALL[:2]
