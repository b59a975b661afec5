"""DS520 ascend-visible-devices: the rule and the helpers only it uses."""

from __future__ import annotations

from dslint.diagnostics import Edit, Finding, Fix, Related, Severity
from dslint.rule import rule
from dslint.launch.args import as_int
from dslint.rules.npu._common import env_span, gpu_by_setting, value_span_of


@rule("DS520", "ascend-visible-devices", severity="error", target="launch", fix="unsafe")
def ascend_visible_devices(plan, context):
    """`ASCEND_RT_VISIBLE_DEVICES` that the Ascend runtime cannot take as written.

    ## What it checks
    The value of `ASCEND_RT_VISIBLE_DEVICES` in a launch's environment (CANN 8.x environment
    variable reference, envref ASCEND_RT_VISIBLE_DEVICES):
    - device ids separated by commas, **without spaces**: a space ends the list (`1, 2,3` makes
      only device 1 visible). Error.
    - ids in **ascending** order, each once: the runtime does not reorder them
      (agentscope-ai/Trinity-RFT#618). Error, with a fix that sorts the list.
    - as many ids as processes per node (`NPROC_PER_NODE`, `--nproc_per_node`): "they should
      match" (ms-swift NPU-support.md Q7). Warning, when the process count is given explicitly
      and is smaller (more processes than devices is `processes-exceed-devices`); ms-swift's own
      use of the extra devices (device_map mode) is `swift-device-map`.

    The variable is evidence of an NPU launch by itself; nothing is reported when the `target`
    setting says gpu.

    ## Why it matters
    Nothing rejects the value; the job finds out once it runs. After a space it sees fewer NPUs
    than were set aside, and with more processes than visible NPUs "ranks may fail to bind
    devices, ... initialization may hang, or HCCL may report errors" (Q7). A non-ascending list
    leaves `torch.npu.is_available()` False, so the job sees no NPU at all. With fewer
    processes than ids, "only part of the visible NPUs will be used" (Q7): the rest sit idle.

    ## Example
    `ASCEND_RT_VISIBLE_DEVICES="4, 5,6"`. Use instead: `ASCEND_RT_VISIBLE_DEVICES=4,5,6`.

    ## Fix safety
    Unsafe: it rewrites the device list you wrote (ascending, once each, without spaces), which
    changes which NPU each rank gets and, where a space cut the list, how many NPUs the run sees.
    """
    if gpu_by_setting(context):
        return
    value = plan.env.get("ASCEND_RT_VISIBLE_DEVICES")
    if value is None:
        return
    raw = getattr(value, "value", None)
    if raw is None:
        raw = getattr(value, "assumed", None)
        if raw is None:
            return
    span = env_span(value, plan)
    malformed = _malformed(value, raw, span)
    if malformed is not None:
        yield from malformed
        return
    yield from _idle_devices(plan, span, len(raw.split(",")))


def _malformed(value, raw: str, span) -> list[Finding] | None:
    """What the runtime cannot take as written (a space, an empty entry, ids out of order or repeated):
    the findings, empty when the list is unreadable but not wrong; None when the list is well formed."""
    ids = raw.split(",")
    numbers = [as_int(part) if part.strip().isdigit() else None for part in ids]
    fixed = ",".join(str(n) for n in sorted(set(numbers))) if numbers and all(n is not None for n in numbers) else None
    fix = _sorted_fix(value, raw, fixed)
    if any(ch.isspace() for ch in raw):
        kept = raw.split(" ")[0].split("\t")[0].rstrip(",")
        return [Finding(
            span,
            f"ASCEND_RT_VISIBLE_DEVICES '{raw}' contains a space",
            note=f"the Ascend runtime stops reading the list there, so only '{kept}' is visible",
            help=None if fix is not None else "write the ids without spaces",
            fix=fix,
        )]
    if any(n is None for n in numbers) or not numbers:
        if not all(part.strip() for part in ids):
            return [Finding(span, f"ASCEND_RT_VISIBLE_DEVICES '{raw}' has an empty entry", note="the runtime truncates the list at it")]
        return []
    if numbers != sorted(numbers) or len(set(numbers)) != len(numbers):
        what = "repeats an id" if len(set(numbers)) != len(numbers) else "is not in ascending order"
        return [Finding(
            span,
            f"ASCEND_RT_VISIBLE_DEVICES '{raw}' {what}",
            note="the Ascend runtime takes ids only in ascending order, once each (torch.npu.is_available() turns False otherwise)",
            help=None if fix is not None else f"write {fixed}",
            fix=fix,
        )]
    return None


def _sorted_fix(value, raw: str, fixed: str | None) -> Fix | None:
    """The ids ascending, once each, without spaces: where the script wrote the value as it reads."""
    value_span = value_span_of(value)
    if fixed is None or value_span is None or fixed == raw:
        return None
    written_value = value_span.text
    if written_value[:1] in ("'", '"') and written_value[-1:] == written_value[:1]:
        written_value = written_value[1:-1]
    if written_value != raw:
        return None
    return Fix.unsafe("Write the ids ascending, without spaces", Edit.replace(value_span, fixed))


def _idle_devices(plan, span, listed: int):
    """Fewer processes per node (given explicitly) than NPUs listed: the others sit idle. Not for
    ms-swift, which uses them (device_map mode, swift-device-map)."""
    procs = plan.procs_per_node
    if procs is None or procs.default or not isinstance(procs.value, int) or plan.consumer == "swift":
        return
    if procs.value < listed:
        yield Finding(
            span,
            f"ASCEND_RT_VISIBLE_DEVICES lists {listed} NPUs but {procs.value} process(es) per node start",
            note=f"{listed - procs.value} NPU(s) stay idle; the two should match (ms-swift NPU-support.md Q7)",
            related=[Related(f"processes per node: {procs.origin}", procs.span)],
            severity=Severity.WARNING,
        )
