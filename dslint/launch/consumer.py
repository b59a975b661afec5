"""Who reads a launch's files, with the file and line that prove it.

A launch names a program: a console entry point (``swift sft``, ``llamafactory-cli train``,
``megatron sft``), a Python file (``deepspeed train.py``), or a module (``python -m pkg.train``,
``deepspeed --module openrlhf.cli.train_sft``). The program decides how the DeepSpeed config
and the training arguments are read: HF Trainer fills ``"auto"`` and compares values with
TrainingArguments, a plain ``deepspeed.initialize`` loop fills nothing, a Hydra app reads its
YAML with OmegaConf. So the program is read (statically, ``dslint.launch.pyprogram``) and
classified, and the verdict keeps its evidence:

- *established*: the program was read and shows its kind (``train.py:40 calls
  transformers.Trainer``), or the launcher is the program (``swift sft``), or it is a module of
  a known package (``-m openrlhf.cli.train_sft``);
- *assumed*: the program is outside the repository, missing, unreadable, or shows nothing
  recognisable; the kind is then guessed from the flags (``--deepspeed cfg.json`` suggests HF
  Trainer) and rules that depend on it say less (``Consumer.assumption``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from dslint.launch.pymodule import MISSING
from dslint.launch.pyprogram import ArgDef, Evidence, KeywordCall, Program, dataclass_fields, module_file, read_program

# Consumer kinds, and who among the DeepSpeed readers each one is (``LaunchPlan.consumer``).
HF, TRL, ACCELERATE, DEEPSPEED = "hf", "trl", "accelerate", "deepspeed"
LLAMAFACTORY, SWIFT, MEGATRON_SWIFT, MEGATRON_DS = "llamafactory", "swift", "megatron-swift", "megatron-deepspeed"
AXOLOTL, OPENRLHF, HYDRA, INFERENCE, UNKNOWN = "axolotl", "openrlhf", "hydra", "inference", "unknown"
VERL = "verl"

DEEPSPEED_READER = {
    HF: "hf", TRL: "hf", AXOLOTL: "hf", ACCELERATE: "accelerate", DEEPSPEED: "deepspeed",
    MEGATRON_DS: "deepspeed", LLAMAFACTORY: "llamafactory", SWIFT: "swift", MEGATRON_SWIFT: "megatron",
}
LABEL = {
    HF: "HF Trainer", TRL: "a TRL trainer", ACCELERATE: "an accelerate Accelerator loop",
    DEEPSPEED: "a plain deepspeed.initialize loop", LLAMAFACTORY: "LLaMA-Factory", SWIFT: "ms-swift",
    MEGATRON_SWIFT: "Megatron-SWIFT", MEGATRON_DS: "Megatron-DeepSpeed", AXOLOTL: "axolotl", OPENRLHF: "OpenRLHF",
    HYDRA: "a Hydra/OmegaConf app", VERL: "verl", INFERENCE: "inference or evaluation only", UNKNOWN: "an unknown program",
}

#: Modules of installed packages that are programs of a known kind (``python -m`` / ``--module``).
KNOWN_MODULES: tuple[tuple[str, str], ...] = (
    ("swift.cli._megatron", MEGATRON_SWIFT), ("swift.megatron", MEGATRON_SWIFT), ("swift.cli", SWIFT),
    ("swift.llm", SWIFT), ("llamafactory", LLAMAFACTORY), ("llmtuner", LLAMAFACTORY), ("trl.scripts", TRL),
    ("trl.cli", TRL), ("trl", TRL), ("axolotl.cli", AXOLOTL), ("openrlhf.cli", OPENRLHF), ("verl", VERL),
    ("vllm.entrypoints", INFERENCE), ("lm_eval", INFERENCE), ("sglang.launch_server", INFERENCE),
)

# What a program's qualified names say, strongest first: (kind, prefixes). A program that
# builds a trainer is that trainer's, whatever else it imports; `deepspeed.initialize` counts
# only when no trainer or Accelerator owns the engine.
_TRAINERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (LLAMAFACTORY, ("llamafactory.train", "llamafactory.launcher", "llamafactory.cli", "llamafactory.run_exp",
                    "llmtuner.run_exp", "llmtuner.train", "llmtuner.tuner")),
    (MEGATRON_SWIFT, ("swift.megatron",)),
    # swift.llm.run: ms-swift 1.x's entries (swift/cli/sft.py 1.3.0); swift.pipelines: 4.x's (swift/cli/sft.py 4.0.0).
    (SWIFT, ("swift.llm.sft_main", "swift.llm.pt_main", "swift.llm.rlhf_main", "swift.llm.SftArguments",
             "swift.llm.TrainArguments", "swift.llm.RLHFArguments", "swift.cli", "swift.llm.train", "swift.llm.run",
             "swift.pipelines")),
    (AXOLOTL, ("axolotl.cli", "axolotl.train")),
    (OPENRLHF, ("openrlhf.cli", "openrlhf.trainer")),
    (VERL, ("verl.trainer",)),
)
_HF_NAMES = ("transformers.Trainer", "transformers.Seq2SeqTrainer", "transformers.trainer.Trainer",
             "transformers.trainer_seq2seq.Seq2SeqTrainer")
_HF_ARGS = ("transformers.TrainingArguments", "transformers.Seq2SeqTrainingArguments", "transformers.HfArgumentParser",
            "transformers.training_args.TrainingArguments", "transformers.hf_argparser.HfArgumentParser")
_MEGATRON = ("megatron.training.pretrain", "megatron.training", "megatron.initialize", "megatron.get_args",
             "megatron.core", "megatron.model", "megatron.training.get_args")
_INFERENCE_CALLS = ("deepspeed.init_inference", "vllm.LLM", "vllm.SamplingParams", "transformers.pipeline",
                    "transformers.TextGenerationPipeline")
_TRAINING_METHODS = ("backward", "train", "training_step", "step")
# What an evaluation shows: gradients off, generation, a model put in eval mode, an inference engine.
_EVALUATION_CALLS = ("torch.inference_mode", "torch.no_grad", "torch.set_grad_enabled") + _INFERENCE_CALLS
_EVALUATION_METHODS = ("generate", "eval")
# What training shows, in any file read: a backward pass, an optimizer or scheduler step, a
# trainer, an optimizer built. Saving shows in the entry program (a project's model package
# defines save helpers that an evaluation imports and never calls).
_TRAINING_METHODS_SEEN = ("backward", "zero_grad", "step", "train", "training_step")
_SAVING_METHODS = ("save_checkpoint", "save_model", "save_state", "save_16bit_model", "save_pretrained", "save",
                   "save_fp16_model")
_TRAINING_NAMES = ("torch.optim", "deepspeed.ops.adam", "deepspeed.ops.lion", "bitsandbytes.optim", "transformers.Trainer",
                   "transformers.Seq2SeqTrainer", "transformers.TrainingArguments", "transformers.get_scheduler",
                   "transformers.optimization", "transformers.AdamW", "trl", "peft.get_peft_model")


@dataclass
class Consumer:
    """Who reads a launch's DeepSpeed config and training arguments, and how sure dslint is."""

    kind: str
    established: bool
    evidence: list[Evidence] = field(default_factory=list)
    program: str | None = None  # the entry as resolved: a file path, a module or a console command
    assumption: str | None = None  # when not established: what was assumed, and why
    facts: Program | None = None  # what the entry program (and its project imports) showed
    config_system: Evidence | None = None  # Hydra/OmegaConf use: YAML is read with OmegaConf's rules
    # What the program's imports say about a package's version: package -> (specifier, evidence).
    version_hints: dict = field(default_factory=dict)
    # Rival trainers the program's imports hold (``_undecided``): evidence that no one kind can be
    # assumed either, so the launch's flags must not pick one.
    rivals: list[Evidence] = field(default_factory=list)
    # The program evaluates and never trains or saves (``evaluation_only``): an Accelerator or
    # deepspeed.initialize loop run for evaluation; training and saving rules do not apply.
    evaluation: Evidence | None = None
    # Checkouts of the packages it runs that are in the repository (dslint.launch.vendored):
    # package -> Source; their version and argument dataclasses are the evidence.
    sources: dict = field(default_factory=dict)

    @property
    def label(self) -> str:
        label = LABEL.get(self.kind, self.kind)
        return f"{label}, evaluation only" if self.evaluation is not None and self.kind != INFERENCE else label

    @property
    def trains(self) -> bool:
        """False only when the program was read and shows evaluation and no training or saving."""
        return not (self.established and (self.kind == INFERENCE or self.evaluation is not None))

    @property
    def deepspeed_reader(self) -> str | None:
        return DEEPSPEED_READER.get(self.kind)

    def describe(self) -> str:
        if self.established:
            proof = "; ".join(e.describe() for e in self.evidence[:2])
            return f"{self.label} ({proof})" if proof else self.label
        return f"{self.label}, assumed: {self.assumption}" if self.assumption else self.label

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "label": self.label,
            "established": self.established,
            "program": self.program,
            "evidence": [{"path": e.path, "line": e.line, "text": e.text} for e in self.evidence],
            "assumption": self.assumption,
            "config_reader": "omegaconf" if self.config_system is not None else None,
        }


