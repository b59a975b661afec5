"""DeepSpeed config keys: unknown, ignored, removed, deprecated and conflicting spellings (DS201-DS205).

Which keys exist comes from the shipped schema, generated from DeepSpeed's own pydantic models
and a probe of the keys ``DeepSpeedConfig`` reads with ``dict.get``; when they appeared or went
away comes from ``schemas/deepspeed-versions.json``, judged for every DeepSpeed release the
launch may run with (``_deepspeed_schema.Versions``: the ``deepspeed-version`` setting, the nearest pin,
or every release dslint knows). A finding that holds in only some of them is info naming them.
"""

from __future__ import annotations

import difflib

from dslint.diagnostics import Edit, Finding, Fix, Related, Severity
from dslint.documents.model import Entry, Mapping, Scalar
from dslint.documents.edits import remove_json_entry, rename_key
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules import _deepspeed_schema as dss


def _comment_key(key: str) -> bool:
    """`_comment`, `//`, `#note`: keys people use as comments in JSON."""
    return key.startswith(("_", "#", "//"))


def _canonical(section: dict, key: str) -> str:
    return section.get("properties", {}).get(key, {}).get("x-dslint-alias-of", key)


def _candidates(key: str, known: dict[str, dict], section: dict) -> list[str]:
    """Close known keys, one per field (aliases count once), best first."""
    return [name for name, _ in _scored(key, known, section)]


_SCORED: dict[tuple, tuple] = {}


def _scored(key: str, known: dict[str, dict], section: dict) -> list[tuple[str, float]]:
    """The close known keys and their similarity; memoized: a config that many launches use is
    checked once per launch, and difflib is the costly part."""
    cache_key = (key, id(known), id(section))
    hit = _SCORED.get(cache_key)
    if hit is not None and hit[0] is known and hit[1] is section:
        return hit[2]
    if len(_SCORED) > 4096:
        _SCORED.clear()
    out = _score(key, known, section)
    _SCORED[cache_key] = (known, section, out)
    return out


def _score(key: str, known: dict[str, dict], section: dict) -> list[tuple[str, float]]:
    names = [k for k, spec in known.items() if not spec.get("x-dslint-removed")]
    lowered = {k.lower(): k for k in names}
    normalised = key.lower().replace("-", "_").replace(" ", "_")
    if normalised in lowered:
        return [(lowered[normalised], 1.0)]
    scored = []
    for name in names:
        ratio = difflib.SequenceMatcher(None, key, name).ratio()
        if ratio >= 0.75:
            scored.append((name, ratio))
    scored.sort(key=lambda pair: -pair[1])
    out, fields = [], set()
    for name, ratio in scored:
        field = _canonical(section, name)
        if field in fields:
            continue
        fields.add(field)
        out.append((name, ratio))
    return out[:3]


def _single(key: str, known: dict[str, dict], section: dict) -> str | None:
    """The one candidate clearly closer than any other (0.05 ahead), or None."""
    scored = _scored(key, known, section)
    if not scored:
        return None
    if len(scored) == 1 or scored[0][1] - scored[1][1] >= 0.05:
        return scored[0][0]
    return None


def _where(path: tuple) -> str:
    return f"in {ds.dotted(path)}" if path else "at the top level"


