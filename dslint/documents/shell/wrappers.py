"""Commands that run another command: ``nohup``, ``env``, ``srun``, ``mpirun``, ``uv run`` ...

Each wrapper is one small function, keyed by the wrapper's basename in ``WRAPPERS``: given the
words of a command and the index just after the wrapper's name, it returns where the wrapped
command starts (``Peeled``) and what the wrapper adds to or removes from its environment, or
None when this use of the wrapper does not run a command (``command -v``, ``taskset -p``).
The option tables say which options take a value, so that the wrapped command is found.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from .containers import CONTAINER_WRAPPERS
from .model import Word
from .peel import EnvWord, Peel, Peeled
from .variables import ASSIGN_WORD_RE, NAME_RE

__all__ = ["EnvWord", "Peel", "Peeled", "Unwrapped", "WRAPPERS", "unwrap"]


def _options(words: list[Word], j: int) -> int:
    """Skip the words that start with `-` (None-valued words end the options)."""
    while j < len(words) and words[j].value is not None and words[j].value.startswith("-"):
        j += 1
    return j


def _peel_env(words: list[Word], j: int) -> Peeled:
    n = len(words)
    out = Peeled(j)
    while j < n:
        v = words[j].value
        if v is None:
            break
        if v in ("-i", "-", "--ignore-environment"):
            out.clears = True
        elif v in ("-u", "--unset") and j + 1 < n:
            j += 1
            if words[j].value:
                out.unset.append(words[j].value)
        elif v.startswith("--unset="):
            out.unset.append(v.split("=", 1)[1])
        elif v.startswith("-u") and len(v) > 2:
            out.unset.append(v[2:])
        elif v in ("-C", "--chdir") and j + 1 < n:
            j += 1
        elif v.startswith("--chdir=") or v in ("-0", "--null", "-v", "--debug"):
            pass
        elif v == "--":
            j += 1
            break
        elif v.startswith("-"):
            break
        else:
            m = ASSIGN_WORD_RE.match(v)
            if not m or m.group(2) != "=":
                break
            out.env.append(EnvWord(words[j], m.group(1)))
        j += 1
    out.end = j
    return out


def _peel_exec(words: list[Word], j: int) -> Peeled:
    out = Peeled(j)
    while j < len(words) and words[j].value is not None and words[j].value.startswith("-"):
        v = words[j].value
        if v == "--":
            j += 1
            break
        if "c" in v:
            out.clears = True
        if "a" in v:
            j += 1
        j += 1
    out.end = j
    return out


def _peel_plain(words: list[Word], j: int) -> Peeled:
    """``nohup``, ``builtin``: an optional ``--``."""
    return Peeled(j + 1 if j < len(words) and words[j].value == "--" else j)


def _peel_time(words: list[Word], j: int) -> Peeled:
    while j < len(words) and words[j].value in ("-p", "--"):
        j += 1
    return Peeled(j)


def _peel_command(words: list[Word], j: int) -> Peeled | None:
    if j < len(words) and words[j].value in ("-v", "-V"):
        return None  # `command -v prog` looks the program up, it does not run it
    return _peel_time(words, j)


def _value_options(*takes_value: str) -> Peel:
    """A wrapper whose options are flags except ``takes_value``, which take the next word."""

    def peel(words: list[Word], j: int) -> Peeled:
        while j < len(words) and words[j].value is not None and words[j].value.startswith("-"):
            v = words[j].value
            j += 1
            if v in takes_value:
                j += 1
        return Peeled(j)

    return peel


def _peel_timeout(words: list[Word], j: int) -> Peeled:
    return Peeled(_value_options("-s", "-k", "--signal", "--kill-after")(words, j).end + 1)  # + the duration


def _peel_taskset(words: list[Word], j: int) -> Peeled | None:
    start = j
    j = _options(words, j)
    if any("p" in (w.value or "") for w in words[start:j]):
        return None  # `taskset -p` changes a running process
    return Peeled(j + 1)  # + the mask or cpu list


def _opaque_options(words: list[Word], j: int) -> bool:
    """``srun ${SRUN_ARGS} python ...``: an unquoted expansion only known at run time, in the
    options, with a launcher after it (which is what shows that the options go on)."""
    from .launchers import is_launcher_name

    word = words[j]
    return (word.value is None and word.may_split and not word.prefix
            and any(w.value is not None and is_launcher_name(os.path.basename(w.value)) for w in words[j + 1 :]))


def _peel_srun(words: list[Word], j: int) -> Peeled:
    # an option's known start is enough: `--nodelist=$NODES`, `--nodes=$SLURM_NNODES`
    while j < len(words) and (
        words[j].prefix.startswith("-") and (words[j].value is not None or "=" in words[j].prefix) or _opaque_options(words, j)
    ):
        if not words[j].prefix:
            j += 1
            continue
        v = words[j].prefix
        j += 1
        if v == "--":
            break
        if v.startswith("--"):
            if "=" not in v and v[2:] not in SRUN_LONG_FLAGS:
                j += 1
        elif len(v) == 2 and v[1] not in SRUN_SHORT_FLAGS:
            j += 1
    return Peeled(j)


def _peel_mpirun(words: list[Word], j: int) -> Peeled:
    n = len(words)
    out = Peeled(j)
    while j < n and words[j].value is not None and words[j].value.startswith("-"):
        v = words[j].value
        opt = v.lstrip("-")
        j += 1
        if v == "--":
            break
        if "=" in opt:
            continue
        if opt in MPI_TWO_VALUES:
            if opt in ("genv", "env") and j + 1 < n and words[j].value and NAME_RE.match(words[j].value):
                out.env.append(EnvWord(words[j], words[j].value, words[j + 1]))
            j += 2
        elif opt == "x" and j < n:
            m = ASSIGN_WORD_RE.match(words[j].value or "")
            if m and m.group(2) == "=":
                out.env.append(EnvWord(words[j], m.group(1)))
            j += 1
        elif opt not in MPI_FLAGS:
            j += 1
    out.end = j
    return out


def _skip(words: list[Word], j: int, takes_value: frozenset[str]) -> int | None:
    """Past the option at ``j`` (and its value when it takes one); None when ``j`` is no option."""
    v = words[j].value if j < len(words) else None
    if v is None or not v.startswith("-") or v == "--":
        return None
    return j + 2 if v in takes_value else j + 1


def _tool_run(takes_value: frozenset[str], runs_python: bool = False) -> Peel:
    """``TOOL [global options] run [options] COMMAND ...`` (uv, poetry, pdm, pixi, conda): the
    command runs in the tool's environment. ``runs_python``: a ``.py`` file or ``-m module``
    after ``run`` is run with the environment's Python (uv's documented behaviour)."""

    def peel(words: list[Word], j: int) -> Peeled | None:
        while (nxt := _skip(words, j, takes_value)) is not None:
            j = nxt
        if j >= len(words) or words[j].value != "run":
            return None  # `uv pip install`, `conda activate`: runs no command of ours
        j += 1
        while (nxt := _skip(words, j, takes_value)) is not None:
            if runs_python and words[j].value in ("-m", "--module"):
                return Peeled(j, python=True)
            j = nxt
        if j < len(words) and words[j].value == "--":
            j += 1
        python = runs_python and j < len(words) and (words[j].value or "").endswith(".py")
        return Peeled(j, python=python)

    return peel


# `uv run` (uv 0.5-0.9 `uv run --help`): options that take a value; every other option is a flag.
_UV_VALUES = frozenset(
    {
        "--extra", "--group", "--no-group", "--only-group", "--with", "--with-editable", "--with-requirements",
        "--env-file", "--package", "--python", "-p", "--index", "--default-index", "--index-url", "-i",
        "--extra-index-url", "--find-links", "-f", "--index-strategy", "--keyring-provider", "--resolution",
        "--prerelease", "--fork-strategy", "--exclude-newer", "--exclude-newer-package", "--config-setting", "-C",
        "--no-build-isolation-package", "--link-mode", "--refresh-package", "--reinstall-package",
        "--upgrade-package", "-P", "--no-binary-package", "--no-build-package", "--directory", "--project",
        "--config-file", "--cache-dir", "--color", "--allow-insecure-host", "--python-platform", "--torch-backend",
    }
)
# poetry's global options (`poetry run` has none of its own); pdm run; pixi run; conda/mamba run.
_POETRY_VALUES = frozenset({"-P", "--project", "-C", "--directory"})
_PDM_VALUES = frozenset({"-p", "--project", "--venv", "--skip", "-c", "--config"})
_PIXI_VALUES = frozenset(
    {"--manifest-path", "-e", "--environment", "--color", "--concurrent-solves", "--concurrent-downloads",
     "--pypi-keyring-provider", "--auth-file", "--tls-root-certs"}
)
_CONDA_VALUES = frozenset({"-n", "--name", "-p", "--prefix", "--cwd", "-r", "--root-prefix", "-a", "--attach", "--label", "-e", "--env"})


WRAPPERS: dict[str, Peel] = {
    "uv": _tool_run(_UV_VALUES, runs_python=True),
    "poetry": _tool_run(_POETRY_VALUES),
    "pdm": _tool_run(_PDM_VALUES),
    "pixi": _tool_run(_PIXI_VALUES),
    "conda": _tool_run(_CONDA_VALUES),
    "mamba": _tool_run(_CONDA_VALUES),
    "micromamba": _tool_run(_CONDA_VALUES),
    "env": _peel_env,
    "exec": _peel_exec,
    "nohup": _peel_plain,
    "builtin": _peel_plain,
    "time": _peel_time,
    "command": _peel_command,
    "timeout": _peel_timeout,
    "stdbuf": _value_options("-i", "-o", "-e"),
    "nice": _value_options("-n", "--adjustment"),
    "setsid": _value_options(),
    "taskset": _peel_taskset,
    "srun": _peel_srun,
    "mpirun": _peel_mpirun,
    "mpiexec": _peel_mpirun,
    "mpiexec.hydra": _peel_mpirun,
    "orterun": _peel_mpirun,
    **CONTAINER_WRAPPERS,
    "numactl": _value_options(
        "-C", "-N", "-m", "-p", "-i", "-P", "--physcpubind", "--cpunodebind", "--membind", "--preferred", "--interleave"
    ),
}


@dataclass
class Unwrapped:
    """A command with its wrappers taken off."""

    index: int  # where the wrapped program's name is
    wrappers: list[Word] = field(default_factory=list)
    env: list[EnvWord] = field(default_factory=list)
    clears: bool = False
    unset: list[str] = field(default_factory=list)
    written: list[EnvWord] = field(default_factory=list)  # every NAME=value written, in order, used or not
    python: Word | None = None  # the wrapper word that runs the program with Python (`uv run train.py`)
    kept: list[str] = field(default_factory=list)  # the calling shell's variables a clearing wrapper passes on
    renamed: tuple[str, ...] = ()  # prefixes of the calling shell's variables the program gets without them


def _after_double_dash(words: list[Word], j: int) -> Peeled | None:
    """A job submitter that takes the command to run after ``--`` (``ray job submit ... --
    python train.py``, a cluster's ``submit --gpus 8 -- torchrun ...``): peeled only when a
    launcher follows the ``--``, which is what shows that the words after it are a command."""
    from .launchers import is_launcher_name

    for k in range(j, len(words) - 1):
        if words[k].value == "--":
            nxt = words[k + 1].value
            return Peeled(k + 1) if nxt is not None and is_launcher_name(os.path.basename(nxt)) else None
    return None


def unwrap(words: list[Word]) -> Unwrapped:
    """Peel ``nohup``/``env``/``exec``/``time``/``uv run``/... off the front of a command."""
    from .launchers import is_launcher_name

    out = Unwrapped(0)
    i, n = 0, len(words)
    while i < n - 1:
        if words[i].value is None:
            break
        base = os.path.basename(words[i].value)
        peel = WRAPPERS.get(base)
        if peel is not None:
            peeled = peel(words, i + 1)
        elif not is_launcher_name(base) and base not in _NOT_SUBMITTERS:
            peeled = _after_double_dash(words, i + 1)
        else:
            peeled = None
        if peeled is None:
            break
        out.written.extend(peeled.env)
        if peeled.end >= n:
            break
        out.wrappers.extend(words[i : peeled.end])
        out.env.extend(peeled.env)
        out.unset.extend(peeled.unset)
        if peeled.clears:
            out.clears = True
            out.env = list(peeled.env)
            out.kept = list(peeled.kept)
        out.renamed += peeled.renamed
        i = peeled.end
        if peeled.python:
            out.python = out.wrappers[-1]
            break
    out.index = i
    return out


# Commands whose `--` ends their own options and never starts a command of ours.
_NOT_SUBMITTERS = frozenset({"echo", "printf", "set"})


# srun options that take no value (everything else takes one, unless written --opt=value)
SRUN_SHORT_FLAGS = frozenset("EhHklOQsuvXZI")
SRUN_LONG_FLAGS = frozenset(
    {
        "exclusive",
        "label",
        "unbuffered",
        "overlap",
        "pty",
        "quiet",
        "verbose",
        "kill-on-bad-exit",
        "no-kill",
        "help",
        "usage",
        "test-only",
        "disable-status",
        "multi-prog",
        "no-allocate",
        "exact",
        "spread-job",
        "whole",
        "oversubscribe",
        "contiguous",
        "reboot",
        "overcommit",
        "preserve-env",
        "x11",
        "hold",
        "immediate",
        "nice",
        "external-launcher",
        "send-libs",
        "version",
    }
)
# mpirun/mpiexec (Open MPI, MPICH, Intel MPI)
MPI_TWO_VALUES = frozenset({"mca", "gmca", "genv", "env"})
MPI_FLAGS = frozenset(
    {
        "allow-run-as-root",
        "oversubscribe",
        "v",
        "verbose",
        "report-bindings",
        "tag-output",
        "display-map",
        "display-allocation",
        "q",
        "quiet",
        "timestamp-output",
        "genvall",
        "genvnone",
        "noprefix",
        "enable-recovery",
        "use-hwthread-cpus",
        "bind-to-core",
        "bind-to-socket",
        "nolocal",
        "no-prefix",
        "l",
        "prepend-rank",
        "hostlist",
    }
)