def of_console(kind: str, command: str, evidence: Evidence) -> Consumer:
    """A launcher that is the program itself (``swift sft``, ``llamafactory-cli``)."""
    return Consumer(kind, True, [evidence], program=command)


def of_module(name: str, evidence: Evidence) -> Consumer | None:
    """A module of an installed package whose kind is known."""
    for prefix, kind in KNOWN_MODULES:
        if name == prefix or name.startswith(prefix + "."):
            seen = Evidence(evidence.path, evidence.line, f"runs the module {name}")
            # verl's entry points are Hydra apps (@hydra.main in verl/trainer/main_ppo.py): YAML is OmegaConf's.
            return Consumer(kind, True, [seen], program=name, config_system=seen if kind == VERL else None)
    return None


def classify(program: Program) -> Consumer:
    """The kind of a program from what it uses, with the evidence for it."""
    facts = program
    hydra = _config_system(facts)
    undecided = _undecided(facts)
    if undecided is not None:
        why, rivals = undecided
        return Consumer(UNKNOWN, False, [], program=program.entry, facts=program, assumption=why,
                        config_system=hydra, rivals=rivals)
    for kind, prefixes in _TRAINERS:
        evidence = facts.first_use(*prefixes)
        if evidence is not None:
            consumer = _found(program, hydra, kind, evidence)
            consumer.version_hints = _version_hints(facts)
            return consumer
    engine = _engine(facts)
    if engine is not None:
        return _found(program, hydra, *engine)
    return _without_engine(program, hydra)


