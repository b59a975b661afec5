"""Properties of --fix, on the real corpus and on generated files.

- a file that parsed before fixing still parses, as the same kind of file;
- BOM, newline style, final newline and permissions are kept;
- bytes outside the edited lines do not change (checked line by line with difflib);
- fixing twice changes nothing the second time (idempotence);
- no temporary file is left behind;
- a fix never creates a finding: after --fix --unsafe-fixes, every (file, code) has at most as
  many findings as before (positions may move), on every rule fixture with every rule on, on
  the corpus, and on generated configs. A fix that would trade one error for another (a rounded
  value DeepSpeed rejects, "auto" written where nobody fills it in, a quoted word that is still
  no valid choice, a deleted `$ARGS` word) is not offered. Fixtures hold no unrelated problem
  that a fix would merely reveal, so that anything found here is worth reading.
"""

from __future__ import annotations

import codecs
import difflib
import os
import shutil
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dslint.config import Setting, Settings
from dslint.documents import Skipped, read_document
from dslint.run.engine import Engine
from dslint.fix.apply import fix_paths
from programs import HF_TRAINER


def _engine(root: Path, world: int | None = 8) -> Engine:
    settings = Settings(root=root)
    if world is not None:
        settings.world_size = Setting(world, "--world-size on the command line")
    return Engine(settings)


def _fix(engine: Engine, paths: list[str], unsafe: bool = True):
    return fix_paths(lambda overrides: engine.lint_paths(paths, overrides), unsafe=unsafe, write=True)


def _kind(path: Path):
    try:
        document = read_document(path.name, path.read_bytes())
    except Skipped:
        return None, True
    return document.kind, not document.problems


def _shape(data: bytes) -> tuple:
    return (data.startswith(codecs.BOM_UTF8), b"\r\n" in data, data.endswith(b"\n"))


def _assert_kept(before: bytes, after: bytes, name: str):
    assert _shape(before) == _shape(after), f"{name}: BOM/newline style/final newline changed"
    old, new = before.decode("utf-8-sig").splitlines(keepends=True), after.decode("utf-8-sig").splitlines(keepends=True)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "equal":
            assert old[i1:i2] == new[j1:j2]


def _tally(result) -> dict[tuple[str, str], int]:
    tally: dict[tuple[str, str], int] = {}
    for diagnostic in result.diagnostics:
        key = (diagnostic.path, diagnostic.code)
        tally[key] = tally.get(key, 0) + 1
    return tally


# Fixes whose purpose is to make a setting DeepSpeed ignores take effect (DS202 renames
# `zero_optimisation` to `zero_optimization`; its title says "the setting starts to take
# effect"). What the setting holds was written by the author, and is judged once it counts:
# values under an ignored key are deliberately not judged before (DS211's fixture "a value under
# a key DeepSpeed ignores is not judged"). Findings such a fix reveals in its own file are not
# ones it created; in any other file they would be.
REVEALING = {"DS202"}


def _created(lint) -> list[str]:
    """Findings after fixing in memory (unsafe fixes included) that were not there before, by file and code."""
    before = lint({})
    outcome = fix_paths(lint, unsafe=True, write=False)
    assert outcome.converged and not outcome.result.internal_errors
    old, new = _tally(before), _tally(outcome.result)
    applied = sorted({code for _, code, _ in outcome.applied})
    revealed_in = {path for path, code, _ in outcome.applied if code in REVEALING}
    return [
        f"{d.path}:{d.span.source.position(d.span.start)[0]} {d.code} {d.message} (after fixes of {', '.join(applied)})"
        for d in outcome.result.diagnostics
        if new[(d.path, d.code)] > old.get((d.path, d.code), 0) and d.path not in revealed_in
    ]


def _fixture_cases():
    import yaml

    for path in sorted((Path(__file__).parent / "rules").glob("*.yaml")):
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
        for case in spec["cases"]:
            yield pytest.param(spec["rule"], case, id=f"{path.stem}-{case['name']}")


@pytest.mark.parametrize("rule,case", list(_fixture_cases()))
def test_fixes_create_no_finding_in_the_rule_fixtures(rule, case, tmp_path, monkeypatch):
    from test_rules import _settings, _write

    monkeypatch.chdir(tmp_path)
    _write(tmp_path, case)
    settings = _settings(rule, case, tmp_path)
    settings.select = ["ALL"]  # every rule judges what every fix wrote
    engine = Engine(settings)
    assert _created(lambda overrides: engine.lint_paths(["."], overrides)) == []


