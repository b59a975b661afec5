"""DS202 ignored-key."""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix, Severity
from dslint.documents.model import Entry, Mapping
from dslint.documents.edits import rename_key
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules import _deepspeed_schema as dss
from dslint.rules.deepspeed_keys._common import close_keys, closest_key, did_you_mean


def _comment_key(key: str) -> bool:
    """`_comment`, `//`, `#note`: keys people use as comments in JSON."""
    return key.startswith(("_", "#", "//"))


def _where(path: tuple) -> str:
    return f"in {ds.dotted(path)}" if path else "at the top level"


@rule("DS202", "ignored-key", severity="warning", target="deepspeed", fix="unsafe")
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
            candidates = close_keys(item.key, known, section)
            fix = None
            single = closest_key(item.key, known, section)
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


def _hint(item: Entry, candidates: list[str], path: tuple, top_known: dict) -> str | None:
    if candidates:
        return did_you_mean(candidates)
    if not path:
        for section_name in ("fp16", "bf16", "zero_optimization", "optimizer", "scheduler"):
            if item.key.startswith(section_name + "_") and item.key[len(section_name) + 1 :]:
                return f"DeepSpeed reads '{section_name}': {{\"{item.key[len(section_name) + 1:]}\": ...}}"
        if isinstance(item.value, Mapping):
            inner = [k for k in item.value.keys() if k in top_known]
            if inner:
                return f"{', '.join(repr(k) for k in inner)} {'is' if len(inner) == 1 else 'are'} read only at the top level"
    return None
