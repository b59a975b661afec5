"""Settings: ``[tool.dslint]`` in pyproject.toml, or ``dslint.toml`` / ``.dslint.toml``.

As in ruff, each file is linted with the nearest configuration above it: the first of
``.dslint.toml``, ``dslint.toml`` or a pyproject.toml with a ``[tool.dslint]`` table in its
folder or the folders above (``Scopes``). A file with none above it gets the one found upward
from the working directory. ``--config`` and ``--no-config`` give every file the same settings.
Command-line options win over every file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dslint.diagnostics import Severity

CONFIG_NAMES = (".dslint.toml", "dslint.toml", "pyproject.toml")
TARGETS = ("gpu", "npu")
HARDWARE = (
    "a100", "a100-40gb", "a100-80gb", "h100", "h100-80gb", "h200", "h800", "a800", "l40s", "a10", "a10g",
    "l4", "rtx3090", "rtx4090", "v100", "v100-16gb", "v100-32gb", "t4", "p100",
    "ascend-910a", "ascend-910b", "ascend-910c",
)

KEYS = {
    "select": list,
    "ignore": list,
    "extend-select": list,
    "per-file-ignores": dict,
    "severity": dict,
    "fail-on": str,
    "exclude": list,
    "extend-exclude": list,
    "force-exclude": bool,
    "respect-gitignore": bool,
    "world-size": int,
    "target": str,
    "hardware": str,
    "deepspeed-version": str,
    "transformers-version": str,
    "accelerate-version": str,
    "trl-version": str,
    "swift-version": str,
    "llamafactory-version": str,
    "detect-installed-versions": bool,
}
# Package-version settings: key -> Settings attribute (read by dslint.evidence.versions).
VERSION_KEYS = {
    "transformers-version": "transformers_version",
    "accelerate-version": "accelerate_version",
    "trl-version": "trl_version",
    "swift-version": "swift_version",
    "llamafactory-version": "llamafactory_version",
}


class ConfigError(Exception):
    """A settings problem: reported as a usage error (exit 2)."""


@dataclass
class Setting:
    """A value with where it came from, for diagnostics' ``related`` entries."""

    value: Any
    origin: str


@dataclass
class Settings:
    """The settings files are linted with."""

    select: list[str] = field(default_factory=lambda: ["ALL"])
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    severity: dict[str, Severity] = field(default_factory=dict)
    fail_on: Severity = Severity.WARNING
    exclude: list[str] = field(default_factory=list)
    extend_exclude: list[str] = field(default_factory=list)
    force_exclude: bool = False  # exclusions apply to files named on the command line too (pre-commit)
    respect_gitignore: bool = True
    # --exclude replaces `exclude`, --extend-exclude adds to it; their globs are relative to the working directory
    command_line_exclude: list[str] | None = None
    command_line_extend_exclude: list[str] = field(default_factory=list)
    world_size: Setting | None = None
    target: Setting | None = None
    hardware: Setting | None = None
    deepspeed_version: Setting | None = None
    transformers_version: Setting | None = None
    accelerate_version: Setting | None = None
    trl_version: Setting | None = None
    swift_version: Setting | None = None
    llamafactory_version: Setting | None = None
    detect_installed_versions: Setting | None = None  # opt-in: importlib.metadata of dslint's environment
    device_memory: Setting | None = None  # bytes per device (--device-memory); else from hardware
    path: Path | None = None  # the config file used, if any
    root: Path = field(default_factory=Path.cwd)  # globs are relative to it

    def exclusions(self, cwd: Path | None = None) -> list[tuple[str, Path, str]]:
        """Every exclusion glob with the folder it is relative to and where it was set."""
        cwd = cwd or Path.cwd()
        where = ""
        if self.path:
            try:
                where = f" in {os.path.relpath(self.path, cwd)}"
            except ValueError:
                where = f" in {self.path}"
        out = []
        if self.command_line_exclude is not None:
            out += [(glob, cwd, "--exclude") for glob in self.command_line_exclude]
        else:
            out += [(glob, self.root, f"exclude{where}") for glob in self.exclude]
        out += [(glob, self.root, f"extend-exclude{where}") for glob in self.extend_exclude]
        out += [(glob, cwd, "--extend-exclude") for glob in self.command_line_extend_exclude]
        return out


def find_config(start: Path) -> Path | None:
    for directory in (start, *start.parents):
        found = _config_in(directory)
        if found is not None:
            return found
    return None


def _has_tool_table(path: Path) -> bool:
    import tomllib

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if "dslint" not in text:
        return False
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return "[tool.dslint" in text  # let loading report the TOML error if it is meant for dslint
    tool = data.get("tool")
    return isinstance(tool, dict) and "dslint" in tool


def load_settings(path: Path | None, *, search_from: Path | None = None) -> Settings:
    if path is None and search_from is not None:
        path = find_config(search_from)
    if path is None:
        return Settings()
    table = _read_table(path)
    settings = Settings(path=path, root=path.parent)
    apply_table(settings, table, str(path))
    return settings


