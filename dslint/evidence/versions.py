"""Which versions of each training package a launch may run with, the evidence, and verdicts over them.

Nothing is imported. The evidence, in order of precedence:

1. ``<package>-version`` settings (``transformers-version = "4.45.2"`` or a specifier): they win.
2. With ``detect-installed-versions = true``, the distribution installed in the environment
   dslint runs in (``importlib.metadata``). Off by default: pre-commit and the GitHub action run
   dslint in an environment of their own.
3. A checkout of the package in the repository that the launch runs (:mod:`dslint.launch.vendored`:
   the folder the script ``cd``s into, else the nearest checkout above or beside the launch's
   files): the version its source says (``src/llamafactory/extras/env.py`` ``VERSION``), kind
   ``source``. A checkout whose version cannot be read bounds nothing, and a finding that
   depends on the version is then at most ``info``. Where nothing below pins another package,
   the checkout's own requirements do (it is installed from there: ``transformers>=4.45.0`` in
   ``LLaMA-Factory/requirements.txt``).
4. Pins in the repository (:mod:`dslint.evidence.pins`): the nearest folder, from the linted file's folder
   up to the repository root (the folder holding ``.git``; without one, the nearest folder with a
   ``pyproject.toml``, ``setup.py`` or ``setup.cfg``, else the folder dslint runs from), whose
   files pin the package in any source.
   In that folder a lock file's versions win, then exact pins (``==``, a git tag or an archive
   name that names a release), then the ranges, all of which must hold. A git checkout of a
   branch or commit, or a name without a version, says nothing about the version.

The answer is a set of *candidates*: the releases dslint knows (schemas/releases.json, the range
the shipped schemas describe) that the evidence allows. An exact pin gives one, a range those it
allows, no evidence every known release. A rule asks :meth:`Candidates.judge` whether its finding
holds in each candidate; a finding keeps its severity only when it holds in all of them, and is
otherwise at most ``info``, naming the versions in which it fails (:class:`Verdict`). When nothing
bounds the version, a spelling (an argument, key, choice or file form) that the newest known
release accepts is taken as written for it, and older releases are not held against it.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable

from dslint.evidence.pins import PACKAGES, Pin, pins_in
from dslint.files.roots import search_root

#: package -> the Settings attribute of its ``<package>-version`` setting.
SETTINGS = {
    "deepspeed": "deepspeed_version",
    "transformers": "transformers_version",
    "accelerate": "accelerate_version",
    "trl": "trl_version",
    "ms-swift": "swift_version",
    "llamafactory": "llamafactory_version",
}
LABEL = {"deepspeed": "DeepSpeed", "transformers": "transformers", "accelerate": "accelerate", "trl": "TRL",
         "ms-swift": "ms-swift", "llamafactory": "LLaMA-Factory"}


def parse_version(text: str | None) -> tuple[int, ...]:
    """``"4.45.2"`` -> (4, 45, 2); pre-release and local parts are dropped."""
    if not text:
        return ()
    return _parse_version(str(text))


@lru_cache(maxsize=4096)  # rules ask about the same few hundred release strings a hundred thousand times a run
def _parse_version(text: str) -> tuple[int, ...]:
    parts = []
    for piece in text.split("+")[0].split("."):
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
    if len(ta) == len(tb):
        return (ta > tb) - (ta < tb)
    n = max(len(ta), len(tb))
    ta, tb = ta + (0,) * (n - len(ta)), tb + (0,) * (n - len(tb))
    return (ta > tb) - (ta < tb)


# --------------------------------------------------------------------------------------------
# Version specifiers (PEP 440, poetry, conda)
# --------------------------------------------------------------------------------------------

#: One clause: (operator, version, prefix) with operators ==, !=, >=, >, <=, <; ``prefix``
#: makes == and != match every version that starts with ``version`` (``==4.45.*``).
Clause = tuple[str, tuple[int, ...], bool]
_CLAUSE = re.compile(r"^(===|==|~=|>=|<=|!=|>|<|\^|~|=)?v?([0-9][0-9A-Za-z.*+!-]*)$")


def parse_spec(spec: str, dialect: str = "pep440") -> tuple[Clause, ...] | None:
    """The clauses of a specifier, or None when it cannot be read (then it says nothing)."""
    spec = spec.strip().strip("()")
    if not spec or "||" in spec or "|" in spec:
        return None
    clauses: list[Clause] = []
    for text in re.split(r"[,\s]+", spec):
        if not text:
            continue
        read = _parse_clause(text, dialect)
        if read is None:
            return None
        clauses += read
    return tuple(clauses) or None


def _parse_clause(text: str, dialect: str) -> list[Clause] | None:
    """The clauses one written clause (``>=1.2``, ``^0.3``, ``1.2.*``) stands for; None when it cannot be read."""
    match = _CLAUSE.match(text)
    if match is None:
        return None
    op, written = match.group(1) or ("==" if dialect == "poetry" else "=" if dialect == "conda" else ""), match.group(2)
    if not op:
        return None
    prefix = written.endswith("*") or (op == "=" and dialect == "conda")
    version = parse_version(written.rstrip(".*"))
    if not version:
        return None
    return _expand(op, version, prefix)


def _expand(op: str, version: tuple[int, ...], prefix: bool) -> list[Clause] | None:
    """An operator's clause as comparisons: ``~=``, ``^`` and ``~`` become a range."""
    if op in ("==", "===", "!="):
        return [("!=" if op == "!=" else "==", version, prefix)]
    if op == "=":  # conda: a prefix match
        return [("==", version, True)]
    if op in (">=", ">", "<=", "<"):
        return [(op, version, False)]
    if op == "~=" and len(version) >= 2:
        return [(">=", version, False), ("==", version[:-1], True)]
    if op == "^":
        head = next((i for i, n in enumerate(version) if n), len(version) - 1)
        return [(">=", version, False), ("<", version[:head] + (version[head] + 1,), False)]
    if op == "~":
        bump = version[:2] if len(version) >= 2 else version[:1]
        return [(">=", version, False), ("<", bump[:-1] + (bump[-1] + 1,), False)]
    return None


