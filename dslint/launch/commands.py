"""Recognise training launches among the commands of a ``Script``.

``find_launches(script)`` returns one ``LaunchCommand`` per command that starts training (or
another ms-swift/LLaMA-Factory job): ``deepspeed``, ``torchrun`` / ``python -m
torch.distributed.run|launch``, ``accelerate launch``, ``swift <sub>``, ``megatron <sub>``,
``llamafactory-cli``/``lmf`` and plain ``python script.py``.

Each launch is split the way the launcher's own argument parser splits it: the launcher's
options (which take a value and which do not comes from dslint.launch.launcher_options, read
from the launchers' argparse definitions), the program, and the program's arguments (HF
``TrainingArguments`` style: ``--flag value``, ``--flag=value``, bare ``--flag``, list flags
taking several values, positional arguments).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dslint.documents.shell import Command, Script, Word, split_word
from dslint.documents.shell.derived import built_from
from dslint.launch.launcher_options import ACCELERATE, DEEPSPEED, TORCHRUN, Spec
from dslint.source import Span

__all__ = ["Option", "LaunchCommand", "find_launches", "launch_of", "option_built_from", "LAUNCHERS"]

LAUNCHERS = ("deepspeed", "torchrun", "accelerate", "swift", "megatron", "llamafactory", "python")


@dataclass(eq=False, repr=False)
class Option:
    """One flag (or positional argument) on a launch command line.

    ``name`` is the flag as written (``--nproc-per-node``, ``-H``) or None for a positional
    argument; ``key`` is its canonical name (``nproc_per_node``; for launcher options the
    parser's destination, e.g. ``-H`` -> ``hostfile``). ``value`` is the first value word, or
    None for a bare flag; ``values`` holds every value word (``--dataset a b c``).
    """

    name: str | None
    name_span: Span | None
    value: Word | None
    span: Span
    key: str | None = None
    values: list[Word] = field(default_factory=list)
    inline: bool = False  # written as --flag=value
    known: bool = True  # the launcher's parser accepts this spelling

    @property
    def positional(self) -> bool:
        return self.name is None

    @property
    def text(self) -> str | None:
        """The value as a string: None when unknown or when the flag has no value."""
        return None if self.value is None else self.value.value

    def __repr__(self) -> str:
        if self.name is None:
            return f"Option(<positional> {self.value!r})"
        vals = [w.value if w.value is not None else w.raw for w in self.values]
        return f"Option({self.name} {vals} @{self.span.where()})"


@dataclass(eq=False, repr=False)
class LaunchCommand:
    """A launcher command of a script, with its options and program."""

    command: Command
    launcher: str  # one of LAUNCHERS
    subcommand: str | None = None  # "sft", "train", "launch" ...
    launcher_options: dict[str, Option] = field(default_factory=dict)  # canonical key -> last occurrence
    launcher_option_list: list[Option] = field(default_factory=list)  # in order, duplicates kept
    program: Word | None = None  # train.py, or the module name when ``module`` is True
    module: bool = False
    program_args: list[Option] = field(default_factory=list)
    config_file: Word | None = None  # swift/megatron/llamafactory positional YAML/JSON
    overrides: list[Option] = field(default_factory=list)  # llamafactory-cli key=value
    entry: str | None = None  # what runs in the end: "swift sft", "megatron sft", "llamafactory train"
    via: str | None = None  # e.g. "python -m torch.distributed.run"
    opaque: list[Word] = field(default_factory=list)  # words whose role cannot be decided
    complete: bool = True  # False when an unknown unquoted expansion may add or remove arguments
    # False when such an expansion stands among the program's own arguments (after the program), where
    # it may give any of its flags; one among the launcher's options (`torchrun $DISTRIBUTED_ARGS
    # train.py`) is the launcher's to parse and gives the program none.
    program_complete: bool = True

    @property
    def span(self) -> Span:
        return self.command.span

    @property
    def environment(self):
        return self.command.environment

    def option(self, key: str) -> Option | None:
        """A launcher option by canonical key (``nproc_per_node``, ``num_gpus``, ``config_file`` ...)."""
        return self.launcher_options.get(key)

    def arg(self, key: str) -> Option | None:
        """The last program argument with this canonical key (argparse: the last one wins)."""
        key = _canon(key)
        for opt in reversed(self.program_args):
            if opt.key == key:
                return opt
        return None


    @property
    def positionals(self) -> list[Word]:
        return [opt.value for opt in self.program_args if opt.name is None and opt.value is not None]

    def __repr__(self) -> str:
        sub = f" {self.subcommand}" if self.subcommand else ""
        prog = f" {self.program.raw}" if self.program is not None else ""
        return f"LaunchCommand({self.launcher}{sub}{prog} @{self.span.where()})"


# CPython's own options: which take an argument.
_PY_ARG_OPTS = frozenset("WX")
_PY_LONG_ARG_OPTS = frozenset({"--check-hash-based-pycs"})

_CONFIG_SUFFIXES = (".yaml", ".yml", ".json")
_NEGATIVE_NUMBER = re.compile(r"-(\d|\.\d)")
_SWIFT_ENTRY = re.compile(r"(?:^|/)swift/cli/(?:(_megatron)/)?([a-z_]+)\.py\Z")
# ms-swift 1.x-2.x's example entries, the same mains as `swift <sub>` (examples/pytorch/llm/llm_sft.py 1.3.0-2.6.1)
_SWIFT_EXAMPLE = re.compile(r"(?:^|/)examples/pytorch/llm/llm_(sft|infer|rlhf|dpo|orpo|simpo)\.py\Z")
# ms-swift's entry modules parse their arguments with swift.utils.parse_args, which reads a first
# positional argument ending in .json only (swift/utils/utils.py:126 in 2.6.1, :141 in 3.0.0); the
# YAML form is the `swift` command's own (swift/cli/main.py), which these bypass.
_SWIFT_MODULE_CONFIG = (".json",)


def _canon(name: str) -> str:
    return name.lstrip("-").replace("-", "_")


def _is_flag(text: str) -> bool:
    return len(text) >= 2 and text[0] == "-" and not _NEGATIVE_NUMBER.match(text) and text != "--"


def _span_of(words: list[Word]) -> Span:
    first, last = words[0].span, words[-1].span
    if last.start >= first.start and last.source is first.source:
        return Span(first.source, first.start, max(first.end, last.end))
    return first


def _name_span(word: Word, name: str) -> Span:
    span = word.span
    if word.raw.startswith(name) and span.end - span.start == len(word.raw):
        return Span(span.source, span.start, span.start + len(name))
    return span


# ---------------------------------------------------------------------------------------
# argument parsing
# ---------------------------------------------------------------------------------------


def _looks_like_program(word: Word) -> bool:
    v = word.value
    return v is not None and (v.endswith(".py") or v.endswith(".sh"))


def _parse_launcher_options(words: list[Word], start: int, spec: Spec, launch: LaunchCommand) -> int:
    """Fill launcher options; return the index of the program word (len(words) when none)."""
    i = start
    n = len(words)
    while i < n:
        w = words[i]
        pre = w.prefix
        if w.value == "--":
            return i + 1
        if pre.startswith("--") and len(pre) > 2:
            i = _long_option(words, i, spec, launch)
            continue
        if _is_flag(pre) and not pre.startswith("--"):
            i = _short_option(words, i, spec, launch)
            continue
        # `torchrun $DISTRIBUTED_ARGS train.py`: an unknown run of words, not the program,
        # when a script name follows.
        if w.value is None and w.may_split and not pre and any(_looks_like_program(x) for x in words[i + 1 :]):
            launch.opaque.append(w)
            launch.complete = False
            i += 1
            continue
        return i
    return n


def _add_option(launch: LaunchCommand, opt: Option, module: bool) -> None:
    launch.launcher_option_list.append(opt)
    launch.launcher_options[opt.key] = opt
    if module:
        launch.module = True


def _long_option(words: list[Word], i: int, spec: Spec, launch: LaunchCommand) -> int:
    """``--name value`` or ``--name=value`` at ``words[i]``; the index after it."""
    n = len(words)
    w = words[i]
    pre = w.prefix
    parts = split_word(w) if "=" in pre else None
    if parts is not None:
        name, value_word = parts
    else:
        name, value_word = pre, None
    key, takes, ok = spec.resolve(name)
    inline = value_word is not None
    if takes is None:  # an option this table does not know: guess from what follows
        takes = inline or (
            i + 1 < n and not _is_flag(words[i + 1].prefix) and not _looks_like_program(words[i + 1])
        )
    values: list[Word] = []
    if inline:
        values = [value_word]
        end = i + 1
    elif takes and i + 1 < n:
        values = [words[i + 1]]
        end = i + 2
    else:
        end = i + 1
    opt = Option(name, _name_span(w, name), values[0] if values else None, _span_of(words[i:end]), key, values, inline, ok)
    _add_option(launch, opt, key == "module" and not values)
    return end


def _short_option(words: list[Word], i: int, spec: Spec, launch: LaunchCommand) -> int:
    """``-m``, ``-n 4`` or ``-n4`` at ``words[i]``; the index after it."""
    w = words[i]
    pre = w.prefix
    short = pre[:2]
    key = spec.short.get(short)
    takes = key in spec.values if key else False
    attached = w.value is not None and len(w.value) > 2
    values = []
    end = i + 1
    if takes and attached:
        rest = split_word(w, short)
        if rest is not None:
            values = [rest[1]]
    elif takes and i + 1 < len(words):
        values = [words[i + 1]]
        end = i + 2
    opt = Option(short if key else pre, _name_span(w, short if key else pre), values[0] if values else None,
                 _span_of(words[i:end]), key or _canon(pre), values, False, key is not None)
    _add_option(launch, opt, key == "module")
    return end


def _parse_program_args(words: list[Word], launch: LaunchCommand) -> list[Option]:
    """HF TrainingArguments style: --flag value / --flag=value / bare --flag / list flags / positionals."""
    out: list[Option] = []
    i = 0
    n = len(words)
    while i < n:
        w = words[i]
        pre = w.prefix
        if w.may_split and w.value is None:
            launch.complete = launch.program_complete = False
        if _is_flag(pre):
            parts = split_word(w) if "=" in pre else None
            if parts is not None:
                name, value_word = parts
                out.append(Option(name, _name_span(w, name), value_word, w.span, _canon(name), [value_word], True))
                i += 1
                continue
            name = pre if w.value is not None else pre.split("$")[0]
            j = i + 1
            values: list[Word] = []
            while j < n and not _is_flag(words[j].prefix):
                if words[j].may_split and words[j].value is None:
                    launch.complete = launch.program_complete = False
                values.append(words[j])
                j += 1
            out.append(
                Option(
                    name, _name_span(w, name), values[0] if values else None, _span_of(words[i:j]), _canon(name), values
                )
            )
            i = j
            continue
        out.append(Option(None, None, w, w.span, None, [w]))
        i += 1
    return out


def _strip_config(launch: LaunchCommand, words: list[Word], suffixes: tuple[str, ...] = _CONFIG_SUFFIXES) -> list[Word]:
    """ms-swift / LLaMA-Factory: a first positional argument ending in .yaml/.yml/.json is the config."""
    if words and words[0].value is not None and words[0].value.lower().endswith(suffixes):
        launch.config_file = words[0]
        return words[1:]
    return words


def _entry_for_program(launch: LaunchCommand) -> None:
    prog = launch.program
    if prog is None or prog.value is None:
        return
    value = prog.value
    if launch.module:
        m = re.fullmatch(r"swift\.cli\.(?:(_megatron)\.)?([a-z_]+)", value)
        if m and m.group(2) != "main":
            launch.entry = f"{'megatron' if m.group(1) else 'swift'} {m.group(2).replace('_', '-')}"
        elif value in ("llamafactory.launcher", "llamafactory.train.tuner"):
            launch.entry = "llamafactory train"
        return
    m = _SWIFT_ENTRY.search(value)
    example = _SWIFT_EXAMPLE.search(value)
    if m and m.group(2) != "main":
        launch.entry = f"{'megatron' if m.group(1) else 'swift'} {m.group(2).replace('_', '-')}"
    elif example:
        launch.entry = f"swift {example.group(1)}"
    elif value.endswith("llamafactory/launcher.py"):
        launch.entry = "llamafactory train"


def _config_suffixes(launch: LaunchCommand) -> tuple[str, ...]:
    """The config files the entry a program names reads as its first argument."""
    if launch.entry is not None and launch.entry.startswith(("swift ", "megatron ")):
        return _SWIFT_MODULE_CONFIG
    return _CONFIG_SUFFIXES


def _finish_program(launch: LaunchCommand, words: list[Word], index: int) -> LaunchCommand:
    if index < len(words):
        launch.program = words[index]
        rest = words[index + 1 :]
    else:
        rest = []
    _entry_for_program(launch)
    if launch.entry is not None:
        rest = _strip_config(launch, rest, _config_suffixes(launch))
    launch.program_args = _parse_program_args(rest, launch)
    return launch


def _python_letters(words: list[Word], i: int) -> tuple[int, Word | None] | None:
    """A cluster of short interpreter options (``-u``, ``-Wignore``, ``-um pkg``) at ``words[i]``:
    (the index after it, the module ``-m`` names); None for ``-c`` or a ``-m`` without a module."""
    letters = words[i].value[1:]
    for k, ch in enumerate(letters):
        if ch == "c":
            return None  # python -c "...": not a script launch
        if ch == "m":
            if letters[k + 1 :]:
                split = split_word(words[i], "m")
                return i + 1, split[1] if split is not None else words[i]
            if i + 1 < len(words):
                return i + 2, words[i + 1]
            return None
        if ch in _PY_ARG_OPTS:
            return (i + 1 if letters[k + 1 :] else i + 2), None
    return i + 1, None


def _python_options(words: list[Word], start: int) -> tuple[int, Word | None] | None:
    """The interpreter's options skipped: (the index of the script or of the module's first
    argument, the module ``-m`` names); None when the command runs no script."""
    i = start
    n = len(words)
    while i < n:
        v = words[i].value
        if v is None:
            break
        if v == "-" or not v.startswith("-"):
            break
        if v == "--":
            i += 1
            break
        if v.startswith("--"):
            i += 2 if v in _PY_LONG_ARG_OPTS else 1
            continue
        step = _python_letters(words, i)
        if step is None:
            return None
        i, module = step
        if module is not None:
            return i, module
    return i, None


#: ``python -m`` of a launcher's own module: (launcher, subcommand, its option table).
_RUNNER_MODULES = {
    "torch.distributed.run": ("torchrun", None, TORCHRUN),
    "torch.distributed.launch": ("torchrun", None, TORCHRUN),
    "deepspeed.launcher.runner": ("deepspeed", None, DEEPSPEED),
    "accelerate.commands.launch": ("accelerate", "launch", ACCELERATE),
}


def _python_module(cmd: Command, words: list[Word], i: int, module: Word) -> LaunchCommand:
    """``python -m module args``: a launcher's own module, or the program."""
    name = module.value
    if name in _RUNNER_MODULES:
        launcher, subcommand, table = _RUNNER_MODULES[name]
        launch = LaunchCommand(cmd, launcher, subcommand, via=f"python -m {name}")
        return _finish_program(launch, words, _parse_launcher_options(words, i, table, launch))
    launch = LaunchCommand(cmd, "python", module=True)
    launch.program = module
    _entry_for_program(launch)
    rest = words[i:]
    if launch.entry is not None:
        rest = _strip_config(launch, rest, _config_suffixes(launch))
    launch.program_args = _parse_program_args(rest, launch)
    return launch


