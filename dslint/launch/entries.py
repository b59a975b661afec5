"""Framework entry files a launch may run by path, and the flags whose file a program reads as its
training arguments.

- ms-swift's own entry files (``swift/cli/sft.py``, which ``swift sft`` runs under torchrun, and
  1.x-2.x's ``examples/pytorch/llm/llm_sft.py``) are ms-swift's parser wherever they are run
  from; which releases have the file bounds the version (``SWIFT_ENTRY_FILES``).
- ``config_flags``: the YAML after ``--config`` of a TrlParser program, or after a flag handed to
  HfArgumentParser's ``parse_yaml_file``, is the launch's training config.
"""

from __future__ import annotations

import os
from pathlib import Path

from dslint.launch.consumer import MEGATRON_SWIFT, SWIFT, Consumer
from dslint.launch.pyprogram import Evidence


#: ms-swift's own entry files, which `swift <sub>` runs under torchrun (swift/cli/main.py ROUTE_MAPPING),
#: and its 1.x/2.x example entries: path -> (first release that has it, first release without it).
#: Read from the release tags of modelscope/ms-swift (`git ls-tree v<X>`), 1.1.0-4.5.2.
SWIFT_ENTRY_FILES = {
    "swift/cli/sft.py": ("1.3.0", None), "swift/cli/pt.py": ("2.2.5", None), "swift/cli/rlhf.py": ("2.2.0", None),
    "swift/cli/dpo.py": ("1.6.0", "2.2.0"), "swift/cli/orpo.py": ("2.0.5", "2.2.0"), "swift/cli/simpo.py": ("2.1.0", "2.2.0"),
    "swift/cli/infer.py": ("1.3.0", None), "swift/cli/export.py": ("1.6.2", None), "swift/cli/deploy.py": ("1.5.1", None),
    "swift/cli/eval.py": ("2.0.0", None), "swift/cli/merge_lora.py": ("1.4.0", None), "swift/cli/web_ui.py": ("1.3.0", None),
    "swift/cli/app_ui.py": ("1.5.0", "3.0.0"), "swift/cli/app.py": ("3.0.2", None), "swift/cli/sample.py": ("3.0.3", None),
    "swift/cli/rollout.py": ("3.4.0", None),
    "swift/cli/_megatron/sft.py": ("3.2.2", None), "swift/cli/_megatron/pt.py": ("3.2.2", None),
    "swift/cli/_megatron/rlhf.py": ("3.6.0", None), "swift/cli/_megatron/export.py": ("3.10.0", None),
    "examples/pytorch/llm/llm_sft.py": ("1.3.0", "3.0.0"), "examples/pytorch/llm/llm_infer.py": ("1.3.0", "3.0.0"),
    "examples/pytorch/llm/llm_rlhf.py": ("2.2.0", "3.0.0"), "examples/pytorch/llm/llm_dpo.py": ("1.5.0", "2.2.0"),
    "examples/pytorch/llm/llm_orpo.py": ("2.0.5", "2.2.0"), "examples/pytorch/llm/llm_simpo.py": ("2.1.0", "2.2.0"),
}


def swift_entry_file(path: str) -> str | None:
    """The ms-swift entry file a program path names (``/opt/ms-swift/swift/cli/sft.py`` → ``swift/cli/sft.py``)."""
    normalized = os.path.normpath(path).replace(os.sep, "/")
    for known in SWIFT_ENTRY_FILES:
        if normalized == known or normalized.endswith("/" + known):
            return known
    return None


def _releases(known: str) -> tuple[str, str]:
    """(specifier, words) of the releases that have the entry file ``known``."""
    first, gone = SWIFT_ENTRY_FILES[known]
    if gone is None:
        return f">={first}", f"ms-swift {first} and later"
    return f">={first},<{gone}", f"ms-swift {first} up to {gone}, which removed it"


def add_entry_hint(consumer: Consumer, path: str, evidence: Evidence) -> None:
    """What the entry file a launch runs says of the ms-swift release: only the releases that have it."""
    known = swift_entry_file(path)
    if known is None or "ms-swift" in consumer.version_hints:
        return
    spec, words = _releases(known)
    consumer.version_hints["ms-swift"] = (spec, Evidence(evidence.path, evidence.line, f"runs {known}, a file of {words}"))


def of_entry_file(path: str, evidence: Evidence) -> Consumer | None:
    """A program path that is one of ms-swift's entry files, not in the repository: ms-swift's own parser."""
    known = swift_entry_file(path)
    if known is None:
        return None
    kind = MEGATRON_SWIFT if "/_megatron/" in known else SWIFT
    seen = Evidence(evidence.path, evidence.line, f"runs {path}, ms-swift's entry file {known}")
    consumer = Consumer(kind, True, [seen], program=path)
    add_entry_hint(consumer, path, evidence)
    return consumer


_FILE_PARSERS = ("parse_yaml_file", "parse_json_file")


def config_flags(consumer: Consumer | None, cwd: Path) -> dict[str, Evidence]:
    """Flags (by destination) whose file the program reads as its training arguments, with the evidence:

    - ``config``, when the program runs TrlParser's ``parse_args_and_config``: the YAML after
      ``--config`` sets the dataclasses' defaults and the command line wins
      (trl/scripts/utils.py:303-344 in TRL 1.16.0);
    - a flag the program defines with argparse whose value it hands to HfArgumentParser's
      ``parse_yaml_file``/``parse_json_file`` (``parser.parse_yaml_file(args.config_file)``).
    """
    facts = consumer.facts if consumer is not None and consumer.established else None
    if facts is None:
        return {}
    out: dict[str, Evidence] = {}
    call = facts.method_calls.get("parse_args_and_config")
    if call is not None and any(p.kind == "trl" for p in facts.parsers):
        out["config"] = Evidence(call.path, call.line, "TrlParser.parse_args_and_config reads --config")
    defined = {definition.name for definition in facts.argparse}
    if defined and any(m in facts.method_calls for m in _FILE_PARSERS):
        for display in facts.files:
            for dest, line, method in _file_parser_calls(cwd / display, defined):
                out.setdefault(dest, Evidence(display, line, f"{method}(args.{dest})"))
    return out


def _file_parser_calls(path: Path, defined: set[str]) -> list[tuple[str, int, str]]:
    """(flag destination, line, method) of each parse_yaml_file/parse_json_file call given ``args.<dest>``."""
    import ast

    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError, RecursionError):
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _FILE_PARSERS and node.args:
            for inner in ast.walk(node.args[0]):
                if isinstance(inner, ast.Attribute) and inner.attr in defined:
                    out.append((inner.attr, node.lineno, node.func.attr))
                    break
    return out


__all__ = ["SWIFT_ENTRY_FILES", "add_entry_hint", "config_flags", "of_entry_file", "swift_entry_file"]
