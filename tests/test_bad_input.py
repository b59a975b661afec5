"""Hostile and broken inputs: each gives a clear diagnostic or is skipped with a reason.

Nothing crashes (no traceback, no internal error, no signal), nothing hangs (every run has a
subprocess timeout), and the other files of the run are still linted: every case sits next to
``companion.json``, whose DS101 finding must be reported too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dslint.config import Settings
from dslint.run.engine import Engine

CORE = "DS001,DS002,DS003,DS101,DS102"
COMPANION = '{"train_batch_size": 48, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8}\n'
COMPANION_FINDING = ("companion.json", 1, 22, "DS101")
DS101_MULTILINE = '{\n  "train_batch_size": 48,\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": 8\n}\n'
TRAINING_HEAD = "model_name_or_path: Qwen/Qwen2.5-7B\noutput_dir: out\n"


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}
    proc = subprocess.run(
        [sys.executable, "-m", "dslint", "--no-config", "--select", CORE, *args],
        cwd=cwd, capture_output=True, text=True, encoding="utf-8", env=env, timeout=300,
    )
    assert proc.returncode in (0, 1, 2), f"killed by signal {-proc.returncode}" if proc.returncode < 0 else proc.returncode
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    return proc


def check(cwd: Path, *paths: str) -> tuple[list[tuple], str]:
    """Lint ``paths`` (default: the directory) with ``-v``; (path, line, column, code, message) and stderr.

    The message is the headline followed by its notes (``headline: note``), the whole of what is said."""
    proc = run(cwd, "--format", "json", "-v", *(paths or (".",)))
    assert proc.returncode in (0, 1), proc.stderr
    diagnostics = json.loads(proc.stdout)["diagnostics"]
    return [(d["path"], d["line"], d["column"], d["code"], ": ".join([d["message"], *d["detail"]["notes"]])) for d in diagnostics], proc.stderr


def without_companion(found: list[tuple]) -> list[tuple]:
    """Assert the companion's finding is there, and return the others."""
    assert [f[:4] for f in found if f[0] == "companion.json"] == [COMPANION_FINDING], found
    return [f for f in found if f[0] != "companion.json"]


@pytest.fixture
def here(tmp_path: Path) -> Path:
    (tmp_path / "companion.json").write_text(COMPANION)
    return tmp_path


def both_ways(here: Path, name: str) -> list[tuple[list[tuple], str]]:
    """The run over the directory (the file is walked) and with the file named explicitly."""
    return [check(here), check(here, name, "companion.json")]


# ---- bytes that are not text ---------------------------------------------------------------


def test_binary_file_named_json(here):
    (here / "x.json").write_bytes(bytes(range(256)) * 8)
    walked, named = both_ways(here, "x.json")
    assert without_companion(walked[0]) == []
    assert "dslint: skipped x.json: cannot be read as text: binary file (NUL byte at offset 0)" in walked[1]
    # named on the command line, it has to be read: an error (tests/test_unreadable.py has the other cases)
    message = "binary file (NUL byte at offset 0): not text DeepSpeed's hjson and HF's json.load can read"
    assert without_companion(named[0]) == [("x.json", 1, 1, "DS003", message)]


def test_invalid_utf8_in_a_deepspeed_config(here):
    data = b'{\n  "train_batch_size": 8,\n  "comment": "caf\xe9 cr\xe8me"\n}\n'
    (here / "ds.json").write_bytes(data)
    offset = data.index(b"\xe9")
    for found, _ in both_ways(here, "ds.json"):
        assert without_companion(found) == [
            ("ds.json", 3, 18, "DS001", f"invalid UTF-8 (byte 0xe9 at offset {offset}): DeepSpeed's hjson and HF's json.load raise UnicodeDecodeError")
        ]


def test_invalid_utf8_in_a_training_yaml(here):
    data = TRAINING_HEAD.encode() + b"learning_rate: 1.0e-5  # \xff\n"
    (here / "train.yaml").write_bytes(data)
    found, _ = check(here)
    offset = data.index(b"\xff")
    message = f"invalid UTF-8 (byte 0xff at offset {offset}): HF, LLaMA-Factory, ms-swift and accelerate read YAML as UTF-8 and raise UnicodeDecodeError"
    assert without_companion(found) == [("train.yaml", 3, 26, "DS001", message)]


def test_invalid_utf8_in_json_that_is_not_a_config(here):
    (here / "data.json").write_bytes(b'{"name": "\xff"}\n')
    found, stderr = check(here)
    assert without_companion(found) == []
    assert "dslint: skipped data.json: cannot be read as text: invalid UTF-8 (byte 0xff at offset 10)" in stderr


