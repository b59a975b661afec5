"""The command line end to end: ``python -m dslint`` in a temporary directory, as a user runs it.

Covers the commands (check, the ``dslint PATHS`` shorthand, rules, rule, --version), exit codes,
rule selection, --world-size, standard input, --fix / --diff / --unsafe-fixes and the two
contracts CI tools parse: the JSON object (version 1) and the text location line.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from dslint import __version__
from cli_support import invoke
from programs import HF_TRAINER

# train_batch_size 48 is not a multiple of 4 * 8: DS101 at 1:22 without any world size (safe fix).
DS101_JSON = '{"train_batch_size": 48, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8}\n'
# Consistent for world size 2 (4 * 8 * 2 = 64), a DS101 mismatch for world size 4.
WORLD_JSON = '{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8}\n'
# A numeric string: DS102 at 2:37 (safe fix).
DS102_JSON = '{\n  "train_micro_batch_size_per_gpu": "4",\n  "gradient_accumulation_steps": 2\n}\n'
# A duplicate key: DS002 at 4:3 (unsafe fix), related to the first occurrence at 2:3.
DS002_JSON = '{\n  "steps_per_print": 10,\n  "train_micro_batch_size_per_gpu": 4,\n  "steps_per_print": 20\n}\n'
CLEAN_JSON = '{"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8}\n'
BROKEN_YAML = "model_name_or_path: meta-llama/Llama-3.1-8B\noutput_dir: out\n  learning_rate: 1.0e-5\n"

BUILTIN = ["DS001", "DS002", "DS003", "DS101", "DS102"]
# Runs select the rules these fixtures are about, so that rules added later (which may well have
# something to say about them) do not change the expected output; selection itself is tested
# with core=False, comparing only these rules' findings.
CORE = ",".join(BUILTIN)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "NO_COLOR", "PYTHONIOENCODING")}
    env["NO_COLOR"] = "1"
    env.update(extra)
    return env


def run(cwd: Path, *args: str, stdin: str | bytes | None = None, env: dict | None = None, core: bool = True) -> subprocess.CompletedProcess:
    """``python -m dslint ARGS`` in ``cwd``; stdout and stderr decoded as UTF-8.

    With ``core``, a check run gets ``--select CORE`` unless it selects rules itself.
    """
    data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
    if core and not (args and args[0] in ("rules", "rule", "--version")) and "--select" not in args:
        args = (*args, "--select", CORE)
    proc = subprocess.run(
        [sys.executable, "-m", "dslint", *args],
        cwd=cwd,
        input=data,
        capture_output=True,
        env=env or _env(),
        timeout=120,
    )
    proc.stdout = proc.stdout.decode("utf-8")
    proc.stderr = proc.stderr.decode("utf-8")
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)


def codes(proc: subprocess.CompletedProcess) -> list[tuple[str, str]]:
    """(path, code) of every diagnostic of a ``--format json`` run, for the rules in BUILTIN."""
    return [(d["path"], d["code"]) for d in json.loads(proc.stdout)["diagnostics"] if d["code"] in BUILTIN]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write(tmp_path, {"ds101.json": DS101_JSON, "ds102.json": DS102_JSON, "ds002.json": DS002_JSON, "clean.json": CLEAN_JSON})
    return tmp_path


# ---- commands ------------------------------------------------------------------------------


def test_version(tmp_path):
    proc = run(tmp_path, "--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"dslint {__version__}"


def test_check_and_shorthand_are_the_same(project):
    long = run(project, "check", "ds101.json", "ds102.json")
    short = run(project, "ds101.json", "ds102.json")
    assert long.returncode == short.returncode == 1
    assert long.stdout == short.stdout
    assert "ds101.json:1:22: DS101 [error]" in long.stdout


def test_default_path_is_the_working_directory(project):
    write(project, {"nested/deeper/ds.json": DS101_JSON})
    for args in ((), ("check",), ("--format", "json")):
        proc = run(project, *args)
        assert proc.returncode == 1, args
    found = codes(run(project, "--format", "json"))
    assert ("nested/deeper/ds.json", "DS101") in found
    assert sorted(found) == sorted(codes(run(project, "check", ".", "--format", "json")))


def test_console_script_entry_point(project):
    script = shutil.which("dslint")
    if script is None:
        pytest.skip("the dslint console script is not on PATH (package not installed)")
    proc = subprocess.run([script, "ds101.json", "--select", CORE], cwd=project, capture_output=True, text=True, env=_env(), timeout=120)
    assert proc.returncode == 1
    assert proc.stdout.startswith("ds101.json:1:22: DS101 [error]")


def test_rules_lists_every_builtin_rule(tmp_path):
    proc = run(tmp_path, "rules")
    assert proc.returncode == 0
    listed = [line.split()[0] for line in proc.stdout.splitlines() if line.strip()]
    for code in BUILTIN:
        assert code in listed
    assert re.match(r"code\s+name\s+severity\s+fix\s+summary$", proc.stdout.splitlines()[0])
    assert re.search(r"^DS101\s+batch-size-mismatch\s+error\s+unsafe\s+\S", proc.stdout, re.MULTILINE)
    assert re.search(r"^DS102\s+batch-value-type\s+error\s+safe\s+\S", proc.stdout, re.MULTILINE)
    assert re.search(r"^DS201\s+unknown-key\s+error\s+safe/unsafe\s+\S", proc.stdout, re.MULTILINE)
    assert re.search(r"^DS001\s+syntax-error\s+error\s+-\s+The file", proc.stdout, re.MULTILINE)


def test_rules_json(tmp_path):
    proc = run(tmp_path, "rules", "--format", "json")
    assert proc.returncode == 0
    rows = json.loads(proc.stdout)
    assert isinstance(rows, list)
    by_code = {row["code"]: row for row in rows}
    assert set(BUILTIN) <= set(by_code)
    for row in rows:
        assert set(row) == {"code", "name", "severity", "fixable", "fix", "summary", "origin"}
        assert row["fix"] in ("safe", "unsafe", "safe or unsafe", None)
        assert row["fixable"] is (row["fix"] is not None)
        assert row["severity"] in ("error", "warning", "info")
        assert row["summary"] and "\n" not in row["summary"]
    assert by_code["DS101"] == {
        "code": "DS101",
        "name": "batch-size-mismatch",
        "severity": "error",
        "fixable": True,
        "fix": "unsafe",
        "summary": "train_batch_size does not equal micro batch × gradient accumulation × world size.",
        "origin": "batch",
    }
    assert by_code["DS001"]["fixable"] is False and by_code["DS001"]["fix"] is None
    assert by_code["DS201"]["fix"] == "safe or unsafe"


@pytest.mark.parametrize("which", ["DS101", "ds101", "batch-size-mismatch"])
def test_rule_page(tmp_path, which):
    proc = run(tmp_path, "rule", which)
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert lines[0] == "# DS101 batch-size-mismatch"
    assert "Default severity: error. Fix: unsafe." in proc.stdout
    for heading in ("## What it checks", "## Why it matters", "## Example", "## Fix safety"):
        assert heading in proc.stdout


@pytest.mark.parametrize("which", ["DS999", "no-such-rule"])
def test_unknown_rule_page(tmp_path, which):
    proc = run(tmp_path, "rule", which)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert which in proc.stderr and "dslint rules" in proc.stderr


# ---- exit codes ----------------------------------------------------------------------------


def test_exit_clean(project):
    proc = run(project, "clean.json")
    assert proc.returncode == 0
    assert proc.stdout == "All checks passed (1 file checked).\n"


def test_exit_findings(project):
    assert run(project, "ds101.json").returncode == 1


def test_exit_unknown_path(project):
    proc = run(project, "clean.json", "missing.json")
    assert proc.returncode == 2
    assert "missing.json: no such file or directory" in proc.stderr


@pytest.mark.parametrize("option", ["--select", "--ignore", "--extend-select"])
def test_exit_unknown_selector(project, option):
    proc = run(project, option, "DS99", "ds101.json")
    assert proc.returncode == 2
    assert "unknown rule selector(s): DS99" in proc.stderr
    assert proc.stdout == ""


def test_exit_bad_config(project):
    write(project, {"dslint.toml": 'selct = ["DS1"]\n'})
    proc = run(project, "ds101.json")
    assert proc.returncode == 2
    assert "unknown setting 'selct'; did you mean 'select'?" in proc.stderr
    assert run(project, "--no-config", "ds101.json").returncode == 1


def test_exit_missing_config_file(project):
    proc = run(project, "--config", "nope.toml", "clean.json")
    assert proc.returncode == 2
    assert "nope.toml" in proc.stderr


def test_exit_zero(project):
    proc = run(project, "--exit-zero", "ds101.json")
    assert proc.returncode == 0
    assert "DS101 [error]" in proc.stdout


def test_fail_on(project):
    write(project, {"dslint.toml": '[severity]\nDS101 = "warning"\nbatch-value-type = "info"\n'})
    warning = run(project, "ds101.json")
    assert warning.returncode == 1  # default fail-on: warning
    assert "DS101 [warning]" in warning.stdout
    assert "Found 1 warning in 1 file." in warning.stdout
    assert run(project, "--fail-on", "error", "ds101.json").returncode == 0
    info = run(project, "ds102.json")
    assert "DS102 [info]" in info.stdout and info.returncode == 0
    assert run(project, "--fail-on", "info", "ds102.json").returncode == 1
    assert run(project, "--fail-on", "fatal", "ds102.json").returncode == 2


# ---- selection -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args,expected",
    [
        ((), {"DS002", "DS101", "DS102"}),
        (("--select", "DS102"), {"DS102"}),
        (("--select", "DS1"), {"DS101", "DS102"}),
        (("--select", "batch-value-type"), {"DS102"}),
        (("--select", "DS101,duplicate-key"), {"DS101", "DS002"}),
        (("--select", "DS101", "--select", "DS002"), {"DS101", "DS002"}),
        (("--select", "all"), {"DS002", "DS101", "DS102"}),
        (("--ignore", "DS1"), {"DS002"}),
        (("--ignore", "duplicate-key"), {"DS101", "DS102"}),
        (("--ignore", "DS101", "--ignore", "DS102"), {"DS002"}),
        (("--select", "DS1", "--ignore", "batch-size-mismatch"), {"DS102"}),
        (("--select", "DS002", "--extend-select", "DS101"), {"DS002", "DS101"}),
        (("--select", "DS002", "--extend-select", "DS1", "--ignore", "DS102"), {"DS002", "DS101"}),
    ],
)
def test_selection(project, args, expected):
    proc = run(project, *args, "--format", "json", core=False)
    assert {code for _, code in codes(proc)} == expected
    if expected:
        assert proc.returncode == 1


def test_extend_select_adds_to_configured_select(project):
    write(project, {"dslint.toml": 'select = ["DS002"]\n'})
    assert {c for _, c in codes(run(project, "--format", "json", core=False))} == {"DS002"}
    assert {c for _, c in codes(run(project, "--format", "json", "--extend-select", "DS102", core=False))} == {"DS002", "DS102"}
    # --select replaces the configured selection.
    assert {c for _, c in codes(run(project, "--format", "json", "--select", "DS101"))} == {"DS101"}


# ---- world size ----------------------------------------------------------------------------


def test_world_size(tmp_path):
    write(tmp_path, {"ds.json": WORLD_JSON})
    assert run(tmp_path, "ds.json").returncode == 0
    assert run(tmp_path, "--world-size", "2", "ds.json").returncode == 0
    proc = run(tmp_path, "--world-size", "4", "ds.json", "--format", "json")
    assert proc.returncode == 1
    (diagnostic,) = json.loads(proc.stdout)["diagnostics"]
    assert diagnostic["code"] == "DS101"
    assert "64 != 4 * 8 * 4" in diagnostic["message"]
    from_cli = [r for r in diagnostic["related"] if r["path"] is None]
    assert from_cli == [{"path": None, "line": None, "column": None, "message": "world size 4 from --world-size on the command line"}]
    text = run(tmp_path, "--world-size", "4", "ds.json").stdout
    assert "  = world size 4 from --world-size on the command line" in text


@pytest.mark.parametrize("value", ["0", "-1", "two"])
def test_world_size_must_be_positive(tmp_path, value):
    write(tmp_path, {"ds.json": WORLD_JSON})
    assert run(tmp_path, "--world-size", value, "ds.json").returncode == 2


# ---- standard input ------------------------------------------------------------------------


def test_stdin_json(tmp_path):
    proc = run(tmp_path, "-", "--stdin-filename", "configs/ds.json", "--format", "json", stdin=DS102_JSON)
    assert proc.returncode == 1
    (diagnostic,) = json.loads(proc.stdout)["diagnostics"]
    assert (diagnostic["path"], diagnostic["line"], diagnostic["column"], diagnostic["code"]) == ("configs/ds.json", 2, 37, "DS102")
    assert diagnostic["fix"]["edits"][0]["path"] == "configs/ds.json"
    assert not (tmp_path / "configs").exists()


def test_stdin_yaml(tmp_path):
    proc = run(tmp_path, "check", "-", "--stdin-filename", "train.yaml", stdin=BROKEN_YAML)
    assert proc.returncode == 1
    assert proc.stdout.startswith("train.yaml:3:16: DS001 [error] not valid YAML for PyYAML safe_load: mapping values are not allowed")


def test_stdin_clean_and_crlf_bom(tmp_path):
    assert run(tmp_path, "-", "--stdin-filename", "ds.json", stdin=CLEAN_JSON).returncode == 0
    data = b"\xef\xbb\xbf" + DS102_JSON.replace("\n", "\r\n").encode()
    proc = run(tmp_path, "-", "--stdin-filename", "ds.json", "--format", "json", stdin=data)
    (diagnostic,) = json.loads(proc.stdout)["diagnostics"]
    assert (diagnostic["line"], diagnostic["column"], diagnostic["end_column"]) == (2, 37, 40)


def test_stdin_cannot_be_mixed_and_is_fixed_in_memory(project):
    """'-' with other paths is a usage error. --fix on it prints the fixed text (tests/test_cli_habits.py),
    --diff the diff; neither writes a file, whatever --stdin-filename names."""
    assert run(project, "-", "clean.json", stdin=CLEAN_JSON).returncode == 2
    before = {path.name: path.read_bytes() for path in project.iterdir() if path.is_file()}
    fixed = run(project, "-", "--fix", "--stdin-filename", "ds.json", stdin=DS102_JSON)
    assert fixed.returncode == 0 and fixed.stdout == DS102_JSON.replace('"4"', "4")
    diff = run(project, "-", "--diff", "--stdin-filename", "ds.json", stdin=DS102_JSON)
    assert diff.returncode == 1 and diff.stdout.startswith("--- a/ds.json")
    assert {path.name: path.read_bytes() for path in project.iterdir() if path.is_file()} == before


def test_stdin_filename_honours_per_file_ignores(tmp_path):
    write(tmp_path, {"dslint.toml": 'per-file-ignores = { "templates/*.json" = ["DS102"] }\n'})
    assert run(tmp_path, "-", "--stdin-filename", "templates/ds.json", stdin=DS102_JSON).returncode == 0
    assert run(tmp_path, "-", "--stdin-filename", "configs/ds.json", stdin=DS102_JSON).returncode == 1


# ---- --fix, --diff, --unsafe-fixes ---------------------------------------------------------


def test_diff_writes_nothing(project):
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in project.iterdir()}
    proc = run(project, "--diff")
    assert proc.returncode == 1
    assert "--- a/ds102.json\n+++ b/ds102.json\n" in proc.stdout
    assert '-  "train_micro_batch_size_per_gpu": "4",\n+  "train_micro_batch_size_per_gpu": 4,\n' in proc.stdout
    assert "ds101.json" not in proc.stdout  # its fix changes the global batch: unsafe
    assert "ds002.json" not in proc.stdout  # its fix is unsafe
    after = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in project.iterdir()}
    assert after == before


def test_diff_is_a_patch(project):
    if shutil.which("patch") is None:
        pytest.skip("patch(1) is not installed")
    write(project, {"nonl.json": DS102_JSON.rstrip("\n")})
    proc = run(project, "--diff", "--unsafe-fixes")
    copy = project.parent / "patched"
    shutil.copytree(project, copy)
    subprocess.run(["patch", "-p1", "-s"], input=proc.stdout.encode(), cwd=copy, check=True, timeout=60)
    run(project, "--fix", "--unsafe-fixes")
    for path in project.iterdir():
        assert (copy / path.name).read_bytes() == path.read_bytes(), path.name


def test_diff_clean_and_unsafe(project):
    proc = run(project, "--diff", "clean.json", "ds002.json")
    assert (proc.returncode, proc.stdout) == (0, "")
    proc = run(project, "--diff", "--unsafe-fixes", "ds002.json")
    assert proc.returncode == 1
    assert '-  "steps_per_print": 10,\n' in proc.stdout
    assert (project / "ds002.json").read_text() == DS002_JSON


def test_fix(project):
    proc = run(project, "--fix", "--show-fixes")
    assert proc.returncode == 1  # the duplicate key and the global batch have only unsafe fixes
    assert "fixed ds102.json: DS102 Write the number 4" in proc.stdout
    assert "fixed ds101.json" not in proc.stdout
    assert "Fixed 1 problem. Found 2 errors in 4 files." in proc.stdout
    assert (project / "ds102.json").read_text() == DS102_JSON.replace('"4"', "4")
    assert (project / "ds101.json").read_text() == DS101_JSON
    assert (project / "ds002.json").read_text() == DS002_JSON
    proc = run(project, "--fix", "--unsafe-fixes")
    assert proc.returncode == 0
    assert proc.stdout == "Fixed 2 problems. All checks passed (4 files checked).\n"
    assert (project / "ds101.json").read_text() == CLEAN_JSON
    assert (project / "ds002.json").read_text() == '{\n  "train_micro_batch_size_per_gpu": 4,\n  "steps_per_print": 20\n}\n'
    again = run(project, "--fix", "--unsafe-fixes")
    assert (again.returncode, again.stdout) == (0, "All checks passed (4 files checked).\n")
    assert not [p for p in project.iterdir() if p.name.startswith(".dslint-")]  # no temporary files left


def test_fix_keeps_crlf_bom_mode_and_missing_final_newline(tmp_path):
    original = DS102_JSON.replace("\n", "\r\n").rstrip("\r\n")
    (tmp_path / "ds.json").write_bytes(b"\xef\xbb\xbf" + original.encode())
    os.chmod(tmp_path / "ds.json", 0o640)
    (tmp_path / "ds101.json").write_bytes(b"{\r\n" + b'  "train_batch_size": 48,\r\n  "train_micro_batch_size_per_gpu": 4,\r\n  "gradient_accumulation_steps": 8\r\n}')
    os.chmod(tmp_path / "ds101.json", 0o755)
    proc = run(tmp_path, "--fix", "--unsafe-fixes")  # DS101's removal changes the global batch: unsafe
    assert proc.returncode == 0, proc.stdout
    data = (tmp_path / "ds.json").read_bytes()
    assert data == b"\xef\xbb\xbf" + original.replace('"4"', "4").encode()
    assert stat.S_IMODE((tmp_path / "ds.json").stat().st_mode) == 0o640
    data = (tmp_path / "ds101.json").read_bytes()
    assert data == b'{\r\n  "train_micro_batch_size_per_gpu": 4,\r\n  "gradient_accumulation_steps": 8\r\n}'
    assert stat.S_IMODE((tmp_path / "ds101.json").stat().st_mode) == 0o755
    assert run(tmp_path, "--fix").stdout == "All checks passed (2 files checked).\n"
    assert (tmp_path / "ds101.json").read_bytes() == data


def test_fix_through_a_symbolic_link_keeps_the_link(tmp_path):
    write(tmp_path, {"real/ds.json": DS102_JSON})
    (tmp_path / "link.json").symlink_to("real/ds.json")
    assert run(tmp_path, "--fix", "link.json").returncode == 0
    assert (tmp_path / "link.json").is_symlink()
    assert (tmp_path / "real/ds.json").read_text() == DS102_JSON.replace('"4"', "4")


def test_fix_leaves_a_file_with_a_syntax_error_alone(tmp_path):
    broken = '{\n  "train_micro_batch_size_per_gpu": "4",\n  "zero_optimization": {"stage": [1, 2}\n}\n'
    write(tmp_path, {"ds.json": broken})
    proc = run(tmp_path, "--fix", "--format", "json")
    assert proc.returncode == 1
    assert (tmp_path / "ds.json").read_text() == broken
    assert "DS001" in {c for _, c in codes(proc)}


# ---- the JSON contract ---------------------------------------------------------------------

DIAGNOSTIC_KEYS = {"path", "line", "column", "end_line", "end_column", "code", "name", "severity", "message", "detail", "related", "fix"}
DETAIL_KEYS = {"notes", "help"}
RELATED_KEYS = {"path", "line", "column", "message"}
FIX_KEYS = {"applicability", "title", "edits"}
EDIT_KEYS = {"path", "start_line", "start_column", "end_line", "end_column", "content"}


def _position(value) -> bool:
    return type(value) is int and value >= 1


def check_contract(payload: dict) -> None:
    """Every key and type of the version 1 JSON output, exactly."""
    assert set(payload) == {"version", "diagnostics", "summary"}
    assert payload["version"] == 1 and type(payload["version"]) is int
    summary = payload["summary"]
    assert set(summary) == {"files", "errors", "warnings", "infos", "fixable"}
    assert all(type(v) is int and v >= 0 for v in summary.values())
    diagnostics = payload["diagnostics"]
    assert isinstance(diagnostics, list)
    for d in diagnostics:
        assert set(d) == DIAGNOSTIC_KEYS, d
        assert isinstance(d["path"], str) and d["path"]
        assert all(_position(d[k]) for k in ("line", "column", "end_line", "end_column")), d
        assert (d["end_line"], d["end_column"]) >= (d["line"], d["column"])
        assert re.fullmatch(r"[A-Z]{1,5}[0-9]{2,4}", d["code"])
        assert re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", d["name"])
        assert d["severity"] in ("error", "warning", "info")
        assert isinstance(d["message"], str) and d["message"]
        assert set(d["detail"]) == DETAIL_KEYS
        assert all(isinstance(note, str) and note for note in d["detail"]["notes"])
        assert d["detail"]["help"] is None or isinstance(d["detail"]["help"], str) and d["detail"]["help"]
        assert isinstance(d["related"], list)
        for r in d["related"]:
            assert set(r) == RELATED_KEYS
            assert isinstance(r["message"], str)
            if r["path"] is None:
                assert r["line"] is None and r["column"] is None
            else:
                assert isinstance(r["path"], str) and _position(r["line"]) and _position(r["column"])
        fix = d["fix"]
        if fix is not None:
            assert set(fix) == FIX_KEYS
            assert fix["applicability"] in ("safe", "unsafe")
            assert isinstance(fix["title"], str) and fix["title"]
            assert isinstance(fix["edits"], list) and fix["edits"]
            for e in fix["edits"]:
                assert set(e) == EDIT_KEYS
                assert isinstance(e["path"], str) and isinstance(e["content"], str)
                assert all(_position(e[k]) for k in ("start_line", "start_column", "end_line", "end_column"))
                assert (e["end_line"], e["end_column"]) >= (e["start_line"], e["start_column"])
    tally = {"errors": "error", "warnings": "warning", "infos": "info"}
    for key, severity in tally.items():
        assert summary[key] == sum(1 for d in diagnostics if d["severity"] == severity)
    assert summary["fixable"] == sum(1 for d in diagnostics if d["fix"] is not None)
    assert diagnostics == sorted(diagnostics, key=lambda d: (d["path"], d["line"], d["column"], d["code"], d["message"]))


CJK_JSON = (
    "{\n"
    "  // 批次大小：每卡 4，累积 8\n"
    '  /* 全局批次大小 */ "train_batch_size": 48,\n'
    '  "train_micro_batch_size_per_gpu": 4,\n'
    '  "gradient_accumulation_steps": 8\n'
    "}\n"
)


def test_json_contract(project):
    write(project, {"cjk.json": CJK_JSON, "broken.yaml": BROKEN_YAML})
    proc = run(project, "--format", "json")
    assert proc.returncode == 1
    payload = json.loads(proc.stdout)
    check_contract(payload)
    assert payload["summary"] == {"files": 6, "errors": 5, "warnings": 0, "infos": 0, "fixable": 4}
    by_path = {(d["path"], d["code"]): d for d in payload["diagnostics"]}
    assert sorted(by_path) == [
        ("broken.yaml", "DS001"), ("cjk.json", "DS101"), ("ds002.json", "DS002"), ("ds101.json", "DS101"), ("ds102.json", "DS102"),
    ]

    # Columns count characters: the CJK text before the value is not counted in bytes.
    cjk = by_path[("cjk.json", "DS101")]
    line = CJK_JSON.splitlines()[2]
    column = line.index("48") + 1
    assert column == 36 and len(line[: column - 1].encode()) + 1 == 48  # column 36 in characters, 48 in bytes
    assert (cjk["line"], cjk["column"], cjk["end_line"], cjk["end_column"]) == (3, column, 3, column + 2)
    assert line[cjk["column"] - 1 : cjk["end_column"] - 1] == "48"  # end is exclusive
    assert cjk["name"] == "batch-size-mismatch" and cjk["severity"] == "error"
    assert cjk["related"] == [
        {"path": "cjk.json", "line": 4, "column": 37, "message": "train_micro_batch_size_per_gpu = 4"},
        {"path": "cjk.json", "line": 5, "column": 34, "message": "gradient_accumulation_steps = 8"},
    ]
    assert cjk["message"] == "train_batch_size 48 is not a multiple of micro batch 4 * accumulation 8 = 32"
    assert cjk["detail"] == {"notes": ["DeepSpeed's batch assertion fails for every world size"], "help": None}
    assert cjk["fix"]["applicability"] == "unsafe"
    assert cjk["fix"]["title"] == "Remove train_batch_size so DeepSpeed derives it"
    (edit,) = cjk["fix"]["edits"]
    assert edit["path"] == "cjk.json" and edit["content"] == ""
    assert (edit["start_line"], edit["start_column"]) == (3, line.index('"train_batch_size"') + 1)
    assert (edit["end_line"], edit["end_column"]) == (3, len(line) + 1)

    dup = by_path[("ds002.json", "DS002")]
    assert (dup["line"], dup["column"], dup["end_line"], dup["end_column"]) == (4, 3, 4, 20)
    assert dup["related"] == [{"path": "ds002.json", "line": 2, "column": 3, "message": "first occurrence"}]
    assert dup["fix"]["applicability"] == "unsafe"
    assert dup["fix"]["edits"] == [
        {"path": "ds002.json", "start_line": 2, "start_column": 1, "end_line": 3, "end_column": 1, "content": ""}
    ]

    value = by_path[("ds102.json", "DS102")]
    assert (value["line"], value["column"], value["end_line"], value["end_column"]) == (2, 37, 2, 40)
    assert value["fix"]["edits"][0]["content"] == "4"

    syntax = by_path[("broken.yaml", "DS001")]
    assert (syntax["line"], syntax["column"], syntax["fix"], syntax["related"]) == (3, 16, None, [])


def test_json_clean_run(project):
    proc = run(project, "clean.json", "--format", "json")
    payload = json.loads(proc.stdout)
    check_contract(payload)
    assert payload == {"version": 1, "diagnostics": [], "summary": {"files": 1, "errors": 0, "warnings": 0, "infos": 0, "fixable": 0}}


def test_json_paths_relative_to_cwd_or_as_given(project):
    write(project, {"sub/ds.json": DS102_JSON})
    absolute = run(project, str(project / "sub" / "ds.json"), "--format", "json")
    assert codes(absolute) == [("sub/ds.json", "DS102")]
    given = run(project, "sub/../sub/ds.json", "--format", "json")
    assert codes(given) == [("sub/../sub/ds.json", "DS102")]
    inside = run(project / "sub", "../ds102.json", "--format", "json")
    assert codes(inside) == [("../ds102.json", "DS102")]
    walked = run(project / "sub", str(project), "--format", "json", "--select", "DS102")
    assert sorted(codes(walked)) == [("../ds102.json", "DS102"), ("ds.json", "DS102")]


def test_json_is_utf8_whatever_the_locale(project):
    write(project, {"cjk.json": CJK_JSON})
    proc = run(project, "cjk.json", "--format", "json", env=_env(PYTHONIOENCODING="ascii"))
    payload = json.loads(proc.stdout)
    check_contract(payload)
    text = run(project, "cjk.json", env=_env(PYTHONIOENCODING="ascii"))
    assert text.returncode == 1
    assert text.stdout.startswith("cjk.json:3:36: DS101 [error]")


# ---- the text format -----------------------------------------------------------------------

LOCATION = re.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+):(?P<column>\d+): (?P<code>[A-Z]+\d+) \[(?P<severity>error|warning|info)\] (?P<message>.+)$")


def test_text_format(project):
    proc = run(project, "ds101.json", "ds102.json")
    lines = proc.stdout.splitlines()
    heads = [LOCATION.match(line) for line in lines if LOCATION.match(line)]
    assert [(m["path"], m["line"], m["column"], m["code"], m["severity"]) for m in heads] == [
        ("ds101.json", "1", "22", "DS101", "error"),
        ("ds102.json", "2", "37", "DS102", "error"),
    ]
    assert lines[:4] == [
        "ds101.json:1:22: DS101 [error] train_batch_size 48 is not a multiple of micro batch 4 * accumulation 8 = 32",
        "  |",
        "1 | " + DS101_JSON.rstrip("\n"),
        "  | " + " " * 21 + "^^",
    ]
    assert "  = ds101.json:1:60: train_micro_batch_size_per_gpu = 4" in lines
    assert "  = note: DeepSpeed's batch assertion fails for every world size" in lines
    assert "  = fix (unsafe): Remove train_batch_size so DeepSpeed derives it" in lines
    assert "2 |   \"train_micro_batch_size_per_gpu\": \"4\"," in lines
    assert "  | " + " " * 36 + "^^^" in lines
    assert lines[-1] == "Found 2 errors in 2 files. 1 fixable with `dslint --fix`. 1 more with `dslint --fix --unsafe-fixes`."


def test_text_caret_under_wide_characters(project):
    write(project, {"cjk.json": CJK_JSON})
    lines = run(project, "cjk.json").stdout.splitlines()
    source, caret = lines[2], lines[3]
    assert source == "3 | " + CJK_JSON.splitlines()[2]
    assert lines[0].startswith("cjk.json:3:36: DS101 [error]")
    # 35 characters before the value, 6 of them CJK, which take two terminal cells each.
    assert caret == "  | " + " " * (35 + 6) + "^^"


def test_text_summary_lines(project):
    assert run(project, "clean.json").stdout.splitlines()[-1] == "All checks passed (1 file checked)."
    assert run(project, "ds002.json").stdout.splitlines()[-1] == "Found 1 error in 1 file. 1 more with `dslint --fix --unsafe-fixes`."


# ---- in-process runs (cheap checks of the same command) ------------------------------------


def test_cli_runner_matches_subprocess(project, monkeypatch):
    monkeypatch.chdir(project)
    result = invoke(["--format", "json", "ds101.json", "--select", CORE])
    assert result.exit_code == 1
    assert json.loads(result.output) == json.loads(run(project, "--format", "json", "ds101.json").stdout)


def test_verbose_lists_skipped_files(project, monkeypatch):
    write(project, {"package.json": '{"name": "web"}\n', "notes.txt": "hello\n"})
    proc = run(project, "-v")
    assert "dslint: skipped package.json: JSON, but neither a DeepSpeed config nor training arguments" in proc.stderr
    assert "dslint: skipped notes.txt: not a kind dslint reads" in proc.stderr  # passed over by its name, and said so
    quiet = run(project)
    assert "package.json" not in quiet.stderr
    named = run(project, "package.json")
    assert named.returncode == 0 and "skipped package.json" in named.stderr


def test_fix_only_fixes_and_reports_only_the_fixes(tmp_path):
    write(tmp_path, {"ds.json": '{"train_batch_size": "8", "gradient_accumulation_steps": 2.5}\n'})
    proc = run(tmp_path, "--fix-only", "--show-fixes", ".", "--select", "DS102")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "fixed ds.json: DS102 Write the number 8\nFixed 1 problem.\n"
    assert (tmp_path / "ds.json").read_text() == '{"train_batch_size": 8, "gradient_accumulation_steps": 2.5}\n'
    again = run(tmp_path, "--fix-only", ".", "--select", "DS102")
    assert (again.returncode, again.stdout) == (0, "No fixes applied.\n")


def test_cross_file_fix_through_the_command_line(tmp_path):
    write(tmp_path, {
        "train.sh": "torchrun --nproc_per_node 2 train.py --deepspeed ds.json --per_device_train_batch_size 2\n",
        "train.py": HF_TRAINER,
        "ds.json": '{"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2}}\n',
    })
    proc = run(tmp_path, "check", "--fix", "train.sh", "--select", "DS301")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Fixed 1 problem" in proc.stdout
    assert (tmp_path / "ds.json").read_text() == '{"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}}\n'


def test_readme_text_output_is_real_output():
    """README's "Output" example is one finding exactly as `dslint check` prints it today."""
    root = Path(__file__).resolve().parents[1]
    readme = (root / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### Output") :]
    shown = re.search(r"```text\n(.*?)```", section, re.S).group(1)
    path = shown.split(":", 1)[0]
    proc = run(root, "check", "--no-config", path, core=False)
    blocks = proc.stdout.split("\n\n")
    assert shown.rstrip("\n") in blocks, proc.stdout
