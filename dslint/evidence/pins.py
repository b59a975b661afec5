"""Pins of the training packages in one folder of a repository, each with its file and line.

Read statically, nothing imported or executed: ``requirements*.txt`` / ``*.in`` (and
``requirements/*.txt``) with their ``-r``/``-c`` includes, ``pyproject.toml`` (PEP 621, PEP 735
dependency groups, poetry, uv, pdm), ``setup.py`` (``ast``), ``setup.cfg``, ``environment*.yml``,
``pip install`` lines of Dockerfiles (also in ``docker/``) and of shell scripts, and the lock files ``uv.lock``,
``poetry.lock`` and ``pdm.lock``. :mod:`dslint.evidence.versions` decides what the pins mean.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

#: package -> distribution names it is published under (the first is the canonical one).
PACKAGES: dict[str, tuple[str, ...]] = {
    "deepspeed": ("deepspeed",),
    "transformers": ("transformers",),
    "accelerate": ("accelerate",),
    "trl": ("trl",),
    "ms-swift": ("ms-swift",),
    "llamafactory": ("llamafactory", "llmtuner"),
    # Frameworks whose releases the framework rules judge (dslint.frameworks.releases).
    "axolotl": ("axolotl",),
    "openrlhf": ("openrlhf",),
    "verl": ("verl",),
}
# Repository names of git checkouts (`git+https://github.com/hiyouga/LLaMA-Factory.git`).
_REPOSITORIES = {"llama-factory": "llamafactory", "llamafactory": "llamafactory", "ms-swift": "ms-swift",
                 "swift": "ms-swift", "transformers": "transformers", "accelerate": "accelerate", "trl": "trl",
                 "deepspeed": "deepspeed", "axolotl": "axolotl", "openrlhf": "openrlhf", "verl": "verl"}

_MAX_BYTES = 2_000_000  # a pin file larger than this is not a pin file
_MAX_LOCK_BYTES = 50_000_000  # lock files of large workspaces are big; they are scanned, not parsed


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


_DIST_TO_PACKAGE = {normalize(d): pkg for pkg, dists in PACKAGES.items() for d in dists}


def package_of(distribution: str) -> str | None:
    return _DIST_TO_PACKAGE.get(normalize(distribution))


@dataclass(frozen=True)
class Pin:
    """One statement about a package's version.

    ``kind``: ``spec`` (a version specifier; empty when the package is named without one),
    ``lock`` (an exact version a lock file resolved), ``git`` (a git checkout: ``ref`` is the
    branch, tag or commit, ``release`` the version a tag names) or ``file`` (an archive URL whose
    name carries the version) or ``source`` (the package's own source in the repository says
    ``release``: dslint.launch.vendored).
    """

    package: str
    kind: str
    spec: str  # as written: "==4.45.2", ">=4.40,<5", "^0.12.1", "" ; for git/file the URL
    path: str
    line: int | None
    dialect: str = "pep440"  # how to read ``spec``: pep440 | poetry | conda
    ref: str | None = None
    release: str | None = None  # the exact version a lock, a tag or an archive name gives
    via: str = ""  # "RUN pip install", "constraint from requirements.txt:2", "[tool.uv] override-dependencies"

    @property
    def written(self) -> str:
        name = PACKAGES[self.package][0]
        if self.kind == "lock":
            return f"{name} {self.release} locked"
        if self.kind == "source":
            return f"{name} {self.release} (its source)"
        if self.kind in ("git", "file"):
            return f"{name} @ {self.spec}"
        return f"{name}{self.spec}" if self.spec else name


# --------------------------------------------------------------------------------------------
# One requirement string (PEP 508, pip's requirement-file forms)
# --------------------------------------------------------------------------------------------

_NAME = r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*"
_RELEASE_REF = r"^(?:refs/tags/)?v?(\d+(?:\.\d+)+)$"
_ARCHIVE = r"/([A-Za-z0-9_.-]+?)-(\d+(?:\.\d+)+)(?:[-.][^/]*)?\.(?:whl|tar\.gz|zip)$"


def _git_pin(package: str, url: str, path: str, line: int | None, via: str) -> Pin:
    """A git checkout; its version is known only when the ref is a release tag (`@v4.45.2`)."""
    body = url.split("#", 1)[0]
    ref = None
    tail = body.split("://", 1)[-1]
    if "@" in tail.split("/", 1)[-1]:
        ref = tail.rsplit("@", 1)[1]
    match = re.match(_RELEASE_REF, ref or "")
    return Pin(package, "git", url, path, line, ref=ref, release=match.group(1) if match else None, via=via)


def _url_pin(url: str, named: str | None, path: str, line: int | None, via: str) -> Pin | None:
    """A direct reference: ``git+...``, or an archive whose file name carries the version."""
    url = url.strip()
    if url.startswith("git+") or url.startswith("git://"):
        package = package_of(named) if named else None
        if package is None:
            egg = re.search(r"[#&]egg=([A-Za-z0-9._-]+)", url)
            if egg:
                package = package_of(egg.group(1))
        if package is None:
            base = url.split("#", 1)[0].split("://", 1)[-1]
            if "@" in base.rsplit("/", 1)[-1]:
                base = base.rsplit("@", 1)[0]  # the ref
            repo = base.rstrip("/").rsplit("/", 1)[-1]
            repo = repo[: -len(".git")] if repo.endswith(".git") else repo
            package = _REPOSITORIES.get(normalize(repo))
        return _git_pin(package, url, path, line, via) if package else None
    archive = re.search(_ARCHIVE, url.split("#", 1)[0])
    if archive is None:
        return None
    package = package_of(named or archive.group(1))
    if package is None or (named and package_of(archive.group(1)) != package):
        return None
    return Pin(package, "file", url, path, line, release=archive.group(2), via=via)


def requirement(text: str, path: str, line: int | None, via: str = "") -> Pin | None:
    """A pin from one PEP 508 requirement or requirements-file line (options and comments removed)."""
    text = re.split(r"(?:^|\s)#", text, maxsplit=1)[0].strip()
    if not text:
        return None
    if text.startswith(("-e ", "--editable ", "--editable=")):
        text = re.sub(r"^(-e|--editable)[ =]\s*", "", text)
    if text.startswith("-"):
        return None
    text = re.split(r"\s+--?[A-Za-z]", text, maxsplit=1)[0]  # per-requirement options: --hash=..., --config-settings
    if re.match(r"^[a-z+]+://", text) or text.startswith("git+"):
        return _url_pin(text.split(";", 1)[0].strip(), None, path, line, via)
    match = re.match(_NAME, text)
    if match is None:
        return None
    package = package_of(match.group(1))
    if package is None:
        return None
    rest = text[match.end():].split(";", 1)[0].strip()
    if rest.startswith("@"):
        return _url_pin(rest[1:].strip(), match.group(1), path, line, via)
    if rest.startswith("("):
        rest = rest.strip("() ")
    if rest and not re.match(r"^[<>=!~]", rest):
        return None  # not a requirement ("transformers is great")
    return Pin(package, "spec", rest.replace(" ", ""), path, line, via=via)


def _line_of(text: str, needle: str, start: int = 0) -> int | None:
    index = text.find(needle, start)
    return text.count("\n", 0, index) + 1 if index >= 0 else None


def _from_strings(path: str, text: str, items: Iterable[Any], via: str = "") -> list[Pin]:
    pins = []
    for item in items:
        if isinstance(item, str):
            found = requirement(item, path, _line_of(text, item), via)
            if found:
                pins.append(found)
    return pins


# --------------------------------------------------------------------------------------------
# requirements files, with -r / -c includes
# --------------------------------------------------------------------------------------------

_INCLUDE = r"^(-r|--requirement|-c|--constraint)(?:\s*=\s*|\s+)(\S+)"


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) with backslash continuations joined, as pip reads them."""
    out: list[tuple[int, str]] = []
    pending, first = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        if not pending:
            first = number
        if raw.endswith("\\") and not raw.lstrip().startswith("#"):
            pending += raw[:-1] + " "
            continue
        out.append((first, pending + raw))
        pending = ""
    if pending:
        out.append((first, pending))
    return out


