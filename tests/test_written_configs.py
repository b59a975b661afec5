"""Configs a launch script writes itself (``cat <<EOF > $DS_CONFIG``) are the documents the launch
reads: linted by every rule at the script's lines, never reported missing, and fixed only where
the text a fix edits stands in the script as written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_support import invoke
from dslint.documents.shell import parse_script
from dslint.documents.shell.heretext import expand_text
from dslint.documents.shell.variables import VarTable
from dslint.source import SourceFile, Span, TextOrigin

MEGATRON = """\
#!/bin/bash
DS_CONFIG=./ds_config.$SLURM_JOBID.json
ZERO_STAGE=1
MICRO=4
cat <<EOT > $DS_CONFIG
{
  "train_micro_batch_size_per_gpu": $MICRO,
  "zero_optimization": {"stage": $ZERO_STAGE, "overlap_com": true},
  "fp16": {"enabled": true},
  "bf16": {"enabled": true}
}
EOT
deepspeed pretrain_gpt.py --deepspeed --deepspeed_config $DS_CONFIG
"""


def _check(root: Path, *args: str) -> tuple[int, list[dict]]:
    ran = invoke(["check", "--format", "json", "--no-cache", *args])
    return ran.exit_code, json.loads(ran.stdout)["diagnostics"] if ran.stdout.strip() else []


def _codes(findings: list[dict]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for finding in findings:
        out.setdefault(finding["code"], []).append(finding["line"])
    return out


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pretrain_gpt.py").write_text("import deepspeed\n", encoding="utf-8")
    return tmp_path


def test_a_heredoc_written_config_is_read_not_missing(here):
    (here / "pretrain.sh").write_text(MEGATRON, encoding="utf-8")
    _, findings = _check(here, "pretrain.sh")
    codes = _codes(findings)
    assert "DS303" not in codes  # the script writes it before the launch
    assert codes["DS241"] == [10]  # fp16 and bf16 both enabled, at the heredoc's line in the script
    assert codes["DS201"] == [8]  # the misspelled key, at its line
    typo = next(f for f in findings if f["code"] == "DS201")
    assert typo["column"] == MEGATRON.splitlines()[7].index('"overlap_com"') + 1
    assert all(f["path"].endswith("pretrain.sh") for f in findings)


def test_a_fix_in_the_literal_text_edits_the_script(here):
    (here / "pretrain.sh").write_text(MEGATRON, encoding="utf-8")
    invoke(["check", "--fix", "--select", "DS201", "--no-cache", "pretrain.sh"])
    fixed = (here / "pretrain.sh").read_text(encoding="utf-8")
    assert fixed == MEGATRON.replace('"overlap_com"', '"overlap_comm"')


def test_a_fix_that_would_edit_an_expansion_is_not_offered(here):
    script = """\
GLOBAL=24
cat > ds.json <<EOF
{"train_batch_size": $GLOBAL, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2}
EOF
deepspeed --num_gpus 2 pretrain_gpt.py --deepspeed_config ds.json
"""
    (here / "run.sh").write_text(script, encoding="utf-8")
    _, findings = _check(here, "--select", "DS101", "run.sh")
    [batch] = findings
    assert batch["line"] == 3
    assert batch["fix"] is None or all(e["content"] != "16" for e in batch["fix"]["edits"])
    invoke(["check", "--fix", "--unsafe-fixes", "--select", "DS101", "--no-cache", "run.sh"])
    assert "$GLOBAL" in (here / "run.sh").read_text(encoding="utf-8")


def test_a_part_only_the_run_decides_makes_the_text_unknown_but_the_file_is_there(here):
    script = """\
cat > ds.json <<EOF
{"train_batch_size": $(nproc), "fp16": {"enabled": true}, "bf16": {"enabled": true}}
EOF
deepspeed pretrain_gpt.py --deepspeed_config ds.json
"""
    (here / "run.sh").write_text(script, encoding="utf-8")
    _, findings = _check(here, "run.sh")
    assert "DS303" not in _codes(findings) and "DS241" not in _codes(findings)
    explained = invoke(["explain", "run.sh"]).stdout
    assert "writes the DeepSpeed config 'ds.json' itself (line 1)" in explained


def test_writes_in_two_branches_are_each_linted_and_neither_is_the_launchs(here):
    script = """\
