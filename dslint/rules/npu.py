"""Ascend NPU rules (DS501-DS521): CUDA-only settings, unsupported features, NPU variables.

Each rule runs only for launches whose target is Ascend NPU (dslint/launch/target.py: the
`target` setting, `--target npu`, or what the script shows) and says in every diagnostic why
the target was taken to be NPU. Statements hold for the versions the research read
(shared/research/swift_npu_rules.md): ms-swift 4.6.0.dev0 (HEAD 3602360a, docs
BestPractices/NPU-support.md), LLaMA-Factory 0.9.6.dev0 (HEAD ff6d4d12), transformers 5.23,
DeepSpeed 0.19.8, CANN 8.x. Where the consumers disagree, a rule follows the one launched.
"""

from __future__ import annotations

from dslint.diagnostics import Edit, Finding, Fix, Related, Severity
from dslint.launch.target import NO_BF16
from dslint.rule import rule
from dslint.launch.args import as_int, flag, integer, remove_arg, text, written
from dslint.source import Span


def _related(target) -> Related:
    return Related(f"Ascend NPU target: {target.reason}", target.span)


def _env_name_span(value, name: str) -> Span | None:
    """The span of NAME in a shell assignment NAME=value (None for values from a YAML ENV: block)."""
    span = getattr(value, "span", None)
    if span is None or getattr(value, "source_kind", "") == "yaml-env":
        return None
    if span.text.startswith(name + "=") or span.text.startswith(name + "+="):
        return Span(span.source, span.start, span.start + len(name))
    return None


def _value_span(value) -> Span | None:
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


def _referenced(plan, name: str) -> bool:
    """Whether the script expands $NAME / ${NAME...} anywhere (a rename would change what it reads)."""
    import re

    text = plan.origin.source.text
    return re.search(r"\$\{?" + re.escape(name) + r"(?![A-Za-z0-9_])", text) is not None


def _rename(plan, value, old: str, new: str, title: str):
    name_span = _env_name_span(value, old)
    if name_span is None:
        return None
    if new == "ASCEND_RT_VISIBLE_DEVICES" and not _device_list_takes_effect_safely(plan, value):
        return None
    make = Fix.unsafe if _referenced(plan, old) else Fix.safe
    return make(title, Edit.replace(name_span, new))


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


def _env_span(value, plan) -> Span:
    return getattr(value, "span", None) or plan.span


# ---- CUDA-only settings ------------------------------------------------------------------------


@rule("DS501", "cuda-visible-devices-on-npu", severity="warning", target="launch", fixable=True, facts=("npu_target",))
def cuda_visible_devices_on_npu(plan, context, *, npu_target):
    """`CUDA_VISIBLE_DEVICES` in an Ascend NPU launch: torch_npu does not read it.

    ## What it checks
    A launch whose target is Ascend NPU with `CUDA_VISIBLE_DEVICES` in its environment.

    ## Why it matters
    The Ascend runtime selects devices with `ASCEND_RT_VISIBLE_DEVICES`; `CUDA_VISIBLE_DEVICES`
    is ignored ("when select gpu id on ascend npu, CUDA_VISIBLE_DEVICES is not work",
    deepspeedai/DeepSpeed#5369), so every NPU of the machine stays visible. The ranks then bind
    NPUs 0..n-1 whatever the variable says, possibly those of another job; LLaMA-Factory's
    `NPROC_PER_NODE` default (the visible device count) and the `deepspeed` launcher start one
    process per NPU of the machine; ms-swift with fewer processes than visible NPUs switches to
    device_map mode. DeepSpeed's NPU accelerator itself uses `ASCEND_RT_VISIBLE_DEVICES`
    (deepspeed 0.19.8 accelerator/npu_accelerator.py:336-341). ms-swift's Megatron Ascend page
    still shows `CUDA_VISIBLE_DEVICES`; its review (modelscope/ms-swift#8141) and the NPU best
    practice use `ASCEND_RT_VISIBLE_DEVICES`.

    ## Example
    ```sh
    source /usr/local/Ascend/ascend-toolkit/set_env.sh
    CUDA_VISIBLE_DEVICES=0,1 NPROC_PER_NODE=2 swift sft --model Qwen/Qwen3-8B --dataset d.jsonl
    ```
    Use instead: `ASCEND_RT_VISIBLE_DEVICES=0,1`.

    ## Fix safety
    Safe: the same list under the name the Ascend runtime reads (unsafe when the script reads
    `$CUDA_VISIBLE_DEVICES` elsewhere). No fix when `ASCEND_RT_VISIBLE_DEVICES` is also set. No fix
    when the list would then select fewer NPUs than the launch starts processes per node, or when
    the deepspeed launcher takes its devices from `--num_gpus`/`--include` and ignores the variable.
    """
    target = npu_target
    value = plan.env.get("CUDA_VISIBLE_DEVICES")
    if target is None or value is None:
        return
    ascend = plan.env.get("ASCEND_RT_VISIBLE_DEVICES")
    if ascend is not None:
        yield Finding(
            _env_span(value, plan),
            "CUDA_VISIBLE_DEVICES has no effect on Ascend NPU",
            note="ASCEND_RT_VISIBLE_DEVICES alone selects the devices",
            help="remove it",
            related=[Related("ASCEND_RT_VISIBLE_DEVICES", getattr(ascend, "span", None)), _related(target)],
        )
        return
    yield Finding(
        _env_span(value, plan),
        "CUDA_VISIBLE_DEVICES has no effect on Ascend NPU",
        note="every NPU stays visible and the ranks bind NPUs 0..n-1",
        related=[_related(target)],
        fix=_rename(plan, value, "CUDA_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES", "Rename to ASCEND_RT_VISIBLE_DEVICES"),
        help="select devices with ASCEND_RT_VISIBLE_DEVICES",
    )


