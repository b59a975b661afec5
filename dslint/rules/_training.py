"""What each consumer's argument parser accepts, in each version a launch may run with (DS7xx rules).

The facts come from the generated schemas (``schemas/<package>[-X.Y].schema.json``, see
dslint/schemagen) and from the lifetimes the projects document (``DOCUMENTED``); the versions
from :mod:`dslint.evidence.versions` (the candidates the evidence allows). A release is described by
the generation of its own ``major.minor`` when one is shipped; otherwise by the two generations
around it, and where those disagree dslint cannot tell what that release does. Whether such a
release has an argument of a given name is answered by the names its wheel defines
(``schemas/<package>-names.json``, :mod:`dslint.evidence.argnames`) where that file covers the release.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Iterable

from dslint.schemas import available, load_schema
from dslint.evidence.versions import Candidates, Verdict, candidates, compare, parse_version

#: consumer -> schema package.
PACKAGE_LABEL = {"ms-swift": "ms-swift", "llamafactory": "LLaMA-Factory", "transformers": "transformers",
                 "trl": "TRL", "accelerate": "accelerate"}



#: What an ``override`` of InUse.judge answers for a release dslint cannot tell about.
UNSURE = object()


@dataclass(frozen=True)
class Lifetime:
    """When a name is accepted, as the project documents it: ``introduced <= version < removed``."""

    introduced: str | None
    removed: str | None  # the first release without it
    renamed_to: str | None
    source: str
    kept_through: str | None = None  # the newest major.minor known to have it, when its removal is not documented
    # From this release on, whether the name is accepted is decided by another package the
    # release admits versions of with and without it (a transformers field of a
    # TrainingArguments subclass): dslint cannot tell from this package's version.
    unsure_from: str | None = None

    def unsure(self, version: str) -> bool:
        return self.unsure_from is not None and compare(version, self.unsure_from) >= 0 and \
            (self.removed is None or compare(version, self.removed) < 0)

    def accepts(self, version: str) -> bool | None:
        """True or False; None past ``kept_through`` (the schemas decide)."""
        if self.introduced is not None and compare(version, self.introduced) < 0:
            return False
        if self.removed is not None and compare(version, self.removed) >= 0:
            return False
        if self.kept_through is not None and parse_version(version)[:2] > parse_version(self.kept_through)[:2]:
            return None
        return True


# transformers 5.0 removed these TrainingArguments fields: present in the 4.45 schema and in the
# 4.57.6 wheel's training_args.py, absent from the 5.0.0 wheel's.
_TRANSFORMERS_5_0 = {
    "adafactor": "optim adafactor", "fp16_backend": "half_precision_backend", "fp16_opt_level": None,
    "fsdp_min_num_params": None, "fsdp_transformer_layer_cls_to_wrap": None, "half_precision_backend": None,
    "include_inputs_for_metrics": "include_for_metrics", "include_tokens_per_second": None,
    "jit_mode_eval": None, "mp_parameters": None, "no_cuda": "use_cpu", "overwrite_output_dir": None,
    "past_index": None, "per_gpu_eval_batch_size": "per_device_eval_batch_size",
    "per_gpu_train_batch_size": "per_device_train_batch_size", "push_to_hub_model_id": "hub_model_id",
    "push_to_hub_organization": None, "push_to_hub_token": "hub_token", "ray_scope": None, "save_safetensors": None,
    "torchdynamo": None, "tpu_metrics_debug": None, "tpu_num_cores": None, "use_legacy_prediction_loop": None,
    "use_mps_device": None,
}
_SDIST_5_0 = "in the transformers 4.57.6 wheel's training_args.py, not in 5.0.0's"

#: Lifetimes documented by the projects (release notes, help texts, the published wheels):
#: package -> name -> Lifetime. They decide a release that no shipped schema describes exactly.
DOCUMENTED: dict[str, dict[str, Lifetime]] = {
    "transformers": {
        # The 4.41 deprecation notice said "will be removed in version 4.46"; the field is still in
        # the 4.46.0, 4.47.0 and 4.50.0 wheels' training_args.py and first missing from 4.51.0's.
        "evaluation_strategy": Lifetime(None, "4.51", "eval_strategy", "renamed in transformers 4.41; in the 4.50.0 "
                                                                        "wheel's training_args.py, not in 4.51.0's"),
        "group_by_length": Lifetime(None, "5.2", None, "in the transformers 5.1.0 wheel's training_args.py, not in 5.2.0's"),
        # deprecated in 5.0 ("will be removed in v5.2"), still in the 5.2.0 wheel; past 5.2 the
        # names history decides (in the 5.14.1 wheel, not in 5.15.1's)
        "warmup_ratio": Lifetime(None, None, "warmup_steps", "transformers 5.0 help text: deprecated, use warmup_steps "
                                                             "(a float is a ratio)", kept_through="5.2"),
        "logging_dir": Lifetime(None, None, None, "in the transformers 5.2.0 wheel's training_args.py", kept_through="5.2"),
        **{name: Lifetime(None, "5.0", new if new and " " not in new else None, _SDIST_5_0)
           for name, new in _TRANSFORMERS_5_0.items()},
    },
    "ms-swift": {
        "sft_type": Lifetime(None, "3.0", "train_type", "ms-swift 3.0 renamed --sft_type to --train_type"),
        "train_type": Lifetime("3.0", "4.1", "tuner_type", "ms-swift 3.0 renamed --sft_type to --train_type (3.1.0 wheel: "
                                                            "swift/llm/argument/base_args/base_args.py:86); 4.0 deprecated it "
                                                            "for --tuner_type and 4.1 removed it (commit fe928a9f1)"),
        "tuner_type": Lifetime("4.0", None, None, "ms-swift 4.0 (swift/arguments/base_args/base_args.py)"),
        # ms-swift's TrainArguments derive from transformers' Seq2SeqTrainingArguments
        # (swift/llm/argument/train_args.py), which has the field before transformers 4.51. The
        # 3.0.0 wheel requires transformers<4.48; 3.4.0, 3.12.6 and 4.0.0 admit 4.33 up to past 4.51.
        "evaluation_strategy": Lifetime(None, None, "eval_strategy", "transformers 4.41 renamed it to eval_strategy and "
                                                                       "4.51 removed it; ms-swift parses transformers' field",
                                        unsure_from="3.1"),
    },
    "llamafactory": {
        # LLaMA-Factory parses transformers' Seq2SeqTrainingArguments: 0.9.0-0.9.2 require
        # transformers<=4.49 (has the field), 0.9.3 admits 4.45-4.52.4, 0.9.4 requires >=4.51.0.
        "evaluation_strategy": Lifetime(None, "0.9.4", "eval_strategy", "transformers 4.41 renamed it to eval_strategy and "
                                                                          "4.51 removed it; LLaMA-Factory 0.9.4 requires "
                                                                          "transformers>=4.51.0", unsure_from="0.9.3"),
    },
}


def documented(package: str, name: str) -> Lifetime | None:
    return DOCUMENTED.get(package, {}).get(name)


@dataclass(frozen=True)
class Generation:
    """A release range of a package and the schema that describes it."""

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

    def prefix_match(self, name: str, also: Iterable[str] = ()) -> str | None:
        """argparse's abbreviation (``allow_abbrev``, HfArgumentParser's too): the single option
        ``name`` is a prefix of, among this parser's and ``also`` (a program's own fields). None
        for an option's own name: whether a release has it is the versions' question."""
        key = name.lstrip("-").replace("-", "_")
        also = set(also)
        if len(key) < 3 or key in self.flags or key in self.negations or key in also:
            return None
        hits = {target for option, target in self.flags.items() if option.startswith(key)}
        hits |= {target for option, target in self.negations.items() if option.startswith(key)}
        hits |= {own for own in also if own.startswith(key)}
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


def describing(package: str, version: str) -> tuple[Generation, ...]:
    """The generations that describe ``version``: its own series, else the two around it.

    A series is ``major.minor``, and ``major.minor.patch`` for a 0.x package: those change
    arguments and choices in patch releases (LLaMA-Factory 0.9.2 had choices 0.9.5 dropped), so
    one 0.x release's schema says nothing certain about another's.
    """
    key = parse_version(version)
    return _describing(package, key[:3] if key[:1] == (0,) else key[:2])


@lru_cache(maxsize=None)
def _describing(package: str, series: tuple[int, ...]) -> tuple[Generation, ...]:
    gens = generations(package)
    depth = len(series)
    same = [g for g in gens if g.key[:depth] == series]
    if same:
        return (same[-1],)
    below = [g for g in gens if g.key[:depth] < series]
    above = [g for g in gens if g.key[:depth] > series]
    return tuple(([below[-1]] if below else []) + ([above[0]] if above else []))


def primary(package: str, version: str) -> Generation:
    """The one generation a release is judged with where a rule needs one (names, defaults, suggestions)."""
    gens = generations(package)
    wanted = parse_version(version)
    below = [g for g in gens if compare(g.version, version) <= 0]
    above = [g for g in gens if compare(g.version, version) > 0]
    series = 2 if wanted[:1] == (0,) else 1  # 0.x packages change at the minor version
    if below and below[-1].key[:series] == wanted[:series]:
        return below[-1]
    if above and above[0].key[:series] == wanted[:series]:
        return above[0]
    return below[-1] if below else gens[0]


@dataclass(frozen=True)
class InUse:
    """The versions a launch is judged with, and the generation that describes the newest."""

    package: str
    candidates: Candidates
    generation: Generation

    def describe(self) -> str:
        text = self.candidates.describe()
        if len(self.candidates.versions) == 1 and \
                parse_version(self.candidates.versions[0])[:2] != self.generation.key[:2]:
            text += f"; judged with the {PACKAGE_LABEL.get(self.package, self.package)} {self.generation.version} schema"
        return text

    def judge(self, sets: tuple[str, ...], fails_in: Callable[["ArgSpace"], bool],
              override: Callable[[str], object] | None = None, spelling: bool = True) -> Verdict:
        """Where ``fails_in(the parser of a generation)`` holds among the candidates.

        ``override(version)`` answers first (a documented lifetime; UNSURE: dslint cannot tell); a release whose describing
        generations disagree is one dslint cannot tell. ``spelling``: see Candidates.judge (what
        a parser accepts is a spelling, unless the caller says otherwise).

        Names and values are judged against the releases the launch may run; where nothing
        bounds them (nothing pins the package, a git ref that names no release) that range is
        unknown, so only a verdict that holds in every known release stands (a name no release
        has). A checkout in the repository whose version or arguments cannot be read runs code
        of its own: no verdict.
        """
        memo: dict[str, bool] = {}

        def fails(version: str) -> bool | None:
            if override is not None:
                said = override(version)
                if said is UNSURE:
                    return None
                if said is not None:
                    return said
            answers = set()
            for gen in describing(self.package, version):
                if gen.schema_name not in memo:
                    memo[gen.schema_name] = bool(fails_in(arg_space(gen.schema_name, sets)))
                answers.add(memo[gen.schema_name])
            return answers.pop() if len(answers) == 1 else None

        verdict = self.candidates.judge(fails, spelling)
        if self.candidates.unread_source or (self.candidates.unbounded and not verdict.everywhere):
            return Verdict(self.candidates, (), ())
        return verdict

    def judge_name(self, sets: tuple[str, ...], name: str) -> Verdict:
        """Where ``name`` is not an argument: by the documented lifetimes; then, where the release's
        own wheel differs in this name from the releases the schemas describing it were made
        from, by that wheel (dslint/evidence/argnames.py); else by the schemas."""
        life = documented(self.package, name)

        def override(version: str) -> bool | None | object:
            if life is not None:
                if life.unsure(version):
                    return UNSURE
                accepted = life.accepts(version)
                if accepted is not None:
                    return not accepted
            return _history_fails(self.package, version, sets, name)

        return self.judge(sets, lambda space: space.lookup(name) is None, override)


@lru_cache(maxsize=None)  # asked for every release of every name of every launch; the answer is the shipped data's
def _history_fails(package: str, version: str, sets: tuple[str, ...], name: str) -> bool | None:
    """Whether release ``version`` lacks argument ``name``, by the names its wheel defines; None
    where the schemas decide.

    The history records names, not commands: where the release agrees with the releases the
    schemas were made from, the schemas say which command has the name. Where it differs
    from one of them (``--num_infer_workers``: in the ms-swift 3.4.0 wheel, not in 2.6.1's
    nor 3.12.6's), the release's own wheel decides.
    """
    around = describing(package, version)
    if [g.version for g in around] == [version]:
        return None  # a schema was made from this very release (the names file is not read)
    mine = _has_name(package, version, sets, name)
    if mine is None:
        return None
    theirs = [_has_name(package, g.version, sets, name) for g in around]
    # The package's own names are compared too: the inherited ones are every release's of the
    # base package, so they agree everywhere and hide a field the package itself added and dropped
    # (ms-swift 3.1-3.5's vllm_device, which TRL also once had).
    own = _has_name(package, version, sets, name, inherited_too=False)
    theirs_own = [_has_name(package, g.version, sets, name, inherited_too=False) for g in around]
    if all(other == mine for other in theirs if other is not None) and \
            all(other == own for other in theirs_own if other is not None):
        return None
    return not mine


def _has_name(package: str, version: str, sets: tuple[str, ...], name: str, inherited_too: bool = True) -> bool | None:
    """The names history's answer for ``name`` in ``version`` (None: it does not cover that
    release). A spelling the schemas map to another field (an alias) is asked about that field."""
    from dslint.evidence.argnames import has_name

    found = has_name(package, version, name, inherited_too)
    if found is not False:
        return found
    key = name.lstrip("-").replace("-", "_")
    for gen in describing(package, version):
        hit = arg_space(gen.schema_name, sets).lookup(name)
        if hit is not None and hit[0] != key and has_name(package, version, hit[0], inherited_too):
            return True
    return False


def reader_start(plan) -> str | None:
    """Where the versions of a launch's reader are looked up: the program's own file when it was
    read statically (the pins nearest the program that parses the arguments: a checkout of another
    project in the repository pins its own), else the file that launches it."""
    program = getattr(plan, "program", None)
    if program is not None and program.established and program.facts is not None and program.program:
        return program.program
    return plan.origin.path if plan.origin is not None else None


def in_use(package: str, start: str | None, settings: Any, program: Any = None) -> InUse | None:
    if not generations(package):
        return None
    found = candidates(package, start, settings, program)
    return InUse(package, found, primary(package, found.newest))


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


def _swift_tuner_name(version: str) -> str:
    """The tuner flag an ms-swift release reads (the newest name where two are accepted)."""
    return next(n for n in reversed(SWIFT_TUNER_NAMES) if DOCUMENTED["ms-swift"][n].accepts(version) or n == "sft_type")


def swift_tuner_flag_findings(plan, settings):
    """(arg, headline, note, rename target and what calls it so, verdict) for tuner flags some candidate ms-swift does not read."""
    found = plan_sets(plan)
    if found is None or found[0] != "ms-swift":
        return
    sets = found[1]
    use = in_use("ms-swift", reader_start(plan), settings, plan.program)
    if use is None:
        return
    for name in SWIFT_TUNER_NAMES:
        arg = plan.arg(name)
        if arg is None:
            continue
        verdict = use.judge_name(sets, name)
        if not verdict.anywhere:
            continue
        rights = {_swift_tuner_name(v) for v in verdict.failing + verdict.unsure}
        right = rights.pop() if len(rights) == 1 else None
        note = f"ms-swift stops with ValueError: remaining_argv: ['--{name}', ...] ({use.candidates.why()})"
        calls = f"{'that version calls' if len(verdict.failing) == 1 else 'those versions call'} it --{right}" if right else None
        yield arg, f"--{name} is not a flag of {verdict.where()}", note, (right, calls), verdict
