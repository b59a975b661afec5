"""DS505 deepspeed-visible-devices-on-npu: the rule and the helpers only it uses."""

from __future__ import annotations

from dslint.diagnostics import Finding, Related
from dslint.rule import rule
from dslint.launch.args import as_int
from dslint.rules.npu._common import env_span, target_related


@rule("DS505", "deepspeed-visible-devices-on-npu", severity="warning", target="launch", facts=("npu_target",))
def deepspeed_visible_devices_on_npu(plan, context, *, npu_target):
    """`ASCEND_RT_VISIBLE_DEVICES` with a `deepspeed` launch that ignores it.

    ## What it checks
    On Ascend the `deepspeed` launcher reads the accelerator's visibility variable,
    `ASCEND_RT_VISIBLE_DEVICES` (deepspeed 0.19.8 launcher/runner.py:448-458 with
    accelerator/npu_accelerator.py:336-337), and honours it only on a single node without a
    hostfile and without `--include`, `--exclude`, `--num_gpus` (alias `--num_accelerators`)
    or `--num_nodes > 1`. Otherwise it selects devices itself, from NPU 0, then sets
    `ASCEND_RT_VISIBLE_DEVICES` for each rank. An `--include`/`--exclude` built from the
    variable itself (`--include localhost:$ASCEND_RT_VISIBLE_DEVICES`) picks the very devices it
    names: not reported.

    ## Why it matters
    The run starts without an error, on NPUs other than the ones the variable names. The
    launcher's only hint is one line of its log ending "ignoring it" (with a hostfile, not even
    that; launcher/runner.py `main`). On a shared node those NPUs may be another job's, while the
    ones set aside for this run sit idle.

    ## Example
    ```sh
    export ASCEND_RT_VISIBLE_DEVICES=4,5,6,7
    deepspeed --num_gpus 4 train.py --deepspeed ds.json
    ```
    runs on NPUs 0-3. Use instead: `deepspeed --include localhost:4,5,6,7 train.py ...`.
    """
    if plan.launcher != "deepspeed":
        return
    target = npu_target
    value = plan.env.get("ASCEND_RT_VISIBLE_DEVICES")
    if target is None or value is None:
        return
    opts = plan.launcher_args
    from dslint.launch.commands import option_built_from  # a script's launch: the shell reader is loaded already

    if any(k in opts and option_built_from(plan, k, "ASCEND_RT_VISIBLE_DEVICES") for k in ("include", "exclude")):
        return  # the devices it picks are the variable's own
    num_nodes = opts.get("num_nodes")
    multi = num_nodes is not None and (as_int(num_nodes.value) or 0) > 1
    flags = [opts[k] for k in ("include", "exclude", "num_gpus", "hostfile") if k in opts]
    if not flags and not multi:
        return
    chosen = flags[0] if flags else num_nodes
    yield Finding(
        env_span(value, plan),
        f"the deepspeed launcher ignores ASCEND_RT_VISIBLE_DEVICES when {chosen.origin.split(' at ')[0]} is given",
        note="it picks NPUs from 0",
        help="select them with --include localhost:<ids>",
        related=[Related(chosen.origin, chosen.span), target_related(target)],
    )
