"""What each consumer's argument parser accepts, for the version in use (DS7xx rules).

The facts come from the generated schemas (``schemas/<package>[-X.Y].schema.json``, see
dslint/schemagen); the version from :mod:`dslint.versions`. A version between two shipped
generations is judged with the generation below it, and a verdict is *certain* only when the
version was found (setting, installed distribution or pin) and both bracketing generations
agree (or the version is one a schema was made from).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from dslint.schemas import available, load_schema
from dslint.versions import VersionInfo, compare, parse_version, version_of

#: consumer -> schema package.
CONSUMER_PACKAGE = {"swift": "ms-swift", "megatron": "ms-swift", "llamafactory": "llamafactory", "hf": "transformers"}
PACKAGE_LABEL = {"ms-swift": "ms-swift", "llamafactory": "LLaMA-Factory", "transformers": "transformers",
                 "trl": "TRL", "accelerate": "accelerate"}

#: Renames documented by the projects: package -> old -> (new, since, where it is documented).
DOCUMENTED_RENAMES: dict[str, dict[str, tuple[str, str, str]]] = {
    "transformers": {
        "evaluation_strategy": ("eval_strategy", "4.41", "transformers 4.41 release notes; removed in 4.46"),
        "no_cuda": ("use_cpu", "4.34", "help text of no_cuda: deprecated, removed in 5.0"),
        "fp16_backend": ("half_precision_backend", "4.10", "help text: deprecated, use half_precision_backend"),
        "push_to_hub_token": ("hub_token", "4.12", "help text: deprecated, use hub_token"),
    },
    "ms-swift": {
        "sft_type": ("tuner_type", "4.1", "ms-swift 3.0 renamed --sft_type to --train_type, 4.0 to --tuner_type "
                                          "(swift/arguments/base_args/base_args.py; --train_type removed in 4.1, commit fe928a9f1)"),
        "train_type": ("tuner_type", "4.1", "ms-swift 4.0 deprecated --train_type for --tuner_type and 4.1 removed it "
                                            "(commit fe928a9f1)"),
        "evaluation_strategy": ("eval_strategy", "3.0", "transformers' rename, followed by ms-swift"),
    },
    "llamafactory": {
        "evaluation_strategy": ("eval_strategy", "0.9", "transformers' rename (removed in 4.46)"),
    },
}


@dataclass(frozen=True)
class Generation:
    package: str
    version: str
    schema_name: str

    @property
    def key(self) -> tuple[int, ...]:
        return parse_version(self.version)


@lru_cache(maxsize=None)
def generations(package: str) -> tuple[Generation, ...]:
    found = []
    for name in available():
        if name == package or (name.startswith(package + "-") and name[len(package) + 1:][:1].isdigit()):
            schema = load_schema(name)
            version = schema.get("x-dslint-version")
            if version and schema.get("x-dslint-package") == package:
                found.append(Generation(package, version, name))
    return tuple(sorted(found, key=lambda g: g.key))


def _resolve(schema: dict, node: dict) -> dict:
    seen = 0
    while "$ref" in node and seen < 8:
        node = schema["$defs"][node["$ref"][len("#/$defs/"):]]
        seen += 1
    return node


@dataclass
class ArgSpace:
    """The arguments one command of one package generation accepts."""

    package: str
    version: str
    sets: tuple[str, ...]
    fields: dict[str, dict]
    flags: dict[str, str]  # normalized option (no dashes, '-' -> '_') -> field
    negations: dict[str, str]
    reader: dict = field(default_factory=dict)

    def lookup(self, name: str) -> tuple[str, dict, bool] | None:
        """(field, schema, negated) for a key or flag name, or None when unknown."""
        key = name.lstrip("-").replace("-", "_")
        if key in self.fields:
            return key, self.fields[key], False
        if key in self.flags:
            target = self.flags[key]
            return target, self.fields[target], False
        if key in self.negations:
            target = self.negations[key]
            return target, self.fields[target], True
        return None

    def prefix_match(self, name: str) -> str | None:
        """argparse's abbreviation: the single option ``name`` is a prefix of."""
        key = name.lstrip("-").replace("-", "_")
        if len(key) < 3:
            return None
        hits = {target for option, target in self.flags.items() if option.startswith(key)}
        hits |= {target for option, target in self.negations.items() if option.startswith(key)}
        return hits.pop() if len(hits) == 1 else None

    def closest(self, name: str) -> str | None:
        key = name.lstrip("-").replace("-", "_")
        memo = (id(self), key)  # spaces live as long as arg_space's cache; the same keys recur in every file
        if memo not in _CLOSEST:
            close = difflib.get_close_matches(key, list(self.fields), n=1, cutoff=0.75)
            _CLOSEST[memo] = close[0] if close else None
        return _CLOSEST[memo]


