"""Rules that need the whole launch: the script, its environment, and the files it names."""

from __future__ import annotations

import os
import re

from dslint.diagnostics import Finding, Fix, Related, Severity
from dslint.documents.model import SCRIPT, Mapping, Scalar
from dslint.documents.edits import replace_value
from dslint.launch.plan import HF_LIKE
from dslint.launch.presets import SWIFT_PRESETS
from dslint.rule import rule

# transformers TrainingArguments defaults (transformers/training_args.py, 5.23) for the fields
# HfTrainerDeepSpeedConfig.trainer_config_process compares; ms-swift's own where they differ
# (ms-swift swift/trainers/arguments.py:129-131). LLaMA-Factory uses transformers' defaults.
HF_DEFAULTS = {
    "per_device_train_batch_size": 8,
    "gradient_accumulation_steps": 1,
    "learning_rate": 5e-5,
    "weight_decay": 0.0,
    "adam_beta1": 0.9,
    "adam_beta2": 0.999,
    "adam_epsilon": 1e-8,
    "max_grad_norm": 1.0,
    "fp16": False,
    "bf16": False,
}
SWIFT_DEFAULTS = {"per_device_train_batch_size": 1, "max_grad_norm": 1.0, "adam_beta1": 0.9, "adam_beta2": 0.999, "adam_epsilon": 1e-8}
INT_ARGS = ("per_device_train_batch_size", "gradient_accumulation_steps", "max_steps")
FLOAT_ARGS = ("learning_rate", "weight_decay", "adam_beta1", "adam_beta2", "adam_epsilon", "max_grad_norm")
BOOL_ARGS = ("fp16", "bf16", "fp16_full_eval", "bf16_full_eval", "auto_find_batch_size")


def _parsed(name: str, value):
    """A training argument as HfArgumentParser turns it into a dataclass field."""
    if value is None:
        return None
    if name in BOOL_ARGS:
        if value is True or value is False:
            return value
        text = str(value).strip().lower()
        if text in ("yes", "true", "t", "y", "1"):
            return True
        if text in ("no", "false", "f", "n", "0"):
            return False
        return None
    try:
        if name in INT_ARGS:
            return int(value) if not isinstance(value, bool) else None
        if name in FLOAT_ARGS:
            return float(value) if not isinstance(value, bool) else None
    except (TypeError, ValueError):
        return None
    return value


class TrainingArgs:
    """Training arguments with the consumer's defaults, each with where it came from.

    Where the launch's program was read, what it says wins as the program makes it win: a literal
    ``TrainingArguments(...)`` keyword over everything (the command line does not reach a class the
    program builds itself), an assignment or a variable over nothing (the value is not judged), and
    a project dataclass's default over the consumer's. A TRL config's defaults depend on the TRL
    version, so with one only values the launch or the program writes are compared.
    """

    def __init__(self, plan):
        from dslint.launch.consumer import program_training

        self.plan = plan
        self.defaults = dict(HF_DEFAULTS)
        self.training = program_training(plan.program)
        if plan.consumer == "swift":
            self.defaults = dict(SWIFT_DEFAULTS)
            self._swift_precision()
        elif self.training is not None and self.training.trl:
            self.defaults = {}

    def _swift_precision(self):
        # ms-swift derives fp16/bf16 from torch_dtype unless they are given (model_args.py:130-142).
        dtype = self.plan.arg("torch_dtype")
        if dtype is not None and isinstance(dtype.value, str):
            if dtype.value == "bfloat16":
                self.defaults.update(fp16=False, bf16=True)
            elif dtype.value in ("float16", "float32"):
                self.defaults.update(fp16=True, bf16=False)

    def get(self, name: str):
        """(value, Related) or (None, None) when neither given nor a known default."""
        from dslint.launch.consumer import CLASS_DEFAULT, UNREAD, ProgramValue

        said = self.training.value(name) if self.training is not None else None
        if said is UNREAD:
            return None, None
        built = self.training is not None and self.training.built and not self.training.parsed
        if isinstance(said, ProgramValue) and built:
            return self._program(name, said)
        arg = self.plan.arg(name) if said is not CLASS_DEFAULT else None
        if arg is not None:
            value = _parsed(name, arg.value)
            if value is None:
                return None, None
            return value, Related(f"{name} = {arg.value} ({arg.origin})", arg.span)
        if isinstance(said, ProgramValue):
            return self._program(name, said)
        if name in self.defaults and self.plan.unseen_arguments is None:
            how = "ms-swift's default" if self.plan.consumer == "swift" else "the transformers default"
            return self.defaults[name], Related(f"{name} = {self.defaults[name]} ({how}; not set in the launch)")
        return None, None

    def _program(self, name: str, said):
        value = _parsed(name, said.value)
        if value is None:
            return None, None
        evidence = said.evidence
        return value, Related(f"{name} = {said.value!r} ({evidence.text}, {evidence.where()})")


def _ds_value(config: Mapping, dotted: str):
    node = config
    for part in dotted.split("."):
        if not isinstance(node, Mapping):
            return None
        node = node.get(part)
    return node