# ---- byte-order mark and line endings ------------------------------------------------------


def test_utf8_bom_keeps_positions(here):
    (here / "ds.json").write_bytes(b"\xef\xbb\xbf" + COMPANION.encode())
    (here / "train.yaml").write_bytes(b"\xef\xbb\xbf" + TRAINING_HEAD.encode() + b"  learning_rate: 1\n")
    found, _ = check(here)
    assert [f[:4] for f in without_companion(found)] == [("ds.json", 1, 22, "DS101"), ("train.yaml", 3, 16, "DS001")]
    proc = run(here, "ds.json", "--format", "json")
    (diagnostic,) = json.loads(proc.stdout)["diagnostics"]
    assert (diagnostic["end_line"], diagnostic["end_column"]) == (1, 24)
    assert [(r["line"], r["column"]) for r in diagnostic["related"]] == [(1, 60), (1, 94)]
    assert "\ufeff" not in run(here, "ds.json").stdout


def test_crlf_keeps_positions(here):
    (here / "ds.json").write_bytes(DS101_MULTILINE.replace("\n", "\r\n").encode())
    (here / "train.yaml").write_bytes((TRAINING_HEAD + "  learning_rate: 1\n").replace("\n", "\r\n").encode())
    found, _ = check(here)
    assert [f[:4] for f in without_companion(found)] == [("ds.json", 2, 23, "DS101"), ("train.yaml", 3, 16, "DS001")]
    proc = run(here, "ds.json", "--format", "json")
    (diagnostic,) = json.loads(proc.stdout)["diagnostics"]
    assert (diagnostic["end_line"], diagnostic["end_column"]) == (2, 25)
    assert [(r["line"], r["column"]) for r in diagnostic["related"]] == [(3, 37), (4, 34)]
    (edit,) = diagnostic["fix"]["edits"]
    assert (edit["start_line"], edit["start_column"], edit["end_line"], edit["end_column"]) == (2, 1, 3, 1)
    text = run(here, "ds.json").stdout
    assert "\r" not in text
    assert '2 |   "train_batch_size": 48,\n  |                       ^^\n' in text


def test_bom_and_crlf_together(here):
    (here / "ds.json").write_bytes(b"\xef\xbb\xbf" + DS101_MULTILINE.replace("\n", "\r\n").encode())
    found, _ = check(here)
    assert [f[:4] for f in without_companion(found)] == [("ds.json", 2, 23, "DS101")]


# ---- empty, huge, deep ---------------------------------------------------------------------


@pytest.mark.parametrize("name,content", [("empty.json", b""), ("empty.yaml", b""), ("blank.json", b"  \n\n"), ("blank.yml", b"\n"), ("bom.json", b"\xef\xbb\xbf")])
def test_empty_files(here, name, content):
    """Skipped when walked; named on the command line, an error (no reader takes an empty config)."""
    (here / name).write_bytes(content)
    walked, named = both_ways(here, name)
    assert without_companion(walked[0]) == []
    assert f"dslint: skipped {name}: empty file" in walked[1]
    ((path, line, column, code, message),) = without_companion(named[0])
    assert (path, line, column, code) == (name, 1, 1, "DS003")
    assert message.startswith("empty file: ")


@pytest.mark.parametrize("name", ["huge.json", "huge.yaml"])
def test_fifty_megabyte_file(here, name):
    with open(here / name, "wb") as handle:  # sparse: quick to create, 50 MB to stat
        handle.truncate(50 * 1024 * 1024)
    for found, _ in both_ways(here, name):
        assert without_companion(found) == [(name, 1, 1, "DS003", "file is 52.4 MB; dslint reads files up to 10 MB")]


def test_deeply_nested_json(here):
    (here / "brackets.json").write_text("[" * 100_000)
    (here / "ds.json").write_text('{"train_batch_size": 8, "zero_optimization": ' + "[" * 100_000 + "]" * 100_000 + "}")
    (here / "objects.json").write_text('{"train_batch_size": 8, "a": ' + '{"a": ' * 100_000 + "1" + "}" * 100_001)
    found, stderr = check(here)
    assert without_companion(found) == [
        ("ds.json", 1, 1, "DS001", "nesting is 100001 levels deep; dslint reads at most 64"),
        ("objects.json", 1, 1, "DS001", "nesting is 100001 levels deep; dslint reads at most 64"),
    ]
    assert "dslint: skipped brackets.json: a JSON array of 0.1 MB: data, not a config" in stderr  # its head says so


