"""Which accelerator a launch runs on: one place for every rule that asks.

``launch_target(plan, settings)`` answers "GPU or Ascend NPU?" for a launch plan and says why,
so that every NPU diagnostic can repeat the reason. Only strong evidence counts, in order:

1. the ``target`` setting (``target = "npu"`` in the configuration, or ``--target npu``): it
   decides alone, ``"gpu"`` included;
2. a ``hardware`` setting naming an Ascend card;
3. what the launch's script does (research: swift_npu_rules.md §2.1): Ascend variables in the
   launch's environment or set in the script (``ASCEND_RT_VISIBLE_DEVICES``, ``ASCEND_*``,
   ``HCCL_*``, ``PYTORCH_NPU_ALLOC_CONF``, ``TASK_QUEUE_ENABLE``, ``CPU_AFFINITY_CONF``,
   ``MULTI_STREAM_MEMORY_REUSE``, ``VLLM_ASCEND_*``, ``DS_ACCELERATOR=npu``), ``source
   .../Ascend/.../set_env.sh``, ``npu-smi`` (run, not tested in a condition), MindSpeed on
   ``PYTHONPATH`` (how Megatron-SWIFT and MindSpeed-LLM run on Ascend);
4. the launch itself: ``--ddp_backend hccl``, ``npu`` device strings among its arguments
   (``--device npu``), a launched Python program that always imports ``torch_npu`` or MindSpeed
   (the static read of the program, ``plan.program.facts``: an import at its top level, not one
   under ``try``/``if``, which only makes NPU optional).

What people write about a launch is no evidence of the machine it runs on: a comment naming
Ascend hardware, an ``ascend`` folder, ``npu`` in a file name (a GPU recipe copied next to the NPU
one keeps its name). A file no launch reaches is NPU only by the settings.

Evidence in the script counts for a launch only when every run that reaches the launch meets it
(dslint.documents.shell.branches): in a script that serves both (``if [ "$DEVICE" = npu ]; then
export ASCEND_RT_VISIBLE_DEVICES=...; else export CUDA_VISIBLE_DEVICES=...; fi``) the NPU branch's
evidence is evidence for the launches in that branch only, and a launch after the ``fi`` has no
NPU verdict unless every branch shows Ascend. The Target keeps where its evidence stands, so that
a fix can be checked to edit only statements that run with it (``reaches``).

Each Target names its evidence: the reason says what was seen and where (``file:line``), and
its span points there (for a program's import, into the Python file).

A launch with none of these is not NPU (``None``): NPU rules stay silent. ``CUDA_VISIBLE_DEVICES``
is not evidence either way (ms-swift's own Megatron Ascend page still shows it).

``hardware(plan_or_document, settings)`` gives the configured ``hardware`` setting: a comment
(``# Env: 8 * V100``) says what someone once ran it on, not what it runs on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dslint.source import Span

NPU = "npu"
GPU = "gpu"

# Environment variables only the Ascend stack reads.
NPU_ENV_PREFIXES = ("ASCEND_", "HCCL_", "VLLM_ASCEND_", "NPU_")
NPU_ENV_NAMES = frozenset(
    {"PYTORCH_NPU_ALLOC_CONF", "TASK_QUEUE_ENABLE", "CPU_AFFINITY_CONF", "MULTI_STREAM_MEMORY_REUSE", "TORCH_HCCL_ZERO_COPY", "INF_NAN_MODE_ENABLE", "COMBINED_ENABLE"}
)
_NPU_DEVICE = re.compile(r"(?<![A-Za-z0-9_])npu(?::\d+)?(?![A-Za-z0-9_])")
_SET_ENV = re.compile(r"(?i)ascend.*set_env\.sh")
_MINDSPEED = re.compile(r"(?i)mindspeed")

# Hardware without bf16 units (research swift_npu_rules.md §2.2, deepspeed_rules.md §3 row 23).
NO_BF16 = {
    "v100": "V100 (compute capability 7.0)",
    "v100-16gb": "V100 (compute capability 7.0)",
    "v100-32gb": "V100 (compute capability 7.0)",
    "t4": "T4 (compute capability 7.5)",
    "p100": "P100 (compute capability 6.0)",
    "ascend-910a": "Ascend 910A",
}
PRE_AMPERE = ("v100", "v100-16gb", "v100-32gb", "t4", "p100")
ASCEND_HARDWARE = ("ascend-910a", "ascend-910b", "ascend-910c")
BF16_CAPABLE = (
    "a100", "a100-40gb", "a100-80gb", "h100", "h100-80gb", "h200", "h800", "a800", "l40s", "a10", "a10g",
    "l4", "rtx3090", "rtx4090", "ascend-910b", "ascend-910c",
)


@dataclass(frozen=True)
class Target:
    """The accelerator a launch runs on, and the evidence."""

    name: str  # "npu" or "gpu"
    reason: str  # "ASCEND_RT_VISIBLE_DEVICES is set (train.sh:3)"
    span: Span | None = None
    setting: bool = False  # decided by the target setting
    # The branch paths (dslint.documents.shell.branches) of the evidence in the launch's script;
    # None when it holds for every statement of the script (the settings, the caller's environment).
    evidence: tuple | None = None

    @property
    def npu(self) -> bool:
        return self.name == NPU


@dataclass(frozen=True)
class Hardware:
    """The kind of accelerator a launch runs on, with where that is said."""

    name: str  # a value of dslint.config.HARDWARE
    origin: str
    span: Span | None = None


@dataclass(frozen=True)
class _Evidence:
    reason: str
    span: Span | None
    paths: tuple  # where it stands in the launch's script; () for the whole script


def _where(span: Span | None) -> str:
    if span is None:
        return "the command line"
    line = span.source.position(span.start)[0]
    return f"{span.path}:{line}"


def setting_target(settings) -> Target | None:
    """The target the settings decide, if they do."""
    target = getattr(settings, "target", None)
    if target is not None and target.value in (NPU, GPU):
        return Target(target.value, f"target = {target.value}, {target.origin}", None, setting=True)
    hw = getattr(settings, "hardware", None)
    if hw is not None and hw.value in ASCEND_HARDWARE:
        return Target(NPU, f"hardware = {hw.value}, {hw.origin}", None, setting=True)
    return None


def launch_target(plan, settings) -> Target | None:
    """NPU or GPU for a launch plan; None when nothing says (GPU rules apply, NPU rules do not).

    Worked out on each call: rules get it once per launch and run, as the ``launch_target`` fact
    (dslint.facts)."""
    decided = setting_target(settings)
    if decided is not None:
        return decided
    return _decide(plan, [*_env_evidence(plan), *_script_evidence(plan), *_launch_evidence(plan)])


def npu_target(plan, settings) -> Target | None:
    """The Target when the launch runs on Ascend NPU, else None."""
    if plan is None:
        return npu_document_target(None, settings)
    found = launch_target(plan, settings)
    return found if found is not None and found.npu else None


def npu_document_target(document, settings) -> Target | None:
    """For a file no launch reaches: the settings alone (its folder or name is no evidence)."""
    decided = setting_target(settings)
    return decided if decided is not None and decided.npu else None


def ascend_environment(plan) -> Target | None:
    """What the script itself shows of Ascend for this launch (its variables, set_env.sh,
    npu-smi), without the launch's arguments or program: usable while the plan is being linked."""
    return _decide(plan, [*_env_evidence(plan), *_script_evidence(plan)])


