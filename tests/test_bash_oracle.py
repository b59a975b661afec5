"""DS001 for shell is bash's verdict: dslint's syntax checker against `bash -n`, no bash at lint time.

Inputs: scripts written by the grammar in tests/shell_grammar.py (at least 5,000 a run, with a
fixed hypothesis seed so that CI runs the same ones), and every launch script of the shared
corpus. Agreement is required on accept/reject, and for rejected scripts on the line bash names
and its complaint. bash counts as rejecting a script when `bash -n` exits non-zero or prints an
error (some errors, such as those in `[[ ]]`, are printed with exit status 0); warnings (an
unterminated here-document) are not errors.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from dslint.documents.shell.syntax import check

from shell_grammar import script

pytestmark = pytest.mark.oracle

BATCH = 25
BATCHES = 200  # 5,000 generated scripts a run
_LINE = re.compile(r"^.*?: line (\d+): (.*)$")


def _bash() -> str:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed: the differential test needs it as the oracle")
    version = subprocess.run([bash, "--version"], capture_output=True, text=True).stdout
    if "version 5.2" not in version:
        pytest.skip(f"the oracle is bash 5.2; this machine has {version.splitlines()[0] if version else 'no version'}")
    return bash


def bash_runs(bash: str, texts: list[bytes]) -> list[tuple[int, str]]:
    """(exit status, standard error) of `bash -n` on each script."""
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for k, data in enumerate(texts):
            path = os.path.join(tmp, f"s{k}.sh")
            with open(path, "wb") as handle:
                handle.write(data)
            paths.append(path)
        # one shell runs them all: a process per script costs less than a Python subprocess each
        driver = 'for f; do "$0" -n "$f" 2>"$f.err"; echo $? >"$f.rc"; done'
        subprocess.run([bash, "-c", driver, bash, *paths], check=True, stdin=subprocess.DEVNULL, env={"LC_ALL": "C"})
        return [(int(Path(path + ".rc").read_text()), Path(path + ".err").read_bytes().decode("utf-8", "replace")) for path in paths]


def bash_verdicts(bash: str, texts: list[bytes]) -> list[tuple[int, str] | None]:
    """(line, message) of `bash -n`'s first complaint for each script, None when it accepts it."""
    out = []
    for rc, stderr in bash_runs(bash, texts):
        errors = [line for line in stderr.split("\n") if line and "warning:" not in line]
        first = _LINE.match(errors[0]) if errors else None
        if rc == 0 and first is None:
            out.append(None)
        else:
            out.append((int(first.group(1)), first.group(2)) if first else (0, f"exit status {rc}"))
    return out


def dslint_verdict(text: str) -> tuple[int, str] | None:
    complaint = check(text)
    return None if complaint is None else (complaint.line, complaint.message)


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")


# no shrinking: a failure lists every disagreeing script of its batch, which says more than a
# shrunk one, and shrinking a batch of bash runs takes minutes
@settings(max_examples=BATCHES, derandomize=True, database=None, deadline=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=list(HealthCheck))  # fmt: skip
@given(st.lists(script(), min_size=BATCH, max_size=BATCH))
def test_generated_scripts_agree_with_bash(scripts):
    bash = _bash()
    texts = [s.encode("utf-8") for s in scripts]
    expected = bash_verdicts(bash, texts)
    wrong = [(text, want, got) for text, want in zip(scripts, expected) if (got := dslint_verdict(text)) != want]
    _dump(wrong)
    assert wrong == []
    _COUNT["generated"] = _COUNT.get("generated", 0) + len(scripts)
    _COUNT["rejected"] = _COUNT.get("rejected", 0) + sum(v is not None for v in expected)


_COUNT: dict[str, int] = {}


def _dump(wrong) -> None:
    target = os.environ.get("DSLINT_ORACLE_DUMP")  # a file to collect every disagreement in, for debugging
    if target and wrong:
        with open(target, "a", encoding="utf-8") as handle:
            for text, want, got in wrong:
                handle.write(f"{text!r}\n  bash:   {want}\n  dslint: {got}\n")


def test_enough_generated_scripts_were_compared():
    """Runs after the generated test (file order): at least 5,000 scripts, a fair share rejected."""
    if not _COUNT:
        pytest.skip("the generated comparison did not run in this session")
    assert _COUNT["generated"] >= 5000
    assert 0.2 < _COUNT["rejected"] / _COUNT["generated"] < 0.8