def test_fixes_create_no_finding_in_the_corpus(corpus, monkeypatch):
    monkeypatch.chdir(corpus)
    engine = Engine(Settings(root=corpus))
    assert _created(lambda overrides: engine.lint_paths(["."], overrides)) == []


def test_fixing_the_corpus_keeps_every_file_valid_and_is_idempotent(corpus, tmp_path, monkeypatch):
    work = tmp_path / "corpus"
    shutil.copytree(corpus, work)
    files = sorted(p for p in work.rglob("*") if p.is_file() and p.suffix in (".json", ".yaml", ".yml"))
    before = {p: (p.read_bytes(), _kind(p), stat.S_IMODE(p.stat().st_mode)) for p in files}
    monkeypatch.chdir(work)
    engine = _engine(work)
    outcome = _fix(engine, ["."])
    assert outcome.converged and not outcome.result.internal_errors
    assert outcome.applied, "the corpus has fixable findings; a fix run that applies none proves nothing"
    changed = 0
    for path, (data, (kind, clean), mode) in before.items():
        after = path.read_bytes()
        if after == data:
            continue
        changed += 1
        _assert_kept(data, after, path.name)
        assert stat.S_IMODE(path.stat().st_mode) == mode
        new_kind, new_clean = _kind(path)
        assert new_kind == kind, f"{path}: was {kind}, now {new_kind}"
        if clean:
            assert new_clean, f"{path}: parsed before --fix, not after"
    assert changed
    again = _fix(engine, ["."])
    assert not again.applied, f"second --fix applied {again.applied[:5]}"
    assert not [p for p in work.rglob(".dslint-*")]


BATCH_KEYS = ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")
batch_value = st.one_of(
    st.integers(min_value=0, max_value=64),
    st.sampled_from(['"8"', '"Auto"', '"auto"', "2.5", "true", '"4.0"']),
)


@st.composite
def deepspeed_files(draw):
    entries = []
    for key in BATCH_KEYS:
        if draw(st.booleans()):
            value = draw(batch_value)
            entries.append(f'"{key}": {value}')
    if draw(st.booleans()):
        stage = draw(st.integers(0, 3))
        entries.append(f'"zero_optimization": {{"stage": {stage}, "stage": {draw(st.integers(0, 3))}}}')
    if draw(st.booleans()):
        entries.append('"zero_optimisation": {"stage": 2}')
    if draw(st.booleans()):
        entries.append('"curriculum_learning": {"enabled": false}')
    if draw(st.booleans()):
        entries.append('"communication_data_type": "bfloat16"')
    indent = draw(st.sampled_from(["  ", "    ", "\t"]))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    text = "{" + newline + ("," + newline).join(indent + e for e in entries) + newline + "}"
    if draw(st.booleans()):
        text += newline
    data = text.encode("utf-8")
    if draw(st.booleans()):
        data = codecs.BOM_UTF8 + data
    return data


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=deepspeed_files(), world=st.sampled_from([None, 1, 3, 4, 8]), mode=st.sampled_from([0o644, 0o600, 0o755]))
def test_fixing_generated_configs(tmp_path_factory, data, world, mode):
    root = tmp_path_factory.mktemp("gen")
    path = root / "ds_config.json"
    path.write_bytes(data)
    os.chmod(path, mode)
    kind, clean = _kind(path)
    cwd = os.getcwd()
    os.chdir(root)
    try:
        engine = _engine(root, world)
        outcome = _fix(engine, ["."])
        assert outcome.converged and not outcome.result.internal_errors
        after = path.read_bytes()
        _assert_kept(data, after, path.name)
        assert stat.S_IMODE(path.stat().st_mode) == mode
        if kind is not None and clean:
            import hjson

            emptied = hjson.loads(after.decode("utf-8-sig")) == {}
            assert _kind(path) == (kind, True) or emptied
        assert not _fix(engine, ["."]).applied
        assert [p.name for p in root.iterdir()] == ["ds_config.json"]
    finally:
        os.chdir(cwd)


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=deepspeed_files(), world=st.sampled_from([None, 1, 3, 4, 8]))
def test_fixes_create_no_finding_in_generated_configs(tmp_path_factory, data, world):
    root = tmp_path_factory.mktemp("gen")
    (root / "ds_config.json").write_bytes(data)
    cwd = os.getcwd()
    os.chdir(root)
    try:
        engine = _engine(root, world)
        assert _created(lambda overrides: engine.lint_paths(["."], overrides)) == []
    finally:
        os.chdir(cwd)


