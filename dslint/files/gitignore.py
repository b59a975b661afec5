"""What git ignores: ``.gitignore`` files, ``.git/info/exclude`` and the global excludes file.

The patterns follow gitignore(5) and git's own matcher (dir.c, wildmatch.c): a pattern without
a slash (a trailing one aside) matches a name at any depth, any other is anchored to the
folder of its file; a trailing slash matches folders only; ``!`` re-includes; ``*`` and ``?``
stop at a slash, ``**`` spans folders only as ``**/``, ``/**`` or ``/**/``; the last matching
pattern of the deepest file decides, then the folders above, then ``info/exclude``, then
``core.excludesFile``. A file inside an ignored folder stays ignored whatever a later pattern
says, because the walk never enters the folder (discovery prunes it).

Inside a git work tree every source counts, from the repository root down. Outside one (a
copy without ``.git``, as rsync or a tarball leaves it on a cluster) only the ``.gitignore``
files inside the walked folders count: as ripgrep's ``--no-require-git`` does, without
reaching up to unrelated folders or a user's global excludes.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

_CLASSES = {
    "alnum": r"a-zA-Z0-9", "alpha": r"a-zA-Z", "blank": r" \t", "cntrl": r"\x00-\x1f\x7f", "digit": r"0-9",
    "graph": r"!-~", "lower": r"a-z", "print": r" -~", "punct": r"!-/:-@\[-`{-~", "space": r" \t\n\r\f\v",
    "upper": r"A-Z", "xdigit": r"0-9A-Fa-f",
}
_NEVER = re.compile(r"(?!)")


@dataclass(frozen=True)
class Pattern:
    """One line of an ignore file."""

    text: str  # the line as written (trailing spaces trimmed)
    source: str  # the file it came from, as shown to users
    line: int
    negated: bool
    directory_only: bool
    regex: re.Pattern

    def describe(self) -> str:
        return f"{self.source}:{self.line}: {self.text}"


def _trim_trailing_spaces(line: str) -> str:
    """Drop unescaped trailing spaces, as git's trim_trailing_spaces does (tabs stay)."""
    last_space = None
    index = 0
    while index < len(line):
        char = line[index]
        if char == " ":
            if last_space is None:
                last_space = index
        elif char == "\\":
            index += 1
            if index >= len(line):
                return line
            last_space = None
        else:
            last_space = None
        index += 1
    return line if last_space is None else line[:last_space]


def _bracket(pattern: str, start: int) -> tuple[str, int] | None:
    """The regex of the bracket expression at ``pattern[start] == '['`` and the index after it.

    None where git aborts the whole match (no closing bracket, an unknown [:class:]). As in
    wildmatch.c, a bracket never matches '/', and a reversed range matches its first character only.
    """
    index = start + 1
    negated = index < len(pattern) and pattern[index] in "!^"
    if negated:
        index += 1
    parts: list[str] = []
    first = True
    while index < len(pattern):
        char = pattern[index]
        if char == "]" and not first:
            if not parts:
                return ("[^/]" if negated else _NEVER.pattern), index + 1
            body = "".join(parts)
            return (f"[^/{body}]" if negated else f"(?:(?!/)[{body}])"), index + 1
        first = False
        if char == "[" and pattern.startswith("[:", index):
            close = pattern.find("]", index + 2)
            if close == -1:
                return None
            if close - 1 >= index + 2 and pattern[close - 1] == ":":
                name = pattern[index + 2 : close - 1]
                if name not in _CLASSES:
                    return None
                parts.append(_CLASSES[name])
                index = close + 1
                continue
            parts.append(re.escape("["))  # not a class: a literal '['
            index += 1
            continue
        if char == "\\":
            index += 1
            if index >= len(pattern):
                return None
            char = pattern[index]
        parts.append(re.escape(char))
        if index + 2 < len(pattern) and pattern[index + 1] == "-" and pattern[index + 2] != "]":
            high_index = index + 2
            high = pattern[high_index]
            if high == "\\":
                high_index += 1
                if high_index >= len(pattern):
                    return None
                high = pattern[high_index]
            if ord(high) >= ord(char):
                parts.append(f"{re.escape(char)}-{re.escape(high)}")
            index = high_index + 1
            continue
        index += 1
    return None


