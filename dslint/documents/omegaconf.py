"""YAML as Hydra and OmegaConf read it.

A file is a Hydra/OmegaConf config when it uses their syntax: a top-level ``defaults`` list
(Hydra's defaults list), a ``_target_`` key (hydra.utils.instantiate), or a ``${...}``
interpolation in a value (OmegaConf resolves those; PyYAML keeps them as text).

OmegaConf loads YAML with its own loader (omegaconf/_utils.py ``get_yaml_loader``, 2.3): PyYAML's
SafeLoader plus a float resolver that also takes ``1e-5`` and ``1_000.5`` (YAML 1.1 wants a dot
before the exponent), without the timestamp resolver (``2024-01-01`` stays a string), and a
mapping constructor that raises ``found duplicate key`` where PyYAML keeps the last value.
"""

from __future__ import annotations

import re

from dslint.documents.model import Mapping, Node, ParseProblem, Scalar, Sequence, walk

_FLOAT = re.compile(
    r"""^(?:
     [-+]?[0-9]+(?:_[0-9]+)*\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?[0-9]+(?:_[0-9]+)*(?:[eE][-+]?[0-9]+)
    |\.[0-9]+(?:_[0-9]+)*(?:[eE][-+][0-9]+)?
    |[-+]?[0-9]+(?:_[0-9]+)*(?::[0-5]?[0-9])+\.[0-9_]*
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""",
    re.X,
)
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_STR = "tag:yaml.org,2002:str"


def marker(root: Node | None) -> tuple[Node, str] | None:
    """The first thing that shows a Hydra/OmegaConf config: (node, what it is), or None."""
    if not isinstance(root, Mapping):
        return None
    defaults = root.entry("defaults")
    if defaults is not None and isinstance(defaults.value, Sequence):
        return defaults.value, "a Hydra defaults list"
    for _, node in walk(root):
        if isinstance(node, Mapping):
            target = node.entry("_target_")
            if target is not None:
                return target.value, "a Hydra _target_ key"
        elif isinstance(node, Scalar) and isinstance(node.value, str) and "${" in node.value and "}" in node.value:
            return node, "an OmegaConf ${...} interpolation"
    return None


def reread(root: Node) -> list[ParseProblem]:
    """Give the plain scalars OmegaConf's values; the duplicate keys OmegaConf refuses, as problems."""
    problems = []
    for _, node in walk(root):
        if isinstance(node, Scalar) and node.style == "plain":
            text = node.span.text
            if node.tag == _STR and _FLOAT.match(text):
                node.value = float(text.replace("_", ""))
                node.tag = "tag:yaml.org,2002:float"
            elif node.tag == _TIMESTAMP:
                node.value = text
                node.tag = _STR
        elif isinstance(node, Mapping):
            seen: set[str] = set()
            for item in node.entries:
                if item.merged:
                    continue
                if item.key in seen:
                    problems.append(ParseProblem(item.key_span, f"OmegaConf refuses the duplicate key '{item.key}' "
                                                                 "(found duplicate key; PyYAML would keep the last one)"))
                seen.add(item.key)
    return problems