@rule("DS201", "unknown-key", severity="error", target="deepspeed", fixable=True)
def unknown_key(use, context):
    """A key DeepSpeed does not know, inside a section that rejects unknown keys.

    ## What it checks
    The sections DeepSpeed validates with pydantic models that forbid extra keys
    (`extra="forbid"`, deepspeed/runtime/config_utils.py:105-113): `zero_optimization` and its
    `offload_param`, `offload_optimizer`, `zenflow` and `leaf_module`, `fp16`, `bf16`,
    `tensorboard`, `wandb`, `csv_monitor`, `comet`, `comms_logger`, `hybrid_engine`, `compile`,
    `timers.throughput`, `tensor_parallel` and `weight_quantization`. Both spellings of a
    field with an alias are accepted (`stage3_prefetch_bucket_size` and
    `prefetch_bucket_size`).

    Every DeepSpeed release the launch may run with is judged (the `deepspeed-version`
    setting, the nearest pin, or every release dslint knows when nothing pins deepspeed): a
    key introduced later (`zero_optimization.compute_grad_norm`, new in 0.19.7) is reported
    when a pin allows releases before it, and `fp16`/`bf16` only reject unknown keys since
    0.17.1, so an unknown key there is a warning (raised by some releases, ignored by the rest)
    unless every allowed release raises. Where only some releases fail, the finding is info
    that names them.

    A misspelled key whose value is exactly `"auto"` is not reported here: DeepSpeed drops
    `"auto"` values before validation (config_utils.py:54-57), so `ignored-key` reports it.

    ## Why it matters
    DeepSpeed raises `ValidationError: ... Extra inputs are not permitted` (`extra fields not
    permitted` before 0.15.0, which used pydantic 1: config_utils.py `class Config`) when it
    parses the config: at `deepspeed.initialize`, or under HF ZeRO-3 already in
    `from_pretrained`. Keys that only newer DeepSpeed versions know fail the same way on older
    installs (OpenRLHF/OpenRLHF#63: `zero_hpz_partition_size` on DeepSpeed 0.9.5; the ZeRO++ keys
    came in 0.10.0). Which release brought each key is in schemas/deepspeed-versions.json, back
    to 0.9.0 (from the releases' sdists, dslint/schemagen/deepspeed_history.py).

    ## Example
    ```json
    {"zero_optimization": {"stage": 3, "stage3_param_persitence_threshold": 1e5}}
    ```
    Use instead:
    ```json
    {"zero_optimization": {"stage": 3, "stage3_param_persistence_threshold": 1e5}}
    ```

    ## Fix safety
    When one known field is clearly the closest to the unknown key (difflib similarity ≥ 0.75
    and 0.05 ahead of the next field, the aliases of one field counting once) and that field is
    not already set, the fix renames the key: safe, because the config cannot load as written and the value is kept. Otherwise the
    closest keys are only suggested.
    """
    versions = dss.Versions(use, context)
    for path, mapping, section, strict in dss.sections(use.config, versions):
        if not strict:
            continue
        known = dss.known_keys(section, versions, path)
        all_props = section.get("properties", {})
        read = dss.reading(path, section, versions)[0]
        for item in mapping.entries:
            if ds.is_auto(item.value):
                continue
            where = ds.dotted(path)
            if item.key in all_props:
                introduced = dss.introduced_in(path + (item.key,))
                failing = [v for v in versions.before(introduced) if v in strict]
                finding = Finding(
                    item.key_span,
                    f"'{item.key}' is not a field of {where} before DeepSpeed {introduced}",
                    note=f"{versions.label} raises {dss.extra_forbidden(versions, failing)} when it parses the config",
                )
                if failing and (found := versions.qualify(finding, failing, spelling=True)) is not None:
                    yield found
                continue
            candidates = _candidates(item.key, known, section)
            raises = versions.judge(strict)
            message = f"unknown key '{item.key}' in {where}"
            fix = None
            single = _single(item.key, known, section)
            if single is not None and single not in mapping and not _field_set(mapping, section, single):
                fix = (Fix.safe if raises.everywhere else Fix.unsafe)(f"Rename '{item.key}' to '{single}'", rename_key(item, single))
            help = _did_you_mean(candidates) if fix is None else None
            if not raises.everywhere and len(read) == len(versions.key):
                # every candidate rejects or ignores it: wrong everywhere, an error only where it raises
                yield Finding(item.key_span, message, fix=fix, severity=Severity.WARNING, help=help,
                              note=f"{raises.where()} raises; older ones ignore it: {raises.candidates.why()}")
                continue
            note = f"{versions.label} raises {dss.extra_forbidden(versions, raises.failing)} (pydantic, extra=forbid) when it parses the config"
            found = versions.qualify(Finding(item.key_span, message, fix=fix, note=note, help=help), strict)
            if found is not None:
                yield found


def _field_set(mapping: Mapping, section: dict, name: str) -> bool:
    field = _canonical(section, name)
    return any(_canonical(section, key) == field for key in mapping.keys())


