"""What a safe fix may do (issue 21, item 2: fix only what every reader accepts).

A fix is safe only if it is right for every launch that reads the file and keeps what the user
chose; a fix that changes a value the user chose is unsafe, and no fix writes a value a reader
cannot take. Each test states one consequence of that standard and checks it on every rule
fixture (tests/rules/*.yaml) with every rule on, applying the safe fixes only (`--fix`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

import pytest
import yaml

from dslint.documents import Skipped, read_document
from dslint.fix.apply import fix_paths
from dslint.run.engine import Engine

FIXTURES = Path(__file__).parent / "rules"
BATCH_KEYS = ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")
PRECISION = {"fp16": "fp16", "float16": "fp16", "half": "fp16", "bf16": "bf16", "bfloat16": "bf16",
             "fp32": "fp32", "float32": "fp32", "float": "fp32"}
# Sections of a DeepSpeed config that HF Trainer and accelerate read besides DeepSpeed.
READ_BY_HF = (("bf16",), ("fp16",), ("zero_optimization", "offload_optimizer"))


def _cases():
    for path in sorted(FIXTURES.glob("*.yaml")):
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
        for case in spec["cases"]:
            yield spec["rule"], case


def _safe_fix(rule: str, case: dict, root: Path, extra: dict[str, str] | None = None) -> tuple[dict, dict, set]:
    """(files before, files after --fix, the codes whose fixes were applied) for the fixture case
    written into ROOT, every rule on."""
    import os

    from test_rules import _settings, _write

    written = _write(root, case)
    for name, text in (extra or {}).items():
        (root / name).write_text(text, encoding="utf-8")
    before = {name: (root / name).read_text(encoding="utf-8") for name in written}
    settings = _settings(rule, case, root)
    settings.select = ["ALL"]
    engine = Engine(settings)
    cwd = os.getcwd()
    os.chdir(root)
    try:
        outcome = fix_paths(lambda overrides: engine.lint_paths(["."], overrides), unsafe=False, write=True)
    finally:
        os.chdir(cwd)
    return before, {name: (root / name).read_text(encoding="utf-8") for name in written}, {code for _, code, _ in outcome.applied}


@lru_cache(maxsize=1)
def _fixed_fixtures(root: str) -> tuple[list[tuple[str, str, dict, dict]], dict[str, str]]:
    """(rule, case name, before, after) for every fixture case whose safe fixes changed a file;
    and each code whose safe fix was applied -> the first such case."""
    out, applied = [], {}
    for index, (rule, case) in enumerate(_cases()):
        where = Path(root) / str(index)
        where.mkdir()
        before, after, codes = _safe_fix(rule, case, where)
        if before != after:
            out.append((rule, case["name"], before, after))
        for code in codes:
            applied.setdefault(code, f"{rule} {case['name']}")
    return out, applied


@pytest.fixture(scope="module")
def fixed_and_applied(tmp_path_factory):
    return _fixed_fixtures(str(tmp_path_factory.mktemp("safe-fixes")))


@pytest.fixture(scope="module")
def fixed(fixed_and_applied):
    return fixed_and_applied[0]


def test_a_safe_fix_comes_from_a_rule_that_declares_safe_fixes(fixed_and_applied):
    """`--fix` applies only the fixes of rules whose declaration (`fix="safe"` or `"safe or
    unsafe"`, the fix column of `dslint rules`) says they make safe ones: with every rule on, on
    every fixture."""
    from dslint.rule import load_rules

    declared = {r.code: r for r in load_rules()[0]}
    applied = fixed_and_applied[1]
    wrong = {code: where for code, where in applied.items() if "safe" not in declared[code].fix_applicabilities}
    assert not wrong, f"safe fixes applied from rules declared without them: {wrong}"


def _kind(name: str, text: str):
    try:
        return read_document(name, text.encode("utf-8"))
    except Skipped:
        return None


def _json(name: str, text: str):
    document = _kind(name, text)
    if document is None or document.kind != "deepspeed-json" or document.mapping is None:
        return None
    return document.mapping.to_python()


def _number(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _numbers(data, path: tuple = ()) -> list[tuple[tuple, float]]:
    """(path, number) for every number, or numeric string, in DATA."""
    if isinstance(data, dict):
        return [found for key, value in data.items() for found in _numbers(value, path + (key,))]
    if isinstance(data, list):
        return [found for index, value in enumerate(data) for found in _numbers(value, path + (index,))]
    number = _number(data)
    return [] if number is None else [(path, number)]


def _at(data, path: tuple[str, ...]):
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def _changed_configs(fixed):
    for rule, name, before, after in fixed:
        for path in before:
            old, new = _json(path, before[path]), _json(path, after[path])
            if old is not None and new is not None and old != new:
                yield f"{rule} {name} {path}", old, new


def test_a_safe_fix_keeps_every_batch_value_the_user_wrote(fixed):
    """Removing or changing train_batch_size, the micro batch or the accumulation changes the
    global batch: never safe. A whole-number string may become its number, and a value the HF
    Trainer refuses may become "auto" (the Trainer's own value, from the flags the user gave;
    where "auto" may be written is the last test's business)."""
    for where, old, new in _changed_configs(fixed):
        for key in BATCH_KEYS:
            if _number(old.get(key)) is not None and new.get(key) != "auto":
                assert _number(new.get(key)) == _number(old.get(key)), f"{where}: {key} {old.get(key)!r} -> {new.get(key)!r}"


def test_a_safe_fix_keeps_every_number_the_user_wrote_in_a_deepspeed_config(fixed):
    """A bucket size, a ratio, a predivide factor ...: a safe fix may write a number in another form
    (`"5e8"` -> 500000000, `100.0` -> 100) or move it to the key that reads it, never drop or change
    it (a value the HF Trainer refuses may become "auto", its own value)."""
    for where, old, new in _changed_configs(fixed):
        kept = {number for _, number in _numbers(new)}
        lost = [(path, n) for path, n in _numbers(old) if n not in kept and _at(new, path) != "auto"]
        assert not lost, f"{where}: the numbers {lost} are gone"


def test_a_safe_fix_keeps_every_explicit_precision(fixed):
    """The precision a launch trains in is the user's choice: an explicit `enabled` in a DeepSpeed
    precision section, and the dtype words of a launch (`--fp16`, `torch_dtype: bfloat16`), stay
    (an alias may become the canonical spelling of the same dtype)."""
    for where, old, new in _changed_configs(fixed):
        for section in ("fp16", "bf16", "bfloat16"):
            if section == "bfloat16" and "bf16" in old:
                continue  # read by nobody while bf16 is there
            enabled = _at(old, (section, "enabled"))
            if enabled is not None and enabled != "auto":
                assert _at(new, (section, "enabled")) == enabled, f"{where}: {section}.enabled {enabled!r} changed"
    for rule, name, before, after in fixed:
        for path in before:
            if _json(path, before[path]) is None:
                assert _dtypes(before[path]) == _dtypes(after[path]), f"{rule} {name} {path}: the precision changed"


def _dtypes(text: str) -> Counter:
    words = re.findall(r"(?<![\w.-])(?:--)?(fp16|float16|half|bf16|bfloat16|fp32|float32)(?![\w.-])", text)
    return Counter(PRECISION[w] for w in words)


def test_a_safe_fix_removes_no_feature_flag(fixed):
    """A boolean switch the user set on a command line or in a training YAML (`--sequence_parallel
    true`, `--use_liger_kernel`, `double_quantization: true`) stays: deleting or flipping it is a
    choice, even when the flag does nothing in this launch."""
    for rule, name, before, after in fixed:
        for path in before:
            if _json(path, before[path]) is None:
                lost = _switches(before[path]) - _switches(after[path])
                assert not lost, f"{rule} {name} {path}: {sorted(lost)} removed or turned off"


def _switches(text: str) -> Counter:
    on = re.findall(r"(?m)(?:--|^\s*)([A-Za-z][\w-]*)(?:[ =:]+)(?:true|True|TRUE)\b", text)
    return Counter(n.replace("-", "_") for n in on)


def test_a_safe_fix_changes_no_environment_assignment(fixed):
    """A device list and the environment a script sets are the user's: a safe fix neither reorders
    `ASCEND_RT_VISIBLE_DEVICES` nor renames a variable so that a list or allocator setting that did
    nothing starts to act."""
    for rule, name, before, after in fixed:
        for path in before:
            if _json(path, before[path]) is None:
                assert _assignments(before[path]) == _assignments(after[path]), f"{rule} {name} {path}: the environment changed"


def _assignments(text: str) -> Counter:
    return Counter(re.findall(r"(?m)(?:^|\s|export\s+)([A-Z][A-Z0-9_]*=\S*)", text))


def test_a_safe_fix_adds_what_hf_and_accelerate_read_only_as_auto(fixed):
    """HF Trainer and accelerate read `bf16`, `fp16` and `offload_optimizer` besides DeepSpeed: a
    safe fix that makes one of them appear (a rename of `bfloat16`, `cpu_offload` rewritten) would
    be read differently by them, unless it holds only "auto", which they fill as the launch says."""
    for where, old, new in _changed_configs(fixed):
        for path in READ_BY_HF:
            if _at(old, path) is None and (added := _at(new, path)) is not None:
                values = set(added.values()) if isinstance(added, dict) else {added}
                assert values == {"auto"}, f"{where}: {'.'.join(path)} = {added!r} added"


LOOP = "import deepspeed\n\nengine, _, _, _ = deepspeed.initialize(model=None, config=None)\n"


def _deepspeed_configs(case: dict) -> list[str]:
    files = case.get("files") or {case.get("file", "ds.json"): case.get("input", "")}
    return [name for name, text in files.items() if _json(name, text) is not None]


@pytest.mark.parametrize("rule,case", [pytest.param(r, c, id=f"{r}-{c['name']}") for r, c in _cases() if _deepspeed_configs(c)])
def test_a_safe_fix_writes_no_auto_where_a_plain_deepspeed_loop_reads_the_config(rule, case, tmp_path):
    """Only HF Trainer, accelerate, ms-swift and LLaMA-Factory fill "auto": with one more launch,
    a plain `deepspeed.initialize` loop reading each DeepSpeed config, no safe fix writes it."""
    configs = _deepspeed_configs(case)
    script = "".join(f"deepspeed --num_gpus 1 zz_loop.py --deepspeed --deepspeed_config {name}\n" for name in configs)
    before, after, _ = _safe_fix(rule, case, tmp_path, {"zz_plain.sh": script, "zz_loop.py": LOOP})
    for name in configs:
        old = json.dumps(_json(name, before[name])).count('"auto"')
        new = json.dumps(_json(name, after[name])).count('"auto"') if _json(name, after[name]) is not None else old
        assert new <= old, f"{name}: a safe fix wrote \"auto\" though a plain DeepSpeed loop reads it"
