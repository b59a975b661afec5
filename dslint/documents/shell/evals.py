"""Strings run as scripts (``eval``, ``bash -c``, ``sbatch --wrap``): their text, what bash says
of it, and where it stands in the file. The walker reads the string (walker.py)."""

from __future__ import annotations

import re

from dslint.source import Span

from .model import Command, RuntimeFailure, Script, Word
from .pieces import PLACEHOLDER
from .substitution import BAD_SUBSTITUTION_NOTE, bad_substitution_message, bad_substitutions
from .syntax import BASH_VERSION, check
from .textmap import TextMap
from .variables import Ctx, Var


def string_of(words: list[Word]) -> tuple[str | None, list[str | None]]:
    """(the text the words make, the assumed values of its unknown pieces); each piece the script
    does not decide is written ``${PLACEHOLDER<k>}``. The text is None when nothing of it is known."""
    unknown: list[str | None] = []
    chunks = []
    for w in words:
        for v, a in w.parts or ((w.value, w.assumed),):
            if v is None:
                chunks.append("${%s%d}" % (PLACEHOLDER, len(unknown)))
                unknown.append(a)
            else:
                chunks.append(v)
        chunks.append(" ")
    text = "".join(chunks)[:-1]
    if not text.strip() or (unknown and not re.sub(r"\$\{%s\d+\}" % PLACEHOLDER, "", text).strip()):
        return None, unknown  # nothing of the string is known
    return text, unknown


def check_string(script: Script, cmd: Command, ctx: Ctx, text: str, span: Span) -> None:
    """What bash says when it runs the string: a syntax error, or a bad substitution."""
    units: list[tuple[int, int]] = []
    complaint = check(text, units)
    if complaint is not None:
        script.runtime_failures.append(
            RuntimeFailure(span, f"bash {BASH_VERSION} cannot parse the string `{cmd.basename}` runs: {complaint.message}")
        )
    elif not (ctx.conditional or ctx.in_loop or ctx.function or ctx.from_eval) and "${" in text:
        for start, end in bad_substitutions(text, units):
            script.runtime_failures.append(RuntimeFailure(
                span, f"in the string `{cmd.basename}` runs: " + bad_substitution_message(text[start:end], BASH_VERSION),
                BAD_SUBSTITUTION_NOTE))


def verbatim(tm: TextMap, variables: dict[str, Var], words: list[Word], text: str, span: Span) -> tuple[Span | None, int | None]:
    """(fixed span, shift): where the evaluated text stands verbatim in the file, the
    character offset of its start (positions inside it are exact); else the word's span."""
    if tm.fixed_span is not None or tm.shift is not None or len({(w.span.start, w.span.end) for w in words}) != 1:
        return span, None  # nested, or several words of the file
    source = tm.source
    places = [words[0].span]
    m = re.fullmatch(r'"?\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?"?', words[0].raw)
    var = variables.get(m.group(1)) if m else None
    if var is not None and var.span is not None and var.span.source is source:
        places.append(var.span)  # `eval "$CMD"`: the string where CMD was assigned
    for place in places:
        written = source.text[place.start : place.end]
        at = written.find(text)
        if at != -1 and written.find(text, at + 1) == -1:
            return None, place.start + at
    return span, None