def _read_table(path: Path) -> dict:
    import tomllib

    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    if path.name == "pyproject.toml":
        data = data.get("tool", {}).get("dslint", {})
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: [tool.dslint] must be a table")
    return data


def apply_table(settings: Settings, table: dict, origin: str) -> None:
    for key, value in table.items():
        if key not in KEYS:
            close = _close_matches(key, KEYS, cutoff=0.6)
            hint = f"; did you mean '{close[0]}'?" if close else f"; known settings: {', '.join(KEYS)}"
            raise ConfigError(f"{origin}: unknown setting '{key}'{hint}")
        expected = KEYS[key]
        if expected is list and isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise ConfigError(f"{origin}: '{key}' must be {_TYPE_NAMES[expected]}, not {_type_name(value)}")
        _check_members(key, value, origin)
        _apply(settings, key, value, f"{key} in {origin}")


_TYPE_NAMES = {list: "a list of strings", dict: "a table", str: "a string", int: "an integer", bool: "true or false"}


def _type_name(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list", dict: "a table"}.get(
        type(value), type(value).__name__
    )


def _check_members(key: str, value: Any, origin: str) -> None:
    """Lists hold strings; per-file-ignores maps globs to code lists; severity maps codes to strings."""
    if isinstance(value, list):
        for item in value:
            if not isinstance(item, str):
                raise ConfigError(f"{origin}: '{key}' must be a list of strings, but holds {_type_name(item)} ({item!r})")
    elif key == "per-file-ignores":
        for glob, codes in value.items():
            if isinstance(codes, str):
                continue
            if not isinstance(codes, list) or not all(isinstance(code, str) for code in codes):
                raise ConfigError(f"{origin}: per-file-ignores '{glob}' must be a list of rule codes or names, not {_type_name(codes)}")
    elif key == "severity":
        for code, level in value.items():
            if not isinstance(level, str):
                raise ConfigError(f"{origin}: severity of '{code}' must be a string (error, warning or info), not {_type_name(level)}")


def _apply(settings: Settings, key: str, value: Any, origin: str) -> None:
    if key in ("select", "ignore", "extend-select", "exclude", "extend-exclude"):
        setattr(settings, key.replace("-", "_"), [str(v) for v in value])
    elif key in ("force-exclude", "respect-gitignore"):
        setattr(settings, key.replace("-", "_"), value)
    elif key in VERSION_KEYS:
        _set_version(settings, key, value, origin)
    elif key in _SETTERS:
        _SETTERS[key](settings, value, origin)


def _set_per_file_ignores(settings: Settings, value: Any, origin: str) -> None:
    settings.per_file_ignores = {str(glob): _as_list(codes) for glob, codes in value.items()}


def _set_severity(settings: Settings, value: Any, origin: str) -> None:
    try:
        settings.severity = {str(k): Severity.parse(str(v)) for k, v in value.items()}
    except ValueError as exc:
        raise ConfigError(f"{origin}: {exc}") from None


def _set_fail_on(settings: Settings, value: Any, origin: str) -> None:
    try:
        settings.fail_on = Severity.parse(value)
    except ValueError as exc:
        raise ConfigError(f"{origin}: {exc}") from None


def _set_world_size(settings: Settings, value: Any, origin: str) -> None:
    if value < 1:
        raise ConfigError(f"{origin}: world-size must be at least 1")
    settings.world_size = Setting(value, origin)


def _close_matches(word: str, known, cutoff: float = 0.6) -> list[str]:
    """The known word closest to a misspelt one (difflib is imported only for an error: 1 ms a run)."""
    import difflib

    return difflib.get_close_matches(word, known, n=1, cutoff=cutoff)


def _set_target(settings: Settings, value: Any, origin: str) -> None:
    if value not in TARGETS:
        raise ConfigError(f"{origin}: target must be one of {', '.join(TARGETS)}")
    settings.target = Setting(value, origin)


def _set_hardware(settings: Settings, value: Any, origin: str) -> None:
    normalized = value.lower()
    if normalized not in HARDWARE:
        close = _close_matches(normalized, HARDWARE)
        hint = f"; did you mean '{close[0]}'?" if close else f"; known: {', '.join(HARDWARE)}"
        raise ConfigError(f"{origin}: unknown hardware '{value}'{hint}")
    settings.hardware = Setting(normalized, origin)


def _set_deepspeed_version(settings: Settings, value: Any, origin: str) -> None:
    settings.deepspeed_version = Setting(value, origin)


def _set_version(settings: Settings, key: str, value: Any, origin: str) -> None:
    text = value.strip()
    if not text or not (text[0].isdigit() or text[0] in "<>=!~^"):
        raise ConfigError(f"{origin}: {key} must be a version such as '4.45.2' or a specifier such as '>=4.41,<4.46'")
    setattr(settings, VERSION_KEYS[key], Setting(text, origin))