@rule("DS502", "cuda-alloc-conf-on-npu", severity="warning", target="launch", fixable=True, facts=("npu_target",))
def cuda_alloc_conf_on_npu(plan, context, *, npu_target):
    """`PYTORCH_CUDA_ALLOC_CONF` in an Ascend NPU launch: the NPU allocator reads `PYTORCH_NPU_ALLOC_CONF`.

    ## What it checks
    A launch whose target is Ascend NPU with `PYTORCH_CUDA_ALLOC_CONF` in its environment.

    ## Why it matters
    torch_npu's caching allocator takes its options (`expandable_segments:True`,
    `max_split_size_mb`, `garbage_collection_threshold`) from `PYTORCH_NPU_ALLOC_CONF`; the CUDA
    variable is ignored, so the fragmentation setting you rely on to avoid OOM is not applied.
    ms-swift's Ascend examples use `PYTORCH_NPU_ALLOC_CONF='expandable_segments:True'`
    (examples/ascend/megatron/train_sft_full.sh; modelscope/ms-swift#8141 replaced the CUDA one).

    ## Example
    `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True megatron sft ...` on Ascend.
    Use instead: `PYTORCH_NPU_ALLOC_CONF=expandable_segments:True`.

    ## Fix safety
    Safe: the same options under the NPU name; unsafe when the value names a CUDA-only backend
    (`backend:cudaMallocAsync`) or the script reads the variable elsewhere. No fix when
    `PYTORCH_NPU_ALLOC_CONF` is also set.
    """
    target = npu_target
    value = plan.env.get("PYTORCH_CUDA_ALLOC_CONF")
    if target is None or value is None:
        return
    if plan.env.get("PYTORCH_NPU_ALLOC_CONF") is not None:
        fix, help = None, "remove it"
        note = "PYTORCH_NPU_ALLOC_CONF, also set, is the one read"
    else:
        fix = _rename(plan, value, "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_NPU_ALLOC_CONF", "Rename to PYTORCH_NPU_ALLOC_CONF")
        if fix is not None and "backend" in (getattr(value, "value", None) or ""):
            fix = Fix.unsafe(fix.title, *fix.edits)
        help = None
        note = "torch_npu's allocator reads PYTORCH_NPU_ALLOC_CONF"
    yield Finding(_env_span(value, plan), "PYTORCH_CUDA_ALLOC_CONF has no effect on Ascend NPU", related=[_related(target)], fix=fix,
                  note=note, help=help)


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


@rule("DS503", "nccl-variable-on-npu", severity="warning", target="launch", fixable=True, facts=("npu_target",))
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
    check the value. The other variables have no exact counterpart.
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
                name_span = _env_name_span(value, name)
                if name_span is not None:
                    fix = Fix.unsafe(f"Rename to {counterpart}", Edit.replace(name_span, counterpart))
        else:
            help = "HCCL has no counterpart, remove it"
        yield Finding(
            _env_span(value, plan),
            f"{name} has no effect on Ascend NPU",
            related=[_related(target)],
            fix=fix,
            note="collectives run on HCCL there",
            help=None if fix is not None else help,
        )


