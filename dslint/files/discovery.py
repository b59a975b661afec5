"""Which files to read: walk directories, honour excludes and .gitignore, keep explicit files.

As in ruff: a file named on the command line is always read (``force-exclude`` applies the
exclusion globs to it too, which pre-commit needs, since it names every file); a walk skips
what the exclusion globs, git's ignore files (dslint/files/gitignore.py) and the hard-wired folders
below rule out, each with its reason for ``-v``. A folder found while walking that holds what
training writes (weights, trainer state, optimizer state, a DeepSpeed checkpoint) is a run's
output, not a place for launch configs, and is not entered either.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from dslint.config import Scopes, Settings
from dslint.files.suffixes import JSON_SUFFIXES, SCRIPT_SUFFIXES, YAML_SUFFIXES
from dslint.files.gitignore import IgnoreFile, decide, find_repository, repository_at, repository_sources

SKIP_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".nox",
        ".mypy_cache", ".pytest_cache", ".ruff_cache", ".dslint_cache", "site-packages", ".eggs", ".idea", ".vscode",
    }
)
CANDIDATE_SUFFIXES = JSON_SUFFIXES + YAML_SUFFIXES + SCRIPT_SUFFIXES
# Why a walk passes a file over without opening it (listed by -v).
NOT_READ = "not a kind dslint reads (JSON, YAML, shell script by suffix or shebang)"

# What a trainer writes into its output folder and nowhere else (transformers trainer.py
# TRAINER_STATE_NAME, TRAINING_ARGS_NAME, OPTIMIZER_NAME, SCHEDULER_NAME, the rng state;
# modeling_utils SAFE_WEIGHTS_NAME/WEIGHTS_NAME and their indexes; peft's adapter weights;
# DeepSpeed's save_checkpoint: the `latest` tag file and zero_to_fp32.py).
TRAINING_OUTPUT_FILES = frozenset(
    {
        "trainer_state.json", "training_args.bin", "optimizer.pt", "scheduler.pt", "rng_state.pth",
        "pytorch_model.bin", "model.safetensors", "model.safetensors.index.json", "pytorch_model.bin.index.json",
        "adapter_model.safetensors", "adapter_model.bin", "zero_to_fp32.py",
    }
)
# one search over a folder's listing (names joined by newlines) instead of one match per name
_TRAINING_OUTPUT = re.compile(
    "^(?:" + "|".join(re.escape(name) for name in sorted(TRAINING_OUTPUT_FILES))
    + r"|rng_state_\d+\.pth|pytorch_model-\d+-of-\d+\.bin|[^\n]+\.safetensors)$",
    re.MULTILINE,
)
_CHECKPOINT_FOLDER = re.compile(r"^(?:checkpoint-\d+|global_step\d+)$", re.MULTILINE)


@dataclass(frozen=True)
class Candidate:
    """A file to lint, as discovery found it."""

    path: Path  # as found on disk
    display: str  # as reported
    explicit: bool  # named on the command line (not found by walking)
    settings: Settings | None = field(default=None, compare=False, repr=False)  # its folder's (Scopes)
    # read only because it names a given file (dslint.run.context): its findings count where they involve one
    context: bool = field(default=False, compare=False)


class PathError(Exception):
    """A path given on the command line that does not exist or cannot be read."""


def display_path(path: Path, cwd: Path) -> str:
    try:
        return os.path.relpath(path, cwd) if path.is_absolute() else str(path)
    except ValueError:
        return str(path)


def matches(patterns: list[str], relative: str) -> bool:
    name = relative.rsplit("/", 1)[-1]
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        if fnmatch.fnmatchcase(relative, pattern) or fnmatch.fnmatchcase(name, pattern):
            return True
        if pattern.startswith("**/") and fnmatch.fnmatchcase(relative, pattern[3:]):
            return True
        if fnmatch.fnmatchcase(relative, pattern + "/*"):
            return True
    return False


def excluded_by(path: Path, settings: Settings, cwd: Path) -> str | None:
    """Why an exclusion glob of ``settings`` rules ``path`` out, or None."""
    absolute = os.path.abspath(path)
    for glob, root, origin in settings.exclusions(cwd):
        try:
            relative = Path(os.path.relpath(absolute, root)).as_posix()
        except ValueError:
            relative = Path(absolute).as_posix()
        if matches([glob], relative):
            return f"excluded by '{glob}' ({origin})"
    return None


def training_output(folder: str, names: list[str], dirnames: list[str]) -> str | None:
    """Why ``folder`` (with this listing) is a training run's output, or None."""
    found = _TRAINING_OUTPUT.search("\n".join(names))
    if found is not None:
        return f"training output (holds {found.group()}), not walked"
    checkpoints = _CHECKPOINT_FOLDER.findall("\n".join(dirnames)) if dirnames else []
    if checkpoints and "latest" in names:
        return "a DeepSpeed checkpoint folder (holds latest), not walked"
    for name in checkpoints:
        try:
            inside = os.listdir(os.path.join(folder, name))
        except OSError:
            continue
        marker = _TRAINING_OUTPUT.search("\n".join(inside))
        if marker is not None:
            return f"training output (its {name}/ holds {marker.group()}), not walked"
    return None