def _python(cmd: Command, words: list[Word], start: int) -> LaunchCommand | None:
    """``python [interpreter options] script.py args`` or ``python -m module args``."""
    options = _python_options(words, start)
    if options is None:
        return None
    i, module = options
    if module is not None:
        return _python_module(cmd, words, i, module)
    if i >= len(words):
        return None  # the interactive interpreter or a here-document on stdin
    launch = LaunchCommand(cmd, "python")
    return _finish_program(launch, words, i)


def _deepspeed(cmd: Command, words: list[Word]) -> LaunchCommand:
    launch = LaunchCommand(cmd, "deepspeed")
    return _finish_program(launch, words, _parse_launcher_options(words, 1, DEEPSPEED, launch))


def _torchrun(cmd: Command, words: list[Word]) -> LaunchCommand:
    launch = LaunchCommand(cmd, "torchrun")
    return _finish_program(launch, words, _parse_launcher_options(words, 1, TORCHRUN, launch))


def _accelerate(cmd: Command, words: list[Word]) -> LaunchCommand | None:
    """``accelerate launch ...`` or ``accelerate-launch ...``."""
    start = 1
    if cmd.basename == "accelerate":
        if len(words) < 2 or words[1].value != "launch":
            return None
        start = 2
    launch = LaunchCommand(cmd, "accelerate", "launch")
    return _finish_program(launch, words, _parse_launcher_options(words, start, ACCELERATE, launch))


