"""Model sizes and shapes: parameter counts for memory estimates.

Three sources, in order of trust:

1. ``--params 7B`` on the command line: a count, no shape.
2. A local Hugging Face ``config.json`` beside the model path a launch names
   (``--model``, ``--model_name_or_path``, ``model_name_or_path:``): the shape is read from it
   and the count computed from the shape.
3. A recognised model name (``Qwen/Qwen2.5-7B-Instruct``, ``meta-llama/Llama-3.1-70B``): the
   shape comes from the table below, written from the families' published ``config.json``
   files; the count is computed from it and equals the published count (the tests check
   several against the numbers on the model cards, e.g. Llama-2-7B 6,738,415,616 and
   Qwen2.5-7B 7,615,616,512).

Counting follows the Hugging Face modules of a Llama-style decoder: embeddings ``V·h``; per
layer q/k/v/o projections ``h·(H·d) + 2·h·(K·d) + (H·d)·h`` (plus q/k/v biases for Qwen2,
q/k norms for Qwen3), a gated MLP ``3·h·I`` (per expert for mixture-of-experts models, plus
the router ``h·E``), and the RMSNorm weights; a final norm; an output head ``V·h`` unless the
embeddings are tied.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path


@dataclass(frozen=True)
class ModelShape:
    """A decoder's size. ``params`` is the total count; the shape fields may be None."""

    name: str
    params: int
    hidden: int | None = None
    layers: int | None = None
    heads: int | None = None
    kv_heads: int | None = None
    intermediate: int | None = None
    vocab: int | None = None
    head_dim: int | None = None
    tied: bool = False
    experts: int | None = None  # routed experts per MoE layer
    experts_active: int | None = None  # experts each token goes through
    moe_intermediate: int | None = None
    source: str = ""  # where the count came from, for people
    family: str | None = None
    # Multi-head latent attention (DeepSeek-V2/V3: ``kv_lora_rank`` in config.json): the key/value
    # heads are not grouped, so Megatron's num_query_groups does not come from ``num_key_value_heads``.
    latent_attention: bool = False

    @property
    def has_shape(self) -> bool:
        return all(v is not None for v in (self.hidden, self.layers, self.heads, self.vocab))

    @property
    def largest_layer(self) -> int | None:
        """Elements of the largest single module's own parameters (what DeepSpeed's ZeRO-3
        estimator calls ``largest_layer_params``): the embedding or output head, or the
        biggest projection."""
        if self.hidden is None:
            return None
        candidates = []
        if self.vocab:
            candidates.append(self.vocab * self.hidden)
        if self.intermediate:
            candidates.append(self.intermediate * self.hidden)
        if self.moe_intermediate:
            candidates.append(self.moe_intermediate * self.hidden)
        if self.heads:
            candidates.append(self.hidden * self.heads * (self.head_dim or self.hidden // self.heads))
        return max(candidates) if candidates else None

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "params": self.params,
            "hidden_size": self.hidden,
            "layers": self.layers,
            "heads": self.heads,
            "kv_heads": self.kv_heads,
            "intermediate_size": self.intermediate,
            "vocab_size": self.vocab,
            "head_dim": self.head_dim,
            "tied_embeddings": self.tied,
            "experts": self.experts,
            "moe_intermediate_size": self.moe_intermediate,
            "largest_layer_params": self.largest_layer,
            "source": self.source,
        }


def count_params(
    hidden: int,
    layers: int,
    heads: int,
    kv_heads: int,
    intermediate: int,
    vocab: int,
    *,
    head_dim: int | None = None,
    tied: bool = False,
    qkv_bias: bool = False,
    qk_norm: bool = False,
    norms_per_layer: int = 2,
    experts: int | None = None,
    moe_intermediate: int | None = None,
) -> int:
    """Parameters of a Llama-style decoder (see the module docstring)."""
    d = head_dim or hidden // heads
    q, kv = heads * d, kv_heads * d
    attention = hidden * q + 2 * hidden * kv + q * hidden
    if qkv_bias:
        attention += q + 2 * kv
    if qk_norm:
        attention += 2 * d
    if experts:
        mlp = experts * 3 * hidden * (moe_intermediate or intermediate) + hidden * experts
    else:
        mlp = 3 * hidden * intermediate
    layer = attention + mlp + norms_per_layer * hidden
    embeddings = vocab * hidden * (1 if tied else 2)
    return embeddings + layers * layer + hidden


# family → size → shape arguments (from each model's published config.json).
_LLAMA2 = dict(vocab=32000)
_LLAMA3 = dict(vocab=128256)
_QWEN2 = dict(qkv_bias=True)
_QWEN3 = dict(qk_norm=True, head_dim=128, vocab=151936)
_GEMMA = dict(vocab=256000, tied=True)

_TABLE: dict[str, dict[str, dict]] = {
    "llama-2": {
        "7b": dict(hidden=4096, layers=32, heads=32, kv_heads=32, intermediate=11008, **_LLAMA2),
        "13b": dict(hidden=5120, layers=40, heads=40, kv_heads=40, intermediate=13824, **_LLAMA2),
        "70b": dict(hidden=8192, layers=80, heads=64, kv_heads=8, intermediate=28672, **_LLAMA2),
    },
    "llama-3": {
        "8b": dict(hidden=4096, layers=32, heads=32, kv_heads=8, intermediate=14336, **_LLAMA3),
        "70b": dict(hidden=8192, layers=80, heads=64, kv_heads=8, intermediate=28672, **_LLAMA3),
    },
    "llama-3.1": {
        "8b": dict(hidden=4096, layers=32, heads=32, kv_heads=8, intermediate=14336, **_LLAMA3),
        "70b": dict(hidden=8192, layers=80, heads=64, kv_heads=8, intermediate=28672, **_LLAMA3),
        "405b": dict(hidden=16384, layers=126, heads=128, kv_heads=8, intermediate=53248, **_LLAMA3),
    },
    "llama-3.2": {
        "1b": dict(hidden=2048, layers=16, heads=32, kv_heads=8, intermediate=8192, tied=True, **_LLAMA3),
        "3b": dict(hidden=3072, layers=28, heads=24, kv_heads=8, intermediate=8192, tied=True, **_LLAMA3),
    },
    "llama-3.3": {
        "70b": dict(hidden=8192, layers=80, heads=64, kv_heads=8, intermediate=28672, **_LLAMA3),
    },
    "qwen2": {
        "0.5b": dict(hidden=896, layers=24, heads=14, kv_heads=2, intermediate=4864, vocab=151936, tied=True, **_QWEN2),
        "1.5b": dict(hidden=1536, layers=28, heads=12, kv_heads=2, intermediate=8960, vocab=151936, tied=True, **_QWEN2),
        "7b": dict(hidden=3584, layers=28, heads=28, kv_heads=4, intermediate=18944, vocab=152064, **_QWEN2),
        "72b": dict(hidden=8192, layers=80, heads=64, kv_heads=8, intermediate=29568, vocab=152064, **_QWEN2),
    },
    "qwen2.5": {
        "0.5b": dict(hidden=896, layers=24, heads=14, kv_heads=2, intermediate=4864, vocab=151936, tied=True, **_QWEN2),
        "1.5b": dict(hidden=1536, layers=28, heads=12, kv_heads=2, intermediate=8960, vocab=151936, tied=True, **_QWEN2),
        "3b": dict(hidden=2048, layers=36, heads=16, kv_heads=2, intermediate=11008, vocab=151936, tied=True, **_QWEN2),
        "7b": dict(hidden=3584, layers=28, heads=28, kv_heads=4, intermediate=18944, vocab=152064, **_QWEN2),
        "14b": dict(hidden=5120, layers=48, heads=40, kv_heads=8, intermediate=13824, vocab=152064, **_QWEN2),
        "32b": dict(hidden=5120, layers=64, heads=40, kv_heads=8, intermediate=27648, vocab=152064, **_QWEN2),
        "72b": dict(hidden=8192, layers=80, heads=64, kv_heads=8, intermediate=29568, vocab=152064, **_QWEN2),
    },
    "qwen3": {
        "0.6b": dict(hidden=1024, layers=28, heads=16, kv_heads=8, intermediate=3072, tied=True, **_QWEN3),
        "1.7b": dict(hidden=2048, layers=28, heads=16, kv_heads=8, intermediate=6144, tied=True, **_QWEN3),
        "4b": dict(hidden=2560, layers=36, heads=32, kv_heads=8, intermediate=9728, tied=True, **_QWEN3),
        "8b": dict(hidden=4096, layers=36, heads=32, kv_heads=8, intermediate=12288, **_QWEN3),
        "14b": dict(hidden=5120, layers=40, heads=40, kv_heads=8, intermediate=17408, **_QWEN3),
        "32b": dict(hidden=5120, layers=64, heads=64, kv_heads=8, intermediate=25600, **_QWEN3),
        "30b-a3b": dict(hidden=2048, layers=48, heads=32, kv_heads=4, intermediate=6144, experts=128, experts_active=8, moe_intermediate=768, **_QWEN3),
        "235b-a22b": dict(hidden=4096, layers=94, heads=64, kv_heads=4, intermediate=12288, experts=128, experts_active=8, moe_intermediate=1536, **_QWEN3),
    },
    "mistral": {
        "7b": dict(hidden=4096, layers=32, heads=32, kv_heads=8, intermediate=14336, vocab=32000),
    },
    "mixtral": {
        "8x7b": dict(hidden=4096, layers=32, heads=32, kv_heads=8, intermediate=14336, vocab=32000, experts=8, experts_active=2),
        "8x22b": dict(hidden=6144, layers=56, heads=48, kv_heads=8, intermediate=16384, vocab=32768, experts=8, experts_active=2),
    },
    "gemma": {
        "2b": dict(hidden=2048, layers=18, heads=8, kv_heads=1, head_dim=256, intermediate=16384, **_GEMMA),
        "7b": dict(hidden=3072, layers=28, heads=16, kv_heads=16, head_dim=256, intermediate=24576, **_GEMMA),
    },
    "gemma-2": {
        "2b": dict(hidden=2304, layers=26, heads=8, kv_heads=4, head_dim=256, intermediate=9216, norms_per_layer=4, **_GEMMA),
        "9b": dict(hidden=3584, layers=42, heads=16, kv_heads=8, head_dim=256, intermediate=14336, norms_per_layer=4, **_GEMMA),
        "27b": dict(hidden=4608, layers=46, heads=32, kv_heads=16, head_dim=128, intermediate=36864, norms_per_layer=4, **_GEMMA),
    },
    "deepseek-llm": {
        "7b": dict(hidden=4096, layers=30, heads=32, kv_heads=32, intermediate=11008, vocab=102400),
        "67b": dict(hidden=8192, layers=95, heads=64, kv_heads=8, intermediate=22016, vocab=102400),
    },
}

# Models whose attention (DeepSeek's multi-head latent attention) the simple count does not
# describe: the published totals, with the shape fields that activations need.
_PUBLISHED: dict[str, dict[str, dict]] = {
    "deepseek-v3": {"671b": dict(params=671_000_000_000, hidden=7168, layers=61, heads=128, kv_heads=128, intermediate=18432, vocab=129280, experts=256, experts_active=8, moe_intermediate=2048)},
    "deepseek-r1": {"671b": dict(params=671_000_000_000, hidden=7168, layers=61, heads=128, kv_heads=128, intermediate=18432, vocab=129280, experts=256, experts_active=8, moe_intermediate=2048)},
    "deepseek-v2-lite": {"16b": dict(params=15_700_000_000, hidden=2048, layers=27, heads=16, kv_heads=16, intermediate=10944, vocab=102400, experts=64, experts_active=6, moe_intermediate=1408)},
    "deepseek-v2": {"236b": dict(params=236_000_000_000, hidden=5120, layers=60, heads=128, kv_heads=128, intermediate=12288, vocab=102400, experts=160, experts_active=6, moe_intermediate=1536)},
}

_DISPLAY = {
    "llama-2": "Llama-2", "llama-3": "Llama-3", "llama-3.1": "Llama-3.1", "llama-3.2": "Llama-3.2", "llama-3.3": "Llama-3.3",
    "qwen2": "Qwen2", "qwen2.5": "Qwen2.5", "qwen3": "Qwen3", "mistral": "Mistral", "mixtral": "Mixtral",
    "gemma": "Gemma", "gemma-2": "Gemma-2", "deepseek-llm": "DeepSeek-LLM", "deepseek-v3": "DeepSeek-V3",
    "deepseek-r1": "DeepSeek-R1", "deepseek-v2-lite": "DeepSeek-V2-Lite", "deepseek-v2": "DeepSeek-V2",
}

# Distilled DeepSeek-R1 models are their base models' shapes.
_ALIASES = {
    ("deepseek-r1-distill-qwen", "1.5b"): ("qwen2.5", "1.5b"),
    ("deepseek-r1-distill-qwen", "7b"): ("qwen2.5", "7b"),
    ("deepseek-r1-distill-qwen", "14b"): ("qwen2.5", "14b"),
    ("deepseek-r1-distill-qwen", "32b"): ("qwen2.5", "32b"),
    ("deepseek-r1-distill-llama", "8b"): ("llama-3.1", "8b"),
    ("deepseek-r1-distill-llama", "70b"): ("llama-3.3", "70b"),
    ("deepseek-v2-lite", None): ("deepseek-v2-lite", "16b"),
    ("deepseek-v3", None): ("deepseek-v3", "671b"),
    ("deepseek-r1", None): ("deepseek-r1", "671b"),
    ("deepseek-v2", None): ("deepseek-v2", "236b"),
}

# Family patterns, most specific first; matched against the lower-cased last path component.
_FAMILIES = [
    ("deepseek-r1-distill-qwen", r"deepseek-r1-distill-qwen"),
    ("deepseek-r1-distill-llama", r"deepseek-r1-distill-llama"),
    ("deepseek-v2-lite", r"deepseek-v2-lite"),
    ("deepseek-v2", r"deepseek-v2(?![.\d])"),
    ("deepseek-v3", r"deepseek-v3"),
    ("deepseek-r1", r"deepseek-r1(?!-distill)"),
    ("deepseek-llm", r"deepseek-llm"),
    ("llama-3.3", r"llama-?3\.3"),
    ("llama-3.2", r"llama-?3\.2"),
    ("llama-3.1", r"llama-?3\.1"),
    ("llama-3", r"llama-?3(?![.\d])"),
    ("llama-2", r"llama-?2"),
    ("qwen3", r"qwen-?3(?![.\d])"),
    ("qwen2.5", r"qwen-?2\.5"),
    ("qwen2", r"qwen-?2(?![.\d])"),
    ("mixtral", r"mixtral"),
    ("mistral", r"mistral"),
    ("gemma-2", r"gemma-?2(?![.\db])"),
    ("gemma", r"gemma(?!-?[2-9](?:-|$))"),
]
_SIZE = re.compile(r"(?<![\d.])(\d+x\d+b|\d+(?:\.\d+)?b-a\d+(?:\.\d+)?b|\d+(?:\.\d+)?b)(?![a-z\d])")


def _shape(family: str, size: str, args: dict, source: str) -> ModelShape:
    args = dict(args)
    published = args.pop("params", None)
    shape_args = {k: args[k] for k in ("hidden", "layers", "heads", "kv_heads", "intermediate", "vocab") if k in args}
    extra = {k: args[k] for k in ("head_dim", "tied", "qkv_bias", "qk_norm", "norms_per_layer", "experts", "moe_intermediate") if k in args}
    params = published if published is not None else count_params(**shape_args, **extra)
    return ModelShape(
        name=f"{_DISPLAY.get(family, family)}-{size.upper()}",
        params=params,
        hidden=args.get("hidden"),
        layers=args.get("layers"),
        heads=args.get("heads"),
        kv_heads=args.get("kv_heads"),
        intermediate=args.get("intermediate"),
        vocab=args.get("vocab"),
        head_dim=args.get("head_dim"),
        tied=bool(args.get("tied", False)),
        experts=args.get("experts"),
        experts_active=args.get("experts_active"),
        moe_intermediate=args.get("moe_intermediate"),
        source=source,
        family=family,
        latent_attention=family in _PUBLISHED and family.startswith(("deepseek-v", "deepseek-r1")),
    )


def known_models() -> list[ModelShape]:
    """Every model in the table (for documentation and tests)."""
    out = []
    for family, sizes in list(_TABLE.items()) + list(_PUBLISHED.items()):
        for size, args in sizes.items():
            out.append(_shape(family, size, args, "dslint's table of published configs"))
    return out


def recognise(name: str | None) -> ModelShape | None:
    """A model id or path (``Qwen/Qwen2.5-7B-Instruct``) → its shape, when the table knows it."""
    if not name or not isinstance(name, str):
        return None
    base = name.rstrip("/").rsplit("/", 1)[-1].lower().replace("_", "-")
    base = base.replace("meta-llama-", "llama-")
    for family, pattern in _FAMILIES:
        match = re.search(pattern, base)
        if not match:
            continue
        rest = base[match.end():]
        size_match = _SIZE.search(rest) or _SIZE.search(base)
        size = size_match.group(1) if size_match else None
        if (family, size) in _ALIASES:
            family, size = _ALIASES[(family, size)]
        elif (family, None) in _ALIASES and size is None:
            family, size = _ALIASES[(family, None)]
        table = _TABLE.get(family) or _PUBLISHED.get(family) or {}
        if size in table:
            shape = _shape(family, size, table[size], f"recognised model name {name!r}")
            return shape
        return None
    return None


# ---- local Hugging Face config.json ---------------------------------------------------------

_TIED_BY_DEFAULT = ("gemma", "gemma2", "gemma3_text")
_QKV_BIAS = ("qwen2", "qwen2_moe", "qwen2_vl", "qwen2_5_vl")
_QK_NORM = ("qwen3", "qwen3_moe")


def from_hf_config(config: dict, name: str = "config.json") -> ModelShape | None:
    """The shape a Hugging Face ``config.json`` describes (text model of a VLM too)."""
    if not isinstance(config, dict):
        return None
    config = _text_model(config)
    hidden = _number(config, "hidden_size", "n_embd", "d_model")
    layers = _number(config, "num_hidden_layers", "n_layer", "num_layers")
    heads = _number(config, "num_attention_heads", "n_head")
    if hidden is None or layers is None or heads is None:
        return None
    kv_heads = _number(config, "num_key_value_heads", "multi_query_group_num") or heads
    intermediate = _number(config, "intermediate_size", "n_inner", "ffn_hidden_size") or 4 * hidden
    vocab = _number(config, "vocab_size", "padded_vocab_size") or 32000
    head_dim = _number(config, "head_dim")
    model_type = str(config.get("model_type") or "")
    tied = config.get("tie_word_embeddings")
    tied = bool(tied) if isinstance(tied, bool) else model_type in _TIED_BY_DEFAULT
    experts = _number(config, "num_local_experts", "num_experts", "n_routed_experts")
    moe_intermediate = _number(config, "moe_intermediate_size")
    active = _number(config, "num_experts_per_tok", "num_experts_per_token")
    params = count_params(
        hidden, layers, heads, kv_heads, intermediate, vocab,
        head_dim=head_dim, tied=tied, **_layer_extras(config, model_type),
        experts=experts, moe_intermediate=moe_intermediate,
    )
    return ModelShape(
        name=str(config.get("_name_or_path") or name),
        params=params, hidden=hidden, layers=layers, heads=heads, kv_heads=kv_heads,
        intermediate=intermediate, vocab=vocab, head_dim=head_dim, tied=tied,
        experts=experts, experts_active=active, moe_intermediate=moe_intermediate,
        source=name, family=model_type or None, latent_attention=_number(config, "kv_lora_rank") is not None,
    )


def _text_model(config: dict) -> dict:
    """A VLM's ``text_config`` (with the outer model type and tying) when the outer config has no
    text model of its own; the config itself otherwise."""
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else None
    if text is None or "hidden_size" in config:
        return config
    merged = {**text, "model_type": text.get("model_type") or config.get("model_type")}
    if "tie_word_embeddings" in config and "tie_word_embeddings" not in text:
        merged["tie_word_embeddings"] = config["tie_word_embeddings"]
    return merged


def _number(config: dict, *keys: str) -> int | None:
    """The first of ``keys`` the config sets to a positive integer."""
    for key in keys:
        value = config.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _layer_extras(config: dict, model_type: str) -> dict:
    """What a family adds to each layer beyond the plain decoder: q/k/v biases, q/k norms, Gemma-2/3's four norms."""
    return {
        "qkv_bias": model_type in _QKV_BIAS or bool(config.get("attention_bias")),
        "qk_norm": model_type in _QK_NORM,
        "norms_per_layer": 4 if model_type.startswith(("gemma2", "gemma3")) else 2,
    }


def _local_config(model: str, bases: list[Path]) -> tuple[dict, Path] | None:
    """(the parsed ``<model>/config.json``, its path) when ``model`` is a local folder (looked up
    relative to each of ``bases``, then as given)."""
    if not model or not isinstance(model, str) or "\n" in model:
        return None
    candidates = [Path(model)] if os.path.isabs(model) else [base / model for base in bases] + [Path(model)]
    for folder in candidates:
        config = folder / "config.json"
        try:
            if not config.is_file() or config.stat().st_size > 1_000_000:
                continue
            data = json.loads(config.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            return data, config
    return None


def read_local_config(model: str, bases: list[Path]) -> ModelShape | None:
    """The shape in ``<model>/config.json`` when ``model`` is a local folder."""
    found = _local_config(model, bases)
    if found is None:
        return None
    data, config = found
    shape = from_hf_config(data, name=str(config))
    return replace(shape, name=model, source=f"local config {config}") if shape is not None else None


def attention_shape(model: str, bases: list[Path]) -> ModelShape | None:
    """The shape whose attention heads a framework will read: ``<model>/config.json`` when ``model`` is
    a local folder, else the table's entry for a recognised text model (a multimodal or head
    variant's name is not taken for its family's shape)."""
    found = read_local_config(model, bases)
    if found is not None:
        return found
    if not isinstance(model, str) or is_variant(model):
        return None
    return recognise(model)


# ---- parameter counts written by people -------------------------------------------------------

_COUNT = re.compile(r"^\s*(\d+(?:\.\d+)?(?:e\d+)?)\s*([kmbt]?)\s*$", re.IGNORECASE)
_SCALE = {"": 1, "k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}


def parse_count(text: str) -> int:
    """``7B`` → 7_000_000_000; ``1.5b``, ``350M``, ``7e9`` and plain integers too."""
    match = _COUNT.match(str(text))
    if not match:
        raise ValueError(f"not a parameter count: {text!r} (write e.g. 7B, 1.5B, 350M)")
    value = float(match.group(1)) * _SCALE[match.group(2).lower()]
    if value < 1:
        raise ValueError(f"not a parameter count: {text!r}")
    return int(round(value))


def from_count(params: int, origin: str) -> ModelShape:
    return ModelShape(name=f"{format_count(params)} parameters", params=params, source=origin)


def format_count(params: int | float) -> str:
    for unit, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if params >= scale:
            value = params / scale
            text = f"{value:.2f}".rstrip("0").rstrip(".") if value < 10 else f"{value:.1f}".rstrip("0").rstrip(".")
            return f"{text}{unit}"
    return str(int(params))


# ---- which transformers model type a model is ---------------------------------------------------

# The `model_type` of each family above (its config.json), and of families the memory table does
# not size but FSDP rules name (checked against the families' published config.json files).
_MODEL_TYPE = {
    "llama-2": "llama", "llama-3": "llama", "llama-3.1": "llama", "llama-3.2": "llama", "llama-3.3": "llama",
    "deepseek-llm": "llama", "deepseek-r1-distill-llama": "llama", "deepseek-r1-distill-qwen": "qwen2",
    "qwen2": "qwen2", "qwen2.5": "qwen2", "qwen3": "qwen3", "mistral": "mistral", "mixtral": "mixtral",
    "gemma": "gemma", "gemma-2": "gemma2", "deepseek-v2-lite": "deepseek_v2", "deepseek-v2": "deepseek_v2",
    "deepseek-v3": "deepseek_v3", "deepseek-r1": "deepseek_v3",
}
_MORE_FAMILIES = [
    ("qwen3-moe", r"qwen-?3-\d+(?:\.\d+)?b-a\d+b", "qwen3_moe"),
    ("qwen2-moe", r"qwen-?(?:1\.5|2)-moe", "qwen2_moe"),
    ("roberta", r"(?<![a-z])roberta-(?:base|large)", "roberta"),
    ("bert", r"(?<![a-z])bert-(?:base|large)", "bert"),
    ("t5", r"(?<![a-z])(?:flan-)?t5-(?:small|base|large|xl|xxl)", "t5"),
    ("gpt2", r"^gpt2(?:-medium|-large|-xl)?$", "gpt2"),
    ("opt", r"(?<![a-z])opt-\d", "opt"),
    ("bloom", r"(?<![a-z])bloomz?-\d", "bloom"),
]


def is_variant(name: str) -> bool:
    """Whether a model id names a multimodal or head variant of a family (``Qwen2.5-VL-7B``,
    ``...-Reward``): its text model need not be the family's shape of that size."""
    base = name.rstrip("/").rsplit("/", 1)[-1].lower().replace("_", "-")
    return re.search(r"(?:^|-)(?:vl|vision|audio|omni|video|image|mm|llava|reward|rm)(?:-|$)", base) is not None


def model_type_of(name: str | None) -> str | None:
    """The transformers ``model_type`` a model id names (``meta-llama/Llama-2-7b-hf`` → ``llama``), or None.

    Only ids whose family *and* size dslint knows count: a family name alone says little (Falcon3
    and Falcon-E are Llama models, Mistral-Small-4 is ``mistral4``), and a wrong type would make
    a right class name look wrong.
    """
    if not name or not isinstance(name, str):
        return None
    base = name.rstrip("/").rsplit("/", 1)[-1].lower().replace("_", "-").replace("meta-llama-", "llama-")
    if is_variant(name):
        return None  # a multimodal or head variant of the family is another model type
    for _family, pattern, model_type in _MORE_FAMILIES[:2]:
        if re.search(pattern, base):
            return model_type
    shape = recognise(name)
    if shape is not None and shape.family in _MODEL_TYPE:
        return _MODEL_TYPE[shape.family]
    for _family, pattern, model_type in _MORE_FAMILIES[2:]:
        if re.search(pattern, base):
            return model_type
    return None


def local_model_type(model: str, bases: list[Path]) -> tuple[str, str] | None:
    """(model_type, the config.json path) when ``model`` is a local folder with a config.json."""
    found = _local_config(model, bases)
    if found is None or not isinstance(found[0].get("model_type"), str):
        return None
    return found[0]["model_type"], str(found[1])
