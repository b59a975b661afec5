"""How dslint.launch.pyprogram names what a program's statements refer to.

A module-level name is its last binding before the use, as Python runs the module: a class
defined after an import of the same name replaces the import, and an import after a class
replaces the class. A function body runs after the module has bound all its names.
"""

from __future__ import annotations

import textwrap

import pytest

from dslint.launch.consumer import program_arguments
from dslint.launch.pyprogram import read_program

_LOCAL_ARGS = """
    @dataclass
    class TrainingArguments(transformers.TrainingArguments):
        model_max_length: int = field(default=2048)
"""
_IMPORT = "from transformers import TrainingArguments\n"
_PARSE_IN_FUNCTION = """
    def main():
        return transformers.HfArgumentParser((TrainingArguments,)).parse_args_into_dataclasses()
"""
_PARSE_AT_TOP = "parser = transformers.HfArgumentParser((TrainingArguments,))\n"
_HEADER = "from dataclasses import dataclass, field\n\nimport transformers\n"


def _parsed_classes(tmp_path, *parts: str) -> tuple[str, ...]:
    entry = tmp_path / "train.py"
    entry.write_text(_HEADER + "".join(textwrap.dedent(p) for p in parts))
    program = read_program(entry, tmp_path, lambda p: p.relative_to(tmp_path).as_posix())
    assert program is not None and len(program.parsers) == 1
    return program.parsers[0].classes


@pytest.mark.parametrize("parts, expected", [
    # the class defined after the import is the one every later use gets
    ((_IMPORT, _LOCAL_ARGS, _PARSE_IN_FUNCTION), "TrainingArguments"),
    ((_IMPORT, _LOCAL_ARGS, _PARSE_AT_TOP), "TrainingArguments"),
    # an import after the class rebinds the name to the import
    ((_LOCAL_ARGS, _IMPORT, _PARSE_IN_FUNCTION), "transformers.TrainingArguments"),
    ((_LOCAL_ARGS, _IMPORT, _PARSE_AT_TOP), "transformers.TrainingArguments"),
    # a function runs after the module bound all its names; top-level code sees what came before it
    ((_IMPORT, _PARSE_IN_FUNCTION, _LOCAL_ARGS), "TrainingArguments"),
    ((_IMPORT, _PARSE_AT_TOP, _LOCAL_ARGS), "transformers.TrainingArguments"),
    # an assignment of an outside class is an alias of it
    ((_LOCAL_ARGS, "TrainingArguments = transformers.Seq2SeqTrainingArguments\n", _PARSE_IN_FUNCTION),
     "transformers.Seq2SeqTrainingArguments"),
    # the fallback of a failed import does not replace the import
    (("try:\n    from transformers import TrainingArguments\nexcept ImportError:\n    TrainingArguments = None\n",
      _PARSE_IN_FUNCTION), "transformers.TrainingArguments"),
])
def test_a_module_level_name_is_its_last_binding_before_the_use(tmp_path, parts, expected):
    assert _parsed_classes(tmp_path, *parts) == (expected,)


def test_the_local_subclass_fields_are_the_parsers_arguments(tmp_path):
    entry = tmp_path / "train.py"
    entry.write_text(_HEADER + _IMPORT + textwrap.dedent(_LOCAL_ARGS) + textwrap.dedent(_PARSE_IN_FUNCTION))
    program = read_program(entry, tmp_path, lambda p: p.relative_to(tmp_path).as_posix())

    class Consumer:
        facts = program

    arguments = program_arguments(Consumer())
    assert "model_max_length" in arguments.own
    assert arguments.schemas == ["transformers:TrainingArguments"]  # its base, through the local class
    assert arguments.complete
