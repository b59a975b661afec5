"""Which accelerator a launch runs on, and on which hardware: one place for every rule that asks.

``launch_target(plan, settings)`` answers "GPU or Ascend NPU?" for a launch plan and says why,
so that every NPU diagnostic can repeat the reason. In order:

1. the ``target`` setting (``target = "npu"`` in the configuration, or ``--target npu``): it
   decides alone, ``"gpu"`` included;
2. a ``hardware`` setting naming an Ascend card;
3. what the script itself shows (research: swift_npu_rules.md §2.1): Ascend variables in the
   launch's environment or set in the script (``ASCEND_RT_VISIBLE_DEVICES``, ``ASCEND_*``,
   ``HCCL_*``, ``PYTORCH_NPU_ALLOC_CONF``, ``TASK_QUEUE_ENABLE``, ``CPU_AFFINITY_CONF``,
   ``MULTI_STREAM_MEMORY_REUSE``, ``VLLM_ASCEND_*``, ``DS_ACCELERATOR=npu``), ``source
   .../Ascend/.../set_env.sh``, ``npu-smi``, MindSpeed on ``PYTHONPATH`` (how Megatron-SWIFT
   and MindSpeed-LLM run on Ascend), ``--ddp_backend hccl``, ``npu`` device strings among the
   launch's arguments (``--device npu``), a launched Python program that always imports
   ``torch_npu`` or MindSpeed (the static read of the program, ``plan.program.facts``: an import
   at its top level, not one under ``try``/``if``, which only makes NPU optional), and a comment
   naming Ascend hardware (``# 16 * 64GiB Ascend A3``);
4. the launch's files: a script or training config under an ``ascend`` folder, or with ``npu``
   as a word of its file name (LLaMA-Factory's ``qwen3_lora_sft_bnb_npu.yaml``).

Each Target names its evidence: the reason says what was seen and where (``file:line``), and
its span points there (for a program's import, into the Python file).

A launch with none of these is not NPU (``None``): NPU rules stay silent. ``CUDA_VISIBLE_DEVICES``
is not evidence either way (ms-swift's own Megatron Ascend page still shows it).

``hardware(plan_or_document, settings)`` gives the configured ``hardware``, or the one a single
comment of the script names (``# Env: 8 * V100``), with where it came from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

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
_NAME_WORDS = re.compile(r"[A-Za-z0-9]+")


@cache
def _hardware_words() -> tuple:
    """Hardware as comments name it: (pattern, hardware setting value). Only cards whose absence of
    a feature matters to a rule are listed, plus the common Ampere+ and Ascend A2/A3 names so that
    a comment naming several kinds of hardware is recognised as ambiguous. Compiled on first use:
    only a launch script's comments are searched for them, and a run on configs reads none."""
    return (
        (re.compile(r"\bV100\b", re.I), "v100"),
        (re.compile(r"\bT4\b"), "t4"),
        (re.compile(r"\bP100\b", re.I), "p100"),
        (re.compile(r"\b910A\b|\b910\s*Pro\s*A\b", re.I), "ascend-910a"),
        (re.compile(r"\b910B\d?\b|\bAtlas\s*(?:800T?|900)\s*A2\b|\bAtlas\s*A2\b", re.I), "ascend-910b"),
        (re.compile(r"\b910C\b|\bAtlas\s*(?:800T?|900)?\s*A3\b|\bAscend\s*A3\b|\bA3\s*SuperPoD\b", re.I), "ascend-910c"),
        (re.compile(r"\bA100\b", re.I), "a100"),
        (re.compile(r"\bA800\b", re.I), "a800"),
        (re.compile(r"\bH100\b", re.I), "h100"),
        (re.compile(r"\bH800\b", re.I), "h800"),
        (re.compile(r"\bH200\b", re.I), "h200"),
        (re.compile(r"\bL40S\b", re.I), "l40s"),
        (re.compile(r"\bA10G?\b"), "a10"),
        (re.compile(r"\b(?:RTX\s*)?3090\b", re.I), "rtx3090"),
        (re.compile(r"\b(?:RTX\s*)?4090\b", re.I), "rtx4090"),
    )


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

    @property
    def npu(self) -> bool:
        return self.name == NPU