@rule("DS202", "ignored-key", severity="warning", target="deepspeed", fixable=True)
def ignored_key(use, context):
    """A key DeepSpeed ignores silently: unknown at the top level or in a section read with `dict.get`.

    ## What it checks
    Top-level keys, and keys of the sections DeepSpeed reads with `dict.get`
    (`activation_checkpointing`, `flops_profiler`, `aio`, `autotuning`, `checkpoint`,
    `data_types`, `data_efficiency`, `torch_autocast`, `expert_parallel`, `optimizer`,
    `scheduler`, `timers`), that DeepSpeed never reads. Sections whose keys are passed on to
    code that reads them later (`optimizer.params`, `scheduler.params`, `pipeline`,
    `checkpoint`, `autotuning`, the blocks inside `data_efficiency`) are not checked, nor keys
    written as comments (`_comment`, `//`, `#...`). Keys introduced in a later release than a
    pin allows (e.g. `gradient_allreduce_op`, new in 0.19.6) are reported with that release
    (info when the pin allows newer releases too). A misspelled key with the value `"auto"` inside a validated section is reported
    here too: DeepSpeed drops `"auto"` values before validation (config_utils.py:54-57).
    A top-level key that the launched program's own files look up in a dict (`cfg["lora"]`,
    `cfg.get("precision")`, `"lora" in cfg`) is not reported: the project may read the JSON too.
    For a config no launch reaches, or whose launch names a program that could not be read, there
    is no program to ask: a top-level key that any Python
    file of the repository looks up by that literal name (`.get("k")`, `["k"]`, `"k" in x`,
    `.pop("k")`, on any expression; vendored, virtualenv and `node_modules` folders skipped) is
    info, naming the file and line, not a warning.

    ## Why it matters
    `DeepSpeedConfig` has no unknown-key check at the top level (deepspeed/runtime/config.py:482-588):
    `"zero_optimisation": {"stage": 3}` trains with ZeRO disabled and `"fp16_enabled": true`
    trains in fp32, without a warning. In `activation_checkpointing` the key is
    `partition_activations` (the section's own docstring says `partitioned_activations`).

    ## Example
    ```json
    {"zero_optimisation": {"stage": 3}}
    ```
    Use instead:
    ```json
    {"zero_optimization": {"stage": 3}}
    ```

    ## Fix safety
    Renaming to the single close known key is offered as an unsafe fix: it changes what the
    launch does (the setting starts to take effect).
    """
    versions = dss.Versions(use, context)
    top_known = dss.known_keys(dss.schema(), versions, ())
    for path, mapping, section, strict in dss.sections(use.config, versions):
        if not strict and path not in dss.LAX_CHECKED:
            continue
        known = dss.known_keys(section, versions, path)
        all_props = section.get("properties", {})
        for item in mapping.entries:
            if strict:
                if item.key not in known and ds.is_auto(item.value):
                    found = versions.qualify(_auto_ignored(item, path), strict)
                    if found is not None:
                        yield found
                continue
            if _comment_key(item.key) or _handled_elsewhere(path, item.key):
                continue
            if item.key in all_props:
                introduced = dss.introduced_in(path + (item.key,))
                finding = Finding(item.key_span, f"{versions.label} ignores '{item.key}' {_where(path)}",
                                  note=f"it was introduced in DeepSpeed {introduced}")
                if (found := versions.qualify(finding, versions.before(introduced), spelling=True)) is not None:
                    yield found
                continue
            if _project_reads(use, path, item.key) is not None:
                continue  # the launched program's own code looks the key up: not ignored by the run
            reader = _repository_reads(use, context, path, item.key)
            if reader is not None:
                yield Finding(item.key_span, f"DeepSpeed ignores '{item.key}' {_where(path)}; the project's code may read it",
                              severity=Severity.INFO,
                              note=f"{reader.where()} looks up a '{item.key}' key; if that is this file's dict, the key has an effect")
                continue
            candidates = _candidates(item.key, known, section)
            fix = None
            single = _single(item.key, known, section)
            if single is not None and single not in mapping:
                fix = Fix.unsafe(f"Rename '{item.key}' to '{single}' (the setting starts to take effect)", rename_key(item, single))
            yield Finding(item.key_span, f"DeepSpeed silently ignores '{item.key}' {_where(path)}", fix=fix,
                          help=_hint(item, candidates, path, top_known) if fix is None else None)


def _project_reads(use, path: tuple, key: str):
    """Evidence that the launched program's own files look ``key`` up, for a top-level key of a
    config the launch names (the project may open the JSON itself: fmengine reads `precision`
    and `lora` from the dict it passes to deepspeed.initialize)."""
    if path or use.launch is None:
        return None
    facts = getattr(getattr(use.launch, "program", None), "facts", None)
    return facts.keys_read.get(key) if facts is not None else None


