"""What taking a wrapper off a command gives: where the wrapped command starts, and what the
wrapper does to its environment (dslint.documents.shell.wrappers)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from .model import Word


class EnvWord(NamedTuple):
    """``NAME=value`` put in the program's environment: one word, or NAME and VALUE as two words."""

    word: Word
    name: str
    value: Word | None = None  # the separate value word (``mpirun -genv NAME VALUE``)


@dataclass
class Peeled:
    """A wrapper command (env, nohup, ...) taken off a command's words."""

    end: int  # index of the first word after the wrapper and its options
    env: list[EnvWord] = field(default_factory=list)
    unset: list[str] = field(default_factory=list)
    clears: bool = False  # env -i / exec -c: nothing but `env` reaches the program
    python: bool = False  # the wrapper runs what follows with Python (`uv run train.py`, `uv run -m pkg`)
    # with ``clears``: the names whose value in the calling shell still reaches the program (`docker run -e NAME`)
    kept: list[str] = field(default_factory=list)
    # prefixes of the calling shell's variables that become the program's variables without them
    # (`APPTAINERENV_NAME` is NAME inside the container)
    renamed: tuple[str, ...] = ()


Peel = Callable[[list[Word], int], "Peeled | None"]
