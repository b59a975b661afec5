"""Commands that run a command inside a container: ``docker run|exec``, ``singularity|apptainer exec|run``.

What each does to the command it runs, from the tools' own definitions:

- ``docker [global options] [container] run [OPTIONS] IMAGE [COMMAND] [ARG...]`` and ``docker exec
  [OPTIONS] CONTAINER COMMAND [ARG...]`` (docker/cli cli/command/container/opts.go, run.go, exec.go;
  pflag without interspersed arguments: the options end at IMAGE). The program's environment is the
  image's (or the running container's) with ``-e NAME=VALUE`` on top; ``-e NAME`` passes the
  client's NAME when it has one (opts.ReadKVEnvStrings); nothing else of the calling shell reaches
  it. ``run``'s COMMAND replaces the image's CMD and is handed to its ENTRYPOINT when it has one
  (Dockerfile reference, "Understand how CMD and ENTRYPOINT interact"): the words after IMAGE are
  read as a command only when they start with a launcher or a shell (an entrypoint that runs its
  arguments, as the CUDA/PyTorch images' do, or none), or after ``--entrypoint ''``. ``exec`` runs
  its COMMAND as it is.
- ``singularity|apptainer [global options] exec [options] IMAGE COMMAND...`` runs COMMAND;
  ``run [options] IMAGE ARGS...`` hands ARGS to the image's runscript (apptainer-run(1): "All
  arguments following the container name will be passed directly to the runscript"), which for an
  image built from a Docker image runs them in place of its CMD: read as a command on the same
  terms as ``docker run``. The host's environment passes into the container, unless
  ``-e/--cleanenv``, ``-C/--containall`` or ``--compat``; ``--env NAME=VALUE`` and the host's
  ``APPTAINERENV_NAME``/``SINGULARITYENV_NAME`` set NAME inside it (apptainer action_flags.go; the
  Apptainer user guide, "Environment and Metadata").

An environment option whose names dslint cannot read (``--env-file``, ``-e "$VARS"``) leaves the
program's environment unknown: the wrapper is not taken off, and the command in it is not read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from .model import Word, split_word
from .peel import EnvWord, Peel, Peeled
from .variables import ASSIGN_WORD_RE, NAME_RE

_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})

# docker's global options that take a value (docker/cli cli/flags/options.go)
_DOCKER_GLOBAL = frozenset({"--config", "-c", "--context", "-H", "--host", "-l", "--log-level", "--tlscacert", "--tlscert", "--tlskey"})
# `docker run` options that take a value (docker/cli cli/command/container/opts.go addFlags, run.go);
# every other option is a flag (-d -i -t -P -q --rm --init --privileged --read-only ...)
_DOCKER_RUN_LONG = frozenset({
    "add-host", "annotation", "attach", "blkio-weight", "blkio-weight-device", "cap-add", "cap-drop", "cgroup-parent",
    "cgroupns", "cidfile", "cpu-count", "cpu-percent", "cpu-period", "cpu-quota", "cpu-rt-period", "cpu-rt-runtime",
    "cpu-shares", "cpus", "cpuset-cpus", "cpuset-mems", "detach-keys", "device", "device-cgroup-rule", "device-read-bps",
    "device-read-iops", "device-write-bps", "device-write-iops", "dns", "dns-opt", "dns-option", "dns-search",
    "domainname", "entrypoint", "env", "env-file", "expose", "gpus", "group-add", "health-cmd", "health-interval",
    "health-retries", "health-start-interval", "health-start-period", "health-timeout", "hostname", "io-maxbandwidth",
    "io-maxiops", "ip", "ip6", "ipc", "isolation", "kernel-memory", "label", "label-file", "link", "link-local-ip",
    "log-driver", "log-opt", "mac-address", "memory", "memory-reservation", "memory-swap", "memory-swappiness", "mount",
    "name", "net", "net-alias", "network", "network-alias", "oom-score-adj", "pid", "pids-limit", "platform", "publish",
    "pull", "restart", "runtime", "security-opt", "shm-size", "stop-signal", "stop-timeout", "storage-opt", "sysctl",
    "tmpfs", "ulimit", "user", "userns", "uts", "volume", "volume-driver", "volumes-from", "workdir",
})
_DOCKER_RUN_SHORT = frozenset("acehlmpuvw")
# `docker exec` (docker/cli cli/command/container/exec.go): -d -i -t --privileged are flags
_DOCKER_EXEC_LONG = frozenset({"detach-keys", "env", "env-file", "user", "workdir"})
_DOCKER_EXEC_SHORT = frozenset("euw")
_DOCKER_SHORT_NAMES = {"e": "env", "w": "workdir", "v": "volume", "u": "user"}

# apptainer/singularity global options that take a value (`-c/--config`); -d -q -s -v --nocolor are flags
_APPTAINER_GLOBAL = frozenset({"-c", "--config"})
# `apptainer exec|run` options that take a value (apptainer cmd/internal/cli/action_flags.go, the
# string, string-slice, map and int flags; SingularityCE's are the same names): every other option
# is a boolean flag (--nv, --rocm, -e/--cleanenv, -c/--contain, -C/--containall, -w/--writable ...)
_APPTAINER_LONG = frozenset({
    "app", "bind", "mount", "home", "overlay", "scratch", "workdir", "shell", "cwd", "pwd", "hostname", "network",
    "network-args", "dns", "security", "apply-cgroups", "vm-ram", "vm-cpu", "vm-ip", "containlibs", "fusemount",
    "tmpdir", "add-caps", "drop-caps", "env", "env-file", "dmtcp-launch", "dmtcp-restart", "blkio-weight",
    "blkio-weight-device", "cpu-shares", "cpus", "cpuset-cpus", "cpuset-mems", "memory", "memory-reservation",
    "memory-swap", "pids-limit", "no-mount", "authfile", "pem-path", "docker-host", "docker-username",
    "docker-password", "library", "device", "cdi-dirs", "netns-path",
})
_APPTAINER_SHORT = frozenset("BHoSWs")
_APPTAINER_SHORT_NAMES = {"B": "bind", "H": "home", "W": "workdir", "e": "cleanenv", "c": "contain", "C": "containall"}
_APPTAINER_CLEAN = frozenset({"cleanenv", "containall", "compat"})
_APPTAINER_PREFIXES = ("APPTAINERENV_", "SINGULARITYENV_")


@dataclass
class ContainerCall:
    """One ``docker run|exec`` or ``apptainer exec|run`` among a command's words."""

    tool: str  # "docker" | "apptainer" (singularity too)
    action: str  # "run" | "exec"
    options: list[tuple[str, Word | None, Word]] = field(default_factory=list)  # (long name, value, the option's word)
    image: Word | None = None
    end: int = 0  # where the command it runs starts
    unread: Word | None = None  # an environment option whose names are not known

    def values(self, name: str) -> list[Word]:
        return [value for option, value, _ in self.options if option == name and value is not None]

    def given(self, *names: str) -> bool:
        return any(option in names for option, _, _ in self.options)


