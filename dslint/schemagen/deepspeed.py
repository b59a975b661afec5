"""Generate ``schemas/deepspeed.schema.json`` from an installed ``deepspeed``.

Usage::

    python -m dslint.schemagen.deepspeed            # (re)write the schema
    python -m dslint.schemagen.deepspeed --check    # exit 1 if the file is stale
    python -m dslint.schemagen.deepspeed --output -  # print to stdout

The output is a JSON Schema (draft 2020-12) of a DeepSpeed config dict, with
``x-dslint-*`` annotations for the things plain JSON Schema cannot say.

Where the facts come from
-------------------------
* **Strict sections** (pydantic models with ``extra="forbid"``): the models are
  imported from deepspeed and their ``model_fields`` are walked recursively
  (types, defaults, bounds, aliases, deprecations, validators).  Only the list
  of models and the config key each one is read from is written by hand
  (:data:`STRICT_SECTIONS`, :data:`STRICT_CONTAINERS`).
* **dict.get keys** (top-level scalars and the lax sections): found by running
  ``DeepSpeedConfig`` on a recording dict that logs every key DeepSpeed looks
  up, with the default it passes to ``.get``.  Keys that are only tested for
  presence are then re-run with a value present (a dict, then a string) until
  no new key turns up, so nested lax sections are discovered too.
* **Removed keys**: the tables of removed keys in ``deepspeed/runtime/config.py``.

Only this generator imports deepspeed.  The linter reads the committed JSON.

The parts, one module each: :mod:`._deepspeed_models` (the pydantic model walk),
:mod:`._deepspeed_probe` (the recording dict and the probe), :mod:`._deepspeed_values` (the
values DeepSpeed's code accepts for unchecked keys), :mod:`._deepspeed_common` (shared helpers);
this module holds the hand-listed facts and puts the schema together.

Custom keywords (all optional, all prefixed ``x-dslint-``)
----------------------------------------------------------
``x-dslint-deepspeed-version``  root: the deepspeed version the file was made from.
``x-dslint-lax``                object: DeepSpeed ignores unknown keys here silently.
``x-dslint-strict``             object: pydantic model; unknown keys raise.
``x-dslint-drops-auto``         model: a value of exactly ``"auto"`` is removed before
                                validation, so the field default applies.
``x-dslint-unchecked``          key read with ``dict.get``; DeepSpeed does not check
                                its type (``type`` is what the default suggests).
``x-dslint-alias-of``           this property is another spelling of the named one.
``x-dslint-aliases``            the other spellings of this property.
``x-dslint-alias-conflict``     ``"error"``: giving both spellings raises;
                                ``"ignored"``: the alias is ignored when both are given.
``x-dslint-replaced-by``        deprecated key: the key that replaces it.
``x-dslint-set-new-param``      deprecated key: whether its value is copied to the
                                replacement (false: the old key has no effect).
``x-dslint-removed``            key whose mere presence raises ``DeepSpeedConfigError``.
``x-dslint-removed-message``    the error message DeepSpeed raises for it.
``x-dslint-values``             values DeepSpeed's code accepts for an unchecked key.
``x-dslint-case-insensitive``   ``x-dslint-values`` are compared case-insensitively.
``x-dslint-validators``         names of pydantic validators with extra checks.
``x-dslint-python-type``        the Python type when it has no JSON equivalent.
``x-dslint-default-python``     repr of a default that JSON cannot hold.
``x-dslint-source``             ``deepspeed/<file>.py:<line>`` where the key is read/declared.
``x-dslint-values-source``      where the accepted values (``x-dslint-values``) come from.
``x-dslint-presence-checked``   DeepSpeed tests the key for presence (no ``.get`` default).
``x-dslint-passthrough``        the section's keys are handed on as given.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dslint.schemagen._deepspeed_common import find_line, import_attr, type_of_default
from dslint.schemagen._json import jsonable
from dslint.schemagen._deepspeed_models import ModelWalker
from dslint.schemagen._deepspeed_probe import Read, probe_reads, under
from dslint.schemagen._deepspeed_values import VALIDATED_KEYS

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "schemas" / "deepspeed.schema.json"
DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "urn:dslint:schema:deepspeed-config"

# --------------------------------------------------------------------------
# Hand-listed facts: which pydantic models exist and where they are read from.
# Everything inside a model is discovered from the model itself.
# --------------------------------------------------------------------------

#: config path -> (module, class).  The path is a dotted key path in the config.
STRICT_SECTIONS: dict[str, tuple[str, str]] = {
    "zero_optimization": ("deepspeed.runtime.zero.config", "DeepSpeedZeroConfig"),
    "fp16": ("deepspeed.runtime.precision_config", "DeepSpeedFP16Config"),
    "bf16": ("deepspeed.runtime.precision_config", "DeepSpeedBF16Config"),
    "comms_logger": ("deepspeed.comm.config", "CommsLoggerConfig"),
    "hybrid_engine": ("deepspeed.runtime.config", "HybridEngineConfig"),
    "compile": ("deepspeed.compile.config", "CompileConfig"),
    "tensor_parallel": ("deepspeed.runtime.tensor_parallel.config", "TPTrainingConfig"),
    "weight_quantization": ("deepspeed.inference.config", "WeightQuantConfig"),
    "timers.throughput": ("deepspeed.utils.config", "DeepSpeedThroughputTimerConfig"),
}

#: Models whose *fields* are each a top-level section (monitor backends).
STRICT_CONTAINERS: list[tuple[str, str]] = [
    ("deepspeed.monitor.config", "DeepSpeedMonitorConfig"),
]

#: Top-level aliases read by plain code: alias -> (canonical key, constant holding
#: the alias name, what happens when both are given).
TOP_LEVEL_ALIASES: dict[str, tuple[str, tuple[str, str], str]] = {
    "bfloat16": ("bf16", ("deepspeed.runtime.precision_config", "BFLOAT16_OLD"), "ignored"),
}

#: Tables of removed keys: (config path of the section, module, attribute).
REMOVED_TABLES: list[tuple[str, str, str]] = [
    ("", "deepspeed.runtime.config", "_REMOVED_TOP_LEVEL_CONFIG_KEYS"),
    ("zero_optimization", "deepspeed.runtime.config", "_REMOVED_ZERO_CONFIG_KEYS"),
]

#: Keys read outside ``DeepSpeedConfig._initialize_params`` (so the probe cannot
#: see them): path -> (default, module whose source reads it, text to locate, note).
EXTRA_READS: dict[str, tuple[Any, str, str, str]] = {
    "sequence_parallel_size": (
        None, "deepspeed.runtime.config", '"sequence_parallel_size"',
        "Read raw: divides the world size used by the batch-size check when no mpu is given; "
        "with data_parallel_size it builds a DP x SP mesh in deepspeed.initialize."),
    "data_parallel_size": (
        None, "deepspeed", '"data_parallel_size"',
        "Read raw by deepspeed.initialize together with sequence_parallel_size to build a mesh."),
    "allgather_size": (
        5e8, "deepspeed.runtime.zero.config", '"allgather_size"',
        "Read only when zero_optimization is a boolean (legacy format)."),
    "pipeline.use_reentrant": (
        None, "deepspeed.runtime.pipe.engine", "'use_reentrant'",
        "Read by the pipeline engine; None means true."),
}

#: Sections whose defaults come from a function returning the default dict.
DEFAULT_DICT_PROVIDERS: dict[str, tuple[str, str]] = {
    "pipeline": ("deepspeed.runtime.config", "get_pipeline_config"),
}

#: Sections DeepSpeed hands on whole without reading their keys: path -> note.
OPAQUE_SECTIONS: dict[str, str] = {
    "datastates_ckpt": "The whole dict is handed to the DataStates checkpoint engine.",
    "optimizer.params": "Passed as keyword arguments to the optimizer constructor.",
    "scheduler.params": "Passed as keyword arguments to the LR scheduler constructor.",
}


# --------------------------------------------------------------------------
# Assembly
# --------------------------------------------------------------------------


def _removed_messages() -> dict[tuple[str, ...], tuple[str, str | None]]:
    out: dict[tuple[str, ...], tuple[str, str | None]] = {}
    for section, modname, attr in REMOVED_TABLES:
        table = import_attr(modname, attr, {}) or {}
        prefix = tuple(section.split(".")) if section else ()
        for key, message in table.items():
            out[prefix + (key,)] = (str(message), find_line(modname, f'"{key}"'))
    return out


def _replacement_from_message(message: str) -> list[str]:
    match = re.search(r"\bUse (.*?) instead", message)
    return re.findall(r"'([A-Za-z0-9_.]+)'", match.group(1)) if match else []


def _removed_schema(path: tuple[str, ...], message: str, source: str | None) -> dict:
    schema: dict[str, Any] = {
        "not": {},
        "deprecated": True,
        "x-dslint-removed": True,
        "x-dslint-removed-message": message,
        "description": f"Removed: any value of {'.'.join(path)} raises DeepSpeedConfigError at parse time.",
    }
    replacements = _replacement_from_message(message)
    if replacements:
        schema["x-dslint-replaced-by"] = replacements[0] if len(replacements) == 1 else replacements
    if source:
        schema["x-dslint-source"] = source
    return schema


def _unchecked_schema(path: tuple[str, ...], read: Read | None) -> dict:
    schema: dict[str, Any] = {
        "x-dslint-unchecked": True,
        "description": f"{'.'.join(path)}: read with dict.get; DeepSpeed does not type-check it.",
    }
    defaults = [d for d in (read.defaults if read else []) if not isinstance(d, dict)]
    chosen = next((d for d in defaults if d is not None), None)
    if defaults:
        schema["default"] = chosen
        if len(defaults) > 1:
            schema["x-dslint-defaults"] = defaults
        kind = None if chosen == "auto" else type_of_default(chosen)  # "auto" is a sentinel
        if kind:
            schema["type"] = "number" if kind == "integer" and isinstance(chosen, float) else kind
    if read is not None and read.source:
        schema["x-dslint-source"] = read.source
    if read is not None and not defaults:
        schema["x-dslint-presence-checked"] = True
    validated = VALIDATED_KEYS.get(".".join(path))
    if validated is not None:
        extra = {k: v for k, v in validated().items() if v is not None}
        if "anyOf" in extra:
            schema.pop("type", None)
        schema.update(extra)
    return schema


def _lax_object(path: tuple[str, ...], read: Read | None) -> dict:
    schema: dict[str, Any] = {
        "type": "object",
        "additionalProperties": True,
        "x-dslint-lax": True,
        "properties": {},
        "description": f"{'.'.join(path)}: lax section read with dict.get; unknown keys are ignored silently.",
    }
    if read is not None and read.source:
        schema["x-dslint-source"] = read.source
    if read is not None and "iter" in read.kinds:
        schema["x-dslint-passthrough"] = True
        schema["description"] += " Every key is passed on as given."
    return schema


def _insert(root_props: dict, path: tuple[str, ...], leaf: dict, lax_defs: dict) -> None:
    """Place ``leaf`` at ``path`` inside lax objects, creating them as needed."""
    props = root_props
    for depth in range(len(path) - 1):
        key = path[depth]
        node = props.get(key)
        if node is None:
            raise KeyError(path[:depth + 1])
        if "$ref" in node and node["$ref"].startswith("#/$defs/lax."):
            node = lax_defs[node["$ref"][len("#/$defs/"):]]
        props = node.setdefault("properties", {})
    props.setdefault(path[-1], leaf)


@dataclass
class _Assembly:
    """What the schema is put together from (the models, the probe's reads) and what it holds so far."""

    walker: ModelWalker
    strict: dict[tuple[str, ...], type]  # config path -> pydantic model
    aliases: dict[str, tuple[str, str]]  # top-level alias -> (canonical key, conflict)
    strict_paths: set[tuple[str, ...]]
    removed: dict[tuple[str, ...], tuple[str, str | None]]
    reads: dict[tuple[str, ...], Read]
    section_paths: set[tuple[str, ...]]
    properties: dict[str, dict] = field(default_factory=dict)
    lax_defs: dict[str, dict] = field(default_factory=dict)
    sections_index: dict[str, dict] = field(default_factory=dict)


def _strict_models() -> dict[tuple[str, ...], type]:
    """Config path -> pydantic model of every strict section this deepspeed has."""
    strict: dict[tuple[str, ...], type] = {}
    for dotted, (modname, cls) in STRICT_SECTIONS.items():
        model = import_attr(modname, cls)
        if model is not None:
            strict[tuple(dotted.split("."))] = model
    for modname, cls in STRICT_CONTAINERS:
        container = import_attr(modname, cls)
        for fname, model_field in (container.model_fields.items() if container is not None else []):
            ann = model_field.annotation
            if isinstance(ann, type) and hasattr(ann, "model_fields"):
                strict[(model_field.alias or fname,)] = ann
    return strict


def _top_level_aliases(strict: dict[tuple[str, ...], type]) -> dict[str, tuple[str, str]]:
    """Alias as this deepspeed spells it -> (canonical key, conflict), for strict canonical keys."""
    aliases: dict[str, tuple[str, str]] = {}
    for alias, (canonical, (modname, attr), conflict) in TOP_LEVEL_ALIASES.items():
        name = import_attr(modname, attr, alias)
        if (canonical,) in strict:
            aliases[name] = (canonical, conflict)
    return aliases


def _require_strict_reads(strict_paths: set[tuple[str, ...]], reads: dict[tuple[str, ...], Read],
                          version: str) -> None:
    """A hand-listed strict section the probe never saw read is a stale list: stop."""
    for path in strict_paths:
        if path not in reads:
            raise RuntimeError(f"deepspeed {version} never reads '{'.'.join(path)}'; "
                               "update STRICT_SECTIONS in dslint/schemagen/deepspeed.py")


def _strict_prop(asm: _Assembly, path: tuple[str, ...], model: type) -> dict:
    prop = asm.walker.ref(model)
    prop["x-dslint-strict"] = True
    prop["description"] = f"{'.'.join(path)}: strict section ({model.__name__})."
    read = asm.reads.get(path)
    if read is not None and read.source:
        prop["x-dslint-source"] = read.source
    asm.sections_index[".".join(path)] = {"kind": "strict", "def": asm.walker.walk(model)}
    return prop


def _strict_leaf(asm: _Assembly, path: tuple[str, ...]) -> dict:
    leaf = _strict_prop(asm, path, asm.strict[path])
    if path == ("zero_optimization",):  # legacy boolean format, see EXTRA_READS
        leaf = {"anyOf": [leaf, {"type": "boolean", "deprecated": True,
                                 "description": "Legacy format: true means stage 1, false stage 0."}],
                "x-dslint-strict": True, "description": leaf["description"]}
    return leaf


def _alias_leaf(asm: _Assembly, alias: str) -> dict:
    canonical, conflict = asm.aliases[alias]
    leaf = _strict_prop(asm, (alias,), asm.strict[(canonical,)])
    leaf["x-dslint-alias-of"] = canonical
    leaf["x-dslint-alias-conflict"] = conflict
    leaf["description"] = f"{alias}: old spelling of {canonical}; read only when {canonical} is absent."
    asm.sections_index[alias]["alias-of"] = canonical
    return leaf


def _lax_ref(asm: _Assembly, key: str, obj: dict) -> dict:
    """Store a top-level lax section in ``$defs`` and return the property that refers to it."""
    name = f"lax.{key}"
    asm.lax_defs[name] = obj
    leaf = {"$ref": f"#/$defs/{name}", "x-dslint-lax": True, "description": obj["description"]}
    if obj.get("x-dslint-source"):
        leaf["x-dslint-source"] = obj["x-dslint-source"]
    asm.sections_index[key] = {"kind": "lax", "def": name}
    return leaf


def _is_section(asm: _Assembly, path: tuple[str, ...]) -> bool:
    """Keys are read inside ``path``, or a strict section sits below it."""
    return path in asm.section_paths or any(p[:len(path)] == path for p in asm.strict_paths if len(p) > len(path))


def _probed_leaf(asm: _Assembly, path: tuple[str, ...]) -> dict:
    read = asm.reads.get(path)
    if path in asm.strict:
        return _strict_leaf(asm, path)
    if len(path) == 1 and path[0] in asm.aliases:
        return _alias_leaf(asm, path[0])
    if _is_section(asm, path):
        obj = _lax_object(path, read)
        return _lax_ref(asm, path[0], obj) if len(path) == 1 else obj
    return _unchecked_schema(path, read)


def _place_probed(asm: _Assembly) -> None:
    """The top level and the lax sections from the probe; strict sections nested in lax ones
    (timers.throughput) too. Keys inside a strict section come from its model, not from here."""
    for path in sorted(set(asm.reads) | asm.section_paths, key=lambda p: (len(p), p)):
        if not path or (under(path, asm.strict_paths) and path not in asm.strict_paths):
            continue
        if path in asm.removed:
            continue
        leaf = _probed_leaf(asm, path)
        if len(path) == 1:
            asm.properties.setdefault(path[0], leaf)
        else:
            _insert(asm.properties, path, leaf, asm.lax_defs)


def _replace_nested(asm: _Assembly, path: tuple[str, ...], obj: dict) -> None:
    """Put ``obj`` at ``path`` in place of what is there, keeping the properties found there."""
    parent = asm.properties
    for key in path[:-1]:
        node = parent[key]
        if "$ref" in node:
            node = asm.lax_defs[node["$ref"][len("#/$defs/"):]]
        parent = node.setdefault("properties", {})
    old = parent.get(path[-1], {})
    obj["properties"] = old.get("properties", {})
    parent[path[-1]] = obj


def _place_opaque(asm: _Assembly) -> None:
    """Sections handed on whole (OPAQUE_SECTIONS) that the probe saw read."""
    for dotted, note in OPAQUE_SECTIONS.items():
        path = tuple(dotted.split("."))
        if path not in asm.reads:
            continue
        obj = _lax_object(path, asm.reads[path])
        obj["x-dslint-passthrough"] = True
        obj["description"] += " " + note
        if len(path) == 1:
            asm.properties[path[0]] = _lax_ref(asm, path[0], obj)
        else:
            _replace_nested(asm, path, obj)


def _known_read(default: Any, source: str | None) -> Read:
    """A read the probe cannot see, with its default and where it is."""
    read = Read()
    read.defaults.append(jsonable(default))
    read.source = source
    return read


def _place_default_dicts(asm: _Assembly) -> None:
    """The keys of sections whose defaults come from a function (DEFAULT_DICT_PROVIDERS)."""
    for dotted, (modname, fname) in DEFAULT_DICT_PROVIDERS.items():
        fn = import_attr(modname, fname)
        if fn is None:
            continue
        defaults = fn({})
        src = find_line(modname, f"def {fname}")
        section = tuple(dotted.split("."))
        for key, value in defaults.items():
            path = section + (key,)
            _insert(asm.properties, path, _unchecked_schema(path, _known_read(value, src)), asm.lax_defs)


def _place_extra_reads(asm: _Assembly) -> None:
    """Keys read outside ``DeepSpeedConfig._initialize_params`` (EXTRA_READS)."""
    for dotted, (default, modname, needle, note) in EXTRA_READS.items():
        path = tuple(dotted.split("."))
        leaf = _unchecked_schema(path, _known_read(default, find_line(modname, needle)))
        leaf["description"] += " " + note
        with contextlib.suppress(KeyError):  # its section is not in this deepspeed
            _insert(asm.properties, path, leaf, asm.lax_defs)


def _place_removed(asm: _Assembly) -> None:
    """Removed keys, at the top level, in a strict model, or in a lax section."""
    for path, (message, source) in sorted(asm.removed.items()):
        leaf = _removed_schema(path, message, source)
        if len(path) == 1:
            asm.properties[path[0]] = leaf
        elif path[:-1] in asm.strict:
            asm.walker.defs[asm.walker.walk(asm.strict[path[:-1]])]["properties"][path[-1]] = leaf
        else:
            _insert(asm.properties, path, leaf, asm.lax_defs)


def _stats(asm: _Assembly) -> dict:
    kinds = [v["kind"] for v in asm.sections_index.values()]
    return {
        "strict_sections": kinds.count("strict"),
        "strict_models": asm.walker.stats["models"],
        "strict_fields": asm.walker.stats["fields"],
        "aliases": asm.walker.stats["aliases"] + len(asm.aliases),
        "deprecated_fields": asm.walker.stats["deprecated"],
        "removed_keys": len(asm.removed),
        "lax_sections": kinds.count("lax"),
        "unchecked_top_level_keys": sum(1 for v in asm.properties.values() if v.get("x-dslint-unchecked")),
    }


def _document(asm: _Assembly, version: str) -> dict:
    defs = dict(asm.walker.defs)
    defs.update(asm.lax_defs)
    return {
        "$schema": DRAFT,
        "$id": SCHEMA_ID,
        "title": "DeepSpeed configuration",
        "description": (
            "Generated by dslint.schemagen.deepspeed from an installed deepspeed; do not edit by hand. "
            "Unknown top-level keys are ignored by DeepSpeed (x-dslint-lax). In sections marked "
            "x-dslint-drops-auto a value of exactly \"auto\" is dropped before validation."),
        "type": "object",
        "additionalProperties": True,
        "x-dslint-lax": True,
        "x-dslint-deepspeed-version": version,
        "x-dslint-generator": "dslint.schemagen.deepspeed",
        "properties": asm.properties,
        "$defs": defs,
        "x-dslint-sections": asm.sections_index,
        "x-dslint-stats": _stats(asm),
    }


def build_schema() -> dict:
    """Import deepspeed and build the schema dict (deterministic)."""
    import deepspeed

    strict = _strict_models()
    aliases = _top_level_aliases(strict)
    strict_paths = set(strict) | {(a,) for a in aliases}
    removed = _removed_messages()
    reads, section_paths = probe_reads(strict_paths, set(removed))
    _require_strict_reads(strict_paths, reads, deepspeed.__version__)
    asm = _Assembly(ModelWalker(), strict, aliases, strict_paths, removed, reads, section_paths)
    _place_probed(asm)
    _place_opaque(asm)
    _place_default_dicts(asm)
    _place_extra_reads(asm)
    _place_removed(asm)
    return _document(asm, deepspeed.__version__)


def render(schema: dict) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _diff_summary(old: str, new: str, limit: int = 40) -> str:
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), "committed", "regenerated",
                                      n=0, lineterm=""))
    changed = sum(1 for ln in lines if ln[:1] in "+-" and not ln.startswith(("+++", "---")))
    head = lines[:limit]
    more = f"\n... ({len(lines) - limit} more diff lines)" if len(lines) > limit else ""
    return f"{changed} changed lines\n" + "\n".join(head) + more


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dslint.schemagen.deepspeed", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="regenerate in memory and exit 1 if the committed schema differs")
    parser.add_argument("--output", "-o", default=str(SCHEMA_FILE),
                        help="where to write the schema ('-' for stdout); default: %(default)s")
    args = parser.parse_args(argv)

    try:
        text = render(build_schema())
    except ImportError as exc:
        print(f"error: deepspeed is required to generate the schema: {exc}", file=sys.stderr)
        return 2
    target = Path(args.output)
    if args.check:
        old = target.read_text(encoding="utf-8") if target.exists() else ""
        if old == text:
            print(f"{target}: up to date")
            return 0
        print(f"{target}: out of date; run python -m dslint.schemagen.deepspeed\n{_diff_summary(old, text)}")
        return 1
    if args.output == "-":
        sys.stdout.write(text)
        return 0
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
