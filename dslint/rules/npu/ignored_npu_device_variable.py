"""DS506 ignored-npu-device-variable: the rule and the helpers only it uses."""

from __future__ import annotations

from dslint.diagnostics import Finding, Related
from dslint.rule import rule
from dslint.launch.args import as_int
from dslint.rules.npu._common import env_span, gpu_by_setting, target_related, rename_fix


IGNORED_DEVICE_VARIABLES = ("NPU_VISIBLE_DEVICES", "ASCEND_VISIBLE_DEVICES")


@rule("DS506", "ignored-npu-device-variable", severity="warning", target="launch", fix="unsafe", facts=("launch_target",))
def ignored_npu_device_variable(plan, context, *, launch_target):
    """`NPU_VISIBLE_DEVICES` or `ASCEND_VISIBLE_DEVICES` in a launch: neither selects NPUs for it.

    ## What it checks
    `NPU_VISIBLE_DEVICES` or `ASCEND_VISIBLE_DEVICES` in the environment of a launch (either
    variable is evidence of an Ascend launch by itself; nothing is reported when the `target`
    setting says gpu).

    ## Why it matters
    torch_npu counts and numbers NPUs from `ASCEND_RT_VISIBLE_DEVICES` alone
    (torch_npu/npu/__init__.py `_parse_visible_devices`, read by `device_count`), as the CANN
    runtime does (CANN environment variable reference, ASCEND_RT_VISIBLE_DEVICES); DeepSpeed's NPU
    accelerator reads and sets only `ASCEND_RT_VISIBLE_DEVICES` (deepspeed 0.19.8
    accelerator/npu_accelerator.py:336-341). `ASCEND_VISIBLE_DEVICES` is the Ascend container
    runtime's (`docker run -e`), read when a container is created; `NPU_VISIBLE_DEVICES` is read
    by none of them. So every NPU of the machine stays visible: ranks bind NPUs 0..n-1 by their
    local rank; the `deepspeed` launcher starts one process per NPU of the machine, or with
    `--num_gpus N` takes NPUs 0..N-1 (launcher/runner.py:521 `apply_num_nodes_and_gpus`, then
    launch.py:172 sets `ASCEND_RT_VISIBLE_DEVICES` for the ranks); LLaMA-Factory's
    `NPROC_PER_NODE` defaults to every NPU; ms-swift with fewer processes than visible NPUs
    switches to device_map mode.

    ## Example
    ```sh
    export NPU_VISIBLE_DEVICES=4,5,6,7
    deepspeed --num_gpus 4 train.py --deepspeed ds_z2.json
    ```
    runs on NPUs 0-3. Use instead: `deepspeed --include localhost:4,5,6,7 train.py ...`, or
    `ASCEND_RT_VISIBLE_DEVICES=4,5,6,7` with a launcher that honours it.

    ## Fix safety
    Unsafe: renames the variable to `ASCEND_RT_VISIBLE_DEVICES`, which takes logical ids as the
    process sees them (inside a container whose devices were mapped, they start at 0); check the
    ids. No fix when `ASCEND_RT_VISIBLE_DEVICES` is set too. No fix
    when the list would then select fewer NPUs than the launch starts processes per node, or when
    the deepspeed launcher takes its devices from `--num_gpus`/`--include` and ignores the variable.
    """
    if gpu_by_setting(context):
        return
    for name in IGNORED_DEVICE_VARIABLES:
        value = plan.env.get(name)
        if value is None:
            continue
        target = launch_target
        ascend = plan.env.get("ASCEND_RT_VISIBLE_DEVICES")
        if ascend is not None:
            yield Finding(
                env_span(value, plan),
                f"{name} does not select NPUs for this launch",
                note="ASCEND_RT_VISIBLE_DEVICES, also set, does",
                related=[Related("ASCEND_RT_VISIBLE_DEVICES", getattr(ascend, "span", None))]
                + ([target_related(target)] if target is not None and target.npu else []),
            )
            continue
        fix = rename_fix(plan, value, name, "ASCEND_RT_VISIBLE_DEVICES", "Rename to ASCEND_RT_VISIBLE_DEVICES")
        yield Finding(
            env_span(value, plan),
            f"{name} does not select NPUs",
            note=f"torch_npu and DeepSpeed read ASCEND_RT_VISIBLE_DEVICES, so {_what_runs(plan)}",
            related=[target_related(target)] if target is not None and target.npu else [],
            fix=fix,
        )


def _what_runs(plan) -> str:
    """What the launch does with every NPU of the machine visible."""
    if plan.launcher == "deepspeed":
        opts = plan.launcher_args
        if "num_gpus" in opts and as_int(opts["num_gpus"].value):
            count = as_int(opts["num_gpus"].value)
            return f"--num_gpus {count} takes NPUs 0..{count - 1}"
        if not any(k in opts for k in ("include", "exclude", "hostfile")):
            return "the deepspeed launcher starts a process on every NPU of the machine"
    if plan.launcher == "llamafactory" and "NPROC_PER_NODE" not in plan.env:
        return "NPROC_PER_NODE defaults to every NPU of the machine"
    return "every NPU stays visible and the ranks bind NPUs 0..n-1"