if [ "$MODE" = a ]; then
cat > ds.json <<EOF
{"train_micro_batch_size_per_gpu": 4, "fp16": {"enabled": true}, "bf16": {"enabled": true}}
EOF
else
cat > ds.json <<EOF
{"train_micro_batch_size_per_gpu": 4, "bf16": {"enabled": true}}
EOF
fi
deepspeed --num_gpus 2 pretrain_gpt.py --deepspeed_config ds.json
"""
    (here / "run.sh").write_text(script, encoding="utf-8")
    _, findings = _check(here, "run.sh")
    codes = _codes(findings)
    assert codes.get("DS241") == [3] and "DS303" not in codes
    assert "which text only the run decides" in invoke(["explain", "run.sh"]).stdout


def test_a_write_after_the_launch_is_not_what_it_reads(here):
    script = """\
deepspeed pretrain_gpt.py --deepspeed_config ds.json
cat > ds.json <<'EOF'
{"train_micro_batch_size_per_gpu": 4}
EOF
"""
    (here / "run.sh").write_text(script, encoding="utf-8")
    _, findings = _check(here, "--select", "DS303", "run.sh")
    assert _codes(findings) == {"DS303": [1]}


def test_a_written_training_yaml_is_the_launchs_training_config(here):
    script = """\
cat > train.yaml <<'EOF'
model_name_or_path: Qwen/Qwen2.5-7B
stage: sft
do_train: true
finetuning_type: lora
output_dir: saves/x
bf16: true
fp16: true
EOF
llamafactory-cli train train.yaml
"""
    (here / "sft.sh").write_text(script, encoding="utf-8")
    _, findings = _check(here, "--select", "DS401,DS303", "sft.sh")
    assert _codes(findings) == {"DS401": [8]}  # at `fp16: true`


def test_the_report_counts_the_script_once(here):
    (here / "pretrain.sh").write_text(MEGATRON, encoding="utf-8")
    assert "in 1 file." in invoke(["check", "--no-cache", "pretrain.sh"]).stdout


def test_text_origin_places_ranges_and_says_whether_the_text_is_the_same():
    script = SourceFile("s.sh", 'cat > f <<EOF\n{"a": $X, "b": 1}\nEOF\n')
    body = script.text.index("{")
    x = script.text.index("$X")
    made = '\n{"a": 64, "b": 1}\n'
    origin = TextOrigin(((0, 1, script, body, body, False), (1, 7, script, body, x, True), (7, 9, script, x, x + 2, False),
                         (9, len(made), script, x + 2, script.text.index("EOF\n", body), True)))
    b = made.index('"b"')
    assert origin.place(b, b + 3) == (script, script.text.index('"b"'), script.text.index('"b"') + 3, True)
    assert origin.place(7, 9) == (script, x, x + 2, False)  # inside the expansion: the whole `$X`, not the same text
    assert origin.place(1, 12)[3] is False  # across the expansion


def test_a_dollar_that_expands_nothing_stays_once():
    assert expand_text(VarTable(), "cost $ 5 and 100$") == ("cost $ 5 and 100$", "cost $ 5 and 100$")


def test_located_pieces_cover_the_body_as_written():
    text = 'X=4\ncat > ds.json <<EOF\n{"micro": $X, "tail": "a$"}\nEOF\n'
    script = parse_script(SourceFile("s.sh", text))
    [heredoc] = script.heredocs
    assert "".join(v for v, _a, _s, _e in heredoc.located) == '{"micro": 4, "tail": "a$"}\n'
    assert [text[s:e] for v, _a, s, e in heredoc.located if v == "4"] == ["$X"]


TEMPLATE = """\
{
  "train_batch_size" : CONFIG_BATCH_SIZE,
  "train_micro_batch_size_per_gpu": CONFIG_MBSIZE,
  "zero_optimization": {"stage": ZERO_STAGE, "overlap_com": true},
  "fp16": {"enabled": CONFIG_FP16_ENABLED},
  "bf16": {"enabled": CONFIG_BF16_ENABLED}
}
"""

SED = """\
GBS=32
config_json="ds_config_gbs${GBS}.json"
sed "s/CONFIG_BATCH_SIZE/${GBS}/" ds_TEMPLATE.json \\
    | sed "s/CONFIG_MBSIZE/4/" \\
    | sed "s/ZERO_STAGE/3/" \\
    | sed "s/CONFIG_FP16_ENABLED/true/" \\
    | sed "s/CONFIG_BF16_ENABLED/true/" \\
      > ${config_json}