@dataclass(frozen=True)
class Hardware:
    """The kind of accelerator a launch runs on, with where that is said."""

    name: str  # a value of dslint.config.HARDWARE
    origin: str
    span: Span | None = None


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
    return _detect(plan)


def npu_target(plan, settings) -> Target | None:
    """The Target when the launch runs on Ascend NPU, else None."""
    if plan is None:
        return npu_document_target(None, settings)
    found = launch_target(plan, settings)
    return found if found is not None and found.npu else None


def npu_document_target(document, settings) -> Target | None:
    """For a file no launch reaches: the settings, or its path."""
    decided = setting_target(settings)
    if decided is not None:
        return decided if decided.npu else None
    if document is None:
        return None
    hit = _path_signal(document.path)
    return Target(NPU, hit, None) if hit else None


def _detect(plan) -> Target | None:
    for check in (_env_signal, _script_signal, _args_signal, _program_signal, _comment_signal, _files_signal):
        found = check(plan)
        if found is not None:
            return found
    return None


def is_npu_variable(name: str) -> bool:
    return name in NPU_ENV_NAMES or name.startswith(NPU_ENV_PREFIXES)


def _conditional_starts(plan) -> set[int]:
    """Start offsets of assignments made in one branch of an if/case, or after && / ||."""
    script = _script(plan)
    if script is None:
        return set()
    return {a.span.start for a in script.assignments if a.conditional}


def _env_signal(plan) -> Target | None:
    env = plan.env or {}
    ordered = sorted(env, key=lambda n: (n != "ASCEND_RT_VISIBLE_DEVICES", n))
    conditional = _conditional_starts(plan)
    for name in ordered:
        span = getattr(env[name], "span", None)
        if span is not None and span.start in conditional:
            continue  # a script that serves both GPU and NPU: one branch is no evidence
        if is_npu_variable(name):
            value = env[name]
            return Target(NPU, f"{name} is set at {_where(getattr(value, 'span', None))}", getattr(value, "span", None))
        if name == "DS_ACCELERATOR":
            text = getattr(env[name], "value", None)
            if text == "npu":
                return Target(NPU, f"DS_ACCELERATOR=npu at {_where(env[name].span)}", env[name].span)
    return None


def _script(plan):
    origin = getattr(plan, "origin", None)
    return getattr(origin, "script", None) if origin is not None else None


def ascend_environment(plan) -> Target | None:
    """What the script itself shows of Ascend (its variables, set_env.sh, npu-smi), without the
    launch's arguments or program: usable while the plan is being linked."""
    return _env_signal(plan) or _script_signal(plan)


def _script_signal(plan) -> Target | None:
    script = _script(plan)
    if script is None:
        return None
    for assignment in script.assignments:
        if is_npu_variable(assignment.name) and not assignment.conditional:
            return Target(NPU, f"the script sets {assignment.name} at {_where(assignment.span)}", assignment.name_span)
        if assignment.name == "PYTHONPATH" and assignment.value is not None and _MINDSPEED.search(assignment.value.raw) \
                and not assignment.conditional:
            return Target(NPU, f"the script puts MindSpeed on PYTHONPATH at {_where(assignment.span)}", assignment.span)
    for command in script.commands:
        base = command.basename
        if base in ("source", ".") and command.args:
            word = command.args[0]
            text = word.value if word.value is not None else word.raw
            if text and _SET_ENV.search(text):
                return Target(NPU, f"the script sources {text} at {_where(command.span)}", command.span)
        if base == "npu-smi":
            return Target(NPU, f"the script runs npu-smi at {_where(command.span)}", command.span)
    return None