def test_corpus_launch_scripts_agree_with_bash(corpus):
    bash = _bash()
    with open(corpus / "MANIFEST.tsv", encoding="utf-8", newline="") as handle:
        rows = [row for row in csv.DictReader(handle, delimiter="\t") if row["kind"] == "launch_sh"]
    assert len(rows) >= 1355
    paths = [corpus / row["repo"].replace("/", "__") / row["path"] for row in rows]
    datas = [path.read_bytes() for path in paths]
    expected = bash_verdicts(bash, datas)
    wrong = [
        (str(path.relative_to(corpus)), want, got)
        for path, data, want in zip(paths, datas, expected)
        if (got := dslint_verdict(_decode(data))) != want
    ]
    assert wrong == []
    assert sum(v is not None for v in expected) >= 25  # the corpus has real syntax errors


# Words that end in an unexpected place, with a backslash-newline inside or outside single quotes
# (bash keeps it inside '...' and $'...', and removes it elsewhere, also in "..." and $(...)), and
# a `$'` that is escaped or quoted, which is no ANSI-C string. Found by the generated comparison.
QUOTED_CONTINUATIONS = [
    "case b=c 'ab \\\nc' in\nfi) 'x\nesac\n",
    "case b=c 'a\\$'q'b \\\nc' in\nfi) 'x\nesac\n",
    "case b=c \"ab \\\nc\" in\nfi) 'x\nesac\n",
    "case b=c $'a\\'b \\\nc' in\nfi) 'x\nesac\n",
    "case b=c \"$(echo 'a \\\nb') x \\\ny\"'z \\\nw' in\nfi) 'x\nesac\n",
    "case b=c a\\\nb\"$'q \\\nr'\" in\nfi) 'x\nesac\n",
]



# Files whose last line has no newline: bash adds one and counts it, so an unclosed compound
# command ends a line further down. Found on a held-out repository (a `for` without `done`).
UNTERMINATED_LAST_LINES = [
    "for x in a; do\necho",
    "for x in a; do\n\necho \"x\"",
    "case a in\n b)",
    "if true; then\n  echo hi # no fi",
    "while read -r l; do\n  echo \"$l\" \\\n    --flag",
    "echo \"abc\nx",
    "x=(a\nb",
]



@pytest.mark.parametrize("text", QUOTED_CONTINUATIONS + UNTERMINATED_LAST_LINES)
def test_regression_scripts_agree_with_bash(text):
    assert dslint_verdict(text) == bash_verdicts(_bash(), [text.encode("utf-8")])[0]


# Here-documents the end of the file ends: bash -n accepts the script and warns, and
# unended-heredoc (DS609) says so with bash's line and delimiter.
_UNENDED = re.compile(r"here-document at line (\d+) delimited by end-of-file \(wanted `(.*)'\)")
HEREDOCS = [
    "cat > ds.json <<EOF\n{}\nEOF2\ndeepspeed train.py\n",
    "cat <<EOF\nx\nEOF \n",  # a trailing space: not the end
    "cat <<-EOF\n\tx\n\tEOF\n",  # <<- strips tabs: ended
    "cat <<EOF\n\tx\n\tEOF\n",  # << keeps them: not ended
    "cat <<'END'\n$x\nEND\necho ok\n",
    "cat <<\"END\" >a; cat <<E2 >b\n1\nEND\n2\n",  # two on one line, the second never ended
    "x=$(cat <<EOF\nhi\nEOF)\necho $x\n",  # inside $( ): bash's compatibility end
    "echo ok\n",
]


def bash_unended(bash: str, texts: list[bytes]) -> list[list[tuple[int, str]]]:
    """(line, delimiter) of each here-document `bash -n` warns about, per script."""
    return [[(int(m.group(1)), m.group(2)) for m in _UNENDED.finditer(stderr)] for _, stderr in bash_runs(bash, texts)]


def dslint_unended(text: str) -> list[tuple[int, str]] | None:
    found: list[tuple[int, str, bool]] = []
    return None if check(text, None, found) is not None else [(line, delimiter) for line, delimiter, _ in found]


@pytest.mark.parametrize("text", HEREDOCS)
def test_unended_heredocs_agree_with_bash(text):
    assert dslint_unended(text) == bash_unended(_bash(), [text.encode("utf-8")])[0]


