"""Parallelism rules (DS410-DS416): pipeline with ZeRO, Megatron's parallel grid, sequence
parallelism and the generation batch of on-policy trainers.

Megatron launches come in three flavours, told apart by the consumer and the flags
(`--tensor-model-parallel-size` and `--tensor_model_parallel_size` are one key here):
Megatron-SWIFT (`megatron sft|pt|rlhf`, ms-swift 4.x), Megatron-DeepSpeed (`deepspeed
pretrain_gpt.py --deepspeed --deepspeed_config ds.json ...`) and Megatron-LM (`torchrun
pretrain_gpt.py ...`).
"""

from __future__ import annotations

import re

from dslint.diagnostics import Edit, Finding, Fix, Related, Severity
from dslint.documents.model import Mapping, Scalar
from dslint.documents.edits import replace_value, remove_json_entry
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.launch.args import Value, as_int, complete, flag, integer, remove_arg, where, written

MEGATRON_FLAGS = ("tensor_model_parallel_size", "pipeline_model_parallel_size", "micro_batch_size", "global_batch_size", "num_layers")
HF_LIKE = ("hf", "swift", "llamafactory")


def megatron_flavor(plan) -> str | None:
    """"swift" (Megatron-SWIFT), "megatron-deepspeed", "megatron-lm", or None."""
    if plan.consumer == "megatron":
        return "swift"
    if plan.launcher not in ("deepspeed", "torchrun", "python"):
        return None
    if not any(name in plan.args for name in MEGATRON_FLAGS):
        return None
    if plan.consumer == "deepspeed" or "deepspeed" in plan.args:
        return "megatron-deepspeed"
    program = getattr(getattr(plan.command, "program", None), "value", None) or ""
    if re.search(r"(?:^|/)(?:pretrain|finetune)[\w]*\.py$", program):
        return "megatron-lm"
    return None


def _assumed(plan) -> Severity | None:
    """A warning instead of an error when the world size is the launcher's default, not written."""
    world = plan.world_size
    return Severity.WARNING if world is not None and world.default else None


def _world_related(plan) -> Related:
    world = plan.world_size
    return Related(f"world size {world.value}: {world.origin}", world.span)


def _known_world(plan) -> int | None:
    world = plan.world_size
    if world is None or not isinstance(world.value, int) or world.value < 1:
        return None
    return world.value


class Grid:
    """Megatron's parallel sizes for a launch, with the consumer's defaults."""

    def __init__(self, plan, flavor: str):
        self.flavor = flavor
        default_note = "Megatron-SWIFT's default" if flavor == "swift" else "Megatron's default"
        self.tp = integer(plan, "tensor_model_parallel_size", default=1, note=default_note)
        self.pp = integer(plan, "pipeline_model_parallel_size", default=1, note=default_note)
        # --context-parallel-size is Megatron-core's flag (Megatron-LM and the frameworks built on
        # it); Microsoft's Megatron-DeepSpeed splits sequences with --ds-sequence-parallel-size
        # instead. Whichever the launch passes divides the world, whatever the program was taken for.
        if flavor == "megatron-deepspeed" and "context_parallel_size" not in plan.args:
            self.cp = integer(plan, "ds_sequence_parallel_size", default=1, note=default_note)
            self.cp_name = "sequence parallel size (--ds-sequence-parallel-size)"
        else:
            self.cp = integer(plan, "context_parallel_size", default=1, note=default_note)
            self.cp_name = "context_parallel_size"
        self.ep = integer(plan, "expert_model_parallel_size", default=1, note=default_note)
        etp_default = 1 if flavor == "swift" else self.tp.value
        self.etp = integer(plan, "expert_tensor_parallel_size", default=etp_default, note=default_note if flavor == "swift" else "defaults to the tensor parallel size")
        if flavor == "swift":
            self.mbs = integer(plan, "micro_batch_size", default=1, note="Megatron-SWIFT's default")
            self.gbs = integer(plan, "global_batch_size", default=16, note="Megatron-SWIFT's default")
        else:
            self.mbs = integer(plan, "micro_batch_size")
            self.gbs = integer(plan, "global_batch_size")

    def known(self, *values: Value) -> bool:
        return all(isinstance(v.value, int) and v.value >= 1 for v in values)

    @property
    def model_size(self) -> int:
        return self.tp.value * self.pp.value * self.cp.value


# ---- pipeline + ZeRO ----------------------------------------------------------------------