def _args_signal(plan) -> Target | None:
    for arg in list(plan.args.values()) + list(plan.launcher_args.values()):
        values = arg.value if isinstance(arg.value, list) else [arg.value]
        for value in values:
            if not isinstance(value, str):
                continue
            if arg.name == "ddp_backend" and value.strip().lower() == "hccl":
                return Target(NPU, f"--ddp_backend hccl at {_where(arg.span)}", arg.span)
            if arg.name in ("device", "device_map", "devices", "accelerator", "device_type") and _NPU_DEVICE.search(value):
                return Target(NPU, f"{arg.name} {value} at {_where(arg.span)}", arg.span)
    return None


def _program_signal(plan) -> Target | None:
    """The launched program always imports torch_npu or MindSpeed (dslint.launch.pyprogram)."""
    program = getattr(plan, "program", None)
    facts = getattr(program, "facts", None)
    if facts is None:
        return None
    evidence = facts.imports_always("torch_npu", "mindspeed")
    if evidence is None:
        return None
    return Target(NPU, f"the launched program {evidence.describe()}", _evidence_span(evidence))


def _evidence_span(evidence) -> Span | None:
    """The line of a program file that shows a fact, so that reports can point at it."""
    from dslint.source import SourceFile

    try:
        with open(evidence.path, "rb") as handle:
            source = SourceFile.from_bytes(evidence.path, handle.read())
        return Span(source, source.line_start(evidence.line), source.line_end(evidence.line))
    except Exception:  # noqa: BLE001 - an unreadable file only loses the pointer, not the verdict
        return None


def _comment_signal(plan) -> Target | None:
    script = _script(plan)
    if script is None:
        return None
    found = _comment_hardware(script)
    if found is not None and found.name in ASCEND_HARDWARE:
        return Target(NPU, f"Ascend hardware {found.origin}", found.span)
    return None


def _files_signal(plan) -> Target | None:
    paths = [plan.origin.path]
    reference = getattr(plan, "training_config", None)
    if reference is not None and reference.document is not None:
        paths.append(reference.document.path)
    for path in paths:
        hit = _path_signal(path)
        if hit:
            return Target(NPU, hit, None)
    return None


def _path_signal(path: str) -> str | None:
    if not path or path.startswith("<"):
        return None
    parts = Path(path).parts
    for folder in parts[:-1]:
        if folder.lower() == "ascend":
            return f"{path} is under an 'ascend' folder"
    stem = Path(parts[-1]).stem if parts else ""
    if any(word.lower() == "npu" for word in _NAME_WORDS.findall(stem.replace("_", " "))):
        return f"'npu' is a word of the file name {parts[-1]}"
    return None


def _comments(source):
    """(line number, text after '#', span) of each whole-line comment; the shebang is skipped."""
    offset = 0
    for number, line in enumerate(source.text.splitlines(keepends=True), start=1):
        stripped = line.lstrip()
        if stripped.startswith("#") and not (number == 1 and stripped.startswith("#!")):
            start = offset + (len(line) - len(stripped))
            end = offset + len(line.rstrip("\r\n"))
            yield number, stripped[1:].rstrip("\r\n"), Span(source, start, end)
        offset += len(line)


def hardware(target, settings) -> Hardware | None:
    """The configured hardware, or the one kind of hardware the script's comments name."""
    configured = getattr(settings, "hardware", None)
    if configured is not None:
        return Hardware(configured.value, configured.origin)
    origin = getattr(target, "origin", None)
    script = getattr(origin, "script", None) if origin is not None else getattr(target, "script", None)
    if script is None:
        return None
    return _comment_hardware(script)


def _comment_hardware(script) -> Hardware | None:
    named: dict[str, tuple[int, str, Span]] = {}
    for line_number, text, span in _comments(script.source):
        for pattern, value in _hardware_words():
            if pattern.search(text):
                named.setdefault(value, (line_number, text, span))
    if len(named) != 1:
        return None  # none, or several kinds: ambiguous
    value, (line_number, text, span) = next(iter(named.items()))
    return Hardware(value, f"named by a comment at {span.path}:{line_number}: {text.strip()[:60]}", span)