def _config_system(facts: Program) -> Evidence | None:
    """Hydra or OmegaConf reading the program's YAML."""
    hydra = facts.first_use("hydra.main", "hydra.compose", "hydra.initialize", "hydra.initialize_config_dir",
                            "omegaconf.OmegaConf.load", "omegaconf.OmegaConf.merge", "omegaconf.OmegaConf.from_cli")
    # Used to be an attribute call on an alias (`OmegaConf.load`): the qualified name is under omegaconf.
    if hydra is None:
        hydra = facts.first_use("omegaconf.OmegaConf")
    return hydra


def _found(program: Program, hydra: Evidence | None, kind: str, *evidence: Evidence | None) -> Consumer:
    """An established consumer of ``kind`` with its evidence."""
    proof = [e for e in evidence if e is not None]
    consumer = Consumer(kind, True, proof, program=program.entry, facts=program, config_system=hydra)
    if kind in (ACCELERATE, DEEPSPEED, HYDRA):  # a loop of the project's own: it may only evaluate
        consumer.evaluation = evaluation_only(program)
        if consumer.evaluation is not None:
            consumer.evidence.append(consumer.evaluation)
    return consumer


def _engine(facts: Program) -> tuple | None:
    """(kind, evidence...) of the engine a program without a known trainer builds: TRL, an HF
    Trainer, Megatron's loop, an Accelerator or deepspeed.initialize."""
    trl = _trl_evidence(facts)
    if trl is not None:
        return TRL, trl
    hf = facts.derives_from("transformers.Trainer") or facts.derives_from("transformers.Seq2SeqTrainer") \
        or facts.first_use(*_HF_NAMES)
    if hf is not None:
        return HF, hf, facts.first_use(*_HF_ARGS)
    megatron = facts.first_use(*_MEGATRON)
    if megatron is not None:
        # Megatron-LM and Megatron-DeepSpeed share the package name; either way the engine is
        # built by Megatron's own training loop, which hands DeepSpeed the config as a path.
        return MEGATRON_DS, megatron, facts.first_use("deepspeed.initialize")
    accelerator = facts.first_use("accelerate.Accelerator")
    if accelerator is not None:
        return ACCELERATE, accelerator
    initialize = facts.first_use("deepspeed.initialize")
    if initialize is not None:
        return DEEPSPEED, initialize
    return None