def test_nesting_at_the_limit_is_read(here):
    (here / "ds.json").write_text('{"train_batch_size": 8, "a": ' + "[" * 60 + "]" * 60 + "}")
    (here / "train.yaml").write_text(TRAINING_HEAD + "a: " + "[" * 60 + "]" * 60 + "\n")
    found, _ = check(here)
    assert without_companion(found) == []


@pytest.mark.parametrize("body, line, first_column", [
    # (line, column) of the collection that is nested 65 deep (the root mapping is level 1)
    ("nested: " + "[" * 100_000 + "\n", 3, 9 + 63),
    ("nested: " + "{a: " * 100_000 + "\n", 3, 9 + 63 * 4),
    ("nested:\n  " + "- " * 100_000 + "x\n", 4, 3 + 63 * 2),
    ("nested:\n" + "".join(" " * i + "k:\n" for i in range(1, 400)), 68, 66),
], ids=["flow-sequences", "flow-mappings", "block-sequences-on-one-line", "block-mappings-by-indentation"])
def test_deeply_nested_yaml(here, body, line, first_column):
    """One DS001 where the nesting passes 64 levels, whichever PyYAML is installed.

    The libyaml of PyYAML 6.0.4 refuses 1,000 levels itself, and in a flow collection its
    scanner reads ahead to that refusal before the deep events come out: the finding is then at
    the place libyaml gave up (still on the nested line, further right), not a "not valid YAML".
    """
    (here / "train.yaml").write_text(TRAINING_HEAD + body)
    found, _ = check(here)
    ((path, found_line, column, code, message),) = without_companion(found)
    assert (path, found_line, code, message) == ("train.yaml", line, "DS001", "nesting deeper than 64 levels; not linted")
    libyaml_limit = body.startswith("nested: [") and tuple(map(int, yaml.__version__.split(".")[:3])) >= (6, 0, 4)
    assert column == first_column or (libyaml_limit and first_column < column <= 8 + 1_000), column


# ---- YAML aliases --------------------------------------------------------------------------

MERGE_YAML = """base: &base
  learning_rate: 1.0e-5
  per_device_train_batch_size: 2
model_name_or_path: Qwen/Qwen2.5-7B
output_dir: &out out
logging_dir: *out
run:
  <<: *base
  per_device_train_batch_size: 4
"""


def test_anchors_aliases_and_merge_keys(here, monkeypatch):
    (here / "train.yaml").write_text(MERGE_YAML)
    found, _ = check(here)
    assert without_companion(found) == []
    monkeypatch.chdir(here)
    result = Engine(Settings(root=here)).lint_paths(["train.yaml"])
    (document,) = result.documents
    run_section = document.mapping.get("run")
    assert run_section.value_of("learning_rate") == 1.0e-5  # merged from the anchor
    assert run_section.value_of("per_device_train_batch_size") == 4  # the mapping's own key wins
    assert run_section.entry("learning_rate").merged
    assert document.mapping.value_of("logging_dir") == "out"


def billion_laughs(levels: int = 9) -> str:
    text = TRAINING_HEAD + 'lol0: &lol0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n'
    for level in range(1, levels + 1):
        text += f"lol{level}: &lol{level} [" + ", ".join([f"*lol{level - 1}"] * 9) + "]\n"
    return text


def merge_bomb(levels: int = 12) -> str:
    text = TRAINING_HEAD + "m0: &m0 {a: 1}\n"
    for level in range(1, levels + 1):
        text += f"m{level}: &m{level} {{<<: [" + ", ".join([f"*m{level - 1}"] * 9) + "]}\n"
    return text


@pytest.mark.parametrize("text", [billion_laughs(), merge_bomb()], ids=["billion-laughs", "merge-key-bomb"])
def test_alias_bomb(here, text):
    (here / "bomb.yaml").write_text(text)
    found, _ = check(here)
    assert without_companion(found) == [("bomb.yaml", 1, 1, "DS001", "more than 100000 YAML nodes after alias expansion; not linted")]


def test_recursive_alias(here):
    (here / "train.yaml").write_text(TRAINING_HEAD + "a: &a [1, *a]\n")
    found, _ = check(here)
    # reported inside the sequence that contains itself, where the expansion passes 64 levels
    ((path, line, column, code, message),) = without_companion(found)
    assert (path, line, code, message) == ("train.yaml", 3, "DS001", "nesting deeper than 64 levels; not linted")
    assert 7 <= column <= 13