def _wildmatch(pattern: str) -> str | None:
    """git's wildmatch with WM_PATHNAME as a regex body; None when git would never match."""
    out: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "*":
            end = index
            while end < len(pattern) and pattern[end] == "*":
                end += 1
            double = end - index >= 2
            at_start = index == 0 or pattern[index - 1] == "/"
            if double and at_start and (end == len(pattern) or pattern[end] == "/"):
                if end == len(pattern):
                    out.append(".*")  # "**" at the end: everything below
                    index = end
                else:
                    out.append("(?:.*/)?")  # "**/": zero or more folders
                    index = end + 1
                continue
            out.append("[^/]*")
            index = end
        elif char == "?":
            out.append("[^/]")
            index += 1
        elif char == "[":
            bracket = _bracket(pattern, index)
            if bracket is None:
                return None
            regex, index = bracket
            out.append(regex)
        elif char == "\\":
            if index + 1 >= len(pattern):
                return None  # a trailing backslash matches nothing
            out.append(re.escape(pattern[index + 1]))
            index += 2
        else:
            out.append(re.escape(char))
            index += 1
    return "".join(out)


def compile_line(line: str, base: str, source: str, number: int) -> Pattern | None:
    """One line of an ignore file whose folder is ``base`` ('' or 'a/b/', relative to the root)."""
    if not line or line.startswith("#"):
        return None
    text = _trim_trailing_spaces(line)
    body = text
    negated = body.startswith("!")
    if negated:
        body = body[1:]
    directory_only = body.endswith("/")
    if directory_only:
        body = body[:-1]
    if not body:
        return None
    anchored = "/" in body
    if body.startswith("/"):
        body = body[1:]
    regex = _wildmatch(body)
    if regex is None:
        compiled = _NEVER
    elif anchored:
        compiled = re.compile(re.escape(base) + regex + r"\Z", re.DOTALL)
    else:
        compiled = re.compile(re.escape(base) + r"(?:.*/)?" + regex + r"\Z", re.DOTALL)
    return Pattern(text, source, number, negated, directory_only, compiled)


class IgnoreFile:
    """The patterns of one file; ``match`` gives the last that matches a path, as git decides."""

    def __init__(self, patterns: list[Pattern]):
        self.patterns = patterns
        self._reversed = patterns[::-1]
        files = [p.regex.pattern for p in patterns if not p.directory_only and p.regex is not _NEVER]
        folders = [p.regex.pattern for p in patterns if p.regex is not _NEVER]
        # one alternation first: most paths match nothing, and then one search answers for all
        self._any_file = re.compile("|".join(f"(?:{r})" for r in files), re.DOTALL) if files else None
        self._any_folder = re.compile("|".join(f"(?:{r})" for r in folders), re.DOTALL) if folders else None

    @classmethod
    def read(cls, path: Path, base: str, shown: str) -> "IgnoreFile | None":
        try:
            if path.is_symlink():  # git does not follow a symbolic link to an ignore file in the work tree
                return None
            data = path.read_bytes()
        except OSError:
            return None
        return cls.parse(data, base, shown)

    @classmethod
    def parse(cls, data: bytes, base: str, shown: str) -> "IgnoreFile | None":
        if data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        text = data.decode("utf-8", "surrogateescape")
        patterns = []
        for number, line in enumerate(text.split("\n"), start=1):
            if line.endswith("\r"):
                line = line[:-1]
            pattern = compile_line(line, base, shown, number)
            if pattern is not None:
                patterns.append(pattern)
        return cls(patterns) if patterns else None

    def match(self, path: str, is_dir: bool) -> Pattern | None:
        quick = self._any_folder if is_dir else self._any_file
        if quick is None or quick.match(path) is None:
            return None
        for pattern in self._reversed:
            if pattern.directory_only and not is_dir:
                continue
            if pattern.regex.match(path):
                return pattern
        return None


def decide(sources: tuple[IgnoreFile, ...], path: str, is_dir: bool) -> Pattern | None:
    """The pattern that decides ``path`` (repository-relative, '/'-separated): the deepest source's last match."""
    for source in reversed(sources):
        found = source.match(path, is_dir)
        if found is not None:
            return found
    return None


# ---- repositories and git's configuration --------------------------------------------------------


@dataclass(frozen=True)
class Repository:
    """A git work tree."""

    root: Path  # the work tree's top folder
    git_dir: Path  # its common git directory (a linked worktree's .git file points into it)


def find_repository(start: Path) -> Repository | None:
    """The git work tree holding ``start``, if any (a ``.git`` folder, or a ``.git`` file of a worktree or submodule)."""
    directory = start
    for candidate in (directory, *directory.parents):
        marker = candidate / ".git"
        git_dir = _git_dir(marker)
        if git_dir is not None:
            return Repository(candidate, git_dir)
    return None


def repository_at(directory: Path) -> Repository | None:
    """The repository whose top folder is ``directory`` (a nested repository met while walking)."""
    git_dir = _git_dir(directory / ".git")
    return Repository(directory, git_dir) if git_dir is not None else None