@rule("DS301", "hf-config-mismatch", severity="error", target="deepspeed", fixable=True, consumers=("hf", "swift", "llamafactory"))
def hf_config_mismatch(use, context):
    """An explicit DeepSpeed value differs from the training argument HF Trainer compares it with.

    ## What it checks
    Under the HF Trainer (`--deepspeed ds.json`, ms-swift, LLaMA-Factory, axolotl),
    `HfTrainerDeepSpeedConfig.trainer_config_process` fills every `"auto"` value from the
    `TrainingArguments` and collects every *explicit* value that differs
    (transformers/integrations/deepspeed.py:136-191); training then stops with
    `ValueError: Please correct the following DeepSpeed config values that mismatch
    TrainingArguments values` (deepspeed.py:258-263). Compared pairs:
    `train_micro_batch_size_per_gpu` ↔ `per_device_train_batch_size`,
    `gradient_accumulation_steps`, `train_batch_size` ↔ world size × batch × accumulation,
    `gradient_clipping` ↔ `max_grad_norm`, `optimizer.params.lr/betas/eps/weight_decay` ↔
    `learning_rate`, `adam_beta1/2`, `adam_epsilon`, `weight_decay`,
    `scheduler.params.warmup_max_lr` ↔ `learning_rate`, `fp16.enabled` ↔ `fp16|fp16_full_eval`,
    `bf16.enabled` ↔ `bf16|bf16_full_eval`, and
    `scheduler.params.warmup_num_steps` ↔ `max(1, warmup_steps)` (`trainer_config_finalize`,
    deepspeed.py:246-256: without `--warmup_steps` an explicit `0` or `10` mismatches `1`; a
    `--warmup_steps` below 1 is a ratio of the training steps, which depend on the data set: not
    judged, a deliberate difference in the generated oracle tests), and
    `scheduler.params.total_num_steps` ↔ the Trainer's number of training steps
    (deepspeed.py:246-250): `--max_steps` when it is positive, and never a literal `0` or below
    (huggingface/transformers#29348; under plain DeepSpeed a `0` would leave WarmupDecayLR at
    `warmup_min_lr` after warmup, lr_schedules.py:831-839). The comparison
    is Python's `!=`, so the string `"8"` does not equal `8`.

    The training arguments come from the command line, the training YAML, and the launch's
    program, read statically: a literal `TrainingArguments(...)` / `SFTConfig(...)` keyword wins
    over the command line (the program builds the class itself; a flag does not reach it), and a
    project dataclass's default (`per_device_train_batch_size: int = 4` in a `TrainingArguments`
    subclass given to `HfArgumentParser`) replaces the consumer's. A field the program assigns
    (`args.learning_rate = ...`) or passes as a variable is not judged. Values nobody sets are
    compared with the consumer's defaults (transformers: batch 8, accumulation 1, clipping 1.0,
    lr 5e-5; ms-swift: batch 1, fp16/bf16 from `--torch_dtype`; a TRL config's defaults change
    between TRL versions, so none are assumed for it); values that depend on what dslint
    cannot see (the data set's length, ratios) are skipped.

    With `--auto_find_batch_size` the Trainer refuses ZeRO stage 3 (`auto_find_batch_size isn't
    supported yet with DeepSpeed Zero-3`, trainer.py:898-906), and it compares the config once
    more after accelerate added `gradient_accumulation_steps: 1` to a config without that key
    (`propagate_args_to_deepspeed`), so `--gradient_accumulation_steps 4` then mismatches; so does
    `--bf16_full_eval` (or `--fp16_full_eval`) without a `bf16` (`fp16`) section, which accelerate
    fills with `enabled: false`.

    ## Why it matters
    The error comes after the model is loaded, on every rank.

    ## Example
    `--per_device_train_batch_size 2` with
    ```json
    {"train_micro_batch_size_per_gpu": 4}
    ```
    Use instead:
    ```json
    {"train_micro_batch_size_per_gpu": "auto"}
    ```

    ## Fix safety
    Safe: `"auto"` makes the Trainer write its own value, which is the value it would insist on.
    """
    plan = use.launch
    if plan is None or use.consumer not in HF_LIKE:
        return
    config = use.config
    args = TrainingArgs(plan)
    bs, bs_rel = args.get("per_device_train_batch_size")
    gas, gas_rel = args.get("gradient_accumulation_steps")
    auto_find = _parsed("auto_find_batch_size", plan.arg("auto_find_batch_size").value) if plan.arg("auto_find_batch_size") else False
    checks = []
    if not auto_find:
        checks.append(("train_micro_batch_size_per_gpu", bs, "per_device_train_batch_size", [bs_rel]))
    checks.append(("gradient_accumulation_steps", gas, "gradient_accumulation_steps", [gas_rel]))
    world = plan.world_size.value if plan.world_size is not None else None
    if not auto_find and world is not None and bs is not None and gas is not None:
        world_rel = Related(f"world size {world} from {plan.world_size.origin}", plan.world_size.span)
        checks.append(("train_batch_size", world * bs * gas, "train_batch_size (calculated)", [world_rel, bs_rel, gas_rel]))
    clip, clip_rel = args.get("max_grad_norm")
    checks.append(("gradient_clipping", clip, "max_grad_norm", [clip_rel]))
    lr, lr_rel = args.get("learning_rate")
    checks.append(("optimizer.params.lr", lr, "learning_rate", [lr_rel]))
    beta1, beta1_rel = args.get("adam_beta1")
    beta2, beta2_rel = args.get("adam_beta2")
    if beta1 is not None and beta2 is not None:
        checks.append(("optimizer.params.betas", [beta1, beta2], "adam_beta1+adam_beta2", [beta1_rel, beta2_rel]))
    eps, eps_rel = args.get("adam_epsilon")
    checks.append(("optimizer.params.eps", eps, "adam_epsilon", [eps_rel]))
    decay, decay_rel = args.get("weight_decay")
    checks.append(("optimizer.params.weight_decay", decay, "weight_decay", [decay_rel]))
    checks.append(("scheduler.params.warmup_max_lr", lr, "learning_rate", [lr_rel]))
    warmup, warmup_rel = _warmup_steps(plan, args)
    checks.append(("scheduler.params.warmup_num_steps", warmup, "warmup_steps", [warmup_rel]))
    yield from _total_num_steps(use, args)
    for name, dsname in (("fp16", "fp16.enabled"), ("bf16", "bf16.enabled")):
        flag, flag_rel = args.get(name)
        full_eval, _ = args.get(f"{name}_full_eval")
        if flag is not None:
            checks.append((dsname, bool(flag or full_eval), f"{name}|{name}_full_eval", [flag_rel]))
    if auto_find:
        yield from _auto_find_batch_size(use, plan, gas, gas_rel, args)
    for dotted, hf_value, hf_name, related in checks:
        if hf_value is None:
            continue
        node = _ds_value(config, dotted)
        if node is None:
            continue
        ds_value = node.to_python()
        if ds_value is None or ds_value == "auto" or ds_value == hf_value:
            continue
        if dotted == "bf16.enabled" and config.get("bf16") is None and config.get("bfloat16") is not None:
            continue  # HF reads only "bf16"
        shown = repr(ds_value) if isinstance(ds_value, str) else _show(ds_value)
        string = "a string never equals a number; " if isinstance(ds_value, str) and not isinstance(hf_value, str) else ""
        yield Finding(
            node.span,
            f"ds {dotted}={shown} vs hf {hf_name}={_show(hf_value)}",
            note=f"{string}the HF Trainer stops with {_MISMATCH}",
            related=[r for r in related if r is not None] + launch_related(use),
            fix=Fix.safe(f'Set {dotted} to "auto" so the Trainer fills it in', replace_value(node, "auto")),
        )


_MISMATCH = "'Please correct the following DeepSpeed config values that mismatch TrainingArguments values'"


