"""Which program reads a launch's files: the launched program read statically (dslint.launch.consumer),
else a guess from the launcher's flags; for a training config no launch names, its own keys. And
the checkouts in the repository of the packages that program runs (dslint.launch.vendored)."""

from __future__ import annotations

import copy
import os
from pathlib import Path

from dslint.documents.model import Document
from dslint.files.roots import search_root
from dslint.launch.consumer import (AXOLOTL, DEEPSPEED_READER, HYDRA, LABEL, LLAMAFACTORY, MEGATRON_SWIFT, SWIFT, UNKNOWN,
                                    Consumer, of_console, of_module, resolve_program)
from dslint.launch.consumer import read as read_consumer
from dslint.launch.entries import add_entry_hint, of_entry_file
from dslint.launch.lookup import Files
from dslint.launch.plan import LaunchPlan, where
from dslint.launch.pyprogram import Evidence
from dslint.launch.vendored import CONSUMER_PACKAGES, locate

# The console commands that are their trainer: `swift sft` is ms-swift whatever its flags say.
_CONSOLES = {"swift": SWIFT, "megatron": MEGATRON_SWIFT, "llamafactory": LLAMAFACTORY}


def settle_consumer(plan: LaunchPlan, launch, base: Path, files: Files, read: dict[str, Consumer]) -> None:
    """Who reads this launch's files: the program, read statically; else a guess from the flags.
    ``read``: real path of a program → what reading it showed, kept across the run's launches."""
    consumer = _identify(plan, launch, base, files, read)
    # A program that holds rival trainers is evidence against any single guess from the flags.
    if not consumer.established and not consumer.rivals:
        guess, why = _guess_consumer(plan, launch)
        if guess is not None:
            consumer.assumption = f"assuming {LABEL[guess]} ({why}): {consumer.assumption}"
            plan.consumer = DEEPSPEED_READER.get(guess)
    else:
        plan.consumer = consumer.deepspeed_reader
    plan.program = consumer


def _identify(plan: LaunchPlan, launch, base: Path, files: Files, read: dict[str, Consumer]) -> Consumer:
    at = where(plan.span)
    line = plan.span.source.position(plan.span.start)[0]
    seen = Evidence(plan.origin.path, line, f"runs {plan.entry or plan.launcher}")
    console = _CONSOLES.get(plan.launcher)
    if console is not None:
        return of_console(console, plan.entry or plan.launcher, seen)
    word = launch.program
    if word is None:
        return Consumer(UNKNOWN, False, assumption=f"the launch at {at} names no program")
    if word.value is None:
        return Consumer(UNKNOWN, False, program=word.raw,
                        assumption=f"the program `{word.raw}` is only known at run time")
    raw = word.value
    root = files.root(base)
    path = resolve_program(raw, launch.module, base, root, files.cwd, plan.folder)
    if path is None:
        if launch.module:
            known = of_module(raw, seen)
            if known is not None:
                add_entry_hint(known, raw.replace(".", "/") + ".py", seen)
                return known
            return Consumer(UNKNOWN, False, program=raw,
                            assumption=f"the module {raw} is not in the repository")
        # ms-swift's own entry files (`torchrun swift/cli/sft.py`) run from a checkout elsewhere
        known = of_entry_file(raw, seen)
        if known is not None:
            return known
        return Consumer(UNKNOWN, False, program=raw, assumption=f"{raw} was not found")
    key = os.path.realpath(path)
    if key not in read:
        read[key] = read_consumer(path, root, files.display)
    consumer = copy.copy(read[key])
    if consumer.established and consumer.kind in (SWIFT, MEGATRON_SWIFT):
        consumer.version_hints = dict(consumer.version_hints)
        add_entry_hint(consumer, key, seen)
    return consumer


def _guess_consumer(plan: LaunchPlan, launch) -> tuple[str | None, str]:
    """The consumer the flags suggest when the program itself says nothing: (kind, why)."""
    program = (launch.program.value or "") if launch.program is not None else ""
    if program.endswith(("swift/cli/sft.py", "swift/cli/pt.py", "swift/cli/rlhf.py")):
        return SWIFT, f"the program is {program}"
    if os.path.basename(program) in ("llm_sft.py", "llm_rlhf.py", "llm_dpo.py", "llm_orpo.py", "llm_simpo.py"):
        return SWIFT, f"{program} is named like ms-swift 1.x-2.x's example entries (examples/pytorch/llm/)"
    if program.endswith(("src/train.py", "llamafactory/launcher.py")) and plan.training_config is not None:
        return LLAMAFACTORY, f"{program} is given a training config"
    if "deepspeed_config" in plan.args:
        return "deepspeed", "--deepspeed_config is deepspeed.add_config_arguments' flag"
    if "deepspeed" in plan.args and plan.args["deepspeed"].value is not True:
        return "hf", "--deepspeed with a value is TrainingArguments' flag"
    if plan.launcher == "accelerate":
        return "accelerate", "accelerate launch"
    if plan.launcher == "deepspeed":
        return "deepspeed", "the deepspeed launcher"
    return None, ""


# Keys that only one trainer's configs have: the file's own evidence of who reads it.
_FLAVOR_KEYS = {
    "llamafactory": (LLAMAFACTORY, ("finetuning_type", "stage", "template")),
    "swift": (SWIFT, ("train_type", "tuner_type", "sft_type", "model")),
    "axolotl": (AXOLOTL, ("base_model", "micro_batch_size", "sequence_len")),
}


def config_consumer(doc: Document, flavor: str) -> Consumer:
    """Who reads a training config no launch names: its own syntax or keys say, or nobody knows."""
    if flavor == "hydra":
        from dslint.documents.omegaconf import marker

        node, what = marker(doc.mapping)
        line = node.span.source.position(node.span.start)[0]
        return Consumer(HYDRA, True, [Evidence(doc.path, line, f"uses {what}")], program=doc.path,
                        config_system=Evidence(doc.path, line, what))
    if flavor in _FLAVOR_KEYS:
        kind, keys = _FLAVOR_KEYS[flavor]
        entry = next((doc.mapping.entry(k) for k in keys if doc.mapping.entry(k) is not None), None)
        if entry is not None:
            line = entry.key_span.source.position(entry.key_span.start)[0]
            return Consumer(kind, True, [Evidence(doc.path, line, f"has {LABEL[kind]}'s key {entry.key}")], program=doc.path)
    return Consumer(UNKNOWN, False, program=doc.path,
                    assumption=f"assuming HF TrainingArguments read it: no launch names {doc.path}")


def locate_sources(plan: LaunchPlan, base: Path, files: Files) -> None:
    """The checkouts in the repository of the packages the launch's consumer runs (dslint.launch.vendored)."""
    program = plan.program
    if program is None:
        return
    packages = CONSUMER_PACKAGES.get(program.kind if program.established else plan.consumer or "", ())
    if not packages:
        return
    starts: list[tuple[Path, str]] = []
    config = plan.training_config.document if plan.training_config is not None else None
    if config is not None:
        starts.append((Path(config.path).parent, config.path))
    if program.facts is not None and program.program:
        starts.append(((files.cwd / program.program).parent, program.program))
    starts.append((base, plan.origin.path))
    stop = files.root(base) or Path(search_root(os.path.abspath(base)))
    workdir = (plan.workdir.value, plan.workdir.origin) if plan.workdir is not None else None

    def display(path) -> str:
        return files.display(Path(path))

    found = {package: locate(package, starts, workdir, stop, display) for package in packages}
    program.sources = {package: source for package, source in found.items() if source is not None}