def allows(clauses: Iterable[Clause], version: str | tuple) -> bool:
    v = version if isinstance(version, tuple) else parse_version(version)
    for op, bound, prefix in clauses:
        if prefix:
            inside = (v + (0,) * len(bound))[: len(bound)] == bound
            if inside != (op == "=="):
                return False
            continue
        order = compare(v, bound)
        if not {"==": order == 0, "!=": order != 0, ">=": order >= 0, ">": order > 0, "<=": order <= 0,
                "<": order < 0}[op]:
            return False
    return True


def exact_of(clauses: Iterable[Clause]) -> str | None:
    for op, version, prefix in clauses:
        if op == "==" and not prefix:
            return ".".join(map(str, version))
    return None


def lowest_of(clauses: Iterable[Clause]) -> str | None:
    lows = [version for op, version, prefix in clauses if op in (">=", ">") or (op == "==" and prefix)]
    return ".".join(map(str, max(lows))) if lows else None


def highest_of(clauses: Iterable[Clause]) -> str | None:
    """The newest release a range allows where it says so (``<=X``: X); None for ``<X``, which
    names no release."""
    highs = [version for op, version, prefix in clauses if op == "<=" and not prefix]
    return ".".join(map(str, min(highs))) if highs else None


# --------------------------------------------------------------------------------------------
# Known releases
# --------------------------------------------------------------------------------------------


@lru_cache(maxsize=None)
def known_releases(package: str) -> tuple[str, ...]:
    """The releases of ``package`` dslint knows, oldest first (schemas/releases.json)."""
    from dslint.schemas import data_path

    path = data_path("releases.json")
    if path is None:
        return ()
    data = json.loads(path.read_text(encoding="utf-8"))
    return tuple(sorted(data.get("packages", {}).get(package, []), key=parse_version))