def test_a_file_with_a_syntax_error_is_never_fixed(tmp_path, monkeypatch):
    path = tmp_path / "ds.json"
    data = b'{"train_batch_size": "8", "zero_optimization": {"stage": [1, 2}}\n'
    path.write_bytes(data)
    monkeypatch.chdir(tmp_path)
    outcome = _fix(_engine(tmp_path), ["."])
    assert not outcome.applied
    assert path.read_bytes() == data


def test_a_fix_may_edit_the_file_a_script_names(tmp_path, monkeypatch):
    (tmp_path / "train.sh").write_text("torchrun --nproc_per_node 2 train.py --deepspeed ds.json --per_device_train_batch_size 2\n")
    (tmp_path / "train.py").write_text(HF_TRAINER)
    (tmp_path / "ds.json").write_text('{"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2}}\n')
    monkeypatch.chdir(tmp_path)
    settings = Settings(root=tmp_path, select=["DS301"])
    outcome = fix_paths(lambda overrides: Engine(settings).lint_paths(["train.sh"], overrides), unsafe=False, write=True)
    assert [(path, code) for path, code, _ in outcome.applied] == [("ds.json", "DS301")]
    assert (tmp_path / "ds.json").read_text() == '{"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}}\n'


def test_no_fix_rests_on_an_assumed_consumer(tmp_path, monkeypatch):
    """Without train.py, HF Trainer is only assumed from --deepspeed: a warning that says so, and no fix."""
    (tmp_path / "train.sh").write_text("torchrun --nproc_per_node 2 train.py --deepspeed ds.json --per_device_train_batch_size 2\n")
    (tmp_path / "ds.json").write_text('{"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2}}\n')
    monkeypatch.chdir(tmp_path)
    result = Engine(Settings(root=tmp_path, select=["DS301"])).lint_paths(["."])
    [found] = result.diagnostics
    assert found.severity.label == "warning" and found.fix is None
    assert any(note.startswith("assuming HF Trainer") and "train.py was not found" in note for note in found.notes)
    assert found.help is not None, "the dropped fix's title stays as the help"
    outcome = fix_paths(lambda overrides: Engine(Settings(root=tmp_path, select=["DS301"])).lint_paths(["."], overrides),
                        unsafe=True, write=True)
    assert outcome.applied == []


def test_edits_from_several_findings_in_one_file_are_merged(tmp_path, monkeypatch):
    path = tmp_path / "ds.json"
    path.write_text('{"train_batch_size": "Auto", "train_micro_batch_size_per_gpu": "8", "gradient_accumulation_steps": "AUTO"}\n')
    (tmp_path / "train.sh").write_text("torchrun train.py --deepspeed ds.json\n")
    (tmp_path / "train.py").write_text(HF_TRAINER)  # HF fills "auto": the "Auto" fixes are safe
    monkeypatch.chdir(tmp_path)
    outcome = _fix(Engine(Settings(root=tmp_path, select=["DS102"])), ["."], unsafe=False)
    assert len(outcome.applied) == 3
    assert path.read_text() == '{"train_batch_size": "auto", "train_micro_batch_size_per_gpu": 8, "gradient_accumulation_steps": "auto"}\n'


@pytest.mark.parametrize("text", ["#!/bin/bash\nswift sft \\\n    --model m \\\n", "swift sft \\\r\n    --padding_free true \\\r\n"])
def test_script_fixes_keep_the_script_parsable(text, tmp_path, monkeypatch):
    path = tmp_path / "train.sh"
    path.write_bytes(text.encode())
    monkeypatch.chdir(tmp_path)
    outcome = _fix(_engine(tmp_path, None), ["."])
    assert outcome.converged
    _assert_kept(text.encode(), path.read_bytes(), "train.sh")
    assert not _fix(_engine(tmp_path, None), ["."]).applied


def test_renaming_a_yaml_key_keeps_comments_and_anchors(tmp_path):
    from dslint.diagnostics import Fix
    from dslint.documents.yaml_doc import parse_yaml
    from dslint.documents.edits import apply_edits, rename_key
    from dslint.source import SourceFile

    text = "defaults: &base  # shared\n  evaluation_strategy: steps  # old name\nrun:\n  <<: *base\n  learning_rate: 1.0e-5\n"
    source = SourceFile(path="train.yaml", text=text)
    root, problems = parse_yaml(source)
    assert not problems
    entry = root.get("defaults").entry("evaluation_strategy")
    fix = Fix.safe("rename", rename_key(entry, "eval_strategy"))
    fixed = apply_edits(text, list(fix.edits))
    assert fixed == text.replace("evaluation_strategy", "eval_strategy")
    again, problems = parse_yaml(SourceFile(path="train.yaml", text=fixed))
    assert not problems and again.get("run").value_of("eval_strategy") == "steps"