def _warmup_steps(plan, args):
    """HF's value for warmup_num_steps: max(1, warmup_steps) (transformers 5.23); None when it
    depends on the training steps (a ratio below 1) or the consumer sets its own default."""
    training = args.training
    if training is not None and any(training.value(n) is not None for n in ("warmup_steps", "warmup_ratio")):
        return None, None  # the program sets warmup itself
    arg = plan.arg("warmup_steps")
    if plan.arg("warmup_ratio") is not None:
        return None, None
    if arg is None:
        if plan.consumer != "hf" or (training is not None and training.trl):
            return None, None
        return 1, Related("warmup_steps = 0 (the transformers default; HF writes max(1, warmup_steps))")
    try:
        value = float(arg.value)
    except (TypeError, ValueError):
        return None, None
    if 0 < value < 1:
        return None, None
    return max(1, int(value)), Related(f"warmup_steps = {arg.value} ({arg.origin}; HF writes max(1, warmup_steps))", arg.span)


def _total_num_steps(use, args):
    """``scheduler.params.total_num_steps`` against the Trainer's num_training_steps
    (``trainer_config_finalize``, transformers integrations/deepspeed.py:246-250): ``--max_steps``
    when it is positive; a literal at or below 0 never matches, since the Trainer writes the
    number of optimizer steps it will take."""
    node = _ds_value(use.config, "scheduler.params.total_num_steps")
    if not isinstance(node, Scalar) or node.value == "auto" or isinstance(node.value, bool) \
            or not isinstance(node.value, (int, float)):
        return
    steps, steps_rel = args.get("max_steps")
    fix = Fix.safe('Set scheduler.params.total_num_steps to "auto" so the Trainer fills it in', replace_value(node, "auto"))
    if node.value <= 0:
        yield Finding(
            node.span,
            f"ds scheduler.params.total_num_steps={_show(node.value)}, not the number of training steps",
            note=f"the HF Trainer writes its number of training steps there and stops with {_MISMATCH} "
            "(0 steps would also leave the learning rate at warmup_min_lr after warmup)",
            related=launch_related(use), fix=fix,
        )
    elif steps is not None and steps > 0 and node.value != steps:
        yield Finding(
            node.span,
            f"ds scheduler.params.total_num_steps={_show(node.value)} vs hf num_training_steps (calculated)={steps}",
            note=f"the HF Trainer stops with {_MISMATCH}",
            related=[r for r in [steps_rel] if r is not None] + launch_related(use), fix=fix,
        )


def _auto_find_batch_size(use, plan, gas, gas_rel, args):
    config = use.config
    arg = plan.arg("auto_find_batch_size")
    related = [Related(arg.origin, arg.span)] + launch_related(use)
    zero = config.get("zero_optimization")
    stage = zero.get("stage") if isinstance(zero, Mapping) else None
    if isinstance(stage, Scalar) and not isinstance(stage.value, (bool, str)) and stage.value == 3:
        yield Finding(
            stage.span,
            "ZeRO stage 3 with --auto_find_batch_size",
            note="the HF Trainer stops with '`auto_find_batch_size` isn't supported yet with DeepSpeed Zero-3'",
            related=related,
        )
    if config.get("gradient_accumulation_steps") is None and gas is not None and gas != 1:
        yield Finding(
            ds_opening(config),
            f"no gradient_accumulation_steps with --auto_find_batch_size and gradient accumulation {gas}",
            note="accelerate writes 1 into the config, and the Trainer's second comparison (propagate_args_to_deepspeed) stops with "
            f"'ds gradient_accumulation_steps=1 vs hf gradient_accumulation_steps={gas}'",
            related=[r for r in [gas_rel] if r is not None] + related,
            fix=None,
        )
    for name in ("fp16", "bf16"):
        flag, _ = args.get(name)
        full_eval, full_rel = args.get(f"{name}_full_eval")
        if config.get(name) is None and not flag and full_eval:
            # accelerate's set_mixed_precision writes {"enabled": false} for the absent section
            yield Finding(
                ds_opening(config),
                f"no {name} section with --{name}_full_eval and --auto_find_batch_size",
                note=f"accelerate writes {name}.enabled false into the config, and the Trainer's second comparison stops with "
                f"'ds {name}.enabled=False vs hf {name}|{name}_full_eval=True'",
                related=[r for r in [full_rel] if r is not None] + related,
            )


def ds_opening(config: Mapping):
    from dslint.source import Span

    return Span(config.span.source, config.span.start, min(config.span.start + 1, config.span.end))


def _show(value) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(value)
    return str(value)


def launch_related(use) -> list[Related]:
    plan = use.launch
    if plan is None or use.reference is None:
        return []
    return [Related(f"used by the {plan.entry or plan.launcher} launch here", use.reference)]


# "auto" under plain DeepSpeed: deepspeed/runtime/config_utils.py:54-57 drops exact "auto" in
# strict sections (the default applies); dict.get keys keep the string (research §1.5).
_AUTO_UNDER_DEEPSPEED = {
    "train_batch_size": ("crashes at start-up: TypeError: '>' not supported between instances of 'str' and 'int'", True),
    "train_micro_batch_size_per_gpu": ("crashes at start-up: TypeError: '>' not supported between instances of 'str' and 'int'", True),
    "gradient_accumulation_steps": ("crashes at start-up: TypeError: '>' not supported between instances of 'str' and 'int'", True),
    "gradient_clipping": ("crashes at the first optimizer step: TypeError: '>' not supported between instances of 'str' and 'float'", True),
    "zero_optimization.stage": ("is dropped, so ZeRO stage 0 (ZeRO off) applies silently", False),
    "fp16.enabled": ("is dropped, so fp16 is off and training runs in fp32 silently", False),
    "bf16.enabled": ("is dropped, so bf16 is off and training runs in fp32 silently", False),
    "scheduler.params.warmup_num_steps": ("crashes: ValueError: warmup_num_steps must be a positive integer, got auto", True),
}