def _opaque(word: Word) -> bool:
    """An unquoted expansion only known at run time (``$SING_OPTS``): it may be any number of words."""
    return word.value is None and word.may_split and not word.prefix


def _command_like(word: Word | None) -> bool:
    from .launchers import is_launcher_name

    name = os.path.basename(word.value) if word is not None and word.value is not None else None
    return name is not None and (is_launcher_name(name) or name in _SHELLS)


def _options(words: list[Word], j: int, long_values: frozenset[str], short_values: frozenset[str],
             short_names: dict[str, str], call: ContainerCall) -> int:
    """Read pflag-style options from ``j`` (``--name value``, ``--name=value``, ``-abc``, ``-vVALUE``) into ``call``."""
    n = len(words)
    while j < n:
        word = words[j]
        text = word.prefix
        if text == "--":
            return j + 1
        if not text.startswith("-") or text == "-":
            return j
        j += 1
        if text.startswith("--"):
            name, eq, _ = text[2:].partition("=")
            if eq:
                rest = split_word(word)
                call.options.append((name, rest[1] if rest is not None else None, word))
            elif name in long_values:
                call.options.append((name, words[j] if j < n else None, word))
                j += 1
            else:
                call.options.append((name, None, word))
            continue
        letters = text[1:]
        for k, letter in enumerate(letters):
            name = short_names.get(letter, letter)
            if letter not in short_values:
                call.options.append((name, None, word))
                continue
            if k + 1 < len(letters) or word.value is None:  # `-eNAME=1`, `-v/a:/b`: the value is in the word
                call.options.append((name, None, word))
                if letter == "e" and call.tool == "docker":
                    call.unread = word
            else:
                call.options.append((name, words[j] if j < n else None, word))
                j += 1
            break
    return j


