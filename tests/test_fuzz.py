"""Hostile input, generated: nothing escapes, every run ends, output stays valid, --fix keeps files parsing.

- mutations of the shared corpus (byte flips, truncation, duplicated lines, deleted quotes, random
  unicode, deep nesting, huge numbers, alias-heavy YAML), linted in-process;
- generated launch scripts mixing continuations, quotes, heredocs, arithmetic, ``eval``,
  functions, arrays and substitutions;
- properties: no exception and no internal error; the JSON report parses; a file that parsed
  before ``--fix`` parses after it (for scripts also ``bash -n``, which reads and never runs);
- pathological inputs run in a subprocess under ``resource.setrlimit`` (memory) and a timeout:
  each ends, within the limits, with valid JSON and, past dslint's limits, a diagnostic.

No wall-clock assertions: the timeouts only stop a run that would otherwise hang the suite.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dslint.config import Settings
from dslint.documents import Skipped, read_document
from dslint.run.engine import Engine
from dslint.fix.apply import fix_paths
from dslint.report import ReportOptions, render

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
HYPOTHESIS = dict(derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck), print_blob=False)
BASH = shutil.which("bash")


def _corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    files = sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.suffix in (".json", ".yaml", ".yml"))
    return files[:: max(1, len(files) // 120)]  # about 120 files, spread over every repository


CORPUS_FILES = _corpus_files()
ENGINE = Engine(Settings(root=ROOT))


# ---- mutations -------------------------------------------------------------------------------------


def byte_flip(data: bytes, draw) -> bytes:
    if not data:
        return data
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 8))):
        i = draw(st.integers(0, len(out) - 1))
        out[i] ^= 1 << draw(st.integers(0, 7))
    return bytes(out)


def truncate(data: bytes, draw) -> bytes:
    return data[: draw(st.integers(0, len(data)))]


def duplicate_lines(data: bytes, draw) -> bytes:
    lines = data.splitlines(keepends=True)
    if not lines:
        return data
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(lines) - 1))
        lines.insert(i, lines[i])
    return b"".join(lines)


def delete_quotes(data: bytes, draw) -> bytes:
    quotes = [i for i, b in enumerate(data) if b in b"\"'"]
    if not quotes:
        return data
    drop = set(draw(st.lists(st.sampled_from(quotes), min_size=1, max_size=4)))
    return bytes(b for i, b in enumerate(data) if i not in drop)


def random_unicode(data: bytes, draw) -> bytes:
    text = data.decode("utf-8", "replace")
    junk = draw(st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12))
    i = draw(st.integers(0, len(text)))
    return (text[:i] + junk + text[i:]).encode("utf-8", "surrogatepass")


def deep_nesting(data: bytes, draw) -> bytes:
    depth = draw(st.sampled_from([63, 64, 65, 200, 5000]))
    text = data.decode("utf-8", "replace")
    i = text.find(":")
    if i < 0:
        return data
    yaml = not text.lstrip().startswith("{")
    opening, closing = ("[" * depth, "]" * depth)
    if draw(st.booleans()):
        opening, closing = ('{"a": ' * depth, "}" * depth) if not yaml else ("{a: " * depth, "}" * depth)
    line_end = text.find("\n", i)
    line_end = len(text) if line_end < 0 else line_end
    return (text[: i + 1] + " " + opening + "1" + closing + text[line_end:]).encode()


def huge_numbers(data: bytes, draw) -> bytes:
    text = data.decode("utf-8", "replace")
    number = draw(st.sampled_from(["9" * 5000, "1e999999", "-1e400", "0x" + "f" * 300, "1" + "0" * 400 + ".5", "NaN", "Infinity", "1_000_000"]))
    import re

    digits = list(re.finditer(r"(?<![\w.])\d+(?![\w.])", text))
    if not digits:
        return data
    match = draw(st.sampled_from(digits))
    return (text[: match.start()] + number + text[match.end():]).encode()


def alias_heavy(data: bytes, draw) -> bytes:
    levels = draw(st.integers(3, 9))
    text = "lol0: &lol0 [a, b, c, d, e, f, g, h, i]\n"
    for level in range(1, levels + 1):
        text += f"lol{level}: &lol{level} [" + ", ".join([f"*lol{level - 1}"] * 9) + "]\n"
    if draw(st.booleans()):
        text += "merged: {<<: [*lol1, *lol2]}\n" if levels >= 2 else ""
    return data + b"\n" + text.encode()


MUTATIONS = {f.__name__: f for f in (byte_flip, truncate, duplicate_lines, delete_quotes, random_unicode, deep_nesting, huge_numbers, alias_heavy)}


# ---- properties ------------------------------------------------------------------------------------


def _parses(name: str, data: bytes):
    """(kind, clean) as dslint reads the file; (None, False) when it is skipped."""
    try:
        document = read_document(name, data)
    except Skipped:
        return None, False
    return document.kind, not document.problems


def _check_run(name: str, data: bytes):
    result = ENGINE.lint_bytes(name, data)
    assert not result.internal_errors, result.internal_errors
    payload = json.loads(render("json", result, ReportOptions()))
    assert payload["version"] == 1 and isinstance(payload["diagnostics"], list)
    json.loads(render("sarif", result, ReportOptions()))
    return result


def _check_fix(tmp: Path, name: str, data: bytes) -> None:
    """--fix on a copy: a file that parsed cleanly before still does, as the same kind."""
    kind, clean = _parses(name, data)
    if kind is None or not clean:
        return
    for old in tmp.iterdir():
        old.unlink()
    path = tmp / name
    path.write_bytes(data)
    bash_before = _bash_ok(path) if name.endswith(".sh") else None
    cwd = os.getcwd()
    os.chdir(tmp)
    try:
        engine = Engine(Settings(root=tmp))
        outcome = fix_paths(lambda overrides: engine.lint_paths([name], overrides), unsafe=True, write=True)
    finally:
        os.chdir(cwd)
    assert not outcome.result.internal_errors, outcome.result.internal_errors
    after = path.read_bytes()
    if after != data:
        assert _parses(name, after) == (kind, True), f"--fix broke {name}:\n{data[:400]!r}\n->\n{after[:400]!r}"
        if bash_before:
            assert _bash_ok(path), f"--fix broke {name} for bash -n"


def _bash_ok(path: Path) -> bool:
    if BASH is None:
        return True
    proc = subprocess.run([BASH, "-n", str(path)], capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
    return proc.returncode == 0


@pytest.mark.skipif(not CORPUS_FILES, reason="the shared corpus is not beside the repository")
@settings(max_examples=400, **HYPOTHESIS)
@given(data=st.data())
def test_mutated_corpus_files(tmp_path_factory, data):
    source = data.draw(st.sampled_from(CORPUS_FILES), label="file")
    mutation = data.draw(st.sampled_from(sorted(MUTATIONS)), label="mutation")
    original = source.read_bytes()
    mutated = MUTATIONS[mutation](original, data.draw)
    name = "ds_config.json" if source.suffix == ".json" else ("accelerate.yaml" if "accelerate" in source.name else "train.yaml")
    _check_run(name, mutated)
    _check_fix(tmp_path_factory.mktemp("fix"), name, mutated)


@given(raw=st.binary(max_size=400), name=st.sampled_from(["ds.json", "train.yaml", "run.sh", "acc.yaml", "config.json"]))
@settings(max_examples=150, **HYPOTHESIS)
def test_random_bytes(raw, name):
    _check_run(name, raw)


# ---- generated launch scripts ----------------------------------------------------------------------

WORDS = st.sampled_from(["train.py", "--deepspeed", "ds.json", "--lr", "1e-5", "$NGPU", "${NGPU:-8}", "$(nproc)", "`hostname`", '"$@"',
                         "'--bf16 true'", "--num_gpus=$((2*4))", "--per_device_train_batch_size", "$((BS / 2))", "${A[@]}", "~/x",
                         '"${CFG:?missing}"', "$'a\\tb'", "{1..3}", "--", "\\$HOME", '"a b"', "''", "${#A}", "${X//a/b}"])
LAUNCHERS = st.sampled_from(["deepspeed", "torchrun --nproc_per_node 4", "accelerate launch --config_file acc.yaml", "python -m torch.distributed.run",
                             "swift sft", "llamafactory-cli train cfg.yaml", "python", "deepspeed --include localhost:0,1", "srun torchrun"])


@st.composite
def statements(draw, depth=0):
    kind = draw(st.sampled_from(["launch", "launch", "assign", "export", "arith", "eval", "heredoc", "function", "if", "array", "subshell",
                                 "comment", "continuation-trap", "source", "case", "for"]))
    words = " ".join(draw(st.lists(WORDS, max_size=6)))
    launch = f"{draw(LAUNCHERS)} {words}"
    if kind == "launch":
        glue = draw(st.sampled_from([" ", " \\\n    ", " \\ \n", " \\\n\n", " \\\n# c\n  "]))
        return glue.join(launch.split(" ")) if draw(st.booleans()) else launch
    if kind == "assign":
        return f"{draw(st.sampled_from(['NGPU', 'BS', 'CFG', 'A', 'X']))}={draw(WORDS)}"
    if kind == "export":
        return f"export {draw(st.sampled_from(['CUDA_VISIBLE_DEVICES=0,1', 'NPROC_PER_NODE=4', 'MASTER_PORT=$((RANDOM % 1000 + 20000))', 'X']))}"
    if kind == "arith":
        return draw(st.sampled_from(["N=$(( 9**9**9 ))", "((i++))", "let 'x = 1 << 70'", "echo $(( 1/0 ))", "N=$(( ${#A} * 2 ))", "x=$[1+2]"]))
    if kind == "eval":
        return f'eval "{launch.replace(chr(34), chr(39))}"'
    if kind == "heredoc":
        quote = draw(st.sampled_from(["EOF", "'EOF'", '"EOF"', "-EOF"]))
        return f"cat > ds.json <<{quote}\n{{\"train_batch_size\": $BS}}\nEOF"
    if kind == "function":
        return f"run() {{\n  {launch} \"$@\"\n}}\nrun --seed 1"
    if kind == "if" and depth < 3:
        return f"if [ -n \"$X\" ]; then\n  {draw(statements(depth + 1))}\nelse\n  {draw(statements(depth + 1))}\nfi"
    if kind == "array":
        return 'A=(--lr 1e-5 "--bf16 true")\n' + f"{draw(LAUNCHERS)} train.py " + '"${A[@]}"'
    if kind == "subshell":
        return f"( cd sub && {launch} ) &\nwait"
    if kind == "continuation-trap":
        return f"{launch} \\\n--lr 1e-5 \\"
    if kind == "source":
        return draw(st.sampled_from([". ./env.sh", "source /etc/profile", "source <(echo X=1)"]))
    if kind == "case" and depth < 3:
        return f'case "$1" in\n  a) {draw(statements(depth + 1))} ;;\n  *) {launch} ;;\nesac'
    if kind == "for" and depth < 3:
        return f"for i in 1 2 3; do\n  {draw(statements(depth + 1))}\ndone"
    return "# " + words


@st.composite
def scripts(draw):
    body = "\n".join(draw(st.lists(statements(), min_size=1, max_size=12)))
    head = draw(st.sampled_from(["#!/bin/bash\n", "#!/usr/bin/env bash\nset -euo pipefail\n", "", "#!/bin/sh\n"]))
    text = head + body + draw(st.sampled_from(["\n", "", "\n\n", "\\\n"]))
    return text.replace("\n", "\r\n") if draw(st.integers(0, 9)) == 0 else text


@settings(max_examples=300, **HYPOTHESIS)
@given(text=scripts())
def test_generated_launch_scripts(tmp_path_factory, text):
    data = text.encode()
    _check_run("train.sh", data)
    _check_fix(tmp_path_factory.mktemp("fix"), "train.sh", data)


# ---- pathological inputs, in a subprocess with a memory limit and a timeout ------------------------

MEMORY_LIMIT = 1536 * 1024 * 1024  # address space, bytes
GUARD = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
sys.argv = ["dslint", "check", "--no-config", "--format", "json", "--exit-zero", *sys.argv[1:]]
from dslint.cli import main
main()
"""