def _set_detect_installed_versions(settings: Settings, value: Any, origin: str) -> None:
    settings.detect_installed_versions = Setting(value, origin)


# The keys whose value is checked or converted on its way into Settings (after _validate's type checks).
_SETTERS = {
    "per-file-ignores": _set_per_file_ignores,
    "severity": _set_severity,
    "fail-on": _set_fail_on,
    "world-size": _set_world_size,
    "target": _set_target,
    "hardware": _set_hardware,
    "deepspeed-version": _set_deepspeed_version,
    "detect-installed-versions": _set_detect_installed_versions,
}


def _as_list(codes: Any) -> list[str]:
    if isinstance(codes, str):
        return [part.strip() for part in codes.split(",") if part.strip()]
    return [str(code) for code in codes]



CONFIG_FILE_NAMES = frozenset(CONFIG_NAMES)


class Scopes:
    """The settings of each folder: its nearest configuration file, as ruff resolves them.

    ``fallback`` is for files with no configuration above them (the one found upward from the
    working directory, or the defaults). ``adjust`` applies the command line to every settings
    object this loads. A fixed scope (``--config``, ``--no-config``, library use) gives one
    settings object everywhere. The same file always gives the same object, so runs can group
    files by settings.
    """

    def __init__(self, fallback: Settings, *, hierarchical: bool = True, adjust=None):
        self.fallback = fallback
        self.hierarchical = hierarchical
        self._adjust = adjust or (lambda settings: None)
        self._by_folder: dict[str, Settings] = {}
        self._by_file: dict[str, Settings] = {}
        if fallback.path is not None:
            self._by_file[os.path.abspath(fallback.path)] = fallback

    @classmethod
    def fixed(cls, settings: Settings) -> "Scopes":
        return cls(settings, hierarchical=False)

    @property
    def loaded(self) -> list[Settings]:
        """Every settings object handed out so far (the fallback first)."""
        seen = {id(self.fallback): self.fallback}
        for settings in self._by_file.values():
            seen.setdefault(id(settings), settings)
        return list(seen.values())

    def at(self, folder: Path | str, names=None) -> Settings:
        """The settings for files in ``folder``; ``names`` (the folder's listing, if known) saves the look-ups."""
        if not self.hierarchical:
            return self.fallback
        key = os.path.abspath(folder)
        found = self._by_folder.get(key)
        if found is not None:
            return found
        if names is not None and CONFIG_FILE_NAMES.isdisjoint(names):
            own = None  # the listing holds no configuration file: no look-up needed
        else:
            own = _config_in(Path(key), names if names is None or isinstance(names, (set, frozenset)) else set(names))
        if own is not None:
            found = self._load(own)
        else:
            parent = os.path.dirname(key)
            found = self.at(parent) if parent != key else self.fallback
        self._by_folder[key] = found
        return found

    def _load(self, path: Path) -> Settings:
        key = os.path.abspath(path)
        if key not in self._by_file:
            settings = load_settings(path)
            self._adjust(settings)
            self._by_file[key] = settings
        return self._by_file[key]


def _config_in(folder: Path, names=None) -> Path | None:
    for name in CONFIG_NAMES:
        if names is not None and name not in names:
            continue
        candidate = folder / name
        if candidate.is_file() and (name != "pyproject.toml" or _has_tool_table(candidate)):
            return candidate
    return None


def describe(settings: Settings) -> list[str]:
    """``key = value`` lines of every setting, as written in a configuration file, each set one
    with where it came from (``--show-settings``)."""
    lines = [f"configuration file = {str(settings.path) if settings.path else '(none: the defaults)'}"]
    for name in ("select", "extend-select", "ignore", "per-file-ignores", "severity", "fail-on", "exclude", "extend-exclude",
                 "force-exclude", "respect-gitignore"):
        value = getattr(settings, name.replace("-", "_"))
        if isinstance(value, Severity):
            value = value.label
        elif isinstance(value, dict):
            value = {key: v.label if isinstance(v, Severity) else v for key, v in value.items()}
        lines.append(f"{name} = {_toml(value)}")
    if settings.command_line_exclude is not None:
        lines.append(f"exclude (--exclude) = {_toml(settings.command_line_exclude)}")
    if settings.command_line_extend_exclude:
        lines.append(f"extend-exclude (--extend-exclude) = {_toml(settings.command_line_extend_exclude)}")
    for name in ("world-size", "target", "hardware", "deepspeed-version", *VERSION_KEYS, "detect-installed-versions", "device-memory"):
        found = getattr(settings, VERSION_KEYS.get(name, name.replace("-", "_")))
        lines.append(f"{name} = {_toml(found.value)}  # {found.origin}" if found is not None else f"{name} = (not set)")
    return lines


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_toml(str(k))} = {_toml(v)}" for k, v in value.items()) + "}"
    return str(value)
