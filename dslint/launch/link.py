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

Files are looked up relative to the naming file's folder, each folder above it up to the
repository root, and the working directory. Nothing is executed.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Callable

from dslint.documents import Skipped, read_document
from dslint.documents.model import ACCELERATE, DEEPSPEED, SCRIPT, TRAINING_JSON, TRAINING_YAML, Document, Mapping, Scalar
from dslint.launch.consumer import (AXOLOTL, DEEPSPEED_READER, HYDRA, LABEL, LLAMAFACTORY, MEGATRON_SWIFT, SWIFT, UNKNOWN, VERL,
                                    Consumer, of_console, of_module, resolve_program)
from dslint.launch.consumer import read as read_consumer
from dslint.launch.named import candidate_paths
from dslint.launch.named import repository_root as _repository_root
from dslint.launch.plan import Arg, LaunchPlan, Reference, Sourced
from dslint.launch.pyprogram import Evidence
from dslint.launch.target import ascend_environment
from dslint.launch.presets import SWIFT_PRESETS, preset_text
from dslint.launch.vendored import CONSUMER_PACKAGES, locate, working_directory
from dslint.launch.wrapped import apply_wrappers, sbatch_assumption, slurm_gpus
from dslint.source import SourceFile, Span
from dslint.values import as_int
from dslint.files.roots import search_root

TRUTHY = ("true", "y", "1", "yes")
MAX_LINKED_BYTES = 2 * 1024 * 1024


def _where(span: Span | None) -> str:
    if span is None:
        return "the command line"
    line = span.source.position(span.start)[0]
    return f"{span.path}:{line}"


def _key_origin(entry) -> Callable[[], str]:
    return lambda: f"{entry.key} in {_where(entry.key_span)}"


def _as_int(value) -> int | None:
    """Launcher flags are argparse ``type=int``: "8" counts, "8.0" does not."""
    return as_int(value, argparse_text=True)


def _key(name: str) -> str:
    return name.lstrip("-").replace("-", "_")