def _custom_rules():
    from dslint.diagnostics import Edit, Finding, Fix
    from dslint.rule import rule

    @rule("ZZ901", "quote-stage", target="document", fix="safe", kinds=("deepspeed-json",))
    def quote_stage(document, context):
        """Test rule: wraps the whole stage value in a list (overlaps ZZ902)."""
        node = document.mapping.get("zero_optimization").get("stage")
        if not node.span.text.startswith("["):
            yield Finding(node.span, "wrap", fix=Fix.safe("wrap", Edit(node.span.source, node.span.start, node.span.end, f"[{node.span.text}]")))

    @rule("ZZ902", "bump-stage", target="document", fix="safe", kinds=("deepspeed-json",))
    def bump_stage(document, context):
        """Test rule: rewrites the stage digit 2 as 3 (overlaps ZZ901)."""
        node = document.mapping.get("zero_optimization").get("stage")
        at = node.span.text.find("2")
        if at != -1:
            start = node.span.start + at
            yield Finding(node.span, "bump", fix=Fix.safe("bump", Edit(node.span.source, start, start + 1, "3")))

    @rule("ZZ903", "never-done", target="document", fix="safe", kinds=("deepspeed-json",))
    def never_done(document, context):
        """Test rule: its fix always changes the file, so fixing never converges."""
        end = document.mapping.span.end
        yield Finding(document.mapping.span, "grow", fix=Fix.safe("grow", Edit(document.source, end, end, " ")))

    return quote_stage, bump_stage, never_done


def test_overlapping_edits_are_applied_one_at_a_time_across_passes(tmp_path, monkeypatch):
    quote_stage, bump_stage, _ = _custom_rules()
    path = tmp_path / "ds.json"
    path.write_text('{"zero_optimization": {"stage": 2}}\n')
    monkeypatch.chdir(tmp_path)
    engine = Engine(Settings(root=tmp_path), rules=[quote_stage, bump_stage])
    outcome = _fix(engine, ["."], unsafe=False)
    assert outcome.converged
    assert sorted(code for _, code, _ in outcome.applied) == ["ZZ901", "ZZ902"]
    assert path.read_text() == '{"zero_optimization": {"stage": [3]}}\n'


def test_a_fix_loop_that_does_not_converge_is_an_internal_error(tmp_path, monkeypatch):
    from cli_support import invoke

    *_, never_done = _custom_rules()
    (tmp_path / "ds.json").write_text('{"zero_optimization": {"stage": 2}}\n')
    monkeypatch.chdir(tmp_path)
    outcome = _fix(Engine(Settings(root=tmp_path), rules=[never_done]), ["."])
    assert not outcome.converged
    assert (tmp_path / "ds.json").read_text() == '{"zero_optimization": {"stage": 2}}\n', "nothing is written"
    monkeypatch.setattr("dslint.run.engine.load_rules", lambda: ([never_done], []))
    monkeypatch.setattr("dslint.rule.load_rules", lambda: ([never_done], []))
    result = invoke(["check", "--fix", "."])
    assert result.exit_code == 2
    assert "fixes did not converge" in result.output


@pytest.mark.parametrize(
    "inline,text",
    [('{"device": "CPU"}', '"CPU"'), ('{"pin_memory": true}', "true"), ('{"buffer_count": 4}', "4"),
     ("{'device': 'cpu'}", "'cpu'"), ('{"nvme_path": "/a\\"b"}', '"/a\\"b"'), ('{"buffer_size": 1e8, "x": 1}', "1e8")],
)
def test_a_value_placed_after_hjson_only_syntax_ends_where_it_ends(inline, text):
    """After a quoteless value tree-sitter cannot place the rest of an hjson file; the range of a
    value found by reading the text must end at its last character, not take the `}` after it
    (a fix replaces that range: `"CPU"}` became `"cpu"`, and the file lost a brace)."""
    data = '{\n  "zero_optimization": {\n    "stage": ZERO_STAGE,\n    "offload_optimizer": ' + inline + "\n  }\n}\n"
    document = read_document("ds.json", data.encode("utf-8"), explicit=True)
    inner = document.root.entry("zero_optimization").value.entry("offload_optimizer").value
    assert inner.entries[0].value.span.text == text
