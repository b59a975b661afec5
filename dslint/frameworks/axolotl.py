"""axolotl: its YAML config, the validator that rejects it, and where it finds its DeepSpeed config.

How it launches: ``axolotl train config.yml`` or ``accelerate launch -m axolotl.cli.train
config.yml``; the YAML is the config. ``load_cfg`` validates it with pydantic
(``AxolotlInputConfig``) before anything is loaded: the model validators in
src/axolotl/utils/schemas/validation.py (0.11 on; schemas/config.py in 0.8-0.10,
utils/config/models/input/v0_4_1/__init__.py before) raise ``ValueError`` on the combinations
below, read from each release's source (the ``mode="before"`` validators see the YAML's values as
written, and test them for truth: ``0``, ``false`` and an empty string count as not set).

``deepspeed:`` names a JSON file that axolotl opens with ``os.path.exists`` / ``open`` as
written, so relative to the working directory it runs in (src/axolotl/utils/config/__init__.py
``normalize_config``: 236-240 on main; utils/trainer.py ``prepare_optim_env``). The
``deepspeed_configs/*.json`` presets of its examples are files of axolotl's repository, not of
the installed package: ``axolotl fetch deepspeed_configs`` copies them into the working
directory (src/axolotl/cli/main.py ``fetch``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from dslint.evidence.versions import compare

#: The releases dslint has read (git tags of axolotl-ai-cloud/axolotl, 0.6.0 to 0.18.0).
KNOWN = ("0.6.0", "0.7.0", "0.7.1", "0.8.0", "0.8.1", "0.9.0", "0.9.1", "0.9.2", "0.10.0", "0.10.1", "0.11.0", "0.12.0",
         "0.12.1", "0.12.2", "0.13.0", "0.13.1", "0.13.2", "0.14.0", "0.15.0", "0.16.0", "0.16.1", "0.17.0", "0.18.0")
#: The presets in axolotl's deepspeed_configs/ folder (main, and every release since 0.6).
PRESETS = ("zero1.json", "zero1_torch_compile.json", "zero2.json", "zero2_torch_compile.json", "zero3.json",
           "zero3_bf16.json", "zero3_bf16_cpuoffload_all.json", "zero3_bf16_cpuoffload_params.json")


def _set(data: dict, key: str) -> bool:
    return bool(data.get(key))


def _both(first: str, second: str) -> Callable[[dict], bool]:
    """Both keys set (the validators' ``data.get(a) and data.get(b)``)."""
    return lambda data: _set(data, first) and _set(data, second)


def _not_steps(strategy: str, other: str) -> Callable[[dict], bool]:
    """A schedule key set together with a strategy other than "steps"."""
    return lambda data: _both(strategy, other)(data) and data.get(strategy) != "steps"


@dataclass(frozen=True)
class Rejection:
    """One combination axolotl's config validator refuses."""

    keys: tuple[str, ...]  # the keys involved; the finding points at the first one set
    refuses: Callable[[dict], bool]
    quoted: str  # axolotl's ValueError
    validator: str  # the validator's name
    until: str | None = None  # the last release that has it

    def fails_in(self, version: str) -> bool:
        return self.until is None or compare(version, self.until) <= 0


REJECTIONS = (
    Rejection(("batch_size", "gradient_accumulation_steps"), _both("gradient_accumulation_steps", "batch_size"),
              "please set only one of gradient_accumulation_steps or batch_size", "check_gas_bsz"),
    Rejection(("warmup_ratio", "warmup_steps"), _both("warmup_steps", "warmup_ratio"),
              "warmup_steps and warmup_ratio are mutually exclusive", "check_warmup"),
    Rejection(("save_steps", "save_strategy"), _not_steps("save_strategy", "save_steps"),
              "save_strategy and save_steps mismatch. Please set save_strategy to 'steps' or remove save_steps.", "check_saves"),
    Rejection(("save_steps", "saves_per_epoch"), _both("saves_per_epoch", "save_steps"),
              "save_steps and saves_per_epoch are mutually exclusive and cannot be used together.", "check_saves"),
    Rejection(("eval_steps", "eval_strategy"), _not_steps("eval_strategy", "eval_steps"),
              "eval_strategy and eval_steps mismatch. Please set eval_strategy to 'steps' or remove eval_steps.", "check_evals"),
    Rejection(("val_set_size", "eval_steps", "eval_strategy"),
              lambda d: d.get("val_set_size") == 0 and not isinstance(d.get("val_set_size"), bool)
              and (_set(d, "eval_steps") or _set(d, "eval_strategy")) and not _set(d, "test_datasets")
              and d.get("eval_strategy") != "no",
              "eval_steps and eval_strategy are not supported with val_set_size == 0", "check_evals"),
    Rejection(("eval_steps", "evals_per_epoch"), _both("evals_per_epoch", "eval_steps"),
              "eval_steps and evals_per_epoch are mutually exclusive and cannot be used together.", "check_evals"),
    Rejection(("eval_strategy", "evals_per_epoch"), _not_steps("eval_strategy", "evals_per_epoch"),
              "eval_strategy must be empty or set to `steps` when used with evals_per_epoch.", "check_evals"),
    Rejection(("fsdp", "deepspeed"), _both("deepspeed", "fsdp"), "deepspeed and fsdp cannot be used together.", "check_fsdp_deepspeed"),
    Rejection(("fsdp", "base_model"),
              lambda d: isinstance(d.get("base_model"), str) and "falcon" in d["base_model"].lower() and _set(d, "fsdp"),
              "FSDP is not supported for falcon models", "check_falcon_fsdp"),
    Rejection(("torch_compile", "deepspeed"), _both("deepspeed", "torch_compile"),
              "torch_compile should be set within your deepspeed config file", "check_torch_compile_deepspeed",
              until="0.12.2"),
)


def program(plan) -> bool:
    """The launch (or config no launch names) is established as axolotl's."""
    consumer = getattr(plan, "program", None)
    return consumer is not None and consumer.kind == "axolotl" and consumer.established


def values(plan) -> dict[str, Any]:
    """The config's top-level values as axolotl's validators see them."""
    return {name: arg.value for name, arg in plan.args.items()}


__all__ = ["KNOWN", "PRESETS", "REJECTIONS", "Rejection", "program", "values"]
