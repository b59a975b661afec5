"""Third-party rules through the ``dslint.rules`` entry-point group.

tests/plugin_fixture is a small distribution (``dslint-acme-rules``): a rule ACME001 on
DeepSpeed configs, and a second entry point whose module does not exist. Instead of installing
it into a virtual environment, each test lays out what pip would: the package and a
``*.dist-info`` directory with ``entry_points.txt`` (generated from the fixture's
pyproject.toml), on a directory given to ``python -m dslint`` through PYTHONPATH.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "plugin_fixture"

NO_ZERO_JSON = '{"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8}\n'
STAGE_0_JSON = '{\n  "train_micro_batch_size_per_gpu": 4,\n  "zero_optimization": {"stage": 0}\n}\n'
ZERO_JSON = '{"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2}}\n'
DS101_JSON = '{"train_batch_size": 48, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8, "zero_optimization": {"stage": 2}}\n'


def install(site: Path, source: Path = FIXTURE) -> None:
    """Lay out an installed copy of the distribution at ``source`` in ``site`` (what pip writes)."""
    project = tomllib.loads((source / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    name, version = project["name"], project["version"]
    for package in source.iterdir():
        if package.is_dir() and (package / "__init__.py").exists():
            shutil.copytree(package, site / package.name, ignore=shutil.ignore_patterns("__pycache__"))
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")
    lines = []
    for group, entries in project.get("entry-points", {}).items():
        lines.append(f"[{group}]")
        lines.extend(f"{key} = {value}" for key, value in entries.items())
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    install(site)
    return site


@pytest.fixture
def work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "no_zero.json").write_text(NO_ZERO_JSON)
    (work / "stage0.json").write_text(STAGE_0_JSON)
    (work / "zero.json").write_text(ZERO_JSON)
    return work


# Check runs select the plugin's rule and the core rules (unless they select rules themselves),
# so that rules added to dslint later do not change what these fixtures report.
CORE = "DS001,DS002,DS003,DS101,DS102"


def run(cwd: Path, *args: str, site: Path | None = None, command: list[str] | None = None) -> subprocess.CompletedProcess:
    if not (args and args[0] in ("rules", "rule")) and "--select" not in args:
        args = (*args, "--select", CORE + (",ACME001" if site is not None else ""))
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "PYTHONPATH")}
    env["NO_COLOR"] = "1"
    if site is not None:
        env["PYTHONPATH"] = str(site)
    proc = subprocess.run(
        (command or [sys.executable, "-m", "dslint"]) + list(args),
        cwd=cwd, capture_output=True, text=True, encoding="utf-8", env=env, timeout=120,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


BROKEN_LINE = "dslint: warning: plugin 'broken' failed to load: dslint_acme_missing: ModuleNotFoundError: No module named 'dslint_acme_missing'"


def test_rules_lists_the_plugin(work, site):
    proc = run(work, "rules", site=site)
    assert proc.returncode == 0
    assert any(line.split()[:3] == ["ACME001", "no-zero-stage-0", "warning"] for line in proc.stdout.splitlines())
    assert "DS101" in proc.stdout  # the built-ins are still there
    assert proc.stderr.splitlines() == [BROKEN_LINE]
    rows = {row["code"]: row for row in json.loads(run(work, "rules", "--format", "json", site=site).stdout)}
    assert rows["ACME001"] == {
        "code": "ACME001", "name": "no-zero-stage-0", "severity": "warning", "fixable": False, "fix": None,
        "summary": "Our cluster requires ZeRO.", "origin": "acme",
    }
    assert rows["DS101"]["origin"] == "batch"


def test_rule_page_of_the_plugin(work, site):
    proc = run(work, "rule", "no-zero-stage-0", site=site)
    assert proc.returncode == 0
    assert proc.stdout.startswith("# ACME001 no-zero-stage-0\n")
    assert "Registered by: acme." in proc.stdout and "## What it checks" in proc.stdout


def test_without_the_plugin(work):
    assert "ACME001" not in run(work, "rules").stdout
    proc = run(work, "--format", "json")
    assert (proc.returncode, json.loads(proc.stdout)["diagnostics"]) == (0, [])
    assert run(work, "--select", "ACME001").returncode == 2  # an unknown selector without the plugin


def test_the_plugin_reports(work, site):
    proc = run(work, "--format", "json", site=site)
    assert proc.returncode == 1  # warnings fail by default
    found = [(d["path"], d["line"], d["column"], d["code"], d["name"], d["severity"], d["message"]) for d in json.loads(proc.stdout)["diagnostics"]]
    assert found == [
        ("no_zero.json", 1, 1, "ACME001", "no-zero-stage-0", "warning", "enable ZeRO: this cluster's jobs need it"),
        ("stage0.json", 3, 34, "ACME001", "no-zero-stage-0", "warning", "ZeRO stage 0 is not allowed on this cluster"),
    ]
    # The broken entry point: one line on stderr, and the run went on.
    assert proc.stderr.splitlines() == [BROKEN_LINE]
    text = run(work, "stage0.json", site=site)
    assert text.stdout.startswith("stage0.json:3:34: ACME001 [warning] ZeRO stage 0 is not allowed on this cluster\n")


def test_plugin_rules_take_part_in_selection_severity_and_suppression(work, site):
    assert run(work, "--select", "ACME", site=site).returncode == 1
    assert run(work, "--select", "ACME," + CORE, "--ignore", "no-zero-stage-0", site=site).returncode == 0
    assert run(work, "--fail-on", "error", site=site).returncode == 0
    (work / "dslint.toml").write_text('severity = { ACME001 = "error" }\nper-file-ignores = { "no_zero.json" = ["ACME"] }\n')
    proc = run(work, "--format", "json", site=site)
    assert [(d["path"], d["severity"]) for d in json.loads(proc.stdout)["diagnostics"]] == [("stage0.json", "error")]
    assert run(work, "--fail-on", "error", site=site).returncode == 1
    (work / "stage0.json").write_text(STAGE_0_JSON.replace('{"stage": 0}', '{"stage": 0}  // dslint: disable=ACME001'))
    assert run(work, site=site).returncode == 0


def test_a_broken_plugin_does_not_change_the_exit_code(work, site):
    proc = run(work, "zero.json", site=site)
    assert proc.returncode == 0
    assert proc.stdout == "All checks passed (1 file checked).\n"
    assert proc.stderr.splitlines() == [BROKEN_LINE]
    (work / "ds101.json").write_text(DS101_JSON)
    proc = run(work, "ds101.json", "--format", "json", site=site)
    assert proc.returncode == 1
    assert [d["code"] for d in json.loads(proc.stdout)["diagnostics"]] == ["DS101"]
    assert proc.stderr.splitlines() == [BROKEN_LINE]


def test_a_plugin_cannot_take_a_builtin_code(work, site, tmp_path):
    dupe = tmp_path / "dupe_src"
    (dupe / "dslint_dupe").mkdir(parents=True)
    (dupe / "pyproject.toml").write_text('[project]\nname = "dslint-dupe"\nversion = "1.0"\n[project.entry-points."dslint.rules"]\ndupe = "dslint_dupe"\n')
    (dupe / "dslint_dupe" / "__init__.py").write_text(
        "from dslint.rule import rule\n\n"
        "@rule('DS101', 'my-batch-check')\n"
        "def mine(document, context):\n    '''Shadows DS101.'''\n    return ()\n"
    )
    install(site, dupe)
    proc = run(work, "rules", "--format", "json", site=site)
    rows = {row["code"]: row for row in json.loads(proc.stdout)}
    assert rows["DS101"]["name"] == "batch-size-mismatch"
    assert "dslint: warning: plugin 'dupe' failed to load: rule code DS101 is already registered by batch" in proc.stderr.splitlines()


# ---- nothing is loaded from the working directory ------------------------------------------

MARKER_RULES = """
import pathlib
pathlib.Path({marker!r}).write_text("imported")
from dslint.rule import rule

