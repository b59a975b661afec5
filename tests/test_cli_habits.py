"""The command-line habits of ruff and yamllint users: -q, --color, --output-file, progress on a terminal."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

DS101_JSON = '{"train_batch_size": 48, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8}\n'
CLEAN_JSON = '{"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8}\n'
ANSI = "\x1b["


def run(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "NO_COLOR", "FORCE_COLOR")}
    base.update(env)
    proc = subprocess.run([sys.executable, "-m", "dslint", "--no-config", "--select", "DS101", *args], cwd=cwd, capture_output=True,
                          text=True, env=base, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "bad.json").write_text(DS101_JSON, encoding="utf-8")
    (tmp_path / "good.json").write_text(CLEAN_JSON, encoding="utf-8")
    (tmp_path / "package.json").write_text('{"name": "web"}\n', encoding="utf-8")
    return tmp_path


def test_quiet_prints_the_findings_and_nothing_else(project):
    loud = run(project, ".")
    quiet = run(project, "-q", ".")
    assert quiet.returncode == loud.returncode == 1
    assert loud.stdout.startswith(quiet.stdout) and quiet.stdout.startswith("bad.json:1:22: DS101 [error]")
    assert "Found 1 error" in loud.stdout and "Found" not in quiet.stdout
    assert run(project, "--quiet", "--format", "concise", ".").stdout.splitlines() == [loud.stdout.splitlines()[0]]
    clean = run(project, "-q", "good.json")
    assert (clean.returncode, clean.stdout) == (0, "")
    assert "All checks passed" in run(project, "good.json").stdout
    # a named file that was skipped gets no note either
    assert run(project, "-q", "package.json").stderr == "" and "skipped package.json" in run(project, "package.json").stderr


@pytest.mark.parametrize("choice, env, coloured", [
    ("always", {}, True),
    ("always", {"NO_COLOR": "1"}, True),  # asked for on the command line: the option wins
    ("never", {"FORCE_COLOR": "1"}, False),
    ("auto", {}, False),  # stdout is a pipe here
    ("auto", {"FORCE_COLOR": "1"}, True),
    ("auto", {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
    ("auto", {"FORCE_COLOR": "0"}, False),
    (None, {"FORCE_COLOR": "1"}, True),  # auto is the default
])
def test_color(project, choice, env, coloured):
    args = ("--color", choice) if choice else ()
    proc = run(project, *args, ".", **env)
    assert (ANSI in proc.stdout) is coloured, proc.stdout
    assert proc.stdout.replace("\x1b[31m", "").replace("\x1b[1m", "").replace("\x1b[0m", "").startswith("bad.json:1:22: DS101 [error]")


def test_color_on_a_terminal(project):
    """auto colours a terminal (stdout a pty) unless NO_COLOR is set."""
    pty = pytest.importorskip("pty")

    def on_a_terminal(**env: str) -> str:
        master, slave = pty.openpty()
        base = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "NO_COLOR", "FORCE_COLOR")} | env
        proc = subprocess.Popen([sys.executable, "-m", "dslint", "--no-config", "--select", "DS101", "bad.json"], cwd=project,
                                stdout=slave, stderr=subprocess.PIPE, env=base)
        os.close(slave)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        proc.wait(timeout=120)
        os.close(master)
        return b"".join(chunks).decode("utf-8", "replace")

    assert ANSI in on_a_terminal()
    assert ANSI not in on_a_terminal(NO_COLOR="1")


def test_output_file(project):
    proc = run(project, "--output-file", "reports/dslint.txt", ".")
    assert proc.returncode == 1 and proc.stdout == ""
    report = (project / "reports" / "dslint.txt").read_text(encoding="utf-8")
    assert report.startswith("bad.json:1:22: DS101 [error]") and "Found 1 error" in report and ANSI not in report
    proc = run(project, "-o", "out.json", "--format", "json", ".", FORCE_COLOR="1")
    assert proc.returncode == 1 and proc.stdout == ""
    assert json.loads((project / "out.json").read_text(encoding="utf-8"))["summary"]["errors"] == 1
    proc = run(project, "--output-file", "out.txt", "good.json")
    assert proc.returncode == 0 and "All checks passed" in (project / "out.txt").read_text(encoding="utf-8")
    (project / "taken").mkdir()
    assert run(project, "--output-file", "taken", ".").returncode == 2
    bad = run(project, "--output-file", "bad.json/report.txt", ".")  # under a file: cannot be created
    assert bad.returncode == 2 and "bad.json/report.txt: cannot write the report" in bad.stderr


def test_no_progress_line_unless_stderr_is_a_terminal(project):
    for index in range(400):
        (project / f"ds{index}.json").write_text(CLEAN_JSON, encoding="utf-8")
    proc = run(project, ".")
    assert "reading files" not in proc.stderr and "\r" not in proc.stderr


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_on_a_terminal(monkeypatch):
    """After the delay, a line counts the files the engines have read; it is erased at the end."""
    from dslint.run.progress import Progress

    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(Progress, "DELAY", 0.0)
    monkeypatch.delenv("DSLINT_NO_PROGRESS", raising=False)
    progress = Progress.start(10)
    engine = type("E", (), {"files_read": 4})()
    progress.engines.append(engine)
    shown = threading.Event()
    for _ in range(200):  # wait for the thread's first line; no timing is asserted
        if "reading files 4/10" in terminal.getvalue():
            shown.set()
            break
        threading.Event().wait(0.05)
    engine.files_read = 10
    for _ in range(200):
        if "10 files read" in terminal.getvalue():
            break
        threading.Event().wait(0.05)
    progress.stop()
    text = terminal.getvalue()
    assert shown.is_set(), text
    assert "dslint: 10 files read; checking launches and rules" in text
    assert text.endswith("\r\x1b[K")
    assert Progress.start(10, quiet=True)._thread is None


def test_after_a_double_dash_every_word_is_a_path(project):
    """`--` ends the options, as in every argparse and POSIX tool: `-x.json` is a file there, and so
    would be `--fix` (a path that does not exist is a usage error, exit 2)."""
    (project / "-x.json").write_text(DS101_JSON, encoding="utf-8")
    both = run(project, "good.json", "--", "-x.json", "bad.json")
    assert both.returncode == 1
    assert [line.split(":")[0] for line in both.stdout.splitlines() if " DS101 " in line] == ["-x.json", "bad.json"]
    clean = run(project, "--", "good.json")
    assert clean.returncode == 0
    option_after = run(project, "--", "--fix")
    assert option_after.returncode == 2 and "--fix: no such file or directory" in option_after.stderr
    assert (project / "-x.json").read_text(encoding="utf-8") == DS101_JSON


STRING_BATCH = '{"train_batch_size": "32", "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8}\n'
AUTO_CASE = '{"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": "Auto"}\n'


def test_output_format_is_format(project):
    """ruff's spelling, --output-format, is --format."""
    assert run(project, "--output-format", "json", ".").stdout == run(project, "--format", "json", ".").stdout