def _repository_reads(use, context, path: tuple, key: str):
    """For a top-level key of a config no launch reaches, or whose launch names a program that
    could not be read (missing, unparseable, outside the repository): where the repository's own
    Python looks a key of that name up (dslint.evidence.project_keys), or None. There is no program to ask,
    so any lookup by the literal name counts as a possible reader."""
    if path:
        return None
    if use.launch is not None:
        program = getattr(use.launch, "program", None)
        if program is None or program.established or program.facts is not None:
            return None  # the program was read (it answers) or is a known framework's
    import os

    from dslint.evidence.project_keys import ProjectKeys
    from dslint.files.roots import search_root

    memo = getattr(context, "memo", None)
    keys = memo.get("project_keys") if memo is not None else None
    if keys is None:
        keys = ProjectKeys()
        if memo is not None:
            memo["project_keys"] = keys
    run_root = getattr(context.settings, "root", None)
    folder = os.path.dirname(os.path.abspath(use.document.path))
    return keys.reader(search_root(folder, os.path.abspath(run_root) if run_root is not None else None), key)


def _auto_ignored(item: Entry, path: tuple) -> Finding:
    return Finding(
        item.key_span,
        f"unknown key '{item.key}' in {ds.dotted(path)} with the value \"auto\" is ignored silently",
        note='DeepSpeed drops "auto" values before validating the section, and HF and accelerate fill no such key',
    )


def _handled_elsewhere(path: tuple, key: str) -> bool:
    """deprecated-key reports renamed keys (a valid key before the rename)."""
    return bool(dss.key_history(ds.dotted(path + (key,))).get("renamed_to"))


def _did_you_mean(candidates: list[str]) -> str | None:
    return "did you mean " + " or ".join(f"'{c}'" for c in candidates[:3]) + "?" if candidates else None


def _hint(item: Entry, candidates: list[str], path: tuple, top_known: dict) -> str | None:
    if candidates:
        return _did_you_mean(candidates)
    if not path:
        for section_name in ("fp16", "bf16", "zero_optimization", "optimizer", "scheduler"):
            if item.key.startswith(section_name + "_") and item.key[len(section_name) + 1 :]:
                return f"DeepSpeed reads '{section_name}': {{\"{item.key[len(section_name) + 1:]}\": ...}}"
        if isinstance(item.value, Mapping):
            inner = [k for k in item.value.keys() if k in top_known]
            if inner:
                return f"{', '.join(repr(k) for k in inner)} {'is' if len(inner) == 1 else 'are'} read only at the top level"
    return None


@rule("DS203", "removed-key", severity="error", target="deepspeed", fixable=True)
def removed_key(use, context):
    """A key DeepSpeed has removed: any presence raises, even `{"enabled": false}`.

    ## What it checks
    The removed-feature tables of deepspeed/runtime/config.py:80-141
    (`_REMOVED_TOP_LEVEL_CONFIG_KEYS`, `_REMOVED_ZERO_CONFIG_KEYS`): top-level `nebula`,
    `compression_training`, `amp`, `quantize_training`, `sparse_gradients`, `eigenvalue`,
    `sparse_attention`, `elasticity`, `graph_harvesting`, `curriculum_learning`,
    `progressive_layer_drop`, and `zero_optimization.mics_shard_size`,
    `mics_hierarchical_params_gather`, `zeropp_loco_param`. Each is an error when every
    DeepSpeed release the launch may run with is at or after its removal (0.19.7 or 0.19.8),
    and info naming those releases when some are older (nothing pinned: every release dslint
    knows, 0.9.0 on).

    ## Why it matters
    `_reject_removed_config_keys` raises `DeepSpeedConfigError` for the mere presence of the
    key, whatever its value, before anything else is parsed (see deepspeedai/DeepSpeed#8489).

    ## Example
    ```json
    {"train_batch_size": 32, "elasticity": {"enabled": false}}
    ```
    Use instead:
    ```json
    {"train_batch_size": 32}
    ```

    ## Fix safety
    Deleting the key is safe when every allowed release has removed it: DeepSpeed no longer
    implements the feature, and the config does not load with it (unsafe when older releases
    still run the feature). For `curriculum_learning`, moving it under
    `data_efficiency.data_sampling.curriculum_learning` is offered as an unsafe alternative
    (the new section takes its settings per metric under `curriculum_metrics`).
    """
    versions = dss.Versions(use, context)
    config = use.config
    places = [((), config)]
    zero = ds.zero_section(config)
    if zero is not None:
        places.append((("zero_optimization",), zero))
    for path, mapping in places:
        section = dss.section(path) or {}
        for item in mapping.entries:
            spec = section.get("properties", {}).get(item.key, {})
            if not spec.get("x-dslint-removed"):
                continue
            removed_in = dss.key_history(ds.dotted(path + (item.key,))).get("removed") or dss.fmt_version(dss.schema_version())
            failing = versions.since(removed_in)
            if not failing:
                continue
            message = spec.get("x-dslint-removed-message", "").replace(" See https://github.com/deepspeedai/DeepSpeed/issues/8489.", "").strip()
            alternatives = []
            if item.key == "curriculum_learning" and path == () and "data_efficiency" not in config and isinstance(item.value, Mapping):
                moved = '"data_efficiency": {"data_sampling": {"curriculum_learning": ' + item.value.span.text + "}}"
                alternatives.append(Fix.unsafe("Move it to data_efficiency.data_sampling.curriculum_learning (its settings go under curriculum_metrics there)", Edit.replace(item.span, moved)))
            finding = Finding(
                item.key_span,
                f"'{ds.dotted(path + (item.key,))}' was removed in DeepSpeed {removed_in}",
                fix=Fix.safe(f"Remove '{item.key}'", remove_json_entry(mapping, item)),
                alternatives=alternatives,
                note=f"any value raises DeepSpeedConfigError ({message}) [deepspeedai/DeepSpeed#8489]",
            )
            found = versions.qualify(finding, failing)
            if found is not None:
                if found.severity is not None:  # older versions still run the feature: removing it is a choice
                    found.fix = Fix.unsafe(finding.fix.title, *finding.fix.edits)
                yield found