deepspeed --num_gpus 4 pretrain_gpt.py --pipeline-model-parallel-size 2 --deepspeed --deepspeed_config ${config_json}
"""


def test_a_template_filled_in_by_sed_is_what_the_launch_reads(here):
    (here / "ds_TEMPLATE.json").write_text(TEMPLATE, encoding="utf-8")
    (here / "run.sh").write_text(SED, encoding="utf-8")
    _, findings = _check(here, "run.sh")
    at = {(f["code"], f["path"], f["line"]) for f in findings}
    assert ("DS410", "run.sh", 5) in at  # ZeRO-3 (sed "s/ZERO_STAGE/3/") with pipeline parallelism
    assert ("DS241", "run.sh", 7) in at  # bf16 made true by the sed expression at line 7, with fp16
    assert ("DS201", "ds_TEMPLATE.json", 4) in at  # a typo in the template's own text, at its line
    assert not any(f["code"] in ("DS001", "DS303") for f in findings)  # the template is sed's, not DeepSpeed's
    typo = next(f for f in findings if f["code"] == "DS201")
    assert typo["fix"] is None  # other scripts fill in the same template: no fix from one launch's view


def test_a_sed_that_is_more_than_a_literal_substitution_leaves_the_text_unknown(here):
    (here / "ds_TEMPLATE.json").write_text(TEMPLATE, encoding="utf-8")
    (here / "run.sh").write_text(SED.replace('sed "s/ZERO_STAGE/3/"', 'sed "s/ZERO_.*/3/"'), encoding="utf-8")
    _, findings = _check(here, "--select", "DS410,DS241,DS303", "run.sh")
    assert findings == []


def test_sed_replaces_the_first_match_of_a_line_unless_g():
    from dslint.documents.written import Substitution, _filled

    script = SourceFile("run.sh", 'sed "s/X/1/" t\n')
    span = Span(script, 4, 11)
    template = SourceFile("t.json", '{"a": [X, X],\n "b": X}\n')
    first = _filled(template, (Substitution("X", "1", False, span),))
    every = _filled(template, (Substitution("X", "1", True, span),))
    assert first.text == '{"a": [1, X],\n "b": 1}\n'
    assert every.text == '{"a": [1, 1],\n "b": 1}\n'
    source, start, end, same = first.origin.place(first.text.index('"b"'), first.text.index('"b"') + 3)
    assert source is template and template.text[start:end] == '"b"' and same
    assert first.origin.place(7, 8)[:3] == (script, 4, 11)  # the replacement: at the sed expression


@pytest.mark.parametrize(("pattern", "extended", "literal"), [
    ("CONFIG_BATCH", False, "CONFIG_BATCH"),
    ("\\${zero_stage}", False, "${zero_stage}"),  # \$ is a literal $; { is literal in a basic expression
    ("a\\.b", False, "a.b"),
    ("a.b", False, None),  # . matches any character
    ("x{2}", True, None),  # an interval under -E
    ("\\(x\\)", False, None),  # a group in a basic expression
    ("a\\/b", False, "a/b"),
])
def test_a_sed_pattern_is_a_literal_only_when_it_matches_one_text(pattern, extended, literal):
    from dslint.documents.written import _literal_pattern

    assert _literal_pattern(pattern, "/", extended) == literal


def test_a_value_the_script_does_not_set_leaves_the_text_unknown(here):
    """bash's arithmetic reads a variable nobody set as 0, but a file the script sources or a
    function it calls may set it (an environment setup): the batch is not known to be 0."""
    script = """\
source ./env_setup.sh
setup_env
MICRO=4
GLOBAL=$(( MICRO * 2 * NGPUS ))
cat > ds.json <<EOF
{"train_batch_size": $GLOBAL, "train_micro_batch_size_per_gpu": $MICRO, "gradient_accumulation_steps": 2}
EOF
deepspeed pretrain_gpt.py --deepspeed_config ds.json
"""
    (here / "run.sh").write_text(script, encoding="utf-8")
    _, findings = _check(here, "--select", "DS101,DS102,DS303", "run.sh")
    assert findings == []
