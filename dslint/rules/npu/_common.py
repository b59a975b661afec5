"""Helpers shared by the Ascend NPU rules: the NPU target as a related place, a finding on a
launch value for NPU, the spans of an environment variable's name and value, and the fix that
renames a variable."""

from __future__ import annotations

from dslint.diagnostics import Edit, Finding, Fix, Related
from dslint.launch.target import fix_on_target
from dslint.source import Span


def target_related(target) -> Related:
    return Related(f"Ascend NPU target: {target.reason}", target.span)


def npu_finding(plan, target, span: Span | None, message: str, note: str, *, use: str | None = None,
                safe: bool = False, help: str | None = None) -> Finding:
    """A finding on a launch value the Ascend NPU target cannot run: at SPAN (the launch where
    the value has no position), citing the target. USE is the value to write instead: a fix
    (safe or unsafe) where SPAN is known; HELP is what to do where no fix does it."""
    fix = None
    if use is not None and span is not None:
        fix = npu_fix(plan, target, (Fix.safe if safe else Fix.unsafe)(f"Use {use}", Edit.replace(span, use)))
    return Finding(span or plan.span, message, related=[target_related(target)], fix=fix, note=note,
                   help=help if fix is None else None)


def name_span_of(value, name: str) -> Span | None:
    """The span of NAME in a shell assignment NAME=value (None for values from a YAML ENV: block)."""
    span = getattr(value, "span", None)
    if span is None or getattr(value, "source_kind", "") == "yaml-env":
        return None
    if span.text.startswith(name + "=") or span.text.startswith(name + "+="):
        return Span(span.source, span.start, span.start + len(name))
    return None


def value_span_of(value) -> Span | None:
    """The span of the value in NAME=value (or the YAML ENV value), quotes included."""
    span = getattr(value, "span", None)
    if span is None:
        return None
    if getattr(value, "source_kind", "") == "yaml-env":
        return span
    text = span.text
    if "=" not in text:
        return None
    offset = text.index("=") + 1
    return Span(span.source, span.start + offset, span.end)


def npu_fix(plan, target, fix: Fix | None) -> Fix | None:
    """A fix made because the launch runs on Ascend NPU, when it edits only statements that run
    with the NPU evidence (dslint.launch.target.reaches): in a script for both GPU and NPU, a
    variable or an argument written before the switch serves the GPU launch too."""
    return fix_on_target(target, plan, fix)


def rename_fix(plan, value, old: str, new: str, title: str, target=None):
    """Rename OLD to NEW where VALUE was set; with TARGET (the rename is for NPU), only where that
    statement runs on NPU alone."""
    name_span = name_span_of(value, old)
    if name_span is None:
        return None
    if new == "ASCEND_RT_VISIBLE_DEVICES" and not _device_list_takes_effect_safely(plan, value):
        return None
    # Unsafe: under the name the Ascend runtime reads, a setting that did nothing starts to take
    # effect (a device list selects NPUs, allocator options apply), and a script that also runs on
    # GPUs, or reads $OLD itself, loses the old name.
    fix = Fix.unsafe(title, Edit.replace(name_span, new))
    return fix if target is None else npu_fix(plan, target, fix)


def _device_list_takes_effect_safely(plan, value) -> bool:
    """Renaming an inert device list to ASCEND_RT_VISIBLE_DEVICES makes it select the NPUs: not a fix
    when the launch then starts more processes per node than it lists (processes-exceed-devices), or
    when the deepspeed launcher picks the devices from --num_gpus/--include and ignores the variable
    (deepspeed-visible-devices-on-npu)."""
    if plan.launcher == "deepspeed" and any(k in plan.launcher_args for k in ("num_gpus", "include", "exclude")):
        return False
    text = getattr(value, "value", None)
    procs = plan.procs_per_node.value if plan.procs_per_node is not None else None
    if text is None:
        return procs is None
    listed = len([part for part in str(text).split(",") if part.strip()])
    return not isinstance(procs, int) or procs <= listed


def env_span(value, plan) -> Span:
    return getattr(value, "span", None) or plan.span


def gpu_by_setting(context) -> bool:
    target = getattr(context.settings, "target", None)
    return target is not None and target.value == "gpu"