def pipeline_evidence(plan) -> tuple[str, object] | None:
    """(what shows a DeepSpeed pipeline engine, span) or None."""
    flavor = megatron_flavor(plan)
    pp = integer(plan, "pipeline_model_parallel_size")
    disabled = plan.arg("no_pipeline_parallel") is not None
    if flavor == "megatron-deepspeed" and not disabled and complete(plan):
        if isinstance(pp.value, int) and pp.value > 1:
            return f"{written(pp.arg)} without --no-pipeline-parallel at {where(pp.span)}", pp.span
        program = getattr(getattr(plan.command, "program", None), "value", None) or ""
        if program.endswith("pretrain_gpt.py") and plan.arg("deepspeed") is not None and (pp.value in (None, 1)):
            return (
                "Megatron-DeepSpeed's pretrain_gpt.py builds GPTModelPipe, a PipelineModule, whenever --deepspeed is given without "
                "--no-pipeline-parallel, even at pipeline size 1",
                program and plan.command.program.span,
            )
    if flavor == "swift" and isinstance(pp.value, int) and pp.value > 1:
        return f"{written(pp.arg)} at {where(pp.span)}", pp.span
    config = plan.deepspeed.config if plan.deepspeed is not None else None
    if config is not None and plan.consumer not in HF_LIKE + ("accelerate",):
        entry = config.entry("pipeline")
        if entry is not None and isinstance(entry.value, Mapping):
            return f"the DeepSpeed config's \"pipeline\" section at {where(entry.key_span)}", entry.key_span
    return None


def _stage(plan):
    """(stage, node in the DeepSpeed config or None, --zero-stage Arg or None)."""
    config = plan.deepspeed.config if plan.deepspeed is not None else None
    arg = plan.arg("zero_stage")
    if config is not None:
        stage = ds.zero_stage(config)
        if stage is ds.UNKNOWN:
            return None, None, arg
        zero = config.get("zero_optimization")
        node = zero.get("stage") if isinstance(zero, Mapping) else None
        return stage, node, arg
    if arg is not None:
        return as_int(arg.value), None, arg
    return None, None, None


def _real(span) -> bool:
    return span is not None and not span.virtual


@rule("DS410", "zero-with-pipeline", severity="error", target="launch", fixable=True)
def zero_with_pipeline(plan, context):
    """ZeRO stage 2 or 3 with DeepSpeed pipeline parallelism.

    ## What it checks
    A launch that runs DeepSpeed's `PipelineEngine` — Megatron-DeepSpeed with
    `--pipeline-model-parallel-size N>1` and no `--no-pipeline-parallel` (its `pretrain_gpt.py`
    builds `GPTModelPipe`, a `PipelineModule`, whenever `--deepspeed` is given without
    `--no-pipeline-parallel`, at any pipeline size), Megatron-SWIFT with
    `--pipeline_model_parallel_size N>1`, or a DeepSpeed config with a `pipeline` section used
    by plain DeepSpeed — with ZeRO stage 2 or 3, from the DeepSpeed config or, when the config
    cannot be read, from Megatron-DeepSpeed's `--zero-stage` flag.

    ## Why it matters
    `PipelineEngine.__init__` asserts `ZeRO-2 and ZeRO-3 are incompatible with pipeline
    parallelism` (deepspeed 0.19.8 runtime/pipe/engine.py:76-77; deepspeedai/DeepSpeed#3589,
    deepspeedai/Megatron-DeepSpeed#474).

    ## Example
    ```sh
    deepspeed pretrain_gpt.py --pipeline-model-parallel-size 2 --deepspeed --deepspeed_config ds.json --zero-stage 2
    ```
    Use instead: ZeRO stage 1, or `--no-pipeline-parallel` with `--pipeline-model-parallel-size 1`.

    ## Fix safety
    Unsafe: stage 1 shards only the optimizer states, so the run needs more memory.
    """
    evidence = pipeline_evidence(plan)
    if evidence is None:
        return
    stage, node, arg = _stage(plan)
    if not isinstance(stage, int) or stage < 2:
        return
    what, evidence_span = evidence
    edits = []
    if node is not None and _real(node.span):
        edits.append(replace_value(node, 1))
    if arg is not None and arg.span is not None and arg.span.text == str(arg.value) and (node is None or as_int(arg.value) == stage):
        edits.append(Edit.replace(arg.span, "1"))  # a literal: a $VARIABLE may also feed the JSON written at run time
    if node is not None and _real(node.span):
        span, source = node.span, f"zero_optimization.stage {stage}"
    elif arg is not None and arg.span is not None and node is None:
        span, source = arg.span, written(arg)
    else:
        span, source = plan.deepspeed.span, f"ZeRO stage {stage} in {plan.deepspeed.raw}"
    yield Finding(
        span,
        f"{source} with pipeline parallelism",
        related=[Related(what, evidence_span if _real(evidence_span) else None)],
        fix=Fix.unsafe("Use ZeRO stage 1", *edits) if edits else None,
        note="DeepSpeed's PipelineEngine asserts 'ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism' "
        "(runtime/pipe/engine.py:76-77)",
        help=None if edits else "use ZeRO stage 1",
    )


