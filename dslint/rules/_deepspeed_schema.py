"""What DeepSpeed's schema and release history say about a config's keys (DS2xx): no rules live here.

Read from the shipped schema (``schemas/deepspeed.schema.json``, generated from DeepSpeed's own
pydantic models) and ``schemas/deepspeed-versions.json``: which sections and keys exist, which
releases read them and which reject unknown keys, and the walks of a config along the schema
that the key and value rules share. Nothing imports deepspeed.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Iterator

from dslint.diagnostics import Finding, Severity
from dslint.documents.model import Mapping, Node, Scalar, Sequence
from dslint.rules._deepspeed import bfloat16_read, dotted, is_auto, raw
from dslint.schemas import load_schema

# ---- schema and versions -----------------------------------------------------------------


def schema() -> dict:
    return load_schema("deepspeed")


def versions() -> dict:
    from dslint.evidence.keyhistory import history

    return history()


def resolve(node: dict | None) -> dict:
    """Follow ``$ref`` and pick the object branch of ``anyOf``."""
    root = schema()
    seen = 0
    while isinstance(node, dict) and "$ref" in node and seen < 16:
        node = root["$defs"][node["$ref"].split("/")[-1]]
        seen += 1
    if isinstance(node, dict) and "anyOf" in node:
        for branch in node["anyOf"]:
            branch = resolve(branch)
            if branch.get("type") == "object" or "properties" in branch:
                return branch
    return node or {}


def section(path: tuple[str, ...]) -> dict | None:
    """Schema of the object at ``path`` (``()`` is the top level), or None when unknown."""
    node = schema()
    for key in path:
        props = resolve(node).get("properties", {})
        if key not in props:
            return None
        node = props[key]
    return resolve(node)


def prop(path: tuple[str, ...]) -> dict | None:
    """Schema of the value at ``path`` (unresolved: keeps anyOf/null branches)."""
    if not path:
        return schema()
    parent = section(path[:-1])
    if parent is None:
        return None
    return parent.get("properties", {}).get(path[-1])


def is_strict(node: dict | None) -> bool:
    return bool(node) and node.get("additionalProperties") is False


def schema_version() -> tuple[int, ...]:
    return parse_version(schema().get("x-dslint-deepspeed-version", "0"))


def parse_version(text: Any) -> tuple[int, ...]:
    parts = re.findall(r"\d+", str(text))[:3]
    numbers = tuple(int(p) for p in parts)
    return numbers + (0,) * (3 - len(numbers))


def fmt_version(version: tuple[int, ...]) -> str:
    return ".".join(str(v) for v in version)


class Versions:
    """The DeepSpeed releases a config may run with (dslint.evidence.versions: the setting, the installed
    package or the nearest pin; with none, every release dslint knows), and helpers that turn
    "this fails in these releases" into a finding's severity and message."""

    def __init__(self, use, context):
        from dslint.evidence.versions import candidates

        launch = getattr(use, "launch", None)
        origin = getattr(launch, "origin", None)
        start = getattr(origin, "path", None) or getattr(getattr(use, "document", None), "path", None)
        memo = getattr(context, "memo", None)
        key = ("deepspeed-candidates", start)
        found = memo.get(key) if memo is not None else None
        if found is None:  # asked by many rules of each config and launch: once per file a run
            found = candidates("deepspeed", start, getattr(context, "settings", None))
            if memo is not None:
                memo[key] = found
        config = getattr(use, "config", None)
        if found.unbounded and isinstance(config, Mapping):
            found = _narrowed(found, config, memo)
        self.candidates = found
        self.key = self.candidates.versions  # hashable: what the memoized walks are keyed on
        self.parsed = _parsed_versions(self.key)

    @property
    def label(self) -> str:
        return f"DeepSpeed {self.key[0]}" if len(self.key) == 1 else "DeepSpeed"

    def since(self, version: str | None) -> tuple[str, ...]:
        """The candidates at or after ``version`` (all of them when it is None)."""
        if version is None:
            return self.key
        bound = parse_version(version)
        return tuple(v for v in self.key if self.parsed[v] >= bound)

    def before(self, version: str | None) -> tuple[str, ...]:
        if version is None:
            return ()
        bound = parse_version(version)
        return tuple(v for v in self.key if self.parsed[v] < bound)

    def judge(self, failing, spelling: bool = False):
        failing = set(failing)
        return self.candidates.judge(lambda v: v in failing, spelling)

    def qualify(self, finding: Finding, failing, spelling: bool = False) -> Finding | None:
        """``finding`` as it holds in ``failing``: unchanged when that is every candidate, info
        naming them when it is some, None when it is none."""
        verdict = self.judge(failing, spelling)
        if not verdict.anywhere:
            return None
        if not verdict.everywhere:
            finding.note = verdict.qualify(finding.note)
            finding.severity = Severity.INFO
        return finding

    def within(self, findings, failing, spelling: bool = False):
        """Each of ``findings`` as it holds in ``failing`` (see qualify)."""
        for finding in findings:
            found = self.qualify(finding, failing, spelling)
            if found is not None:
                yield found


