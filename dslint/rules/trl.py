"""TRL rules (DS921): where TRL's on-policy trainers put vLLM, counted against the training GPUs.

The generation batch of these trainers is DS416 (dslint/rules/parallelism/generation_batch.py); who runs them and
what each TRL release computes is dslint/frameworks/grpo.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from dslint.diagnostics import Finding, Related, Severity
from dslint.frameworks import grpo
from dslint.rule import rule
from dslint.launch.args import flag, integer, text, where
from dslint.launch.wrapped import on_other_host
from dslint.evidence.versions import compare


def _least(*severities):
    found = [s for s in severities if s is not None]
    return min(found) if found else None


def _ids(value) -> list[str] | None:
    text_value = getattr(value, "value", None)
    if text_value is None:
        text_value = getattr(value, "assumed", None)
    if text_value is None:
        return None
    return [part.strip() for part in text_value.split(",") if part.strip()]


def _servers(plan) -> list:
    """The `trl vllm-serve` commands the launch's script starts in the background."""
    script = getattr(plan.origin, "script", None)
    out = []
    for command in getattr(script, "commands", []) or []:
        argv = command.argv
        if command.basename == "trl" and len(argv) > 1 and argv[1].value == "vllm-serve" and command.background:
            if on_other_host(command):
                continue  # started on another host
            out.append(command)
    return out


def _server_size(command) -> tuple[int | None, str]:
    """tensor × data parallel size of a `trl vllm-serve` command (TRL's defaults: 1 and 1)."""
    sizes = {"tensor_parallel_size": 1, "data_parallel_size": 1}
    words = command.argv[2:]
    for index, word in enumerate(words):
        name = (word.value or "").lstrip("-").replace("-", "_")
        value_text = None
        if "=" in name:
            name, value_text = name.split("=", 1)
        elif index + 1 < len(words):
            value_text = words[index + 1].value
        if name in sizes:
            try:
                sizes[name] = int(value_text or "")
            except ValueError:
                return None, ""
    size = sizes["tensor_parallel_size"] * sizes["data_parallel_size"]
    return size, f"tensor_parallel_size {sizes['tensor_parallel_size']} × data_parallel_size {sizes['data_parallel_size']}"


def _shown(ids: list[str]) -> str:
    return f"GPU {ids[0]}" if len(ids) == 1 else f"GPUs {','.join(ids)}"


@rule("DS921", "trl-vllm-gpus", severity="error", target="launch", facts=("trl_trainer",))
def trl_vllm_gpus(plan, context, *, trl_trainer):
    """TRL GRPO/RLOO with vLLM: the generation engine's GPUs, counted against the training processes.

    ## What it checks
    For a launch of TRL's `GRPOTrainer` or `RLOOTrainer` (dslint/frameworks/grpo.py) with
    `--use_vllm`, by TRL release (the candidates `dslint.evidence.versions` allows):
    - `--vllm_mode colocate` (0.18.0 on; RLOO 0.22.0): vLLM runs inside the training processes,
      and `vllm_tensor_parallel_size` must divide their number: "vllm_tensor_parallel_size (3)
      must divide world size (8) evenly" (grpo_trainer.py:628-635 in 0.18.0; 1.x
      trl/generation/vllm_generation.py:316-322 "tensor_parallel_size ...").
    - server mode (`--use_vllm` in 0.16-0.17, `--vllm_mode server`, the default, from 0.18):
      the generations come from a separate `trl vllm-serve` process. When the same script starts
      one in the background on this node, its GPUs (its `CUDA_VISIBLE_DEVICES`, the first
      `tensor_parallel_size × data_parallel_size` of them) must not be the training processes'
      (the first `num_processes` of the launch's visible devices): vLLM reserves
      `--gpu_memory_utilization` (0.9) of each of its GPUs (trl/scripts/vllm_serve.py).
    - 0.14-0.15, before the server: vLLM takes the GPU after the training processes
      (`vllm_device="auto"` is `cuda:{num_processes}`), which must exist among the visible
      devices (grpo_trainer.py:373-387 in 0.15.0; with a single visible GPU, 0.15 shares it).

    ## Why it matters
    A ValueError at start-up (colocate, 0.14-0.15), or a trainer that runs out of memory loading
    the model on a GPU the server already filled.

    ## Example
    ```sh
    CUDA_VISIBLE_DEVICES=0 trl vllm-serve --model Qwen/Qwen2.5-7B &
    accelerate launch --num_processes 8 train_grpo.py --use_vllm --vllm_mode server
    ```
    The training processes use GPUs 0-7, the server GPU 0.

    ## Use instead
    `CUDA_VISIBLE_DEVICES=1,2,3,4,5,6,7 accelerate launch --num_processes 7 train_grpo.py --use_vllm`.

    ## Fix safety
    No fix: which GPUs go to generation and which to training is a layout decision.
    """
    trainer = trl_trainer
    if trainer is None or grpo.config_file_unread(plan):
        return
    if flag(plan, "use_vllm").value is not True:
        return
    world = plan.world_size.value if plan.world_size is not None and isinstance(plan.world_size.value, int) else None
    if world is None:
        return
    versions, assumed, noted = grpo.judging(plan, context.settings, trainer)
    launch = _Launch(trainer, world, Related(f"{world} training processes: {plan.world_size.origin}", plan.world_size.span),
                     versions, assumed, noted, {"trl-grpo": "0.18.0", "trl-rloo": "0.22.0"}[trainer.kind])
    mode = text(plan, "vllm_mode")
    if mode.value is not None and mode.value.lower() == "colocate":
        yield from _colocated(plan, launch, mode)
        return
    visible = plan.visible_devices.value if plan.visible_devices is not None else None
    single_node = plan.nodes is None or plan.nodes.value == 1
    if trainer.kind == "trl-grpo" and visible is not None and single_node:
        yield from _no_device_left(plan, launch, visible)
    yield from _shared_with_server(plan, launch, visible, single_node)