# Deprecated ZeRO fields: replacement and how to rewrite them without changing behaviour.
_ZERO_DEPRECATED = {
    "cpu_offload": ("offload_optimizer", '{"device": "cpu"}'),
    "cpu_offload_param": ("offload_param", '{"device": "cpu"}'),
    "cpu_offload_use_pin_memory": (None, None),
    "stage3_gather_fp16_weights_on_model_save": ("stage3_gather_16bit_weights_on_model_save", None),
}


@rule("DS204", "deprecated-key", severity="warning", target="deepspeed", fixable=True)
def deprecated_key(use, context):
    """A deprecated spelling or format DeepSpeed still accepts, with a warning or none at all.

    ## What it checks
    - `zero_optimization.cpu_offload` and `cpu_offload_param` (become `offload_optimizer` /
      `offload_param` with `device: cpu`), `cpu_offload_use_pin_memory` (no effect at all) and
      `stage3_gather_fp16_weights_on_model_save` (becomes
      `stage3_gather_16bit_weights_on_model_save`): deepspeed/runtime/zero/config.py:188-219, 287-291,
      processed by config_utils.py:60-97.
    - `"zero_optimization": true/false`, the legacy format: stage 1 (or 0), with the top-level
      `allgather_size` as bucket size (zero/config.py:60-75).
    - Top-level `bfloat16`, the old spelling of `bf16`, read only when `bf16` is absent
      (deepspeed/runtime/precision_config.py:34-38); with both present it is ignored.
    - `aio.thread_count`, renamed `aio.intra_op_parallelism` in 0.16.4; the old key is
      ignored silently since then.

    ## Why it matters
    The old spellings keep working today with a warning in the log, but `aio.thread_count`
    and a `bfloat16` next to `bf16` are ignored without one, and `cpu_offload_use_pin_memory`
    does nothing. Giving a deprecated key together with its replacement is an error
    (`conflicting-keys`).

    ## Example
    ```json
    {"zero_optimization": {"stage": 2, "cpu_offload": true}}
    ```
    Use instead:
    ```json
    {"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}
    ```

    ## Fix safety
    Rewriting `cpu_offload`/`cpu_offload_param` as the section DeepSpeed builds from them,
    renaming `stage3_gather_fp16_weights_on_model_save` and `bfloat16`, removing
    `cpu_offload_use_pin_memory` (no effect) and a `bfloat16` that `bf16` shadows, and
    replacing the legacy boolean with `{"stage": 1}`/`{"stage": 0}` (when there is no
    `allgather_size`) are safe: DeepSpeed does the same. Renaming `aio.thread_count` is unsafe:
    the setting starts to take effect.
    """
    versions = dss.Versions(use, context)
    config = use.config
    zero_node = config.get("zero_optimization")
    if isinstance(zero_node, Scalar) and isinstance(zero_node.value, bool):
        stage = 1 if zero_node.value else 0
        fix = None
        if "allgather_size" not in config:
            fix = Fix.safe(f'Write {{"stage": {stage}}}', Edit.replace(zero_node.span, f'{{"stage": {stage}}}'))
        yield Finding(
            zero_node.span,
            f'"zero_optimization": {str(zero_node.value).lower()} is the deprecated format',
            fix=fix,
            note=f"DeepSpeed reads it as stage {stage}"
            + (" with allgather_bucket_size taken from the top-level allgather_size (default 5e8)" if stage else "")
            + " and logs a deprecation warning",
            help=None if fix is not None else f'write {{"stage": {stage}}}',
        )
    zero = ds.zero_section(config)
    if zero is not None:
        for item in zero.entries:
            if item.key not in _ZERO_DEPRECATED or ds.is_auto(item.value):
                continue
            replacement, value_text = _ZERO_DEPRECATED[item.key]
            if replacement is not None and _replacement_present(zero, replacement):
                continue  # conflicting-keys reports the pair
            yield _zero_deprecated(zero, item, replacement, value_text)
    bf16 = config.entry("bf16")
    old = config.entry("bfloat16")
    if old is not None:
        if bf16 is None:
            yield Finding(
                old.key_span,
                "'bfloat16' is the old spelling of 'bf16'",
                note="DeepSpeed reads it only while 'bf16' is absent",
                fix=Fix.safe("Rename 'bfloat16' to 'bf16'", rename_key(old, "bf16")),
            )
        elif not (isinstance(bf16.value, Scalar) and bf16.value.value is None):
            yield Finding(
                old.key_span,
                "'bfloat16' is ignored because 'bf16' is present",
                note="DeepSpeed reads 'bfloat16' only when 'bf16' is absent (deepspeed/runtime/precision_config.py:34-38)",
                related=[Related("bf16 is read instead", bf16.key_span)],
                fix=Fix.safe("Remove the ignored 'bfloat16'", remove_json_entry(config, old)),
            )
    aio = config.get("aio")
    if isinstance(aio, Mapping):
        for item in aio.entries:
            history = dss.key_history(f"aio.{item.key}")
            new = history.get("renamed_to")
            if not new:
                continue
            new_key = new.split(".")[-1]
            fix = None
            if new_key not in aio:
                fix = Fix.unsafe(f"Rename to '{new_key}' (the setting starts to take effect)", rename_key(item, new_key))
            finding = Finding(
                item.key_span,
                f"'aio.{item.key}' was renamed '{new}' in DeepSpeed {history.get('version')}",
                fix=fix,
                note=f"{versions.label} ignores it silently",
            )
            found = versions.qualify(finding, versions.since(history.get("version")))
            if found is not None:
                yield found