def reaches(target, plan, edit) -> bool:
    """Whether an edit (``dslint.diagnostics.Edit``) changes only runs on the target: it is outside
    the launch's script, or in a statement of the script that runs only where the target's
    evidence holds (a variable exported before an NPU/GPU switch serves both branches: renaming
    it for the NPU launch would change the GPU launch too)."""
    if target is None:
        return False
    script = _script(plan)
    if target.evidence is None or script is None or edit.source is not script.source:
        return True
    statement = _branches().statement_at(script, edit.start)
    if statement is None:
        return False
    return _branches().always_with(script, statement, list(target.evidence))


def fix_on_target(target, plan, fix):
    """``fix`` when every edit of it changes only runs on the target (``reaches``), else None."""
    if fix is None or not all(reaches(target, plan, edit) for edit in fix.edits):
        return None
    return fix


def _branches():
    """The shell model's branches, imported when a script's launch is judged: a run on configs reads no shell."""
    from dslint.documents.shell import branches

    return branches


def is_npu_variable(name: str) -> bool:
    return name in NPU_ENV_NAMES or name.startswith(NPU_ENV_PREFIXES)


def _decide(plan, found: list[_Evidence]) -> Target | None:
    """The first evidence that every run reaching the launch meets (alone, or with evidence of
    the same kind in each other branch of a switch), as a Target."""
    if not found:
        return None
    script = _script(plan)
    launch = _launch_statement(plan)
    if script is None or launch is None:
        first = found[0]
        return Target(NPU, first.reason, first.span, evidence=None if script is None else first.paths)
    launch_paths = _branches().paths(script, launch)
    every = [p for item in found for p in item.paths]
    if any(_branches().covering_block(script, path, every) is None for path in launch_paths):
        return None  # some run reaches the launch without any of it: a script for both
    for item in found:
        if all(_branches().covering_block(script, path, list(item.paths)) is not None for path in launch_paths):
            return Target(NPU, item.reason, item.span, evidence=tuple(item.paths))
    # only several together cover it: Ascend in each branch of a switch, each its own way
    first = found[0]
    return Target(NPU, f"{first.reason}, and Ascend evidence in each other branch", first.span, evidence=tuple(every))


