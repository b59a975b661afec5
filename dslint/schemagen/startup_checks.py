"""The start-up checks of each release of transformers and ms-swift, read from its wheel.

Usage::

    python -m dslint.schemagen.startup_checks --wheels DIR            # write schemas/<package>-checks.json
    python -m dslint.schemagen.startup_checks --wheels DIR --check    # exit 1 if a shipped file is stale

The wheels are the ones ``python -m dslint.schemagen.argument_names --wheels DIR --download``
fetches (the same releases the names history records). Each is read statically, never imported.

A consumer refuses some combinations of arguments while it parses them: ``TrainingArguments.
__post_init__`` raises ``ValueError('--load_best_model_at_end requires the save and eval strategy
to match')``, ms-swift's ``SftArguments`` raises on ``--packing true`` without flash attention.
For each entry class (the class a console's command line is parsed into), the validation path,
``__post_init__`` and every method it calls, is written as steps (dslint/schemagen/_startup_walk.py)
with the checks whose conditions are in the condition language; dslint.evidence.startup_checks
replays them on a launch's values.

The file stores each distinct step once, each release's program as a list of step numbers (and
the lines of its checks), and per entry the checks its validation path holds, how many were kept
and why the others were left out.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from dslint.schemagen import argument_names as names
from dslint.schemagen._hfargs import SCHEMA_DIR
from dslint.schemagen._startup_lang import ALL
from dslint.schemagen._startup_wheel import WheelCode, fields_of
from dslint.schemagen._startup_walk import is_unknown, walk_entry, walk_function


@dataclass(frozen=True)
class Consumer:
    package: str  # the distribution (names.PACKAGES key)
    # dslint's argument set -> the entry class names, newest first; or a function entry
    # ``module/path.py:function(parse_call:CLASSES)``: the function that parses the argument objects
    # with ``parse_call`` from the classes the module constant ``CLASSES`` lists, and validates them.
    entries: dict[str, tuple[str, ...]]
    bases: tuple[str, ...] = ()  # packages whose base __post_init__ the entries call (read from their wheels)

    @property
    def output(self) -> Path:
        return SCHEMA_DIR / f"{self.package}-checks.json"


# TRL's trainer configs, each the entry of the TRL trainer that takes it (dslint's "trl:<Config>").
_TRL_CONFIGS = ("SFTConfig", "DPOConfig", "GRPOConfig", "KTOConfig", "RewardConfig", "RLOOConfig", "ORPOConfig",
                "CPOConfig", "BCOConfig", "PPOConfig", "OnlineDPOConfig", "GKDConfig", "XPOConfig", "NashMDConfig",
                "PRMConfig", "DistillationConfig")

CONSUMERS: dict[str, Consumer] = {
    "transformers": Consumer("transformers", {"TrainingArguments": ("TrainingArguments",)}),
    "trl": Consumer("trl", {name: (name,) for name in _TRL_CONFIGS}, bases=("transformers",)),
    "llamafactory": Consumer("llamafactory", {
        "train": ("llamafactory/hparams/parser.py:get_train_args(_parse_train_args:_TRAIN_ARGS)",),
    }, bases=("transformers",)),
    "ms-swift": Consumer("ms-swift", {
        "sft": ("SftArguments", "TrainArguments"),
        "pt": ("PretrainArguments", "PtArguments", "TrainArguments"),
        "rlhf": ("RLHFArguments",),
        "megatron-sft": ("MegatronSftArguments", "MegatronTrainArguments"),
        "megatron-rlhf": ("MegatronRLHFArguments",),
    }, bases=("transformers",)),
}


# ---- one release: its programs; the file: distinct steps, programs and releases -------------------


@dataclass
class Program:
    """One entry's validation path in one release."""

    steps: list  # without the check lines
    lines: list  # the line of each raise step, in order
    fields: dict
    sites: int  # the checks (raise and assert statements) on the path
    left_out: Counter


def read_program(code: WheelCode, entry: str, base_fields: dict | None = None) -> Program | None:
    if ":" in entry:
        found = code.code_for_function(entry)
        if found is None:
            return None
        walked = walk_function(found[0], found[1], found[2])
        declared = _parsed_fields(code, entry.partition(":")[0], found[0].parsed)
    else:
        found = code.code_for(entry)
        if found is None:
            return None
        walked = walk_entry(found[0], found[1], entry)
        declared = fields_of(code, entry)
    steps = _pruned(walked.steps)
    lines = [step[5] for step in steps if step[0] == "raise"]
    steps = [[*step[:5]] if step[0] == "raise" else step for step in steps]
    reads = _read_names(steps)
    declared = {**(base_fields or {}), **declared}
    fields = {name: row for name, row in declared.items() if f"self.{name}" in reads}
    kept = sum(1 for step in steps if step[0] == "raise")
    left = Counter(reason for reason, _, _ in walked.left_out)
    return Program(steps, lines, fields, kept + sum(left.values()), left)


