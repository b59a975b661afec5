"""Did a release of ms-swift, transformers, TRL or LLaMA-Factory have an argument of this name?

The shipped argument schemas describe a few releases each; ``schemas/<package>-names.json``
(written by ``python -m dslint.schemagen.argument_names`` from the releases' wheels) records the
argument names of every release dslint knows, as deltas between consecutive releases. Rules
ask :func:`has_name` only about a release that no schema describes; the file is read the first
time they do. The names are a superset (see the generator's doc): an answer of False is a
release the file covers whose classes define no such name, nor does any release of a package
it inherits arguments from.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache

from dslint.evidence.versions import Candidates, parse_version


def decode(data: dict) -> dict[str, frozenset[str]]:
    """version -> its names, from a names file's content (deltas from the first release)."""
    out: dict[str, frozenset[str]] = {}
    names: set[str] = set()
    for row in data["releases"]:
        names = (names - set(row.get("removed", ()))) | set(row.get("added", ()))
        out[row["version"]] = frozenset(names)
    return out


@dataclass(frozen=True)
class History:
    """The argument names of a package's releases."""

    package: str
    by_minor: bool  # one release read per minor version describes all its patch releases
    releases: dict[str, frozenset[str]]
    inherits: tuple[str, ...]  # packages whose arguments its parser also accepts (any release)

    def names(self, version: str) -> frozenset[str] | None:
        """The names of ``version``, or None when the file does not cover it."""
        if not self.by_minor:
            return self.releases.get(version)
        minor = parse_version(version)[:2]
        return next((names for read, names in self.releases.items() if parse_version(read)[:2] == minor), None)

    @property
    def every_name(self) -> frozenset[str]:
        return frozenset().union(*self.releases.values())


@lru_cache(maxsize=None)
def history(package: str) -> History | None:
    from dslint.schemas import data_path

    path = data_path(f"{package}-names.json")
    if path is None:
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    return History(package, data.get("by") == "minor", decode(data), tuple(data.get("inherits", ())))


@lru_cache(maxsize=None)
def _inherited(package: str) -> frozenset[str] | None:
    """Every name of every release of the packages ``package`` inherits from; None when one has no file."""
    found = history(package)
    out: set[str] = set()
    for other in found.inherits if found is not None else ():
        theirs = history(other)
        if theirs is None:
            return None
        out |= theirs.every_name
    return frozenset(out)


def has_name(package: str, version: str, name: str, inherited_too: bool = True) -> bool | None:
    """True: release ``version`` has an argument ``name`` (a field, or the ``no_`` complement of
    one); False: the names file covers that release and nothing it records has it; None: the
    file does not cover that release. ``inherited_too``: also every name any release of the
    packages it inherits from had (a superset: TRL's ``vllm_device`` counts for every ms-swift)."""
    found = history(package)
    names = found.names(version) if found is not None else None
    if names is None:
        return None
    inherited = _inherited(package) if inherited_too else frozenset()
    if inherited is None:
        return None
    key = name.lstrip("-").replace("-", "_")
    for candidate in (key, key[3:] if key.startswith("no_") else None):
        if candidate and (candidate in names or candidate in inherited):
            return True
    return False


def narrowed(found: Candidates, names) -> Candidates:
    """The candidates a launch's own argument names leave, when nothing pins the package.

    A release that lacks an argument the launch passes is not the one it was written for (its
    parser would refuse it): with nothing pinning the package, the releases judged are those
    that have every name the launch uses that some known release has. A name no release has is
    no evidence (another parser's, or a mistake DS701 reports), nor is a name of a package it
    inherits arguments from (TRL's ``padding_free`` reaches some ms-swift entries in releases
    whose own classes lack it); names that no single release has together are conflicting
    evidence: nothing is narrowed.
    """
    if not found.unbounded or found.evidence is not None or not found.versions:
        return found
    keep = list(found.versions)
    cut: list[str] = []
    inherited = _inherited(found.package)
    for name in sorted(set(names)):
        key = name.lstrip("-").replace("-", "_")
        if inherited is None or key in inherited or (key.startswith("no_") and key[3:] in inherited):
            continue  # a name of a package it inherits from: some entry of any release may have it
        answers = {version: has_name(found.package, version, name, inherited_too=False) for version in found.versions}
        if not any(answers.values()) or all(answer is not False for answer in answers.values()):
            continue
        having = [v for v in found.versions if answers[v] is not False]
        keep = [v for v in keep if answers[v] is not False]
        cut.append(f"--{name} ({having[0]}–{having[-1]})" if len(having) > 1 else f"--{name} ({having[0]})")
    if not keep or not cut:
        return found
    from dataclasses import replace

    return replace(found, versions=tuple(keep), narrowed_by=tuple(cut))
