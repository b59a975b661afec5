"""What every section of an explanation reads: the launch plan, the options, the DeepSpeed config,
and the notes the sections add as they go (in the order they are found)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dslint.documents.model import Mapping, Scalar
from dslint.explain.origins import Value, from_node
from dslint.launch.plan import Arg, LaunchPlan

if TYPE_CHECKING:
    from dslint.explain import Options

DEFAULTS_NAMES = {
    "swift": "ms-swift's default",
    "megatron": "Megatron-SWIFT's default",
    "llamafactory": "the transformers default (LLaMA-Factory)",
    "hf": "the transformers default",
}


@dataclass
class Reading:
    plan: LaunchPlan
    options: Options
    notes: list[str] = field(init=False)
    consumer: str | None = field(init=False)
    megatron: bool = field(init=False)
    config: Mapping | None = field(init=False)  # the DeepSpeed config
    resolved_model: tuple | None = field(default=None, init=False)  # (shape, how), once dslint.explain.model looked it up

    def __post_init__(self) -> None:
        plan = self.plan
        self.notes = list(plan.notes)
        self.consumer = plan.consumer
        flags = "global_batch_size" in plan.args and "micro_batch_size" in plan.args
        kind = getattr(plan.program, "kind", None)
        # Megatron's flags, or a Megatron-DeepSpeed program: Megatron sets DeepSpeed's train batch
        # from --global-batch-size at every step (megatron/training.py set_train_batch_size), so the
        # DeepSpeed config's train_batch_size is not the run's
        self.megatron = (plan.consumer == "megatron" or kind == "megatron-deepspeed"
                         or (flags and (plan.consumer is None or (plan.consumer == "deepspeed" and not getattr(plan.program, "established", False)))))
        self.config = plan.deepspeed.config if plan.deepspeed is not None else None

    def arg(self, *names: str) -> Arg | None:
        return self.plan.arg(*names)

    def ds(self, dotted: str):
        node = self.config
        for part in dotted.split("."):
            if not isinstance(node, Mapping):
                return None
            node = node.get(part)
        return node

    def ds_value(self, dotted: str) -> tuple[Any, Any]:
        node = self.ds(dotted)
        if isinstance(node, Scalar):
            return node.value, node
        if node is not None:
            return node.to_python(), node
        return None, None

    def node_value(self, node, key: str, value: Any) -> Value:
        return from_node(node, key, value, self.plan.deepspeed)

    def loc(self, node) -> tuple[str, str | None, int | None]:
        """(text, path, line) of a config node, for origins of "auto" values."""
        found = self.node_value(node, "", None)
        text = found.where if found.line is not None else (found.origin.strip() or "the config")
        return text, found.path, found.line

    def defaults_name(self) -> str:
        return DEFAULTS_NAMES.get(self.consumer or "", "the default")

    def accelerate_config(self) -> Mapping | None:
        """The accelerate config file's mapping, when the launch is read by accelerate and names one."""
        accel = self.plan.accelerate_config
        if self.consumer == "accelerate" and accel is not None and accel.config is not None:
            return accel.config
        return None