def _git_dir(marker: Path) -> Path | None:
    try:
        if marker.is_dir():
            return marker if (marker / "HEAD").exists() or (marker / "objects").is_dir() else None
        if not marker.is_file():
            return None
        first = marker.read_text(encoding="utf-8", errors="replace").split("\n", 1)[0].strip()
    except OSError:
        return None
    if not first.startswith("gitdir:"):
        return None
    git_dir = Path(first[len("gitdir:"):].strip())
    if not git_dir.is_absolute():
        git_dir = marker.parent / git_dir
    try:  # a linked worktree keeps info/exclude and config in the common directory
        common = (git_dir / "commondir").read_text(encoding="utf-8").strip()
        git_dir = git_dir / common if not os.path.isabs(common) else Path(common)
    except OSError:
        pass
    return Path(os.path.normpath(git_dir))


def repository_sources(repository: Repository) -> tuple[IgnoreFile, ...]:
    """The sources below every ``.gitignore`` of a repository: core.excludesFile, then info/exclude."""
    sources = []
    excludes = global_excludes_file(repository)
    if excludes is not None:
        found = IgnoreFile.read(excludes, "", _shown(excludes))
        if found is not None:
            sources.append(found)
    info = repository.git_dir / "info" / "exclude"
    found = IgnoreFile.read(info, "", _shown(info))
    if found is not None:
        sources.append(found)
    return tuple(sources)


def _shown(path: Path) -> str:
    home = os.path.expanduser("~")
    text = str(path)
    return "~" + text[len(home):] if home not in ("", "/", "~") and text.startswith(home + os.sep) else text


def global_excludes_file(repository: Repository | None = None) -> Path | None:
    """``core.excludesFile`` from git's configuration, else ``$XDG_CONFIG_HOME/git/ignore`` (or ``~/.config/git/ignore``)."""
    value = None
    for config in _config_files(repository):
        found = _config_value(config, "core", "excludesfile", set())
        if found is not None:
            value = found
    if value is not None:
        if not value:
            return None
        path = Path(os.path.expanduser(value))
        if not path.is_absolute() and repository is not None:
            path = repository.root / path
        return path
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg) if xdg else Path(os.path.expanduser("~")) / ".config"
    return base / "git" / "ignore"


def _config_files(repository: Repository | None) -> list[Path]:
    """git's configuration files from the lowest precedence up: system, global, the repository's."""
    files = []
    if not os.environ.get("GIT_CONFIG_NOSYSTEM"):
        files.append(Path(os.environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig"))
    if os.environ.get("GIT_CONFIG_GLOBAL"):
        files.append(Path(os.environ["GIT_CONFIG_GLOBAL"]))
    else:
        xdg = os.environ.get("XDG_CONFIG_HOME")
        files.append((Path(xdg) if xdg else Path(os.path.expanduser("~")) / ".config") / "git" / "config")
        files.append(Path(os.path.expanduser("~")) / ".gitconfig")
    if repository is not None:
        files.append(repository.git_dir / "config")
    return files


_SECTION = re.compile(r'\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]')


def _config_value(path: Path, section: str, key: str, seen: set[str]) -> str | None:
    """The last value of ``section.key`` in one git config file, following ``[include] path``."""
    real = os.path.realpath(path)
    if real in seen or len(seen) > 10:
        return None
    seen.add(real)
    try:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return None
    value = None
    current = None
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        match = _SECTION.match(line)
        if match:
            current = match.group(1).lower() if match.group(2) is None else None  # subsections never hold core keys
            line = line[match.end():]
            if not line.strip():
                continue
        if current is None or "=" not in line and not line.strip():
            continue
        name, _, raw = line.partition("=")
        name = name.strip().lower()
        if not name or name.startswith(("#", ";")):
            continue
        while raw.rstrip("\r").endswith("\\") and index < len(lines):  # continuation lines
            raw = raw.rstrip("\r")[:-1] + lines[index]
            index += 1
        if current == section and name == key:
            value = _config_string(raw)
        elif current == "include" and name == "path":
            included = Path(os.path.expanduser(_config_string(raw)))
            if not included.is_absolute():
                included = path.parent / included
            found = _config_value(included, section, key, seen)
            if found is not None:
                value = found
    return value


def _config_string(raw: str) -> str:
    """A git config value: quotes joined, escapes read, a comment outside quotes dropped, ends trimmed."""
    out = []
    quoted = False
    index = 0
    raw = raw.strip()
    while index < len(raw):
        char = raw[index]
        if char == '"':
            quoted = not quoted
        elif char == "\\" and index + 1 < len(raw):
            index += 1
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(raw[index], raw[index]))
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
        index += 1
    return "".join(out).strip()