def _without_engine(program: Program, hydra: Evidence | None) -> Consumer:
    """A program that builds no engine dslint knows: a Hydra app, an inference script, or unknown."""
    facts = program
    hf_args = facts.first_use(*_HF_ARGS)
    inference = facts.first_use(*_INFERENCE_CALLS) or facts.method_calls.get("generate")
    trains = any(m in facts.method_calls for m in ("backward",))
    if hydra is not None and (hf_args is None):
        if inference is not None and not trains:
            return _found(program, hydra, INFERENCE, inference)
        return _found(program, hydra, HYDRA, hydra)
    if inference is not None and not trains and hf_args is None:
        return _found(program, hydra, INFERENCE, inference)
    reason = "shows no trainer, Accelerator, deepspeed.initialize or known framework"
    if program.truncated:
        reason += f" within {len(program.files)} files"
    return Consumer(UNKNOWN, False, [], program=program.entry, facts=program,
                    assumption=f"{program.entry} {reason}", config_system=hydra)


def saves_a_model(facts: Program) -> bool:
    """Some file read calls a save method (``save_model``, ``save_pretrained``, ``save``, ...), or
    dslint could not read them all (a walk cut short or a file it could not parse)."""
    if facts.truncated or facts.unreadable:
        return True
    return any(m in facts.method_calls for m in _SAVING_METHODS)


def evaluation_only(facts: Program) -> Evidence | None:
    """Evidence that a program evaluates and never trains or saves a model, or None.

    The program shows an evaluation marker (``torch.inference_mode``/``no_grad``, ``.generate()``,
    ``.eval()``, an inference engine); no file read shows a backward pass, an optimizer,
    scheduler or trainer, or a ``.step()``/``.zero_grad()``/``.train()`` call; and the entry file
    saves nothing (``save_pretrained``, ``save_model``, ``save_checkpoint``, ...).

    The loop is where the engine is made: when the walk of the project's imports stopped early
    (depth or file limit) or a file could not be parsed, the entry file itself must make the
    Accelerator or call ``deepspeed.initialize``, so the loop that could train was read.
    """
    marker = facts.first_use(*_EVALUATION_CALLS)
    if marker is None:
        marker = next((facts.method_calls[m] for m in _EVALUATION_METHODS if m in facts.method_calls), None)
    if marker is None:
        return None
    if any(m in facts.method_calls for m in _TRAINING_METHODS_SEEN) or facts.first_use(*_TRAINING_NAMES) is not None:
        return None
    # method_calls keeps the first call in reading order, and the entry is read first
    if any(m in facts.method_calls and facts.method_calls[m].path == facts.entry for m in _SAVING_METHODS):
        return None
    if facts.truncated or facts.unreadable:
        # the first evidence of a name is the entry's when the entry has it (the entry is read first)
        made = [facts.uses.get(name) for name in ("accelerate.Accelerator", "deepspeed.initialize")]
        if not any(e is not None and e.path == facts.entry and e.text.startswith("calls") for e in made):
            return None
    return Evidence(marker.path, marker.line, f"{marker.text}, with no backward pass or optimizer in the files read "
                    "and no save in the entry")