@rule("DS302", "auto-under-deepspeed", severity="error", target="deepspeed", consumers=("deepspeed",))
def auto_under_deepspeed(use, context):
    """A value is `"auto"` in a config that plain DeepSpeed reads: nobody fills it in.

    ## What it checks
    `"auto"` is a convention of the HF Trainer and accelerate, which replace it before
    DeepSpeed sees the config. A script that passes the config straight to DeepSpeed
    (`deepspeed train.py --deepspeed --deepspeed_config ds.json`, `deepspeed.initialize(config=...)`)
    gets the string. DeepSpeed's pydantic sections drop any value that is exactly `"auto"`
    (deepspeed/runtime/config_utils.py:54-57), so the default applies silently:
    `"stage": "auto"` is ZeRO-0 and `"enabled": "auto"` is fp32. Keys read with `dict.get` keep
    the string and crash: the batch keys at start-up (deepspeed/runtime/config.py:596),
    `gradient_clipping` at the first step, optimizer parameters at the first step
    (research: deepspeed_rules.md §1.5).

    Crashes are errors; silent changes are warnings.

    ## Why it matters
    The crashes come after the model is loaded; the silent cases train without ZeRO or in fp32
    at several times the memory and time, with nothing in the log to say why.

    ## Example
    `deepspeed train.py --deepspeed --deepspeed_config ds.json` with
    ```json
    {"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": "auto"}}
    ```
    Use instead:
    ```json
    {"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2}}
    ```
    """
    if use.consumer != "deepspeed":
        return
    from dslint.documents.model import walk

    for path, node in walk(use.config):
        if not isinstance(node, Scalar) or node.value != "auto":
            continue
        dotted = ".".join(str(p) for p in path)
        effect, crash = _AUTO_UNDER_DEEPSPEED.get(dotted, (None, False))
        if effect is None:
            if dotted.startswith("optimizer.params."):
                effect, crash = "reaches the optimizer as the string 'auto' and crashes it at construction or at the first step", True
            elif dotted.startswith(("zero_optimization.", "fp16.", "bf16.")):
                effect, crash = "is dropped, so DeepSpeed's default applies silently", False
            else:
                effect, crash = "stays the string 'auto'; DeepSpeed does not fill it in", False
        yield Finding(
            node.span,
            f'{dotted} is "auto", which DeepSpeed itself never fills',
            note=f"this launch hands the config to DeepSpeed itself: the value {effect}",
            related=launch_related(use),
            severity=None if crash else Severity.WARNING,
        )


@rule("DS303", "missing-reference", severity="warning", target="launch")
def missing_reference(plan, context):
    """A launch names a file (DeepSpeed config, training config, accelerate config) that is not there.

    ## What it checks
    `--deepspeed`, `--deepspeed_config`, a positional YAML config, `--config_file`,
    `deepspeed:` in a training YAML and `deepspeed_config_file` in an accelerate config are
    looked up relative to the naming file's folder, each folder above it up to the repository
    root, and the working directory. ms-swift preset names (`zero0` … `zero3_offload`) count as
    found. A value dslint cannot know statically (a variable from the caller) is not judged.
    axolotl opens `deepspeed:` relative to the directory it runs in (src/axolotl/utils/config/__init__.py
    `normalize_config`); its `deepspeed_configs/zero*.json` presets are files of its repository,
    which `axolotl fetch deepspeed_configs` copies there, so a missing preset is `info`.

    ## Why it matters
    DeepSpeed reports a missing config as `Expected a string path to an existing deepspeed
    config` (deepspeed/runtime/config.py:451) only after the processes started; ms-swift and
    LLaMA-Factory fail in their argument parsing.

    Two kinds of path are reported as `info`, with the assumption they rest on:

    - a default the caller can override (`--deepspeed ${DS_CONFIG:-ds.json}`, `${1:-cfg.yaml}`):
      the launch may never use it;
    - a relative path whose first folder is nowhere in this repository, given to another
      project's program (`llamafactory-cli train examples/train_lora/x.yaml`, `swift sft`,
      `python -m pkg.train`): commands copied from that project's README run from its checkout;
    - an absolute path (`/data/ckpt/ds.json`): it names the machine that runs the launch;
    - a file the launch's own script writes before the launch (`cat <<EOF > cfg.yaml`,
      `> f`, `tee f`, `cp template.json f`): it is there when the launch runs.

    ## Why it matters
    DeepSpeed reports a missing config as `Expected a string path to an existing deepspeed
    config` (deepspeed/runtime/config.py:451) only after the processes started; ms-swift and
    LLaMA-Factory fail in their argument parsing.

    ## Example
    `--deepspeed configs/ds_zero3.json` when the file is `configs/ds_z3.json`.
    Use instead: the right path, relative to where the launch runs.
    """
    for reference in plan.references:
        if reference.resolved or reference.inline or reference.raw is None or not reference.tried:
            continue
        raw = reference.raw
        if "$" in raw or "<" in raw:
            continue
        help = None
        if reference.role == "deepspeed" and plan.consumer in ("swift", "megatron") and "/" not in raw and not raw.endswith(".json"):
            import difflib

            close = difflib.get_close_matches(raw, SWIFT_PRESETS, n=1)
            help = f"ms-swift presets are {', '.join(SWIFT_PRESETS)}" + (f" (did you mean '{close[0]}'?)" if close else "")
        shown = ", ".join(reference.tried[:4]) + (" …" if len(reference.tried) > 4 else "")
        message = f"{reference.role} file '{raw}' not found"
        looked = f"looked at {shown}"
        axolotl_preset = _axolotl_preset(plan, reference)
        if axolotl_preset is not None:
            yield Finding(reference.span, message, severity=axolotl_preset,
                          note=f"{looked}; axolotl opens it relative to the directory it runs in",
                          help="deepspeed_configs/ is not installed with axolotl: `axolotl fetch deepspeed_configs` copies its "
                          "presets into the working directory" if axolotl_preset == Severity.INFO else help)
        elif reference.assumed is not None:
            yield Finding(reference.span, message, severity=Severity.INFO, help=help,
                          note=f"{looked}; assuming {reference.assumed} keeps its default '{raw}' (the caller may set it)")
        elif os.path.isabs(raw.strip()):
            yield Finding(reference.span, message, severity=Severity.INFO, help=help,
                          note="an absolute path names a file on the machine that runs the launch, which dslint does not see")
        elif (written := _written_before(plan, raw)) is not None:
            yield Finding(reference.span, message, severity=Severity.INFO, help=help,
                          note=f"{looked}; the script writes '{raw}' itself before the launch (line {written}), so it is there when it runs")
        elif _another_checkout(plan, raw, reference):
            yield Finding(reference.span, message, severity=Severity.INFO, help=help, note=(
                f"{looked}; '{raw.split('/', 1)[0]}/' is nowhere in this repository: {plan.program.program} is another "
                "project's program, and commands copied from its README run from its own checkout"))
        else:
            yield Finding(reference.span, message, note=looked, help=help)


# A command that writes a file: a redirection (`> f`, `>> f`, `cat <<EOF > f`), `tee [-a] f`,
# or the last word of `cp`/`mv`/`ln -s` (`cp template.yaml f`).
_WRITES = re.compile(r"""(?:>>?|\btee(?:\s+-a)?|\b(?:cp|mv|ln\s+-s)(?:\s+-\w+)*\s+\S+)\s*["']?([^\s"'<>|;&()]+)""")