# --------------------------------------------------------------------------------------------
# Evidence
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Evidence:
    """What says which versions of a package a launch runs with.

    ``kind``: ``setting``, ``installed``, ``lock``, ``pin`` (exact pins), ``range``, ``git``
    (a checkout whose ref names no release: any version), ``program`` (what the launch's
    program imports bounds it, where nothing pins it) or ``source`` (the package's own source is
    in the repository and the launch runs it: ``exact`` is its version, ``pins`` the file and
    line; without a version it bounds nothing, ``setting`` says why).
    """

    package: str
    kind: str
    exact: tuple[str, ...] = ()  # the versions of setting/installed/lock/pin evidence
    clauses: tuple[Clause, ...] = ()  # every range clause that must hold (kind "range")
    pins: tuple[Pin, ...] = ()
    setting: str = ""  # "transformers-version in pyproject.toml" for settings, the environment for installed
    written: str = ""  # the setting's value

    def sources(self, root: Path | None = None) -> str:
        """``transformers==4.45.2 in requirements.txt:3`` (up to three pins)."""
        if self.kind == "setting":
            return f"{self.written} from {self.setting}"
        if self.kind == "installed":
            return f"{PACKAGES[self.package][0]} {self.exact[0]} installed where dslint runs (detect-installed-versions)"
        if self.kind == "program":
            return f"{PACKAGES[self.package][0]}{self.written}, as the program {self.setting}"
        if self.kind == "source":
            return self.setting
        shown = []
        for pin in self.pins[:3]:
            where = display_path(pin.path, root) + (f":{pin.line}" if pin.line else "")
            via = f", {pin.via}" if pin.via else ""
            note = ""
            if pin.kind == "git":
                note = f"; the ref {pin.ref} names release {pin.release}" if pin.release else \
                    (f"; the ref {pin.ref} names no release" if pin.ref else "; no ref: the default branch")
            shown.append(f"{pin.written} in {where}{via}{note}")
        more = f" and {len(self.pins) - 3} more" if len(self.pins) > 3 else ""
        return " and ".join(shown) + more


def display_path(path: str, root: Path | None) -> str:
    """``path`` relative to ``root`` (or the working directory), as messages show it."""
    try:
        return os.path.relpath(path, root or Path.cwd())
    except ValueError:
        return path


def _says_something(pin: Pin) -> bool:
    return pin.kind in ("lock", "git", "file") or bool(pin.spec)


def _folder_evidence(package: str, pins: list[Pin]) -> Evidence | None:
    locks = [p for p in pins if p.kind == "lock"]
    if locks:
        return Evidence(package, "lock", _unique(p.release for p in locks), pins=tuple(locks))
    exact: list[tuple[str, Pin]] = []
    ranges: list[tuple[tuple[Clause, ...], Pin]] = []
    gits: list[Pin] = []
    for pin in pins:
        if pin.release:
            exact.append((pin.release, pin))
        elif pin.kind == "git":
            gits.append(pin)
        elif pin.kind == "spec":
            clauses = parse_spec(pin.spec, pin.dialect)
            if clauses is None:
                continue
            version = exact_of(clauses)
            if version is not None:
                exact.append((version, pin))
            else:
                ranges.append((clauses, pin))
    if exact:
        return Evidence(package, "pin", _unique(v for v, _ in exact), pins=tuple(p for _, p in exact))
    if ranges:
        clauses = tuple(c for found, _ in ranges for c in found)
        return Evidence(package, "range", clauses=clauses, pins=tuple(p for _, p in ranges) + tuple(gits))
    if gits:
        return Evidence(package, "git", pins=tuple(gits))
    return None


def _unique(values: Iterable[str | None]) -> tuple[str, ...]:
    return tuple(sorted({v for v in values if v}, key=parse_version))


def _start_folder(start: str | Path) -> str:
    return _folder_of(os.path.abspath(start))  # absolute: a relative path depends on the cwd


@lru_cache(maxsize=8192)  # asked by every rule for every file
def _folder_of(path: str) -> str:
    return path if os.path.isdir(path) else os.path.dirname(path)


@lru_cache(maxsize=4096)  # every rule asks, for every file: once per (folder, package)
def repository_evidence(directory: str, package: str, run_root: str | None = None) -> Evidence | None:
    """The evidence of the nearest folder from ``directory`` up to the search root that pins ``package``."""
    stop = search_root(directory, run_root)
    here = directory
    while True:
        pins = [p for p in pins_in(here, package) if _says_something(p)]
        found = _folder_evidence(package, pins) if pins else None
        if found is not None:
            return found
        parent = os.path.dirname(here)
        if here == stop or parent == here or not here.startswith(stop):
            return None
        here = parent


def installed(package: str) -> str | None:
    from importlib import metadata

    for dist in PACKAGES[package]:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


