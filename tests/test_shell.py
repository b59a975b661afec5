"""Static reading of shell launch scripts: values, environments, traps and syntax problems."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from dslint.documents.shell import Script, parse_script, split_word
from dslint.source import SourceFile

FIXTURES = Path(__file__).parent / "fixtures" / "scripts"


def parse(text: str) -> Script:
    return parse_script(SourceFile("t.sh", text))


def fixture(name: str) -> Script:
    path = FIXTURES / name
    return parse_script(SourceFile.from_bytes(str(path), path.read_bytes()))


def command(script: Script, name: str, nth: int = 0):
    found = [c for c in script.commands if c.basename == name]
    assert len(found) > nth, f"no command {name!r} #{nth} in {script.commands}"
    return found[nth]


def values(cmd) -> list:
    return [w.value for w in cmd.args]


def pos(span) -> tuple[int, int]:
    return span.source.position(span.start)


def traps(script: Script) -> list[tuple[str, int, int]]:
    return [(t.code_name, *pos(t.span)) for t in script.continuation_traps]


# ---------------------------------------------------------------------------------------
# values
# ---------------------------------------------------------------------------------------


def test_plain_braced_and_quoted_expansions():
    s = parse('A=8\nB="x $A y"\nC=\'$A\'\necho $A ${A} "$B" $C "${A}0" a$A\'b\'\n')
    assert values(command(s, "echo")) == ["8", "8", "x 8 y", "$A", "80", "a8b"]


def test_defaults_are_unknown_but_assumed_when_the_caller_may_set_them():
    s = parse("NUM_GPUS=${NUM_GPUS:-8}\nX=${X-3}\necho $NUM_GPUS $X\n")
    words = command(s, "echo").args
    assert [w.value for w in words] == [None, None]
    assert [w.assumed for w in words] == ["8", "3"]


def test_defaults_resolve_when_the_script_decides():
    s = parse('unset A\nB=\nC=set\necho ${A:-a} ${B:-b} "${B-b}" ${C:-c} ${C:+alt} "${B:+alt}" ${B+x}\n')
    assert values(command(s, "echo")) == ["a", "b", "", "set", "alt", "", "x"]


def test_assign_default_sets_the_variable():
    s = parse(": ${PORT:=29500}\necho $PORT\nunset Q\n: ${Q:=7}\necho $Q\n")
    first, second = [c for c in s.commands if c.basename == "echo"]
    assert first.args[0].value is None and first.args[0].assumed == "29500"
    assert second.args[0].value == "7"
    defaults = [a for a in s.assignments if a.kind == "default"]
    assert [(a.name, a.value.value) for a in defaults] == [("PORT", "29500"), ("Q", "7")]
    assert pos(defaults[0].name_span) == (1, 5)


def test_arithmetic_over_known_values():
    s = parse(
        "A=6\nB=4\necho $((A * B)) $(( (A + B) / 3 )) $((A % 4)) $((-2**2)) $((2**10)) $(($A-$B*2)) $((0x10 + 010))\n"
    )
    assert values(command(s, "echo")) == ["24", "3", "2", "4", "1024", "-2", "24"]


def test_arithmetic_truncates_toward_zero_and_gives_up_on_division_by_zero():
    s = parse("echo $((-7 / 2)) $((-7 % 2)) $((1 / 0))\n")
    assert values(command(s, "echo")) == ["-3", "-1", None]


def test_expr_and_backquotes():
    s = parse("n=8\necho $(expr 16 / $n) `expr 2 \\* 3` $(expr \\( 1 + 2 \\) \\* $n) $(expr $n : 'x')\n")
    assert values(command(s, "echo")) == ["2", "6", "24", None]


def test_arithmetic_assignments_take_effect():
    s = parse("i=1\n((i += 4))\necho $i\nlet 'j = i * 2'\necho $j\n")
    first, second = [c for c in s.commands if c.basename == "echo"]
    assert first.args[0].value == "5"
    assert second.args[0].value == "10"


def test_parameter_pattern_removal_and_length():
    s = parse("M=/models/Qwen/Qwen2.5-7B\necho ${M##*/} ${M%/*} ${#M} ${M#/models/}\n")
    assert values(command(s, "echo")) == ["Qwen2.5-7B", "/models/Qwen", "23", "Qwen/Qwen2.5-7B"]


@pytest.mark.parametrize(
    "script",
    [
        "echo $1\n",
        "echo $(nvidia-smi -L | wc -l)\n",
        "echo $CALLER\n",
        "read -r X\necho $X\n",
        "for i in 1 2; do :; done\necho $i\n",
        "X=1\nwhile true; do X=$((X+1)); done\necho $X\n",
        "echo ~/models\n",
        "echo {a,b}\n",
        "X=$(cat n.txt)\necho $X\n",
    ],
)
def test_unknowns_stay_unknown(script):
    s = parse(script)
    assert command(s, "echo").args[0].value is None


def test_loop_body_sees_loop_assigned_variables_as_unknown():
    s = parse("N=1\nfor x in a b; do\n  echo $N\n  N=$((N * 2))\ndone\n")
    assert command(s, "echo").args[0].value is None
    assert command(s, "echo").in_loop


def test_branches_that_agree_keep_the_value_and_others_do_not():
    s = parse(
        'if [ -n "$X" ]; then A=1; B=1; else A=1; B=2; fi\n'
        "case $Y in a) C=3;; *) C=3;; esac\n"
        "case $Y in a) D=3;; esac\n"
        "echo $A $B $C $D\n"
    )
    assert values(command(s, "echo")) == ["1", None, "3", None]


def test_conditional_list_right_side_is_conditional():
    s = parse('N=2\n[ -z "$FAST" ] && N=4\necho $N\ntrue || deepspeed t.py\n')
    assert command(s, "echo").args[0].value is None
    assert command(s, "deepspeed").conditional
    assert not command(s, "true").conditional


def test_word_splitting_of_unquoted_expansions():
    s = parse('ARGS="--a 1  --b 2"\nEMPTY=\necho $ARGS "$ARGS" $EMPTY "$EMPTY" x${EMPTY}y\n')
    assert values(command(s, "echo")) == ["--a", "1", "--b", "2", "--a 1  --b 2", "", "xy"]


def test_partially_known_expansions_split_around_the_unknown_part():
    s = parse('ARGS="--nproc_per_node $GPUS --nnodes 2"\ntorchrun $ARGS t.py\n')
    args = command(s, "torchrun").args
    assert [w.value for w in args] == ["--nproc_per_node", None, "--nnodes", "2", "t.py"]
    assert args[1].may_split and args[1].assumed == ""
    assert not args[0].may_split


def test_arrays():
    s = parse('ARGS=(--lr 1e-4 "--name" "a b")\nARGS+=(--bf16)\necho "${ARGS[@]}" ${ARGS[1]} ${#ARGS[@]}\n')
    assert values(command(s, "echo")) == ["--lr", "1e-4", "--name", "a b", "--bf16", "1e-4", "5"]


def test_ansi_c_and_escapes():
    s = parse('echo $\'a\\tb\' "q\\"x\\$y" a\\ b\n')
    assert values(command(s, "echo")) == ["a\tb", 'q"x$y', "a b"]


def test_literal_flag_and_raw_text():
    s = parse('X=1\necho plain "quoted" $X\n')
    plain, quoted, expanded = command(s, "echo").args
    assert plain.literal and quoted.literal and not expanded.literal
    assert quoted.raw == '"quoted"' and quoted.value == "quoted"
    assert pos(expanded.span) == (2, 21)


def test_references_record_unset_variables():
    s = parse("A=1\necho $A $MODEL_PATH ${B:-x}\n")
    refs = {(r.name, r.set_in_script) for r in s.references}
    assert refs == {("A", True), ("MODEL_PATH", False), ("B", False)}


# ---------------------------------------------------------------------------------------
# environments
# ---------------------------------------------------------------------------------------


def test_exported_prefix_and_plain_variables():
    s = parse("export A=1 B\nC=2\nexport C\nD=3\ndeclare -x E=5\nreadonly F=6\nG=7 H=$D deepspeed t.py\n")
    cmd = command(s, "deepspeed")
    env = cmd.environment
    assert env["A"].value == "1" and env["A"].source_kind == "export"
    assert env["B"].value is None and env["B"].source_kind == "caller-env"
    assert env["C"].value == "2"
    assert env["E"].value == "5"
    assert env["G"].value == "7" and env["G"].source_kind == "prefix"
    assert env["H"].value == "3"
    assert "D" not in env and "F" not in env
    assert cmd.shell_vars["D"].value == "3" and cmd.shell_vars["F"].value == "6"
    assert [a.name for a in cmd.env] == ["G", "H"]
    assert pos(env["G"].span) == (7, 1)


def test_prefix_assignments_do_not_outlive_the_command():
    s = parse("A=1 true\necho $A\n")
    assert command(s, "echo").args[0].value is None
    assert "A" not in command(s, "echo").environment


def test_prefix_values_see_earlier_prefixes_but_arguments_do_not():
    s = parse("N=1\nN=2 M=$N echo $N\n")
    cmd = command(s, "echo")
    assert cmd.args[0].value == "1"
    assert cmd.environment["M"].value == "2"


def test_set_a_exports_following_assignments():
    s = parse("set -a\nA=1\nset +a\nB=2\nenv\n")
    env = command(s, "env").environment
    assert "A" in env and "B" not in env


def test_unset_and_export_n():
    s = parse("export A=1 B=2\nunset A\nexport -n B\ntorchrun t.py\n")
    cmd = command(s, "torchrun")
    assert "A" not in cmd.environment and "B" not in cmd.environment
    assert cmd.shell_vars["B"].value == "2"


def test_wrappers_are_peeled_off():
    s = parse(
        "CUDA_VISIBLE_DEVICES=0,1 nohup deepspeed a.py > log 2>&1 &\n"
        "exec torchrun b.py\n"
        "time python c.py\n"
        "/usr/bin/env NCCL_DEBUG=INFO python -m torch.distributed.run d.py\n"
        "env -i PATH=/bin python e.py\n"
        "timeout 10h stdbuf -oL nice -n 5 python f.py\n"
    )
    ds = command(s, "deepspeed")
    assert ds.background and [w.value for w in ds.wrappers] == ["nohup"]
    assert ds.environment["CUDA_VISIBLE_DEVICES"].value == "0,1"
    assert command(s, "torchrun").wrappers[0].value == "exec"
    pythons = [c for c in s.commands if c.basename == "python"]
    assert [c.args[0].value for c in pythons] == ["c.py", "-m", "e.py", "f.py"]
    via_env = pythons[1]
    assert via_env.environment["NCCL_DEBUG"].value == "INFO"
    assert pos(via_env.env[0].name_span) == (4, 14)
    assert via_env.env[0].value.value == "INFO"
    assert pythons[2].clears_env and set(pythons[2].environment) == {"PATH"}


# ---------------------------------------------------------------------------------------
# where commands are found
# ---------------------------------------------------------------------------------------


def test_commands_everywhere():
    s = parse(
        "a | b && c || d; (e); { f; }\n"
        "if g; then h; elif i; then j; else k; fi\n"
        "while l; do m; done; until n; do o; done\n"
        "for x in 1; do p; done; for ((y=0; y<2; y++)); do q; done\n"
        "case z in a) r;; *) s;; esac\n"
        "t() { u; }\n"
        "! v\n"
        "w &\n"
    )
    names = [c.basename for c in s.commands]
    assert names == list("abcdefghijklmnopqrsuvw")
    by = {c.basename: c for c in s.commands}
    assert by["h"].conditional and by["k"].conditional and by["r"].conditional
    assert not by["g"].conditional and by["i"].conditional
    assert by["m"].in_loop and by["q"].in_loop and not by["l"].conditional
    assert by["u"].in_function == "t"
    assert by["w"].background
    assert "t" in s.functions


def test_function_bodies_use_the_definition_environment_and_calls_invalidate_globals():
    s = fixture("functions_eval.sh")
    tr = command(s, "torchrun")
    assert tr.in_function == "launch"
    assert "4" in values(tr)
    assert tr.environment["NCCL_DEBUG"].value == "INFO"
    s = parse("N=1\nsetup() { N=8; export M=2; }\nsetup\necho $N $M\ndeepspeed t.py\n")
    assert values(command(s, "echo")) == [None, None]
    assert "M" in command(s, "deepspeed").environment


def test_eval_and_bash_c_are_read_with_spans_on_the_string():
    s = fixture("functions_eval.sh")
    acc = command(s, "accelerate")
    assert acc.from_eval
    assert values(acc) == ["launch", "--num_processes", "2", "train.py", "--per_device_train_batch_size", "4"]
    assert pos(acc.span) == (11, 6) and acc.span.text == '"$CMD"'
    ds = command(s, "deepspeed")
    assert ds.from_eval and pos(ds.span) == (12, 9)
    assert ds.environment["NCCL_DEBUG"].value == "INFO"
    assert "BS" not in ds.shell_vars  # a child shell does not see unexported variables
    debug = command(s, "deepspeed", 1)
    assert debug.conditional and not debug.from_eval


def test_eval_of_an_unknown_string_adds_nothing():
    s = parse('eval "$CMD"\neval $(./make_cmd.sh)\n')
    assert [c.basename for c in s.commands] == ["eval", "eval"]


def test_eval_prefix_assignments_inside_the_string():
    s = parse("CMD='CUDA_VISIBLE_DEVICES=0 deepspeed --num_gpus 1 t.py'\neval $CMD\n")
    cmd = command(s, "deepspeed")
    assert cmd.environment["CUDA_VISIBLE_DEVICES"].value == "0"
    assert cmd.from_eval


def test_command_from_a_variable_is_split_into_name_and_arguments():
    s = parse('LAUNCH="torchrun --nproc_per_node 4"\n$LAUNCH train.py\n')
    cmd = command(s, "torchrun")
    assert values(cmd) == ["--nproc_per_node", "4", "train.py"]


def test_assignment_lines_are_not_glued_to_the_next_command():
    # tree-sitter-bash folds `A=1 B=2<newline>cmd` into one command; bash does not.
    s = parse("A=1 B=2\nC=3 # note\nE=5 \\\ndeepspeed t.py\n")
    assert set(command(s, "deepspeed").environment) == {"E"}
    assert command(s, "deepspeed").shell_vars["C"].value == "3"
    assert [(a.name, a.kind) for a in s.assignments] == [("A", "plain"), ("B", "plain"), ("C", "plain"), ("E", "prefix")]
    # ... also when the command is the first of a pipeline: the assignments belong to the script
    s = parse("A=1 B=2\nCUDA_VISIBLE_DEVICES=0 \\\nswift sft | tee $A.log\n")
    swift = command(s, "swift")
    assert set(swift.environment) == {"CUDA_VISIBLE_DEVICES"} and swift.shell_vars["B"].value == "2"
    assert values(command(s, "tee")) == ["1.log"]


def test_variables_set_in_a_loop_are_unknown_after_it():
    s = parse("N=1\nfor f in $FILES; do N=5; done\necho $N\n")
    assert command(s, "echo").args[0].value is None


def test_heredocs():
    s = fixture("heredoc_config.sh")
    first, second = s.heredocs
    assert first.target.value == "ds_config.json" and first.expanded
    assert '"train_batch_size": 64' in first.value and '"gradient_accumulation_steps": 2' in first.value
    assert pos(first.span) == (6, 1)
    assert second.target.value == "literal.json" and not second.expanded
    assert second.value == '{"train_batch_size": $NOT_EXPANDED}\n'
    assert first.command is not None and first.command.basename == "cat"
    # the bodies are not commands
    assert [c.basename for c in s.commands] == ["cat", "cat", "deepspeed"]


def test_heredoc_with_unknown_parts_and_tab_stripping():
    s = parse('cat <<-EOF > x.json\n\t{"a": $(date), "b": $B}\n\tEOF\n')
    (doc,) = s.heredocs
    assert doc.value is None and doc.target.value == "x.json"


# ---------------------------------------------------------------------------------------
# fixtures in real shapes
# ---------------------------------------------------------------------------------------


def test_swift_fixture():
    s = fixture("swift_lora_sft.sh")
    (cmd,) = s.commands
    assert cmd.basename == "swift" and cmd.args[0].value == "sft"
    assert {k: v.value for k, v in cmd.environment.items()} == {"CUDA_VISIBLE_DEVICES": "0,1", "NPROC_PER_NODE": "2"}
    assert "AI-ModelScope/alpaca-gpt4-data-en#500" in values(cmd)
    assert '{"use_reentrant": false}' in values(cmd)
    assert not s.continuation_traps and not s.problems


def test_npu_fixture_resolves_expr():
    s = fixture("swift_npu.sh")
    cmd = command(s, "swift")
    args = values(cmd)
    assert args[args.index("--gradient_accumulation_steps") + 1] == "4"
    assert cmd.environment["NPROC_PER_NODE"].value == "4"
    assert cmd.environment["ASCEND_RT_VISIBLE_DEVICES"].value == "0,1,2,3"
    assert cmd.environment["HCCL_CONNECT_TIMEOUT"].source_kind == "export"
    assert "nproc_per_node" in cmd.shell_vars


def test_deepspeed_examples_fixture():
    s = fixture("ds_example.sh")
    cmd = command(s, "deepspeed")
    words = cmd.args
    assert words[1].value is None and words[1].assumed == "8"  # $NUM_GPUS
    assert "4" in values(cmd)  # $MICRO_BS
    zero = words[[w.raw for w in words].index("$ZERO_STAGE")]
    assert zero.value is None  # $2 or 2, decided by the caller
    assert cmd.shell_vars["GLOBAL_BS"].value is None and cmd.shell_vars["GLOBAL_BS"].assumed == "32"


def test_megatron_fixture_resolves_distributed_args():
    s = fixture("megatron_dist.sh")
    cmd = command(s, "torchrun")
    vals = values(cmd)
    assert vals[:10] == [
        "--nproc_per_node",
        "8",
        "--nnodes",
        "1",
        "--node_rank",
        "0",
        "--master_addr",
        "localhost",
        "--master_port",
        "6000",
    ]
    assert vals[vals.index("--global-batch-size") + 1] == "32"
    assert cmd.args[-1].raw == "$EXTRA_ARGS" and cmd.args[-1].may_split


# ---------------------------------------------------------------------------------------
# continuation traps
# ---------------------------------------------------------------------------------------


def test_every_trap_at_its_line_and_column():
    s = fixture("traps.sh")
    assert traps(s) == [
        ("blank-line-after-continuation", 4, 1),
        ("comment-in-continuation", 7, 1),
        ("space-after-backslash", 9, 22),
        ("env-not-exported", 11, 1),
        ("env-after-command", 13, 40),
        ("trailing-backslash-at-eof", 15, 29),
    ]
    blank, comment = s.continuation_traps[:2]
    assert blank.lost_env
    assert comment.orphans == "--log_completions true \\"
    # what bash does with it: the prefixes are gone from swift's environment
    first = command(s, "swift")
    assert first.environment == {}
    # the commented line ended the command: the rest is a separate (bogus) command
    assert [c.name.value for c in s.commands][1:3] == ["--log_completions", "--seed"]


def test_no_traps_in_comments_strings_and_heredocs():
    s = parse("# swift sft \\\n#   --model x \\\n\necho 'a \\\n\nb'\ncat <<EOF\nline \\\n\nEOF\necho done\\\\\n\n")
    assert traps(s) == []


def test_comment_at_the_end_of_a_continued_command_is_reported_as_harmless():
    s = parse("python t.py \\\n    --a 1 \\\n    # --b 2\n\necho done\n")
    (trap,) = s.continuation_traps
    assert (trap.code_name, *pos(trap.span)) == ("comment-in-continuation", 3, 5)
    assert trap.harmless


def test_blank_line_trap_explains_what_follows():
    s = parse("swift sft \\\n    --model x \\\n\n    --lr 1\n")
    (trap,) = s.continuation_traps
    assert trap.code_name == "blank-line-after-continuation" and pos(trap.span) == (3, 1)
    assert trap.orphans == "--lr 1" and not trap.harmless


def test_env_after_command_for_unexported_assignment_lines():
    s = parse("CUDA_VISIBLE_DEVICES=0,1\n# comment\nNPROC_PER_NODE=2\n\nswift sft --model m\n")
    assert traps(s) == [("env-not-exported", 1, 1), ("env-not-exported", 3, 1)]


def test_missing_backslash_after_a_prefix_block_is_reported_once():
    s = parse("CUDA_VISIBLE_DEVICES=0 \\\nMASTER_PORT=29501 \\\nNPROC_PER_NODE=2\nswift sft --model m\n")
    (trap,) = s.continuation_traps
    assert (trap.code_name, *pos(trap.span)) == ("env-not-exported", 3, 1)
    assert trap.names == ("CUDA_VISIBLE_DEVICES", "MASTER_PORT", "NPROC_PER_NODE") and trap.continued
    assert command(s, "swift").environment == {}


@pytest.mark.parametrize(
    "script",
    [
        "export CUDA_VISIBLE_DEVICES=0\nswift sft\n",
        "CUDA_VISIBLE_DEVICES=0\nexport CUDA_VISIBLE_DEVICES\nswift sft\n",
        "CUDA_VISIBLE_DEVICES=0 swift sft\n",
        "MODEL=Qwen/Qwen2.5-7B\nswift sft --model $MODEL\n",
        "NNODES=1\ndeepspeed --num_nodes $NNODES t.py\n",  # deepspeed does not read NNODES
        "GPUS=0,1\ndeepspeed --include localhost:$GPUS t.py\n",
        "CUDA_VISIBLE_DEVICES=0\necho hi\nswift sft\n",
        "llamafactory-cli train x.yaml learning_rate=1e-5\n",
        "accelerate launch --env NCCL_DEBUG=INFO t.py\n",
    ],
)
def test_no_env_after_command(script):
    assert [t for t in parse(script).continuation_traps if t.code_name in ("env-after-command", "env-not-exported")] == []


def test_crlf_file_is_read_with_one_trap():
    data = b"A=1\r\nCUDA_VISIBLE_DEVICES=0 \\\r\nswift sft \\\r\n    --model m\r\necho $A\r\n"
    s = parse_script(SourceFile.from_bytes("crlf.sh", data))
    assert traps(s) == [("crlf-line-endings", 1, 4)]
    cmd = command(s, "swift")
    assert values(cmd) == ["sft", "--model", "m"]
    assert cmd.environment["CUDA_VISIBLE_DEVICES"].value == "0"
    assert command(s, "echo").args[0].value == "1"


def test_trailing_backslash_at_eof_is_not_a_syntax_error():
    s = parse("swift sft \\\n    --padding_free true \\")
    assert s.problems == []
    assert traps(s) == [("trailing-backslash-at-eof", 2, 25)]
    assert values(command(s, "swift")) == ["sft", "--padding_free", "true"]


def test_escaped_backslash_at_line_end_is_not_a_continuation():
    assert parse("echo a\\\\\n\nswift sft\n").continuation_traps == []


# ---------------------------------------------------------------------------------------
# syntax problems
# ---------------------------------------------------------------------------------------


def test_unterminated_quote():
    s = parse("swift sft \\\n    --system 'You are \\\n    --lr 1\n")
    (problem,) = s.problems
    assert pos(problem.span) == (2, 5)  # bash names the line where the quote opens
    assert problem.message == "bash 5.2: unexpected EOF while looking for matching `''"


def test_missing_fi_and_stray_done():
    s = parse("if true; then\n  deepspeed t.py\n")
    (problem,) = s.problems
    assert problem.message == "bash 5.2: syntax error: unexpected end of file" and pos(problem.span)[0] == 3
    s = parse("echo a\ndone\n")
    (problem,) = s.problems
    assert pos(problem.span) == (2, 1) and problem.message == "bash 5.2: syntax error near unexpected token `done'"


def test_placeholder_values():
    s = parse("CHECKPOINT_PATH=<Specify path>\ndeepspeed t.py\n")
    (problem,) = s.problems
    assert pos(problem.span) == (1, 1)
    assert problem.message == "bash 5.2: syntax error near unexpected token `newline'"
    assert problem.note.startswith("`<Specify path>` reads as redirections")


def test_one_problem_per_script_at_the_first_error():
    """bash stops at its first syntax error: no cascade of findings after it."""
    s = parse("foo )\nbar )\n")
    assert [pos(p.span) for p in s.problems] == [(1, 1)]


@pytest.mark.parametrize(
    "text",
    [
        'echo "${VAR:-[default]}"\n',
        "x=${arr[@]:$start:$len}\n",
        "deepspeed t.py \\\n    `# the model` \\\n    --model m\n",
        "echo ${A:-{x}} $(case $1 in a) echo;; esac)\n",
    ],
)
def test_constructs_bash_accepts_are_not_errors(text):
    s = parse(text)
    assert s.problems == []


def test_what_tree_sitter_cannot_read_is_an_unread_part_not_a_problem():
    s = parse("echo $(( x ? 1 : 2 )) \\\n  `# note` | foo\ndeepspeed t.py --a 1\n")
    assert s.problems == []
    assert [u.text for u in s.unread] == ["echo $(( x ? 1 : 2 )) \\"]
    assert values(command(s, "deepspeed")) == ["t.py", "--a", "1"]


# ---------------------------------------------------------------------------------------
# robustness
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "\n", "   \n\t\n", "# only a comment\n", "\\", "'", "$((", "${", "<<EOF"])
def test_degenerate_inputs(text):
    s = parse(text)
    assert isinstance(s.commands, list)


def test_binaryish_junk_does_not_crash():
    rng = random.Random(7)
    alphabet = [chr(c) for c in range(1, 128)] + ["中", "😀", "\u202e", "\ufeff"]
    for _ in range(30):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 3000)))
        parse(text)


def test_shell_like_fuzz_does_not_crash():
    rng = random.Random(11)
    pieces = [
        "A=1",
        "$A",
        "${A:-x}",
        "${A:=y}",
        '"',
        "'",
        "\\",
        "\n",
        " ",
        "$((",
        "))",
        "$(",
        ")",
        "(",
        "{",
        "}",
        "if",
        "then",
        "fi",
        "for",
        "do",
        "done",
        ";",
        "&&",
        "|",
        "&",
        "<<EOF\n",
        "EOF\n",
        "eval",
        "export",
        "deepspeed",
        "--x",
        "`",
        "#",
        "${A[@]}",
        "case",
        "esac",
        "))",
        "\r\n",
    ]
    for _ in range(200):
        parse("".join(rng.choice(pieces) for _ in range(rng.randint(1, 60))))


def test_multibyte_text_positions():
    s = parse("# 训练脚本 ✓\nMODEL=千问; deepspeed --model $MODEL t.py # 注释\n")
    cmd = command(s, "deepspeed")
    assert pos(cmd.span) == (2, 11)
    assert cmd.args[1].value == "千问" and pos(cmd.args[1].span) == (2, 29)


def test_large_script():
    lines = ["#!/bin/bash", "export NCCL_DEBUG=INFO"]
    for i in range(5000):
        lines += [f"V{i}=$(( {i} * 2 ))", f'if [ -n "$X{i}" ]; then', f"  echo $V{i}", "fi"]
        lines.append(f"deepspeed t{i}.py --x $V{i}")
    lines += ["CUDA_VISIBLE_DEVICES=0 \\", "swift sft \\", "  --model m"]
    s = parse("\n".join(lines) + "\n")
    assert len(s.commands) == 10001
    last_ds = command(s, "deepspeed", 4999)
    assert values(last_ds)[-1] == "9998"
    assert command(s, "swift").environment["CUDA_VISIBLE_DEVICES"].value == "0"


@pytest.mark.parametrize(
    "text",
    [
        "if true; then\n" * 400 + "deepspeed t.py\n" + "fi\n" * 400,
        "( " * 600 + "echo hi" + " )" * 600 + "\n",
        "X=" + "$(echo " * 300 + "a" + ")" * 300 + "\necho $X\n",
        "X=" + "${A:-" * 300 + "a" + "}" * 300 + "\necho $X\n",
        "echo $((" + "(" * 500 + "1" + ")" * 500 + "))\n",
        "for i in 1; do\n" * 400 + "deepspeed t.py\n" + "done\n" * 400,
        "a && " * 2000 + "b\n",
        "f() {\n" * 300 + "g\n" + "}\n" * 300,
        "eval 'eval \"eval echo x\"'\n" * 3,
    ],
)
def test_deep_nesting_does_not_crash(text):
    parse(text)


def test_nested_constructs_within_the_depth_limit_are_read():
    s = parse("if true; then\n" * 50 + "deepspeed t.py\n" + "fi\n" * 50)
    assert command(s, "deepspeed").conditional
    s = parse("a && " * 300 + "deepspeed t.py\n")
    assert command(s, "deepspeed").conditional and len(s.commands) == 301


# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------


def test_split_word():
    s = parse("N=8\ntorchrun --nproc_per_node=$N --nnodes=$NN t.py\n")
    first, second = command(s, "torchrun").args[:2]
    name, value = split_word(first)
    assert name == "--nproc_per_node" and value.value == "8"
    assert value.span.text == "$N"
    name, value = split_word(second)
    assert name == "--nnodes" and value.value is None and value.span.text == "$NN"
    assert split_word(command(s, "torchrun").args[2]) is None


# ---- wrappers that run a command in an environment, and strings read as scripts (issue 15) ----


def test_tool_runners_are_peeled_off():
    s = parse(
        "uv run --with deepspeed -p 3.11 torchrun a.py\n"
        "uv run train.py --x 1\n"
        "uv run -m pkg.train --x 1\n"
        "uv pip install deepspeed\n"
        "poetry -C . run deepspeed b.py\n"
        "pdm run --venv v python c.py\n"
        "pixi run -e cuda accelerate launch d.py\n"
        "conda run -n train --no-capture-output python e.py\n"
        "micromamba run -p /opt/env python f.py\n"
        "conda activate train\n"
    )
    assert command(s, "torchrun").args[0].value == "a.py"
    pythons = [c for c in s.commands if c.basename == "python"]
    assert [[w.value for w in c.argv[:3]] for c in pythons] == [
        ["python", "train.py", "--x"], ["python", "-m", "pkg.train"], ["python", "c.py"], ["python", "e.py"], ["python", "f.py"],
    ]
    assert [w.value for w in pythons[0].wrappers] == ["uv", "run"]
    assert command(s, "uv").args[0].value == "pip"  # runs no command of ours
    assert command(s, "deepspeed").wrappers[0].value == "poetry"
    assert command(s, "accelerate").args[0].value == "launch"
    assert command(s, "conda").args[0].value == "activate"


def test_a_submitter_passes_the_command_after_double_dash():
    s = parse(
        "submit_job --gpus 8 -- torchrun --nproc_per_node 8 a.py\n"
        "ray job submit --working-dir . -- python b.py\n"
        "mytool --flag -- not_a_launcher x\n"
        "set -- python c.py\n"
    )
    assert [w.value for w in command(s, "torchrun").wrappers] == ["submit_job", "--gpus", "8", "--"]
    assert command(s, "python").args[0].value == "b.py"
    assert command(s, "mytool") and command(s, "set")
    assert len([c for c in s.commands if c.basename == "python"]) == 1


# ---- containers and remote shells (issue 22 item 4) ----


def _env(cmd) -> dict:
    return {name: value.value for name, value in cmd.environment.items()}


def test_container_wrappers_are_peeled_with_the_environment_they_give():
    s = parse(
        "export CUDA_VISIBLE_DEVICES=3 NCCL_DEBUG=INFO APPTAINERENV_OMP_NUM_THREADS=4\n"
        "singularity --quiet exec --nv -B /data:/data --pwd /ws img.sif torchrun --nproc_per_node 8 a.py\n"
        "apptainer run --cleanenv --env NCCL_P2P_DISABLE=1 img.sif deepspeed b.py\n"
        "docker run --rm -it --gpus all --shm-size 16g -e CUDA_VISIBLE_DEVICES=0,1 -e NCCL_DEBUG --env=HF_HOME=/h "
        "-v $PWD:/ws -w /ws nvcr.io/nvidia/pytorch:24.05-py3 accelerate launch c.py\n"
        "docker exec -it -u root box python -m torch.distributed.run --nproc_per_node 2 d.py\n"
        "docker container run --entrypoint '' img python e.py\n"
    )
    torchrun = command(s, "torchrun")
    assert [w.value for w in torchrun.wrappers][-1] == "img.sif" and torchrun.args[-1].value == "a.py"
    # apptainer passes the host's environment in, and APPTAINERENV_NAME as NAME
    assert _env(torchrun) == {"CUDA_VISIBLE_DEVICES": "3", "NCCL_DEBUG": "INFO", "APPTAINERENV_OMP_NUM_THREADS": "4", "OMP_NUM_THREADS": "4"}
    # --cleanenv: only what it is given
    assert _env(command(s, "deepspeed")) == {"OMP_NUM_THREADS": "4", "NCCL_P2P_DISABLE": "1"}
    # docker: the image's environment and -e, never the calling shell's exports; `-e NAME` passes NAME's value on
    accelerate = command(s, "accelerate")
    assert accelerate.args[:2][1].value == "c.py" and accelerate.wrappers[-1].value == "nvcr.io/nvidia/pytorch:24.05-py3"
    assert _env(accelerate) == {"NCCL_DEBUG": "INFO", "CUDA_VISIBLE_DEVICES": "0,1", "HF_HOME": "/h"}
    pythons = [c for c in s.commands if c.basename == "python"]
    assert [c.args[-1].value for c in pythons] == ["d.py", "e.py"] and _env(pythons[0]) == {}


@pytest.mark.parametrize(
    "text",
    [
        "singularity run img.sif train.py --lr 1\n",  # the runscript takes the words: not a command of ours
        "docker run img --config ds.json\n",  # the image's ENTRYPOINT takes them
        "docker run --entrypoint python img train.py\n",
        "docker run --env-file .env img deepspeed train.py\n",  # names dslint cannot read
        "docker run -e \"$EXTRA_ENV\" img deepspeed train.py\n",
        "apptainer exec --env A=1,B=2 img.sif deepspeed train.py\n",
        "docker build -t img .\n",
    ],
)
def test_container_calls_whose_command_or_environment_is_not_known_are_not_peeled(text):
    s = parse(text)
    assert all(not c.wrappers for c in s.commands) and s.commands[0].basename in ("singularity", "docker", "apptainer")


def test_container_options_only_known_at_run_time():
    s = parse("singularity exec $SING_OPTS $IMAGE torchrun --nproc_per_node 8 a.py\nsingularity exec $IMAGE python b.py\n")
    assert [w.raw for w in command(s, "torchrun").wrappers] == ["singularity", "exec", "$SING_OPTS", "$IMAGE"]
    assert [w.raw for w in command(s, "python").wrappers] == ["singularity", "exec", "$IMAGE"]


def test_ssh_and_pdsh_strings_run_in_a_remote_shell():
    text = (
        "export NCCL_DEBUG=INFO\n"
        "N=4\n"
        'ssh -p 2222 node1 -t "cd /ws && deepspeed --num_gpus $N train.py"\n'
        "ssh node2 'torchrun --nproc_per_node $N b.py'\n"
        "pdsh -R ssh -f 8 -w node[1-2] python c.py --x 1\n"
        "ssh -N -L 8080:localhost:80 gateway\n"
    )
    s = parse(text)
    deepspeed = command(s, "deepspeed")
    assert deepspeed.runner.basename == "ssh" and [w.value for w in deepspeed.args] == ["--num_gpus", "4", "train.py"]
    assert deepspeed.environment == {}  # nothing the calling shell exports reaches the remote shell
    assert deepspeed.subshell  # its `cd` moves nothing after it here
    # single quotes keep $N for the remote shell, where it is not set by the script
    assert [w.value for w in command(s, "torchrun").args] == ["--nproc_per_node", None, "b.py"]
    python = command(s, "python")
    assert python.runner.basename == "pdsh" and [w.value for w in python.args] == ["c.py", "--x", "1"]
    assert pos(python.name.span) == (5, 31)
    assert [c.basename for c in s.commands] == ["ssh", "cd", "deepspeed", "ssh", "torchrun", "pdsh", "python", "ssh"]


def test_a_child_shell_starts_with_the_environment_of_the_command_that_runs_it():
    s = parse(
        "export A=1\n"
        "CUDA_VISIBLE_DEVICES=0,1 bash -c 'deepspeed a.py'\n"
        "env -i C=3 bash -c 'deepspeed b.py'\n"
        "docker run --gpus all -e B=2 img bash -c 'cd /ws && deepspeed c.py'\n"
        "singularity exec --nv img.sif bash -c 'deepspeed d.py'\n"
    )
    launches = [c for c in s.commands if c.basename == "deepspeed"]
    assert [_env(c) for c in launches] == [
        {"A": "1", "CUDA_VISIBLE_DEVICES": "0,1"}, {"C": "3"}, {"B": "2"}, {"A": "1"},
    ]
    # the value is where the prefix assignment is, as for `CUDA_VISIBLE_DEVICES=0,1 deepspeed a.py`
    assert launches[0].environment["CUDA_VISIBLE_DEVICES"].span == command(s, "bash").environment["CUDA_VISIBLE_DEVICES"].span


@pytest.mark.parametrize(
    "hosts, count",
    [("node1", 1), ("node[1-4]", 4), ("node[1-2,7],login", 4), ("gpu[01-16]", 16), ("^hosts.txt", None), ("a[1-x]", None)],
)
def test_pdsh_host_lists(hosts, count):
    from dslint.documents.shell.remote import hostlist_size

    assert hostlist_size(hosts) == count


def test_bash_c_string_is_read_with_positions_inside_it():
    text = "srun -N 2 bash -c 'torchrun --nproc_per_node 8 a.py --lr 1e-4'\n"
    s = parse(text)
    cmd = command(s, "torchrun")
    assert cmd.from_eval
    lr = cmd.args[-1]
    assert lr.value == "1e-4" and text[lr.span.start : lr.span.end] == "1e-4"
    assert pos(cmd.name.span) == (1, 20)
    assert s.unmapped == []


def test_a_string_with_parts_only_the_caller_knows_is_still_read():
    s = parse(
        'LAUNCHER="accelerate launch --num_processes 8 --machine_rank $SLURM_PROCID"\n'
        'CMD="train.py --config $1"\n'
        'srun bash -c "$LAUNCHER $CMD"\n'
    )
    cmd = command(s, "accelerate")
    assert [w.value for w in cmd.args] == ["launch", "--num_processes", "8", "--machine_rank", None, "train.py", "--config", None]
    assert cmd.args[4].raw == "…"
    # the words can only be placed at the string: no fix may edit inside it
    assert pos(cmd.args[1].span) == (3, 14) and s.unmapped == [(cmd.args[1].span.start, cmd.args[1].span.end)]


def test_eval_of_a_string_assigned_verbatim_points_into_the_assignment():
    text = 'run_cmd="deepspeed --num_gpus 4 train.py --lr 2e-5"\neval ${run_cmd}\n'
    s = parse(text)
    lr = command(s, "deepspeed").args[-1]
    assert text[lr.span.start : lr.span.end] == "2e-5" and pos(lr.span) == (1, 47)


def test_single_quoted_unknown_part_stays_unknown():
    s = parse("bash -c \"python a.py --name '$1'\"\n")
    assert [w.value for w in command(s, "python").args] == ["a.py", "--name", None]


def test_command_strings_from_here_documents():
    s = parse(
        "cmd=$(cat <<EOF\ntrain.py --x 1\n  --y $Y\nEOF\n)\n"
        "deepspeed $cmd\n"
        "read -r -d '' opts <<'EOF'\nopenrlhf.cli.train_sft \\\n  --max_len 2048\nEOF\n"
        "deepspeed --module $opts\n"
        "IFS=: read -r -d '' other <<EOF\na:b\nEOF\n"
        "echo $other\n"
    )
    first, second = [c for c in s.commands if c.basename == "deepspeed"]
    assert [w.value for w in first.args] == ["train.py", "--x", "1", "--y", None]
    # a quoted delimiter keeps the backslash-newline, and `read -r` keeps the backslash
    assert [w.value for w in second.args] == ["--module", "openrlhf.cli.train_sft", "\\", "--max_len", "2048"]
    assert command(s, "echo").args[0].value is None  # a custom IFS is not the default trimming


# ---- ${...} that bash accepts when reading and rejects when expanding (issue 15) ----------------

FORMS = ["a", "a.b", "a b", "", "1a", "a-b", "a:", "a:-x", "a%%", "#a:1", "#a", "#", "##", "#-", "$a", "$", '"a"', "-a",
         "a=b=c", " a", "a ", "a,b", "NUM.GPUS", "a:1:2", "a::", "1", "10", "@", "*", "?", "a/b/c", "a^^", "a:?", "a+x",
         "_x9", "a\tb", "%a", "/a", "a.", ":a"]


@pytest.mark.parametrize("inner", FORMS)
def test_bad_substitution_agrees_with_bash(inner):
    """``rejected`` says "bad substitution" only where bash 5.2 does (bash run on the form)."""
    import shutil
    import subprocess

    from dslint.documents.shell.substitution import rejected

    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")
    script = "a=1\n: ${" + inner + "}\necho reached\n"
    run = subprocess.run([bash, "-c", script], capture_output=True, text=True, timeout=10)
    assert rejected(inner) == ("bad substitution" in run.stderr), run.stderr


def test_bad_substitutions_are_reported_once_where_they_certainly_run():
    s = parse(
        "NUM_GPUS=8\n"
        "torchrun --nproc_per_node ${NUM.GPUS} train.py --lr '${a.b}' ${c d}  # ${x y}\n"
        "if true; then echo ${a.b}; fi\n"
        "cd out && echo ${a.b}\n"
        "f() { echo ${a.b}; }\n"
        "CMD='deepspeed ${NUM.GPUS} x.py'\n"
        'eval "$CMD"\n'
        "exit 0\n"
        "echo ${a.b}\n"
    )
    found = [(pos(f.span), f.span.source.text[f.span.start : f.span.end]) for f in s.runtime_failures]
    assert found == [((2, 27), "${NUM.GPUS}"), ((7, 6), '"$CMD"')]
    assert "`${NUM.GPUS}: bad substitution`" in s.runtime_failures[1].message


# ---- what a script writes, and where a cd reaches ---------------------------------------------


def test_every_file_a_redirection_writes_is_recorded():
    s = parse('OUT=gen.json\necho x > a.json 2> err.log\n>> b.json\n{ echo; } &> "$OUT"\ncat <<EOF > c.json\n{}\nEOF\n'
              'f() {\n  tee d.json < in.txt >| e.json\n}\n')
    written = [(r.target.value, r.command.basename if r.command else None, r.in_function) for r in s.redirects]
    assert written == [("a.json", "echo", None), ("err.log", "echo", None), ("b.json", None, None),
                       ("gen.json", None, None), ("c.json", "cat", None), ("e.json", "tee", "f")]


def test_a_cd_in_a_subshell_or_a_pipeline_part_is_marked():
    s = parse("(cd a && make)\ncd b | cat\nbash -c 'cd c'\ncd d\n")
    assert [(c.args[0].value, c.subshell) for c in s.commands if c.basename == "cd"] == \
        [("a", True), ("b", True), ("c", True), ("d", False)]


def test_pwd_is_the_callers_folder_in_a_script_that_never_moves():
    # bash's pwd and $PWD name the folder the shell is in; a script with no cd/pushd/popd/source
    # is in the folder it was started from, where its relative paths are resolved: `$(pwd)/P` is `./P`.
    s = parse("DIR=`pwd`\nHERE=$(pwd -P)\necho ${DIR}/../../train.py $HERE/x \"$PWD/y\"\n")
    assert values(command(s, "echo")) == ["./../../train.py", "./x", "./y"]


@pytest.mark.parametrize("mover", ["cd /data", "pushd out", "source env.sh", ". ./env.sh", "if true; then cd x; fi"])
def test_pwd_stays_unknown_when_the_script_may_change_folder(mover):
    s = parse(f"DIR=$(pwd)\n{mover}\necho $DIR/train.py $PWD/x\n")
    assert values(command(s, "echo")) == [None, None]


def test_pwd_in_a_string_another_shell_runs_stays_unknown():
    s = parse("ssh node1 'python $(pwd)/train.py'\n")
    assert values(command(s, "python")) == [None]


def test_a_function_that_unsets_a_name_set_before_it_is_read():
    # autoconf's configure: names unset in a loop, then a function that evals and unsets its argument
    from dslint.documents.shell import parse_script
    from dslint.source import SourceFile

    text = ("for as_var in BASH_ENV ENV MAIL MAILPATH\ndo eval test x\\${$as_var+set} = xset \\\n"
            "  && ( (unset $as_var) || exit 1) >/dev/null 2>&1 && unset $as_var || :\ndone\n"
            "as_fn_unset ()\n  { eval $1=; unset $1;}\n")
    script = parse_script(SourceFile("configure", text))
    assert "as_fn_unset" in script.functions