def container_call(words: list[Word], i: int) -> ContainerCall | None:
    """The ``docker``/``apptainer`` call whose name is ``words[i]``, with its options, image and
    the start of the command it runs; None when it runs none of ours (``docker build``, ``docker
    run IMAGE`` with no command, an image whose entrypoint takes the words)."""
    if words[i].value is None:
        return None
    base = os.path.basename(words[i].value)
    tool = "docker" if base in ("docker", "nvidia-docker") else "apptainer"
    j, n = i + 1, len(words)
    global_values = _DOCKER_GLOBAL if tool == "docker" else _APPTAINER_GLOBAL
    while j < n and (words[j].value or "").startswith("-"):
        j += 2 if words[j].value in global_values else 1
    if tool == "docker" and j < n and words[j].value == "container":
        j += 1
    if j >= n or words[j].value not in ("run", "exec"):
        return None
    call = ContainerCall(tool, words[j].value)
    if tool == "docker":
        long_values, short_values = (_DOCKER_RUN_LONG, _DOCKER_RUN_SHORT) if call.action == "run" else (_DOCKER_EXEC_LONG, _DOCKER_EXEC_SHORT)
        short_names = _DOCKER_SHORT_NAMES
    else:
        long_values, short_values, short_names = _APPTAINER_LONG, _APPTAINER_SHORT, _APPTAINER_SHORT_NAMES
    j = _options(words, j + 1, long_values, short_values, short_names, call)
    if j >= n:
        return None
    # `exec $OPTS $IMG torchrun ...`: the words before the command are not known; it starts at the first launcher
    if any(_opaque(w) for w in words[j:]):
        start = next((k for k in range(j, n) if _command_like(words[k])), None)
        if start is None or start == j or not any(_opaque(w) for w in words[j:start]):
            start = j + 1
        call.image, call.end = words[start - 1], start
    else:
        call.image, call.end = words[j], j + 1
    entrypoint = call.values("entrypoint")
    cleared = bool(entrypoint) and entrypoint[-1].value == ""
    if entrypoint and not cleared:
        return None  # `--entrypoint X IMAGE ARGS`: X runs with the words as its arguments
    if call.end >= n or (call.action == "run" and not cleared and not _command_like(words[call.end])):
        return None
    return call


def _docker_env(call: ContainerCall, out: Peeled) -> bool:
    """`-e NAME=VALUE` / `-e NAME` into ``out``; False when a name is not known."""
    for option, value, _word in call.options:
        if option == "env-file":
            return False
        if option != "env":
            continue
        if value is None or value.prefix == "":
            return False
        match = ASSIGN_WORD_RE.match(value.prefix)
        if match is not None and match.group(2) == "=":
            out.env.append(EnvWord(value, match.group(1)))
        elif value.value is not None and NAME_RE.match(value.value):
            out.kept.append(value.value)
        else:
            return False
    return True


def _apptainer_env(call: ContainerCall, out: Peeled) -> bool:
    """`--env NAME=VALUE` into ``out``; False when a name is not known (`--env-file`, `--env A=1,B=2`
    whose comma pflag's map splits)."""
    for option, value, _word in call.options:
        if option == "env-file":
            return False
        if option != "env":
            continue
        match = ASSIGN_WORD_RE.match(value.prefix) if value is not None else None
        if match is None or match.group(2) != "=" or value.value is None or "," in value.value:
            return False
        out.env.append(EnvWord(value, match.group(1)))
    return True


def _peel_container(words: list[Word], j: int) -> Peeled | None:
    call = container_call(words, j - 1)
    if call is None or call.unread is not None:
        return None
    out = Peeled(call.end)
    if call.tool == "docker":
        out.clears = True
        return out if _docker_env(call, out) else None
    out.renamed = _APPTAINER_PREFIXES
    out.clears = call.given(*_APPTAINER_CLEAN)
    return out if _apptainer_env(call, out) else None


CONTAINER_WRAPPERS: dict[str, Peel] = {
    "docker": _peel_container,
    "nvidia-docker": _peel_container,
    "singularity": _peel_container,
    "apptainer": _peel_container,
}
CONTAINER_TOOLS = frozenset(CONTAINER_WRAPPERS)
