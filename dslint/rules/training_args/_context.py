"""What the DS7xx launch rules need about one plan: its consumer, the versions in use, the
argument spaces of those versions and of the program's own parsers, and the training config;
and whether the consumer accepts an argument's name (``TrainingContext.accepts``, DS701).
"""

from __future__ import annotations

from functools import cached_property

from dslint.diagnostics import Related
from dslint.documents.model import TRAINING_YAML
from dslint.launch.consumer import program_arguments
from dslint.rules._training import (PACKAGE_LABEL, ArgSpace, InUse, arg_space, documented, generations, in_use, plan_sets,
                                    reader_start)
from dslint.rules.training_args._common import truthy

# Names another rule owns (DS312: ms-swift's tuner flag generations; DS311: --config).
OWNED_ELSEWHERE = {"ms-swift": {"sft_type", "train_type", "tuner_type", "config", "config_file"}}

_CONTEXTS: dict[int, tuple] = {}  # id(plan) -> (plan, context, TrainingContext): built once per plan, not once per rule


def training_context(plan, context) -> "TrainingContext":
    hit = _CONTEXTS.get(id(plan))
    if hit is not None and hit[0] is plan and hit[1] is context:
        return hit[2]
    if len(_CONTEXTS) > 4096:
        _CONTEXTS.clear()
    found = TrainingContext(plan, context)
    _CONTEXTS[id(plan)] = (plan, context, found)
    return found


