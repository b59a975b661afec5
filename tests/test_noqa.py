"""Suppression housekeeping: DS004 unused-suppression and ``check --add-noqa``, through the command line.

A YAML/shell case runs through the API with a test rule, because the built-in rules report
on DeepSpeed JSON only (DS004 itself is fixed, never suppressed).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from dslint.config import Settings
from dslint.diagnostics import Finding
from dslint.run.engine import Engine
from dslint.fix.noqa import add_noqa
from dslint.rule import load_rules, rule
from dslint.source import Span

MISMATCH_LINE = '  "train_batch_size": 48,'
HJSON = (
    "{\n"
    "  // DeepSpeed reads this file with hjson\n"
    '  "train_batch_size": 48,\n'
    '  "train_micro_batch_size_per_gpu": 4,\n'
    '  "gradient_accumulation_steps": 8\n'
    "}\n"
)
# The rules these tests are about; rules added later must not change what they expect.
SELECT = ("--select", "DS101,DS102,DS004")
STRICT = '{"train_batch_size": 48, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8}\n'


def dslint(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}
    env["NO_COLOR"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "dslint", "check", "--no-config", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
    )


def _json(run: subprocess.CompletedProcess) -> list[dict]:
    return json.loads(run.stdout)["diagnostics"]


# ---- DS004 unused-suppression ------------------------------------------------------------------


def test_unused_suppression_is_reported_and_fixed(tmp_path):
    config = tmp_path / "ds.json"
    config.write_text(
        "{\n"
        '  "train_batch_size": 32, // dslint: disable=DS101\n'
        '  "train_micro_batch_size_per_gpu": "4", # dslint: disable=DS102,DS1O1\n'
        '  "gradient_accumulation_steps": 8\n'
        "}\n",
        encoding="utf-8",
    )
    run = dslint(tmp_path, "--select", "DS101,DS102,DS004", "--format", "json", ".")
    assert run.returncode == 1, run.stderr
    found = [(d["code"], d["line"], d["column"], d["message"], d["fix"]["applicability"]) for d in _json(run)]
    assert found == [
        ("DS004", 2, 27, "unused suppression comment: DS101 suppresses nothing on this line", "safe"),
        ("DS004", 3, 66, "unused code in suppression comment: 'DS1O1' is not a rule code or name", "safe"),
    ]

    fixed = dslint(tmp_path, "--select", "DS101,DS102,DS004", "--fix", ".")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert config.read_text(encoding="utf-8") == (
        "{\n"
        '  "train_batch_size": 32,\n'
        '  "train_micro_batch_size_per_gpu": "4", # dslint: disable=DS102\n'
        '  "gradient_accumulation_steps": 8\n'
        "}\n"
    )


def test_suppressions_of_rules_that_did_not_run_are_not_judged(tmp_path):
    (tmp_path / "ds.json").write_text('{"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4} // dslint: disable=DS102\n', encoding="utf-8")
    assert dslint(tmp_path, "--select", "DS101,DS004", ".").returncode == 0
    run = dslint(tmp_path, "--select", "DS101,DS102,DS004", "--format", "json", ".")
    assert [d["code"] for d in _json(run)] == ["DS004"]
    assert dslint(tmp_path, "--select", "DS101,DS102", ".").returncode == 0  # DS004 not selected: nothing judged


def test_unused_suppressions_can_be_ignored(tmp_path):
    (tmp_path / "ds.json").write_text(
        '{"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4} // dslint: disable=DS101\n', encoding="utf-8"
    )
    assert dslint(tmp_path, "--select", "DS101,DS004", "--ignore", "unused-suppression", ".").returncode == 0
    (tmp_path / "ds.json").write_text(
        '{"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4} // dslint: disable=DS101,DS004\n', encoding="utf-8"
    )
    assert dslint(tmp_path, "--select", "DS101,DS004", ".").returncode == 0  # naming DS004 keeps the comment on purpose
    (tmp_path / "ds.json").write_text(
        '// dslint: disable-file=unused-suppression\n{"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4} // dslint: disable=DS101\n',
        encoding="utf-8",
    )
    assert dslint(tmp_path, "--select", "DS101,DS004", ".").returncode == 0


# ---- --add-noqa ---------------------------------------------------------------------------------


def test_add_noqa_comments_hjson_and_is_idempotent(tmp_path):
    config = tmp_path / "ds.json"
    config.write_text(HJSON, encoding="utf-8")
    config.chmod(0o640)
    run = dslint(tmp_path, *SELECT, "--add-noqa", ".")
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout == "Added 1 suppression to 1 file.\n"
    assert config.read_text(encoding="utf-8") == HJSON.replace(MISMATCH_LINE, MISMATCH_LINE + "  // dslint: disable=DS101")
    assert config.stat().st_mode & 0o777 == 0o640
    assert not list(tmp_path.glob(".dslint-*"))  # the temporary file of the atomic write is gone

    again = dslint(tmp_path, *SELECT, "--add-noqa", ".")
    assert again.returncode == 0 and again.stdout == "Added 0 suppressions to 0 files.\n"
    assert config.read_text(encoding="utf-8") == HJSON.replace(MISMATCH_LINE, MISMATCH_LINE + "  // dslint: disable=DS101")
    assert dslint(tmp_path, *SELECT, ".").returncode == 0  # suppressed, and the new comment is used (no DS004)


def test_add_noqa_extends_a_comment_and_keeps_newlines(tmp_path):
    config = tmp_path / "ds.json"
    text = HJSON.replace(MISMATCH_LINE, MISMATCH_LINE + " # dslint: disable=DS102,DS004").replace("\n", "\r\n")
    config.write_bytes(text.encode("utf-8"))
    run = dslint(tmp_path, "--select", "DS101", "--add-noqa", ".")
    assert run.returncode == 0, run.stdout + run.stderr
    assert config.read_bytes().decode("utf-8") == text.replace("disable=DS102,DS004", "disable=DS102,DS004,DS101")


def test_add_noqa_leaves_strict_json_alone(tmp_path):
    config = tmp_path / "ds.json"
    config.write_text(STRICT, encoding="utf-8")
    run = dslint(tmp_path, *SELECT, "--add-noqa", ".")
    assert run.returncode == 1
    assert run.stdout == "Added 0 suppressions to 0 files.\n"
    assert re.search(r"not suppressed: ds\.json:1:22: DS101: strict JSON has no comments \(HF Trainer and accelerate read it with json\.load", run.stderr), run.stderr
    assert "per-file-ignores" in run.stderr
    assert config.read_text(encoding="utf-8") == STRICT


def test_add_noqa_usage_errors(tmp_path):
    (tmp_path / "ds.json").write_text(HJSON, encoding="utf-8")
    for extra in (["--fix"], ["--diff"]):
        run = dslint(tmp_path, *SELECT, "--add-noqa", *extra, ".")
        assert run.returncode == 2 and "--add-noqa" in run.stderr
    assert (tmp_path / "ds.json").read_text(encoding="utf-8") == HJSON


@rule("TST900", "marked-line", severity="error")
def _marked_line(document, context):
    """Test rule: every MARK in a file."""
    for match in re.finditer("MARK", document.source.text):
        yield Finding(Span(document.source, match.start(), match.end()), "marked")


def test_add_noqa_yaml_and_shell_only_where_meaning_is_kept(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.yaml").write_text(
        "model_name_or_path: MARK\noutput_dir: out\nprompt: |\n  text MARK\n  more\nlearning_rate: 2.0e-5  # MARK note\n", encoding="utf-8"
    )
    (tmp_path / "run.sh").write_text(
        '#!/bin/bash\ndeepspeed train.py \\\n  --tag MARK \\\n  --x 1\necho "MARK\nb"\ncat <<EOF\nMARK\nEOF\necho MARK\n', encoding="utf-8"
    )
    engine = Engine(Settings(select=["TST900"], root=tmp_path), rules=[*load_rules()[0], _marked_line])
    outcome = add_noqa(lambda overrides: engine.lint_paths(["."], overrides))
    assert outcome.added == 4 and sorted(outcome.files) == ["run.sh", "train.yaml"]
    assert (tmp_path / "train.yaml").read_text(encoding="utf-8") == (
        "model_name_or_path: MARK  # dslint: disable=TST900\noutput_dir: out\nprompt: |\n  text MARK\n  more\n"
        "learning_rate: 2.0e-5  # MARK note  # dslint: disable=TST900\n"
    )
    # inside a `\`-continued command the comment goes above the command, which it covers whole
    assert (tmp_path / "run.sh").read_text(encoding="utf-8") == (
        '#!/bin/bash\n# dslint: disable=TST900\ndeepspeed train.py \\\n  --tag MARK \\\n  --x 1\necho "MARK\nb"\n'
        "cat <<EOF\nMARK\nEOF\necho MARK  # dslint: disable=TST900\n"
    )
    skipped = sorted((d.path, d.span.source.position(d.span.start)[0], reason.split(" (")[0]) for d, reason in outcome.skipped)
    assert skipped == [
        ("run.sh", 5, "a comment at the end of this line would change the file's content"),
        ("run.sh", 8, "a comment at the end of this line would change the file's content"),
        ("train.yaml", 4, "a comment at the end of this line would change the file's content"),
    ]
    again = add_noqa(lambda overrides: engine.lint_paths(["."], overrides))
    assert again.added == 0 and len(again.skipped) == 3


def test_add_noqa_comments_a_continued_command_once_above_it(tmp_path, monkeypatch):
    """Findings on several lines of one `\\`-continued command share one comment above it; a
    comment already there is extended; DS004 then finds every code used."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.sh").write_text(
        "cd /work\n"
        "    # dslint: disable=DS999\n"
        "    deepspeed train.py \\\n"
        "      --a MARK \\\n"
        "      --b MARK\n"
        "echo done\n",
        encoding="utf-8",
    )
    engine = Engine(Settings(select=["TST900", "DS004"], root=tmp_path), rules=[*load_rules()[0], _marked_line])
    outcome = add_noqa(lambda overrides: engine.lint_paths(["."], overrides), judges=frozenset({"DS004"}))
    assert outcome.added == 1 and outcome.files == ["run.sh"]
    assert (tmp_path / "run.sh").read_text(encoding="utf-8") == (
        "cd /work\n    # dslint: disable=DS999,TST900\n    deepspeed train.py \\\n      --a MARK \\\n      --b MARK\necho done\n"
    )
    after = engine.lint_paths(["."])
    assert [(d.code, d.message) for d in after.diagnostics] == [
        ("DS004", "unused code in suppression comment: 'DS999' is not a rule code or name")
    ]