def _doubling(lines: int) -> str:
    return "#!/bin/bash\nA=x\n" + 'A="$A$A"\n' * lines + "deepspeed --num_gpus 2 train.py --deepspeed $A\n"


PATHOLOGICAL = {
    "variable-doubling.sh": (_doubling(64), None),
    "array-doubling.sh": ("#!/bin/bash\nA=(x y)\n" + 'A=("${A[@]}" "${A[@]}")\n' * 40 + "deepspeed train.py --deepspeed ${A[0]}\n", None),
    "replace-blowup.sh": ("#!/bin/bash\nA=x\n" + "A=$A$A\n" * 16 + "B=${A//x/$A}\nC=${B//x/$B}\ntorchrun --nproc_per_node 2 train.py --deepspeed $C\n", None),
    "arithmetic.sh": ("#!/bin/bash\nN=$(( 9**9**9**9 ))\nM=$(( (1<<62) ** (1<<62) ))\nK=$(( ${#N} ** 999999 ))\ntorchrun --nproc_per_node $N train.py\n", None),
    "nested-substitution.sh": ("#!/bin/bash\nX=" + "$(echo " * 3000 + "a" + ")" * 3000 + "\ndeepspeed train.py\n", None),
    "nested-if.sh": ("#!/bin/bash\n" + "if true; then\n" * 2000 + "deepspeed train.py\n" + "fi\n" * 2000, None),
    "eval-chain.sh": ("#!/bin/bash\nA='deepspeed train.py'\n" + "".join(f"B{i}='eval \"$B{i - 1}\"'\n" for i in range(1, 200)) + 'eval "$B199"\n', None),
    "long-line.sh": ("#!/bin/bash\ndeepspeed train.py --x " + "a" * 200_000 + "\n", None),
    "many-launches.sh": ("#!/bin/bash\n" + "deepspeed --num_gpus 8 train.py --deepspeed ds.json\n" * 990 + ("# " + "x" * 200 + "\n") * 900, None),
    "too-many-lines.sh": ("#!/bin/bash\n" + "export A=1\n" * 6000 + "deepspeed train.py\n", "lines; dslint reads launch scripts up to 5,000 lines"),
    "too-many-commands.sh": ("#!/bin/bash\n" + "deepspeed train.py; " * 3000 + "\n", "script has 3,000 commands; dslint reads launch scripts of up to 1,000"),
    "too-big.sh": ("#!/bin/bash\n" + "deepspeed train.py --deepspeed ds.json " + "--x y " * 60_000 + "\n", "dslint reads launch scripts up to 256 KB"),
    "deep.json": ('{"train_batch_size": 8, "a": ' + "[{" * 50_000 + "}]" * 50_000 + "}", "nesting is"),
    "huge-number.json": ('{"train_batch_size": ' + "9" * 100_000 + ', "train_micro_batch_size_per_gpu": 1e999999}', None),
    "alias-bomb.yaml": ("model_name_or_path: m\noutput_dir: o\n" + 'a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]\n'
                        + "".join(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 12)), "YAML nodes after alias expansion"),
    "huge-number.yaml": ("model_name_or_path: m\noutput_dir: o\nlearning_rate: 1e99999999\nseed: " + "9" * 100_000 + "\n", None),
}


@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_pathological_input_ends_within_limits(tmp_path, name):
    text, expected = PATHOLOGICAL[name]
    (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "train.py").write_text("")
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS",)}
    proc = subprocess.run([sys.executable, "-c", GUARD.format(limit=MEMORY_LIMIT), "."], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env=env, stdin=subprocess.DEVNULL)
    assert proc.returncode in (0, 1), (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr and "MemoryError" not in proc.stderr, proc.stderr[-2000:]
    payload = json.loads(proc.stdout)
    if expected is not None:
        assert any(expected in d["message"] for d in payload["diagnostics"]), payload["diagnostics"][:5]