class TrainingContext:
    """What the DS7xx launch rules need about one plan."""

    def __init__(self, plan, context):
        self.plan = plan
        # Who reads the arguments decides their names, types and versions: without an established
        # reader (a launch whose program was read or is a known console, or a config whose own keys
        # name its framework) there is nothing to judge them against.
        self.unjudged = unjudged_reader(plan)
        found = plan_sets(plan) if self.unjudged is None else None
        if found and found[0] == "transformers":
            self.unjudged = self_read_config(plan)
            found = found if self.unjudged is None else None
        self.package, self.sets, self.strict = found if found else (None, (), False)
        start = reader_start(plan)
        self.in_use: InUse | None = in_use(self.package, start, context.settings, plan.program) if self.package else None
        self.space: ArgSpace | None = arg_space(self.in_use.generation.schema_name, self.sets) if self.in_use else None
        self.config_doc = _config_document(plan)
        if getattr(self.config_doc, "flavor", None) == "axolotl":  # axolotl YAML follows axolotl's own schema
            self.package = None
        # A custom script parses its own dataclasses besides TrainingArguments; TRL's configs
        # extend TrainingArguments: a field of either is "known" for value checks.
        self.extra_spaces = _newest_trl_spaces() if self.package == "transformers" else []
        # What the program's own parsers accept, when its program was read: the union of the
        # parsers that really parse this command line, and whether that union is complete.
        self.own: dict = {}
        self.parsers = None
        program = getattr(plan, "program", None)
        if self.package == "transformers" and program is not None and program.established:
            self._read_parsers(program)
        elif self.package in ("ms-swift", "llamafactory") and program is not None and program.established \
                and plan.entry is None:
            # A training script of its own that imports the framework: the flags its own argparse
            # defines are read by that parser, with its types, not by the framework's dataclasses.
            found_parsers = program_arguments(program)
            if found_parsers is not None:
                self.own = {name: d for name, d in found_parsers.own.items()}
        self.vendored: dict = _vendored_fields(program, self.package)
        self._verdicts: dict = {}
        if self.package is not None and not self._belongs():
            self.package = None

    def _read_parsers(self, program) -> None:
        """Take the names, completeness and schema sets from the parsers the program builds."""
        self.parsers = program_arguments(program)
        if self.parsers is None:
            return
        self.own = self.parsers.own
        self.strict = self.parsers.complete
        classes = tuple(schema.partition(":")[2] for schema in self.parsers.schemas if schema.startswith("transformers:"))
        if classes and self.in_use is not None:
            self.sets = classes  # Seq2SeqTrainingArguments has fields TrainingArguments lacks
            self.space = arg_space(self.in_use.generation.schema_name, self.sets)
        others = [schema for schema in self.parsers.schemas if not schema.startswith("transformers:")]
        self.extra_spaces = [space for space in map(_trl_space, others) if space]
        if len(self.extra_spaces) < len(others):
            self.strict = False  # a TRL config dslint has no schema for: its fields are unknown

    def _belongs(self) -> bool:
        """False for a file that is not this consumer's config after all.

        A config no launch reaches was given its consumer by its keys alone: LLaMA-Factory's v1
        configs, verl's Hydra configs and ms-swift's Ray pipeline configs (nested sections) look
        like ms-swift or LLaMA-Factory YAML. Such a file is judged only when most of its keys
        are arguments of some shipped version. ms-swift's Ray pipeline (`use_ray`) and
        LLaMA-Factory's Megatron mode (`USE_MCA=1`, mcore_adapter's arguments) parse other
        dataclasses: not judged.
        """
        plan = self.plan
        if self.package == "ms-swift" and truthy(getattr(plan.arg("use_ray"), "value", None)):
            return False
        if self.package == "llamafactory" and use_mca(plan):
            return False
        if plan.launcher != "yaml" or not self.strict:
            return True
        names = [n for n in plan.args if n != "ENV"]
        if not names:
            return False
        spaces = [arg_space(g.schema_name, ()) for g in generations(self.package)]
        unknown = [n for n in names if n not in self.vendored and all(sp.lookup(n) is None for sp in spaces)]
        if self.package == "ms-swift" and any(isinstance(plan.args[n].value, dict) for n in unknown):
            return False  # the Ray pipeline's nested sections (train:, rollout:, teacher:)
        return (len(names) - len(unknown)) * 10 >= len(names) * 7

    @property
    def active(self) -> bool:
        return self.package is not None and self.space is not None

    def label(self) -> str:
        return PACKAGE_LABEL.get(self.package or "", self.package or "")

    def from_yaml(self, arg) -> bool:
        if arg.span is None:
            return False
        if self.config_doc is not None and arg.span.source is self.config_doc.source:
            return True
        return False

    def node(self, arg):
        """The YAML node of an argument that came from the training config."""
        if not self.from_yaml(arg) or self.config_doc is None or self.config_doc.mapping is None:
            return None
        entry = self.config_doc.mapping.entry(arg.name)
        return entry.value if entry is not None else None

    def reader(self) -> str:
        """How the YAML values reach the dataclass: tokens | omegaconf-dict | pyyaml-dict | defaults | unknown."""
        if self.package == "ms-swift":
            return "tokens"
        if self.package == "llamafactory":
            return "omegaconf-dict" if self.space.reader.get("loader") == "omegaconf" else "pyyaml-dict"
        return "unknown"

    def version_related(self) -> Related:
        return Related(self.in_use.describe())

    def lookup(self, name: str):
        found = self.space.lookup(name)
        if found is None:
            for space in self.extra_spaces:
                found = space.lookup(name)
                if found is not None:
                    break
        if found is None and self.own:
            key = name.lstrip("-").replace("-", "_")
            definition = self.own.get(key)
            if definition is not None:
                found = (definition.name, _own_property(definition), False)
        return found

    def default(self, name: str):
        """The consumer's default for an argument (the schema's), None when it has none."""
        found = self.lookup(name)
        return found[1].get("default") if found else None

    def parsers_text(self) -> str:
        """The parsers of the program, as a message names them."""
        shown = [e.describe() for e in self.parsers.evidence] or [self.own[next(iter(self.own))].evidence.describe()]
        return "; ".join(shown[:2])

    def overwritten(self, *names: str):
        """The program's own assignment to one of these arguments after parsing (``args.save_steps =
        args.eval_steps * 5``, ``setattr(args, "x", ...)``), as Evidence, or None. The program was read
        statically (dslint.launch.pyprogram), so the value in the file or on the command line is not
        the one the program uses."""
        program = getattr(self.plan, "program", None)
        facts = program.facts if program is not None and program.established else None
        if facts is None:
            return None
        return next((facts.assigned[n] for n in names if n in facts.assigned), None)

    def known_args(self):
        """(name, arg, field, schema property, negated) for each argument the consumer knows."""
        for name, arg in self.plan.args.items():
            if self.package != "transformers" and name.lstrip("-").replace("-", "_") in self.own:
                continue  # the program's own parser reads it (see __init__)
            found = self.lookup(name)
            if found is not None:
                yield (name, arg, *found)

    # -- DS701: does the consumer's parser take this name? ------------------------------------

    def accepts(self, name: str) -> bool:
        """Does the consumer take the argument ``name`` in the versions the launch may run with?

        True as well for what DS701 leaves alone: names it does not judge, names some parser
        besides the consumer's defines (TRL's, Megatron-Core's, the program's own, the checkout's),
        an abbreviation, and a custom script's field that no known version lacks.
        """
        return (self._not_judged_here(name) or self._in_every_generation(name) or self._a_trl_field(name)
                or self._a_megatron_core_name(name) or self._an_abbreviation(name)
                or self._defined_by_the_program(name) or self._defined_by_the_checkout(name)
                or self._a_custom_scripts_field(name) or not self.name_verdict(name).anywhere)

    def lifetime(self, name: str):
        """When the project documents ``name`` to be accepted (a Lifetime), None when it does not say."""
        return documented(self.package, name)

    @cached_property
    def generation_spaces(self) -> list[ArgSpace]:
        """The parser of each shipped generation of the consumer, with this launch's sets."""
        return [arg_space(g.schema_name, self.sets) for g in generations(self.package)]

    def having(self, name: str) -> list:
        """The shipped generations whose parser has ``name``."""
        return [g for g, space in zip(generations(self.package), self.generation_spaces) if space.lookup(name) is not None]

    def name_verdict(self, name: str):
        """Where among the versions in use ``name`` is not an argument (computed once per name)."""
        if name not in self._verdicts:
            self._verdicts[name] = self.in_use.judge_name(self.sets, name)
        return self._verdicts[name]

    def _not_judged_here(self, name: str) -> bool:
        """Not an argument's name (empty, a ``$VAR``, the ENV block), or one another rule judges."""
        return not name or name in OWNED_ELSEWHERE.get(self.package, set()) or name.startswith("$") or name == "ENV"

    def _in_every_generation(self, name: str) -> bool:
        return self.lifetime(name) is None and len(self.having(name)) == len(self.generation_spaces)

    def _a_trl_field(self, name: str) -> bool:
        """A TRL field of a transformers launch."""
        return self.space.lookup(name) is None and any(space.lookup(name) is not None for space in self.extra_spaces)

    @cached_property
    def _megatron_core(self) -> ArgSpace | None:
        """Megatron-Core's names: LLaMA-Factory parses mcore_adapter's TrainingArguments with USE_MCA=1,
        so they count unless the launch sets USE_MCA off."""
        return _megatron_core_space() if self.package == "llamafactory" and use_mca(self.plan) is not False else None

    def _a_megatron_core_name(self, name: str) -> bool:
        return self._megatron_core is not None and self._megatron_core.lookup(name) is not None

    def _an_abbreviation(self, name: str) -> bool:
        """argparse accepts a unique prefix of an option on the command line."""
        return not self.from_yaml(self.plan.args[name]) and bool(self.space.prefix_match(name, self.own))

    def _defined_by_the_program(self, name: str) -> bool:
        """A field or flag the program's own parsers define."""
        return name.lstrip("-").replace("-", "_") in self.own

    def _defined_by_the_checkout(self, name: str) -> bool:
        """A field of the argument dataclasses of the checkout the launch runs."""
        return name.lstrip("-").replace("-", "_") in self.vendored

    def _a_custom_scripts_field(self, name: str) -> bool:
        """A parser dslint does not see whole (a custom script's own dataclasses) and a name no
        known version of the consumer has nor documents."""
        return not self.strict and not self.having(name) and self.lifetime(name) is None


