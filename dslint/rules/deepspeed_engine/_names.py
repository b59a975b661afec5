"""The optimizers and LR schedulers torch and DeepSpeed build from a config's `type`.

tests/test_deepspeed_rules.py compares these lists with the installed torch and deepspeed.
"""

from __future__ import annotations

# torch 2.13 `torch.optim` optimizer classes (tests/test_deepspeed_rules.py compares this with
# the installed torch). DeepSpeed accepts any `getattr(torch.optim, name)` (engine.py:1985-1986).
TORCH_OPTIMIZERS = (
    "ASGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS", "Muon", "NAdam",
    "RAdam", "RMSprop", "Rprop", "SGD", "SparseAdam",
)
# torch 2.13 `torch.optim.lr_scheduler` scheduler classes (engine.py:1926-1932 accepts any attribute).
TORCH_SCHEDULERS = (
    "ChainedScheduler", "ConstantLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts", "CyclicLR",
    "ExponentialLR", "LambdaLR", "LinearLR", "MultiStepLR", "MultiplicativeLR", "OneCycleLR", "PolynomialLR",
    "ReduceLROnPlateau", "SequentialLR", "StepLR",
)
# deepspeed/runtime/config.py:63-66 (lowercase; the config's `type` is compared case-insensitively).
DEEPSPEED_OPTIMIZERS = ("adagrad", "adam", "adamw", "lamb", "muadam", "muadamw", "musgd", "lion", "muon")
# Removed in 0.19.7 (present in the 0.19.6 DEEPSPEED_OPTIMIZERS, absent from 0.19.7's).
ONEBIT_OPTIMIZERS = {"onebitadam": "OneBitAdam", "onebitlamb": "OneBitLamb", "zerooneadam": "ZeroOneAdam"}
ONEBIT_REMOVED = "0.19.7"

# deepspeed/runtime/lr_schedules.py: constructor keyword arguments (besides `optimizer`), required ones first.
DEEPSPEED_SCHEDULERS = {
    "LRRangeTest": ((), ("lr_range_test_min_lr", "lr_range_test_step_size", "lr_range_test_step_rate", "lr_range_test_staircase", "last_batch_iteration")),
    "OneCycle": (("cycle_min_lr", "cycle_max_lr"), ("decay_lr_rate", "cycle_first_step_size", "cycle_second_step_size", "cycle_first_stair_count", "cycle_second_stair_count", "decay_step_size", "cycle_momentum", "cycle_min_mom", "cycle_max_mom", "decay_mom_rate", "last_batch_iteration")),
    "WarmupLR": ((), ("warmup_min_lr", "warmup_max_lr", "warmup_num_steps", "warmup_type", "last_batch_iteration")),
    "WarmupDecayLR": (("total_num_steps",), ("warmup_min_lr", "warmup_max_lr", "warmup_num_steps", "warmup_type", "last_batch_iteration")),
    "WarmupCosineLR": (("total_num_steps",), ("warmup_min_ratio", "warmup_num_steps", "cos_min_ratio", "warmup_type", "last_batch_iteration")),
}