class Linker:
    def __init__(self, documents: list[Document], cwd: Path | None = None, overrides: dict[str, bytes] | None = None, adopt=None):
        self.cwd = (cwd or Path.cwd()).resolve()
        self.overrides = overrides or {}  # display path -> bytes: the fixer's edited, unwritten files
        self.adopt = adopt  # listed files another process reads (dslint.run.split.Adoptable)
        self.documents = documents
        self.by_path: dict[str, Document] = {}
        for doc in documents:
            real = self._real(doc.source.path)
            if real:
                self.by_path[real] = doc
        self.loaded: list[Document] = []  # documents read because something links to them
        self.reached: set[int] = set()  # ids of DeepSpeed documents some plan uses
        self.consumers: dict[str, Consumer] = {}  # real path of a program → what reading it showed
        self.roots: dict[Path, Path | None] = {}  # folder → its repository root (_root)

    # ---- files --------------------------------------------------------------------------

    def _real(self, path: str) -> str | None:
        if not path or path == "-" or path.startswith("<"):
            return None
        try:
            return os.path.realpath(path)
        except (OSError, ValueError):
            return None

    def _candidates(self, raw: str, base: Path) -> list[Path]:
        return candidate_paths(raw, base, self.cwd)

    def resolve(self, role: str, raw: str | None, span: Span, base: Path, expect: str, assumed: str | None = None,
                workdir: Path | None = None) -> Reference:
        """``workdir``: the folder the script cd's into before the launch, where bash looks first."""
        reference = Reference(role=role, raw=raw, span=span, assumed=assumed)
        if raw is None or not raw.strip():
            return reference
        first = [Path(os.path.normpath(workdir / raw.strip()))] if workdir is not None and not os.path.isabs(raw.strip()) else []
        return self._first_file(reference, first + self._candidates(raw.strip(), base), expect)

    def _first_file(self, reference: Reference, candidates: list[Path], expect: str) -> Reference:
        """The first of ``candidates`` that is a file, loaded into ``reference``; every path looked at in ``tried``."""
        for candidate in candidates:
            shown = _display(candidate, self.cwd)
            if shown in reference.tried:
                continue
            reference.tried.append(shown)
            if candidate.is_file():
                reference.document = self.load(candidate, expect)
                if reference.document is None:
                    reference.tried[-1] += " (found, but not readable as a config)"
                return reference
        return reference

    def load(self, path: Path, expect: str) -> Document | None:
        real = os.path.realpath(path)
        if real in self.by_path:
            return self.by_path[real]
        if self.adopt is not None:
            listed, document = self.adopt.take(real)
            if listed and document is not None:  # read here as the listed file it is
                self.by_path[real] = document
                self.loaded.append(document)
                return document
        display = _display(path, self.cwd)
        try:
            if display in self.overrides:
                data = self.overrides[display]
            elif os.path.getsize(path) > MAX_LINKED_BYTES:
                return None
            else:
                data = path.read_bytes()
        except OSError:
            return None
        try:
            document = read_document(display, data, expect=expect)
        except Skipped:
            return None
        except Exception:  # a linked file must not break the launch it belongs to
            return None
        self.by_path[real] = document
        self.loaded.append(document)
        return document

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
        plan.visible_devices = _visible_devices(plan.env, ascend_environment(plan))
        moved = working_directory(doc.script, command, base, lambda: self._root(base) or base)
        if moved is not None:
            plan.workdir = Sourced(moved[0], f"{moved[1].text} at {moved[1].where()}")
        for option in launch.launcher_option_list:
            if option.key:
                plan.launcher_args[option.key] = _arg_of(option)
        for option in launch.program_args:
            if option.name is not None:
                plan.args[_key(option.name)] = _arg_of(option)
        if launch.launcher in ("swift", "megatron", "llamafactory"):
            self._entry_config(plan, launch, base)
        elif launch.program_args and launch.program_args[0].name is None and launch.launcher in ("python", "torchrun", "deepspeed", "accelerate"):
            first = launch.program_args[0]
            text = first.text
            # `config=x.yaml` is a key=value override (OmegaConf.from_cli, Hydra), not a path.
            if text and text.lower().endswith((".yaml", ".yml", ".json")) and "=" not in text:
                self._training_config(plan, text, first.span, base, before_flags=True)
            elif text is None:
                # HfArgumentParser-style programs read a first positional YAML/JSON as their
                # arguments (parse_yaml_file(sys.argv[1])); one dslint cannot expand may set anything.
                plan.unseen_arguments = f"its first argument {first.value.raw} is not known statically ({first.span.where()})"

        launcher = launch.launcher
        if launcher == "deepspeed":
            self._deepspeed_world(plan, base)
        elif launcher == "torchrun":
            self._torchrun_world(plan)
        elif launcher == "accelerate":
            self._accelerate(plan, base)
        elif launcher in ("swift", "megatron"):
            self._swift_world(plan)
        elif launcher == "llamafactory":
            self._llamafactory_world(plan)
        elif launcher == "python":
            plan.world_size = Sourced(1, "a plain python process (no distributed launcher)", command.name.span, default=True)
            plan.distributed = False
        if launcher in ("deepspeed", "torchrun", "accelerate"):
            plan.distributed = True
        apply_wrappers(plan, command)
        self._consumer(plan, launch, base)
        self._sources(plan, base)
        if plan.program is not None and plan.program.kind in (HYDRA, VERL):
            self._hydra_config(plan, launch, base)
        self._deepspeed_reference(plan, base)
        plan.data_parallel = plan.world_size
        return plan

    def _entry_config(self, plan: LaunchPlan, launch, base: Path) -> None:
        config = launch.config_file
        if config is not None:
            raw, assumed = _word_value(config)
            self._training_config(plan, raw, config.span, base, before_flags=True, assumed=config.raw if assumed else None)
        for option in launch.overrides:  # llamafactory-cli key=value
            if option.key:
                plan.args[option.key] = _arg_of(option)

    def _training_config(self, plan: LaunchPlan, raw: str | None, span: Span, base: Path, before_flags: bool,
                         assumed: str | None = None) -> None:
        reference = self.resolve("training-config", raw, span, base, expect=TRAINING_YAML, assumed=assumed,
                                 workdir=plan.workdir.value if plan.workdir is not None else None)
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
            from_file[entry.key] = Arg(entry.key, entry.value.to_python(), entry.value.span, _key_origin(entry), entry.key_span)
        if before_flags:
            plan.args = {**from_file, **plan.args}
        else:
            plan.args.update(from_file)

    def _deepspeed_world(self, plan: LaunchPlan, base: Path) -> None:
        opts = plan.launcher_args
        num_gpus, include, exclude = opts.get("num_gpus"), opts.get("include"), opts.get("exclude")
        procs = None
        nodes_from_include = None
        if num_gpus is not None and _as_int(num_gpus.value) is not None:
            procs = Sourced(_as_int(num_gpus.value), _said(num_gpus, f"--num_gpus {num_gpus.value}", plan), num_gpus.span)
        elif include is not None and isinstance(include.value, str):
            hosts = [h for h in include.value.split("@") if h]
            counts = [len([s for s in h.split(":", 1)[1].split(",") if s]) for h in hosts if ":" in h]
            if counts and len(set(counts)) == 1 and len(counts) == len(hosts):
                procs = Sourced(counts[0], _said(include, f"--include {include.value}", plan), include.span)
                nodes_from_include = Sourced(len(hosts), _said(include, f"--include {include.value}", plan), include.span)
        elif exclude is None and "hostfile" not in opts and plan.visible_devices is not None and plan.visible_devices.value is not None:
            # With a hostfile the runner takes each host's slots, not the visible devices (runner.py:446-458).
            count = len(plan.visible_devices.value)
            procs = Sourced(count, f"{plan.visible_devices.origin}: {count} device{'s' if count != 1 else ''}", plan.visible_devices.span)
        elif exclude is None and plan.visible_devices is None:
            procs = slurm_gpus(plan)  # the deepspeed launcher uses every visible GPU
        plan.procs_per_node = procs
        num_nodes, hostfile = opts.get("num_nodes"), opts.get("hostfile")
        if num_nodes is not None and _as_int(num_nodes.value) is not None:
            plan.nodes = Sourced(_as_int(num_nodes.value), _said(num_nodes, f"--num_nodes {num_nodes.value}", plan), num_nodes.span)
        elif nodes_from_include is not None:
            plan.nodes = nodes_from_include
        elif hostfile is not None:
            hosts = self._hostfile(plan, hostfile, base)
            if hosts:
                plan.nodes = Sourced(len(hosts), f"{len(hosts)} hosts in the hostfile {hostfile.value}", hostfile.span)
                slots = {s for _, s in hosts}
                if procs is None and len(slots) == 1 and None not in slots:
                    plan.procs_per_node = Sourced(slots.pop(), f"slots= in the hostfile {hostfile.value}", hostfile.span)
        else:
            plan.nodes = Sourced(1, "one node (no hostfile and no --num_nodes)", None, default=True)
        _world(plan)

    def _hostfile(self, plan: LaunchPlan, hostfile: Arg, base: Path) -> list[tuple[str, int | None]]:
        if not isinstance(hostfile.value, str):
            return []
        for candidate in self._candidates(hostfile.value, base):
            if candidate.is_file():
                try:
                    text = candidate.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    return []
                hosts = []
                for line in text.splitlines():
                    line = line.split("#", 1)[0].strip()
                    if not line:
                        continue
                    parts = line.split()
                    slots = None
                    for part in parts[1:]:
                        if part.startswith("slots="):
                            slots = _as_int(part[6:])
                    hosts.append((parts[0], slots))
                return hosts
        return []

    def _torchrun_world(self, plan: LaunchPlan) -> None:
        opts = plan.launcher_args
        nproc = opts.get("nproc_per_node")
        if nproc is None:
            plan.procs_per_node = Sourced(1, "torchrun's default --nproc_per_node 1", plan.span, default=True)
        elif isinstance(nproc.value, str) and nproc.value in ("gpu", "auto", "cuda", "xpu", "npu"):
            if plan.visible_devices is not None and plan.visible_devices.value is not None:
                count = len(plan.visible_devices.value)
                plan.procs_per_node = Sourced(count, f"--nproc_per_node {nproc.value} = {plan.visible_devices.origin}", nproc.span)
            elif plan.visible_devices is None and (gpus := slurm_gpus(plan)) is not None:
                plan.procs_per_node = Sourced(gpus.value, f"--nproc_per_node {nproc.value} = {gpus.origin}", nproc.span)
        elif _as_int(nproc.value) is not None:
            plan.procs_per_node = Sourced(_as_int(nproc.value), _said(nproc, f"--nproc_per_node {nproc.value}", plan), nproc.span)
        nnodes = opts.get("nnodes")
        if nnodes is None:
            plan.nodes = Sourced(1, "torchrun's default --nnodes 1", None, default=True)
        elif isinstance(nnodes.value, str):
            low, _, high = nnodes.value.partition(":")
            if _as_int(low) is not None and (not high or high == low):
                plan.nodes = Sourced(_as_int(low), _said(nnodes, f"--nnodes {nnodes.value}", plan), nnodes.span)
            elif high:
                plan.notes.append(f"--nnodes {nnodes.value} is an elastic range: the node count is decided at run time")
        _world(plan)

    def _accelerate(self, plan: LaunchPlan, base: Path) -> None:
        opts = plan.launcher_args
        config = opts.get("config_file")
        file_values: dict[str, tuple] = {}
        if config is not None:
            reference = self.resolve("accelerate-config", config.value if isinstance(config.value, str) else None, config.span or plan.span, base,
                                     expect=ACCELERATE, assumed=config.assumed)
            plan.accelerate_config = reference
            plan.references.append(reference)
            mapping = reference.config
            if mapping is not None:
                for key in ("num_processes", "num_machines", "mixed_precision", "distributed_type"):
                    entry = mapping.entry(key)
                    if entry is not None:
                        file_values[key] = (entry.value.to_python(), entry.value.span)
                section = mapping.get("deepspeed_config")
                if isinstance(section, Mapping):
                    entry = section.entry("deepspeed_config_file")
                    if entry is not None and isinstance(entry.value, Scalar) and isinstance(entry.value.value, str):
                        ds_base = Path(reference.document.path).parent
                        ref = self.resolve("deepspeed", entry.value.value, entry.value.span, ds_base, expect=DEEPSPEED)
                        plan.deepspeed = ref
                        plan.references.append(ref)
        processes = opts.get("num_processes")
        machines = opts.get("num_machines")
        if processes is not None and _as_int(processes.value) is not None:
            total = Sourced(_as_int(processes.value), _said(processes, f"--num_processes {processes.value}", plan), processes.span)
        elif "num_processes" in file_values and _as_int(file_values["num_processes"][0]) is not None:
            value, span = file_values["num_processes"]
            total = Sourced(_as_int(value), f"num_processes: {value} in {_where(span)}", span)
        else:
            total = None
        if machines is not None and _as_int(machines.value) is not None:
            plan.nodes = Sourced(_as_int(machines.value), _said(machines, f"--num_machines {machines.value}", plan), machines.span)
        elif "num_machines" in file_values and _as_int(file_values["num_machines"][0]) is not None:
            value, span = file_values["num_machines"]
            plan.nodes = Sourced(_as_int(value), f"num_machines: {value} in {_where(span)}", span)
        plan.world_size = total
        if total is not None and plan.nodes is not None and plan.nodes.value and total.value % plan.nodes.value == 0:
            plan.procs_per_node = Sourced(total.value // plan.nodes.value, f"{total.origin} over {plan.nodes.value} machine(s)", total.span)
        if "deepspeed_config_file" in opts and isinstance(opts["deepspeed_config_file"].value, str):
            arg = opts["deepspeed_config_file"]
            ref = self.resolve("deepspeed", arg.value, arg.span or plan.span, base, expect=DEEPSPEED, assumed=arg.assumed)
            plan.deepspeed = ref
            plan.references.append(ref)

    def _swift_world(self, plan: LaunchPlan) -> None:
        nproc = _env_int(plan.env, "NPROC_PER_NODE")
        nnodes = _env_int(plan.env, "NNODES")
        plan.distributed = "NPROC_PER_NODE" in plan.env or "NNODES" in plan.env
        if not plan.distributed:
            plan.world_size = Sourced(1, f"{plan.entry or 'ms-swift'} runs one process when neither NPROC_PER_NODE nor NNODES is set", plan.span, default=True)
            plan.procs_per_node = plan.world_size
            plan.nodes = Sourced(1, "one node", None, default=True)
            return
        plan.procs_per_node = nproc if "NPROC_PER_NODE" in plan.env else Sourced(1, "torchrun's default of one process per node (NPROC_PER_NODE is not set)", None, default=True)
        plan.nodes = nnodes if "NNODES" in plan.env else Sourced(1, "NNODES is not set: one node", None, default=True)
        _world(plan)

    def _llamafactory_world(self, plan: LaunchPlan) -> None:
        force = plan.env.get("FORCE_TORCHRUN")
        forced = force is not None and (_env_text(force)[0] or "").lower() in TRUTHY
        devices = plan.visible_devices.value if plan.visible_devices is not None else None
        plan.distributed = True if forced or (devices is not None and len(devices) > 1) else (False if devices is not None else None)
        if not forced and devices is not None and len(devices) <= 1:
            plan.world_size = Sourced(1, f"llamafactory-cli runs one process: FORCE_TORCHRUN is not set and {plan.visible_devices.origin}", plan.span, default=True)
            plan.procs_per_node = plan.world_size
            plan.nodes = Sourced(1, "one node", None, default=True)
            return
        if not forced and devices is None:
            plan.notes.append("llamafactory-cli uses torchrun only when FORCE_TORCHRUN is set or several devices are visible; the device count is unknown")
            return
        if "NPROC_PER_NODE" in plan.env:
            plan.procs_per_node = _env_int(plan.env, "NPROC_PER_NODE")
        elif devices is not None:
            plan.procs_per_node = Sourced(len(devices), f"NPROC_PER_NODE defaults to the visible devices ({plan.visible_devices.origin})", plan.visible_devices.span, default=True)
        plan.nodes = _env_int(plan.env, "NNODES") if "NNODES" in plan.env else Sourced(1, "NNODES is not set: one node", None, default=True)
        _world(plan)

    def _consumer(self, plan: LaunchPlan, launch, base: Path) -> None:
        """Who reads this launch's files: the program, read statically; else a guess from the flags."""
        consumer = self._identify(plan, launch, base)
        # A program that holds rival trainers is evidence against any single guess from the flags.
        if not consumer.established and not consumer.rivals:
            guess, why = _guess_consumer(plan, launch)
            if guess is not None:
                consumer.assumption = f"assuming {LABEL[guess]} ({why}): {consumer.assumption}"
                plan.consumer = DEEPSPEED_READER.get(guess)
        else:
            plan.consumer = consumer.deepspeed_reader
        plan.program = consumer

    def _sources(self, plan: LaunchPlan, base: Path) -> None:
        """The checkouts in the repository of the packages the launch's consumer runs (dslint.launch.vendored)."""
        program = plan.program
        if program is None:
            return
        packages = CONSUMER_PACKAGES.get(program.kind if program.established else plan.consumer or "", ())
        if not packages:
            return
        starts: list[tuple[Path, str]] = []
        config = plan.training_config.document if plan.training_config is not None else None
        if config is not None:
            starts.append((Path(config.path).parent, config.path))
        if program.facts is not None and program.program:
            starts.append(((self.cwd / program.program).parent, program.program))
        starts.append((base, plan.origin.path))
        stop = self._root(base) or Path(search_root(os.path.abspath(base)))
        workdir = (plan.workdir.value, plan.workdir.origin) if plan.workdir is not None else None
        display = lambda p: _display(Path(p), self.cwd)  # noqa: E731
        found = {package: locate(package, starts, workdir, stop, display) for package in packages}
        program.sources = {package: source for package, source in found.items() if source is not None}

    def _identify(self, plan: LaunchPlan, launch, base: Path) -> Consumer:
        where = _where(plan.span)
        line = plan.span.source.position(plan.span.start)[0]
        seen = Evidence(plan.origin.path, line, f"runs {plan.entry or plan.launcher}")
        console = {"swift": SWIFT, "megatron": MEGATRON_SWIFT, "llamafactory": LLAMAFACTORY}.get(plan.launcher)
        if console is not None:
            return of_console(console, plan.entry or plan.launcher, seen)
        word = launch.program
        if word is None:
            return Consumer(UNKNOWN, False, assumption=f"the launch at {where} names no program")
        if word.value is None:
            return Consumer(UNKNOWN, False, program=word.raw,
                            assumption=f"the program `{word.raw}` is only known at run time")
        raw = word.value
        root = self._root(base)
        path = resolve_program(raw, launch.module, base, root, self.cwd)
        if path is None:
            if launch.module:
                known = of_module(raw, seen)
                if known is not None:
                    return known
                return Consumer(UNKNOWN, False, program=raw,
                                assumption=f"the module {raw} is not in the repository")
            return Consumer(UNKNOWN, False, program=raw, assumption=f"{raw} was not found")
        key = os.path.realpath(path)
        if key not in self.consumers:
            self.consumers[key] = read_consumer(path, root, lambda p: _display(p, self.cwd))
        return copy.copy(self.consumers[key])

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
                folders += self._candidates(text, base)
        if not folders:
            return
        candidates = [Path(os.path.normpath(folder / file)) for folder in folders]
        reference = self._first_file(Reference("training-config", name, word.span), candidates, TRAINING_YAML)
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
                loaded = self.load(path, TRAINING_YAML)
                plan.references.append(Reference("hydra-default", item, entry.key_span, document=loaded))

    def _root(self, base: Path) -> Path | None:
        if base not in self.roots:  # asked several times for every launch of a folder
            root = _repository_root(base)
            self.roots[base] = None if root == Path(root.anchor or "/") else root
        return self.roots[base]

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
        plan.deepspeed = self.resolve("deepspeed", text, span, arg_base, expect=DEEPSPEED, assumed=arg.assumed)
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
        reference = self.resolve("deepspeed", said.value.strip(), plan.span, base, expect=DEEPSPEED)
        if reference.document is not None:
            plan.deepspeed = reference
            plan.references.append(reference)
            plan.notes.append(f"the DeepSpeed config is named by the program: {said.evidence.describe()}")

    # -- YAML / JSON training configs nobody launches from a script

    def _config_plan(self, doc: Document) -> LaunchPlan | None:
        flavor = doc.flavor or "hf"
        program = _config_consumer(doc, flavor)
        consumer = program.deepspeed_reader if program.established else "hf"
        plan = LaunchPlan(origin=doc, span=doc.mapping.span, launcher="yaml", consumer=consumer, entry=f"{flavor} config",
                          program=program)
        for entry in doc.mapping.entries:
            plan.args[entry.key] = Arg(entry.key, entry.value.to_python(), entry.value.span, _key_origin(entry), entry.key_span)
        self._deepspeed_reference(plan, Path(doc.path).parent)
        self._sources(plan, Path(doc.path).parent)
        plan.notes.append("no launch script reaches this config: the world size is unknown")
        return plan


# Keys that only one trainer's configs have: the file's own evidence of who reads it.
_FLAVOR_KEYS = {
    "llamafactory": (LLAMAFACTORY, ("finetuning_type", "stage", "template")),
    "swift": (SWIFT, ("train_type", "tuner_type", "sft_type", "model")),
    "axolotl": (AXOLOTL, ("base_model", "micro_batch_size", "sequence_len")),
}


def _config_consumer(doc: Document, flavor: str) -> Consumer:
    """Who reads a training config no launch names: its own syntax or keys say, or nobody knows."""
    if flavor == "hydra":
        from dslint.documents.omegaconf import marker

        node, what = marker(doc.mapping)
        line = node.span.source.position(node.span.start)[0]
        return Consumer(HYDRA, True, [Evidence(doc.path, line, f"uses {what}")], program=doc.path,
                        config_system=Evidence(doc.path, line, what))
    if flavor in _FLAVOR_KEYS:
        kind, keys = _FLAVOR_KEYS[flavor]
        entry = next((doc.mapping.entry(k) for k in keys if doc.mapping.entry(k) is not None), None)
        if entry is not None:
            line = entry.key_span.source.position(entry.key_span.start)[0]
            return Consumer(kind, True, [Evidence(doc.path, line, f"has {LABEL[kind]}'s key {entry.key}")], program=doc.path)
    return Consumer(UNKNOWN, False, program=doc.path,
                    assumption=f"assuming HF TrainingArguments read it: no launch names {doc.path}")


def _guess_consumer(plan: LaunchPlan, launch) -> tuple[str | None, str]:
    """The consumer the flags suggest when the program itself says nothing: (kind, why)."""
    program = (launch.program.value or "") if launch.program is not None else ""
    if program.endswith(("swift/cli/sft.py", "swift/cli/pt.py", "swift/cli/rlhf.py")):
        return SWIFT, f"the program is {program}"
    if program.endswith(("src/train.py", "llamafactory/launcher.py")) and plan.training_config is not None:
        return LLAMAFACTORY, f"{program} is given a training config"
    if "deepspeed_config" in plan.args:
        return "deepspeed", "--deepspeed_config is deepspeed.add_config_arguments' flag"
    if "deepspeed" in plan.args and plan.args["deepspeed"].value is not True:
        return "hf", "--deepspeed with a value is TrainingArguments' flag"
    if plan.launcher == "accelerate":
        return "accelerate", "accelerate launch"
    if plan.launcher == "deepspeed":
        return "deepspeed", "the deepspeed launcher"
    return None, ""


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
    origin = f"{shown} at {_where(option.span)}"
    if assumed:
        origin += f" (assuming {option.value.raw} keeps its default)"
    return Arg(name, value, span, origin, option.name_span, assumed=option.value.raw if assumed else None)


def _said(arg: Arg, text: str, plan: LaunchPlan | None = None) -> str:
    """``text`` about an argument, plus the assumption it rests on."""
    where = _where(arg.span)
    if arg.assumed:
        job = getattr(getattr(plan.origin, "script", None), "sbatch", None) if plan is not None else None
        from_job = sbatch_assumption(arg.assumed, job)
        return f"{text} ({where}, {from_job or f'assuming {arg.assumed} keeps its default'})"
    return f"{text} ({where})"


def _word_value(word) -> tuple:
    """(value, assumed): a word's static value, or its default when only the caller could change it."""
    if word.value is not None:
        return word.value, False
    if getattr(word, "assumed", None) is not None:
        return word.assumed, True
    return None, False


def _env_text(value) -> tuple:
    """(text, note) of a shell Value; a default only the caller could override is used and said."""
    if value.value is not None:
        return value.value, ""
    if getattr(value, "assumed", None) is not None:
        return value.assumed, " assuming the caller does not set it"
    return None, ""


def _env_int(env: dict, name: str) -> Sourced | None:
    value = env.get(name)
    if value is None:
        return None
    text, note = _env_text(value)
    number = _as_int(text) if text is not None else None
    if number is None:
        return None
    return Sourced(number, f"{name}={text} ({_where(value.span)}{',' if note else ''}{note})", value.span)


def _visible_devices(env: dict, ascend=None) -> Sourced | None:
    """The devices a launch sees. On Ascend only ASCEND_RT_VISIBLE_DEVICES counts: torch_npu
    counts NPUs from it alone (torch_npu/npu/__init__.py `_parse_visible_devices`), and so does
    DeepSpeed's NPU accelerator (npu_accelerator.py:336-337); CUDA_VISIBLE_DEVICES (and
    NPU_VISIBLE_DEVICES) leave every NPU of the machine visible. ``ascend``: the script's own
    evidence of Ascend (dslint.launch.target.ascend_environment)."""
    for name in ("ASCEND_RT_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"):
        value = env.get(name)
        if value is None:
            continue
        if name == "CUDA_VISIBLE_DEVICES" and ascend is not None:
            return Sourced(None, f"every NPU of the machine: Ascend does not read CUDA_VISIBLE_DEVICES ({ascend.reason})", value.span)
        text, note = _env_text(value)
        if text is None:
            return Sourced(None, f"{name} (set, value unknown)", value.span)
        ids = [part for part in text.split(",") if part.strip()]
        return Sourced(ids, f"{name}={text} ({_where(value.span)}{',' if note else ''}{note})", value.span)
    return None


def _world(plan: LaunchPlan) -> None:
    procs, nodes = plan.procs_per_node, plan.nodes
    if procs is None or procs.value is None or nodes is None or nodes.value is None:
        return
    if nodes.value == 1:
        plan.world_size = Sourced(procs.value, procs.origin, procs.span, procs.default)
    else:
        plan.world_size = Sourced(procs.value * nodes.value, f"{procs.origin} × {nodes.origin}", procs.span or nodes.span, procs.default and nodes.default)


def _display(path: Path, cwd: Path) -> str:
    try:
        return os.path.relpath(path, cwd)
    except ValueError:
        return str(path)


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
    source = SourceFile(path=f"<inline JSON at {_where(span)}>", text=text)
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
        sp_node = config.get("sequence_parallel_size")
        sp = _as_int(sp_node.value) if isinstance(sp_node, Scalar) else None
        if sp and sp > 1:
            value = world.value / sp
            value = int(value) if float(value).is_integer() else value
            return Sourced(value, f"{world.origin}, divided by sequence_parallel_size {sp}", world.span)
        return world
    if plan.consumer == "deepspeed":
        tp = _as_int(plan.args["tensor_model_parallel_size"].value) if "tensor_model_parallel_size" in plan.args else None
        pp = _as_int(plan.args["pipeline_model_parallel_size"].value) if "pipeline_model_parallel_size" in plan.args else None
        if "no_pipeline_parallel" in plan.args:
            pp = 1
        if (tp and tp > 1) or (pp and pp > 1):
            divisor = (tp or 1) * (pp or 1)
            if world.value % divisor:
                return None
            return Sourced(world.value // divisor, f"{world.origin} / (tensor {tp or 1} × pipeline {pp or 1} parallel)", world.span)
        return world
    return world