def evidence(package: str, start: str | Path | None, settings: Any = None) -> Evidence | None:
    """What says which versions of ``package`` a file at ``start`` runs with; None when nothing does."""
    setting = getattr(settings, SETTINGS[package], None) if settings is not None else None
    if setting is not None and getattr(setting, "value", None):
        value = str(setting.value).strip()
        clauses = parse_spec(value if re.match(r"^[<>=!~^]", value) else f"=={value}")
        exact = exact_of(clauses or ())
        if exact is not None or not clauses:
            return Evidence(package, "setting", (exact or value,), setting=setting.origin, written=value)
        return Evidence(package, "setting", clauses=clauses, setting=setting.origin, written=value)
    detect = getattr(settings, "detect_installed_versions", None) if settings is not None else None
    if detect is not None and getattr(detect, "value", False):
        found = installed(package)
        if found:
            return Evidence(package, "installed", (found,))
    if start is None:
        return None
    root = getattr(settings, "root", None)
    return repository_evidence(_start_folder(start), package, os.path.abspath(root) if root is not None else None)


# --------------------------------------------------------------------------------------------
# Candidates and verdicts
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidates:
    """The versions of a package a launch may run with: what a version-dependent rule judges."""

    package: str
    versions: tuple[str, ...]  # oldest first
    evidence: Evidence | None
    root: Path | None = None  # paths in messages are relative to it
    # With nothing pinning the package: the names the launch uses that only some releases accept,
    # each with the releases that do ("--attn_impl (3.0.0–4.6.0)"); ``versions`` are the releases
    # that accept all of them (dslint.evidence.argnames.narrowed).
    narrowed_by: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return LABEL[self.package]

    @property
    def newest(self) -> str:
        return self.versions[-1]

    @property
    def exact(self) -> bool:
        """One version, named by the evidence."""
        return self.evidence is not None and len(self.versions) == 1 and bool(self.evidence.exact)

    def why(self) -> str:
        """The evidence in a few words: ``nothing pins transformers``, ``deepspeed==0.15.4 in Dockerfile:12``."""
        name = PACKAGES[self.package][0]
        if self.evidence is None:
            return f"nothing pins {name}"
        if self.evidence.kind == "git":
            return f"{self.evidence.sources(self.root)}: version unknown"
        if self.unread_source:
            return f"runs {self.evidence.sources(self.root)}"
        return self.evidence.sources(self.root)

    def describe(self) -> str:
        """One line for `dslint explain` and a finding's related notes."""
        known = known_releases(self.package)
        span = f"{known[0]}–{known[-1]}" if known else "none"
        if self.evidence is None and self.narrowed_by:
            allowed = f"{self.versions[0]}–{self.versions[-1]}" if len(self.versions) > 1 else self.versions[0]
            return (f"{self.label}: unknown (nothing pins it): judged against {allowed}, the known releases that "
                    f"have everything the launch uses ({', '.join(self.narrowed_by)})")
        if self.evidence is None:
            return f"{self.label}: unknown (nothing pins it): judged against every known version ({span})"
        if self.evidence.kind == "git" or self.unread_source:
            return f"{self.label}: unknown ({self.why()}): judged against every known version ({span})"
        if self.evidence.exact:
            versions = " or ".join(self.versions)
            return f"{self.label} {versions} ({self.why()})"
        allowed = f"{self.versions[0]}–{self.versions[-1]}" if len(self.versions) > 1 else self.versions[0]
        return f"{self.label} {allowed} ({self.why()}; the known releases it allows)"

    def judge(self, fails: Callable[[str], bool | None], spelling: bool = False) -> "Verdict":
        """Ask ``fails(version)`` for each candidate: True (fails), False (does not) or None (dslint cannot tell).

        ``spelling``: the finding is about a name, key, choice or file form that newer releases
        accept and older ones do not. When nothing bounds the version and the newest known
        release accepts it, it was written for a current release: nothing is reported.
        """
        if spelling and self.unbounded:
            # Asked first, since its answer alone may decide (below); ``fails`` only answers, so
            # the other releases need not be asked: most names a launch passes are current.
            outcome = fails(self.newest)
            if not outcome and outcome is not None:
                return Verdict(self, (), ())
        failing, unsure = [], []
        for version in self.versions:
            outcome = fails(version)
            if outcome:
                failing.append(version)
            elif outcome is None:
                unsure.append(version)
        if spelling and self.unbounded and self.newest not in failing + unsure:
            return Verdict(self, (), ())
        if not failing:
            return Verdict(self, (), ())  # dslint cannot tell anywhere: nothing to report
        return Verdict(self, tuple(failing), tuple(unsure))

    @property
    def unbounded(self) -> bool:
        """Nothing bounds the version: no evidence, a git checkout of a branch or commit, or a
        checkout in the repository whose version cannot be read."""
        return self.evidence is None or self.evidence.kind == "git" or self.unread_source

    @property
    def unread_source(self) -> bool:
        """The launch runs a checkout in the repository whose version or arguments dslint cannot read."""
        return self.evidence is not None and self.evidence.kind == "source" and not self.evidence.exact

    def where(self, predicate: Callable[[str], bool]) -> tuple[str, ...]:
        return tuple(v for v in self.versions if predicate(v))

    def spans(self, selected: Iterable[str]) -> str:
        """``≥ 5.0.0``, ``< 0.17.1``, ``4.46.0–4.57.6, 5.23.0``: ``selected`` candidates in few words."""
        chosen = set(selected)
        known = known_releases(self.package)
        runs: list[tuple[int, int]] = []
        for index, version in enumerate(self.versions):
            if version in chosen:
                if runs and runs[-1][1] == index - 1:
                    runs[-1] = (runs[-1][0], index)
                else:
                    runs.append((index, index))
        parts = []
        last = len(self.versions) - 1
        for first, end in runs:
            low, high = self.versions[first], self.versions[end]
            if end == last and known and high == known[-1] and first != end:
                parts.append(f"≥ {low}")
            elif first == 0 and known and low == known[0] and end < last:
                parts.append(f"< {self.versions[end + 1]}")
            else:
                parts.append(low if first == end else f"{low}–{high}")
        return ", ".join(parts)