def _swift(cmd: Command, words: list[Word]) -> LaunchCommand:
    """``swift sft ...`` / ``megatron sft ...``: a subcommand, a positional config, flags."""
    base = cmd.basename
    launch = LaunchCommand(cmd, base)
    rest = words[1:]
    if rest and rest[0].value is not None and not rest[0].value.startswith("-"):
        launch.subcommand = rest[0].value.replace("_", "-")
        rest = rest[1:]
        launch.entry = f"{base} {launch.subcommand}"
    elif rest and rest[0].value is None:
        launch.complete = launch.program_complete = False
    rest = _strip_config(launch, rest)
    launch.program_args = _parse_program_args(rest, launch)
    return launch


def _llamafactory(cmd: Command, words: list[Word]) -> LaunchCommand:
    """``llamafactory-cli train config.yaml key=value ...``."""
    launch = LaunchCommand(cmd, "llamafactory")
    rest = words[1:]
    if rest and rest[0].value is not None and not rest[0].value.startswith("-"):
        launch.subcommand = rest[0].value
        rest = rest[1:]
        launch.entry = f"llamafactory {launch.subcommand}"
    rest = _strip_config(launch, rest)
    if launch.config_file is not None:
        rest = _overrides(launch, rest)
    launch.program_args = _parse_program_args(rest, launch)
    return launch