def _undecided(facts: Program) -> tuple[str, list[Evidence]] | None:
    """Why the program's kind cannot be told, when its imports hold rival trainers and the entry names none.

    A project module that imports every pipeline it offers (a registry: ``{"finetuner": Finetuner,
    "dpo_aligner": DPOAligner, "inferencer": Inferencer}``) brings an HF Trainer, a TRL trainer and a
    plain ``deepspeed.initialize`` into every entry that imports it; which one runs is chosen at run
    time (a name in the arguments), so none of them is evidence. Evidence in the entry file itself
    still decides, and trainers that read DeepSpeed the same way (HF, TRL, axolotl) do not compete.
    """
    entry = facts.entry
    readers: dict[str, Evidence] = {}
    candidates = [(kind, facts.first_use(*prefixes)) for kind, prefixes in _TRAINERS]
    candidates += [(TRL, _trl_evidence(facts)),
                   (HF, facts.derives_from("transformers.Trainer") or facts.derives_from("transformers.Seq2SeqTrainer")
                    or facts.first_use(*_HF_NAMES)),
                   (DEEPSPEED, facts.first_use("deepspeed.initialize"))]
    for kind, evidence in candidates:
        if evidence is None:
            continue
        if evidence.path == entry:
            return None
        readers.setdefault(DEEPSPEED_READER.get(kind, kind), evidence)
    if len(readers) < 2:
        return None
    rivals = list(readers.values())
    shown = "; ".join(e.describe() for e in rivals[:3])
    return (f"{entry} names no trainer itself, and the modules it imports use rival ones ({shown}): "
            "which runs is chosen at run time"), rivals


# Names one generation of a package exports and the other does not (checked in the wheels:
# ms-swift 2.6.1 swift/llm/utils/__init__.py exports SftArguments; 3.1.0 swift/llm/__init__.py
# exports TrainArguments instead).
_GENERATION_NAMES = (
    ("ms-swift", "swift.llm.SftArguments", "<3.0", "imports swift.llm.SftArguments, which ms-swift 3.0 renamed"),
    ("ms-swift", "swift.llm.TrainArguments", ">=3.0", "imports swift.llm.TrainArguments, new in ms-swift 3.0"),
)


def _version_hints(facts: Program) -> dict:
    hints = {}
    for package, name, spec, why in _GENERATION_NAMES:
        evidence = facts.first_use(name)
        if evidence is not None and package not in hints:
            hints[package] = (spec, Evidence(evidence.path, evidence.line, why))
    return hints


def _trl_evidence(facts: Program) -> Evidence | None:
    """A TRL trainer, config or parser the program uses (an import of other TRL helpers is not enough)."""
    for name, evidence in sorted(facts.uses.items(), key=lambda item: (item[1].path, item[1].line)):
        last = name.rsplit(".", 1)[-1]
        if name.startswith("trl.") and (last.endswith(("Trainer", "Config")) or last == "TrlParser"):
            return evidence
    for base, evidence in facts.subclasses.items():
        if base.startswith("trl."):
            return evidence
    return None


# --------------------------------------------------------------------------------------------
# Resolving a launch's program
# --------------------------------------------------------------------------------------------