_CLOSEST: dict[tuple, str | None] = {}


@lru_cache(maxsize=None)
def arg_space(schema_name: str, sets: tuple[str, ...]) -> ArgSpace:
    schema = load_schema(schema_name)
    members = schema.get("x-dslint-sets", {})
    fields: dict[str, dict] = {}
    flags: dict[str, str] = {}
    negations: dict[str, str] = {}
    chosen = tuple(s for s in sets if s in members) or tuple(members)
    for set_name in chosen:
        props = schema["$defs"][set_name]["properties"]
        for name, node in props.items():
            prop = _resolve(schema, node)
            fields.setdefault(name, prop)
            for flag in prop.get("x-dslint-flags", []):
                flags.setdefault(flag.lstrip("-").replace("-", "_"), name)
            for flag in prop.get("x-dslint-negation", []):
                negations.setdefault(flag.lstrip("-").replace("-", "_"), name)
    return ArgSpace(schema.get("x-dslint-package", ""), schema.get("x-dslint-version", ""), chosen, fields, flags,
                    negations, schema.get("x-dslint-reader", {}))


@dataclass(frozen=True)
class InUse:
    """The generation a launch is judged with, and why."""

    package: str
    info: VersionInfo | None  # None: nothing says which version
    generation: Generation
    below: Generation | None  # bracketing generations of a version between two shipped ones
    above: Generation | None

    @property
    def known(self) -> bool:
        return self.info is not None

    @property
    def exact_generation(self) -> bool:
        """The version in use is (the major.minor of) a shipped generation."""
        if self.info is None or not self.info.exact:
            return False
        return parse_version(self.info.version)[:2] == self.generation.key[:2]

    def describe(self) -> str:
        label = PACKAGE_LABEL.get(self.package, self.package)
        if self.info is None:
            return (f"{label} {self.generation.version} assumed (no version pinned or configured; "
                    f"dslint's newest {label} schema)")
        text = self.info.describe()
        if not self.exact_generation:
            text += f"; judged with the {label} {self.generation.version} schema"
        return text

    def spaces(self, sets: tuple[str, ...]) -> list[ArgSpace]:
        """The generations a verdict must hold in to be certain."""
        out = [arg_space(self.generation.schema_name, sets)]
        if self.info is None or self.exact_generation:
            return out
        if self.above is not None:
            out.append(arg_space(self.above.schema_name, sets))
        return out

    def gone_by_documented_rename(self, name: str) -> str | None:
        """The new name when the project documents that ``name`` is gone in the version in use."""
        rename = DOCUMENTED_RENAMES.get(self.package, {}).get(name)
        if rename is None or self.info is None:
            return None
        if compare(self.info.version, rename[1]) >= 0:
            return rename[0]
        return None


def in_use(package: str, start: str | None, settings: Any) -> InUse | None:
    gens = generations(package)
    if not gens:
        return None
    info = version_of(package, start, settings)
    if info is None:
        return InUse(package, None, gens[-1], None, None)
    wanted = parse_version(info.version)
    below = [g for g in gens if compare(g.version, info.version) <= 0]
    above = [g for g in gens if compare(g.version, info.version) > 0]
    series = 2 if wanted[:1] == (0,) else 1  # 0.x packages change at the minor version

    def same_series(g: Generation) -> bool:
        return g.key[:series] == wanted[:series]

    if below and same_series(below[-1]):
        chosen, neighbor = below[-1], (above[0] if above else None)
    elif above and same_series(above[0]):
        chosen, neighbor = above[0], (below[-1] if below else None)
    else:
        chosen = below[-1] if below else gens[0]
        neighbor = above[0] if above and below else None
    return InUse(package, info, chosen, None, neighbor)


