"""The launcher commands dslint follows and the environment variables each of them reads."""

from __future__ import annotations

import re

LAUNCHER_NAMES = frozenset(
    {"deepspeed", "torchrun", "accelerate", "accelerate-launch", "swift", "megatron", "llamafactory-cli", "lmf"}
)
PYTHON_RE = re.compile(r"python(\d+(\.\d+)*)?\Z")


def is_launcher_name(basename: str | None) -> bool:
    return basename is not None and (basename in LAUNCHER_NAMES or bool(PYTHON_RE.match(basename)))


# Variables the launchers and trainers read from their environment (swift_npu_rules.md §1-3).
_COMMON_ENV = frozenset(
    {
        "CUDA_VISIBLE_DEVICES",
        "ASCEND_RT_VISIBLE_DEVICES",
        "HIP_VISIBLE_DEVICES",
        "ROCR_VISIBLE_DEVICES",
        "OMP_NUM_THREADS",
        "TOKENIZERS_PARALLELISM",
        "LD_LIBRARY_PATH",
        "PYTHONPATH",
    }
)
_COMMON_PREFIXES = (
    "NCCL_",
    "HCCL_",
    "PYTORCH_",
    "TORCH_",
    "CUDA_",
    "ASCEND_",
    "HF_",
    "TRANSFORMERS_",
    "WANDB_",
    "DS_",
    "NPU_",
    "VLLM_",
)
_SWIFT_ENV = frozenset(
    {
        "NPROC_PER_NODE",
        "NNODES",
        "NODE_RANK",
        "MASTER_ADDR",
        "MASTER_PORT",
        "MAX_PIXELS",
        "MIN_PIXELS",
        "VIDEO_MAX_PIXELS",
        "FPS_MAX_FRAMES",
        "CELOSS_PARALLEL_SIZE",
        "DISABLE_MP_DDP",
        "USE_HF",
        "MEGATRON_LM_PATH",
    }
)
_LLAMAFACTORY_ENV = frozenset(
    {
        "FORCE_TORCHRUN",
        "NNODES",
        "NODE_RANK",
        "NPROC_PER_NODE",
        "MASTER_ADDR",
        "MASTER_PORT",
        "USE_RAY",
        "USE_V1",
        "USE_MCA",
        "USE_MEGATRON_BRIDGE",
        "USE_KT",
        "ALLOW_EXTRA_ARGS",
        "RDZV_ID",
        "MIN_NNODES",
        "MAX_NNODES",
        "MAX_RESTARTS",
        "OPTIM_TORCH",
    }
)
LAUNCH_ENV_VARS = _COMMON_ENV | _SWIFT_ENV | _LLAMAFACTORY_ENV


def is_launch_env_var(name: str, launcher: str | None = None) -> bool:
    """Whether a launcher (a command basename; None for any) reads ``name`` from its environment."""
    if name in _COMMON_ENV or name.startswith(_COMMON_PREFIXES):
        return True
    if launcher is None:
        return name in LAUNCH_ENV_VARS or name.startswith(("SWIFT_", "MODELSCOPE_", "ACCELERATE_"))
    if launcher in ("swift", "megatron"):
        return name in _SWIFT_ENV or name.startswith(("SWIFT_", "MODELSCOPE_"))
    if launcher in ("llamafactory-cli", "lmf"):
        return name in _LLAMAFACTORY_ENV
    if launcher in ("accelerate", "accelerate-launch"):
        return name.startswith("ACCELERATE_")
    return False
