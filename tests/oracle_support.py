"""Shared pieces of the generated oracle tests (tests/test_oracle_generated.py).

- ``Obj``: a JSON object as a list of (key, value) pairs, so that a case can carry duplicate keys;
- ``render``: writes a case as strict JSON or as hjson (comments, trailing commas, unquoted keys,
  quoteless values, newline separators), the syntaxes DeepSpeed's loader accepts and `json` does not;
- ``Verdicts``: the agreement bookkeeping: every case's dslint verdict and oracle verdict, the
  deliberate differences (each with its reason), and the table printed at the end of the run;
- ``judged_as_installed``: settings that tell dslint which DeepSpeed it is compared with;
- ``prepared_downloads``: the release files `generations --prepare` downloaded, or a skip.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable


class Obj(list):
    """A JSON object written as (key, value) pairs; keys may repeat."""

    def get(self, key, default=None):
        for k, v in reversed(self):
            if k == key:
                return v
        return default

    def set(self, key, value) -> "Obj":
        for i, (k, _) in enumerate(self):
            if k == key:
                self[i] = (key, value)
                return self
        self.append((key, value))
        return self


def to_python(value):
    """The value json/hjson produce (last duplicate wins)."""
    if isinstance(value, Obj):
        out = {}
        for k, v in value:
            out[k] = to_python(v)
        return out
    if isinstance(value, list):
        return [to_python(v) for v in value]
    return value


def has_duplicates(value) -> bool:
    if isinstance(value, Obj):
        keys = [k for k, _ in value]
        return len(keys) != len(set(keys)) or any(has_duplicates(v) for _, v in value)
    if isinstance(value, list):
        return any(has_duplicates(v) for v in value)
    return False


@dataclass(frozen=True)
class Style:
    """How a case is written. The default is strict JSON."""

    comments: tuple = ()  # any of "//", "#", "/**/"
    trailing_commas: bool = False
    unquoted_keys: bool = False
    quoteless_values: bool = False  # hjson: a string value without quotes runs to the end of the line
    no_commas: bool = False  # hjson: newlines separate entries
    quoteless_comma_trap: bool = False  # `"key": value,` with a quoteless value: the comma is part of it
    braceless_root: bool = False

    @property
    def hjson(self) -> bool:
        return self != Style()

    def describe(self) -> str:
        parts = [name for name in ("trailing_commas", "unquoted_keys", "quoteless_values", "no_commas", "quoteless_comma_trap", "braceless_root") if getattr(self, name)]
        parts += [f"comment {c}" for c in self.comments]
        return "hjson(" + ", ".join(parts) + ")" if parts else "json"


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_QUOTELESS_SAFE = re.compile(r"^[A-Za-z][A-Za-z0-9_./-]*$")
_HJSON_KEYWORDS = {"true", "false", "null"}


def _scalar(value, style: Style, last_in_line: bool) -> tuple[str, bool]:
    """(text, quoteless) for a scalar."""
    if isinstance(value, str) and style.quoteless_values and _QUOTELESS_SAFE.match(value) and value not in _HJSON_KEYWORDS:
        return value, True
    return json.dumps(value, ensure_ascii=False), False


def render(value, style: Style = Style(), indent: str = "  ") -> str:
    text = _render(value, style, indent, 0, root=True)
    return text + "\n"


def _render(value, style: Style, indent: str, depth: int, root: bool = False) -> str:
    pad, inner = indent * depth, indent * (depth + 1)
    if isinstance(value, Obj):
        if not value:
            return "{}"
        lines = []
        for i, (key, item) in enumerate(value):
            last = i == len(value) - 1
            key_text = key if style.unquoted_keys and _IDENT.match(key) else json.dumps(key, ensure_ascii=False)
            if isinstance(item, (Obj, list)):
                item_text, quoteless = _render(item, style, indent, depth + 1), False
            else:
                item_text, quoteless = _scalar(item, style, last)
            if quoteless and not style.quoteless_comma_trap:
                comma = ""  # a comma would become part of the value
            elif style.no_commas:
                comma = ""
            elif last and not style.trailing_commas:
                comma = ""
            else:
                comma = ","
            line = f"{inner if not (root and style.braceless_root) else pad}{key_text}: {item_text}{comma}"
            if "#" in style.comments and i == 0 and not quoteless:
                line += "  # first key"
            if "//" in style.comments and i == len(value) // 2:
                lines.append(f"{inner}// a comment")
            if "/**/" in style.comments and last:
                lines.append(f"{inner}/* a block\n{inner}   comment */")
            lines.append(line)
        if root and style.braceless_root:
            return "\n".join(lines)
        return "{\n" + "\n".join(lines) + "\n" + pad + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        items = []
        for item in value:
            if isinstance(item, (Obj, list)):
                items.append(_render(item, style, indent, depth + 1))
            else:
                items.append(json.dumps(item, ensure_ascii=False))
        return "[" + ", ".join(items) + "]"
    return _scalar(value, style, True)[0]


def short(value, limit: int = 600) -> str:
    text = json.dumps(to_python(value), ensure_ascii=False, separators=(",", ":"), default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---- agreement bookkeeping --------------------------------------------------------------------


@dataclass
class Record:
    oracle: str
    category: str
    case: str
    dslint: list[str]  # the codes of dslint's errors for this consumer
    raised: str | None  # the oracle's exception, or None when it accepted the case
    deliberate: str | None = None  # the name of the deliberate difference that explains a disagreement

    @property
    def agrees(self) -> bool:
        return bool(self.dslint) == bool(self.raised)


@dataclass
class Deliberate:
    """A known, documented difference: dslint errs on purpose (``reason``), and ``doc`` names the
    rule page that says so."""

    reason: str
    doc: str  # rule code whose documentation states the difference
    applies: Callable[[Record, Any], bool]


@dataclass
class Verdicts:
    oracle: str
    deliberate: dict[str, Deliberate] = field(default_factory=dict)
    records: list[Record] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, category: str, case: str, dslint: list[str], raised: str | None, info: Any = None) -> Record:
        record = Record(self.oracle, category, case, sorted(set(dslint)), raised)
        if not record.agrees:
            for name, known in self.deliberate.items():
                if known.applies(record, info):
                    record.deliberate = name
                    break
        self.records.append(record)
        return record

    @property
    def unexplained(self) -> list[Record]:
        return [r for r in self.records if not r.agrees and r.deliberate is None]

    def table(self) -> str:
        total = len(self.records)
        agree = sum(r.agrees for r in self.records)
        deliberate = sum(1 for r in self.records if not r.agrees and r.deliberate)
        lines = [f"oracle {self.oracle}: {total} cases, {agree} agree ({100 * agree / max(total, 1):.1f}%), "
                 f"{deliberate} deliberate differences, {len(self.unexplained)} unexplained disagreements"]
        by_category: dict[str, list[Record]] = {}
        for record in self.records:
            by_category.setdefault(record.category, []).append(record)
        lines.append(f"  {'category':<24} {'cases':>6} {'errors':>7} {'raised':>7} {'agree':>6} {'delib.':>6} {'wrong':>6}")
        for category, records in sorted(by_category.items()):
            lines.append(
                f"  {category:<24} {len(records):>6} {sum(bool(r.dslint) for r in records):>7} {sum(bool(r.raised) for r in records):>7} "
                f"{sum(r.agrees for r in records):>6} {sum(1 for r in records if not r.agrees and r.deliberate):>6} "
                f"{sum(1 for r in records if not r.agrees and not r.deliberate):>6}"
            )
        disagreements = [r for r in self.records if not r.agrees]
        if disagreements:
            lines.append("  disagreements (dslint errors | oracle | deliberate difference | case):")
            shown: dict[str, int] = {}
            for record in disagreements:
                key = record.deliberate or "UNEXPLAINED"
                shown[key] = shown.get(key, 0) + 1
                if record.deliberate and shown[key] > 3:
                    continue  # every unexplained one is listed; deliberate ones by example
                raised = (record.raised or "accepted").replace("\n", " ")[:120]
                case = record.case if len(record.case) <= 160 or not record.deliberate else record.case[:159] + "…"
                lines.append(f"    {','.join(record.dslint) or '-':<14} | {raised} | {record.deliberate or 'UNEXPLAINED'} | {record.category}: {case}")
            for name, count in shown.items():
                if name != "UNEXPLAINED" and count > 3:
                    lines.append(f"    ... {count - 3} more of {name}")
        lines.extend(f"  note: {note}" for note in self.notes)
        for name, known in self.deliberate.items():
            count = sum(1 for r in self.records if r.deliberate == name)
            lines.append(f"  deliberate {name} ({count} cases; documented in {known.doc}): {known.reason}")
        return "\n".join(lines)


def judged_as_installed(settings):
    """``settings`` with ``deepspeed-version`` = the installed DeepSpeed, the oracle dslint is compared with.

    Without it dslint judges every DeepSpeed release it knows, and a finding that only newer
    releases raise is info: the oracle runs one release, so dslint must be told which.
    """
    from importlib import metadata

    from dslint.config import Setting

    try:
        version = metadata.version("deepspeed")
    except metadata.PackageNotFoundError:
        from dslint.evidence.versions import known_releases

        version = known_releases("deepspeed")[-1]
    settings.deepspeed_version = Setting(version, "the installed deepspeed (the oracle)")
    return settings


def prepared_downloads(subfolder: str, pattern: str, what: str):
    """The folder of release files `python -m dslint.schemagen.generations --prepare DIR` downloaded
    into DIR/``subfolder`` (DIR from DSLINT_SCHEMAGEN_TARGETS); the test is skipped without them."""
    import os
    from pathlib import Path

    import pytest

    targets = os.environ.get("DSLINT_SCHEMAGEN_TARGETS")
    folder = Path(targets) / subfolder if targets else None
    if folder is None or not any(folder.glob(pattern)):
        pytest.skip(f"{what} are downloaded by `python -m dslint.schemagen.generations --prepare DIR`; "
                    "set DSLINT_SCHEMAGEN_TARGETS=DIR")
    return folder


# ---- start-up checks: dslint's replay against the consumer's own validation ---------------------

# How one case came out (tests/test_oracle_startup_checks.py):
COUNTED = ("refused alike", "accepted alike", "refused by code dslint left out", "DISAGREE")
OUTCOMES = COUNTED + ("undecided", "masked")
# - refused alike: dslint's check fires and the consumer raises there, with its type and message;
# - accepted alike: no check dslint kept fires, and none raises;
# - refused by code dslint left out: no kept check fires; the consumer raises elsewhere (a check
#   outside the condition language, its argument parser, an enum conversion): no claim was made;
# - DISAGREE: a kept check raises that dslint says does not fire, or dslint's check fires and
#   the consumer accepts, or raises at another kept check, or with another message;
# - undecided: a kept check's guards read a value dslint does not know: dslint says nothing;
# - masked: dslint's check fires, but code dslint left out raises first: nothing to compare.


@dataclass
class CheckCase:
    category: str
    case: str
    outcome: str
    dslint: str  # the check dslint names, "-" for none, "undecided"
    real: str  # what the consumer raised and where, or "accepted"
    check: str  # the check's template and site, the same for every case it refuses


@dataclass
class CheckAgreement:
    oracle: str
    cases: list[CheckCase] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, category: str, case: str, outcome: str, dslint: str, real: str, check: str = "-") -> None:
        assert outcome in OUTCOMES, outcome
        self.cases.append(CheckCase(category, case, outcome, dslint, real, check))

    def count(self, outcome: str, category: str | None = None) -> int:
        return sum(1 for c in self.cases if c.outcome == outcome and category in (None, c.category))

    @property
    def counted(self) -> int:
        return sum(self.count(o) for o in COUNTED)

    @property
    def agreement(self) -> float:
        return 1 - self.count("DISAGREE") / max(self.counted, 1)

    def table(self) -> str:
        total = len(self.cases)
        lines = [f"oracle {self.oracle}: {total} cases, {self.counted} counted, {self.counted - self.count('DISAGREE')} agree "
                 f"({100 * self.agreement:.1f}%), {self.count('undecided')} undecided by dslint "
                 f"({100 * self.count('undecided') / max(total, 1):.1f}%), {self.count('masked')} masked"]
        categories = sorted({c.category for c in self.cases})
        lines.append(f"  {'category':<10} " + " ".join(f"{o[:16]:>16}" for o in OUTCOMES))
        for category in categories:
            lines.append(f"  {category:<10} " + " ".join(f"{self.count(o, category):>16}" for o in OUTCOMES))
        fired: dict[str, int] = {}
        for case in self.cases:
            if case.outcome == "refused alike":
                fired[case.check] = fired.get(case.check, 0) + 1
        lines.append(f"  checks seen refusing alike ({len(fired)}):")
        lines.extend(f"    ×{v:<4} {k[:150]!r}" for k, v in sorted(fired.items(), key=lambda kv: -kv[1]))
        left: dict[str, list] = {}
        for case in self.cases:
            if case.outcome in ("refused by code dslint left out", "masked"):
                key = case.real.split(":")[0] + " at " + case.real.rsplit(" @ ", 1)[-1]
                left.setdefault(key, []).append(case)
        if left:
            lines.append("  raised by code dslint left out (count, an example):")
            for key, cases in sorted(left.items(), key=lambda kv: -len(kv[1]))[:8]:
                lines.append(f"    ×{len(cases):<4} {key}: {cases[0].real.split(' @ ')[0][:100]!r} | {cases[0].case[:100]}")
        for case in self.cases:
            if case.outcome == "DISAGREE":
                lines.append(f"    DISAGREE {case.category}: dslint {case.dslint} | real {case.real[:160]} | {case.case}")
        lines.extend(f"  note: {note}" for note in self.notes)
        return "\n".join(lines)
