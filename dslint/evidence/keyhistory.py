"""When DeepSpeed began to read each config key, and the releases a config's own keys leave.

``schemas/deepspeed-versions.json`` records, for the keys whose status changed between the
releases dslint knows, the release that introduced, renamed or removed each one. A config that
uses a key introduced in a release was written for that release or a later one: with nothing
pinning DeepSpeed, :func:`narrowed` keeps those releases (dslint.evidence.argnames.narrowed does
the same for training arguments).
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import lru_cache

from dslint.documents.model import Mapping
from dslint.evidence.versions import Candidates, parse_version


@lru_cache(maxsize=None)
def history() -> dict:
    """The file's content (``{"keys": {}}`` when dslint ships none)."""
    from dslint.schemas import data_path

    path = data_path("deepspeed-versions.json")
    if path is None:
        return {"keys": {}}
    return json.loads(path.read_text(encoding="utf-8"))


def key(dotted: str) -> dict:
    return history().get("keys", {}).get(dotted, {})


def introduced(dotted: str) -> str | None:
    return key(dotted).get("introduced")


def narrowed(found: Candidates, config: Mapping) -> Candidates:
    """With nothing pinning DeepSpeed, the releases that read every key ``config`` uses.

    Only the lower bound narrows: a key removed later is what the removal rules report, not
    evidence against the releases that removed it."""
    if not found.unbounded or found.evidence is not None:
        return found
    bounds = []
    for path in _paths(config, ()):
        dotted = ".".join(path)
        since = introduced(dotted)
        if since is not None:
            bounds.append((parse_version(since), f"{dotted} (from {since})"))
    if not bounds:
        return found
    low = max(bound for bound, _ in bounds)
    keep = tuple(v for v in found.versions if parse_version(v) >= low)
    if not keep or len(keep) == len(found.versions):
        return found
    return replace(found, versions=keep, narrowed_by=tuple(text for bound, text in sorted(bounds, reverse=True) if bound == low))


def _paths(node: Mapping, path: tuple):
    for entry in node.entries:
        here = path + (str(entry.key),)
        yield here
        if isinstance(entry.value, Mapping):
            yield from _paths(entry.value, here)