@dataclass(frozen=True)
class Verdict:
    """Where a version-dependent finding holds among the candidates."""

    candidates: Candidates
    failing: tuple[str, ...]
    unsure: tuple[str, ...] = ()

    @property
    def anywhere(self) -> bool:
        """Some candidate fails for certain, and that says something about this launch: where
        dslint cannot tell and none fails, it says nothing; and where nothing bounds the version
        (nothing pins it), only a failure in every candidate does, since the launch may run any
        of them (not an info naming the releases that would fail)."""
        return bool(self.failing) and (self.everywhere or not self.candidates.unbounded)

    @property
    def everywhere(self) -> bool:
        return len(self.failing) == len(self.candidates.versions)

    @property
    def pinned(self) -> bool:
        """The evidence bounds the versions (a setting, the installed package, a pin or a range)."""
        return not self.candidates.unbounded

    def severity(self, unpinned=None):
        """The finding's severity: None (the rule's) when it holds in every candidate, else info.

        ``unpinned``: the most a finding may be when it holds in every known version but nothing
        bounds the version (a newer release may have what no known one has: new arguments).
        """
        from dslint.diagnostics import Severity

        if not self.everywhere or self.candidates.unread_source:
            return Severity.INFO  # a checkout dslint cannot read decides: the finding rests on an assumption
        return unpinned if unpinned is not None and not self.pinned else None

    def where(self) -> str:
        """The versions it fails in: ``transformers 4.51.3``, ``transformers ≥ 5.0.0``, ``DeepSpeed (every version dslint knows)``."""
        found = self.candidates
        label = found.label
        if self.everywhere:
            if len(found.versions) == 1:
                return f"{label} {found.versions[0]}"
            if found.unbounded:
                return f"any {label} version dslint knows ({found.versions[0]}–{found.versions[-1]})"
            return f"{label} {found.versions[0]}–{found.versions[-1]}"
        if self.failing and self.unsure:
            return f"{label} {found.spans(self.failing)}, maybe {found.spans(self.unsure)}"
        if self.failing:
            return f"{label} {found.spans(self.failing)}"
        return f"{label} {found.spans(self.unsure)}"

    def note(self) -> str:
        """What a finding that does not hold everywhere adds: ``fails on transformers ≥ 5.0.0; nothing pins transformers``."""
        if self.everywhere and self.candidates.unread_source:
            return f"assumed {self.where()}: the launch {self.candidates.why()}"
        if self.everywhere:
            return ""
        return f"{'fails' if self.failing else 'may fail'} on {self.where()}; {self.candidates.why()}"

    def qualify(self, note: str | None = None) -> str | None:
        """A finding's note with the versions it fails in added, when that is not every candidate."""
        scope = self.note()
        if not scope:
            return note
        return f"{note} ({scope})" if note else scope