@pytest.mark.parametrize("line,message", [
    ("seed: " + "9" * 5000, "Exceeds the limit (4300 digits) for integer string conversion"),
    ("when: 2024-02-30", "day is out of range for month"),
    ("tag: !!python/object/apply:os.system [ls]", "could not determine a constructor for the tag 'tag:yaml.org,2002:python/object/apply:os.system'"),
    ("tag: !custom 1", "could not determine a constructor for the tag '!custom'"),
], ids=["huge-integer", "impossible-date", "python-tag-on-a-sequence", "unknown-tag-on-a-scalar"])
def test_values_safe_load_cannot_construct(here, line, message):
    (here / "train.yaml").write_text(TRAINING_HEAD + line + "\n")
    found, _ = check(here)
    (problem,) = without_companion(found)
    assert problem[:4] == ("train.yaml", 3, line.index(":") + 3, "DS001")
    assert problem[4].startswith("not valid YAML for PyYAML safe_load: ") and message in problem[4]


# ---- files that cannot be opened -----------------------------------------------------------


def test_symlink_loop(here):
    (here / "a.json").symlink_to("a.json")
    (here / "b.json").symlink_to("c.json")
    (here / "c.json").symlink_to("b.json")
    found, stderr = check(here)
    assert without_companion(found) == []
    assert "dslint: skipped a.json: cannot read: symbolic link loop" in stderr
    assert "dslint: skipped b.json: cannot read: symbolic link loop" in stderr
    found, _ = check(here, "a.json", "b.json", "companion.json")
    assert without_companion(found) == [
        ("a.json", 1, 1, "DS003", "cannot read file: symbolic link loop"),
        ("b.json", 1, 1, "DS003", "cannot read file: symbolic link loop"),
    ]


def test_dangling_symlink(here):
    (here / "gone.json").symlink_to("nowhere.json")
    found, stderr = check(here)
    assert without_companion(found) == []
    assert "dslint: skipped gone.json: cannot read: No such file or directory" in stderr
    found, _ = check(here, "gone.json", "companion.json")
    assert without_companion(found) == [("gone.json", 1, 1, "DS003", "cannot read file: No such file or directory")]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="running as root: chmod 000 does not stop root from reading (see the in-process test below)")
def test_unreadable_file(here):
    (here / "ds.json").write_text(COMPANION)
    os.chmod(here / "ds.json", 0)
    try:
        for found, _ in both_ways(here, "ds.json"):
            assert without_companion(found) == [("ds.json", 1, 1, "DS003", "cannot read file: Permission denied")]
    finally:
        os.chmod(here / "ds.json", 0o644)


def test_unreadable_file_in_process(here, monkeypatch):
    """chmod 000 cannot stop root, so the refusal is simulated where dslint opens files."""
    import builtins

    import dslint.documents

    real_open = builtins.open

    def refusing_open(file, *args, **kwargs):
        if str(file).endswith("locked.json"):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    (here / "locked.json").write_text(COMPANION)
    monkeypatch.setattr(dslint.documents, "open", refusing_open, raising=False)
    monkeypatch.chdir(here)
    for paths in (["."], ["locked.json", "companion.json"]):
        result = Engine(Settings(select=CORE.split(","), root=here)).lint_paths(paths)
        assert not result.internal_errors
        found = [(d.path, *d.span.source.position(d.span.start), d.code, d.message) for d in result.diagnostics]
        assert without_companion(found) == [("locked.json", 1, 1, "DS003", "cannot read file: Permission denied")]


def test_fifo_does_not_hang(here):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    os.mkfifo(here / "pipe.json")
    os.mkfifo(here / "run")  # no suffix: would be sniffed for a shebang
    (here / "link.json").symlink_to("pipe.json")
    found, stderr = check(here)
    assert without_companion(found) == []
    assert "dslint: skipped pipe.json: not a regular file" in stderr
    assert "dslint: skipped link.json: not a regular file" in stderr
    # named to be checked: a finding that says it was not (never a silent skip), and no hang
    found, stderr = check(here, "pipe.json", "link.json", "companion.json")
    assert without_companion(found) == [
        ("link.json", 1, 1, "DS003", "not a regular file (a FIFO, socket or device): not read"),
        ("pipe.json", 1, 1, "DS003", "not a regular file (a FIFO, socket or device): not read"),
    ]


def test_link_to_a_device(here):
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    (here / "zero.json").symlink_to("/dev/zero")
    found, stderr = check(here, "zero.json", "companion.json")
    assert without_companion(found) == [("zero.json", 1, 1, "DS003", "not a regular file (a FIFO, socket or device): not read")]


def test_directory_named_like_a_config(here):
    (here / "x.json").mkdir()
    (here / "x.json" / "ds.json").write_text(COMPANION)
    (here / "empty.yaml").mkdir()
    for found, _ in (check(here), check(here, "x.json", "empty.yaml", "companion.json")):
        assert [f[:4] for f in without_companion(found)] == [("x.json/ds.json", 1, 22, "DS101")]