def _script(plan):
    origin = getattr(plan, "origin", None)
    return getattr(origin, "script", None) if origin is not None else None


def _launch_statement(plan):
    command = getattr(plan, "command", None)
    return getattr(command, "command", None) if command is not None else None


def _statement_paths(plan, span: Span | None) -> tuple:
    """Where the statement that set a variable (at ``span``: its assignment, or the call of the
    function that sets it) stands in the launch's script; () when it is not one of its statements
    (the caller's environment, an #SBATCH directive)."""
    script = _script(plan)
    if script is None or span is None or span.source is not script.source:
        return ((),)
    statement = next((a for a in script.assignments if a.span.start == span.start), None) or _branches().statement_at(script, span.start)
    return tuple(_branches().paths(script, statement)) if statement is not None else ((),)


def _env_evidence(plan):
    env = plan.env or {}
    ordered = sorted(env, key=lambda n: (n != "ASCEND_RT_VISIBLE_DEVICES", n))
    for name in ordered:
        value = env[name]
        span = getattr(value, "span", None)
        if is_npu_variable(name):
            yield _Evidence(f"{name} is set at {_where(span)}", span, _statement_paths(plan, span))
        elif name == "DS_ACCELERATOR" and getattr(value, "value", None) == "npu":
            yield _Evidence(f"DS_ACCELERATOR=npu at {_where(span)}", span, _statement_paths(plan, span))


def _script_evidence(plan):
    """Ascend set up anywhere in the script, each where it stands: a branch counts for its own launches."""
    script = _script(plan)
    if script is None:
        return
    for assignment in script.assignments:
        if is_npu_variable(assignment.name):
            yield _Evidence(f"the script sets {assignment.name} at {_where(assignment.span)}", assignment.name_span,
                            tuple(_branches().paths(script, assignment)))
        elif assignment.name == "PYTHONPATH" and assignment.value is not None and _MINDSPEED.search(assignment.value.raw):
            yield _Evidence(f"the script puts MindSpeed on PYTHONPATH at {_where(assignment.span)}", assignment.span,
                            tuple(_branches().paths(script, assignment)))
    for command in script.commands:
        if command.tested:
            continue  # `if npu-smi info; then`: a test of the machine, which may fail
        base = command.basename
        if base in ("source", ".") and command.args:
            word = command.args[0]
            text = word.value if word.value is not None else word.raw
            if text and _SET_ENV.search(text):
                yield _Evidence(f"the script sources {text} at {_where(command.span)}", command.span, tuple(_branches().paths(script, command)))
        elif base == "npu-smi":
            yield _Evidence(f"the script runs npu-smi at {_where(command.span)}", command.span, tuple(_branches().paths(script, command)))


def _launch_evidence(plan):
    """The launch's own arguments and program: they stand where the launch does."""
    script = _script(plan)
    launch = _launch_statement(plan)
    here = tuple(_branches().paths(script, launch)) if script is not None and launch is not None else ((),)
    for arg in list(plan.args.values()) + list(plan.launcher_args.values()):
        values = arg.value if isinstance(arg.value, list) else [arg.value]
        for value in values:
            if not isinstance(value, str):
                continue
            if arg.name == "ddp_backend" and value.strip().lower() == "hccl":
                yield _Evidence(f"--ddp_backend hccl at {_where(arg.span)}", arg.span, here)
            elif arg.name in ("device", "device_map", "devices", "accelerator", "device_type") and _NPU_DEVICE.search(value):
                yield _Evidence(f"{arg.name} {value} at {_where(arg.span)}", arg.span, here)
    program = _program_evidence(plan)
    if program is not None:
        yield _Evidence(program[0], program[1], here)


def _program_evidence(plan):
    """The launched program always imports torch_npu or MindSpeed (dslint.launch.pyprogram)."""
    program = getattr(plan, "program", None)
    facts = getattr(program, "facts", None)
    if facts is None:
        return None
    evidence = facts.imports_always("torch_npu", "mindspeed")
    if evidence is None:
        return None
    return f"the launched program {evidence.describe()}", _evidence_span(evidence)


def _evidence_span(evidence) -> Span | None:
    """The line of a program file that shows a fact, so that reports can point at it."""
    from dslint.source import SourceFile

    try:
        with open(evidence.path, "rb") as handle:
            source = SourceFile.from_bytes(evidence.path, handle.read())
        return Span(source, source.line_start(evidence.line), source.line_end(evidence.line))
    except Exception:  # noqa: BLE001 - an unreadable file only loses the pointer, not the verdict
        return None


def hardware(target, settings) -> Hardware | None:
    """The configured hardware. A comment of the script (``# Env: 8 * V100``) is no evidence of the
    machine a launch runs on: a script is copied from one cluster to another with its comments."""
    configured = getattr(settings, "hardware", None)
    if configured is not None:
        return Hardware(configured.value, configured.origin)
    return None
