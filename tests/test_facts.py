"""Launch facts (dslint/facts.py): declared by a rule (``@rule(facts=...)``), computed once per
target per run by the engine, handed to the rule as keyword arguments; and no rule body works
them out itself or reads a module-level cache."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from dslint import facts
from dslint.config import Settings
from dslint.rule import FACTS, Context, _Deferred, load_rules, rule
from dslint.diagnostics import Finding
from dslint.run.engine import Engine

ROOT = Path(__file__).resolve().parent.parent

# Two launches in one script, on Ascend (the set_env.sh), each with a variable DS501 and DS503 judge.
SCRIPT = (
    "source /usr/local/Ascend/ascend-toolkit/set_env.sh\n"
    "CUDA_VISIBLE_DEVICES=0,1 NCCL_DEBUG=INFO NPROC_PER_NODE=2 swift sft --model m --dataset d.jsonl\n"
    "CUDA_VISIBLE_DEVICES=2,3 NCCL_DEBUG=INFO NPROC_PER_NODE=2 swift sft --model m --dataset e.jsonl\n"
)


def _run(tmp_path, engine: Engine):
    (tmp_path / "train.sh").write_text(SCRIPT, encoding="utf-8")
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        return engine.lint_paths(["train.sh"])
    finally:
        os.chdir(old)


def test_every_fact_a_rule_may_declare_is_computed_here():
    assert set(facts.REGISTRY) == set(FACTS)


def test_a_rule_declares_only_known_facts():
    with pytest.raises(ValueError, match="rule facts"):
        rule("ACME001", "acme-rule", target="launch", facts=("no_such_fact",))


def test_a_fact_is_computed_once_per_plan_per_run(tmp_path, monkeypatch):
    from dslint.launch import target

    calls: list[int] = []
    detect = target.launch_target

    def counting(plan, settings):
        calls.append(id(plan))
        return detect(plan, settings)

    monkeypatch.setattr(target, "launch_target", counting)
    engine = Engine(Settings(select=["DS5"], root=tmp_path))
    result = _run(tmp_path, engine)
    plans = [p for p in result.plans if p.launcher != "yaml"]
    assert len(plans) == 2
    # DS501-DS516 ask for npu_target or launch_target, and DS405 is not selected: one call per plan
    assert sorted(calls) == sorted(id(p) for p in plans)
    assert {"DS501", "DS503"} <= {d.code for d in result.diagnostics}
    calls.clear()
    _run(tmp_path, engine)  # a new run works it out again: the memo is the run's
    assert len(calls) == 2


def test_a_rule_made_from_the_index_gets_its_facts(tmp_path):
    lazy, _ = load_rules()
    eager, _ = load_rules(lazy=False)
    assert {r.code: r.facts for r in lazy} == {r.code: r.facts for r in eager}
    ds501 = next(r for r in lazy if r.code == "DS501")
    assert ds501.facts == ("npu_target",) and isinstance(ds501.check, _Deferred)
    result = _run(tmp_path, Engine(Settings(select=["DS501"], root=tmp_path), rules=[ds501]))
    assert not result.internal_errors
    assert [d.code for d in result.diagnostics] == ["DS501", "DS501"]
    assert all("Ascend NPU target: the script sources" in d.related[0].message for d in result.diagnostics)


def test_a_plugin_rule_receives_its_declared_facts(tmp_path):
    seen = []

    @rule("ACME001", "acme-rule", target="launch", facts=("npu_target", "hardware", "trl_trainer"))
    def acme(plan, context, *, npu_target, hardware, trl_trainer):
        seen.append((npu_target, hardware, trl_trainer))
        yield Finding(plan.span, "seen")

    result = _run(tmp_path, Engine(Settings(select=["ACME"], root=tmp_path), rules=[acme]))
    assert not result.internal_errors
    assert len(seen) == 2
    assert all(npu is not None and npu.npu and hw is None and trl is None for npu, hw, trl in seen)


def test_a_fact_of_a_deepspeed_use_is_its_launchs():
    class Plan:
        program = None

    class Use:
        launch = Plan()
        document = None

    context = Context(settings=Settings())
    context.facts[("launch_target", id(Use.launch))] = (Use.launch, "the launch's target")
    assert facts.value("launch_target", Use(), context) == "the launch's target"


# ---- no rule works a fact out itself -------------------------------------------------------------

#: What the facts compute: a rule declares the fact instead of calling these.
FACT_FUNCTIONS = {"launch_target", "npu_target", "npu_document_target", "setting_target", "hardware", "batch_of", "cached"}
#: The framework readers behind the framework facts, as the rules would call them (module.function).
FRAMEWORK_CALLS = {("verl", "ppo"), ("verl", "sft"), ("verl", "config"), ("grpo", "trainer"), ("openrlhf", "batch"),
                   ("frameworks", "batch_of")}
#: The module-level caches keyed on plans and scripts that the run's memo replaced.
CACHE_NAMES = {"_CACHE", "_HARDWARE_OF"}


def _calls(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                yield node.lineno, func.id, None
            elif isinstance(func, ast.Attribute):
                owner = func.value.id if isinstance(func.value, ast.Name) else None
                yield node.lineno, func.attr, owner


def _python_files(*folders: str):
    for folder in folders:
        path = ROOT / folder
        yield from ([path] if path.is_file() else sorted(path.rglob("*.py")))


def test_no_rule_calls_what_a_fact_computes():
    found = []
    for path in _python_files("dslint/rules"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, name, owner in _calls(tree):
            if (owner is None and name in FACT_FUNCTIONS) or (owner, name) in FRAMEWORK_CALLS \
                    or (owner in ("target", "targets") and name in FACT_FUNCTIONS):
                found.append(f"{path.relative_to(ROOT)}:{line} calls {owner + '.' if owner else ''}{name}")
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "dslint.launch.target":
                names = {a.name for a in node.names} & FACT_FUNCTIONS
                if names:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {', '.join(sorted(names))}: declare the fact instead")
    assert not found, "rules work out a fact themselves (declare it: @rule(facts=...)):\n" + "\n".join(found)


def test_no_module_level_cache_of_facts():
    found = []
    for path in _python_files("dslint/rules", "dslint/frameworks", "dslint/launch/target.py", "dslint/facts.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
            if name in CACHE_NAMES:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}")
        for node in tree.body:  # a plan-keyed cache at the top level of a module
            value = getattr(node, "value", None)
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(value, ast.Call) \
                    and getattr(value.func, "id", getattr(value.func, "attr", None)) == "WeakKeyDictionary":
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} WeakKeyDictionary")
            if isinstance(node, ast.FunctionDef) and node.name == "cached":
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} def cached")
    assert not found, "a module-level cache of launch facts (the run's Context.facts memoises them):\n" + "\n".join(found)