def _overrides(launch: LaunchCommand, rest: list[Word]) -> list[Word]:
    """The ``key=value`` words after llamafactory-cli's config, as overrides; the other words."""
    plain: list[Word] = []
    for w in rest:
        pre = w.prefix
        m = re.match(r"[A-Za-z_][\w.\-\[\]]*=", pre)
        parts = split_word(w) if m else None
        if parts is not None:
            key, value_word = parts
            launch.overrides.append(
                Option(key, _name_span(w, key), value_word, w.span, key, [value_word], True)
            )
        else:
            plain.append(w)
    return plain


#: a command's basename -> the launch it starts (None when this use of it starts none).
_LAUNCHES = {
    "deepspeed": _deepspeed,
    "torchrun": _torchrun,
    "accelerate": _accelerate,
    "accelerate-launch": _accelerate,
    "swift": _swift,
    "megatron": _swift,
    "llamafactory-cli": _llamafactory,
    "lmf": _llamafactory,
}


def launch_of(cmd: Command) -> LaunchCommand | None:
    """The launch a command starts, or None when it is not one."""
    base = cmd.basename
    if base is None:
        return None
    launch = _LAUNCHES.get(base)
    if launch is not None:
        return launch(cmd, cmd.argv)
    if re.fullmatch(r"python(\d+(\.\d+)*)?", base):
        return _python(cmd, cmd.argv, 1)
    return None


def find_launches(script: Script) -> list[LaunchCommand]:
    """Every launch in the script, in source order."""
    out = []
    for cmd in script.commands:
        launch = launch_of(cmd)
        if launch is not None:
            out.append(launch)
    return out


def option_built_from(plan, key: str, variable: str) -> bool:
    """Whether the launcher option ``key`` of a launch plan has a value built from ``$variable``
    (``--include localhost:$CUDA_VISIBLE_DEVICES``, or through a variable set from it)."""
    launch = getattr(plan, "command", None)
    script = getattr(getattr(plan, "origin", None), "script", None)
    option = launch.option(key) if isinstance(launch, LaunchCommand) else None
    if option is None or script is None:
        return False
    return any(built_from(script, launch.command, word, variable) for word in option.values or [option.value] if word is not None)