PYDANTIC2 = "0.15.0"  # deepspeed/runtime/config_utils.py: pydantic 1 (`class Config`) to 0.14.5, ConfigDict from 0.15.0


def extra_forbidden(versions: "Versions", failing=None) -> str:
    """pydantic's error for an unknown key of a strict section, as the failing candidates word it."""
    failing = tuple(versions.key if failing is None else failing)
    bound = parse_version(PYDANTIC2)
    new = [v for v in failing if parse_version(v) >= bound]
    if len(new) == len(failing):
        return "'Extra inputs are not permitted'"
    if not new:
        return "'extra fields not permitted'"
    return f"'Extra inputs are not permitted' ('extra fields not permitted' before DeepSpeed {PYDANTIC2})"


def _narrowed(found, config: Mapping, memo: dict | None):
    """With nothing pinning DeepSpeed, the releases that read every key the config uses
    (dslint.evidence.keyhistory.narrowed), once per config and candidates a run."""
    from dslint.evidence.keyhistory import narrowed

    key = ("deepspeed-narrowed", id(config))
    cached = memo.get(key) if memo is not None else None
    if cached is not None and cached[0] is found:
        return cached[1]
    out = narrowed(found, config)
    if memo is not None:
        memo[key] = (found, out)
    return out


@lru_cache(maxsize=64)
def _parsed_versions(versions: tuple[str, ...]) -> dict[str, tuple[int, ...]]:
    return {v: parse_version(v) for v in versions}


def key_history(dotted: str) -> dict:
    from dslint.evidence.keyhistory import key

    return key(dotted)


# ---- walking the config along the schema ---------------------------------------------------


_KNOWN_KEYS: dict[tuple, dict] = {}


def known_keys(section: dict, versions: Versions, path: tuple) -> dict[str, dict]:
    """Keys of ``section`` that exist in some candidate (removed ones included until removal).

    Computed once per (schema section, newest candidate, path): every config of a run asks the same.
    """
    newest = parse_version(versions.candidates.newest)
    cache_key = (id(section), newest, path)
    cached = _KNOWN_KEYS.get(cache_key)
    if cached is not None and cached[0] is section:
        return cached[1]
    out = {}
    for key, spec in section.get("properties", {}).items():
        introduced = key_history(dotted(path + (key,))).get("introduced")
        if introduced is None or newest >= parse_version(introduced):
            out[key] = spec
    _KNOWN_KEYS[cache_key] = (section, out)
    return out


def introduced_in(path: tuple) -> str | None:
    from dslint.evidence.keyhistory import introduced

    return introduced(dotted(path))


@lru_cache(maxsize=4096)
def _read_in(path: tuple, version: tuple) -> bool:
    """Does the release ``version`` read the key at ``path``? (Every config of every launch asks.)"""
    name = dotted(path)
    if name == "compile" and (version < parse_version("0.13.2") or parse_version("0.14.4") <= version < parse_version("0.16.6")):
        return False  # `compile` came in 0.13.2 (CompileConfig), and was not read between 0.14.4 and 0.16.5
    introduced = key_history(name).get("introduced")
    return introduced is None or version >= parse_version(introduced)