def test_exit_non_zero_on_fix(tmp_path):
    """A fix applied fails the run even when nothing is left to report, as ruff's flag does; without
    a fix it changes nothing."""
    (tmp_path / "ds.json").write_text(STRING_BATCH, encoding="utf-8")
    fixed = run(tmp_path, "--select", "DS102", "--fix", "--exit-non-zero-on-fix", ".")
    assert fixed.returncode == 1 and "All checks passed" in fixed.stdout
    again = run(tmp_path, "--select", "DS102", "--fix", "--exit-non-zero-on-fix", ".")
    assert again.returncode == 0
    (tmp_path / "ds.json").write_text(STRING_BATCH, encoding="utf-8")
    assert run(tmp_path, "--select", "DS102", "--fix-only", "--exit-non-zero-on-fix", ".").returncode == 1
    assert run(tmp_path, "--select", "DS102", "--fix-only", ".").returncode == 0


def test_fix_on_standard_input_prints_the_fixed_text(tmp_path):
    """`--fix -` (what editor integrations call): the fixed text on standard output, the report on
    standard error, no file written, even when --stdin-filename names one that exists."""
    (tmp_path / "ds.json").write_text("{}\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "dslint", "check", "--no-config", "--select", "DS102", "--fix", "--stdin-filename",
                           "ds.json", "-"], cwd=tmp_path, input=STRING_BATCH, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == STRING_BATCH.replace('"32"', "32")
    assert "All checks passed" in proc.stderr
    assert (tmp_path / "ds.json").read_text(encoding="utf-8") == "{}\n"
    unfixable = subprocess.run([sys.executable, "-m", "dslint", "check", "--no-config", "--select", "DS102", "--fix",
                                "--stdin-filename", "ds.json", "-"], cwd=tmp_path, input=AUTO_CASE, capture_output=True, text=True,
                               timeout=120)
    assert unfixable.stdout == AUTO_CASE  # the text as it came: 'Auto' has no fix
    assert unfixable.returncode == 1 and " DS102 " in unfixable.stderr