def _replacement_present(zero: Mapping, replacement: str) -> bool:
    section = dss.section(("zero_optimization",)) or {}
    field = _canonical(section, replacement)
    for key in zero.keys():
        if _canonical(section, key) == field and not ds.is_auto(zero.get(key)):
            return True
    return False


def _zero_deprecated(zero: Mapping, item: Entry, replacement: str | None, value_text: str | None) -> Finding:
    key = item.key
    if replacement is None:
        return Finding(
            item.key_span,
            f"'zero_optimization.{key}' is deprecated and has no effect",
            note="DeepSpeed only logs a warning; pinned memory is set with offload_param/offload_optimizer.pin_memory",
            fix=Fix.safe(f"Remove '{key}' (it has no effect)", remove_json_entry(zero, item)),
        )
    if value_text is None:
        return Finding(
            item.key_span,
            f"'zero_optimization.{key}' is deprecated for '{replacement}'",
            note=f"DeepSpeed copies it to '{replacement}' and logs a warning",
            fix=Fix.safe(f"Rename to '{replacement}'", rename_key(item, replacement)),
        )
    value = ds.raw(item.value)
    try:
        on = ds.lax_bool(value) if value is not None else False
    except ds.Invalid:
        on = None
    note = f"DeepSpeed turns it into '{replacement}'"
    if on is True:
        note += f": {value_text} and logs a warning"
        fix = Fix.safe(f'Write "{replacement}": {value_text}', Edit.replace(item.span, f'"{replacement}": {value_text}'))
    elif on is False:
        note += " (off) and logs a warning"
        fix = Fix.safe(f"Remove '{key}' (off is the default)", remove_json_entry(zero, item))
    else:
        fix = None
    return Finding(item.key_span, f"'zero_optimization.{key}' is deprecated for '{replacement}'", fix=fix, note=note)


