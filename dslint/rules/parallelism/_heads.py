"""The model's attention heads for the parallelism rules that split them (DS417, DS418): from the
model a launch names (its local ``config.json``, or dslint's table of published configs), or from
Megatron's own shape flags."""

from __future__ import annotations

import os
from dataclasses import dataclass

from dslint.diagnostics import Related
from dslint.launch.args import as_int, where, written
from dslint.source import Span


@dataclass(frozen=True)
class Heads:
    """Attention heads and key/value heads, and where they were read."""

    heads: int
    kv: int | None  # None: the framework does not split key/value heads by this size (latent attention)
    source: str  # "local config models/q/config.json", "dslint's table of published configs (Qwen2.5-7B)", "--num-attention-heads 28 at run.sh:4"
    related: tuple[Related, ...] = ()

    def shown(self) -> str:
        kv = f", {self.kv} key/value heads" if self.kv is not None and self.kv != self.heads else ""
        return f"{self.heads} attention heads{kv} ({self.source})"


def of_model(plan, name, span: Span | None, cwd=None) -> Heads | None:
    """The heads of the model ``name`` (a value the launch passes as its model) when its shape is
    known: a local folder's config.json, or a recognised published model."""
    from dslint.evidence.models import attention_shape, recognise
    from dslint.explain.model import model_bases

    if not isinstance(name, str) or not name.strip() or "$" in name:
        return None
    name = name.strip()
    if plan.runs_elsewhere and not os.path.isabs(name):
        shape = recognise(name)  # the folder a relative path names cannot be told: the name alone
    else:
        shape = attention_shape(name, model_bases(plan, span, cwd))
    if shape is None or not shape.heads:
        return None
    if shape.source.startswith("local config "):
        source = f"{shape.source[len('local config '):]}"
    else:
        source = f"dslint's table of published configs, {shape.name}"
    kv = None if shape.latent_attention else (shape.kv_heads or shape.heads)
    return Heads(shape.heads, kv, source, (Related(f"model {name} ({source})", span),))


def of_flags(plan, heads_name: str, kv_name: str | None, kv_enabled: bool = True) -> Heads | None:
    """The heads Megatron's own flags set (``--num-attention-heads``, ``--num-query-groups`` /
    ``--num-key-value-heads``); ``kv_enabled`` False when the key/value flag is ignored (Megatron-LM
    without ``--group-query-attention``)."""
    arg = plan.arg(heads_name)
    heads = as_int(arg.value) if arg is not None else None
    if heads is None or heads < 1:
        return None
    kv_arg = plan.arg(kv_name) if kv_name and kv_enabled else None
    kv = as_int(kv_arg.value) if kv_arg is not None else None
    if kv_arg is not None and (kv is None or kv < 1):
        return None
    source = f"{written(arg)} at {where(arg.span)}"
    related = [Related(written(arg), arg.span)]
    if kv_arg is not None:
        source += f", {written(kv_arg)} at {where(kv_arg.span)}"
        related.append(Related(written(kv_arg), kv_arg.span))
    return Heads(heads, kv if kv is not None else heads, source, tuple(related))
