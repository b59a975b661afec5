"""DS235 nvme-offload-without-path."""

from __future__ import annotations

from dslint.diagnostics import Finding, Severity
from dslint.documents.model import Mapping, Scalar
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules.deepspeed_engine._common import stage_related


@rule("DS235", "nvme-offload-without-path", severity="error", target="deepspeed")
def nvme_offload_without_path(use, context):
    """NVMe offload without `nvme_path` at ZeRO-3 (a crash), or NVMe optimizer offload at ZeRO-1/2 (plain CPU offload).

    ## What it checks
    `offload_param` or `offload_optimizer` with `device: nvme` and no `nvme_path` (absent or
    null) at ZeRO stage 3: an error. `offload_optimizer.device: nvme` at stage 1 or 2: a
    warning, because those stages offload to CPU memory and never use the NVMe path.

    ## Why it matters
    Stage 3 raises at `deepspeed.initialize`: `"nvme_path" in DeepSpeed Config cannot be None if
    remote device is nvme` for parameters (zero/partition_parameters.py:1217-1230) and
    `TypeError: expected str, bytes or os.PathLike object, not NoneType` for optimizer states
    (zero/stage3.py:840). At stages 1 and 2 the ZeRO optimizer treats any offload device as CPU
    (zero/stage_1_and_2.py:220-222), so the run needs the CPU memory the author meant to save.

    ## Example
    ```json
    {"zero_optimization": {"stage": 3, "offload_param": {"device": "nvme"}}}
    ```
    Use instead:
    ```json
    {"zero_optimization": {"stage": 3, "offload_param": {"device": "nvme", "nvme_path": "/local_nvme"}}}
    ```

    ## Fix safety
    No fix: the path depends on the machine.
    """
    config = use.config
    stage = ds.zero_stage(config)
    zero = ds.zero_section(config)
    if zero is None or stage is ds.UNKNOWN:
        return
    for which in ("offload_param", "offload_optimizer"):
        section = zero.get(which)
        if not isinstance(section, Mapping) or ds.offload_device(config, which) != "nvme":
            continue
        device = section.get("device")
        if stage == 3:
            path = section.get("nvme_path")
            if path is None or (isinstance(path, Scalar) and path.value is None):
                crash = (
                    "'\"nvme_path\" in DeepSpeed Config cannot be None if remote device is nvme'"
                    if which == "offload_param"
                    else "'TypeError: expected str, bytes or os.PathLike object, not NoneType'"
                )
                yield Finding(device.span, f"{which} to nvme without nvme_path", note=f"ZeRO-3 raises {crash} at deepspeed.initialize")
        elif which == "offload_optimizer" and stage in (1, 2):
            yield Finding(
                device.span,
                f"offload_optimizer to nvme at ZeRO stage {stage} offloads to CPU memory",
                note="stages 1 and 2 offload optimizer states to CPU memory and ignore nvme_path (stage_1_and_2.py:220-222)",
                help="NVMe offload needs ZeRO stage 3",
                related=stage_related(config),
                severity=Severity.WARNING,
            )
