"""A look at a file's first bytes: is a large JSON file data rather than a config, and is a file named like a DeepSpeed config?

Datasets, tokenizers and trainer logs are JSON too, and can be hundreds of megabytes; a config
is a few kilobytes. A large JSON file is skipped when its head already shows it is not a
config: a top-level array (DeepSpeed and the trainers read an object), or an object whose
top-level keys in the head are not those of a DeepSpeed config or of training arguments
(classify.classify_json counts the same keys on the whole file). Reading the head of a 20 MB
file costs well under a millisecond (benchmarks/run.py); parsing it all costs seconds.
"""

from __future__ import annotations

import re

from dslint.documents.classify import DEEPSPEED_ONLY_KEYS, DEEPSPEED_SECTION_KEYS, TRAINING_KEYS

HEAD_BYTES = 64 * 1024

# ds_config*.json and *zero*.json: the names DeepSpeed's, HF's and the frameworks' examples give
# their configs (editors' schema mappings use the same globs, see README).
_DEEPSPEED_NAME = re.compile(r"(?:ds_config[^/\\]*|[^/\\]*zero[^/\\]*)\.(?:json|hjson|jsonc)\Z", re.IGNORECASE)
_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[{}\[\]:,]|//|/\*|#|[^\s{}\[\]:,"/#]+|/')
_NOT_COUNTED = frozenset({"fp16", "bf16", "gradient_accumulation_steps"})  # shared by both kinds (classify_json)


def named_like_deepspeed(path: str) -> bool:
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return bool(_DEEPSPEED_NAME.match(name))


def data_json(head: bytes, size: int) -> str | None:
    """Why a JSON file of ``size`` bytes that starts with ``head`` is data and not a config; None if it may be a config.

    Only files larger than their head are judged (a smaller one is parsed whole); anything
    the scan does not follow (hjson comments or quoteless keys, text that is not UTF-8) is
    left to the parser.
    """
    if size <= len(head):
        return None
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    if b"\x00" in head:
        return None
    text = head.decode("utf-8", "ignore")
    megabytes = f"{size / 1e6:.1f} MB"
    keys = _top_level_keys(text)
    if keys == "array":
        return f"a JSON array of {megabytes}: data, not a config (DeepSpeed and the trainers read an object)"
    if keys is None:
        return None
    deepspeed = sum(1 for key, opens in keys if key in DEEPSPEED_ONLY_KEYS or (key in DEEPSPEED_SECTION_KEYS and opens))
    training = sum(1 for key, _ in keys if key in TRAINING_KEYS and key not in _NOT_COUNTED)
    if deepspeed or training >= 2:
        return None
    return f"JSON of {megabytes} with no DeepSpeed or training key at the top of its first {HEAD_BYTES // 1024} KB: data, not a config"


def _top_level_keys(text: str):
    """'array', the (key, value opens an object) pairs at the top level of an object, or None when unsure."""
    tokens = _TOKEN.finditer(text)
    first = next(tokens, None)
    if first is None:
        return None
    if first.group() == "[":
        return "array"
    if first.group() != "{":
        return None  # an hjson root without braces, or not JSON at all: the parser decides
    keys: list[tuple[str, bool]] = []
    depth = 1
    expect_key = True
    pending: str | None = None
    for match in tokens:
        token = match.group()
        if token in ("//", "/*", "#", "/"):
            return None  # comments: hjson, which the parser reads
        if depth == 1:
            if pending is not None:
                if token == ":":
                    continue
                keys.append((pending, token == "{"))
                pending = None
            elif expect_key:
                if token == "}":
                    return keys
                if not token.startswith('"'):
                    return None  # a quoteless key: hjson
                pending = token[1:-1]
                expect_key = False
                continue
            if token == ",":
                expect_key = True
                continue
        if token in ("{", "["):
            depth += 1
        elif token in ("}", "]"):
            depth -= 1
            if depth == 0:
                return keys
    return keys