@rule("DS411", "pipeline-overlap-comm", severity="warning", target="launch", fixable=True)
def pipeline_overlap_comm(plan, context):
    """`overlap_comm: true` with pipeline parallelism: DeepSpeed turns it off.

    ## What it checks
    ZeRO stage 1 with an explicit `zero_optimization.overlap_comm: true` in a launch that runs
    DeepSpeed's pipeline engine (see `zero-with-pipeline` for how that is recognised).

    ## Why it matters
    DeepSpeed logs `Pipeline parallelism does not support overlapped communication, will be
    disabled.` and sets it to false (deepspeed 0.19.8 runtime/engine.py:2663-2666): the setting
    you tuned does nothing, and the extra reduce buffer you budgeted for is not used.

    ## Example
    ```json
    {"zero_optimization": {"stage": 1, "overlap_comm": true}, "pipeline": {"activation_checkpoint_interval": 1}}
    ```
    Use instead: `"overlap_comm": false`.

    ## Fix safety
    Safe: DeepSpeed already runs with false.
    """
    evidence = pipeline_evidence(plan)
    if evidence is None:
        return
    stage, _node, _arg = _stage(plan)
    config = plan.deepspeed.config if plan.deepspeed is not None else None
    if stage != 1 or config is None:
        return
    zero = config.get("zero_optimization")
    if not isinstance(zero, Mapping):
        return
    overlap = zero.get("overlap_comm")
    if overlap is None or ds.is_auto(overlap):
        return
    try:
        on = ds.lax_bool(ds.raw(overlap))
    except ds.Invalid:
        return
    if not on or not _real(overlap.span):
        return
    what, span = evidence
    yield Finding(
        overlap.span,
        "overlap_comm with pipeline parallelism is turned off",
        note="DeepSpeed logs 'Pipeline parallelism does not support overlapped communication, will be disabled.' and runs without "
        "it (runtime/engine.py:2663-2666)",
        related=[Related(what, span if _real(span) else None)],
        fix=Fix.safe("Set overlap_comm to false", replace_value(overlap, False)),
    )


# ---- Megatron's grid ----------------------------------------------------------------------