def discover(paths: list[str], exclude: list[str] = (), root: Path | None = None, cwd: Path | None = None,
             *, scopes: Scopes | None = None) -> tuple[list[Candidate], list[tuple[str, str]]]:
    """Returns (candidates, skipped) where skipped holds (display path, reason).

    ``scopes`` gives each folder its settings (exclusions, ``respect-gitignore``,
    ``force-exclude``); without it, ``exclude`` globs relative to ``root`` apply everywhere.
    """
    cwd = cwd or Path.cwd()
    if scopes is None:
        scopes = Scopes.fixed(Settings(exclude=list(exclude), root=root or cwd))
    candidates: list[Candidate] = []
    skipped: list[tuple[str, str]] = []
    seen: dict[str, int] = {}

    def add(path: Path, explicit: bool, settings: Settings) -> None:
        key = os.path.normcase(os.path.abspath(path))
        if key in seen:
            index = seen[key]
            if explicit and not candidates[index].explicit:  # named and also walked: named wins, as in ruff
                candidates[index] = Candidate(candidates[index].path, candidates[index].display, True, settings)
            return
        seen[key] = len(candidates)
        candidates.append(Candidate(path, _shown(path, cwd), explicit, settings))

    for given in paths:
        path = Path(given)
        if not os.path.lexists(path):
            raise PathError(f"{given}: no such file or directory")
        if path.is_dir():
            _Walk(path, scopes, cwd, add, skipped).run()
        else:  # a file, a link, or a FIFO or device named to be checked (its reader says it was not)
            settings = scopes.at(path.parent)
            reason = excluded_by(path, settings, cwd) if settings.force_exclude else None
            if reason is not None:
                skipped.append((_shown(path, cwd), reason))
            else:
                add(path, True, settings)
    return candidates, skipped


def _shown(path: Path, cwd: Path) -> str:
    return display_path(path, cwd) if path.is_absolute() else path.as_posix()


