"""Linking: scripts and training YAML → launch plans, with the files they name loaded.

The linker reads launches the way each launcher runs them (ground truth in
shared/research/swift_npu_rules.md §1, §3 and deepspeed_rules.md §2, §5):

- ``deepspeed``: ``--num_gpus`` / ``--include`` / ``--num_nodes`` / a hostfile decide the
  processes; CUDA_VISIBLE_DEVICES only counts when none of num_gpus/include/exclude is given.
- ``torchrun`` and ``python -m torch.distributed.run|launch``: ``--nproc_per_node`` (default 1;
  ``gpu``/``auto`` = the visible devices) × ``--nnodes`` (default 1; a range is unknown).
- ``accelerate launch``: ``--num_processes`` (total, all machines) over the config file's.
- ``swift`` / ``megatron``: torchrun only when NPROC_PER_NODE or NNODES is set, else one process;
  a positional YAML/JSON config first, command-line flags after it win.
- ``llamafactory-cli train``: torchrun when FORCE_TORCHRUN is truthy or several devices are
  visible; NPROC_PER_NODE defaults to the visible devices; YAML first, ``key=value`` after it.
- ``python train.py``: one process.

The world size per launcher is dslint.launch.world; finding the files a launch names,
dslint.launch.lookup; which program reads the launch, dslint.launch.identify. Nothing is executed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from dslint.documents.model import DEEPSPEED, SCRIPT, TRAINING_JSON, TRAINING_YAML, Document, Mapping, Scalar
from dslint.launch.consumer import HYDRA, VERL, Consumer
from dslint.launch.identify import config_consumer, locate_sources, settle_consumer
from dslint.launch.lookup import Files
from dslint.launch.plan import Arg, LaunchPlan, Reference, Sourced, where
from dslint.launch.presets import SWIFT_PRESETS, preset_text
from dslint.launch.target import ascend_environment
from dslint.launch.world import WORLDS, launcher_int, visible_devices
from dslint.launch.wrapped import apply_wrappers, elsewhere
from dslint.source import SourceFile, Span


def _key_origin(entry) -> Callable[[], str]:
    return lambda: f"{entry.key} in {where(entry.key_span)}"


def _key(name: str) -> str:
    return name.lstrip("-").replace("-", "_")


class Linker:
    def __init__(self, documents: list[Document], cwd: Path | None = None, overrides: dict[str, bytes] | None = None, adopt=None):
        self.cwd = (cwd or Path.cwd()).resolve()
        self.documents = documents
        # overrides: display path -> bytes, the fixer's edited, unwritten files; adopt: listed files
        # another process reads (dslint.run.split.Adoptable)
        self.files = Files(documents, self.cwd, overrides or {}, adopt)
        self.loaded: list[Document] = self.files.loaded  # documents read because something links to them
        self.reached: set[int] = set()  # ids of DeepSpeed documents some plan uses
        self.consumers: dict[str, Consumer] = {}  # real path of a program → what reading it showed

    # ---- plans --------------------------------------------------------------------------

    def plans(self) -> list[LaunchPlan]:
        plans: list[LaunchPlan] = []
        used_configs: set[int] = set()
        for doc in list(self.documents):
            if doc.kind == SCRIPT and getattr(doc, "script", None) is not None:
                from dslint.launch.commands import find_launches

                for launch in find_launches(doc.script):
                    plan = self._script_plan(doc, launch)
                    if plan is not None:
                        plans.append(plan)
                        if plan.training_config and plan.training_config.document is not None:
                            used_configs.add(id(plan.training_config.document))
        for doc in list(self.documents):
            if doc.kind in (TRAINING_YAML, TRAINING_JSON) and doc.mapping is not None and id(doc) not in used_configs:
                plan = self._config_plan(doc)
                if plan is not None:
                    plans.append(plan)
        for plan in plans:
            if plan.deepspeed is not None and plan.deepspeed.document is not None:
                self.reached.add(id(plan.deepspeed.document))
        return plans

    # -- scripts

    def _script_plan(self, doc: Document, launch) -> LaunchPlan | None:
        command = launch.command
        base = Path(doc.source.path).parent
        plan = LaunchPlan(origin=doc, span=command.span, launcher=launch.launcher, consumer=None, entry=launch.entry, command=launch)
        plan.env = dict(command.environment)
        plan.visible_devices = visible_devices(plan.env, ascend_environment(plan))
        plan.workdir, plan.runs_elsewhere = self.files.workdir(doc, command, base)
        away = elsewhere(command)
        if away is not None:  # a container or another host: the script's `cd`s do not say where it runs
            plan.workdir, plan.runs_elsewhere = None, away
        self._arguments(plan, launch, base)
        WORLDS[launch.launcher](plan, self.files, base)
        apply_wrappers(plan, command)
        settle_consumer(plan, launch, base, self.files, self.consumers)
        if plan.training_config is None:
            self._flag_config(plan, launch, base)
        locate_sources(plan, base, self.files)
        if plan.program is not None and plan.program.kind in (HYDRA, VERL):
            self._hydra_config(plan, launch, base)
        self._deepspeed_reference(plan, base)
        plan.data_parallel = plan.world_size
        return plan

    def _arguments(self, plan: LaunchPlan, launch, base: Path) -> None:
        """The launcher's options, the program's flags, and the training config they start from."""
        for option in launch.launcher_option_list:
            if option.key:
                plan.launcher_args[option.key] = _arg_of(option)
        for option in launch.program_args:
            if option.name is not None:
                plan.args[_key(option.name)] = _arg_of(option)
        if launch.launcher in ("swift", "megatron", "llamafactory") or launch.config_file is not None:
            # the consoles, and the entry files they run (`torchrun swift/cli/sft.py cfg.json`)
            self._entry_config(plan, launch, base)
        elif launch.entry is None and launch.program_args and launch.program_args[0].name is None \
                and launch.launcher in ("python", "torchrun", "deepspeed", "accelerate"):
            self._positional_config(plan, launch.program_args[0], base)

    def _positional_config(self, plan: LaunchPlan, first, base: Path) -> None:
        """A program's first argument, when it is not a flag: a YAML/JSON is its training config."""
        text = first.text
        # `config=x.yaml` is a key=value override (OmegaConf.from_cli, Hydra), not a path.
        if text and text.lower().endswith((".yaml", ".yml", ".json")) and "=" not in text:
            self._training_config(plan, text, first.span, base, before_flags=True)
        elif text is None:
            # HfArgumentParser-style programs read a first positional YAML/JSON as their
            # arguments (parse_yaml_file(sys.argv[1])); one dslint cannot expand may set anything.
            plan.unseen_arguments = f"its first argument {first.value.raw} is not known statically ({first.span.where()})"

    def _flag_config(self, plan: LaunchPlan, launch, base: Path) -> None:
        """A training config handed over by a flag the program reads as its arguments (``--config`` of
        TrlParser, ``--config_file`` given to parse_yaml_file): found by reading the program, never by the
        flag's name alone (accelerate's own ``--config_file`` is a launcher option, not the program's)."""
        from dslint.launch.entries import config_flags

        flags = config_flags(plan.program, self.files.cwd)
        for option in reversed(launch.program_args):
            if option.name is None or option.key not in flags or option.value is None:
                continue
            raw, assumed = _word_value(option.value)
            self._training_config(plan, raw, option.value.span, base, before_flags=True,
                                  assumed=option.value.raw if assumed else None, skip=("env",))
            plan.notes.append(f"the training config is read from {option.name}: {flags[option.key].describe()}")
            return

    def _entry_config(self, plan: LaunchPlan, launch, base: Path) -> None:
        config = launch.config_file
        if config is not None:
            raw, assumed = _word_value(config)
            self._training_config(plan, raw, config.span, base, before_flags=True, assumed=config.raw if assumed else None)
        for option in launch.overrides:  # llamafactory-cli key=value
            if option.key:
                plan.args[option.key] = _arg_of(option)

    def _training_config(self, plan: LaunchPlan, raw: str | None, span: Span, base: Path, before_flags: bool,
                         assumed: str | None = None, skip: tuple[str, ...] = ()) -> None:
        reference = self.files.resolve("training-config", raw, span, base, expect=TRAINING_YAML, assumed=assumed,
                                       workdir=plan.folder)
        plan.training_config = reference
        plan.references.append(reference)
        doc = reference.document
        if doc is None or doc.mapping is None:
            plan.unseen_arguments = f"its training config {raw or span.text} could not be read ({span.where()})"
            return
        from_file = {}
        for entry in doc.mapping.entries:
            if entry.key == "ENV" and isinstance(entry.value, Mapping):
                for item in entry.value.entries:  # ms-swift: sets env vars only when not already set
                    if item.key not in plan.env and isinstance(item.value, Scalar):
                        plan.env[item.key] = _YamlEnv(str(item.value.value), item.value.span)
                continue
            if entry.key in skip:  # TrlParser sets `env:` as environment variables of the processes
                continue
            from_file[entry.key] = Arg(entry.key, entry.value.to_python(), entry.value.span, _key_origin(entry), entry.key_span)
        if before_flags:
            plan.args = {**from_file, **plan.args}
        else:
            plan.args.update(from_file)

    def _hydra_config(self, plan: LaunchPlan, launch, base: Path) -> None:
        """A Hydra app's primary config (``--config-path``/``--config-name``, dslint.launch.hydra) and the
        configs its defaults list names beside it. Only what the command line says is looked up: the
        folder ``@hydra.main`` names is the program's own business."""
        from dslint.launch.hydra import defaults_list, program_words, read_command

        command = read_command(program_words(launch))
        word = command.config_name
        name = _word_value(word)[0] if word is not None else None
        if not name:
            return
        file = name if name.endswith((".yaml", ".yml")) else f"{name}.yaml"
        folders: list[Path] = []
        path_word = command.config_path
        path_text = _word_value(path_word)[0] if path_word is not None else None
        program = plan.program
        if path_text:
            if os.path.isabs(path_text):
                folders.append(Path(path_text))
            elif program is not None and program.facts is not None and program.program:
                # Relative to the file that declares @hydra.main (hydra/_internal/utils.py:129-137).
                folders.append((self.cwd / program.program).parent / path_text)
        for extra in command.config_dirs:
            text = _word_value(extra)[0]
            if text:
                folders += self.files.candidates(text, base)
        if not folders:
            return
        candidates = [Path(os.path.normpath(folder / file)) for folder in folders]
        reference = self.files.first_file(Reference("training-config", name, word.span), candidates, TRAINING_YAML)
        plan.training_config = reference
        plan.references.append(reference)
        doc = reference.document
        if doc is None or doc.mapping is None:
            return
        entry = doc.mapping.entry("defaults")
        for kind, item in defaults_list(doc.mapping):
            if kind != "config":
                continue
            path = Path(doc.path).parent / f"{item}.yaml"
            if path.is_file():
                loaded = self.files.load(path, TRAINING_YAML)
                plan.references.append(Reference("hydra-default", item, entry.key_span, document=loaded))

    def _deepspeed_reference(self, plan: LaunchPlan, base: Path) -> None:
        if plan.deepspeed is not None:
            return
        arg = plan.args.get("deepspeed_config") if plan.consumer == "deepspeed" else None
        if arg is None:
            arg = plan.args.get("deepspeed")
        if arg is None:
            self._program_deepspeed(plan, base)
            return
        if arg.value is True or arg.value is None:
            return
        value = arg.value
        span = arg.span or plan.span
        if not isinstance(value, str):
            return
        text = value.strip()
        if plan.consumer in ("swift", "megatron") and text in SWIFT_PRESETS:
            plan.deepspeed = Reference("deepspeed", text, span, document=_preset_document(text), preset=text)
            plan.references.append(plan.deepspeed)
            return
        if text.startswith("{"):
            plan.deepspeed = Reference("deepspeed", text, span, document=_inline_document(text, span), inline=True)
            return
        arg_base = base
        if arg.span is not None and plan.training_config is not None and plan.training_config.document is not None:
            if arg.span.source is plan.training_config.document.source:
                arg_base = Path(plan.training_config.document.path).parent
        plan.deepspeed = self.files.resolve("deepspeed", text, span, arg_base, expect=DEEPSPEED, assumed=arg.assumed,
                                            workdir=plan.folder)
        plan.references.append(plan.deepspeed)

    def _program_deepspeed(self, plan: LaunchPlan, base: Path) -> None:
        """The DeepSpeed config a program names itself, ``TrainingArguments(deepspeed="ds.json")``:
        linked when the file is found (relative to the launch's folder and those above it); a path
        that is not found says nothing, since the program may run from elsewhere."""
        from dslint.launch.consumer import ProgramValue, program_training

        training = program_training(plan.program)
        said = training.value("deepspeed") if training is not None and training.built and not training.parsed else None
        if not isinstance(said, ProgramValue) or not isinstance(said.value, str) or not said.value.strip().endswith(".json"):
            return
        reference = self.files.resolve("deepspeed", said.value.strip(), plan.span, base, expect=DEEPSPEED)
        if reference.document is not None:
            plan.deepspeed = reference
            plan.references.append(reference)
            plan.notes.append(f"the DeepSpeed config is named by the program: {said.evidence.describe()}")

    # -- YAML / JSON training configs nobody launches from a script

    def _config_plan(self, doc: Document) -> LaunchPlan | None:
        flavor = doc.flavor or "hf"
        program = config_consumer(doc, flavor)
        consumer = program.deepspeed_reader if program.established else "hf"
        plan = LaunchPlan(origin=doc, span=doc.mapping.span, launcher="yaml", consumer=consumer, entry=f"{flavor} config",
                          program=program)
        for entry in doc.mapping.entries:
            plan.args[entry.key] = Arg(entry.key, entry.value.to_python(), entry.value.span, _key_origin(entry), entry.key_span)
        self._deepspeed_reference(plan, Path(doc.path).parent)
        locate_sources(plan, Path(doc.path).parent, self.files)
        plan.notes.append("no launch script reaches this config: the world size is unknown")
        return plan


