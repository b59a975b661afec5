"""The head of an explanation: what runs the launch (wrappers, the string it is read from, the
Slurm job) and the versions of the packages that decide how it runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dslint.explain.reading import Reading
from dslint.launch.plan import LaunchPlan


def via(plan: LaunchPlan) -> list[str]:
    """What runs the launch, outermost first: the command that runs the string it is read from
    (``bash -c``, ``eval``, ``sbatch --wrap``, ``ssh HOST``) and the wrappers in front of it
    (``srun``, ``uv run``, ``docker run``)."""
    from dslint.documents.shell.remote import REMOTE_SHELLS, remote_call  # a training-YAML run reads no shell

    command = getattr(plan.command, "command", None)
    out: list[str] = []
    while command is not None:
        line = command.span.source.position(command.span.start)[0]
        if command.wrappers:
            written = []  # the words as written (one unquoted `$ARGS` gives several words)
            for word in command.wrappers:
                if not written or written[-1].span != word.span:
                    written.append(word)
            out.append(f"{' '.join(w.raw for w in written)} (line {line})")
        runner = command.runner
        if runner is not None:
            at = runner.span.source.position(runner.span.start)[0]
            remote = remote_call(runner.basename, runner.args) if runner.basename in REMOTE_SHELLS else None
            if remote is not None:
                hosts = " ".join(w.raw for w in remote.hosts) or "its hosts"
                out.append(f"the string `{runner.basename}` runs on {hosts} (line {at}), read as a script by the remote shell")
            else:
                out.append(f"the string `{runner.basename}` runs (line {at}), read as a script")
        command = runner
    return list(reversed(out))


def slurm(plan: LaunchPlan) -> str | None:
    job = getattr(getattr(plan.origin, "script", None), "sbatch", None)
    if job is None:
        return None
    lines = sorted(d.span.source.position(d.span.start)[0] for d in job.directives.values())
    shown = f"{lines[0]}" if lines[0] == lines[-1] else f"{lines[0]}-{lines[-1]}"
    return f"#SBATCH {job.describe()} ({plan.origin.path}:{shown})"


@dataclass
class PackageVersions:
    """The versions of one package a launch may run with, and the evidence (dslint.evidence.versions)."""

    candidates: Any  # dslint.evidence.versions.Candidates

    def to_dict(self) -> dict:
        from dslint.evidence.versions import display_path

        found = self.candidates
        evidence = found.evidence
        pin = evidence.pins[0] if evidence is not None and evidence.pins else None
        return {
            "package": found.package,
            "versions": list(found.versions),
            "evidence": evidence.kind if evidence is not None else "none",
            "source": found.why(),
            "text": found.describe(),
            "path": display_path(pin.path, found.root) if pin is not None else None,
            "line": pin.line if pin is not None else None,
        }


def launch_packages(plan: LaunchPlan) -> list[str]:
    """The packages whose versions decide how the launch runs."""
    packages = []
    if plan.deepspeed is not None or plan.consumer in ("deepspeed", "megatron"):
        packages.append("deepspeed")
    if plan.consumer in ("hf", "swift", "llamafactory", "accelerate"):
        packages.append("transformers")
    if plan.consumer == "accelerate" or plan.launcher == "accelerate" or plan.accelerate_config is not None:
        packages.append("accelerate")
    if plan.consumer in ("swift", "megatron") and (plan.launcher in ("swift", "megatron") or plan.consumer == "swift"):
        packages.append("ms-swift")
    if plan.consumer == "llamafactory":
        packages.append("llamafactory")
    if getattr(plan.program, "kind", None) == "trl":
        packages.append("trl")
    return packages


def versions(reading: Reading) -> list[PackageVersions]:
    """The versions, when asked for (``dslint explain`` resolves them; rules do not)."""
    if not reading.options.versions:
        return []
    from dslint.evidence.versions import candidates

    plan = reading.plan
    start = plan.origin.path if plan.origin is not None else None
    return [PackageVersions(_narrowed(plan, candidates(package, start, reading.options.settings, plan.program)))
            for package in launch_packages(plan)]


def _narrowed(plan: LaunchPlan, found):
    """With nothing pinning the consumer, the releases that accept every argument the launch
    passes it (dslint.evidence.argnames.narrowed), and for DeepSpeed those that read every key
    of its config (dslint.evidence.keyhistory.narrowed), as the rules that judge use them.
    The arguments of a training script of its own reach transformers only where the program was
    read and they are not the program's own."""
    from dslint.evidence.argnames import narrowed

    if found.package == "deepspeed":
        from dslint.evidence.keyhistory import narrowed as by_keys

        config = plan.deepspeed.config if plan.deepspeed is not None else None
        return by_keys(found, config) if config is not None else found
    names = [n for n in plan.args if n != "ENV"]
    if found.package in ("transformers", "trl"):
        program = plan.program
        if program is None or not getattr(program, "established", False) or found.package != "transformers":
            return found
        from dslint.launch.consumer import program_arguments

        parsers = program_arguments(program)
        if parsers is None:
            return found
        names = [n for n in names if n not in parsers.own]
    elif found.package not in ("ms-swift", "llamafactory"):
        return found
    return narrowed(found, names)
