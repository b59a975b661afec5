"""Which variables a word of a command is built from, through the variables the script sets.

``--include localhost:$CUDA_VISIBLE_DEVICES`` is built from ``CUDA_VISIBLE_DEVICES``; so is
``--include $HOSTS`` after ``HOSTS=localhost:$CUDA_VISIBLE_DEVICES``. Read from the references
the walker recorded (``Script.references``: each ``$NAME`` with its place), and from where each
variable the command sees was last set (its ``Value.span``), never from the text of the file.
"""

from __future__ import annotations

from dslint.source import Span

from .model import Command, Script, Word

_MAX_STEPS = 8  # variables followed from one word


def built_from(script: Script, command: Command, word: Word, name: str) -> bool:
    """Whether ``word`` of ``command`` expands ``$name``, itself or through variables set from it."""
    seen: set[str] = set()
    pending: list[Span] = [word.span]
    while pending:
        span = pending.pop()
        for reference in _references_in(script, span):
            if reference == name:
                return True
            if reference in seen or len(seen) >= _MAX_STEPS:
                continue
            seen.add(reference)
            value = command.shell_vars.get(reference) or command.environment.get(reference)
            where = getattr(value, "span", None)
            if where is not None and where.source is script.source:
                pending.append(where)
    return False


def _references_in(script: Script, span: Span) -> list[str]:
    return [r.name for r in script.references
            if r.span.source is span.source and span.start <= r.span.start and r.span.end <= span.end]
