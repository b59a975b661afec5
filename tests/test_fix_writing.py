"""How --fix writes: never over an edit made while it ran, keeping owner, group, mode and hard
links, and an unwritable file is one line naming it, exit 2, while the other files are written."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from cli_support import invoke
from dslint.config import Settings
from dslint.fix.apply import fix_paths
from dslint.run.engine import Engine

STRING_BATCH = '{"train_batch_size": "32", "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8}\n'
FIXED = STRING_BATCH.replace('"32"', "32")


def _engine(root: Path) -> Engine:
    return Engine(Settings(select=["DS102"], root=root))


def test_an_edit_made_while_dslint_runs_is_not_lost(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "ds.json"
    config.write_text(STRING_BATCH, encoding="utf-8")
    engine = _engine(tmp_path)
    saved = '{"train_batch_size": "64", "train_micro_batch_size_per_gpu": 8, "gradient_accumulation_steps": 8}\n'

    def lint(overrides):
        result = engine.lint_paths(["ds.json"], overrides)
        if not overrides:  # the user saves the file after dslint read it
            config.write_text(saved, encoding="utf-8")
        return result

    outcome = fix_paths(lint, unsafe=False, write=True)
    assert config.read_text(encoding="utf-8") == saved
    assert outcome.applied == [] and not outcome.unwritable
    assert outcome.not_written == [("ds.json", "it changed while dslint ran; not fixed, run again")]


def test_hard_links_and_mode_stay(tmp_path, monkeypatch):
    config = tmp_path / "ds.json"
    config.write_text(STRING_BATCH, encoding="utf-8")
    os.chmod(config, 0o640)
    os.link(config, tmp_path / "linked.json")
    inode = config.stat().st_ino
    monkeypatch.chdir(tmp_path)
    assert invoke(["check", "--no-config", "--select", "DS102", "--fix", "ds.json"]).exit_code == 0
    assert config.stat().st_ino == inode and (tmp_path / "linked.json").read_text(encoding="utf-8") == FIXED
    assert stat.S_IMODE(config.stat().st_mode) == 0o640


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file another owner needs root")
def test_owner_and_group_stay(tmp_path, monkeypatch):
    config = tmp_path / "ds.json"
    config.write_text(STRING_BATCH, encoding="utf-8")
    os.chown(config, 1234, 4321)
    monkeypatch.chdir(tmp_path)
    assert invoke(["check", "--no-config", "--select", "DS102", "--fix", "ds.json"]).exit_code == 0
    assert config.read_text(encoding="utf-8") == FIXED
    assert (config.stat().st_uid, config.stat().st_gid) == (1234, 4321)


def test_an_unwritable_file_is_one_line_and_exit_2_and_the_others_are_written(tmp_path, monkeypatch):
    """chmod cannot stop root, so the refusal is made where dslint writes."""
    from dslint.fix import apply

    for name in ("a.json", "b.json"):
        (tmp_path / name).write_text(STRING_BATCH, encoding="utf-8")
    real = apply.write_atomic

    def refusing(path, data, expected=None):
        if path.endswith("a.json"):
            raise PermissionError(13, "Permission denied", path)
        return real(path, data, expected)

    monkeypatch.setattr(apply, "write_atomic", refusing)
    monkeypatch.chdir(tmp_path)
    run = invoke(["check", "--no-config", "--select", "DS102", "--fix", "."])
    assert run.exit_code == 2
    assert "Traceback" not in run.output
    assert [line for line in run.stderr.splitlines() if "a.json" in line] == ["dslint: error: a.json: cannot write it: Permission denied"]
    assert (tmp_path / "a.json").read_text(encoding="utf-8") == STRING_BATCH
    assert (tmp_path / "b.json").read_text(encoding="utf-8") == FIXED


def test_the_report_offers_only_fixes_that_fix_applies(tmp_path, monkeypatch):
    """--fix never edits a file with a syntax error, so neither the finding nor the summary offers
    a fix there; the same fix in a file that parses is offered and applied."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken.sh").write_text("#!/bin/bash\nif true; then\ntorchrun train.py \\\n", encoding="utf-8")
    (tmp_path / "fine.sh").write_text("#!/bin/bash\ntorchrun train.py \\\n", encoding="utf-8")
    report = invoke(["check", "--no-config", "--select", "DS001,DS605", "."])
    assert [line.split(":")[0] for line in report.stdout.splitlines() if " DS605 " in line] == ["broken.sh", "fine.sh"]
    assert report.stdout.count("= fix (safe)") == 1 and "1 fixable with `dslint --fix`" in report.stdout
    assert invoke(["check", "--no-config", "--select", "DS605", "--fix", "."]).exit_code == 1  # broken.sh's is left
    assert (tmp_path / "fine.sh").read_text(encoding="utf-8") == "#!/bin/bash\ntorchrun train.py\n"
    assert (tmp_path / "broken.sh").read_text(encoding="utf-8").endswith("\\\n")


def test_fix_applies_only_fixes_of_findings_the_run_reports(tmp_path):
    """A fix that reveals another finding (a line continuation repaired joins a flag to the
    command) does not apply that finding's fix: the user never saw it. The report after fixing
    is a fresh run's, so it shows the revealed finding with its fix."""
    from dslint.diagnostics import Diagnostic, Edit, Fix, Severity
    from dslint.run.engine import RunResult
    from dslint.source import SourceFile, Span

    path = str(tmp_path / "run.sh")
    original = "a \\ \nb fp16\n"
    Path(path).write_text(original, encoding="utf-8")

    def finding(source, code, start, end, content, title):
        return Diagnostic(Span(source, start, end), code, code.lower(), Severity.ERROR, title,
                          fix=Fix(title, (Edit(source, start, end, content),)))

    def lint(overrides):
        text = overrides.get(path, original.encode()).decode()
        source = SourceFile(path, text)
        found = []
        if "\\ \n" in text:  # the trap the first run reports
            at = text.index("\\ \n") + 1
            found.append(finding(source, "DS603", at, at + 1, "", "Remove the whitespace after the backslash"))
        else:  # only once the continuation joins the lines
            at = text.index("fp16")
            found.append(finding(source, "DS401", at, at + 4, "bf16", "Replace --fp16 with --bf16"))
        return RunResult(diagnostics=found)

    outcome = fix_paths(lint, unsafe=True, write=True)
    assert Path(path).read_text(encoding="utf-8") == "a \\\nb fp16\n"
    assert [code for _, code, _ in outcome.applied] == ["DS603"]
    assert [d.code for d in outcome.result.diagnostics] == ["DS401"]