@rule("DS205", "conflicting-keys", severity="error", target="deepspeed", fixable=True)
def conflicting_keys(use, context):
    """Two spellings of one setting are both given: an alias and its field, or a deprecated key and its replacement.

    ## What it checks
    In the validated sections: a field given under both its name and its alias
    (`prefetch_bucket_size` and `stage3_prefetch_bucket_size`, likewise for the other
    `stage3_*` aliases of deepspeed/runtime/zero/config.py:222-285, `tensor_parallel.tp` and
    `tensor_parallel.tensor_parallel`, `kernel_inject` and `replace_with_kernel_inject`), and a
    deprecated key next to its replacement (`cpu_offload` with `offload_optimizer`,
    `cpu_offload_param` with `offload_param`, `stage3_gather_fp16_weights_on_model_save`
    with `stage3_gather_16bit_weights_on_model_save`). A value of `"auto"` on either side does
    not count: DeepSpeed drops it first.

    ## Why it matters
    pydantic (`populate_by_name=True`) accepts either spelling but not both:
    `prefetch_bucket_size: Extra inputs are not permitted`. A deprecated key with its
    replacement raises `AssertionError: Cannot provide deprecated parameter 'cpu_offload' and
    replacing parameter 'offload_optimizer' together` (deepspeed/runtime/config_utils.py:89-91),
    even when the deprecated value is `false` or `null`.

    ## Example
    ```json
    {"zero_optimization": {"stage": 3, "prefetch_bucket_size": 5e7, "stage3_prefetch_bucket_size": 5e7}}
    ```
    Use instead:
    ```json
    {"zero_optimization": {"stage": 3, "stage3_prefetch_bucket_size": 5e7}}
    ```

    ## Fix safety
    When both spellings hold the same value, removing the unprefixed (or deprecated) one is
    safe. When they differ the removal is unsafe: only you know which value was meant.
    """
    versions = dss.Versions(use, context)
    for path, mapping, section, strict in dss.sections(use.config, versions):
        if not strict:
            continue
        for rule_spec in section.get("allOf", []):
            pair = rule_spec.get("not", {}).get("required", [])
            kind = rule_spec.get("x-dslint-conflict")
            if len(pair) != 2:
                continue
            first, second = (mapping.entry(k) for k in pair)
            if first is None or second is None or ds.is_auto(first.value) or ds.is_auto(second.value):
                continue
            props = section.get("properties", {})
            if kind == "deprecated":
                old, new = (first, second) if props.get(first.key, {}).get("deprecated") else (second, first)
                message = f"deprecated '{old.key}' and its replacement '{new.key}' are both given"
                note = (f"DeepSpeed raises \"Cannot provide deprecated parameter '{old.key}' and replacing parameter ... together\" "
                        "(deepspeed/runtime/config_utils.py:89-91)")
                drop, keep = old, new
            else:
                alias, name = (first, second) if props.get(first.key, {}).get("x-dslint-alias-of") else (second, first)
                message = f"'{name.key}' and its alias '{alias.key}' are both given in {ds.dotted(path)}"
                note = f"pydantic accepts one spelling, so DeepSpeed raises '{name.key}: Extra inputs are not permitted'"
                drop, keep = name, alias
            same = ds.raw(drop.value) == ds.raw(keep.value)
            title = f"Remove '{drop.key}' (keeps '{keep.key}' = {ds.show(keep.value)})"
            fix = Fix.safe(title, remove_json_entry(mapping, drop)) if same else Fix.unsafe(title, remove_json_entry(mapping, drop))
            anchor = drop if drop.key_span.start > keep.key_span.start else keep
            other = keep if anchor is drop else drop
            found = versions.qualify(
                Finding(anchor.key_span, message, related=[Related(f"'{other.key}' is given here", other.key_span)], fix=fix, note=note), strict)
            if found is not None:
                yield found