def resolve_program(raw: str, module: bool, base: Path, repo_root: Path | None, cwd: Path,
                    workdir: Path | None = None) -> Path | None:
    """The file a launch's program word names, looked up as the linker looks up files. ``workdir``: the
    folder the script cd's into before the launch, where the program (or, for ``-m``, the first entry
    of sys.path) is looked up alone: the folders the script was not run from say nothing."""
    base = Path(os.path.abspath(base))  # a display path: its parents are compared with the repository root
    if workdir is not None and not os.path.isabs(raw):
        if module:
            roots = [workdir] + ([repo_root, repo_root / "src"] if repo_root is not None else [])
            found = module_file(raw, roots)
            if found is not None and found.name == "__init__.py" and (found.parent / "__main__.py").is_file():
                return found.parent / "__main__.py"
            return found
        candidate = workdir / raw
        return candidate if candidate.is_file() else None
    if module:
        roots = [base]
        directory = base
        while repo_root is not None and directory != repo_root and repo_root in directory.parents:
            directory = directory.parent
            roots.append(directory)
        if repo_root is not None:
            roots += [repo_root, repo_root / "src"]
        roots.append(cwd)
        found = module_file(raw, roots)
        if found is not None and found.name == "__init__.py" and (found.parent / "__main__.py").is_file():
            return found.parent / "__main__.py"
        return found
    if os.path.isabs(raw):
        path = Path(raw)
        return path if path.is_file() else None
    directory = base
    candidates = [base / raw]
    while repo_root is not None and directory != repo_root and repo_root in directory.parents:
        directory = directory.parent
        candidates.append(directory / raw)
    candidates.append(cwd / raw)
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    return None


def read(path: Path, repo_root: Path | None, display) -> Consumer:
    """Read and classify a program file."""
    if path.suffix not in (".py", "") and not path.name.endswith(".py"):
        return Consumer(UNKNOWN, False, program=display(path), assumption=f"{display(path)} is not a Python program")
    program = read_program(path, repo_root, display)
    if program is None:
        return Consumer(UNKNOWN, False, program=display(path),
                        assumption=f"{display(path)} could not be read as Python")
    return classify(program)


# --------------------------------------------------------------------------------------------
# The arguments a program's own parsers accept
# --------------------------------------------------------------------------------------------


@dataclass
class ProgramArguments:
    """The union of the parsers a program runs over its command line.

    ``schemas``: generated schemas that apply whole (``transformers:TrainingArguments``,
    ``trl:SFTConfig``); ``own``: flags and fields the project defines; ``complete``: every
    parser is known and none tolerates unknown flags, so a flag none of them has is an error
    of the parser (argparse exits with "unrecognized arguments", HfArgumentParser raises).
    """

    schemas: list[str] = field(default_factory=list)
    direct: list[str] = field(default_factory=list)  # the schemas of classes the parsers take themselves, not a project subclass
    own: dict[str, ArgDef] = field(default_factory=dict)
    complete: bool = True
    evidence: list[Evidence] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)  # dataclasses dslint could not see
    # a parser returns what it does not know (parse_known_args, return_remaining_strings=True)
    tolerant: bool = False

    def accepts(self, name: str) -> bool:
        return name in self.own


_EXTERNAL_DATACLASSES = {
    "transformers.TrainingArguments": "transformers:TrainingArguments",
    "transformers.Seq2SeqTrainingArguments": "transformers:Seq2SeqTrainingArguments",
    "transformers.training_args.TrainingArguments": "transformers:TrainingArguments",
}


def _schema(name: str) -> str | None:
    """The schema dslint has for a dataclass outside the project (TrainingArguments, a TRL config)."""
    schema = _EXTERNAL_DATACLASSES.get(name)
    if schema is None and name.startswith("trl.") and name.endswith("Config"):
        schema = f"trl:{name.rsplit('.', 1)[-1]}"
    return schema