# TRL configs named in a program's HfArgumentParser/TrlParser -> the TRL schema set that holds them.
_TRL_SETS = {"SFTConfig": "sft", "DPOConfig": "dpo", "GRPOConfig": "grpo"}
_JSON_TYPES = {"int": "integer", "float": "number", "bool": "boolean", "str": "string", "list": "array", "dict": "object"}


def _trl_space(schema: str) -> ArgSpace | None:
    package, _, name = schema.partition(":")
    if package != "trl" or name not in _TRL_SETS:
        return None
    newest = generations("trl")[-1:]
    return arg_space(newest[0].schema_name, (_TRL_SETS[name],)) if newest else None


def _own_property(definition) -> dict:
    """A field or flag the program defines, shaped like a schema property for the value checks."""
    prop: dict = {"x-dslint-python-type": definition.type or "any", "x-dslint-defined-at": definition.evidence.where()}
    kind = _JSON_TYPES.get(definition.type or "")
    if kind is not None:
        prop["type"] = [kind, "null"] if definition.default is None else kind
    if definition.type in ("int", "float", "bool") and not definition.flag:
        prop["x-dslint-cli-type"] = definition.type
    return prop


def unjudged_reader(plan) -> str | None:
    """Why the launch's training arguments have no reader to judge them against, or None: the
    program is not established (not found, not read, or it shows no known framework). A guess
    from the flags (``--deepspeed cfg.json`` suggests HF) or from a config's common keys
    (``learning_rate``, ``output_dir``) does not say whose parser reads the names."""
    program = getattr(plan, "program", None)
    if program is None or not program.established:
        return "the reader is not established" + (f" ({program.assumption})" if program is not None and program.assumption else "")
    return None