@rule("EVIL001", "evil")
def evil(document, context):
    '''Must never load.'''
    return ()
"""


def plant(work: Path, marker: Path) -> None:
    """A package named like the plugin, and a dist-info that registers a module, in the working directory."""
    (work / "dslint_acme_rules").mkdir()
    (work / "dslint_acme_rules" / "__init__.py").write_text("")
    (work / "dslint_acme_rules" / "rules.py").write_text(MARKER_RULES.format(marker=str(marker)))
    (work / "evil_rules.py").write_text(MARKER_RULES.format(marker=str(marker)))
    info = work / "evil-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[dslint.rules]\nevil = evil_rules\n")


def test_nothing_is_loaded_from_the_working_directory(work, tmp_path):
    marker = tmp_path / "imported"
    plant(work, marker)
    proc = run(work, "rules")
    assert "EVIL001" not in proc.stdout and "ACME001" not in proc.stdout
    assert proc.stderr == ""
    assert run(work).returncode == 0
    assert not marker.exists()


def test_the_installed_plugin_wins_over_a_same_named_package_in_the_working_directory(work, site, tmp_path):
    marker = tmp_path / "imported"
    plant(work, marker)
    proc = run(work, "rules", site=site)
    assert "ACME001" in proc.stdout and "EVIL001" not in proc.stdout
    assert proc.returncode == 0
    assert not marker.exists()


def test_console_script_does_not_load_from_the_working_directory(work, tmp_path):
    script = shutil.which("dslint")
    if script is None:
        pytest.skip("the dslint console script is not on PATH (package not installed)")
    marker = tmp_path / "imported"
    plant(work, marker)
    proc = run(work, "rules", command=[script])
    assert "EVIL001" not in proc.stdout
    assert not marker.exists()


def test_load_rules_in_process(site, monkeypatch):
    from dslint.rule import load_rules

    monkeypatch.syspath_prepend(str(site))
    rules, errors = load_rules()
    acme = [r for r in rules if r.code == "ACME001"]
    assert len(acme) == 1 and acme[0].origin == "acme" and acme[0].target == "deepspeed"
    assert [(e.entry_point, e.message.split(":")[0]) for e in errors] == [("broken", "dslint_acme_missing")]
    assert [r.code for r in rules] == sorted(r.code for r in rules)


def test_a_rule_declares_its_fixes_as_safe_unsafe_or_both():
    """`fix=` is what `dslint rules` shows in its fix column: one of three words, or nothing."""
    from dslint.rule import rule

    def check(target, context):
        return ()

    declared = {fix: rule("ACME009", "some-rule", fix=fix)(check) for fix in (None, "safe", "unsafe", "safe or unsafe")}
    assert {fix: (r.fixable, r.fix_applicabilities) for fix, r in declared.items()} == {
        None: (False, ()), "safe": (True, ("safe",)), "unsafe": (True, ("unsafe",)), "safe or unsafe": (True, ("safe", "unsafe"))}
    for wrong in ("yes", "both", True):
        with pytest.raises(ValueError, match="rule fix"):
            rule("ACME009", "some-rule", fix=wrong)