def _parsed_fields(code: WheelCode, path: str, parsed: list) -> dict[str, list]:
    """The fields of every parsed class (one flat namespace: HfArgumentParser gives each its own
    names); a name two classes declare differently keeps only its kind when they agree, else ``other``."""
    out: dict[str, list] = {}
    for _, _, cls in parsed:
        for name, row in fields_of(code, cls, path).items():
            if name in out and out[name] != row:
                row = [row[0]] if row[0] == out[name][0] else ["other"]
            out[name] = row
    return out


def _names_in(expression: str) -> set[str]:
    tree = ast.parse(expression, mode="eval")
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            out.add(f"self.{node.attr}")
        elif isinstance(node, ast.Name) and node.id != "self" and node.id != "len":
            out.add(node.id)
    return out


def _step_reads(step: list) -> set[str]:
    out: set[str] = set()
    for guard in step[1]:
        if not is_unknown(guard):
            out |= _names_in(guard.lstrip("~"))
    if step[0] == "set" and step[3] is not None:
        out |= _names_in(step[3])
    if step[0] == "raise":
        for part in step[3]:
            if isinstance(part, list) and part[0] != "?":
                out |= _names_in(part[0])
    return out


def _read_names(steps: list) -> set[str]:
    out: set[str] = set()
    for step in steps:
        out |= _step_reads(step)
    return out


def _pruned(steps: list) -> list:
    """Only the steps a check depends on: walking back from the end, a set or forget is kept when
    a later kept step reads its target; guards outside the language become ``?``."""
    needed: set[str] = set()
    kept: list = []
    for step in reversed(steps):
        step = [step[0], ["?" if is_unknown(g) else g for g in step[1]], *step[2:]]
        if step[0] == "raise":
            kept.append(step)
            needed |= _step_reads(step)
        elif step[0] == "set":
            if step[2] in needed:
                kept.append(step)
                needed |= _step_reads(step)
        else:
            targets = [t for t in step[2] if t == ALL or t in needed]
            if targets:
                kept.append([step[0], step[1], targets])
                needed |= _step_reads(step)
    kept.reverse()
    return kept


def external_fields(wheels: list[names.Wheel], entries: tuple[str, ...] = ("Seq2SeqTrainingArguments", "TrainingArguments")
                    ) -> dict[str, list]:
    """The base classes' fields with the kind and constant default every one of these releases
    gives them (a name whose default differs between releases keeps only its kind): the value
    a subclass in another package starts from when the launch does not give it. The first of
    ``entries`` a release has (Seq2SeqTrainingArguments: TrainingArguments' fields and its own)."""
    out: dict[str, list] = {}
    for number, wheel in enumerate(wheels):
        code = WheelCode(wheel)
        rows = next((fields_of(code, e) for e in entries if code.mro(e, "")), {})
        if number == 0:
            out = rows
            continue
        for name in list(out):
            row = rows.get(name)
            if row is None or row[0] != out[name][0]:
                del out[name]
            elif row != out[name]:
                out[name] = [row[0]]
    return out


def external_effects(wheels: list[names.Wheel], entry: str = "TrainingArguments") -> list:
    """What ``entry.__post_init__`` may do in any of these releases, as steps.

    A subclass in another package calls it through ``super().__post_init__()`` at a release of
    this package it does not fix. Each distinct release's path is replayed in turn, its checks
    dropped (a check that fires refuses the launch anyway), its assignments to arguments turned
    into forget steps and its locals renamed apart: a value that some release really changes is
    then unknown after the call, whatever the other releases did before it, and a value none
    changes keeps what it was."""
    out: list = []
    seen: set[str] = set()
    for wheel in sorted(wheels, key=lambda w: names._key(w.version)):
        code = WheelCode(wheel)
        found = code.code_for(entry)
        if found is None:
            continue
        steps = []
        for step in walk_entry(found[0], found[1], entry).steps:
            if step[0] == "set" and step[2].startswith("self."):
                steps.append(["forget", step[1], [step[2]]])
            elif step[0] != "raise":
                steps.append(step)
        key = json.dumps(steps)
        if key in seen:
            continue
        seen.add(key)
        prefix = f"X{len(seen)}"  # its locals apart from the caller's and the other releases' (L1_x -> X1L1_x)
        out += json.loads(re.sub(r"\b(L\d+_)(?=\w)", prefix + r"\1", key))
    return out