def reading(path: tuple, section: dict, versions: Versions) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(candidates that read the section, those of them that reject unknown keys in it)."""
    read = tuple(v for v in versions.key if _read_in(path, versions.parsed[v]))
    if not is_strict(section):
        return read, ()
    since = key_history(dotted(path)).get("strict_since")
    bound = parse_version(since) if since else ()
    return read, tuple(v for v in read if versions.parsed[v] >= bound)


_SECTIONS: dict[tuple, tuple] = {}


def sections(config: Mapping, versions: Versions):
    """(path, mapping, schema, strict) for every mapping of the config the schema describes that
    some candidate reads; ``strict`` is the candidates in which it rejects unknown keys (empty:
    lax in all).

    Memoized per config and candidate set: every DS2xx rule walks the same config, once per
    launch that uses it.
    """
    cache_key = (id(config), versions.key)
    hit = _SECTIONS.get(cache_key)
    if hit is not None and hit[0] is config:
        return iter(hit[1])
    if len(_SECTIONS) > 1024:
        _SECTIONS.clear()
    found = list(_sections(config, versions))
    _SECTIONS[cache_key] = (config, found)
    return iter(found)


def _sections(config: Mapping, versions: Versions):
    stack = [((), config, schema())]
    while stack:
        path, mapping, node = stack.pop()
        section = resolve(node)
        strict: tuple[str, ...] = ()
        if path:
            read, strict = reading(path, section, versions)
            if not read:
                continue
        yield path, mapping, section, strict
        props = section.get("properties", {})
        for item in mapping.entries:
            spec = props.get(item.key)
            if spec is None or not isinstance(item.value, Mapping):
                continue
            if not path and item.key == "bfloat16" and not bfloat16_read(mapping):
                continue  # DeepSpeed reads `bfloat16` only when `bf16` is absent or null
            child = resolve(spec)
            if "properties" in child or child.get("additionalProperties") is False:
                stack.append((path + (item.key,), item.value, spec))


def described_entries(config: Mapping, versions: Versions, strict: bool):
    """(path, entry, spec, versions) for every entry with a schema of the strict (or lax)
    sections, with the candidates that validate (or read) it; values that are exactly "auto"
    are skipped (DeepSpeed drops those before validating), and so is the search space of an
    autotuning config: with `autotuning.enabled`, `deepspeed --autotuning` takes a list as the
    values to try (autotuning/utils.py `get_tuning_keys`) and the ZeRO stage may be a list or
    "all" (autotuning/autotuner.py:432-434); it runs DeepSpeed with one value of each at a time."""
    tuning = autotuning_enabled(config)
    for path, mapping, section, strict_in in sections(config, versions):
        if bool(strict_in) != strict:
            continue
        props = known_keys(section, versions, path)
        read = strict_in if strict else reading(path, section, versions)[0] if path else versions.key
        for item in mapping.entries:
            spec = props.get(item.key)
            if spec is None or is_auto(item.value):
                continue
            if tuning and (isinstance(item.value, Sequence) or (path + (item.key,) == ("zero_optimization", "stage")
                                                               and raw(item.value) == "all")):
                continue
            introduced = introduced_in(path + (item.key,))
            yield path, item, spec, read if introduced is None else tuple(
                v for v in read if versions.parsed[v] >= parse_version(introduced))


def autotuning_enabled(config: Mapping) -> bool:
    section = config.get("autotuning")
    return isinstance(section, Mapping) and raw(section.get("enabled")) is True


# Sections read with dict.get whose whole key set DeepSpeed reads when it parses the config (so a
# key outside it is ignored). Others (checkpoint, autotuning, data_efficiency's nested blocks,
# optimizer/scheduler params, pipeline) are handed on to code that reads more keys later.
LAX_CHECKED = {
    (),
    ("activation_checkpointing",),
    ("aio",),
    ("flops_profiler",),
    ("data_types",),
    ("torch_autocast",),
    ("optimizer",),
    ("scheduler",),
    ("timers",),
    ("expert_parallel",),
    ("data_efficiency",),
    ("data_efficiency", "data_routing"),
}


def read_scalars(config: Mapping, versions: Versions) -> Iterator[tuple[tuple, Scalar]]:
    """The scalars DeepSpeed reads: none under a key it ignores or rejects as unknown.

    The key is the finding there (`ignored-key`, `unknown-key`); its value reaches nobody, so
    judging it as well would report one mistake twice.
    """
    unknown: set[int] = set()
    for path, mapping, section, strict in sections(config, versions):
        if not strict and path not in LAX_CHECKED:
            continue  # handed on to code that reads more keys later
        known = known_keys(section, versions, path)
        for item in mapping.entries:
            if item.key not in known and not key_history(dotted(path + (item.key,))).get("renamed_to"):
                unknown.add(id(item))

    def walk(node: Node, path: tuple):
        if isinstance(node, Scalar):
            yield path, node
        elif isinstance(node, Mapping):
            for item in node.entries:
                if id(item) not in unknown:
                    yield from walk(item.value, path + (item.key,))
        elif isinstance(node, Sequence):
            for index, item in enumerate(node.items):
                yield from walk(item, path + (index,))

    return walk(config, ())