class _YamlEnv:
    """An ``ENV:`` entry of an ms-swift YAML, shaped like a shell Value."""

    def __init__(self, value: str, span: Span):
        self.value = value
        self.span = span
        self.source_kind = "yaml-env"


def _arg_of(option) -> Arg:
    name = _key(option.name) if option.name else (option.key or "")
    if option.name is None and option.key:
        name = option.key
    assumed = False
    if option.value is None:
        value = True if option.name else None
        span = option.span
    elif len(option.values) <= 1:
        value, assumed = _word_value(option.value)
        span = option.value.span
    else:
        value = [w.value for w in option.values]
        span = Span(option.values[0].span.source, option.values[0].span.start, option.values[-1].span.end)
    shown = option.name or option.key or "argument"
    origin = f"{shown} at {where(option.span)}"
    if assumed:
        origin += f" (assuming {option.value.raw} keeps its default)"
    return Arg(name, value, span, origin, option.name_span, assumed=option.value.raw if assumed else None)


def _word_value(word) -> tuple:
    """(value, assumed): a word's static value, or its default when only the caller could change it."""
    if word.value is not None:
        return word.value, False
    if getattr(word, "assumed", None) is not None:
        return word.assumed, True
    return None, False


_PRESETS: dict[str, Document] = {}


