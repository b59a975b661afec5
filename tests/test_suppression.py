"""Inline suppression: ``# dslint: disable=CODE`` on the line or the line before, ``disable-file``.

DeepSpeed configs carry them in the hjson comments DeepSpeed accepts (``//`` and ``#``); YAML
in its own comments. DeepSpeed cases run the real command line; YAML cases run the engine with
a small test rule on training YAML (the built-in YAML rule, DS001, is covered too).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dslint.config import Settings
from dslint.diagnostics import Finding
from dslint.documents.model import TRAINING_YAML
from dslint.run.engine import Engine
from dslint.rule import load_rules, rule


# The rules whose findings these tests suppress; rules about the comments themselves (unused
# suppressions) are tested in tests/rules, so they are not selected here.
CORE = "DS001,DS002,DS003,DS101,DS102"


def lint(tmp_path: Path, text: str, *args: str, name: str = "ds.json") -> list[tuple[int, str]]:
    """(line, code) of every diagnostic dslint reports for ``text`` written to ``name``."""
    (tmp_path / name).write_text(text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}
    proc = subprocess.run(
        [sys.executable, "-m", "dslint", "--no-config", "--select", CORE, "--format", "json", name, *args],
        cwd=tmp_path, capture_output=True, text=True, encoding="utf-8", env=env, timeout=120,
    )
    assert proc.returncode in (0, 1), proc.stderr
    payload = json.loads(proc.stdout)
    assert payload["summary"]["errors"] == len(payload["diagnostics"])
    return [(d["line"], d["code"]) for d in payload["diagnostics"]]


# Line 3: DS101 (48 is not a multiple of 4 * 8). Line 4: DS002 (steps_per_print again).
BODY = [
    "{",
    '  "steps_per_print": 10,',
    '  "train_batch_size": 48,{c3}',
    '  "steps_per_print": 20,{c4}',
    '  "train_micro_batch_size_per_gpu": 4,',
    '  "gradient_accumulation_steps": 8',
    "}",
]


def config(c3: str = "", c4: str = "", before: dict[int, str] | None = None, tail: str = "") -> str:
    """BODY with trailing comments on lines 3 and 4, whole lines inserted before line N, a tail."""
    lines = [line.replace("{c3}", c3).replace("{c4}", c4) for line in BODY]
    for index in sorted(before or {}, reverse=True):
        lines.insert(index - 1, before[index])
    return "\n".join(lines) + "\n" + tail


def test_baseline(tmp_path):
    assert lint(tmp_path, config()) == [(3, "DS101"), (4, "DS002")]


@pytest.mark.parametrize("comment", [
    "  // dslint: disable=DS101",
    "  # dslint: disable=DS101",
    " #dslint:disable=DS101",
    "  // dslint: disable=ds101",
    "  // dslint: disable=batch-size-mismatch",
    "  // dslint: disable=all",
    "  # dslint: disable=ALL",
    "  // dslint: disable=DS002,DS101",
    "  // dslint: disable=DS002, DS101 -- the launcher fills these in",
])
def test_trailing_comment(tmp_path, comment):
    assert lint(tmp_path, config(c3=comment)) == [(4, "DS002")]


@pytest.mark.parametrize("comment", ["  // dslint: disable=DS002", "  # dslint: disable=duplicate-key", "  // dslint: disable=DS1", "  // dslint-disable=DS101"])
def test_a_suppression_for_another_code_does_not_suppress(tmp_path, comment):
    assert lint(tmp_path, config(c3=comment)) == [(3, "DS101"), (4, "DS002")]


@pytest.mark.parametrize("comment", ["  // dslint: disable=DS101", "  # dslint: disable=DS101", "// dslint: disable=batch-size-mismatch,DS002"])
def test_comment_on_the_line_before(tmp_path, comment):
    # The comment becomes line 3; DS101 moves to line 4 and is suppressed; DS002 (line 5) is not.
    assert lint(tmp_path, config(before={3: comment})) == [(5, "DS002")]


def test_line_before_covers_only_the_next_line(tmp_path):
    text = config(before={3: "  // dslint: disable=DS101,DS002\n"})  # then a blank line
    assert lint(tmp_path, text) == [(5, "DS101"), (6, "DS002")]


def test_multiple_codes_on_one_line(tmp_path):
    text = '{"train_batch_size": 48, "train_micro_batch_size_per_gpu": "4", "gradient_accumulation_steps": "Auto"}\n'
    assert lint(tmp_path, text) == [(1, "DS102"), (1, "DS102")]
    assert lint(tmp_path, text.rstrip("\n") + "  // dslint: disable=DS102\n") == []
    assert lint(tmp_path, "// dslint: disable=DS101,batch-value-type\n" + text) == []


@pytest.mark.parametrize("where", ["top", "bottom"])
def test_disable_file(tmp_path, where):
    comment = "// dslint: disable-file=DS002"
    text = comment + "\n" + config() if where == "top" else config(tail=comment + "\n")
    expected_line = 4 if where == "top" else 3
    assert lint(tmp_path, text) == [(expected_line, "DS101")]


def test_disable_file_by_name_and_all(tmp_path):
    assert lint(tmp_path, "# dslint: disable-file=batch-size-mismatch, duplicate-key\n" + config()) == []
    assert lint(tmp_path, config(tail="# dslint: disable-file=all\n")) == []
    assert lint(tmp_path, config(tail="# dslint: disable-file=DS102\n")) == [(3, "DS101"), (4, "DS002")]


def test_suppression_stays_in_its_file(tmp_path):
    (tmp_path / "other.json").write_text(config(), encoding="utf-8")
    found = lint(tmp_path, "// dslint: disable-file=all\n" + config(), "other.json")
    assert found == [(3, "DS101"), (4, "DS002")]  # only other.json's


def test_suppressed_findings_are_not_fixed(tmp_path):
    text = '{\n  "train_micro_batch_size_per_gpu": "4",  // dslint: disable=DS102\n  "gradient_accumulation_steps": "8"\n}\n'
    (tmp_path / "ds.json").write_text(text, encoding="utf-8")
    subprocess.run([sys.executable, "-m", "dslint", "--no-config", "--select", CORE, "--fix", "ds.json"], cwd=tmp_path, capture_output=True, timeout=120)
    fixed = (tmp_path / "ds.json").read_text(encoding="utf-8")
    assert fixed == text.replace('"8"', '8')  # the suppressed "4" is left alone


def test_duplicate_key_suppressed_on_the_second_occurrence(tmp_path):
    text = '{\n  "steps_per_print": 1,\n  "steps_per_print": 2  // dslint: disable=duplicate-key\n}\n'
    assert lint(tmp_path, text) == []
    assert lint(tmp_path, text.replace("duplicate-key", "DS001")) == [(3, "DS002")]


# ---- YAML ----------------------------------------------------------------------------------


def test_yaml_syntax_error_suppressed(tmp_path):
    broken = "model_name_or_path: meta-llama/Llama-3.1-8B\noutput_dir: out\n  learning_rate: 1.0e-5{c}\n"
    assert lint(tmp_path, broken.format(c=""), name="train.yaml") == [(3, "DS001")]
    assert lint(tmp_path, broken.format(c="  # dslint: disable=DS001"), name="train.yaml") == []
    assert lint(tmp_path, broken.format(c="  # dslint: disable=syntax-error"), name="train.yaml") == []
    assert lint(tmp_path, broken.format(c="  # dslint: disable=DS101"), name="train.yaml") == [(3, "DS001")]


@rule("TST001", "learning-rate-as-string", kinds=(TRAINING_YAML,))
def learning_rate_as_string(document, context):
    """A test rule: learning_rate written so that PyYAML reads a string (YAML 1.1: 1e-5)."""
    for entry in document.mapping.entries if document.mapping is not None else ():
        if entry.key in ("learning_rate", "warmup_ratio") and isinstance(entry.value.to_python(), str):
            yield Finding(entry.value.span, f"{entry.key} is the string {entry.value.to_python()!r}")


@rule("TST002", "output-dir-tmp", severity="warning", kinds=(TRAINING_YAML,))
def output_dir_tmp(document, context):
    """A test rule: output_dir under /tmp."""
    node = document.mapping.get("output_dir") if document.mapping is not None else None
    if node is not None and str(node.to_python()).startswith("/tmp"):
        yield Finding(node.span, "output_dir is under /tmp")


def yaml_findings(tmp_path: Path, text: str) -> list[tuple[int, str]]:
    (tmp_path / "train.yaml").write_text(text, encoding="utf-8")
    builtin, _ = load_rules()
    engine = Engine(Settings(select=["DS001", "TST"], root=tmp_path), rules=builtin + [learning_rate_as_string, output_dir_tmp])
    result = engine.lint_paths([str(tmp_path / "train.yaml")])
    assert not result.internal_errors
    return [(d.span.source.position(d.span.start)[0], d.code) for d in result.diagnostics]


YAML = """model_name_or_path: Qwen/Qwen2.5-7B
output_dir: /tmp/out{c2}
learning_rate: 1e-5{c3}
warmup_ratio: 1e-2
"""


def test_yaml_baseline(tmp_path):
    assert yaml_findings(tmp_path, YAML.format(c2="", c3="")) == [(2, "TST002"), (3, "TST001"), (4, "TST001")]


@pytest.mark.parametrize("comment", ["  # dslint: disable=TST001", " # dslint: disable=learning-rate-as-string", "  # dslint: disable=all", "  # dslint: disable=TST002,TST001"])
def test_yaml_trailing(tmp_path, comment):
    assert yaml_findings(tmp_path, YAML.format(c2="", c3=comment)) == [(2, "TST002"), (4, "TST001")]


def test_yaml_other_code_does_not_suppress(tmp_path):
    assert yaml_findings(tmp_path, YAML.format(c2="  # dslint: disable=TST001", c3="  # dslint: disable=TST002")) == [
        (2, "TST002"), (3, "TST001"), (4, "TST001"),
    ]


def test_yaml_line_before(tmp_path):
    text = YAML.format(c2="", c3="").replace("warmup_ratio", "# dslint: disable=TST001\nwarmup_ratio")
    assert yaml_findings(tmp_path, text) == [(2, "TST002"), (3, "TST001")]
    indented = "model_name_or_path: Qwen/Qwen2.5-7B\noutput_dir: out\nnested:\n  # dslint: disable=TST001\n  learning_rate: 1e-5\nlearning_rate: 1e-5\n"
    assert yaml_findings(tmp_path, indented) == [(6, "TST001")]


def test_yaml_disable_file(tmp_path):
    text = "# dslint: disable-file=TST001\n" + YAML.format(c2="", c3="")
    assert yaml_findings(tmp_path, text) == [(3, "TST002")]
    text = YAML.format(c2="", c3="") + "# dslint: disable-file=output-dir-tmp, learning-rate-as-string\n"
    assert yaml_findings(tmp_path, text) == []


# ---- launch scripts: a comment above a `\`-continued command covers all of it -------------------


def script_findings(tmp_path: Path, text: str) -> list[tuple[int, str]]:
    """(line, code) of DS606 (env-after-command) and DS004 (unused-suppression) in run.sh."""
    (tmp_path / "run.sh").write_text(text, encoding="utf-8")
    result = Engine(Settings(select=["DS606", "DS004"], root=tmp_path)).lint_paths([str(tmp_path / "run.sh")])
    return [(d.span.source.position(d.span.start)[0], d.code) for d in result.diagnostics]


LAUNCH = "deepspeed train.py \\\n    --deepspeed ds.json \\\n    CUDA_VISIBLE_DEVICES=0 \\\n    --seed 1\n"


def test_script_baseline(tmp_path):
    assert script_findings(tmp_path, LAUNCH) == [(3, "DS606")]


@pytest.mark.parametrize("comment", ["# dslint: disable=DS606\n", "  # dslint: disable=env-after-command  -- the wrapper parses it\n"])
def test_comment_above_a_continued_command_covers_every_line(tmp_path, comment):
    assert script_findings(tmp_path, comment + LAUNCH) == []


def test_comment_above_covers_only_the_command_below_it(tmp_path):
    # the first command ends at line 3; the comment does not reach the launch after it
    text = "# dslint: disable=DS606\necho a \\\n  b\n" + LAUNCH
    assert script_findings(tmp_path, text) == [(1, "DS004"), (6, "DS606")]
    # a blank line after the `\` ends the command: the lines after it are not covered
    text = "# dslint: disable=DS606\necho a \\\n\n" + LAUNCH
    assert script_findings(tmp_path, text) == [(1, "DS004"), (6, "DS606")]


def test_a_comment_line_ending_in_a_backslash_does_not_continue(tmp_path):
    text = "# dslint: disable=DS606\n# a note \\\n" + LAUNCH
    assert script_findings(tmp_path, text) == [(1, "DS004"), (5, "DS606")]


def test_an_unused_comment_above_a_continued_command_names_its_lines(tmp_path):
    (tmp_path / "run.sh").write_text("# dslint: disable=DS606\ndeepspeed train.py \\\n    --seed 1\n", encoding="utf-8")
    result = Engine(Settings(select=["DS606", "DS004"], root=tmp_path)).lint_paths([str(tmp_path / "run.sh")])
    assert [d.message for d in result.diagnostics] == ["unused suppression comment: DS606 suppresses nothing on the command below it (lines 2-3)"]