class _Walk:
    """One directory given on the command line, walked top-down with pruning."""

    def __init__(self, top: Path, scopes: Scopes, cwd: Path, add, skipped: list):
        self.top = top
        self.scopes = scopes
        self.cwd = cwd
        self.add = add
        self.skipped = skipped
        self._ignore_above = None  # (base folder, sources above top), read on first need
        self._exclusions_of: dict[int, list] = {}

    def _above(self, top_abs: str) -> tuple[str, tuple]:
        """The folder ignore patterns are relative to, and the sources that apply above the walk."""
        if self._ignore_above is None:
            repository = find_repository(Path(top_abs))
            if repository is None:
                self._ignore_above = (top_abs, ())  # no repository: only the .gitignore files being walked
            else:
                base = os.path.abspath(repository.root)
                sources = list(repository_sources(repository))
                relative = os.path.relpath(top_abs, base)
                folder = base
                parts = [] if relative == "." else Path(relative).parts
                for part in parts:  # the .gitignore of every folder from the root down to top's parent
                    found = _read_gitignore(folder, base)
                    if found is not None:
                        sources.append(found)
                    folder = os.path.join(folder, part)
                self._ignore_above = (base, tuple(sources))
        return self._ignore_above

    def run(self) -> None:
        def on_error(error: OSError) -> None:
            self.skipped.append((str(error.filename), f"cannot read directory: {error.strerror}"))

        top, top_abs = str(self.top), os.path.abspath(self.top)
        # what each folder passes to its subfolders, keyed as os.walk names them: its absolute
        # path, and the ignore base, the folder's path under it, and the sources in force
        below: dict[str, tuple[str, str, str, tuple]] = {}
        for directory, dirnames, filenames in os.walk(self.top, onerror=on_error, followlinks=False):
            is_top = directory == top and not below
            if is_top:
                directory_abs, base, prefix, sources = top_abs, top_abs, "", ()
            else:
                directory_abs, base, prefix, sources = below.pop(directory)
            settings = self.scopes.at(directory_abs, filenames)
            if not is_top:
                reason = training_output(directory, filenames, dirnames)
                if reason is not None:
                    self.skipped.append((_shown(Path(directory), self.cwd) + "/", reason))
                    dirnames[:] = []
                    continue
            base, prefix, sources = self._ignore_sources(directory_abs, is_top, filenames, dirnames, settings, base, prefix, sources)
            exclusions = self._exclusions(settings)
            keep = []
            for name in sorted(dirnames):
                child = os.path.join(directory, name)
                if name in SKIP_DIRS or os.path.exists(os.path.join(child, "pyvenv.cfg")):
                    continue
                reason = self._skip_reason(directory_abs, name, prefix, True, exclusions, sources)
                if reason is not None:
                    self.skipped.append((_shown(Path(child), self.cwd) + "/", reason))
                    continue
                keep.append(name)
                below[child] = (os.path.join(directory_abs, name), base, prefix + name + "/", sources)
            dirnames[:] = keep
            for name in sorted(filenames):
                if not (name.lower().endswith(CANDIDATE_SUFFIXES) or _has_shebang(os.path.join(directory, name), name)):
                    self.skipped.append((_shown(Path(directory, name), self.cwd), NOT_READ))
                    continue
                reason = self._skip_reason(directory_abs, name, prefix, False, exclusions, sources)
                path = Path(directory, name)
                if reason is not None:
                    self.skipped.append((_shown(path, self.cwd), reason))
                    continue
                self.add(path, False, settings)

    def _exclusions(self, settings: Settings) -> list[tuple[str, str, str]]:
        """The exclusion globs of ``settings`` (once per settings object): (glob, root, where set)."""
        key = id(settings)
        if key not in self._exclusions_of:
            self._exclusions_of[key] = [(glob, str(root), origin) for glob, root, origin in settings.exclusions(self.cwd)]
        return self._exclusions_of[key]

    def _ignore_sources(self, directory_abs: str, is_top: bool, filenames, dirnames, settings: Settings,
                        base: str, prefix: str, sources: tuple) -> tuple[str, str, tuple]:
        if not settings.respect_gitignore:
            return base, prefix, ()
        if is_top:
            base, sources = self._above(directory_abs)
            prefix = _prefix(directory_abs, base)
        elif ".git" in dirnames or ".git" in filenames:  # a nested repository has rules of its own
            repository = repository_at(Path(directory_abs))
            if repository is not None:
                base, prefix, sources = directory_abs, "", repository_sources(repository)
        if ".gitignore" in filenames:
            found = IgnoreFile.read(Path(directory_abs, ".gitignore"), prefix, _shown_ignore_file(Path(directory_abs, ".gitignore")))
            if found is not None:
                sources = (*sources, found)
        return base, prefix, sources

    @staticmethod
    def _skip_reason(directory_abs: str, name: str, prefix: str, is_dir: bool, exclusions: list, sources: tuple) -> str | None:
        for glob, root, origin in exclusions:
            if matches([glob], Path(os.path.relpath(os.path.join(directory_abs, name), root)).as_posix()):
                return f"excluded by '{glob}' ({origin})"
        if sources:
            pattern = decide(sources, prefix + name, is_dir)
            if pattern is not None and not pattern.negated:
                return f"ignored by {pattern.describe()}"
        return None


def _prefix(directory_abs: str, base: str) -> str:
    relative = os.path.relpath(directory_abs, base)
    return "" if relative == "." else Path(relative).as_posix() + "/"


def _read_gitignore(folder: str, base: str) -> IgnoreFile | None:
    path = Path(folder, ".gitignore")
    return IgnoreFile.read(path, _prefix(folder, base), _shown_ignore_file(path))


def _shown_ignore_file(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


def _has_shebang(path: str, name: str) -> bool:
    if "." in name:  # files with other extensions are not launch scripts
        return False
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # opening a FIFO would block
            return False
        with open(path, "rb") as handle:
            head = handle.read(64)
    except OSError:
        return False
    return head.startswith(b"#!") and b"sh" in head.split(b"\n", 1)[0]
