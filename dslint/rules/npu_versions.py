"""Ascend NPU rules whose verdict depends on a package version (DS517-DS518).

Each rule carries the ranges of versions in which the feature fails on NPU, read from the
released sources (the versions are named on each rule page). The versions a launch may run
with come from dslint.evidence.versions (settings, pins, the program's evidence; with none, every
release dslint knows): an error when every one of them fails, otherwise info naming the
failing versions.
"""

from __future__ import annotations

from dslint.diagnostics import Edit, Finding, Fix, Related
from dslint.documents.model import Mapping, Scalar
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.launch.args import text, written
from dslint.launch.target import fix_on_target
from dslint.rules._npu_releases import FLASH_ATTENTION_2_ON_NPU, Broken, judge


def _failing(broken: tuple[Broken, ...]) -> str:
    return " and ".join(b.label for b in broken)


def _target_related(target) -> Related:
    return Related(f"Ascend NPU target: {target.reason}", target.span)


# ---- FlashAttention-2 ---------------------------------------------------------------------------------


@rule("DS517", "npu-flash-attention-2-version", severity="error", target="launch", fix="unsafe", facts=("npu_target",))
def npu_flash_attention_2_version(plan, context, *, npu_target):
    """FlashAttention-2 on Ascend NPU with a transformers version that cannot load it there.

    ## What it checks
    A launch whose target is Ascend NPU and whose model is loaded with FlashAttention-2:
    ms-swift `--attn_impl flash_attention_2` (or its alias `flash_attn`), and
    `--attn_implementation flash_attention_2` for HF Trainer, TRL and accelerate programs. The
    transformers version decides (the repository's pin, or the `transformers-version` setting):
    - before 4.51: `PreTrainedModel._check_and_enable_flash_attn_2` requires the flash-attn
      package (transformers 4.45.2 modeling_utils.py:1694-1699), which does not install on NPU:
      `ImportError: FlashAttention2 has been toggled on, but it cannot be used ... the package
      flash_attn seems to be not installed`.
    - 4.51 to 4.53: routed to torch_npu's `npu_fusion_attention` when flash-attn is absent
      (4.51.0 modeling_utils.py:2243-2250, integrations/npu_flash_attention.py;
      huggingface/transformers#36696).
    - 4.54 and 4.55: `_flash_attn_2_can_dispatch` skips the missing-package error on NPU but
      then reads `importlib.metadata.version("flash_attn")` (4.54.0 modeling_utils.py:2450-2454;
      4.55.4 :2493-2497): `PackageNotFoundError: No package metadata was found for flash_attn`.
      Fixed in 4.56 (huggingface/transformers#39844: 4.56.0 modeling_utils.py:2541-2543).
    - 4.56 and later, 5.x: routed to torch_npu (5.23 modeling_flash_attention_utils.py:101-118,
      191-197).
    Error when every version the repository allows fails; info that names the failing versions
    when only some do (with nothing pinned, every known release is allowed). LLaMA-Factory's
    `flash_attn: fa2` is not judged: LLaMA-Factory decides itself, by its own version, whether it
    asks transformers for FlashAttention-2 on NPU.

    ## Why it matters
    The failure comes when the model is loaded, after the job waited in the queue and the
    processes started on every node.

    ## Example
    `--attn_impl flash_attention_2` on Ascend with `transformers==4.45.2` pinned.
    Use instead: `--attn_impl sdpa` (torch_npu serves SDPA with its fused attention), or
    transformers 4.56 or later.

    ## Fix safety
    Unsafe, and only for an error: `sdpa` is a different kernel path (same results up to
    rounding); upgrading transformers may be the better fix.
    """
    target = npu_target
    if target is None:
        return
    if plan.consumer == "swift":
        candidates = (("attn_impl", ("flash_attention_2", "flash_attn")), ("attn_implementation", ("flash_attention_2",)))
    elif plan.consumer in (None, "hf", "accelerate", "deepspeed"):
        candidates = (("attn_implementation", ("flash_attention_2",)),)
    else:
        return
    for name, spellings in candidates:
        value = text(plan, name)
        if value.value is None or value.value.strip().lower() not in spellings:
            continue
        start = plan.origin.path if plan.origin is not None else None
        verdict, broken = judge("transformers", start, context, plan.program, FLASH_ATTENTION_2_ON_NPU)
        if broken is None or not verdict.anywhere:
            return
        related = [Related(verdict.candidates.describe()), _target_related(target)]
        if verdict.everywhere:
            fix = fix_on_target(target, plan, Fix.unsafe("Use sdpa", Edit.replace(value.span, "sdpa"))) if value.span is not None else None
            yield Finding(
                value.span or plan.span,
                f"{written(value.arg)} on Ascend NPU fails to load in {verdict.where()}",
                note=broken.what,
                help="use sdpa, or transformers 4.56+" if fix is None else "or use transformers 4.56+",
                related=related,
                fix=fix,
            )
            return
        yield Finding(
            value.span or plan.span,
            f"{written(value.arg)} on Ascend NPU fails to load in transformers {_failing(FLASH_ATTENTION_2_ON_NPU)}",
            note=verdict.qualify(),
            related=related,
            severity=verdict.severity(),
        )
        return