@rule("DS412", "megatron-world-size", severity="error", target="launch")
def megatron_world_size(plan, context):
    """The world size is not a multiple of Megatron's model-parallel size.

    ## What it checks
    For Megatron-SWIFT (ms-swift 4.x, `megatron sft|pt|rlhf`), Megatron-DeepSpeed and Megatron-LM
    launches whose world size is known:
    - world size divisible by tensor × pipeline × context parallel size (Megatron-DeepSpeed:
      tensor × pipeline × `--ds-sequence-parallel-size`);
    - with expert parallelism, world size divisible by expert-tensor × expert × pipeline
      parallel size (Megatron-Core's expert grid; Megatron-SWIFT's expert-tensor default is 1,
      Megatron-LM's is the tensor size).

    ## Why it matters
    Megatron-Core's `initialize_model_parallel` raises `RuntimeError: world_size (W) is not
    divisible by tensor_model_parallel_size (T) x pipeline_model_parallel_size (P) x
    context_parallel_size (C)` (and the same for the expert grid); Megatron-DeepSpeed asserts
    `world size (W) is not divisible by tensor parallel size (T) times pipeline parallel size
    (P) times seqence parallel size (S)` (megatron/arguments.py validate_args).

    ## Example
    ```sh
    NPROC_PER_NODE=6 megatron sft --model Qwen/Qwen3-8B --tensor_model_parallel_size 4
    ```
    Use instead: `NPROC_PER_NODE=8`, or `--tensor_model_parallel_size 2`.
    """
    flavor = megatron_flavor(plan)
    world = _known_world(plan)
    if flavor is None or world is None:
        return
    grid = Grid(plan, flavor)
    if not grid.known(grid.tp, grid.pp, grid.cp):
        return
    if not complete(plan) and not all(v.given for v in (grid.tp, grid.pp, grid.cp)):
        return  # a hidden flag may set what the default stands for
    if flavor == "megatron-deepspeed" and (grid.tp.value > world or grid.pp.value > world // max(grid.tp.value, 1)):
        return  # Megatron-DeepSpeed clamps the sizes to the world first
    parts = [v for v in (grid.tp, grid.pp, grid.cp) if v.given]
    if world % grid.model_size:
        anchor = max(parts, key=lambda v: v.value).span if parts else plan.span
        if flavor == "megatron-deepspeed":
            quoted = (f"'world size ({world}) is not divisible by tensor parallel size ({grid.tp.value}) times pipeline parallel size "
                      f"({grid.pp.value}) times seqence parallel size ({grid.cp.value})'")
        else:
            quoted = (f"'world_size ({world}) is not divisible by tensor_model_parallel_size ({grid.tp.value}) x "
                      f"pipeline_model_parallel_size ({grid.pp.value}) x context_parallel_size ({grid.cp.value})'")
        yield Finding(
            anchor or plan.span,
            f"world size {world} is not a multiple of tensor {grid.tp.value} × pipeline {grid.pp.value} × "
            f"{'sequence' if flavor == 'megatron-deepspeed' else 'context'} {grid.cp.value} parallel = {grid.model_size}",
            note=f"Megatron stops with {quoted}",
            related=[_world_related(plan)] + [v.related(n) for v, n in ((grid.tp, "tensor parallel"), (grid.pp, "pipeline parallel"), (grid.cp, grid.cp_name)) if v.given],
            severity=_assumed(plan),
        )
        return
    if grid.known(grid.ep, grid.etp) and grid.ep.value > 1:
        expert = grid.etp.value * grid.ep.value * grid.pp.value
        if world % expert:
            yield Finding(
                grid.ep.span or plan.span,
                f"world size {world} is not a multiple of expert-tensor {grid.etp.value} × expert {grid.ep.value} × pipeline {grid.pp.value} "
                f"parallel = {expert}",
                note=f"Megatron-Core's initialize_model_parallel stops with 'world_size ({world}) is not divisible by "
                f"expert_tensor_model_pipeline_parallel size ({expert})'",
                related=[_world_related(plan), grid.etp.related("expert_tensor_parallel_size")],
                severity=_assumed(plan),
            )


@rule("DS413", "megatron-global-batch", severity="error", target="launch")
def megatron_global_batch(plan, context):
    """Megatron's global batch is not a multiple of micro batch × data-parallel size.

    ## What it checks
    Data-parallel size = world size / (tensor × pipeline × context parallel); the global batch
    size must be a positive multiple of micro batch × data-parallel size. Megatron-SWIFT's
    defaults apply when the flags are absent (`micro_batch_size` 1, `global_batch_size` 16,
    swift/megatron/arguments/megatron_args.py:482-483); Megatron-DeepSpeed and Megatron-LM
    derive the global batch when it is not given, so only an explicit one is judged.

    ## Why it matters
    Megatron-SWIFT raises `ValueError: global batch size (G) is not divisible by micro batch size
    (m) times data parallel size (d).` or `global_batch_size must be >= data_parallel_size *
    micro_batch_size` (megatron_args.py:943-959); Megatron's microbatch calculator asserts the
    same (`global batch size (G) is not divisible by micro batch size (m) times data parallel
    size (d)`).

    ## Example
    ```sh
    NPROC_PER_NODE=8 megatron sft --model Qwen/Qwen3-8B --tensor_model_parallel_size 2 --micro_batch_size 2 --global_batch_size 12
    ```
    Data-parallel size 4, so the global batch must be a multiple of 2 × 4 = 8. Use instead:
    `--global_batch_size 16`.
    """
    flavor = megatron_flavor(plan)
    world = _known_world(plan)
    if flavor is None or world is None:
        return
    grid = Grid(plan, flavor)
    if not grid.known(grid.tp, grid.pp, grid.cp, grid.mbs, grid.gbs) or world % grid.model_size:
        return
    if not complete(plan) and not all(v.given for v in (grid.tp, grid.pp, grid.cp, grid.mbs, grid.gbs)):
        return
    if flavor != "swift" and not grid.gbs.given:
        return
    dp = world // grid.model_size
    unit = grid.mbs.value * dp
    if grid.gbs.value % unit == 0:
        return
    anchor = grid.gbs.span or grid.mbs.span or plan.span
    too_small = grid.gbs.value < unit
    yield Finding(
        anchor,
        f"global batch {grid.gbs.value} is not a multiple of micro batch {grid.mbs.value} × data-parallel size {dp} = {unit}"
        f"{' (it is smaller)' if too_small else ''}",
        note=f"Megatron stops with 'global batch size ({grid.gbs.value}) is not divisible by micro batch size ({grid.mbs.value}) "
        f"times data parallel size ({dp})'",
        help=f"use a multiple of {unit}",
        related=[grid.gbs.related("global_batch_size"), grid.mbs.related("micro_batch_size"),
                 Related(f"data-parallel size {dp} = world {world} / (tensor {grid.tp.value} × pipeline {grid.pp.value} × {grid.cp_name.split(' (')[0]} {grid.cp.value})"),
                 _world_related(plan)],
        severity=_assumed(plan),
    )


@rule("DS414", "sequence-parallel-without-tp", severity="info", target="launch", fixable=True)
def sequence_parallel_without_tp(plan, context):
    """Megatron's `--sequence_parallel` without tensor parallelism is switched off silently.

    ## What it checks
    `--sequence_parallel` (true) while the tensor-parallel size is 1 in a Megatron-SWIFT,
    Megatron-DeepSpeed or Megatron-LM launch.

    ## Why it matters
    Megatron's sequence parallelism splits the tensor-parallel region; without tensor
    parallelism there is nothing to split, and the flag is set back to False without an error
    (Megatron-SWIFT megatron_args.py:891-892; Megatron-DeepSpeed megatron/arguments.py "disable
    sequence parallelism when tp=1"). It costs nothing, but it saves nothing either: reported as
    information, since the flag suggests a memory saving the run does not get. For long
    sequences use context parallelism (`--context_parallel_size`).

    ## Example
    `megatron sft --model Qwen/Qwen3-8B --sequence_parallel true`
    Use instead: `--tensor_model_parallel_size 2 --sequence_parallel true`.

    ## Fix safety
    Safe: removes the flag, which has no effect.
    """
    flavor = megatron_flavor(plan)
    if flavor is None:
        return
    sp = flag(plan, "sequence_parallel")
    if sp.value is not True:
        return
    grid = Grid(plan, flavor)
    if not isinstance(grid.tp.value, int) or grid.tp.value > 1:
        return
    edit = remove_arg(sp.arg)
    yield Finding(
        sp.arg.name_span or sp.span or plan.span,
        f"{written(sp.arg)} with tensor parallel size {grid.tp.value} does nothing",
        note="Megatron turns sequence parallelism off when there is no tensor parallelism, without an error",
        help="use --context_parallel_size for long sequences",
        related=[grid.tp.related("tensor_model_parallel_size")],
        fix=Fix.safe("Remove the flag", edit) if edit is not None else None,
    )


# ---- DeepSpeed sequence parallelism ------------------------------------------------------------


@rule("DS415", "deepspeed-sequence-parallel", severity="error", target="deepspeed", fixable=True, consumers=("hf", "swift", "llamafactory"))
def deepspeed_sequence_parallel(use, context):
    """DeepSpeed's `sequence_parallel_size` against the world size and HF's batch arithmetic.

    ## What it checks
    A DeepSpeed config with `sequence_parallel_size` S > 1 (Ulysses/ALST):
    - the world size W is not a multiple of S. DeepSpeed divides W by S when it reads the
      config and carries on with a fractional data-parallel size (deepspeed 0.19.8
      runtime/config.py:468-469, no error); the batch check then fails or passes against a
      fraction, and the sequence-parallel groups refuse W: `world_size (W) is not divisible by
      sequence_parallel_size S` (runtime/sequence_parallel/parallel_state_sp.py:37-39).
    - under HF Trainer, ms-swift or LLaMA-Factory, `train_batch_size: "auto"`: transformers
      fills it with all W processes × batch × accumulation (integrations/deepspeed.py:143),
      ignoring S, while DeepSpeed checks it against W / S: `AssertionError: Check batch related
      parameters. train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step *
      world_size 64 != 8 * 1 * 4.0` (research deepspeed_rules.md §5.2; accelerate corrects this
      only for `parallelism_config` with `sp_backend="deepspeed"`). An explicit value is judged
      by DS101/DS301.

    ## Why it matters
    The `"auto"` case stops the job at start-up, after the queue wait: under ZeRO-3 as
    `from_pretrained` begins (`zero.Init` builds a `DeepSpeedConfig`,
    runtime/zero/partition_parameters.py), otherwise when the engine is built after the model
    has loaded. The assertion's numbers (a `train_batch_size` the config never wrote, a world
    size of `4.0`) do not point at S. A world size that is not a multiple of S fails at
    start-up too, at the batch check or when the sequence-parallel groups are built.

    ## Example
    ```json
    {"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto", "sequence_parallel_size": 2}
    ```
    Use instead: leave `train_batch_size` out; DeepSpeed derives it from the micro batch,
    the accumulation and W / S.

    ## Fix safety
    Safe for the `"auto"` case: removing `train_batch_size` lets DeepSpeed derive the value it
    checks against.
    """
    config = use.config
    node = config.get("sequence_parallel_size")
    if not isinstance(node, Scalar) or isinstance(node.value, bool):
        return
    sp = as_int(node.value)
    if sp is None or sp <= 1:
        return
    plan = use.launch
    world = plan.world_size if plan is not None else use.world_size
    value = getattr(world, "value", None) if world is not None else None
    if isinstance(value, int) and value >= 1 and value % sp:
        related = [Related(f"world size {value} from {getattr(world, 'origin', '')}", getattr(world, "span", None))]
        yield Finding(
            node.span,
            f"sequence_parallel_size {sp} does not divide the world size {value}",
            note=f"DeepSpeed computes a data-parallel world of {value / sp:.3g} without an error (runtime/config.py:468-469), and its "
            f"sequence-parallel groups stop with 'world_size ({value}) is not divisible by sequence_parallel_size {sp}'",
            related=related,
        )
        return
    if plan is None or use.consumer not in HF_LIKE:
        return
    if any(k.startswith("parallelism_config") for k in plan.launcher_args):
        return
    entry = config.entry("train_batch_size")
    if entry is None or not ds.is_auto(entry.value):
        return
    shown = ""
    if isinstance(value, int):
        shown = f" ({value} processes, not {value / sp:.3g})"
    yield Finding(
        entry.key_span,
        f"train_batch_size \"auto\" with sequence_parallel_size {sp}",
        note=f"transformers fills it with every process{shown} × batch × accumulation, but DeepSpeed divides the world size by "
        "sequence_parallel_size and asserts 'train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size'",
        related=[Related(f"sequence_parallel_size {sp}", node.span)],
        fix=Fix.safe("Remove train_batch_size so DeepSpeed derives it", remove_json_entry(config, entry)),
    )


# ---- on-policy generation batch -----------------------------------------------------------------


def _on_policy(plan, trl_trainer):
    """(trainer, label, default num_generations, TRL Trainer or None) of a GRPO-style launch."""
    rlhf = plan.arg("rlhf_type")
    kind = rlhf.value.strip().lower() if rlhf is not None and isinstance(rlhf.value, str) else None
    if plan.consumer == "swift" and kind == "grpo":
        return "swift", "ms-swift GRPO", 8, None
    if plan.consumer == "megatron" and kind == "grpo":
        return "megatron", "Megatron-SWIFT GRPO", 8, None
    found = trl_trainer
    if found is None:
        return None
    return found.kind, found.label, found.default_generations, found


def _least(*severities):
    """The least severe of the given severities (None: the rule's own, an error)."""
    found = [s for s in severities if s is not None]
    return min(found) if found else None


@rule("DS416", "generation-batch", severity="error", target="launch", facts=("trl_trainer",))
def generation_batch(plan, context, *, trl_trainer):
    """GRPO-style trainers: the generation batch must hold whole groups of `num_generations`.

    ## What it checks
    On-policy trainers sample `num_generations` completions per prompt and compare them within
    the group, so the batch of one generation round must be a multiple of `num_generations`:
    - TRL `GRPOTrainer`/`RLOOTrainer`, by TRL release (dslint/frameworks/grpo.py): none in 0.14;
      processes × per-device batch in 0.15-0.16 (grpo_trainer.py:341-350, 0.15.0); times the
      gradient accumulation in 0.17 (grpo_trainer.py:592-608, 0.17.0); from 0.18 the generation
      batch = processes × per-device batch × `steps_per_generation` (default: the gradient
      accumulation), or `generation_batch_size` when given, which must itself be a multiple of
      processes × per-device batch (grpo_config.py:507-547, 0.18.0; 1.16: grpo_config.py:1096-1141).
      RLOO takes `num_generations` from 0.22.0. With evaluation on, the eval batch (processes ×
      `per_device_eval_batch_size`, default 8) must be a multiple too (from 0.15). TRL's
      defaults: batch 8, accumulation 1, `num_generations` 8 (RLOO 2). The TRL versions are the
      candidates `dslint.evidence.versions` allows: an error where every one fails, info naming the
      releases otherwise. A program dslint could not read is assumed to run TRL's trainer only
      when named after it and given TRL's on-policy arguments: a warning.
    - ms-swift GRPO (`swift rlhf --rlhf_type grpo`, swift/rlhf_trainers/args_mixin.py
      `_init_generation_batch_params`): generation batch = processes × per-device batch ×
      `steps_per_generation` (default: the gradient accumulation), or `generation_batch_size`;
      ms-swift's defaults: batch 1, accumulation 1, `num_generations` 8.
    - Megatron-SWIFT GRPO (`megatron rlhf --rlhf_type grpo`): generation batch =
      `global_batch_size` × `steps_per_generation` (default 1), or `generation_batch_size`
      (swift/megatron/arguments/megatron_args.py:261-295).
    - `num_generations` must be at least 2 (TRL: `GRPO requires at least 2 generations per
      prompt to calculate the advantages`; ms-swift: `num_generations must be greater than 1
      for GRPO` unless a teacher model is set, rlhf_args.py:408-409).

    ## Why it matters
    `ValueError: generation_batch_size (12) must be divisible by num_generations (8).` at
    start-up, once the model and the rollout engine are loaded.

    ## Example
    ```sh
    NPROC_PER_NODE=6 swift rlhf --rlhf_type grpo --model Qwen/Qwen2.5-7B-Instruct --per_device_train_batch_size 2 --num_generations 8
    ```
    Generation batch 6 × 2 × 1 = 12. Use instead: `--num_generations 4` (or 6, 12), or 8 processes.
    """
    found = _on_policy(plan, trl_trainer)
    if found is None:
        return
    trainer, label, default_n, trl = found
    if not complete(plan):
        return  # hidden arguments may set the batch, the accumulation or the group size
    if trl is not None:
        from dslint.frameworks.grpo import config_file_unread

        if config_file_unread(plan):
            return  # TrlParser's --config YAML may set them
    n = integer(plan, "num_generations", default=default_n, note=f"{label}'s default")
    if not isinstance(n.value, int):
        return
    if trl is not None:
        yield from _trl_generation_batch(plan, context, trl, n)
        return
    if n.value < 2:
        teacher = plan.arg("teacher_model") is not None or plan.arg("teacher_model_server") is not None
        if n.value == 1 and not teacher:
            yield Finding(
                n.span or plan.span,
                f"num_generations {n.value}: a group of fewer than 2 completions has no advantage to compute",
                note=f"{label} stops with 'num_generations must be greater than 1 for GRPO'",
            )
        return
    generation = integer(plan, "generation_batch_size")
    steps = integer(plan, "steps_per_generation")
    related = [n.related("num_generations")]
    if isinstance(generation.value, int):
        size, how = generation.value, f"generation_batch_size {generation.value}"
        related.append(generation.related("generation_batch_size"))
    elif trainer == "megatron":
        gbs = integer(plan, "global_batch_size", default=16, note="Megatron-SWIFT's default")
        spg = steps.value if isinstance(steps.value, int) else 1
        if not isinstance(gbs.value, int):
            return
        size, how = gbs.value * spg, f"global_batch_size {gbs.value} × steps_per_generation {spg}"
        related.append(gbs.related("global_batch_size"))
    else:
        world = _known_world(plan)
        if world is None:
            return
        bs = integer(plan, "per_device_train_batch_size", default=1, note=f"{label}'s default")
        gas = integer(plan, "gradient_accumulation_steps", default=1, note=f"{label}'s default")
        spg = steps if isinstance(steps.value, int) else gas
        if not isinstance(bs.value, int) or not isinstance(spg.value, int):
            return
        size = world * bs.value * spg.value
        how = f"{world} processes × per-device batch {bs.value} × {'steps_per_generation' if spg is steps else 'gradient accumulation'} {spg.value}"
        related += [_world_related(plan), bs.related("per_device_train_batch_size"), spg.related("steps_per_generation" if spg is steps else "gradient_accumulation_steps")]
    if size % n.value == 0:
        return
    valid = [d for d in range(2, size + 1) if size % d == 0][:8]
    yield Finding(
        n.span or plan.span,
        f"the generation batch {size} is not a multiple of num_generations {n.value}",
        note=f"{how} = {size}; {label} stops with 'generation_batch_size ({size}) must be "
        f"{'evenly ' if trainer == 'swift' else ''}divisible by num_generations ({n.value})'",
        help=f"num_generations could be {', '.join(map(str, valid))}" if valid else None,
        related=related,
        severity=_assumed(plan) if trainer != "megatron" and not isinstance(generation.value, int) else None,
    )


def _trl_generation_batch(plan, context, trl, n):
    """DS416 for TRL's GRPOTrainer/RLOOTrainer, judged release by release (dslint.frameworks.grpo)."""
    from dslint.frameworks.grpo import eval_checked, generation as generation_of, judging
    from dslint.evidence.versions import compare

    label = trl.label
    versions, assumed, noted = judging(plan, context.settings, trl)

    if n.value < 2:
        verdict = versions.judge(lambda v: generation_of(trl.kind, v, 1, 1, 1, None, None, n.value).applies)
        if verdict.anywhere:
            # 0.15-0.16 refuse it as no divisor of the batch (their candidates start at 2); 0.17 on say why.
            quoted = f"{'GRPO' if trl.kind == 'trl-grpo' else 'RLOO'} requires at least 2 generations per prompt to calculate the advantages" \
                if compare(verdict.failing[-1], "0.17.0") >= 0 else generation_of(trl.kind, verdict.failing[-1], 1, 1, 1, None, None, n.value).quoted
            yield Finding(
                n.span or plan.span,
                f"num_generations {n.value}: a group of fewer than 2 completions has no advantage to compute",
                note=noted(f"{label} stops with '{quoted}'", verdict),
                related=[Related(versions.describe())],
                severity=_least(assumed, verdict.severity()),
            )
        return
    world = _known_world(plan)
    if world is None:
        return
    bs = integer(plan, "per_device_train_batch_size", default=8, note=f"{label}'s default")
    gas = integer(plan, "gradient_accumulation_steps", default=1, note=f"{label}'s default")
    steps = integer(plan, "steps_per_generation")
    given = integer(plan, "generation_batch_size")
    if not all(isinstance(v.value, int) and v.value >= 1 for v in (bs, gas)):
        return
    if steps.given and not isinstance(steps.value, int) or given.given and not isinstance(given.value, int):
        return

    def at(version):
        return generation_of(trl.kind, version, world, bs.value, gas.value, steps.value, given.value, n.value)

    def fails(version):
        found = at(version)
        if not found.applies:
            return found.applies
        return found.size % n.value != 0

    verdict = versions.judge(fails)
    related = [n.related("num_generations"), _world_related(plan), bs.related("per_device_train_batch_size")]
    if given.given:
        related.append(given.related("generation_batch_size"))
    elif steps.given:
        related.append(steps.related("steps_per_generation"))
    else:
        related.append(gas.related("gradient_accumulation_steps"))
    related.append(Related(versions.describe()))
    if verdict.anywhere:
        shown = at(verdict.failing[-1])
        valid = [d for d in range(2, shown.size + 1) if shown.size % d == 0][:8]
        yield Finding(
            n.span or plan.span,
            f"the generation batch {shown.size} is not a multiple of num_generations {n.value}",
            note=noted(f"{shown.how} = {shown.size}; {label} stops with '{shown.quoted}'", verdict),
            help=f"num_generations could be {', '.join(map(str, valid))}" if valid else None,
            related=related,
            severity=_least(assumed, _assumed(plan), verdict.severity()),
        )
    if given.given and isinstance(given.value, int):
        step = world * bs.value
        whole = versions.judge(lambda v: at(v).applies and given.value % step != 0)
        if whole.anywhere:
            yield Finding(
                given.span or plan.span,
                f"generation_batch_size {given.value} is not a multiple of the global batch {step}",
                note=noted(f"{world} processes × per-device batch {bs.value} = {step}; {label} stops with 'generation_batch_size "
                           f"({given.value}) must be divisible by the global batch size ({step})'", whole),
                related=[given.related("generation_batch_size"), _world_related(plan), bs.related("per_device_train_batch_size")],
                severity=_least(assumed, _assumed(plan), whole.severity()),
            )
    strategy = plan.arg("eval_strategy", "evaluation_strategy")
    if strategy is None or not isinstance(strategy.value, str) or strategy.value.strip().lower() == "no":
        return
    eval_bs = integer(plan, "per_device_eval_batch_size", default=8, note=f"{label}'s default")
    eval_n = integer(plan, "num_generations_eval")
    groups = eval_n if isinstance(eval_n.value, int) else n
    if not isinstance(eval_bs.value, int):
        return
    size = world * eval_bs.value
    checked = versions.judge(lambda v: eval_checked(trl.kind, v, eval_n.given) and size % groups.value != 0)
    if checked.anywhere:
        yield Finding(
            eval_bs.span or strategy.span or plan.span,
            f"the eval batch {size} is not a multiple of num_generations {groups.value}",
            note=noted(f"{world} processes × per_device_eval_batch_size {eval_bs.value} = {size}; with {written(strategy)} {label} "
                       "stops at start-up", checked),
            related=[groups.related("num_generations"), eval_bs.related("per_device_eval_batch_size"), _world_related(plan)],
            severity=_least(assumed, _assumed(plan), checked.severity()),
        )
