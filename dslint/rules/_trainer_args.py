"""The training arguments the HF Trainer (or ms-swift, LLaMA-Factory) compares a DeepSpeed config with:
each value with where it came from, the consumer's default where the launch sets none.

Shared by the rule families that judge a DeepSpeed config against a launch's training arguments
(launch, trainer, deepspeed_engine).
"""

from __future__ import annotations

from dslint.diagnostics import Related

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


def parsed(name: str, value):
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
            value = parsed(name, arg.value)
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
        value = parsed(name, said.value)
        if value is None:
            return None, None
        evidence = said.evidence
        return value, Related(f"{name} = {said.value!r} ({evidence.text}, {evidence.where()})")
