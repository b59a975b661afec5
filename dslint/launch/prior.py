"""What a script does before a launch: the folder it ``cd``s into, and the files it writes.

The commands that run before a launch are those of the top level and, for a launch in a
function, those of the function before it; a top-level command after the function's body but
before its first call runs before it too, and the body of a function called before the launch
runs at its call. Other functions are not followed.

The folder (``launch_folder``): the ``cd``/``pushd``/``popd`` commands are followed in order,
``pushd``/``popd`` as the stack bash keeps and ``cd -`` back to the folder before. A relative
``cd`` goes from the folder the previous one reached; the first from the script's folder or a
folder above it up to the repository root (the caller's folder is not known). A folder named
from the script's own path (``$(dirname "$0")``, ``${BASH_SOURCE[0]}``) is the script's folder
(not under SLURM, which runs a copy); ``cd $SLURM_SUBMIT_DIR`` goes back to where it started.
A ``cd`` in a subshell (``( ... )``, a part of a pipeline, ``bash -c``) moves nothing after it.
A ``cd`` to a folder dslint cannot name (``cd "$ROOT"``, ``cd ~/x``, an absolute folder that
is not on this machine), a ``cd`` only some runs make (in an ``if`` or a loop) and ``popd``
past the stack leave the folder unknown.

The files (``written_before``): a file a redirection writes (``> f``, ``>> f``, ``&> f``, the
target of ``cat <<EOF > f``), and any path an argument of a command names (or a folder above
it, ``mkdir -p configs``), unless the command only reads what it names (``cat``, ``ls``,
``grep``, ``echo``, ``rm`` ...; the configs another launch reads; the string ``eval`` runs, whose
commands are judged one by one).
``cp``/``mv``/``ln`` into a folder write the source's name there; ``git clone URL`` writes the
folder the URL names; ``wget URL`` the file it names.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dslint.launch.pyprogram import Evidence

if TYPE_CHECKING:  # a run on training configs reads no shell, and imports no shell reader
    from dslint.documents.shell import Command, Script, Word

# Commands that read (or remove) the paths they name, and write none: naming a file does not make it.
_READERS = frozenset({
    ".", "[", "basename", "cat", "cd", "chmod", "chown", "cmp", "df", "diff", "dirname", "du", "echo", "egrep",
    "fgrep", "file", "grep", "head", "less", "ls", "md5sum", "more", "popd", "printf", "pushd", "readlink",
    "realpath", "rg", "rm", "rmdir", "sha1sum", "sha256sum", "sort", "source", "stat", "tail", "test", "unlink",
    "wc", "which", "zcat", "awk", "jq", "cut", "tr", "uniq", "sleep",
})
# Readers that write what they name with an in-place option (`sed -i`, `yq -i`).
_IN_PLACE = frozenset({"sed", "yq", "perl"})
_COPIES = frozenset({"cp", "mv", "ln", "rsync", "install", "scp"})
# Where one argument ends and a path inside it starts: `--out=ds.json`, `open('ds.json', 'w')`.
_TOKEN = re.compile(r"""[\s'"=,;()\[\]{}<>|&`]+""")
_MOVES = ("cd", "pushd", "popd")


@dataclass
class _Before:
    """The commands that run before a launch, in the order they run, and the functions they call."""

    commands: list[Command]
    called: set[str]  # functions called before the launch: all of their bodies ran
    top_end: int  # top-level text before this offset runs before the launch
    function: str | None  # the launch's function
    end: int  # the launch's start

    def reaches(self, start: int, function: str | None) -> bool:
        """Whether text at ``start`` in ``function`` (None: the top level) runs before the launch."""
        if function is None:
            return start < self.top_end
        return (function == self.function and start < self.end) or function in self.called


def _before(script: Script, command: Command) -> _Before:
    function = command.in_function
    call = None
    if function is not None:
        call = next((c for c in script.commands if c.in_function is None and c.basename == function), None)
    later_call = call is not None and call.span.start > command.span.start
    top_end = call.span.start if later_call else command.span.start
    bodies: dict[str, list[Command]] = {}
    top, inner = [], []
    for other in script.commands:
        if other is command:
            continue
        if other.in_function is None:
            if other.span.start < top_end:
                top.append(other)
        elif other.in_function == function and other.span.start < command.span.start:
            inner.append(other)
        else:
            bodies.setdefault(other.in_function, []).append(other)
    ordered = top + inner if later_call else sorted(top + inner, key=lambda c: c.span.start)
    called: set[str] = set()
    out: list[Command] = []

    def add(commands: list[Command], depth: int) -> None:
        for other in commands:
            name = other.basename
            if name in bodies and name not in called and name != function and depth < 8:
                called.add(name)  # its body runs here, before the commands after the call
                add(bodies[name], depth + 1)
            out.append(other)

    add(ordered, 0)
    return _Before(out, called, top_end, function, command.span.start)


def commands_before(script: Script, command: Command) -> list[Command]:
    """The commands of ``script`` that run before ``command``, in the order they run (the body of a
    function called before it at the place of the call)."""
    return _before(script, command).commands


# ---- the folder ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Folder:
    """Where the script is when a command runs: ``path`` None when dslint cannot name the folder."""

    path: Path | None
    evidence: Evidence  # the cd that took it there


_START = None  # the folder the caller started the script in


class _Walk:
    """The folder, followed through the commands before a launch."""

    def __init__(self, script: Script, base: Path, stop: Path):
        self.script, self.base, self.stop = script, base, stop
        self.here: Folder | None = _START
        self.before: Folder | None = _START  # for `cd -`
        self.stack: list[Folder | None] = []
        self.at: dict[int, Folder | None] = {}  # id(command) -> where it ran

    def run(self, commands: list[Command]) -> Folder | None:
        """The folder after ``commands``; where each ran is kept in ``at``."""
        for other in commands:
            self.at[id(other)] = self.here
            name = other.basename
            if name in _MOVES and not other.subshell:
                self.move(other, name)
        return self.here

    def move(self, other: Command, name: str) -> None:
        words = [w for w in other.args if not (w.value or "").startswith("-") or w.value == "-"]
        line = other.span.source.position(other.span.start)[0]
        shown = other.span.source.text[other.span.start:other.span.end].splitlines()[0][:80]
        evidence = Evidence(self.script.path, line, shown)
        if name == "popd":
            self.here = self.stack.pop() if self.stack else Folder(None, evidence)
            return
        if name == "cd" and words and words[0].value == "-":
            self.here, self.before = self.before, self.here
            return
        if name == "pushd":
            if not words:
                return  # swaps the top two: rare enough to leave the folder as it is
            self.stack.append(self.here)
        if words and words[0].value is None and _SUBMIT_DIR.match(words[0].raw.strip()):
            back = self.here is _START or not (other.conditional or other.in_loop)
            self.before, self.here = self.here, _START if back else Folder(None, evidence)
            return  # the folder the job was submitted from: where the script started
        found = self.target(words[0], other) if words else None  # a bare `cd` goes $HOME
        if found is not None and (other.conditional or other.in_loop):
            here = self.here.path if self.here is not None else None
            found = found if found == here else None  # only some runs move there
        self.before = self.here
        self.here = Folder(found, evidence)

    def target(self, word: Word, other: Command) -> Path | None:
        text = word.value
        if text is None:
            text = _script_relative(self.script, word, other)
            if text is None:
                return None
            return _existing(Path(os.path.normpath(self.base.resolve() / text)))
        if text.startswith("~"):
            return None  # the home folder of the machine that runs it
        if os.path.isabs(text):
            return _existing(Path(os.path.normpath(text)))
        if self.here is not _START:
            return None if self.here.path is None else _existing(Path(os.path.normpath(self.here.path / text)))
        return _upwards(text, self.base, self.stop)


def _existing(path: Path) -> Path | None:
    return path if path.is_dir() else None


def _upwards(target: str, base: Path, stop: Path) -> Path | None:
    here = base.resolve() if base.exists() else base
    top = stop.resolve() if stop.exists() else stop
    while True:
        path = Path(os.path.normpath(here / target))
        if path.is_dir():
            return path
        if here == top or here.parent == here or top not in here.parents:
            return None
        here = here.parent


# `$(dirname "$0")`, `$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)`, `` `dirname $0` ``,
# `$(dirname $(realpath $0))`: the folder of the script itself.
_SELF = r"""(?:\$0|\$\{0\}|\$\{BASH_SOURCE(?:\[0\])?\}|\$BASH_SOURCE)"""
_WRAP = r"""(?:\$\((?:realpath|readlink\s+-f)\s+"?%s"?\)|%s)""" % (_SELF, _SELF)
_DIRNAME = r"""(?:\$\(\s*dirname\s+(?:--\s+)?"?%s"?\s*\)|`\s*dirname\s+"?%s"?\s*`)""" % (_WRAP, _WRAP)
_SCRIPT_FOLDER = re.compile(
    r"""^"?(?:%s|\$\(\s*(?:cd|realpath|readlink\s+-f)\s+"?%s(?P<inner>[^"$`)\s]*)"?\s*(?:>\s*/dev/null\s*)?(?:2>&1\s*)?"""
    r"""(?:(?:&&|;)\s*pwd(?:\s+-P)?\s*)?\))"?(?P<rest>[^$`]*)$""" % (_DIRNAME, _DIRNAME))
# The folder a batch job was submitted from, which is where its script starts (SLURM's sbatch, PBS).
_SUBMIT_DIR = re.compile(r"""^"?\$\{?(?:SLURM_SUBMIT_DIR|PBS_O_WORKDIR)\}?"?$""")
_VARIABLE = re.compile(r"""^"?\$(?:\{(?P<braced>\w+)\}|(?P<plain>\w+))(?P<rest>[^$`]*)$""")


def _script_relative(script: Script, word: Word, other: Command) -> str | None:
    """The folder a word names relative to the script's own folder, when the word starts from the
    script's path (``$(dirname "$0")/..``, or ``$DIR/..`` with ``DIR=$(dirname "$0")``); None
    otherwise. Under SLURM the script runs from a copy in the spool folder: not its folder."""
    if script.sbatch is not None:
        return None
    raw = word.raw.strip()
    match = _SCRIPT_FOLDER.match(raw)
    if match is None:
        variable = _VARIABLE.match(raw)
        if variable is None:
            return None
        name = variable.group("braced") or variable.group("plain")
        assigned = [a for a in script.assignments if a.name == name and a.span.start < other.span.start
                    and a.in_function in (None, other.in_function)]
        if not assigned or assigned[-1].value is None or assigned[-1].conditional:
            return None
        inner = _SCRIPT_FOLDER.match(assigned[-1].value.raw.strip())
        if inner is None:
            return None
        rest = (inner.group("inner") or "") + inner.group("rest").strip('"') + variable.group("rest").strip('"')
    else:
        rest = (match.group("inner") or "") + match.group("rest").strip('"')
    return "." + rest if rest.startswith("/") or not rest else None


def launch_folder(script: Script, command: Command, base: Path, stop: Path) -> Folder | None:
    """Where the script is when ``command`` runs; None when it has not moved from where it started.
    ``base``: the script's folder; ``stop``: the repository root."""
    if script is None or command is None:
        return None
    return _Walk(script, base, stop).run(_before(script, command).commands)


# ---- the files -------------------------------------------------------------------------------


def written_before(script: Script, command: Command, path: str, word_raw: str | None, base: Path, stop: Path) -> Evidence | None:
    """The command of ``script`` before ``command`` that writes or may write the file ``path``
    (relative, as the launch names it), or a folder above it; None when none does.
    ``word_raw``: the launch's word as written, matched against a target that is not known
    statically (``cat <<EOF > $DS_CONFIG``)."""
    from dslint.launch.commands import launch_of

    before = _before(script, command)
    walk = _Walk(script, base, stop)
    wanted = _Wanted(path, word_raw, walk.run(before.commands), _start_folders(base, stop))
    ran = {id(other) for other in before.commands}
    # `eval "$CMD"`, `bash -c "..."`: the commands of the string are judged one by one, not the string
    runners = {id(other.runner) for other in script.commands if other.runner is not None}
    for other in before.commands:
        if id(other) not in runners and _writes(other, wanted, walk.at.get(id(other)), _configs(launch_of(other))):
            return _evidence(script, other.span)
    for redirect in script.redirects:
        reached = id(redirect.command) in ran if redirect.command is not None else before.reaches(redirect.span.start, redirect.in_function)
        at = walk.at.get(id(redirect.command)) if redirect.command is not None else None
        if reached and wanted.matches_word(redirect.target, at, exact=True):
            return _evidence(script, redirect.span)
    for heredoc in script.heredocs:
        if heredoc.target is not None and heredoc.command is not None and id(heredoc.command) in ran \
                and wanted.matches_word(heredoc.target, walk.at.get(id(heredoc.command)), exact=True):
            return _evidence(script, heredoc.target.span)
    return None


def _start_folders(base: Path, stop: Path) -> list[Path]:
    """Where the caller may start the script, as the lookup assumes: its folder and those above it
    up to the repository root."""
    here = base.resolve() if base.exists() else base
    top = stop.resolve() if stop.exists() else stop
    out = [here]
    while here != top and here.parent != here and top in here.parents:
        here = here.parent
        out.append(here)
    return out


def _evidence(script: Script, span) -> Evidence:
    line = span.source.position(span.start)[0]
    text = span.source.text[span.start:span.end].strip()
    return Evidence(script.path, line, text.splitlines()[0][:80] if text else "")


@dataclass
class _Wanted:
    """The file the launch names: its relative path, its word as written, where the launch runs,
    and where the script may have started."""

    path: str
    raw: str | None
    here: Folder | None
    start: list[Path]

    def __post_init__(self) -> None:
        self.path = os.path.normpath(self.path)

    def _places(self, folder: Folder | None) -> list[Path] | None:
        if folder is _START:
            return self.start
        return None if folder.path is None else [folder.path]

    def same(self, written: str, at: Folder | None, exact: bool) -> bool:
        """Does ``written``, a path named by a command run in ``at``, name the file (or, unless
        ``exact``, a folder above it)?"""
        if not written or written.startswith("~"):
            return False
        written = os.path.normpath(written)
        if written in (".", "..", "/"):
            return False
        writer, launch = self._places(at), self._places(self.here)
        if at is self.here or (at is not None and self.here is not None and at.path == self.here.path) \
                or writer is None or launch is None:
            pairs = [(written, self.path)]  # the same folder, or one dslint cannot name: as written
        else:
            pairs = [(os.path.normpath(w / written), os.path.normpath(t / self.path)) for w in writer for t in launch]
        return any(w == t or (not exact and t.startswith(w.rstrip("/") + "/")) for w, t in pairs)

    def matches_word(self, word: Word, at: Folder | None, exact: bool) -> bool:
        known = word.value if word.value is not None else word.assumed
        if known is not None and self.same(known, at, exact):
            return True
        return self.raw is not None and _unquoted(word.raw) == _unquoted(self.raw)


def _unquoted(text: str) -> str:
    return text.strip().replace('"', "").replace("'", "")


# The options whose value a launch reads as a config (its launcher's and its program's).
_CONFIG_KEYS = frozenset({"deepspeed", "deepspeed_config", "config_file", "deepspeed_config_file", "hostfile", "config"})


def _configs(launch) -> list[tuple[int, int]]:
    """The (start, end) of the words another launch reads as its configs: it does not write them."""
    if launch is None:
        return []
    words = [launch.config_file]
    words += [o.value for o in (*launch.launcher_option_list, *launch.program_args) if o.key in _CONFIG_KEYS]
    first = launch.program_args[0] if launch.program_args else None
    if first is not None and first.name is None and first.value is not None \
            and (first.value.value or "").lower().endswith((".yaml", ".yml", ".json")):
        words.append(first.value)
    return [(w.span.start, w.span.end) for w in words if w is not None]


def _writes(other: Command, wanted: _Wanted, at: Folder | None, configs: list[tuple[int, int]]) -> bool:
    """Does the command write, or may it write, the file (an argument names it or a folder above it)?
    ``configs``: the words it reads as a launch's configs, which it does not write."""
    name = other.basename
    args = [w for w in other.args if not any(w.span.start <= a and b <= w.span.end for a, b in configs)]
    if name is None:
        return False
    if name in _READERS:
        return False
    if name in _IN_PLACE and not any((w.value or "").startswith(("-i", "--in-place")) for w in args):
        return False
    for text in _named(name, args):
        for token in _TOKEN.split(text):
            if token and not token.startswith("-") and wanted.same(token, at, exact=False):
                return True
    return any(wanted.raw is not None and _unquoted(w.raw) == _unquoted(wanted.raw) for w in args if w.value is None)


def _named(name: str, args: list[Word]) -> list[str]:
    """The texts of a command's arguments, and the paths it writes without naming them: a copy into
    a folder writes the source's name there, `git clone URL` the folder the URL names, `wget URL` its file."""
    texts = [w.value if w.value is not None else w.assumed for w in args]
    texts = [t for t in texts if t]
    operands = [t for t in texts if not t.startswith("-")]
    if name in _COPIES and len(operands) >= 2:
        folder = operands[-1]
        texts += [os.path.join(folder, os.path.basename(source.rstrip("/"))) for source in operands[:-1]]
    elif name == "git" and len(operands) >= 2 and operands[0] == "clone":
        texts.append(os.path.basename(operands[1].rstrip("/")).removesuffix(".git"))
    elif name == "wget" or (name == "curl" and any(t in ("-O", "--remote-name") for t in texts)):
        texts += [os.path.basename(t.split("?", 1)[0]) for t in operands if "://" in t]
    return texts