def self_read_config(plan) -> str | None:
    """A program of its own (not a framework's console) that reads the launch's YAML config with
    OmegaConf/Hydra: the file is the program's config, with OmegaConf's types and the program's
    keys, and what reaches TrainingArguments is up to the program."""
    program = getattr(plan, "program", None)
    config = _config_document(plan)
    if program is None or program.facts is None or program.config_system is None or config is None \
            or config.kind != TRAINING_YAML:
        return None
    return f"{program.config_system.describe()}: the program reads its YAML config itself"


def use_mca(plan) -> bool | None:
    """Does the launch set USE_MCA as LLaMA-Factory reads it (is_env_enabled: true, y, 1)? None: not said."""
    value = plan.env.get("USE_MCA") if plan.env else None
    text = getattr(value, "value", None)
    if text is None:
        return None
    return str(text).lower() in ("true", "y", "1")


def _config_document(plan):
    """The training config's document: the one the launch names, or the YAML launch itself."""
    if plan.training_config is not None and plan.training_config.document is not None:
        return plan.training_config.document
    if plan.launcher == "yaml":
        return plan.origin
    return None


def _newest_trl_spaces() -> list[ArgSpace]:
    return [arg_space(g.schema_name, ()) for g in generations("trl")[-1:]]


def _vendored_fields(program, package) -> dict:
    """A checkout of the package in the repository that the launch runs (dslint.launch.vendored):
    a name its argument dataclasses define is an argument of the version that runs."""
    source = getattr(program, "sources", {}).get(package) if program is not None and package else None
    return source.fields if source is not None else {}


def _megatron_core_space():
    """Megatron-Core's argument names, from the newest ms-swift's Megatron set (which mirrors them)."""
    newest = generations("ms-swift")[-1]
    return arg_space(newest.schema_name, ("megatron-sft",))