def _preset_document(name: str) -> Document:
    """The ms-swift preset as a document; read once per run of dslint (presets never change)."""
    if name not in _PRESETS:
        _PRESETS[name] = _read_preset(name)
    return _PRESETS[name]


def _read_preset(name: str) -> Document:
    from dslint.documents.json_doc import parse_json

    source = SourceFile(path=f"<ms-swift preset {name}>", text=preset_text(name))
    root, problems, strict = parse_json(source)
    return Document(source=source, kind=DEEPSPEED, root=root, problems=problems, strict_json=strict)


def _inline_document(text: str, span: Span) -> Document | None:
    from dslint.documents.json_doc import parse_json

    try:
        json.loads(text)
    except ValueError:
        return None
    source = SourceFile(path=f"<inline JSON at {where(span)}>", text=text)
    root, problems, strict = parse_json(source)
    return Document(source=source, kind=DEEPSPEED, root=root, problems=problems, strict_json=strict)


def deepspeed_world(plan: LaunchPlan, config: Mapping) -> Sourced | None:
    """The world size DeepSpeed's batch check uses for this plan (config.py:456-474).

    Without an mpu, DeepSpeed divides by ``sequence_parallel_size`` when that key is in the
    config it was given as a dict (HF, accelerate, ms-swift and LLaMA-Factory pass dicts; a
    path string makes the test a substring test on the path). Megatron-DeepSpeed's mpu gives
    the data-parallel size: world / (tensor × pipeline parallel).
    """
    world = plan.world_size
    if world is None or world.value is None:
        return None
    if plan.consumer in ("hf", "swift", "llamafactory", "accelerate"):
        return _sequence_parallel_world(world, config)
    if plan.consumer == "deepspeed":
        return _model_parallel_world(world, plan.args)
    return world


