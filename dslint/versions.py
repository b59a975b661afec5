"""Which version of each training package a launch runs with, and where that came from.

Nothing is imported. In order of precedence:

1. ``<package>-version`` settings (``transformers-version = "4.45.2"``): they win.
2. With ``detect-installed-versions = true``, the distribution installed in the environment
   dslint runs in (``importlib.metadata``). Off by default: pre-commit and the GitHub action run
   dslint in an environment of their own.
3. Pins in the repository, nearest folder first, from the linted file's folder up to the
   repository root: ``requirements*.txt`` (and ``requirements/*.txt``), ``pyproject.toml``
   (``[project]`` dependencies and optional dependencies, ``[tool.poetry.dependencies]``),
   ``setup.py`` (``install_requires``/``extras_require`` literals, read with ``ast``),
   ``setup.cfg`` (``install_requires``) and ``environment.yml`` (conda and pip entries).

A pin that is a range (``transformers>=4.41,<4.46``) gives its lowest allowed version as the one
assumed, and keeps the upper bound so that rules can tell "every allowed version" from "some".
"""

from __future__ import annotations

import ast
import configparser
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

#: package -> distribution names it is published under (the first is the canonical one).
PACKAGES: dict[str, tuple[str, ...]] = {
    "deepspeed": ("deepspeed",),
    "transformers": ("transformers",),
    "accelerate": ("accelerate",),
    "trl": ("trl",),
    "ms-swift": ("ms-swift",),
    "llamafactory": ("llamafactory", "llmtuner"),
}
#: package -> the Settings attribute of its ``<package>-version`` setting.
SETTINGS = {
    "deepspeed": "deepspeed_version",
    "transformers": "transformers_version",
    "accelerate": "accelerate_version",
    "trl": "trl_version",
    "ms-swift": "swift_version",
    "llamafactory": "llamafactory_version",
}

_REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(\(?\s*[<>=!~][^;#]*)?\s*(?:;.*)?$")
_CLAUSE = re.compile(r"^\s*(===|==|~=|>=|<=|!=|>|<|\^|~|=)?\s*v?([0-9][0-9A-Za-z.*+!-]*)\s*$")


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


_DIST_TO_PACKAGE = {normalize(d): pkg for pkg, dists in PACKAGES.items() for d in dists}
_DIST_TO_PACKAGE["ms-swift"] = "ms-swift"


def parse_version(text: str | None) -> tuple[int, ...]:
    """``"4.45.2"`` -> (4, 45, 2); pre-release and local parts are dropped."""
    if not text:
        return ()
    parts = []
    for piece in str(text).split("+")[0].split("."):
        match = re.match(r"\d+", piece)
        if match is None:
            break
        parts.append(int(match.group()))
        if match.end() != len(piece):
            break
    return tuple(parts)


def compare(a: str | tuple, b: str | tuple) -> int:
    ta = a if isinstance(a, tuple) else parse_version(a)
    tb = b if isinstance(b, tuple) else parse_version(b)
    n = max(len(ta), len(tb))
    ta, tb = ta + (0,) * (n - len(ta)), tb + (0,) * (n - len(tb))
    return (ta > tb) - (ta < tb)


@dataclass(frozen=True)
class VersionInfo:
    """A package version and where it came from."""

    package: str
    version: str  # the exact version, or the lowest a range allows
    spec: str  # as written: "==4.45.2", ">=4.41,<4.46", "4.45.2"
    origin: str  # "transformers-version in pyproject.toml", "requirements.txt:3", ...
    kind: str  # "setting" | "installed" | "pin"
    exact: bool = True
    upper: str | None = None  # exclusive upper bound of a range
    path: str | None = None
    line: int | None = None

    def describe(self) -> str:
        if self.exact:
            return f"{self.package} {self.version} ({self.origin})"
        return f"{self.package} {self.spec} ({self.origin}; assuming {self.version}, the lowest it allows)"


def _spec_bounds(spec: str) -> tuple[str | None, bool, str | None]:
    """(lowest version, exact, exclusive upper bound) of a version specifier."""
    spec = spec.strip().strip("()").strip()
    if not spec:
        return None, False, None
    lowest: str | None = None
    upper: str | None = None
    exact = False
    for clause in re.split(r"\s*,\s*|\s+", spec):
        if not clause:
            continue
        match = _CLAUSE.match(clause)
        if match is None:
            continue
        op, ver = match.group(1) or "==", match.group(2)
        if op in ("==", "===", "=") and "*" not in ver:
            return ver, True, None
        if op in ("==", "=") and "*" in ver:
            base = ver.replace(".*", "").rstrip(".*")
            lowest = base
            nums = parse_version(base)
            if nums:
                upper = ".".join(map(str, nums[:-1] + (nums[-1] + 1,)))
        elif op in (">=", ">", "~=", "^", "~"):
            if lowest is None or compare(ver, lowest) > 0:
                lowest = ver
            if op in ("~=", "^", "~"):
                nums = parse_version(ver)
                if op == "^" and nums:
                    head = next((i for i, n in enumerate(nums) if n), len(nums) - 1)
                    bump = nums[: head] + (nums[head] + 1,)
                else:
                    bump = nums[:-2] + (nums[-2] + 1,) if len(nums) >= 2 else (nums[0] + 1,)
                upper = ".".join(map(str, bump))
        elif op in ("<", "<="):
            upper = ver if op == "<" else _next_patch(ver)
    return lowest, exact, upper


def _next_patch(ver: str) -> str:
    nums = parse_version(ver) or (0,)
    return ".".join(map(str, nums[:-1] + (nums[-1] + 1,)))


# --------------------------------------------------------------------------------------------
# Pins in repository files
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Pin:
    package: str
    spec: str
    path: str
    line: int | None


def _requirement(text: str) -> tuple[str, str] | None:
    text = text.split("#", 1)[0].strip()
    if not text or text.startswith(("-", "git+", "http:", "https:", "file:")):
        return None
    if " @ " in text:
        return None
    match = _REQ.match(text)
    if match is None:
        return None
    package = _DIST_TO_PACKAGE.get(normalize(match.group(1)))
    if package is None:
        return None
    return package, (match.group(3) or "").strip()


def _line_of(text: str, needle: str) -> int | None:
    index = text.find(needle)
    return text.count("\n", 0, index) + 1 if index >= 0 else None


def _pins_requirements(path: Path, text: str) -> list[_Pin]:
    pins = []
    for number, line in enumerate(text.splitlines(), 1):
        found = _requirement(line)
        if found:
            pins.append(_Pin(found[0], found[1], str(path), number))
    return pins


def _pins_from_strings(path: Path, text: str, items: list[Any]) -> list[_Pin]:
    pins = []
    for item in items:
        if isinstance(item, str):
            found = _requirement(item)
            if found:
                pins.append(_Pin(found[0], found[1], str(path), _line_of(text, item)))
    return pins


def _pins_pyproject(path: Path, text: str) -> list[_Pin]:
    import tomllib

    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return []
    items: list[Any] = []
    project = data.get("project", {}) if isinstance(data.get("project"), dict) else {}
    items += project.get("dependencies", []) or []
    optional = project.get("optional-dependencies", {}) or {}
    if isinstance(optional, dict):
        for group in optional.values():
            items += group if isinstance(group, list) else []
    pins = _pins_from_strings(path, text, items)
    poetry = data.get("tool", {}).get("poetry", {}) if isinstance(data.get("tool"), dict) else {}
    for table in (poetry.get("dependencies", {}), *(g.get("dependencies", {}) for g in (poetry.get("group", {}) or {}).values() if isinstance(g, dict))):
        if not isinstance(table, dict):
            continue
        for name, value in table.items():
            package = _DIST_TO_PACKAGE.get(normalize(name))
            spec = value.get("version") if isinstance(value, dict) else value
            if package and isinstance(spec, str):
                pins.append(_Pin(package, spec if spec != "*" else "", str(path), _line_of(text, name)))
    return pins


def _pins_setup_py(path: Path, text: str) -> list[_Pin]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    pins = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.keyword) or node.arg not in ("install_requires", "extras_require"):
            continue
        for const in ast.walk(node.value):
            if isinstance(const, ast.Constant) and isinstance(const.value, str):
                found = _requirement(const.value)
                if found:
                    pins.append(_Pin(found[0], found[1], str(path), const.lineno))
    return pins


def _pins_setup_cfg(path: Path, text: str) -> list[_Pin]:
    parser = configparser.ConfigParser()
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
    return _pins_from_strings(path, text, [i.strip() for i in items if i.strip()])


def _pins_environment(path: Path, text: str) -> list[_Pin]:
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return []
    if not isinstance(data, dict):
        return []
    pins = []
    for dep in data.get("dependencies", []) or []:
        if isinstance(dep, str):
            conda = re.match(r"^\s*(?:[\w-]+::)?([A-Za-z0-9._-]+)\s*(?:=\s*([0-9][\w.*]*))?", dep)
            if conda is None:
                continue
            package = _DIST_TO_PACKAGE.get(normalize(conda.group(1)))
            rest = dep[conda.end():].strip()
            spec = f"=={conda.group(2)}" if conda.group(2) else rest
            if package:
                pins.append(_Pin(package, spec, str(path), _line_of(text, dep)))
        elif isinstance(dep, dict):
            pins += _pins_from_strings(path, text, [p for p in dep.get("pip", []) or [] if isinstance(p, str)])
    return pins


_READERS = (
    (re.compile(r"^requirements.*\.(txt|in)$"), _pins_requirements),
    (re.compile(r"^pyproject\.toml$"), _pins_pyproject),
    (re.compile(r"^setup\.py$"), _pins_setup_py),
    (re.compile(r"^setup\.cfg$"), _pins_setup_cfg),
    (re.compile(r"^environment.*\.ya?ml$"), _pins_environment),
)


@lru_cache(maxsize=1024)
def _pins_in(directory: str) -> tuple[_Pin, ...]:
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return ()
    files: list[Path] = []
    for name in names:
        if any(pattern.match(name) for pattern, _ in _READERS):
            files.append(Path(directory, name))
    sub = Path(directory, "requirements")
    if sub.is_dir():
        files += sorted(p for p in sub.glob("*.txt"))
    pins: list[_Pin] = []
    for path in files:
        reader = next((r for pattern, r in _READERS if pattern.match(path.name)), _pins_requirements)
        try:
            if path.stat().st_size > 1_000_000:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        pins += reader(path, text)
    return tuple(pins)


@lru_cache(maxsize=4096)  # asked for every folder above every file: once per folder is enough
def _is_root(directory: Path) -> bool:
    """The repository (or project) root: pins above it belong to something else."""
    return any((directory / marker).exists() for marker in (".git", "pyproject.toml", "setup.py", "setup.cfg"))


def repository_pins(start: str | Path, package: str) -> list[_Pin]:
    """Pins of ``package`` in the nearest folder (from ``start`` upward) that pins it."""
    return list(_repository_pins(os.path.abspath(start), package))  # absolute: a relative path depends on the cwd


@lru_cache(maxsize=4096)  # every rule asks, for every file: once per (file, package)
def _repository_pins(start: str, package: str) -> tuple[_Pin, ...]:
    directory = Path(start).resolve()
    if directory.is_file() or not directory.exists():
        directory = directory.parent
    return _folder_pins(str(directory), package)


@lru_cache(maxsize=4096)  # files of one folder, and folders of one repository, share the walk up
def _folder_pins(directory: str, package: str) -> tuple[_Pin, ...]:
    pins = tuple(p for p in _pins_in(directory) if p.package == package)
    if pins or _is_root(Path(directory)):
        return pins
    parent = os.path.dirname(directory)
    return () if parent == directory else _folder_pins(parent, package)


# --------------------------------------------------------------------------------------------
# The answer
# --------------------------------------------------------------------------------------------


def installed(package: str) -> str | None:
    from importlib import metadata

    for dist in PACKAGES[package]:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


def _display(path: str, root: Path | None) -> str:
    try:
        return os.path.relpath(path, root or Path.cwd())
    except ValueError:
        return path


def version_of(package: str, start: str | Path | None, settings: Any = None) -> VersionInfo | None:
    """The version of ``package`` for a file at ``start``, or None when nothing says."""
    setting = getattr(settings, SETTINGS[package], None) if settings is not None else None
    if setting is not None and getattr(setting, "value", None):
        value = str(setting.value)
        lowest, exact, upper = _spec_bounds(value) if re.match(r"^\s*[<>=!~^]", value) else (value, True, None)
        return VersionInfo(package, lowest or value, value, setting.origin, "setting", exact, upper)
    if settings is not None and getattr(settings, "detect_installed_versions", None) is not None \
            and getattr(settings.detect_installed_versions, "value", False):
        found = installed(package)
        if found:
            return VersionInfo(package, found, found, "installed in the environment dslint runs in (detect-installed-versions)",
                               "installed")
    if start is None:
        return None
    pins = repository_pins(start, package)
    root = getattr(settings, "root", None)
    best: VersionInfo | None = None
    for pin in pins:
        lowest, exact, upper = _spec_bounds(pin.spec)
        where = _display(pin.path, root) + (f":{pin.line}" if pin.line else "")
        shown = f"{PACKAGES[package][0]}{pin.spec}" if pin.spec else PACKAGES[package][0]
        if lowest is None and upper is None:
            continue  # unpinned: says nothing about the version
        info = VersionInfo(package, lowest or "0", pin.spec, f"{shown} in {where}", "pin", exact, upper, pin.path, pin.line)
        if best is None or (info.exact and not best.exact):
            best = info
    return best


def clear_cache() -> None:
    _pins_in.cache_clear()
    _is_root.cache_clear()
    _repository_pins.cache_clear()
    _folder_pins.cache_clear()


__all__ = ["PACKAGES", "SETTINGS", "VersionInfo", "compare", "installed", "parse_version", "repository_pins",
           "version_of"]