def candidates(package: str, start: str | Path | None, settings: Any = None, program: Any = None) -> Candidates:
    """The known releases of ``package`` that the evidence for a file at ``start`` allows.

    ``program``: the launch's Consumer (dslint.launch.consumer). Where nothing pins the package,
    what its program uses bounds it (``from swift.llm import SftArguments`` is ms-swift 2.x's).
    """
    found = evidence(package, start, settings)
    source = getattr(program, "sources", {}).get(package) if program is not None else None
    if source is not None and (found is None or found.kind not in ("setting", "installed")):
        found = source_evidence(package, source, getattr(settings, "root", None))
    if found is None and program is not None:
        found = _checkout_requirement(package, getattr(program, "sources", {}).values())
    hint = getattr(program, "version_hints", {}).get(package) if program is not None else None
    if hint is not None and (found is None or found.kind == "git"):
        spec, proof = hint
        clauses = parse_spec(spec) or ()
        # A bound that every known release meets (`swift/cli/sft.py` is in ms-swift 1.3.0 and later)
        # says no more than nothing: the version stays unbounded.
        if not all(allows(clauses, version) for version in known_releases(package)):
            found = Evidence(package, "program", clauses=clauses, setting=proof.describe(), written=spec)
    root = getattr(settings, "root", None)
    return _candidates(package, found, root)


def _checkout_requirement(package: str, sources: Iterable[Any]) -> Evidence | None:
    """What the requirements of a checkout the launch runs (installed from it) say about ``package``,
    where the repository pins nothing: ``transformers>=4.45.0,<=4.52.4`` in its requirements.txt."""
    for source in sources:
        if source.package == package or not source.readable:
            continue
        pins = [p for p in pins_in(str(source.root), package) if _says_something(p)]
        found = _folder_evidence(package, pins) if pins else None
        if found is not None:
            return found
    return None


def source_evidence(package: str, source: Any, root: Path | None = None) -> Evidence:
    """The evidence of a checkout the launch runs (dslint.launch.vendored.Source)."""
    shown = source.describe(lambda p: display_path(str(p), root))
    if not source.readable or source.version_at is None:
        return Evidence(package, "source", setting=shown)
    at = source.version_at
    pin = Pin(package, "source", "", at.path, at.line, release=source.version)
    return Evidence(package, "source", (source.version,), pins=(pin,), setting=shown)


@lru_cache(maxsize=4096)
def _candidates(package: str, found: Evidence | None, root: Path | None) -> Candidates:
    known = known_releases(package)
    if found is None or found.kind == "git" or (found.kind == "source" and not found.exact):
        return Candidates(package, known, found, root)
    if found.exact:
        return Candidates(package, found.exact, found, root)
    inside = tuple(v for v in known if allows(found.clauses, v))
    if not inside:  # a range outside what dslint knows: its lowest version, else its highest, else the oldest known
        bound = lowest_of(found.clauses) or highest_of(found.clauses)
        inside = (bound,) if bound else known[:1]
    return Candidates(package, inside, found, root)


def clear_cache() -> None:
    from dslint.evidence import pins
    from dslint.files import roots, tree
    from dslint.launch import callers, vendored

    pins.clear_cache()
    vendored.clear_cache()
    roots.clear_cache()
    tree.clear_cache()
    callers.clear_cache()
    _folder_of.cache_clear()
    repository_evidence.cache_clear()
    _candidates.cache_clear()


__all__ = ["LABEL", "PACKAGES", "SETTINGS", "Candidates", "Evidence", "Verdict", "allows", "candidates", "compare",
           "evidence", "installed", "known_releases", "parse_spec", "parse_version"]