def _pins_requirements(path: Path, text: str, seen: frozenset = frozenset(), via: str = "",
                       top: Path | None = None) -> list[Pin]:
    pins: list[Pin] = []
    seen = seen | {str(path.resolve())}
    top = top or path.parent
    for number, line in _logical_lines(text):
        stripped = line.strip()
        include = re.match(_INCLUDE, stripped)
        if include:
            target = (path.parent / include.group(2)).resolve()
            if str(target) in seen or not target.is_file():
                continue  # a cycle, or a file elsewhere (a URL, a path made at build time)
            kind = "constraint" if include.group(1) in ("-c", "--constraint") else "included"
            inner = _read(target)
            if inner is not None:
                pins += _pins_requirements(target, inner, seen, f"{kind} from {os.path.relpath(path, top)}:{number}", top)
            continue
        found = requirement(stripped, str(path), number, via)
        if found:
            pins.append(found)
    return pins


# --------------------------------------------------------------------------------------------
# pyproject.toml: PEP 621, PEP 735, poetry, uv, pdm
# --------------------------------------------------------------------------------------------


def _table(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _key_line(text: str, name: str) -> int | None:
    match = re.search(rf"(?m)^\s*[\"']?{re.escape(name)}[\"']?\s*=", text)
    return text.count("\n", 0, match.start()) + 1 if match else None


def _poetry_pins(path: str, text: str, table: Any, via: str) -> list[Pin]:
    pins: list[Pin] = []
    if not isinstance(table, dict):
        return pins
    for name, value in table.items():
        package = package_of(name)
        if package is None:
            continue
        line = _key_line(text, name)
        for one in value if isinstance(value, list) else [value]:
            if isinstance(one, str):
                pins.append(Pin(package, "spec", "" if one.strip() == "*" else one.replace(" ", ""), path, line,
                                dialect="poetry", via=via))
            elif isinstance(one, dict) and isinstance(one.get("git"), str):
                ref = one.get("tag") or one.get("rev") or one.get("branch")
                url = f"git+{one['git']}" + (f"@{ref}" if isinstance(ref, str) else "")
                pins.append(_git_pin(package, url, path, line, via))
            elif isinstance(one, dict) and isinstance(one.get("version"), str):
                spec = one["version"].replace(" ", "")
                pins.append(Pin(package, "spec", "" if spec == "*" else spec, path, line, dialect="poetry", via=via))
    return pins


def _pins_pyproject(path: Path, text: str) -> list[Pin]:
    import tomllib

    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return []
    where = str(path)
    pins = _from_strings(where, text, _list(_table(data, "project", "dependencies")))
    optional = _table(data, "project", "optional-dependencies")
    for group in (optional.values() if isinstance(optional, dict) else ()):
        pins += _from_strings(where, text, _list(group))
    groups = data.get("dependency-groups")
    for group in (groups.values() if isinstance(groups, dict) else ()):
        pins += _from_strings(where, text, _list(group))  # {include-group = ...} entries are the other groups
    pins += _uv_pins(where, text, _table(data, "tool", "uv"))
    pins += _poetry_tables(where, text, _table(data, "tool", "poetry"))
    pdm = _table(data, "tool", "pdm", "dev-dependencies")
    for group in (pdm.values() if isinstance(pdm, dict) else ()):
        pins += _from_strings(where, text, _list(group))
    return pins


def _uv_pins(where: str, text: str, uv) -> list[Pin]:
    """``[tool.uv]``: its dependency lists, and the git sources it pins packages to."""
    pins: list[Pin] = []
    if not isinstance(uv, dict):
        return pins
    for key in ("dev-dependencies", "constraint-dependencies", "override-dependencies"):
        pins += _from_strings(where, text, _list(uv.get(key)), f"[tool.uv] {key}")
    sources = uv.get("sources")
    for name, source in (sources.items() if isinstance(sources, dict) else ()):
        package = package_of(name)
        if package and isinstance(source, dict) and isinstance(source.get("git"), str):
            ref = source.get("tag") or source.get("rev") or source.get("branch")
            url = f"git+{source['git']}" + (f"@{ref}" if isinstance(ref, str) else "")
            pins.append(_git_pin(package, url, where, _key_line(text, name), "[tool.uv.sources]"))
    return pins


def _poetry_tables(where: str, text: str, poetry) -> list[Pin]:
    """``[tool.poetry]``: its dependencies, dev-dependencies and groups' dependencies."""
    pins: list[Pin] = []
    if not isinstance(poetry, dict):
        return pins
    pins += _poetry_pins(where, text, poetry.get("dependencies"), "")
    pins += _poetry_pins(where, text, poetry.get("dev-dependencies"), "")
    for group in (poetry.get("group") or {}).values() if isinstance(poetry.get("group"), dict) else ():
        pins += _poetry_pins(where, text, _table(group, "dependencies"), "")
    return pins


# --------------------------------------------------------------------------------------------
# setup.py (ast, never run) and setup.cfg
# --------------------------------------------------------------------------------------------


def _pins_setup_py(path: Path, text: str) -> list[Pin]:
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    names: dict = {}  # module-level `deps = [...]` the setup() call may name
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            names[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            names[node.target.id] = node.value
    pins: list[Pin] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in ("install_requires", "extras_require"):
            for const in _strings(node.value, names, set()):
                found = requirement(const.value, str(path), const.lineno)
                if found:
                    pins.append(found)
    return pins


def _strings(node, names: dict, followed: set[str]) -> Iterable:
    """String constants of a literal expression, following module-level names (once each)."""
    import ast

    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node
    elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        for item in node.elts:
            yield from _strings(item, names, followed)
    elif isinstance(node, ast.Dict):
        for item in node.values:
            yield from _strings(item, names, followed)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        yield from _strings(node.left, names, followed)
        yield from _strings(node.right, names, followed)
    elif isinstance(node, ast.Starred):
        yield from _strings(node.value, names, followed)
    elif isinstance(node, ast.Name) and node.id in names and node.id not in followed:
        followed.add(node.id)
        yield from _strings(names[node.id], names, followed)


def _pins_setup_cfg(path: Path, text: str) -> list[Pin]:
    import configparser

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    items: list[str] = []
    if parser.has_option("options", "install_requires"):
        items += parser.get("options", "install_requires").splitlines()
    if parser.has_section("options.extras_require"):
        for _, value in parser.items("options.extras_require"):
            items += value.splitlines()
    return _from_strings(str(path), text, [i.strip() for i in items if i.strip()])


# --------------------------------------------------------------------------------------------
# environment.yml
# --------------------------------------------------------------------------------------------


def _pins_environment(path: Path, text: str) -> list[Pin]:
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return []
    if not isinstance(data, dict):
        return []
    pins: list[Pin] = []
    for dep in _list(data.get("dependencies")):
        if isinstance(dep, str):
            conda = re.match(r"^\s*(?:[\w-]+::)?([A-Za-z0-9._-]+)\s*(.*)$", dep)
            package = package_of(conda.group(1)) if conda else None
            if package:
                pins.append(Pin(package, "spec", _conda_spec(conda.group(2)), str(path), _line_of(text, dep), dialect="conda"))
        elif isinstance(dep, dict):
            pins += _from_strings(str(path), text, [p for p in _list(dep.get("pip")) if isinstance(p, str)])
    return pins


def _conda_spec(written: str) -> str:
    """conda's match spec as a specifier: ``=1.2`` and ``1.2`` match 1.2.*, ``=1.2.3=build`` a build of 1.2.3."""
    written = written.replace(" ", "")
    if written.startswith("=") and not written.startswith("=="):
        written = written[1:]
    if written[:1].isdigit():
        return "=" + written.split("=", 1)[0]
    return written


# --------------------------------------------------------------------------------------------
# Dockerfiles: RUN ... pip install ...
# --------------------------------------------------------------------------------------------

_PIP = r"(?:^|\s)(?:(?:\S*/)?python[0-9.]*\s+-m\s+pip|(?:\S*/)?pip[0-9.]*|uv\s+pip)\s+install\s+(.*)$"
_PIP_VALUE_OPTIONS = {"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-c", "--constraint", "-r",
                      "--requirement", "-t", "--target", "--prefix", "--root", "--src", "--trusted-host",
                      "--platform", "--python-version", "--implementation", "--abi", "--progress-bar",
                      "--config-settings", "-C", "--global-option", "--install-option", "--python", "-p", "--upgrade-strategy",
                      "--cache-dir", "--log", "--proxy", "--retries", "--timeout", "--exists-action", "--cert",
                      "--client-cert", "--only-binary", "--no-binary", "--report", "--extra-index"}
_VARIABLE = r"\$\{?([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}?"


def pip_install_targets(words: list[str]) -> list[str]:
    """The words of ``pip install WORDS`` that name what it installs: options and their values
    (``-i URL``, ``-r requirements.txt``, ``--no-cache-dir``) left out."""
    out: list[str] = []
    skip = False
    for token in words:
        if skip:
            skip = False
        elif token.startswith("-"):
            skip = token in _PIP_VALUE_OPTIONS
        else:
            out.append(token)
    return out


def _pins_dockerfile(path: Path, text: str) -> list[Pin]:
    import shlex

    pins: list[Pin] = []
    variables: dict[str, str] = {}
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        first = index
        joined = lines[index]
        while joined.rstrip().endswith("\\") and index + 1 < len(lines):
            index += 1
            joined = joined.rstrip()[:-1] + " " + lines[index]
        index += 1
        instruction = joined.strip().split(None, 1)
        if not instruction:
            continue
        word = instruction[0].upper()
        body = instruction[1] if len(instruction) > 1 else ""
        if word in ("ARG", "ENV"):
            for name, value in re.findall(r"([A-Za-z_][A-Za-z0-9_]*)=(\"[^\"]*\"|'[^']*'|\S*)", body):
                variables[name] = value.strip("\"'")
            continue
        if word != "RUN":
            continue
        body = re.sub(_VARIABLE, lambda m: variables.get(m.group(1), m.group(2) or m.group(0)), body)
        for command in re.split(r"&&|\|\||;|\|", body):
            found = re.search(_PIP, command)
            if found is None:
                continue
            try:
                words = shlex.split(found.group(1))
            except ValueError:
                words = found.group(1).split()
            for token in pip_install_targets(words):
                pin = requirement(token, str(path), None, "RUN pip install")
                if pin is not None:
                    line = next((first + 1 + n for n, raw in enumerate(lines[first:index]) if token in raw or
                                 token.split("=")[0] in raw), first + 1)
                    pins.append(Pin(pin.package, pin.kind, pin.spec, pin.path, line, pin.dialect, pin.ref, pin.release,
                                    pin.via))
    return pins


_SHELL_ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=")


_PIP_COMMAND = re.compile(r"^(?:sudo\s+)?(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*(?:(?:\S*/)?python[0-9.]*\s+-m\s+pip|(?:\S*/)?pip[0-9.]*|uv\s+pip)\s+install\b")


# A script that starts training: its installs are its own run's, not the folder's environment.
_LAUNCHES = re.compile(r"(?m)^[^#\n]*(?:\b(?:deepspeed|torchrun|llamafactory-cli|ray\s+job\s+submit)\s|\baccelerate\s+launch\b"
                       r"|\bswift\s+(?:sft|pt|rlhf|infer|deploy)\b|\bmegatron\s+(?:sft|pt|rlhf)\b|\btorch\.distributed\.(?:run|launch)\b)")


def _pins_shell(path: Path, text: str) -> list[Pin]:
    """``pip install`` commands of a shell script that sets up the environment (an ``install.sh``
    the README runs first), read as a Dockerfile's RUN lines are: the script's own assignments
    fill its ``$VARIABLES``; a comment or `echo pip install ...` installs nothing. A script that
    also launches training pins nothing for the folder: what it installs is its own run's. Each
    command is placed at its first line."""
    if _LAUNCHES.search(text):
        return []
    raw = text.splitlines()
    lines = [""] * len(raw)
    index = 0
    while index < len(raw):
        first, joined = index, raw[index]
        while joined.rstrip().endswith("\\") and index + 1 < len(raw):
            index += 1
            joined = joined.rstrip()[:-1] + " " + raw[index]
        index += 1
        stripped = joined.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if _SHELL_ASSIGNMENT.match(joined):
            lines[first] = "ENV " + re.sub(r"^\s*export\s+", "", joined)
            continue
        installs = [part.strip() for part in re.split(r"&&|\|\||;|\|", joined) if _PIP_COMMAND.match(part.strip())]
        if installs:
            lines[first] = "RUN " + " && ".join(installs)
    return [Pin(pin.package, pin.kind, pin.spec, pin.path, pin.line, pin.dialect, pin.ref, pin.release, "pip install in a script")
            for pin in _pins_dockerfile(path, "\n".join(lines))]


# --------------------------------------------------------------------------------------------
# Lock files: exact versions
# --------------------------------------------------------------------------------------------

_LOCKED = r'(?m)^name\s*=\s*"([A-Za-z0-9._-]+)"\s*\n(?:[^\[\n][^\n]*\n)*?version\s*=\s*"([^"]+)"'


def _pins_lock(path: Path, text: str) -> list[Pin]:
    pins = []
    for match in re.finditer(_LOCKED, text):
        package = package_of(match.group(1))
        if package is not None:
            line = text.count("\n", 0, match.start()) + 1
            pins.append(Pin(package, "lock", f"=={match.group(2)}", str(path), line, release=match.group(2)))
    return pins


# --------------------------------------------------------------------------------------------
# One folder
# --------------------------------------------------------------------------------------------

def _is_dockerfile(name: str) -> bool:
    return name.startswith("Dockerfile") or name.lower().endswith(".dockerfile") or name == "Containerfile"


def _reader_for(name: str):
    """(reader, size limit) for a pin file's name, or None."""
    if name.startswith("requirements") and name.endswith((".txt", ".in")):
        return _pins_requirements, _MAX_BYTES
    if name in _BY_NAME:
        return _BY_NAME[name], _MAX_BYTES
    if name.startswith("environment") and name.endswith((".yml", ".yaml")):
        return _pins_environment, _MAX_BYTES
    if _is_dockerfile(name):
        return _pins_dockerfile, _MAX_BYTES
    if name in ("uv.lock", "poetry.lock", "pdm.lock"):
        return _pins_lock, _MAX_LOCK_BYTES
    if name.endswith((".sh", ".bash")):
        return _pins_shell, _MAX_BYTES
    return None


_BY_NAME = {"pyproject.toml": _pins_pyproject, "setup.py": _pins_setup_py, "setup.cfg": _pins_setup_cfg}
#: Sub-folders whose files count as the folder's own (pip's and Docker's usual layouts).
_SUBFOLDERS = {"requirements": _pins_requirements, "docker": _pins_dockerfile}


@lru_cache(maxsize=2048)  # once per folder and run
def _files(directory: str) -> tuple[tuple[Path, object, int], ...]:
    """(path, reader, size limit) of the pin files of ``directory`` and its pin sub-folders."""
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return ()
    found: list[tuple[Path, object, int]] = []
    for name in names:
        reader = _reader_for(name)
        if reader is not None:
            found.append((Path(directory, name), *reader))
        elif name in _SUBFOLDERS and os.path.isdir(os.path.join(directory, name)):
            try:
                inner = sorted(os.listdir(os.path.join(directory, name)))
            except OSError:
                continue
            for child in inner:
                if (name == "requirements" and child.endswith((".txt", ".in"))) or (name == "docker" and _is_dockerfile(child)):
                    found.append((Path(directory, name, child), _SUBFOLDERS[name], _MAX_BYTES))
    return tuple(found)


@lru_cache(maxsize=4096)  # once per file and run
def _text(path: Path, limit: int) -> str | None:
    try:
        if path.stat().st_size > limit:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


@lru_cache(maxsize=4096)  # once per file and run
def _parsed(path: Path, reader, limit: int, top: str) -> tuple[Pin, ...]:
    text = _text(path, limit)
    if text is None:
        return ()
    if reader is _pins_requirements:
        return tuple(reader(path, text, top=Path(top)))  # includes are shown relative to the folder
    return tuple(reader(path, text))


# How a file that pins a package names it: the distribution (or repository) name standing alone,
# not part of a longer name (`dslint.rules.deepspeed_keys`), in lower case as requirements are
# written (a capitalised `DeepSpeed` is prose); requirements files are always parsed.
_NAMES = {package: "(?<![\\w.-])(?:" + "|".join(re.escape(n) for n in (*PACKAGES[package], *{
    "ms-swift": ("ms_swift", "swift"), "llamafactory": ("llama-factory", "LLaMA-Factory")}.get(package, ())))
    + ")(?![\\w-]|\\.(?!git\\b))" for package in PACKAGES}
_MENTIONS = "|".join(_NAMES.values())
# In pyproject.toml a requirement is a quoted string ("deepspeed>=0.15") or a key (deepspeed = "^0.15"):
# the entry points, paths and prose that name the packages there do not count.
_TOML_NAMES = {package: f'(?m)["\']\\s*{names}|^\\s*["\']?{names}["\']?\\s*=' for package, names in _NAMES.items()}
_TOML_MENTIONS = "|".join(_TOML_NAMES.values())


def pins_in(directory: str, package: str | None = None) -> tuple[Pin, ...]:
    """The pins (of ``package``, or of every training package) that the files of ``directory`` hold.

    A file is read once per run, and parsed only when it names the package (requirements files
    always: they may only include others).
    """
    pins: list[Pin] = []
    for path, reader, limit in _files(directory):
        if reader not in (_pins_requirements, _pins_lock):
            text = _text(path, limit)
            if reader is _pins_pyproject:
                wanted = _TOML_NAMES[package] if package else _TOML_MENTIONS
            else:
                wanted = _NAMES[package] if package else _MENTIONS
            if text is None or not re.search(wanted, text):
                continue
        pins += [p for p in _parsed(path, reader, limit, directory) if package is None or p.package == package]
    unique: dict[tuple, Pin] = {}  # a file both read and included by another counts once
    for pin in pins:
        key = (pin.package, pin.kind, pin.spec, pin.path, pin.line)
        if key not in unique or (unique[key].via and not pin.via):  # read directly beats included
            unique[key] = pin
    return tuple(unique.values())


def _read(path: Path, limit: int = _MAX_BYTES) -> str | None:
    return _text(path, limit)


def clear_cache() -> None:
    _files.cache_clear()
    _text.cache_clear()
    _parsed.cache_clear()


__all__ = ["PACKAGES", "Pin", "clear_cache", "normalize", "package_of", "pins_in", "requirement"]