def _add_dataclass(out: ProgramArguments, facts: Program, name: str) -> None:
    """The arguments a dataclass given to HfArgumentParser/TrlParser makes: a known schema, or the
    fields of a project class with the schemas of the classes outside the project it derives from."""
    schema = _schema(name)
    if schema is not None:
        out.schemas.append(schema)
        out.direct.append(schema)
        return
    fields = dataclass_fields(facts, name)
    if fields is None:
        out.unresolved.append(name)
        out.complete = False
        return
    cls = facts.classes.get(name.rsplit(".", 1)[-1])
    for base in _external_bases(facts, cls):
        schema = _schema(base)
        if schema is not None:
            out.schemas.append(schema)
        elif "." in base and not base.startswith(".") and base not in ("object",):
            out.unresolved.append(base)
            out.complete = False
    for definition in fields:
        out.own.setdefault(definition.name, definition)


def program_arguments(consumer: Consumer) -> ProgramArguments | None:
    """What the program's parsers accept; None when it runs none dslint could see."""
    facts = consumer.facts
    if facts is None or (not facts.parsers and not facts.argparse):
        return None
    out = ProgramArguments()
    for definition in facts.argparse:
        out.own.setdefault(definition.name, definition)
    for parser in facts.parsers:
        out.evidence.append(parser.evidence)
        if parser.tolerant:
            out.complete = False
            out.tolerant = True
        for name in parser.classes:
            _add_dataclass(out, facts, name)
    if facts.parsers and not any(p.kind in ("hf", "trl") for p in facts.parsers) and not facts.argparse:
        out.complete = False
    if facts.truncated or facts.unreadable:
        out.complete = False
    return out


def external_bases(facts: Program, name: str) -> list[str]:
    """The classes outside the project that the project class ``name`` derives from (none for other names)."""
    return _external_bases(facts, facts.classes.get(name.rsplit(".", 1)[-1]))


def _external_bases(facts: Program, cls, seen: frozenset = frozenset()) -> list[str]:
    if cls is None or cls.name in seen:
        return []
    out = []
    for base in cls.qualified_bases:
        local = facts.classes.get(base.rsplit(".", 1)[-1])
        if local is not None and local is not cls:
            out += _external_bases(facts, local, seen | {cls.name})
        elif base not in ("object", "?"):
            out.append(base)
    return out


# --------------------------------------------------------------------------------------------
# The TrainingArguments values a program sets itself
# --------------------------------------------------------------------------------------------

_TRAINING_ARGS = ("transformers.TrainingArguments", "transformers.Seq2SeqTrainingArguments",
                  "transformers.training_args.TrainingArguments",
                  "transformers.training_args_seq2seq.Seq2SeqTrainingArguments")

#: ``ProgramTraining.value``: the program sets the field in a way dslint cannot read
#: (a variable, ``**kwargs``, an assignment after construction, calls that disagree).
UNREAD = object()
#: ``ProgramTraining.value``: the program builds its TrainingArguments itself and leaves the field
#: at the class default, so a command-line flag of that name does not reach it.
CLASS_DEFAULT = object()


@dataclass(frozen=True)
class ProgramValue:
    """A value a program sets, with the evidence."""

    value: object
    evidence: Evidence


