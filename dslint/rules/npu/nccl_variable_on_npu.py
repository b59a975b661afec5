"""DS503 nccl-variable-on-npu: the rule and the helpers only it uses."""

from __future__ import annotations

from dslint.diagnostics import Edit, Finding, Fix
from dslint.rule import rule
from dslint.rules.npu._common import name_span_of, env_span, npu_fix, target_related


# NCCL variables and their closest HCCL/CANN counterparts; only the socket interface is a rename.
NCCL_COUNTERPARTS = {
    "NCCL_SOCKET_IFNAME": ("HCCL_SOCKET_IFNAME", True),
    "NCCL_DEBUG": ("ASCEND_GLOBAL_LOG_LEVEL (HCCL logs to ~/ascend/log)", False),
    "NCCL_TIMEOUT": ("HCCL_CONNECT_TIMEOUT / HCCL_EXEC_TIMEOUT", False),
    "NCCL_BUFFSIZE": ("HCCL_BUFFSIZE (in MB, not bytes)", False),
    "NCCL_IB_TIMEOUT": ("HCCL_RDMA_TIMEOUT", False),
    "NCCL_IB_TC": ("HCCL_RDMA_TC", False),
    "NCCL_IB_SL": ("HCCL_RDMA_SL", False),
    "NCCL_ASYNC_ERROR_HANDLING": ("HCCL_ASYNC_ERROR_HANDLING", False),
    "TORCH_NCCL_ASYNC_ERROR_HANDLING": ("HCCL_ASYNC_ERROR_HANDLING", False),
}


@rule("DS503", "nccl-variable-on-npu", severity="warning", target="launch", fix="unsafe", facts=("npu_target",))
def nccl_variable_on_npu(plan, context, *, npu_target):
    """`NCCL_*` variables in an Ascend NPU launch: HCCL does not read them.

    ## What it checks
    Every `NCCL_*` / `TORCH_NCCL_*` variable in the environment of a launch whose target is
    Ascend NPU, with the HCCL or CANN variable closest to it where there is one:
    `NCCL_SOCKET_IFNAME` → `HCCL_SOCKET_IFNAME`, `NCCL_DEBUG` → `ASCEND_GLOBAL_LOG_LEVEL`,
    timeouts → `HCCL_CONNECT_TIMEOUT` / `HCCL_EXEC_TIMEOUT`, `NCCL_BUFFSIZE` → `HCCL_BUFFSIZE`
    (MB), `NCCL_IB_TIMEOUT|TC|SL` → `HCCL_RDMA_TIMEOUT|TC|SL`, async error handling →
    `HCCL_ASYNC_ERROR_HANDLING`.

    ## Why it matters
    Collectives on Ascend run on HCCL (DeepSpeed's NPU accelerator and ms-swift pick `hccl`);
    NCCL settings do nothing there. A multi-node job that relies on `NCCL_SOCKET_IFNAME` to pick
    the network interface lets HCCL choose its own and may hang at initialisation.

    ## Example
    `export NCCL_SOCKET_IFNAME=eth0` before `swift sft` on Ascend.
    Use instead: `export HCCL_SOCKET_IFNAME=eth0`.

    ## Fix safety
    Unsafe, for `NCCL_SOCKET_IFNAME` only: HCCL's interface syntax is close to NCCL's but
    check the value. The other variables have no exact counterpart. No fix when the variable is
    set where a launch not on NPU sees it too (exported before an `if` that picks GPU or NPU).
    """
    target = npu_target
    if target is None:
        return
    for name, value in sorted(plan.env.items()):
        if not (name.startswith("NCCL_") or name.startswith("TORCH_NCCL_")):
            continue
        counterpart, renamable = NCCL_COUNTERPARTS.get(name, (None, False))
        fix = None
        if counterpart is not None:
            help = f"the HCCL counterpart is {counterpart}"
            if renamable and counterpart not in plan.env:
                name_span = name_span_of(value, name)
                if name_span is not None:
                    fix = npu_fix(plan, target, Fix.unsafe(f"Rename to {counterpart}", Edit.replace(name_span, counterpart)))
        else:
            help = "HCCL has no counterpart, remove it"
        yield Finding(
            env_span(value, plan),
            f"{name} has no effect on Ascend NPU",
            related=[target_related(target)],
            fix=fix,
            note="collectives run on HCCL there",
            help=None if fix is not None else help,
        )