@dataclass(frozen=True)
class _Launch:
    """What each check of DS921 reads: the trainer, the training processes, the TRL releases judged."""

    trainer: grpo.Trainer
    world: int
    world_note: Related
    versions: Any  # dslint.evidence.versions.Candidates
    assumed: Severity | None  # the cap when the trainer is assumed
    noted: Callable  # the note, with the failing releases and the assumption
    first: str  # the first release of the trainer with vLLM colocation and servers


def _colocated(plan, launch: _Launch, mode):
    """vLLM colocated in the training processes: its tensor parallel size divides them."""
    world, versions = launch.world, launch.versions
    tp = integer(plan, "vllm_tensor_parallel_size", default=1, note="TRL's default")
    if not (isinstance(tp.value, int) and tp.value >= 1 and world % tp.value):
        return
    verdict = versions.judge(lambda v: compare(v, launch.first) >= 0)
    if verdict.anywhere:
        yield Finding(
            tp.span or mode.span or plan.span,
            f"vllm_tensor_parallel_size {tp.value} does not divide the {world} training processes that colocate vLLM",
            note=launch.noted(f"{launch.trainer.label} stops with 'vllm_tensor_parallel_size ({tp.value}) must divide world size ({world}) evenly'",
                              verdict),
            related=[tp.related("vllm_tensor_parallel_size"), launch.world_note, Related(versions.describe())],
            severity=_least(launch.assumed, verdict.severity()),
        )


def _no_device_left(plan, launch: _Launch, visible: list):
    """TRL 0.14-0.15 GRPO puts vLLM on the GPU after the training processes' (``vllm_device: auto``)."""
    world = launch.world
    device = text(plan, "vllm_device")
    if device.value not in (None, "auto"):
        return
    count = len(visible)

    def no_device(version):
        if compare(version, "0.14.0") < 0 or compare(version, "0.16.0") >= 0:
            return False
        return world >= count and not (count == 1 and compare(version, "0.15.0") >= 0)

    verdict = launch.versions.judge(no_device)
    if verdict.anywhere:
        yield Finding(
            plan.span,
            f"{world} training processes take all {count} visible GPU{'s' if count != 1 else ''}, none is left for vLLM",
            note=launch.noted(f"vLLM goes on the next one: {launch.trainer.label} stops with 'The requested device for vllm (cuda:{world}) is not "
                              "available'", verdict),
            related=[launch.world_note, Related(f"{count} visible: {plan.visible_devices.origin}", plan.visible_devices.span),
                     Related(launch.versions.describe())],
            severity=_least(launch.assumed, verdict.severity()),
        )


def _shared_with_server(plan, launch: _Launch, visible: list | None, single_node: bool):
    """A `trl vllm-serve` the script starts on this node, on GPUs the training processes use."""
    world = launch.world
    host = text(plan, "vllm_server_host", "vllm_server_base_url")
    if not single_node or (host.value is not None and not any(h in host.value for h in ("localhost", "127.0.0.1", "0.0.0.0"))):
        return
    training = visible[:world] if visible is not None else [str(i) for i in range(world)]
    if visible is not None and len(visible) < world:
        return  # DS304's finding
    for server in _servers(plan):
        size, how = _server_size(server)
        used = _server_gpus(server, size)
        shared = [gpu for gpu in used or () if gpu in training]
        if not shared:
            continue

        def served(version):  # the trainer asks a server: GRPO from 0.16, RLOO from 0.22
            return compare(version, "0.16.0") >= 0 and (launch.trainer.kind == "trl-grpo" or compare(version, launch.first) >= 0)

        verdict = launch.versions.judge(served)
        if not verdict.anywhere:
            continue
        line = server.span.source.position(server.span.start)[0]
        default = "" if visible is not None else " (no CUDA_VISIBLE_DEVICES: the first of the machine's GPUs)"
        yield Finding(
            plan.span,
            f"the vLLM server started at line {line} and the {world} training processes share {_shown(shared)}",
            note=launch.noted(f"vLLM reserves 90% of its GPUs' memory (--gpu_memory_utilization 0.9), so the trainer runs out of memory on "
                              f"{'it' if len(shared) == 1 else 'them'}{default}", verdict),
            related=[Related(f"`trl vllm-serve` ({how}) on {_shown(used)} at {where(server.span)}", server.span), launch.world_note,
                     Related(launch.versions.describe())],
            severity=_least(launch.assumed, Severity.WARNING if visible is None else None, verdict.severity()),
        )


def _server_gpus(server, size: int | None) -> list[str] | None:
    """The GPUs a `trl vllm-serve` command takes: the first ``size`` it sees; None when unknown."""
    if size is None:
        return None
    env = server.environment
    server_visible = _ids(env.get("CUDA_VISIBLE_DEVICES")) if "CUDA_VISIBLE_DEVICES" in env else [str(i) for i in range(size)]
    return server_visible[:size] if server_visible is not None else None