def test_nonexistent_path(here):
    proc = run(here, "companion.json", "missing.json")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "dslint: error: missing.json: no such file or directory" in proc.stderr


# ---- documents of the wrong shape ----------------------------------------------------------


def test_yaml_that_is_a_list(here):
    (here / "list.yaml").write_text("- model_name_or_path: Qwen/Qwen2.5-7B\n- output_dir: out\n- learning_rate: 1\n")
    (here / "scalar.yaml").write_text("just a string\n")
    for found, stderr in both_ways(here, "list.yaml"):
        assert without_companion(found) == []
        assert "dslint: skipped list.yaml: YAML, but neither a training config nor an accelerate config" in stderr


def test_json_whose_root_is_an_array(here):
    (here / "array.json").write_text('[{"train_batch_size": 48, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8}]\n')
    (here / "number.json").write_text("42\n")
    (here / "string.json").write_text('"train_batch_size"\n')
    for found, stderr in both_ways(here, "array.json"):
        assert without_companion(found) == []
        assert "dslint: skipped array.json: JSON, but neither a DeepSpeed config nor training arguments" in stderr


def test_many_bad_files_at_once(here):
    """All of the above in one directory: each handled, the companion still reported."""
    (here / "x.json").write_bytes(b"\x00\x01\x02")
    (here / "empty.json").write_bytes(b"")
    (here / "loop.json").symlink_to("loop.json")
    (here / "list.yaml").write_text("- a\n- b\n")
    (here / "array.json").write_text("[1, 2]\n")
    (here / "bomb.yaml").write_text(billion_laughs())
    (here / "deep.yaml").write_text(TRAINING_HEAD + "x: " + "[" * 50_000 + "\n")
    (here / "dir.json").mkdir()
    with open(here / "huge.json", "wb") as handle:
        handle.truncate(20 * 1024 * 1024)
    found, stderr = check(here)
    assert sorted({(f[0], f[3]) for f in without_companion(found)}) == [("bomb.yaml", "DS001"), ("deep.yaml", "DS001"), ("huge.json", "DS003")]
    for name in ("x.json", "empty.json", "loop.json", "list.yaml", "array.json"):
        assert f"dslint: skipped {name}: " in stderr


def test_offsets_in_one_long_non_ascii_line_are_exact_in_any_order():
    """A minified vocabulary is one line of non-ASCII text: offsets are counted from nearby
    remembered pairs, not from the line start (which made such files quadratic to read)."""
    import random

    from dslint.source import SourceFile

    rng = random.Random(7)
    text = "".join(rng.choice("ab漢ü\"{}:,") for _ in range(200_000))
    source = SourceFile("vocab.json", text)
    data = source.utf8
    boundaries = [i for i in range(0, len(data), 97) if (data[i] & 0xC0) != 0x80]
    rng.shuffle(boundaries)
    for offset in boundaries[:3000]:
        assert source.char_offset(offset) == len(data[:offset].decode("utf-8"))


def test_a_named_launch_script_that_is_not_text_is_a_finding(here):
    """bash may run it, but dslint did not read it: said, never skipped with exit 0."""
    (here / "train.sh").write_bytes(b"#!/bin/bash\ndeepspeed train.py \x00\x01\x02 --deepspeed ds.json\n")
    (here / "latin1.sh").write_bytes("#!/bin/bash\n# caf\xe9\ntorchrun train.py\n".encode("latin-1"))
    found, _ = check(here, "train.sh", "latin1.sh", "companion.json")
    assert [(path, code) for path, _, _, code, _ in without_companion(found)] == [("latin1.sh", "DS003"), ("train.sh", "DS003")]
    found, stderr = check(here)  # walked: passed over, and -v says why
    assert without_companion(found) == []


def test_an_alias_bomb_in_an_accelerate_config_is_a_finding(here):
    """The YAML limits apply to every kind: an accelerate config past them is reported, not skipped."""
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    lines += [f"{b}: &{b} [{', '.join(['*' + a] * 9)}]" for a, b in zip("abcde", "bcdef")]
    lines += ["compute_environment: LOCAL_MACHINE", "distributed_type: MULTI_GPU", "num_processes: 8"]
    (here / "accelerate.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    found, _ = check(here, "accelerate.yaml", "companion.json")
    assert without_companion(found) == [("accelerate.yaml", 1, 1, "DS001", "more than 100000 YAML nodes after alias expansion; not linted")]