def _written_before(plan, raw: str) -> int | None:
    """The line of the launch's script that writes the file the launch names, before the launch."""
    origin = plan.origin
    if origin is None or origin.kind != SCRIPT or plan.span is None or plan.span.source is not origin.source:
        return None
    wanted = os.path.normpath(raw.strip())
    source = origin.source
    for match in _WRITES.finditer(source.text, 0, plan.span.start):
        if os.path.normpath(match.group(1)) == wanted:
            return source.position(match.start(1))[0]
    return None


def _axolotl_preset(plan, reference) -> Severity | None:
    """For axolotl's `deepspeed:`: INFO for one of its presets (fetched into the working directory
    at run time), WARNING for another path; None for other programs."""
    program = plan.program
    if program is None or program.kind != "axolotl" or not program.established or reference.role != "deepspeed":
        return None
    from dslint.frameworks.axolotl import PRESETS

    head, _, name = reference.raw.strip().removeprefix("./").rpartition("/")
    return Severity.INFO if head == "deepspeed_configs" and name in PRESETS else Severity.WARNING


def _another_checkout(plan, raw: str, reference) -> bool:
    """A relative path under a folder this repository does not have, given to an installed program."""
    program = plan.program
    if program is None or not program.established or program.facts is not None:
        return False  # the program is a file of this repository (or unknown): its paths are this repository's
    if os.path.isabs(raw) or "/" not in raw.strip("./"):
        return False
    relative = os.path.normpath(raw.strip())
    head = relative.split(os.sep, 1)[0]
    bases = {tried[: -len(relative)] or "." for tried in map(os.path.normpath, reference.tried) if tried.endswith(relative)}
    return bool(bases) and not any(os.path.isdir(os.path.join(base, head)) for base in bases)


@rule("DS304", "processes-exceed-devices", severity="error", target="launch")
def processes_exceed_devices(plan, context):
    """More processes per node than visible devices.

    ## What it checks
    The processes the launcher starts on one node (`--nproc_per_node`, `NPROC_PER_NODE`,
    `--num_gpus`, accelerate's `num_processes` over `num_machines`) against the devices listed in
    `CUDA_VISIBLE_DEVICES` / `ASCEND_RT_VISIBLE_DEVICES` for that launch. The `deepspeed`
    launcher is not judged when `--num_gpus` or `--include` is given, because it then ignores
    the variable (see `deepspeed-ignores-visible-devices`).

    ## Why it matters
    Each rank binds device `LOCAL_RANK` (`torch.cuda.set_device(local_rank)` in transformers
    training_args.py `_setup_devices`, and in DeepSpeed's and accelerate's process setup); ranks
    beyond the device count fail with `CUDA error: invalid device ordinal`. On Ascend: "If the
    process count is larger than the number of visible devices, ranks may fail to bind devices
    ... HCCL may report errors" (ms-swift docs/source_en/BestPractices/NPU-support.md:791-793).

    ## Example
    ```sh
    CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node 4 train.py
    ```
    Use instead: `--nproc_per_node 2`, or list four devices.
    """
    procs, devices = plan.procs_per_node, plan.visible_devices
    if procs is None or procs.value is None or devices is None or devices.value is None or procs.default:
        return
    if plan.launcher == "deepspeed" and ("num_gpus" in plan.launcher_args or "include" in plan.launcher_args):
        return
    if procs.value > len(devices.value):
        yield Finding(
            procs.span or plan.span,
            f"{procs.value} processes per node but only {len(devices.value)} visible device(s)",
            note=f"ranks {len(devices.value)}..{procs.value - 1} have no device",
            related=[Related(f"process count from {procs.origin}", procs.span), Related(f"devices from {devices.origin}", devices.span)],
        )