@dataclass
class ProgramTraining:
    """How a program gets its TrainingArguments (or a TRL config): parsed from the command line by
    HfArgumentParser/TrlParser, or built with literal keywords (``TrainingArguments(lr=2e-5, ...)``).

    ``trl``: the class is a TRL config, whose defaults differ from TrainingArguments' by version
    (SFTConfig's learning rate, bf16 on by default in TRL 1.x).
    """

    facts: Program
    parsed: list[str]  # the classes given to HfArgumentParser/TrlParser
    built: list[KeywordCall]  # literal constructions of a TrainingArguments-like class
    trl: bool
    evidence: Evidence | None

    def value(self, name: str):
        """What the program says ``name`` is: a ProgramValue, UNREAD, CLASS_DEFAULT, or None (nothing)."""
        facts = self.facts
        if name in facts.assigned:
            return UNREAD
        if self.built and not self.parsed:
            found: list[tuple[object, KeywordCall]] = []
            defaults = 0
            for call in self.built:
                if name in call.keywords:
                    if call.keywords[name] is MISSING:
                        return UNREAD
                    found.append((call.keywords[name], call))
                elif call.spread:
                    return UNREAD
                else:
                    defaults += 1
            values = {repr(v) for v, _ in found}
            if len(values) > 1 or (values and defaults):
                return UNREAD
            if found:
                value, call = found[0]
                where = call.evidence
                line = call.lines.get(name, where.line)
                return ProgramValue(value, Evidence(where.path, line, f"{name}={value!r} in {call.callee.rsplit('.', 1)[-1]}(...)"))
            own = self._own_default(name, [c.callee for c in self.built])
            return own if own is not None else CLASS_DEFAULT
        if self.parsed:
            return self._own_default(name, self.parsed)
        return None

    def _own_default(self, name: str, classes: list[str]):
        """The default a project dataclass gives ``name`` (a TrainingArguments subclass that changes it)."""
        found = set()
        evidence = None
        for cls in classes:
            fields = dataclass_fields(self.facts, cls)
            definition = next((f for f in reversed(fields or []) if f.name == name), None)
            if definition is None:
                continue
            if definition.default is MISSING:
                return UNREAD
            found.add(repr(definition.default))
            evidence = Evidence(definition.evidence.path, definition.evidence.line,
                                f"the default of {name} in {definition.evidence.text.split(' of ', 1)[-1]}")
            value = definition.default
        if len(found) > 1:
            return UNREAD
        return ProgramValue(value, evidence) if found else None


def _training_class(facts: Program, name: str, seen: frozenset = frozenset()) -> str | None:
    """``transformers``/``trl`` when ``name`` is TrainingArguments, a TRL config, or a project subclass of one."""
    if name in _TRAINING_ARGS:
        return "transformers"
    if name.startswith("trl.") and name.endswith(("Config", "Arguments")):
        return "trl"
    cls = facts.classes.get(name.rsplit(".", 1)[-1])
    # An outside base with the short name of a project class (`class Args(other.Args)`) is not that class again.
    if cls is None or cls.name in seen:
        return None
    kinds = {_training_class(facts, base, seen | {cls.name}) for base in _external_bases(facts, cls)}
    return "trl" if "trl" in kinds else "transformers" if "transformers" in kinds else None


def program_training(consumer: Consumer | None) -> ProgramTraining | None:
    """How the launch's program gets its training arguments; None when it was not read."""
    facts = consumer.facts if consumer is not None and consumer.established else None
    if facts is None:
        return None
    parsed, trl = [], False
    for parser in facts.parsers:
        for name in parser.classes:
            kind = _training_class(facts, name)
            if kind is not None:
                parsed.append(name)
                trl = trl or kind == "trl"
    if any(p.kind in ("hf", "trl") and not p.classes for p in facts.parsers):
        parsed.append("?")  # a parser over classes dslint could not name
    built = []
    for call in facts.calls:
        kind = _training_class(facts, call.callee)
        if kind is not None:
            built.append(call)
            trl = trl or kind == "trl"
    evidence = built[0].evidence if built and not parsed else next((p.evidence for p in facts.parsers), None)
    return ProgramTraining(facts, parsed, built, trl or consumer.kind == TRL, evidence)


__all__ = ["Consumer", "ProgramArguments", "classify", "of_console", "of_module", "program_arguments", "read",
           "resolve_program", "DEEPSPEED_READER", "LABEL", "VERL", "CLASS_DEFAULT", "external_bases", "ProgramTraining",
           "ProgramValue", "UNREAD", "program_training"]