def encode(consumer: Consumer, wheels: list[names.Wheel], external: dict | None = None,
           base_fields: dict | None = None) -> dict:
    """``external``: each base package's effects (external_effects); ``base_fields``: the fields
    those bases give in every release (external_fields)."""
    steps: list = []
    step_index: dict[str, int] = {}
    programs: list = []
    program_index: dict[str, int] = {}
    releases: list = []
    summary: dict = {}
    for wheel in sorted(wheels, key=lambda w: names._key(w.version)):
        code = WheelCode(wheel, external)
        row: dict = {"version": wheel.version}
        for set_name, classes in consumer.entries.items():
            cls = next((c for c in classes if ":" in c or code.mro(c, "")), None)
            program = read_program(code, cls, base_fields) if cls else None
            if program is None:
                continue
            numbers = []
            for step in program.steps:
                key = json.dumps(step, sort_keys=True)
                if key not in step_index:
                    step_index[key] = len(steps)
                    steps.append(step)
                numbers.append(step_index[key])
            body = {"class": cls, "steps": numbers, "lines": program.lines, "fields": program.fields}
            key = json.dumps(body, sort_keys=True)
            if key not in program_index:
                program_index[key] = len(programs)
                programs.append(body)
            row[set_name] = program_index[key]
            summary[set_name] = {"release": wheel.version, "class": cls, "checks": program.sites,
                                 "kept": program.sites - sum(program.left_out.values()),
                                 "left_out": dict(sorted(program.left_out.items()))}
        releases.append(row)
    return {
        "$comment": (f"The start-up checks of each {consumer.package} release dslint read: each entry class's validation "
                     "path (__post_init__ and the methods it calls) as steps in the condition language, written by "
                     "python -m dslint.schemagen.startup_checks from the releases' wheels (read with ast, never imported). "
                     "A step: [set, guards, target, expression], [forget, guards, targets], "
                     "[raise, guards, exception, message, file]; a guard '?' is outside the language, one marked '~' "
                     "follows a check that raises (unknown counts as holding)."),
        "package": consumer.package,
        "entries": {k: list(v) for k, v in consumer.entries.items()},
        "newest": summary,
        "steps": steps,
        "programs": programs,
        "releases": releases,
    }


def render(data: dict) -> str:
    """One step, program or release a line: the file diffs well when a release is added."""
    head = {k: v for k, v in data.items() if k not in ("steps", "programs", "releases")}
    lines = ["{"] + [f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}," for k, v in head.items()]
    for index, key in enumerate(("steps", "programs", "releases")):
        lines.append(f"  {json.dumps(key)}: [")
        lines.append(",\n".join(f"    {json.dumps(row, ensure_ascii=False)}" for row in data[key]))
        lines.append("  ]" + ("," if index < 2 else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


def readme_table() -> str:
    """The README's table of the shipped files: per consumer and entry, the checks on the newest
    release's validation path, how many were kept, and the kinds of condition left out."""
    rows = ["| consumer | command (class, release) | checks on the path | kept | left out |",
            "|---|---|---|---|---|"]
    empty = []
    for name, consumer in CONSUMERS.items():
        data = json.loads(consumer.output.read_text(encoding="utf-8"))
        for entry, found in data["newest"].items():
            if not found["checks"]:
                empty.append(f"{name} {entry}")
                continue
            left = ", ".join(f"{kind} ({count})" for kind, count in sorted(found["left_out"].items(), key=lambda kv: -kv[1]))
            rows.append(f"| {name} | {entry} ({found['class']}, {found['release']}) | {found['checks']} | {found['kept']} | {left} |")
    tail = f"\nNo check on the validation path of: {', '.join(empty)}.\n" if empty else ""
    return "\n".join(rows) + "\n" + tail


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dslint.schemagen.startup_checks", description=__doc__.split("\n")[0])
    parser.add_argument("--wheels", required=True, type=Path, help="folder of the wheels (python -m dslint.schemagen.argument_names --download)")
    parser.add_argument("--package", choices=sorted(CONSUMERS), action="append", help="only this package (repeatable)")
    parser.add_argument("--check", action="store_true", help="exit 1 if a shipped file is stale")
    args = parser.parse_args(argv)
    status = 0
    for name in args.package or sorted(CONSUMERS):
        consumer = CONSUMERS[name]
        wheels = names.read_folder(names.PACKAGES[name], args.wheels)
        if not wheels:
            print(f"{name}: no wheel in {args.wheels}", file=sys.stderr)
            status = max(status, 1)
            continue
        bases = {base: names.read_folder(names.PACKAGES[base], args.wheels) for base in consumer.bases}
        base_fields: dict = {}
        for found in bases.values():
            base_fields.update(external_fields(found))
        text = render(encode(consumer, wheels, {b: external_effects(found) for b, found in bases.items()}, base_fields))
        status = names.write_or_check(name, consumer.output, text, wheels, args.check, status)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