@rule("DS305", "deepspeed-ignores-visible-devices", severity="warning", target="launch")
def deepspeed_ignores_visible_devices(plan, context):
    """CUDA_VISIBLE_DEVICES is set for a `deepspeed` launch that ignores it.

    ## What it checks
    The `deepspeed` launcher honours `CUDA_VISIBLE_DEVICES` only on a single node with none of
    `--include`, `--exclude`, `--num_gpus` or `--num_nodes > 1`; otherwise it prints "ignoring
    it" and picks devices itself, starting from device 0 (deepspeed/launcher/runner.py:448-458).
    `--num_gpus`/`--num_nodes` together with `--include`/`--exclude` is an error:
    `ValueError: Cannot specify num_nodes/gpus with include/exclude` (runner.py:462-464); that
    case is reported as an error.

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


@rule("DS306", "swift-device-map", severity="error", target="launch", consumers=("swift",))
def swift_device_map(plan, context):
    """ms-swift's visible devices and NPROC_PER_NODE disagree.

    ## What it checks
    ms-swift decides between data parallelism and `device_map` model parallelism from the
    visible device count `n` and the processes on the node (swift/utils/env.py:64-75):
    `n % NPROC_PER_NODE != 0` fails with `AssertionError: n_gpu: 4, local_world_size: 3`, and
    `n // NPROC_PER_NODE >= 2` switches to `device_map` mode (also with NPROC_PER_NODE unset and
    two or more devices), which DeepSpeed, FSDP and liger kernels refuse:
    ``DeepSpeed is not compatible with `device_map`. n_gpu: 8, local_world_size: 1``
    (swift/arguments/sft_args.py:254-257). Using `device_map` on purpose (several devices
    per process, no DeepSpeed) is not reported.

    ## Why it matters
    Both cases stop ms-swift during argument parsing on every node, after the job got its GPUs.

    ## Example
    ```sh
    CUDA_VISIBLE_DEVICES=0,1,2,3 swift sft --model Qwen/Qwen2.5-7B-Instruct --deepspeed zero2
    ```
    Use instead: `NPROC_PER_NODE=4` in front of `swift sft`.
    """
    if plan.consumer != "swift" or plan.launcher not in ("swift", "torchrun", "deepspeed", "accelerate"):
        return
    devices = plan.visible_devices
    if devices is None or devices.value is None or not devices.value:
        return
    n = len(devices.value)
    if plan.launcher == "swift":
        procs = plan.procs_per_node
        if procs is None or procs.value is None:
            return
        local = procs.value
    else:
        procs = plan.procs_per_node
        if procs is None or procs.value is None:
            return
        local = procs.value
    related = [Related(f"devices from {devices.origin}", devices.span), Related(f"processes per node from {procs.origin}", procs.span)]
    if local and n % local:
        yield Finding(
            devices.span or plan.span,
            f"{n} visible devices are not divisible by {local} processes per node",
            note=f"ms-swift asserts 'n_gpu: {n}, local_world_size: {local}'",
            related=related,
        )
        return
    if local and n // local >= 2:
        users = [name for name in ("deepspeed", "fsdp", "use_liger_kernel") if plan.arg(name) is not None and plan.arg(name).value not in (False, "false", "False")]
        if users:
            arg = plan.arg(users[0])
            yield Finding(
                (procs.span if not procs.default else None) or devices.span or plan.span,
                f"{n} visible devices with {local} process(es) per node put ms-swift in device_map mode",
                note=f"--{users[0]} does not support it: ms-swift raises 'DeepSpeed is not compatible with `device_map`. "
                f"n_gpu: {n}, local_world_size: {local}'",
                help=f"set NPROC_PER_NODE={n}",
                related=related + [Related(arg.origin, arg.span)],
            )


@rule("DS307", "llamafactory-deepspeed-single-process", severity="error", target="launch", consumers=("llamafactory",))
def llamafactory_deepspeed_single_process(plan, context):
    """LLaMA-Factory with DeepSpeed on one process: it refuses to start.

    ## What it checks
    `llamafactory-cli train` starts torchrun only when `FORCE_TORCHRUN` is truthy or more than
    one device is visible (src/llamafactory/launcher.py:60-62). A config with `deepspeed:` that
    ends up in a single, non-distributed process stops with
    ``ValueError: Please use `FORCE_TORCHRUN=1` to launch DeepSpeed training.``
    (src/llamafactory/hparams/parser.py:471-472).

    ## Why it matters
    The run stops during argument parsing, after the job got its devices.

    ## Example
    ```sh
    CUDA_VISIBLE_DEVICES=0 llamafactory-cli train examples/train_lora/qwen3_lora_sft_ds3.yaml
    ```
    Use instead: `FORCE_TORCHRUN=1 CUDA_VISIBLE_DEVICES=0 llamafactory-cli train ...`.
    """
    if plan.launcher != "llamafactory" or plan.deepspeed is None or plan.distributed is not False:
        return
    world = plan.world_size
    yield Finding(
        plan.span,
        "LLaMA-Factory runs this launch as one non-distributed process, and refuses DeepSpeed there",
        note="LLaMA-Factory raises 'Please use `FORCE_TORCHRUN=1` to launch DeepSpeed training.'",
        related=[Related(world.origin, world.span), Related("DeepSpeed config named here", plan.deepspeed.span)],
    )


@rule("DS308", "single-process-deepspeed", severity="warning", target="launch")
def single_process_deepspeed(plan, context):
    """`python train.py --deepspeed ...` starts one process while several devices are visible.

    ## What it checks
    A plain `python` launch is one process. With a DeepSpeed config the HF Trainer initialises
    a distributed group of its own (`deepspeed.init_distributed()` from
    transformers training_args.py `_setup_devices`, line 1843 in 5.23), which has one rank when
    no launcher set WORLD_SIZE: one device trains, the other visible devices idle, and ZeRO
    partitions nothing. Use a launcher: `deepspeed`, `torchrun` or `accelerate launch`.

    ## Why it matters
    The job holds every visible device and uses one: it runs several times slower than the
    allocation allows, and a model sized for ZeRO across all devices may not fit on one.

    ## Example
    ```sh
    CUDA_VISIBLE_DEVICES=0,1,2,3 python train.py --deepspeed ds_z3.json
    ```
    Use instead: `deepspeed --include localhost:0,1,2,3 train.py --deepspeed ds_z3.json`.
    """
    if plan.launcher != "python" or plan.deepspeed is None or plan.world_size is None or plan.world_size.value != 1:
        return
    devices = plan.visible_devices
    if devices is None or devices.value is None or len(devices.value) < 2:
        return
    yield Finding(
        plan.span,
        f"one python process with a DeepSpeed config while {len(devices.value)} devices are visible",
        note=f"{len(devices.value) - 1} of them stay idle",
        help="start it with deepspeed, torchrun or accelerate launch",
        related=[Related(f"devices from {devices.origin}", devices.span), Related("DeepSpeed config named here", plan.deepspeed.span)],
    )


# accelerate passes these deepspeed_config keys on (accelerate commands/launch.py, utils/launch.py:565-586).
ACCELERATE_DS_KEYS = frozenset(
    {
        "deepspeed_config_file", "zero_stage", "offload_optimizer_device", "offload_param_device",
        "offload_optimizer_nvme_path", "offload_param_nvme_path", "gradient_accumulation_steps",
        "gradient_clipping", "zero3_init_flag", "zero3_save_16bit_model", "deepspeed_hostfile",
        "deepspeed_inclusion_filter", "deepspeed_exclusion_filter", "deepspeed_multinode_launcher",
        "deepspeed_moe_layer_cls_names",
    }
)
# Fields that may not accompany deepspeed_config_file (accelerate dataclasses.py:1507-1531).
ACCELERATE_CONFIG_DS_FIELDS = (
    "gradient_accumulation_steps", "gradient_clipping", "zero_stage", "offload_optimizer_device",
    "offload_param_device", "offload_param_nvme_path", "offload_optimizer_nvme_path", "zero3_save_16bit_model",
)


@rule("DS309", "accelerate-deepspeed-config", severity="error", target="document", kinds=("accelerate-yaml",))
def accelerate_deepspeed_config(document, context):
    """An accelerate config sets DeepSpeed options that accelerate rejects or drops.

    ## What it checks
    - `deepspeed_config_file` together with accelerate-side DeepSpeed fields
      (`gradient_accumulation_steps`, `gradient_clipping`, `zero_stage`, the offload devices and
      NVMe paths, `zero3_save_16bit_model`) or with a top-level `mixed_precision` (even `no`):
      accelerate raises `ValueError: When using deepspeed_config_file, the following accelerate
      config variables will be ignored: [...]` (accelerate utils/dataclasses.py:1507-1531).
      `zero3_init_flag` is allowed. Error.
    - Keys under `deepspeed_config` that accelerate does not pass on (for example
      `stage3_gather_16bit_weights_on_model_save` or `zero_force_ds_cpu_optimizer`): dropped
      silently (accelerate commands/launch.py; hiyouga/LlamaFactory#253). Warning, with the key
      to use or the advice to move it into the DeepSpeed JSON.
    - `mixed_precision: no` unquoted (or `false`, `off`): PyYAML reads the boolean false, and
      every `accelerate launch` path calls `args.mixed_precision.lower()` on it:
      `AttributeError: 'bool' object has no attribute 'lower'` (accelerate utils/launch.py:169,
      278, 551). Error; the fix quotes it (`mixed_precision: "no"`), as `accelerate config` writes it.

    The file is judged on its own: `deepspeed_config_file` with `mixed_precision` fails every
    launch except one that passes `--mixed_precision` on the command line (accelerate then does
    not count the file's value); the generated oracle tests list that as a deliberate difference.

    ## Why it matters
    The conflict stops `accelerate launch` before training; a dropped key silently leaves a
    setting the author relied on (for example 16-bit weights on save) at its default.

    ## Example
    ```yaml
    distributed_type: DEEPSPEED
    mixed_precision: bf16
    deepspeed_config:
      deepspeed_config_file: ds_z3.json
      zero_stage: 3
    ```
    Use instead: keep `zero_stage` and precision in `ds_z3.json`, and only
    `deepspeed_config_file` (and `zero3_init_flag`) here.
    """
    mapping = document.mapping
    if mapping is None:
        return
    precision = mapping.get("mixed_precision")
    if isinstance(precision, Scalar) and isinstance(precision.value, bool):
        yield Finding(
            precision.span,
            f"mixed_precision: {precision.span.text.strip()} is the boolean {str(precision.value).lower()} to YAML, not a string",
            note="accelerate launch stops with AttributeError: 'bool' object has no attribute 'lower'",
            fix=Fix.safe('Write "no"', replace_value(precision, "no")) if precision.value is False else None,
        )
    section = mapping.get("deepspeed_config")
    if not isinstance(section, Mapping):
        return
    has_file = section.entry("deepspeed_config_file") is not None
    for entry in section.entries:
        if entry.key not in ACCELERATE_DS_KEYS:
            help = "use zero3_save_16bit_model here, or set it in the DeepSpeed JSON" if "gather_16bit" in entry.key else "set it in a DeepSpeed JSON named by deepspeed_config_file"
            yield Finding(entry.key_span, f"accelerate silently drops deepspeed_config.{entry.key}", severity=Severity.WARNING,
                          note="accelerate does not pass it on to DeepSpeed", help=help)
        elif has_file and entry.key in ACCELERATE_CONFIG_DS_FIELDS:
            yield Finding(
                entry.key_span,
                f"deepspeed_config.{entry.key} together with deepspeed_config_file",
                note="accelerate raises 'When using `deepspeed_config_file`, the following accelerate config variables will be ignored'",
                help="set it in the DeepSpeed JSON instead",
                related=[Related("deepspeed_config_file", section.entry("deepspeed_config_file").key_span)],
            )
    precision = mapping.entry("mixed_precision")
    if has_file and precision is not None and precision.value.to_python() is not None:
        yield Finding(
            precision.key_span,
            "mixed_precision together with deepspeed_config_file",
            note="accelerate raises 'the following accelerate config variables will be ignored: [mixed_precision]'",
            help="precision belongs in the DeepSpeed JSON (fp16/bf16 sections)",
            related=[Related("deepspeed_config_file", section.entry("deepspeed_config_file").key_span)],
        )


@rule("DS310", "accelerate-processes", severity="warning", target="launch")
def accelerate_processes(plan, context):
    """accelerate's process and machine counts disagree with the launch.

    ## What it checks
    - `--num_processes` on the command line overrides the config file's `num_processes`; when
      they differ, the file is misleading (info).
    - `num_machines > 1` in a config while the launch passes no `--machine_rank`: every node
      that runs the script starts as the config's `machine_rank` (0 by default), so the other
      ranks never join and the rendezvous waits (warning). Pass `--machine_rank $NODE_RANK`,
      or one script per node with its rank, as ms-swift's multi-node accelerate example does.
      Not reported when other launches of its multi-node layout take the other ranks, nor when
      nothing in the launch involves a second machine (`machines-on-one-node` says so).
    - `num_processes` not a multiple of `num_machines`, where the command line gives one of them:
      accelerate divides processes evenly across machines (`nproc_per_node =
      str(num_processes // num_machines)`, accelerate utils/launch.py:217; `--num_gpus` likewise
      at utils/launch.py:476), so the remainder is lost (error). A config file that disagrees
      with itself is `accelerate-processes-per-machine`.
    - more processes per machine than visible devices (error; see `processes-exceed-devices`).

    ## Why it matters
    Processes that never start leave the others waiting at the rendezvous until it times out;
    an overridden file value makes the config say something the launch does not do.

    ## Example
    `num_processes: 8`, `num_machines: 3` in the accelerate config.
    Use instead: `num_processes: 6` or `9`.
    """
    if plan.launcher != "accelerate" or plan.accelerate_config is None or plan.accelerate_config.config is None:
        return
    mapping = plan.accelerate_config.config
    file_procs = mapping.get("num_processes")
    cli = plan.launcher_args.get("num_processes")
    if cli is not None and isinstance(file_procs, Scalar) and str(file_procs.value) != str(cli.value) and cli.value is not None:
        yield Finding(
            cli.span or plan.span,
            f"--num_processes {cli.value} overrides num_processes: {file_procs.value} in {plan.accelerate_config.raw}",
            related=[Related("the config file's value", file_procs.span)],
            severity=Severity.INFO,
        )
    machines = plan.nodes
    total = plan.world_size
    rank_entry = mapping.entry("machine_rank")
    if machines is not None and machines.value and machines.value > 1 and "machine_rank" not in plan.launcher_args \
            and not _rank_decided_elsewhere(plan):
        rank = rank_entry.value.to_python() if rank_entry is not None else 0
        yield Finding(
            machines.span or plan.span,
            f"num_machines is {machines.value} but every run of this launch starts machine_rank {rank}",
            note=f"{'machine_rank in the config' if rank_entry is not None else 'the default'}, not overridden with --machine_rank: "
            "the other machines never join and the rendezvous waits",
            help="pass --machine_rank per node",
            related=[Related("machine_rank in the config", rank_entry.value.span)] if rank_entry is not None else [],
        )
    from_file = all(v.span is not None and v.span.source is mapping.span.source for v in (machines, total) if v is not None)
    if machines is not None and total is not None and machines.value and total.value and total.value % machines.value \
            and not from_file:
        yield Finding(
            total.span or plan.span,
            f"{total.value} processes do not divide over {machines.value} machines",
            note=f"accelerate starts {total.value // machines.value} per machine, so {total.value % machines.value} of them never start",
            related=[Related(machines.origin, machines.span)],
            severity=Severity.ERROR,
        )


def _rank_decided_elsewhere(plan) -> bool:
    """Other node launches of its layout take the other machine ranks, or it runs on one machine."""
    from dslint.launch.layout import node_of
    from dslint.rules.layout import one_machine

    layout = plan.layout
    if layout is not None and len(layout.nodes) > 1 and not layout.several_jobs:
        return True
    node = node_of(plan)
    return node is not None and one_machine(node, layout)


@rule("DS311", "swift-config-flag", severity="error", target="launch", fixable=True, consumers=("swift", "megatron"))
def swift_config_flag(plan, context):
    """ms-swift is given `--config file.yaml`: it takes the config file as the first argument.

    ## What it checks
    `swift sft|pt|rlhf|infer|export` read a YAML/JSON config only as the first positional
    argument (`swift sft config.yaml`, swift/cli/main.py:38-71). `--config` is understood only
    by the Ray Megatron pipeline (`megatron rlhf --use_ray true`); anywhere else argparse leaves
    it over and ms-swift stops with `ValueError: remaining_argv: ['--config', 'x.yaml']`
    (swift/pipelines/base.py:35-40). ms-swift 3.x does read `--config file.yaml`
    (swift/cli/main.py `prepare_config_args`): when the versions a launch may run with include
    3.x (nothing pins ms-swift, or a range does), the finding is info and names the versions
    that stop.

    ## Why it matters
    ms-swift stops at argument parsing, and the settings in the file were never applied.

    ## Example
    `swift sft --config sft.yaml`
    Use instead: `swift sft sft.yaml`.

    ## Fix safety
    Unsafe: it moves the file to the first argument, where ms-swift reads it before the other
    flags, which then override it. No fix when the file is not there (beside the script, in the
    folders above it, or in the working directory): the launch would then stop on a missing file
    instead (DS303), and which file was meant is the author's call.
    """
    if plan.launcher not in ("swift", "megatron") or plan.command is None:
        return
    if plan.launcher == "megatron" and plan.arg("use_ray") is not None:
        return
    from dslint.rules._training import in_use

    use = in_use("ms-swift", plan.origin.path if plan.origin is not None else None, context.settings, plan.program)
    # ms-swift 3.x reads `--config file.yaml` (swift/cli/main.py prepare_config_args)
    verdict = use.judge((), lambda space: space.reader.get("flag") != "--config") if use is not None else None
    if verdict is not None and not verdict.anywhere:
        return
    for option in plan.command.program_args:
        if option.name in ("--config", "--config_file") and option.value is not None:
            from dslint.diagnostics import Edit

            source = option.span.source
            entry = plan.command.command.args[0] if plan.command.command.args else None
            fix = None
            if entry is not None and option.value.value and (verdict is None or verdict.everywhere) \
                    and not _missing_file(plan, option.value.value):
                end = option.span.end
                while end < len(source.text) and source.text[end] in " \t":
                    end += 1
                fix = Fix.unsafe(
                    "Pass the config file as the first argument",
                    Edit(source, option.span.start, end, ""),
                    Edit(source, entry.span.end, entry.span.end, f" {option.value.raw}"),
                )
            note = "as written it stops with remaining_argv"
            yield Finding(option.name_span or option.span, f"{plan.entry or 'ms-swift'} does not read {option.name}", fix=fix,
                          severity=verdict.severity() if verdict else None, note=verdict.qualify(note) if verdict else note,
                          help=None if fix else f"it takes the config file as its first argument (`{plan.entry or 'swift sft'} {option.value.raw}`)")


@rule("DS312", "swift-tuner-flag", severity="warning", target="launch", fixable=True, consumers=("swift", "megatron"))
def swift_tuner_flag(plan, context):
    """An ms-swift tuner flag from another ms-swift generation (`--sft_type`, `--train_type`, `--tuner_type`).

    ## What it checks
    ms-swift renamed the tuner flag twice: `--sft_type` (2.x) → `--train_type` (3.x; accepted
    with a deprecation warning in 4.0) → `--tuner_type` (4.1+, where `--train_type` is gone,
    commit fe928a9f1; swift/arguments/base_args/base_args.py:93). A flag the installed
    generation does not know stops ms-swift with `ValueError: remaining_argv: ['--sft_type',
    'lora']` (modelscope/ms-swift#7836, #3763), and a 3.x installation given the 4.x flag stops
    with `remaining_argv: ['--tuner_type', 'lora']`. Which generation has which flag is read from
    the ms-swift schemas (2.6, 3.12, 4.6) and the documented renames (`--train_type` from 3.0 to
    4.0); the versions from the `swift-version` setting, the installed package
    (`detect-installed-versions`) or a pin in the repository. When every version the pin allows
    lacks the flag the finding is an error; when nothing pins ms-swift and no known version has
    it, a warning; when only some versions lack it, info naming them (`ms-swift==3.1.0` with
    `--train_type` is clean).

    ## Why it matters
    A flag from another generation stops ms-swift at argument parsing with `remaining_argv`.

    ## Example
    `swift sft --sft_type lora` with `ms-swift==4.6.0` pinned.
    Use instead: `--tuner_type lora` (4.1+), `--train_type lora` (3.x).

    ## Fix safety
    Safe when a pin or setting says which versions run and all of them call the flag the same
    other name; no fix when only some versions lack the flag.
    """
    from dslint.diagnostics import Edit
    from dslint.rules._training import swift_tuner_flag_findings

    if plan.consumer not in ("swift", "megatron"):
        return
    for arg, message, note, (right, calls), verdict in swift_tuner_flag_findings(plan, context.settings):
        certain = verdict.everywhere and verdict.candidates.evidence is not None
        fix = None
        span = arg.name_span
        if right and span is not None and verdict.everywhere:
            text = f"--{right}" if span.text.startswith("--") else right
            fix = (Fix.safe if certain else Fix.unsafe)(f"Rename to {right}", Edit.replace(span, text))
        yield Finding(arg.name_span or arg.span or plan.span, message, fix=fix, note=note, help=calls,
                      severity=Severity.ERROR if certain else verdict.severity())


def _missing_file(plan, raw: str) -> bool:
    """Is the file ``raw`` (as a launch names it) known to be absent? False when unsure ($VAR)."""
    import os
    from pathlib import Path

    if any(char in raw for char in "$`*?") or raw.startswith("~"):
        return False
    path = Path(raw)
    if path.is_absolute():
        return not path.is_file()
    origin = getattr(getattr(plan, "origin", None), "path", None)
    base = Path(os.path.abspath(origin)).parent if origin and not origin.startswith("<") else Path.cwd()
    return not any((folder / path).is_file() for folder in (base, *base.parents, Path.cwd()))