def _sequence_parallel_world(world: Sourced, config: Mapping) -> Sourced:
    """The world over ``sequence_parallel_size`` when the config DeepSpeed is given says it."""
    sp_node = config.get("sequence_parallel_size")
    sp = launcher_int(sp_node.value) if isinstance(sp_node, Scalar) else None
    if sp and sp > 1:
        value = world.value / sp
        value = int(value) if float(value).is_integer() else value
        return Sourced(value, f"{world.origin}, divided by sequence_parallel_size {sp}", world.span)
    return world


def _model_parallel_world(world: Sourced, args: dict[str, Arg]) -> Sourced | None:
    """Megatron-DeepSpeed's data-parallel size: world / (tensor × pipeline parallel); None when it does not divide."""
    tp = launcher_int(args["tensor_model_parallel_size"].value) if "tensor_model_parallel_size" in args else None
    pp = launcher_int(args["pipeline_model_parallel_size"].value) if "pipeline_model_parallel_size" in args else None
    if "no_pipeline_parallel" in args:
        pp = 1
    if (tp and tp > 1) or (pp and pp > 1):
        divisor = (tp or 1) * (pp or 1)
        if world.value % divisor:
            return None
        return Sourced(world.value // divisor, f"{world.origin} / (tensor {tp or 1} × pipeline {pp or 1} parallel)", world.span)
    return world