@rule("DS504", "ddp-backend-on-npu", severity="error", target="launch", fixable=True, facts=("launch_target",))
def ddp_backend_on_npu(plan, context, *, launch_target):
    """`--ddp_backend` that the launched trainer cannot use on Ascend NPU.

    ## What it checks
    - HF Trainer, ms-swift (`swift sft|pt|rlhf`) and LLaMA-Factory without DeepSpeed:
      `--ddp_backend nccl` on Ascend NPU. transformers passes it to
      `torch.distributed.init_process_group` (training_args.py:1886-1891), and NCCL needs CUDA
      GPUs. With `--deepspeed` the backend comes from DeepSpeed's accelerator (`hccl` on NPU)
      and `--ddp_backend` is not used, so that case is not reported. ms-swift picks `hccl` by
      itself when the flag is absent (swift/utils/torch_utils.py:337-345).
    - Megatron-SWIFT (`megatron sft|pt|rlhf`): `--ddp_backend` accepts only `nccl` and `gloo`
      (`Literal['nccl', 'gloo']`, swift/megatron/arguments/megatron_args.py:586), so `hccl`
      stops argparse with `invalid choice`, on any hardware. Its Ascend examples keep the
      default `nccl`, which the Ascend stack (MindSpeed) serves with HCCL.

    ## Why it matters
    The job dies at start-up, after its queue wait. With `nccl` on NPUs no rank can create the
    process group, which transformers does while it sets up the devices
    (`TrainingArguments._setup_devices`), before a single training step; Megatron-SWIFT refuses
    `hccl` even earlier, while it parses the arguments.

    ## Example
    `swift sft --ddp_backend nccl ...` on Ascend. Use instead: `--ddp_backend hccl`, or leave it out.

    ## Fix safety
    Safe: `hccl` is the backend ms-swift and transformers use on NPU; for Megatron-SWIFT the fix
    removes the flag, leaving the default its Ascend examples run with.
    """
    arg = plan.arg("ddp_backend")
    if arg is None or not isinstance(arg.value, str):
        return
    backend = arg.value.strip().lower()
    npu = launch_target if launch_target is not None and launch_target.npu else None
    if plan.consumer == "megatron":
        if backend in ("nccl", "gloo"):
            return
        edit = remove_arg(arg)
        yield Finding(
            arg.span or plan.span,
            f"{written(arg)}: Megatron-SWIFT accepts only nccl or gloo",
            related=[_related(npu)] if npu is not None else [],
            fix=Fix.safe("Remove --ddp_backend", edit) if edit is not None else None,
            note=f"it stops with \"invalid choice: '{arg.value}'\" (megatron_args.py:586); on Ascend the default nccl is served "
            "by MindSpeed with HCCL",
        )
        return
    if npu is None or backend != "nccl" or plan.consumer not in ("hf", "swift", "llamafactory", None):
        return
    if plan.deepspeed is not None or plan.arg("deepspeed") is not None:
        return
    yield Finding(
        arg.span or plan.span,
        f"{written(arg)} on Ascend NPU",
        note="torch.distributed cannot start NCCL without CUDA GPUs",
        related=[_related(npu)],
        fix=Fix.safe("Use hccl", Edit.replace(arg.span, "hccl")) if arg.span is not None else None,
        help="use hccl" if arg.span is None else None,
    )


