"""DS305 deepspeed-ignores-visible-devices: CUDA_VISIBLE_DEVICES with a `deepspeed` launch that ignores it."""

from __future__ import annotations

from dslint.diagnostics import Finding, Related, Severity
from dslint.rule import rule


@rule("DS305", "deepspeed-ignores-visible-devices", severity="warning", target="launch")
def deepspeed_ignores_visible_devices(plan, context):
    """CUDA_VISIBLE_DEVICES is set for a `deepspeed` launch that ignores it.

    ## What it checks
    The `deepspeed` launcher honours `CUDA_VISIBLE_DEVICES` only on a single node with none of
    `--include`, `--exclude`, `--num_gpus` or `--num_nodes > 1`; otherwise it prints "ignoring
    it" and picks devices itself, starting from device 0 (deepspeed/launcher/runner.py:448-458).
    `--num_gpus`/`--num_nodes` together with `--include`/`--exclude` is an error:
    `ValueError: Cannot specify num_nodes/gpus with include/exclude` (runner.py:462-464); that
    case is reported as an error. An `--include`/`--exclude` built from the variable itself
    (`--include localhost:$CUDA_VISIBLE_DEVICES`, or a variable set from it) picks the very
    devices the variable names: not reported.

    ## Why it matters
    The job runs on GPUs other than the ones the script chose, colliding with whatever else
    runs there, while the script looks as if it pinned devices.

    ## Example
    ```sh
    CUDA_VISIBLE_DEVICES=4,5 deepspeed --num_gpus 2 train.py
    ```
    runs on devices 0 and 1. Use instead: `deepspeed --include localhost:4,5 train.py`.
    """
    if plan.launcher != "deepspeed":
        return
    opts = plan.launcher_args
    count_flags = [opts[k] for k in ("num_gpus", "num_nodes") if k in opts]
    filters = [opts[k] for k in ("include", "exclude") if k in opts]
    if count_flags and filters:
        yield Finding(
            filters[0].span or plan.span,
            "deepspeed refuses --num_gpus/--num_nodes together with --include/--exclude",
            note="the launcher raises 'Cannot specify num_nodes/gpus with include/exclude'",
            related=[Related(a.origin, a.span) for a in count_flags],
            severity=Severity.ERROR,
        )
        return
    devices = plan.env.get("CUDA_VISIBLE_DEVICES")
    if devices is None:
        return
    num_nodes = opts.get("num_nodes")
    multi_node = num_nodes is not None and str(num_nodes.value).isdigit() and int(num_nodes.value) > 1
    from dslint.launch.commands import option_built_from  # a script's launch: the shell reader is loaded already

    if any(k in opts and option_built_from(plan, k, "CUDA_VISIBLE_DEVICES") for k in ("include", "exclude")):
        return  # the devices it picks are the variable's own
    ignoring = [a for a in (opts.get("include"), opts.get("exclude"), opts.get("num_gpus")) if a is not None]
    if ignoring or multi_node:
        flag = ignoring[0] if ignoring else num_nodes
        yield Finding(
            devices.span or plan.span,
            f"deepspeed ignores CUDA_VISIBLE_DEVICES when {flag.origin.split(' at ')[0]} is given",
            note="it chooses devices from 0",
            help="use --include localhost:<ids> to pick devices",
            related=[Related(flag.origin, flag.span)],
        )