# ---- NVMe offload ------------------------------------------------------------------------------------

NVME_ON_NPU = (
    Broken("0.15.0", "0.18.8", "0.15.0-0.18.7", "its NPU async_io build leaves out deepspeed_py_io_handle.cpp (the I/O handle's base class), "
                               "so the op fails to load with an undefined symbol"),
)


@rule("DS518", "npu-nvme-offload-version", severity="error", target="deepspeed", facts=("npu_target",))
def npu_nvme_offload_version(use, context, *, npu_target):
    """ZeRO-Infinity NVMe offload on Ascend NPU with a DeepSpeed version that cannot build its I/O op.

    ## What it checks
    A DeepSpeed config at ZeRO stage 3 with `offload_param.device` or `offload_optimizer.device`
    `nvme`, used by a launch whose target is Ascend NPU (or any config when the `target` setting
    says npu). The NVMe swappers load the `async_io` op (`AsyncIOBuilder().load()`,
    runtime/swap_tensor/partitioned_param_swapper.py and partitioned_optimizer_swapper.py), and
    on NPU DeepSpeed builds it with `op_builder/npu/async_io.py`:
    - 0.14: its source list matches the AIO sources of that release: it builds.
    - 0.15.0 to 0.18.7: the AIO library was split (0.15 adds csrc/aio/py_lib/
      deepspeed_py_io_handle.cpp, deepspeed_aio_op_desc.cpp, deepspeed_cpu_op.cpp; the CUDA
      builder op_builder/async_io.py lists them) but the NPU builder still lists the 0.14 files
      only, while deepspeed_py_aio_handle.cpp derives its handle from `deepspeed_io_handle_t`
      defined in deepspeed_py_io_handle.cpp: the op is built without it and fails to load
      (undefined symbol). Read in the sdists of 0.15.0, 0.15.4, 0.16.0, 0.16.9, 0.17.0, 0.17.6,
      0.18.0, 0.18.4 and 0.18.7.
    - 0.18.8 and later: the NPU builder lists the three files (0.18.8, 0.18.9, 0.19.0, 0.19.8).
    Error when every DeepSpeed version the repository allows is in 0.15.0-0.18.7; info that names
    them when only some are (with nothing pinned, every known release is allowed). Stages 1 and 2 never
    use NVMe (see `nvme-offload-without-path`) and are not judged here.

    ## Why it matters
    ZeRO-Infinity fails while it sets up the swapper in `deepspeed.initialize`, after the model
    was loaded on every node. The NVMe path was usually chosen because the model does not fit
    otherwise, so there is no quick fallback at run time.

    ## Example
    ```json
    {"zero_optimization": {"stage": 3, "offload_param": {"device": "nvme", "nvme_path": "/local_nvme"}}}
    ```
    with `deepspeed==0.16.4` on Ascend. Use instead: DeepSpeed 0.18.8 or later (or 0.14.x).
    """
    config = use.config
    plan = use.launch
    target = npu_target
    if target is None or ds.zero_stage(config) != 3:
        return
    zero = ds.zero_section(config)
    if zero is None:
        return
    devices = []
    for which in ("offload_param", "offload_optimizer"):
        section = zero.get(which)
        if isinstance(section, Mapping) and ds.offload_device(config, which) == "nvme":
            device = section.get("device")
            devices.append((which, device.span if isinstance(device, Scalar) else section.span))
    if not devices:
        return
    start = plan.origin.path if plan is not None and plan.origin is not None else use.document.path
    verdict, broken = judge("deepspeed", start, context, getattr(plan, "program", None), NVME_ON_NPU)
    if broken is None or not verdict.anywhere:
        return
    which, span = min(devices, key=lambda d: d[1].start)
    related = [Related(verdict.candidates.describe()), _target_related(target)]
    if verdict.everywhere:
        yield Finding(span, f"{which} to nvme on Ascend NPU with {verdict.where()}", note=broken.what, help="use DeepSpeed 0.18.8+",
                      related=related)
        return
    yield Finding(
        span,
        f"{which} to nvme on Ascend NPU: DeepSpeed {_failing(NVME_ON_NPU)} cannot load its NPU async_io op",
        note=verdict.qualify(),
        related=related,
        severity=verdict.severity(),
    )
