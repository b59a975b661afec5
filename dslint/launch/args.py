"""Reading training arguments of a launch plan the way their consumers parse them.

Shared by the precision (DS40x), parallelism (DS41x) and Ascend NPU (DS5xx) rules. A plan's
``args`` hold command-line flags (strings, or True for a bare flag), YAML values (Python
values) and LLaMA-Factory ``key=value`` overrides, already merged in the consumer's precedence.
"""

from __future__ import annotations

from dslint.values import as_int

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dslint.diagnostics import Related
from dslint.source import Span
from dslint.values import bool_word

if TYPE_CHECKING:  # annotations only: a run on configs alone reads no launch plan
    from dslint.launch.plan import Arg

TRAINING_ENTRIES = ("swift sft", "swift pt", "swift rlhf", "megatron sft", "megatron pt", "megatron rlhf", "llamafactory train")


def as_bool(value: Any) -> bool | None:
    """strtobool as HfArgumentParser applies it; None when unknown or not a boolean."""
    if value is True or value is False:
        return value
    if value is None or isinstance(value, (list, dict)):
        return None
    if isinstance(value, (int, float)):
        return bool(value) if value in (0, 1) else None
    return bool_word(value)


def as_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, bool) or value is None or isinstance(value, (list, dict)):
        return None
    return str(value)


@dataclass(frozen=True)
class Value:
    """An argument's parsed value with the argument itself (None when a default applies)."""

    value: Any
    arg: Arg | None
    default_note: str | None = None  # "ms-swift's default" ...

    @property
    def given(self) -> bool:
        return self.arg is not None

    @property
    def span(self) -> Span | None:
        return self.arg.span if self.arg is not None else None

    def shown(self, name: str) -> str:
        if self.arg is not None:
            return f"{written(self.arg)} ({where(self.arg.span)})"
        return f"{name} = {self.value} ({self.default_note or 'default'})"

    def related(self, name: str) -> Related:
        return Related(self.shown(name), self.span)


def written(arg: Arg) -> str:
    """The argument as written: ``--bf16 true``, ``--bf16``, ``bf16: true`` (YAML), ``bf16=true``."""
    value = arg.value
    shown = " ".join(str(v) for v in value) if isinstance(value, list) else ("true" if value is True else "false" if value is False else str(value))
    if arg.origin.startswith("-"):
        flag_name = arg.origin.split(" at ", 1)[0]
        return flag_name if value is True else f"{flag_name} {shown}"
    if " in " in arg.origin.split(" at ", 1)[0] or " at " not in arg.origin:
        return f"{arg.name}: {shown}"
    return f"{arg.name}={shown}"


def flag(plan, *names: str) -> Value:
    """A boolean flag: its parsed value (None when unknown/absent) and the argument."""
    arg = plan.arg(*names)
    if arg is None:
        return Value(None, None)
    return Value(as_bool(arg.value), arg)


def integer(plan, *names: str, default: int | None = None, note: str | None = None) -> Value:
    arg = plan.arg(*names)
    if arg is None:
        return Value(default, None, note)
    return Value(as_int(arg.value), arg)


def text(plan, *names: str) -> Value:
    arg = plan.arg(*names)
    if arg is None:
        return Value(None, None)
    return Value(as_text(arg.value), arg)


def where(span: Span | None) -> str:
    if span is None:
        return "the command line"
    line = span.source.position(span.start)[0]
    return f"{span.path}:{line}"


def is_training(plan) -> bool:
    """Whether the launch trains (ms-swift/LLaMA-Factory entries say; other launchers are assumed to)."""
    if plan.entry in TRAINING_ENTRIES:
        return True
    if plan.launcher in ("swift", "megatron", "llamafactory"):
        return False
    if plan.launcher == "yaml":
        if plan.consumer == "llamafactory":
            value = as_bool(plan.args["do_train"].value) if "do_train" in plan.args else None
            return value is not False and ("stage" in plan.args or "do_train" in plan.args)
        if plan.consumer == "swift":
            return any(k in plan.args for k in ("dataset", "rlhf_type", "train_type", "tuner_type", "num_train_epochs"))
        return True
    if plan.entry and plan.entry.startswith(("swift ", "megatron ", "llamafactory ")):
        return plan.entry in TRAINING_ENTRIES
    return True


def model_name(plan) -> Value:
    """The model being trained: --model (ms-swift), --model_name_or_path (HF, LLaMA-Factory)."""
    for name in ("model", "model_name_or_path", "model_id_or_path", "model_path", "pretrained_model_name_or_path"):
        arg = plan.arg(name)
        if arg is not None and isinstance(arg.value, str) and arg.value.strip():
            return Value(arg.value.strip(), arg)
    return Value(None, None)


def option_extent(arg: Arg) -> tuple[int, int] | None:
    """[start, end) of the whole argument as written: flag name through its last value."""
    spans = [s for s in (arg.name_span, arg.span) if s is not None]
    if not spans or any(s.source is not spans[0].source for s in spans):
        return None
    return min(s.start for s in spans), max(s.end for s in spans)


def _flag_key(text: str) -> str:
    return text.replace("_", "-").lstrip("-").lower()


def remove_arg(arg: Arg):
    """An Edit that deletes the argument: its whole line when it stands alone on it (shell
    continuation lines, YAML keys), else the text and the blanks after it. None when unsure."""
    from dslint.diagnostics import Edit

    extent = option_extent(arg)
    if extent is None:
        return None
    start, end = extent
    source = (arg.name_span or arg.span).source
    text = source.text
    written = text[start:end]
    if "$" in written or "`" in written or _flag_key(arg.name) not in _flag_key(written):
        return None  # it comes from an expansion ($GPT_ARGS): deleting the word would delete every argument in it
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end == -1 else line_end
    before = text[line_start:start]
    after = text[end:line_end].strip()
    if not before.strip() and after in ("", "\\"):
        return _remove_line(arg, source, line_start, line_end, after)
    stop = end
    while stop < len(text) and text[stop] in " \t":
        stop += 1
    if stop < len(text) and text[stop] == "\\" and not before.strip():
        return None
    return Edit(source, start, stop, "")


def _remove_line(arg: Arg, source, line_start: int, line_end: int, after: str):
    """The Edit that deletes a line the argument stands alone on (``after``: what follows it on the line)."""
    from dslint.diagnostics import Edit

    text = source.text
    if after == "" and not arg.origin.startswith("-"):
        return Edit(source, line_start, min(line_end + 1, len(text)), "")  # a YAML key line
    if after == "\\":
        return Edit(source, line_start, min(line_end + 1, len(text)), "")
    # The last line of a command: remove it with the `\` that continues the line above.
    cut = line_start - 1
    if cut > 0 and text[cut] == "\n" and text[cut - 1] == "\\":
        cut -= 1
        while cut > 0 and text[cut - 1] in " \t":
            cut -= 1
        return Edit(source, cut, line_end, "")
    return None


def complete(plan) -> bool:
    """False when an unknown unquoted expansion (``$EXTRA_ARGS``) may hide arguments of the launch,
    so that a flag's absence (and the default a rule would assume) is not known."""
    command = getattr(plan, "command", None)
    return command is None or getattr(command, "complete", True)