def test_unended_heredocs_of_the_corpus_agree_with_bash(corpus):
    bash = _bash()
    with open(corpus / "MANIFEST.tsv", encoding="utf-8", newline="") as handle:
        rows = [row for row in csv.DictReader(handle, delimiter="\t") if row["kind"] == "launch_sh"]
    paths = [corpus / row["repo"].replace("/", "__") / row["path"] for row in rows]
    datas = [path.read_bytes() for path in paths]
    verdicts = bash_verdicts(bash, datas)
    accepted = [(path, data) for path, data, verdict in zip(paths, datas, verdicts) if verdict is None]
    expected = bash_unended(bash, [data for _, data in accepted])
    wrong = [(str(path), want, got) for (path, data), want in zip(accepted, expected) if (got := dslint_unended(_decode(data))) != want]
    assert wrong == []


# extglob: `bash -n` runs nothing, so it never runs `shopt -s extglob` and rejects every pattern
# after it. bash running the script parses one complete top-level command, runs it, then reads
# the next: a pattern parses when a command read before its own turned extglob on in the shell
# that reads the script. The oracle here is bash running the script (each is harmless: echo,
# case, functions, shopt), in an empty folder.
EXTGLOB_RUNS = [
    "shopt -s extglob\necho !(x)\n",
    "shopt -s extglob\ncase a in @(a|b)) echo y;; esac\n",
    "if true; then\n  shopt -s extglob\nfi\necho +(a)\n",
    "f() { shopt -s extglob; }\nf\necho !(x)\n",
    "function f {\n  shopt -s extglob\n}\nf\necho !(x)\n",
    "shopt -s extglob\ng() { echo !(x); }\ng\n",
    "{ shopt -s extglob; }\necho !(x)\n",
    "shopt -s nullglob extglob\nx=?(a)\n",
    "true && shopt -s extglob\necho !(x)\n",
    "builtin shopt -s extglob\necho !(x)\n",
    "LC_ALL=C shopt -s extglob\necho !(x)\n",
    "shopt -qs 'extglob'\necho *(a)\n",
    "shopt -s extglob\necho \"$(echo !(x))\"\n",
    "shopt -s extglob\nfor f in *.@(sh|py); do echo $f; done\n",
    "shopt -s extglob\nshopt -u extglob\nshopt -s extglob\necho !(x)\n",
]
EXTGLOB_FAILS = [
    "echo !(x)\n",
    "shopt -s extglob; echo !(x)\n",
    "shopt -s extglob && echo !(x)\n",
    "if true; then\n  shopt -s extglob\n  echo !(x)\nfi\n",
    "f() { shopt -s extglob; }\necho !(x)\n",
    "g() { echo !(x); }\nshopt -s extglob\ng\n",
    "(shopt -s extglob)\necho !(x)\n",
    "echo $(shopt -s extglob)\necho !(x)\n",
    "shopt -s extglob | cat\necho !(x)\n",
    "shopt -s extglob &\nwait\necho !(x)\n",
    "shopt -s extglob\nshopt -u extglob\necho !(x)\n",
    "shopt extglob\necho !(x)\n",
    "shopt -s -o extglob\necho !(x)\n",
    "shopt -s extglob \\\n; echo !(x)\n",
]


def bash_run_verdicts(bash: str, texts: list[str]) -> list[tuple[int, str] | None]:
    """(line, message) of the first syntax error bash prints running each script, None when it prints none."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, text in enumerate(texts):
            path = os.path.join(tmp, f"s{k}.sh")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
            done = subprocess.run([bash, path], cwd=tmp, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                                  env={"LC_ALL": "C"}, timeout=10)
            found = [m for m in map(_LINE.match, done.stderr.split("\n")) if m is not None and "syntax error" in m.group(2)]
            out.append((int(found[0].group(1)), found[0].group(2)) if found else None)
    return out


def test_extglob_patterns_parse_after_the_command_that_turns_it_on_as_bash_runs_them():
    bash = _bash()
    expected = bash_run_verdicts(bash, EXTGLOB_RUNS + EXTGLOB_FAILS)
    assert expected[: len(EXTGLOB_RUNS)] == [None] * len(EXTGLOB_RUNS)
    assert None not in expected[len(EXTGLOB_RUNS):]
    assert [dslint_verdict(text) for text in EXTGLOB_RUNS + EXTGLOB_FAILS] == expected


def test_an_extglob_setting_in_a_branch_counts_as_reached():
    """dslint cannot tell which branch runs: a pattern after `shopt -s extglob` in any branch is no
    syntax error to it (bash rejects it when the branch does not run), rather than an error bash may never print."""
    assert dslint_verdict("if [ -n \"$X\" ]; then\n  shopt -s extglob\nfi\necho !(x)\n") is None