@rule("DS505", "deepspeed-visible-devices-on-npu", severity="warning", target="launch", facts=("npu_target",))
def deepspeed_visible_devices_on_npu(plan, context, *, npu_target):
    """`ASCEND_RT_VISIBLE_DEVICES` with a `deepspeed` launch that ignores it.

    ## What it checks
    On Ascend the `deepspeed` launcher reads the accelerator's visibility variable,
    `ASCEND_RT_VISIBLE_DEVICES` (deepspeed 0.19.8 launcher/runner.py:448-458 with
    accelerator/npu_accelerator.py:336-337), and honours it only on a single node without a
    hostfile and without `--include`, `--exclude`, `--num_gpus` (alias `--num_accelerators`)
    or `--num_nodes > 1`. Otherwise it selects devices itself, from NPU 0, then sets
    `ASCEND_RT_VISIBLE_DEVICES` for each rank.

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
    num_nodes = opts.get("num_nodes")
    multi = num_nodes is not None and (as_int(num_nodes.value) or 0) > 1
    flags = [opts[k] for k in ("include", "exclude", "num_gpus", "hostfile") if k in opts]
    if not flags and not multi:
        return
    chosen = flags[0] if flags else num_nodes
    yield Finding(
        _env_span(value, plan),
        f"the deepspeed launcher ignores ASCEND_RT_VISIBLE_DEVICES when {chosen.origin.split(' at ')[0]} is given",
        note="it picks NPUs from 0",
        help="select them with --include localhost:<ids>",
        related=[Related(chosen.origin, chosen.span), _related(target)],
    )


IGNORED_DEVICE_VARIABLES = ("NPU_VISIBLE_DEVICES", "ASCEND_VISIBLE_DEVICES")


@rule("DS506", "ignored-npu-device-variable", severity="warning", target="launch", fixable=True, facts=("launch_target",))
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
    if _gpu_by_setting(context):
        return
    for name in IGNORED_DEVICE_VARIABLES:
        value = plan.env.get(name)
        if value is None:
            continue
        target = launch_target
        ascend = plan.env.get("ASCEND_RT_VISIBLE_DEVICES")
        if ascend is not None:
            yield Finding(
                _env_span(value, plan),
                f"{name} does not select NPUs for this launch",
                note="ASCEND_RT_VISIBLE_DEVICES, also set, does",
                related=[Related("ASCEND_RT_VISIBLE_DEVICES", getattr(ascend, "span", None))]
                + ([_related(target)] if target is not None and target.npu else []),
            )
            continue
        fix = _rename(plan, value, name, "ASCEND_RT_VISIBLE_DEVICES", "Rename to ASCEND_RT_VISIBLE_DEVICES")
        yield Finding(
            _env_span(value, plan),
            f"{name} does not select NPUs",
            note=f"torch_npu and DeepSpeed read ASCEND_RT_VISIBLE_DEVICES, so {_what_runs(plan)}",
            related=[_related(target)] if target is not None and target.npu else [],
            fix=Fix.unsafe(fix.title, *fix.edits) if fix is not None else None,
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


# ---- features Ascend does not have (per consumer) ------------------------------------------------


@rule("DS510", "npu-liger-kernel", severity="error", target="launch", fixable=True, facts=("npu_target",))
def npu_liger_kernel(plan, context, *, npu_target):
    """Liger kernels on Ascend NPU.

    ## What it checks
    - ms-swift (4.x): `--use_liger_kernel true` on Ascend. ms-swift's NPU support table lists
      Liger-Kernel as **not supported** (docs BestPractices/NPU-support.md). ms-swift already
      replaces the model's RMSNorm, rotary embedding and SwiGLU with torch_npu fused operators
      (`npu_rms_norm`, `npu_rotary_mul`, `npu_swiglu`) for Qwen2/Qwen3/Qwen3-MoE/Qwen3.5 on NPU,
      automatically (swift/model/npu_patch/model.py; `--enable_npu_model_patch false` turns it
      off). Error.
    - LLaMA-Factory (0.9.6): `enable_liger_kernel: true` is applied on NPU, but with `swiglu` and
      `fused_linear_cross_entropy` switched off on devices whose name lacks "Ascend910"
      (src/llamafactory/model/model_utils/liger_kernel.py:103-108); LLaMA-Factory's own NPU
      fused operators are `use_v1_kernels: true`. Information.

    ## Why it matters
    Under ms-swift the run rests on a combination ms-swift does not support on Ascend, and for
    Qwen2/Qwen3/Qwen3-MoE/Qwen3.5 it gains nothing: their RMSNorm, rotary embedding and SwiGLU
    already run as NPU fused operators. Under LLaMA-Factory the flag works, but on a device whose
    name lacks "Ascend910" without the SwiGLU and fused linear cross-entropy kernels, so the run
    gets only part of what the flag was turned on for.

    ## Example
    `swift sft --use_liger_kernel true ...` on Ascend. Use instead: leave it out.

    ## Fix safety
    Safe for ms-swift: removing the flag leaves ms-swift's NPU fused operators in place.
    """
    target = npu_target
    if target is None:
        return
    if plan.consumer == "swift":
        liger = flag(plan, "use_liger_kernel")
        if liger.value is not True:
            return
        edit = remove_arg(liger.arg)
        yield Finding(
            liger.arg.name_span or liger.span or plan.span,
            f"{written(liger.arg)}: ms-swift does not support Liger kernels on Ascend NPU",
            note="NPU-support.md; ms-swift already applies the torch_npu fused operators (npu_rms_norm, npu_rotary_mul, npu_swiglu) "
            "to Qwen models automatically (LLaMA-Factory's route to NPU fused operators is use_v1_kernels)",
            related=[_related(target)],
            fix=Fix.safe("Remove --use_liger_kernel", edit) if edit is not None else None,
        )
    elif plan.consumer == "llamafactory":
        liger = flag(plan, "enable_liger_kernel")
        if liger.value is not True:
            return
        yield Finding(
            liger.arg.name_span or liger.span or plan.span,
            f"{written(liger.arg)} on Ascend NPU",
            note="LLaMA-Factory applies Liger but turns off its swiglu and fused_linear_cross_entropy kernels on NPUs whose name "
            "lacks 'Ascend910'",
            help="LLaMA-Factory's NPU fused operators are use_v1_kernels: true",
            related=[_related(target)],
            severity=Severity.INFO,
        )


FA_NEWER = {"flash_attention_3": "flash_attention_2", "flash_attention_4": "flash_attention_2", "flash_attn_3": "flash_attention_2"}


def _flash_attention_2_loads(plan, context) -> bool:
    """Every transformers release the launch may run with routes FlashAttention-2 to torch_npu."""
    from dslint.rules.npu_versions import FLASH_ATTENTION_2_ON_NPU, judge

    start = plan.origin.path if plan.origin is not None else None
    return judge("transformers", start, context, plan.program, FLASH_ATTENTION_2_ON_NPU)[1] is None


@rule("DS511", "npu-flash-attention-version", severity="error", target="launch", fixable=True, facts=("npu_target",))
def npu_flash_attention_version(plan, context, *, npu_target):
    """FlashAttention 3/4 on Ascend NPU: CUDA only.

    ## What it checks
    The attention implementation of a launch whose target is Ascend NPU:
    ms-swift `--attn_impl flash_attention_3|flash_attention_4`, HF `--attn_implementation
    flash_attention_3|4`, LLaMA-Factory `flash_attn: fa3`, Megatron-SWIFT `--attention_backend
    flash_3|flash_4`.

    ## Why it matters
    FlashAttention 3 and 4 are Hopper/Blackwell CUDA kernels (transformers
    modeling_flash_attention_utils.py:132,143 load them from the CUDA packages). On NPU,
    FlashAttention-2 is what works: transformers routes `flash_attention_2` to torch_npu's
    `npu_fusion_attention` without the flash-attn package (modeling_flash_attention_utils.py:191-197),
    LLaMA-Factory accepts `fa2` on NPU (model_utils/attention.py:77-84), and Megatron-SWIFT's
    `flash` backend runs through MindSpeed; Megatron-SWIFT's `flash_3|flash_4` needs the
    flash-attn v3/v4 package (`flash-attn v3 is not installed`, megatron_args.py:921-931).

    ## Example
    `swift sft --attn_impl flash_attention_3 ...` on Ascend. Use instead: `--attn_impl flash_attention_2`.

    ## Fix safety
    Unsafe: FlashAttention-2 is a different kernel (same results up to rounding). Where some
    transformers release the launch may run with cannot load FlashAttention-2 on NPU
    (`npu-flash-attention-2-version`), the fix writes `sdpa` instead.
    """
    target = npu_target
    if target is None:
        return
    candidates = []
    if plan.consumer in ("swift", None, "hf", "deepspeed", "accelerate"):
        candidates += [("attn_impl", FA_NEWER), ("attn_implementation", FA_NEWER)]
    if plan.consumer == "llamafactory":
        candidates.append(("flash_attn", {"fa3": "fa2"}))
    if plan.consumer == "megatron":
        candidates.append(("attention_backend", {"flash_3": "flash", "flash_4": "flash"}))
    for name, table in candidates:
        value = text(plan, name)
        if value.value is None or value.value.lower() not in table:
            continue
        replacement = table[value.value.lower()]
        if replacement == "flash_attention_2" and not _flash_attention_2_loads(plan, context):
            replacement = "sdpa"  # FlashAttention-2 on NPU fails to load in some transformers releases (DS517)
        yield Finding(
            value.span or plan.span,
            f"{written(value.arg)}: FlashAttention 3/4 do not run on Ascend NPU",
            note=f"they are CUDA kernels; {replacement} uses torch_npu's npu_fusion_attention",
            related=[_related(target)],
            fix=Fix.unsafe(f"Use {replacement}", Edit.replace(value.span, replacement)) if value.span is not None else None,
        )


@rule("DS512", "npu-bitsandbytes", severity="error", target="launch", fixable=True, facts=("npu_target",))
def npu_bitsandbytes(plan, context, *, npu_target):
    """bitsandbytes quantization (QLoRA) on Ascend NPU.

    ## What it checks
    - ms-swift (4.x): `--quant_method bnb` on Ascend. QLoRA is listed as **not supported** on NPU
      (NPU-support.md, "Quantization/QLoRA related features"). Error.
    - LLaMA-Factory (0.9.6): `quantization_bit` with the bitsandbytes method (the default). It
      works on Ascend only with bitsandbytes compiled for NPU (`cmake -DCOMPUTE_BACKEND=npu`), in
      4-bit NF4, with `double_quantization: false` (README "Install BitsAndBytes" for Ascend;
      examples/train_qlora/qwen3_lora_sft_bnb_npu.yaml). Errors: double quantization left on
      (the default is true), `quantization_type: fp4`, 8-bit.

    ## Why it matters
    The CUDA build of bitsandbytes fails on NPU (`The installed version of bitsandbytes was
    compiled without GPU support`, `'NoneType' object has no attribute 'cadam32bit_grad_fp32'`;
    hiyouga/LlamaFactory#3271, #6452).

    ## Example
    ```yaml
    quantization_bit: 4
    quantization_method: bnb
    ```
    on Ascend. Use instead: add `double_quantization: false` (and install the NPU build).

    ## Fix safety
    Safe for `double_quantization`: it sets it to false (or adds the key) as LLaMA-Factory's NPU
    example does. No fix for ms-swift: use bf16 LoRA instead.
    """
    target = npu_target
    if target is None:
        return
    if plan.consumer in ("swift", "megatron"):
        method = text(plan, "quant_method")
        if method.value is not None and method.value.lower() == "bnb":
            yield Finding(
                method.span or plan.span,
                f"{written(method.arg)}: ms-swift does not support bitsandbytes quantization (QLoRA) on Ascend NPU",
                note="NPU-support.md",
                help=None if plan.entry == "swift export" else "train LoRA on bf16 weights instead",
                related=[_related(target)],
            )
        return
    if plan.consumer != "llamafactory":
        return
    bits = integer(plan, "quantization_bit")
    if not isinstance(bits.value, int):
        return
    method = text(plan, "quantization_method")
    if method.value is not None and method.value.lower() != "bnb":
        return
    if bits.value != 4:
        yield Finding(
            bits.span or plan.span,
            f"{written(bits.arg)} with bitsandbytes on Ascend NPU",
            note="LLaMA-Factory's NPU route is 4-bit NF4 with double_quantization: false and bitsandbytes built for NPU",
            related=[_related(target)],
        )
        return
    qtype = text(plan, "quantization_type")
    if qtype.value is not None and qtype.value.lower() == "fp4":
        yield Finding(
            qtype.span or plan.span,
            f"{written(qtype.arg)} on Ascend NPU",
            note="LLaMA-Factory's NPU bitsandbytes route is NF4",
            related=[_related(target)],
            fix=Fix.unsafe("Use nf4", Edit.replace(qtype.span, "nf4")) if qtype.span is not None else None,
            help="use quantization_type: nf4" if qtype.span is None else None,
        )
    double = flag(plan, "double_quantization")
    if double.value is False:
        return
    fix = None
    if double.arg is not None and double.span is not None:
        fix = Fix.safe("Set double_quantization to false", Edit.replace(double.span, "false"))
    elif bits.arg is not None and bits.arg.span is not None and " in " in bits.arg.origin.split(" at ")[0]:
        fix = _yaml_insert_after(bits.arg, "double_quantization: false")
    anchor = double.span if double.arg is not None else bits.span
    yield Finding(
        anchor or plan.span,
        ("double_quantization is on (LLaMA-Factory's default)" if double.arg is None else written(double.arg))
        + " with 4-bit bitsandbytes on Ascend NPU",
        note="the NPU build of bitsandbytes needs double_quantization: false (LLaMA-Factory README, Ascend QLoRA)",
        related=[Related(written(bits.arg), bits.span), _related(target)],
        fix=fix,
    )


def _yaml_insert_after(arg, line_text: str):
    span = arg.span
    text_ = span.source.text
    line_end = text_.find("\n", span.end)
    if line_end == -1:
        return None
    key_span = arg.name_span or span
    line_start = text_.rfind("\n", 0, key_span.start) + 1
    indent = text_[line_start:key_span.start]
    if indent.strip():
        return None
    return Fix.safe(f"Add {line_text}", Edit(span.source, line_end + 1, line_end + 1, f"{indent}{line_text}\n"))


@rule("DS513", "npu-sglang", severity="error", target="launch", fixable=True, facts=("npu_target",))
def npu_sglang(plan, context, *, npu_target):
    """SGLang as ms-swift's inference engine on Ascend NPU.

    ## What it checks
    ms-swift (4.x) `--infer_backend sglang` (`swift infer|deploy|rollout|eval|sample`) on Ascend:
    the NPU support table lists "Using SGLang as the inference engine" as **not supported**
    (NPU-support.md); vLLM runs through vLLM-Ascend (the docs pin 0.23.0). Other consumers are
    not judged.

    ## Why it matters
    The deployment, evaluation or rollout server is built on an engine ms-swift does not support
    on Ascend. ms-swift carries NPU patches for vLLM-Ascend (swift/model/npu_patch/vllm_ascend*.py)
    and none for SGLang (swift/infer_engine/sglang_engine.py has no NPU path), so the supported
    route is a one-flag change away while this one is unverified ground.

    ## Example
    `swift deploy --model Qwen/Qwen3-8B --infer_backend sglang` on Ascend.
    Use instead: `--infer_backend vllm` (with vllm-ascend installed).

    ## Fix safety
    Unsafe: vLLM needs the vllm-ascend package and has its own options.
    """
    target = npu_target
    if target is None or plan.consumer not in ("swift", "megatron"):
        return
    backend = text(plan, "infer_backend")
    if backend.value is None or backend.value.lower() != "sglang":
        return
    yield Finding(
        backend.span or plan.span,
        f"{written(backend.arg)}: ms-swift does not support SGLang on Ascend NPU",
        note="NPU-support.md; vllm runs there with vllm-ascend",
        related=[_related(target)],
        fix=Fix.unsafe("Use vllm", Edit.replace(backend.span, "vllm")) if backend.span is not None else None,
    )


@rule("DS514", "npu-sequence-parallel", severity="warning", target="launch", facts=("npu_target",))
def npu_sequence_parallel(plan, context, *, npu_target):
    """ms-swift's `--sequence_parallel_size` on Ascend NPU.

    ## What it checks
    ms-swift (4.x, not Megatron-SWIFT) with `--sequence_parallel_size N > 1` on Ascend. Its
    Ulysses/ring sequence parallelism is not in the NPU support table, users report failures on
    NPU (modelscope/ms-swift#6974, #4412, #9387), and its ring attention
    (`zigzag_ring_flash_attn_varlen_func`, swift/sequence_parallel/zigzag_ring_attn.py) calls
    flash-attn's CUDA kernels; an NPU branch (zigzag_ring_attn_npu.py, modelscope/ms-swift#9298)
    exists only from ms-swift 4.2.1 on. Megatron-SWIFT's `--context_parallel_size` is the route
    its Ascend examples use for long sequences.

    ## Why it matters
    A warning, because the run may well start. But it rests on a feature that ms-swift does not
    list as supported on Ascend and that users have seen fail there, so a long-sequence job is
    staked on an unverified path while a documented one exists.

    ## Example
    `NPROC_PER_NODE=8 swift sft --sequence_parallel_size 4 ...` on Ascend.
    Use instead: `megatron sft --context_parallel_size 4 ...`.
    """
    target = npu_target
    if target is None or plan.consumer != "swift":
        return
    sp = integer(plan, "sequence_parallel_size")
    if not isinstance(sp.value, int) or sp.value <= 1:
        return
    yield Finding(
        sp.span or plan.span,
        f"{written(sp.arg)}: ms-swift's sequence parallelism is not in its Ascend NPU support table",
        note="failures reported in modelscope/ms-swift#6974 and #4412; an NPU ring-attention path exists only from ms-swift 4.2.1",
        help="use Megatron-SWIFT's --context_parallel_size",
        related=[_related(target)],
    )


@rule("DS515", "npu-fp8", severity="warning", target="launch", facts=("npu_target",))
def npu_fp8(plan, context, *, npu_target):
    """FP8 training on Ascend NPU.

    ## What it checks
    FP8 requested by a launch whose target is Ascend NPU: LLaMA-Factory `fp8: true`, accelerate
    `mixed_precision: fp8`, ms-swift `--quant_method fp8`, Megatron-SWIFT `--fp8_format` /
    `--fp8_recipe`.

    ## Why it matters
    ms-swift's NPU FAQ: "Can FP8 or quantized models be trained directly on NPUs? Do not assume
    they can ... use BF16 weights first" (NPU-support.md Q13). LLaMA-Factory's and accelerate's
    FP8 backends (torchao, Transformer Engine, MS-AMP) are built for NVIDIA FP8 GPUs.

    ## Example
    `fp8: true` in a LLaMA-Factory config run on Ascend. Use instead: `bf16: true`.
    """
    target = npu_target
    if target is None:
        return
    hits = []
    if plan.consumer == "llamafactory":
        fp8 = flag(plan, "fp8")
        if fp8.value is True:
            hits.append((fp8.arg, "LLaMA-Factory's FP8 goes through accelerate's torchao/Transformer Engine backends, built for NVIDIA FP8 GPUs"))
    if plan.consumer in ("swift", "megatron"):
        method = text(plan, "quant_method")
        if method.value is not None and method.value.lower() == "fp8":
            hits.append((method.arg, "ms-swift's NPU FAQ: do not assume FP8 models can be trained on NPU; use BF16 weights"))
        for name in ("fp8_format", "fp8_recipe", "fp8"):
            value = plan.arg(name)
            if value is not None and value.value not in (None, False, "false", "False", "none", "None"):
                hits.append((value, "ms-swift's NPU FAQ: do not assume FP8 can be trained on NPU; Megatron's FP8 runs on Transformer Engine"))
                break
    acc = plan.launcher_args.get("mixed_precision") if plan.launcher == "accelerate" else None
    if acc is not None and isinstance(acc.value, str) and acc.value.lower() == "fp8":
        hits.append((acc, "accelerate's FP8 backends (Transformer Engine, MS-AMP, torchao) are built for NVIDIA FP8 GPUs"))
    for arg, why in hits:
        yield Finding(
            arg.span or plan.span,
            f"{written(arg)} on Ascend NPU",
            note=why,
            help="train in bf16",
            related=[_related(target)],
        )


@rule("DS516", "npu-training-card", severity="warning", target="launch", facts=("hardware",))
def npu_training_card(plan, context, *, hardware):
    """ms-swift on an Ascend 910A-generation card, which it does not support.

    ## What it checks
    The `hardware` setting (or a comment of the script) names Ascend 910A and the launch is
    ms-swift or Megatron-SWIFT (4.x). ms-swift's hardware table supports Atlas A2/A3 training
    products and the Ascend 950 series, and marks "Atlas training series products" (the 910A
    generation) and all inference products as not supported (NPU-support.md, Table 1). 910A also
    has no bf16 (`precision-unsupported-hardware`). Other consumers are not judged.

    ## Why it matters
    The run is on hardware that ms-swift's Ascend support does not extend to. The missing bf16
    can stop it at once: without `--torch_dtype`, ms-swift takes the dtype from the model
    (swift/model/model_meta.py; `get_default_torch_dtype` in swift/model/utils.py asks the
    hardware only when config.json names none), so a model saved in bf16 turns bf16 training on
    and the job stops at start-up, after its queue wait.

    ## Example
    `hardware = "ascend-910a"` with `swift sft ...`. Use instead: Atlas A2 (910B) or A3 hardware.
    """
    if plan.consumer not in ("swift", "megatron"):
        return
    if hardware is None or hardware.name != "ascend-910a":
        return
    yield Finding(
        plan.span,
        f"ms-swift does not support {NO_BF16[hardware.name]} (Atlas training series, 910A generation)",
        note="its NPU support covers Atlas A2/A3 training products and the Ascend 950 series (NPU-support.md, Table 1)",
        related=[Related(f"hardware {hardware.name} ({hardware.origin})", hardware.span)],
    )


# ---- NPU variable values -----------------------------------------------------------------------


def _gpu_by_setting(context) -> bool:
    target = getattr(context.settings, "target", None)
    return target is not None and target.value == "gpu"


@rule("DS520", "ascend-visible-devices", severity="error", target="launch", fixable=True)
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
    Safe: the ids written without spaces, ascending, once each; which physical NPU each rank gets
    is then the order the runtime imposes anyway.
    """
    if _gpu_by_setting(context):
        return
    value = plan.env.get("ASCEND_RT_VISIBLE_DEVICES")
    if value is None:
        return
    raw = getattr(value, "value", None)
    if raw is None:
        raw = getattr(value, "assumed", None)
        if raw is None:
            return
    span = _env_span(value, plan)
    ids = raw.split(",")
    fixed = None
    numbers = [as_int(part) if part.strip().isdigit() else None for part in ids]
    if all(n is not None for n in numbers) and numbers:
        fixed = ",".join(str(n) for n in sorted(set(numbers)))
    value_span = _value_span(value)
    fix = None
    if fixed is not None and value_span is not None and fixed != raw:
        written_value = value_span.text
        if written_value[:1] in ("'", '"') and written_value[-1:] == written_value[:1]:
            written_value = written_value[1:-1]
        if written_value == raw:
            fix = Fix.safe("Write the ids ascending, without spaces", Edit.replace(value_span, fixed))
    if any(ch.isspace() for ch in raw):
        kept = raw.split(" ")[0].split("\t")[0].rstrip(",")
        yield Finding(
            span,
            f"ASCEND_RT_VISIBLE_DEVICES '{raw}' contains a space",
            note=f"the Ascend runtime stops reading the list there, so only '{kept}' is visible",
            help=None if fix is not None else "write the ids without spaces",
            fix=fix,
        )
        return
    if any(n is None for n in numbers) or not numbers:
        if not all(part.strip() for part in ids):
            yield Finding(span, f"ASCEND_RT_VISIBLE_DEVICES '{raw}' has an empty entry", note="the runtime truncates the list at it")
        return
    if numbers != sorted(numbers) or len(set(numbers)) != len(numbers):
        what = "repeats an id" if len(set(numbers)) != len(numbers) else "is not in ascending order"
        yield Finding(
            span,
            f"ASCEND_RT_VISIBLE_DEVICES '{raw}' {what}",
            note="the Ascend runtime takes ids only in ascending order, once each (torch.npu.is_available() turns False otherwise)",
            help=None if fix is not None else f"write {fixed}",
            fix=fix,
        )
        return
    procs = plan.procs_per_node
    if procs is None or procs.default or not isinstance(procs.value, int) or plan.consumer == "swift":
        return
    if procs.value < len(numbers):
        yield Finding(
            span,
            f"ASCEND_RT_VISIBLE_DEVICES lists {len(numbers)} NPUs but {procs.value} process(es) per node start",
            note=f"{len(numbers) - procs.value} NPU(s) stay idle; the two should match (ms-swift NPU-support.md Q7)",
            related=[Related(f"processes per node: {procs.origin}", procs.span)],
            severity=Severity.WARNING,
        )


@rule("DS521", "hccl-connect-timeout", severity="warning", target="launch", fixable=True)
def hccl_connect_timeout(plan, context):
    """`HCCL_CONNECT_TIMEOUT` outside the range CANN accepts.

    ## What it checks
    `HCCL_CONNECT_TIMEOUT` (seconds HCCL waits for the other ranks when it builds a
    communicator) must be an integer in [120, 7200]; the default is 120 (CANN 8.x environment
    variable reference, envref HCCL_CONNECT_TIMEOUT). ms-swift sets 600 when it is absent
    (swift/model/npu_patch/env.py). The variable is evidence of an NPU launch by itself;
    nothing is reported when the `target` setting says gpu.

    ## Why it matters
    A value CANN does not accept is not the timeout you asked for: a large multi-node job that
    needs longer than the default to connect fails with an HCCL timeout instead.

    ## Example
    `export HCCL_CONNECT_TIMEOUT=60`. Use instead: `export HCCL_CONNECT_TIMEOUT=120` (or more).

    ## Fix safety
    Unsafe: it clamps the value into [120, 7200].
    """
    if _gpu_by_setting(context):
        return
    value = plan.env.get("HCCL_CONNECT_TIMEOUT")
    if value is None or getattr(value, "value", None) is None:
        return
    raw = value.value.strip()
    number = as_int(raw)
    span = _env_span(value, plan)
    if number is None:
        yield Finding(span, f"HCCL_CONNECT_TIMEOUT '{raw}' is not a whole number of seconds", note="CANN accepts an integer in [120, 7200]")
        return
    if 120 <= number <= 7200:
        return
    clamped = min(max(number, 120), 7200)
    value_span = _value_span(value)
    fix = Fix.unsafe(f"Use {clamped}", Edit.replace(value_span, str(clamped))) if value_span is not None and value_span.text == raw else None
    yield Finding(
        span,
        f"HCCL_CONNECT_TIMEOUT {number} is outside the range CANN accepts, [120, 7200] seconds",
        fix=fix,
        help=None if fix is not None else f"use {clamped}",
    )