def other_generations(package: str, exclude: str) -> list[Generation]:
    return [g for g in generations(package) if g.schema_name != exclude]


# Which parser set a launch's entry runs.
SWIFT_SETS = {
    "swift sft": ("sft",), "swift pt": ("pt",), "swift rlhf": ("rlhf",), "swift export": ("export",),
    "megatron sft": ("megatron-sft",), "megatron pt": ("megatron-pt",), "megatron rlhf": ("megatron-rlhf",),
    "megatron export": ("megatron-export",),
}
LLAMAFACTORY_SETS = {
    "llamafactory train": ("train",), "llamafactory chat": ("infer",), "llamafactory webchat": ("infer",),
    "llamafactory api": ("infer",), "llamafactory export": ("infer",), "llamafactory eval": ("eval",),
}


def plan_sets(plan) -> tuple[str, tuple[str, ...], bool] | None:
    """(package, sets, strict) for a launch plan; strict: unknown keys are the parser's error.

    A config that no launch reaches is checked against every set of its flavor (a key unknown
    to all of them); a custom ``python train.py`` script parses its own dataclasses, so only the
    transformers fields are known and unknown keys are not judged there.
    """
    consumer = plan.consumer
    if consumer in ("swift", "megatron"):
        if plan.entry in SWIFT_SETS:
            return "ms-swift", SWIFT_SETS[plan.entry], True
        if plan.launcher == "yaml":
            return "ms-swift", (), True
        if plan.entry is None and plan.consumer == "swift":
            return "ms-swift", ("sft",), True
        return None
    if consumer == "llamafactory":
        if plan.entry in LLAMAFACTORY_SETS:
            return "llamafactory", LLAMAFACTORY_SETS[plan.entry], True
        if plan.launcher == "yaml" or plan.entry is None:
            return "llamafactory", (), True
        return None
    if consumer == "hf":
        flavor = getattr(plan.origin, "flavor", None)
        if flavor == "axolotl":
            return None
        return "transformers", ("TrainingArguments",), False
    return None


# ms-swift's tuner flag, per generation (DS312): the names are looked up in the schemas.
SWIFT_TUNER_NAMES = ("sft_type", "train_type", "tuner_type")


def swift_tuner_flag_findings(plan, settings):
    """(arg, message, rename target, certain) for tuner flags the ms-swift in use does not have."""
    found = plan_sets(plan)
    if found is None or found[0] != "ms-swift":
        return
    sets = found[1]
    use = in_use("ms-swift", plan.origin.path if plan.origin is not None else None, settings)
    if use is None:
        return
    space = arg_space(use.generation.schema_name, sets)
    right = next((n for n in SWIFT_TUNER_NAMES if space.lookup(n) is not None), None)
    for name in SWIFT_TUNER_NAMES:
        arg = plan.arg(name)
        if arg is None:
            continue
        spaces = use.spaces(sets)
        if all(s.lookup(name) is not None for s in spaces):
            continue
        having = [g.version for g in generations("ms-swift") if arg_space(g.schema_name, sets).lookup(name) is not None]
        certain = use.known and all(s.lookup(name) is None for s in spaces)
        if space.lookup(name) is not None:  # known below, unknown above: depends on the exact version
            certain = False
        gone = use.gone_by_documented_rename(name)
        if gone is not None and space.lookup(gone) is not None:
            certain, right = True, gone
        where = f"ms-swift {', '.join(having)}" if having else "no ms-swift version dslint knows"
        message = (f"--{name} is a flag of {where}, not of ms-swift {use.generation.version} "
                   f"[{use.describe()}]: ms-swift stops with ValueError: remaining_argv: ['--{name}', ...]")
        if right and right != name:
            message += f"; this version calls it --{right}"
        yield arg, message, (right if right != name else None), certain