def test_cache_dir_moves_the_cache(project, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("cache")
    first = run(project, "--cache-dir", str(elsewhere), ".")
    assert first.returncode == 1
    assert not (project / ".dslint_cache").exists()
    assert any(elsewhere.iterdir())
    assert run(project, "--cache-dir", str(elsewhere), ".").stdout == first.stdout  # replayed from there


def test_show_settings_names_each_setting_and_its_origin(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.dslint]\nworld-size = 8\nignore = ["DS219"]\n', encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "dslint", "check", "--show-settings", "--fail-on", "error", "sub"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = [line.strip() for line in proc.stdout.splitlines()]
    assert lines[0] == "Settings for sub:"
    assert f"configuration file = {tmp_path / 'pyproject.toml'}" in lines
    assert 'ignore = ["DS219"]' in lines and 'fail-on = "error"' in lines
    assert f"world-size = 8  # world-size in {tmp_path / 'pyproject.toml'}" in lines
    assert "target = (not set)" in lines


def test_rules_lines_fit_100_columns(tmp_path):
    """`dslint rules`: one line per rule within 100 columns, with a fix column that says what its
    fixes are (safe, unsafe, safe/unsafe, - for none); --format json carries it all."""
    proc = subprocess.run([sys.executable, "-m", "dslint", "rules"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0 and len(lines) > 100
    assert max(len(line) for line in lines) <= 100
    whole = json.loads(subprocess.run([sys.executable, "-m", "dslint", "rules", "--format", "json"], cwd=tmp_path, capture_output=True,
                                      text=True, timeout=120).stdout)
    assert any(len(rule["summary"]) > 60 for rule in whole)  # the whole summaries are there
    column = lines[0].index(" fix ") + 1
    shown = {line.split()[0]: line[column:].split()[0] for line in lines[1:]}
    label = {"safe": "safe", "unsafe": "unsafe", "safe or unsafe": "safe/unsafe", None: "-"}
    assert shown == {rule["code"]: label[rule["fix"]] for rule in whole}
    assert set(shown.values()) == set(label.values())


BINARY = b"\x00\x01\x02\xff" * 8


@pytest.mark.parametrize("files, args, code", [
    ({"ok.json": CLEAN_JSON}, ["ok.json"], 0),
    ({"bad.json": DS101_JSON}, ["bad.json", "--exit-zero"], 0),
    ({"bad.json": DS101_JSON}, ["bad.json", "--fail-on", "error"], 1),
    ({"ok.json": CLEAN_JSON}, ["ok.json", "--diff"], 0),
    ({"s.json": STRING_BATCH}, ["s.json", "--select", "DS102", "--diff"], 1),
    ({"s.json": STRING_BATCH}, ["s.json", "--select", "DS102", "--fix-only"], 0),
    ({"s.json": STRING_BATCH}, ["s.json", "--select", "DS102", "--fix-only", "--exit-non-zero-on-fix"], 1),
    ({"bad.json": DS101_JSON}, ["bad.json"], 1),
    ({"ds_config.json": ""}, ["ds_config.json"], 1),
    ({"ds_config.json": BINARY}, ["ds_config.json"], 1),
    ({"link.json": None}, ["link.json", "--select", "DS003"], 1),  # a dangling symbolic link
    ({"bad.json": DS101_JSON}, ["bad.json", "--add-noqa"], 1),  # JSON takes no comment
    ({}, ["missing.json"], 2),
    ({"ok.json": CLEAN_JSON}, ["ok.json", "--no-such-option"], 2),
    ({"ok.json": CLEAN_JSON}, ["ok.json", "--fail-on", "never"], 2),
    ({"ok.json": CLEAN_JSON}, ["-", "ok.json"], 2),
    ({}, ["-"], 2),  # standard input without --stdin-filename: nothing says what it is
    ({"ok.json": CLEAN_JSON, "dslint.toml": "world-size = 0\n"}, ["ok.json", "--config", "dslint.toml"], 2),
])
def test_the_exit_code_table(tmp_path, files, args, code):
    """README's exit-code table, row by row."""
    for name, content in files.items():
        if content is None:
            (tmp_path / name).symlink_to("nowhere.json")
        elif isinstance(content, bytes):
            (tmp_path / name).write_bytes(content)
        else:
            (tmp_path / name).write_text(content, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "dslint", "check", *args], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == code, proc.stdout + proc.stderr
