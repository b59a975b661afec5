"""FSDP settings that name what the model or the accelerate version does not have (DS714-DS715).

The layer classes each transformers model type builds come from schemas/transformers-layers*.json,
generated from the transformers generations dslint ships (dslint/schemagen/layer_classes.py);
nothing is imported at lint time.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from functools import lru_cache
from pathlib import Path

from dslint.diagnostics import Edit, Finding, Fix, Related, Severity
from dslint.documents.model import Mapping, Scalar, Sequence
from dslint.rule import rule
from dslint.schemas import data_path
from dslint.source import Span

# The generation files and the transformers releases each one describes for certain.
LAYER_FILES = (("transformers-layers-4.45.json", ("4.45.0", "4.46.0")), ("transformers-layers.json", None))
MODEL_ARGS = ("model_name_or_path", "model", "base_model", "model_id", "pretrained_model_name_or_path")


@lru_cache(maxsize=None)
def _generation(filename: str) -> tuple[str, dict[str, frozenset[str]]] | None:
    path = data_path(filename)
    if path is None:
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    return data.get("x-dslint-version", ""), {k: frozenset(v) for k, v in data.get("model_types", {}).items()}


def _generations():
    out = []
    for filename, exact in LAYER_FILES:
        found = _generation(filename)
        if found is not None:
            out.append((found[0], found[1], exact))
    return out


def _fails(model_type: str, name: str, version: str) -> bool | None:
    """Does transformers ``version`` lack a module class ``name`` for ``model_type``? None: cannot tell."""
    from dslint.evidence.versions import compare

    generations = _generations()
    for shipped, classes, exact in generations:
        inside = (exact is not None and compare(version, exact[0]) >= 0 and compare(version, exact[1]) < 0) or \
            (exact is None and compare(version, shipped) == 0)
        if inside:
            return None if model_type not in classes else name not in classes[model_type]
    if compare(version, generations[0][0]) < 0:
        return None  # older than every generation dslint reads (LLaMADecoderLayer was 4.27's name)
    # Between two generations: certain only when both have the model type and both lack the name.
    known = [classes[model_type] for _, classes, _ in generations if model_type in classes]
    if len(known) < len(generations):
        return None
    if all(name not in c for c in known):
        return True
    return False if all(name in c for c in known) else None


def _model(plan):
    """(model_type, Related saying how it was identified, certain) or None."""
    from dslint.evidence.models import local_model_type, model_type_of

    arg = plan.arg(*MODEL_ARGS)
    if arg is None or not isinstance(arg.value, str) or not arg.value.strip():
        return None
    name = arg.value.strip()
    bases = [Path(plan.origin.path).parent] if plan.origin is not None else []
    if plan.training_config is not None and plan.training_config.document is not None:
        bases.insert(0, Path(plan.training_config.document.path).parent)
    local = local_model_type(name, bases)
    if local is not None:
        return local[0], Related(f"model_type {local[0]} in {local[1]} ({arg.origin})", arg.span), True
    if os.path.isabs(name) or name.startswith(("./", "../")) or "$" in name:
        return None  # a local path dslint cannot read: its name says nothing certain
    found = model_type_of(name)
    if found is None:
        return None
    return found, Related(f"{name} is a {found} model, by its name ({arg.origin})", arg.span), False


def _names_in(node, label: str):
    """(name, span, label) of each class named by a string (comma-separated) or a list of strings."""
    if isinstance(node, Sequence):
        for item in node.items:
            yield from _names_in(item, label)
        return
    if not isinstance(node, Scalar) or not isinstance(node.value, str):
        return
    text = node.span.text
    value = node.value
    for match in re.finditer(r"[^,\s\[\]\"']+", value):
        found = text.find(match.group(0))
        span = Span(node.span.source, node.span.start + found, node.span.start + found + len(match.group(0))) \
            if found >= 0 else node.span
        yield match.group(0), span, label


def _arg_names(arg, label: str):
    if arg is None or not isinstance(arg.value, str) or arg.span is None:
        return
    text = arg.span.text
    for match in re.finditer(r"[^,\s\[\]\"']+", arg.value):
        found = text.find(match.group(0))
        span = Span(arg.span.source, arg.span.start + found, arg.span.start + found + len(match.group(0))) \
            if found >= 0 else arg.span
        yield match.group(0), span, label


def _wraps_by_class(section: Mapping, default: bool) -> bool:
    """Does this fsdp_config use the transformer-class auto-wrap policy (the only one that reads the names)?
    TrainingArguments defaults to it (transformers training_args.py:2833); accelerate's plugin to
    NO_WRAP (accelerate utils/dataclasses.py `FSDP_AUTO_WRAP_POLICY` env default)."""
    for key in ("auto_wrap_policy", "fsdp_auto_wrap_policy"):
        node = section.get(key)
        if isinstance(node, Scalar):
            return str(node.value).upper() == "TRANSFORMER_BASED_WRAP"
    return default


def layer_names(plan):
    """Every FSDP transformer-layer class a launch names, with where: training arguments the HF
    Trainer reads (a program read as another kind may give the same flag another meaning), and
    the accelerate config, which accelerate reads whatever the program."""
    if plan.consumer in ("hf", "swift", "llamafactory"):
        for name, span, label in _training_layer_names(plan):
            yield name, span, label, False
    for name, span, label in _accelerate_layer_names(plan):
        yield name, span, label, True


def _training_layer_names(plan):
    yield from _arg_names(plan.arg("fsdp_transformer_layer_cls_to_wrap"), "--fsdp_transformer_layer_cls_to_wrap")
    config = plan.training_config.document.mapping if plan.training_config is not None and plan.training_config.document is not None \
        else (plan.origin.mapping if plan.launcher == "yaml" else None)
    if isinstance(config, Mapping):
        section = config.get("fsdp_config")
        if isinstance(section, Mapping) and _wraps_by_class(section, default=True):
            for key in ("transformer_layer_cls_to_wrap", "fsdp_transformer_layer_cls_to_wrap"):
                if section.get(key) is not None:
                    yield from _names_in(section.get(key), f"fsdp_config.{key}")


def _accelerate_layer_names(plan):
    if plan.accelerate_config is not None and plan.accelerate_config.config is not None:
        flag = plan.launcher_args.get("fsdp_transformer_layer_cls_to_wrap")
        if flag is not None:
            yield from _arg_names(flag, "accelerate launch --fsdp_transformer_layer_cls_to_wrap")
            return
        section = plan.accelerate_config.config.get("fsdp_config")
        policy = plan.launcher_args.get("fsdp_auto_wrap_policy")
        wraps = str(policy.value).upper() == "TRANSFORMER_BASED_WRAP" if policy is not None else \
            isinstance(section, Mapping) and _wraps_by_class(section, default=False)
        if wraps and isinstance(section, Mapping) and section.get("fsdp_transformer_layer_cls_to_wrap") is not None:
            yield from _names_in(section.get("fsdp_transformer_layer_cls_to_wrap"), "fsdp_config.fsdp_transformer_layer_cls_to_wrap")


def _suggestion(name: str, classes) -> str | None:
    lowered = {c.lower(): c for c in classes}
    if name.lower() in lowered:
        return lowered[name.lower()]
    layers = [c for c in classes if c.endswith(("Layer", "Block"))]
    close = difflib.get_close_matches(name, layers, n=1, cutoff=0.6) or difflib.get_close_matches(name, list(classes), n=1, cutoff=0.75)
    return close[0] if close else None


@rule("DS714", "fsdp-layer-class", severity="error", target="launch", fix="safe or unsafe")
def fsdp_layer_class(plan, context):
    """FSDP's `transformer_layer_cls_to_wrap` names a class the model does not have.

    ## What it checks
    The layer classes a launch gives FSDP's transformer auto-wrap policy:
    `--fsdp_transformer_layer_cls_to_wrap` (TrainingArguments up to 4.x), `fsdp_config`'s
    `transformer_layer_cls_to_wrap` (a training YAML), and an accelerate config's
    `fsdp_config.fsdp_transformer_layer_cls_to_wrap` (or `accelerate launch
    --fsdp_transformer_layer_cls_to_wrap`), comma-separated. accelerate looks each name up among
    the classes of the model's modules (`get_module_class_from_name`, accelerate
    utils/dataclasses.py:3228-3245) and raises `ValueError: Could not find the transformer layer
    class LLaMADecoderLayer in the model.` (utils/dataclasses.py:2095, FSDP2 fsdp_utils.py:953)
    when none has it. Only the transformer-class wrap policy reads the names: the Trainer's
    default (transformers training_args.py:2833), but not accelerate's (`NO_WRAP` unless the
    accelerate config says `fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP`), so names beside
    another policy are not judged.

    The model is identified from the launch's `--model_name_or_path` (`model:`, axolotl's
    `base_model:`): a local folder's `config.json` (`model_type`), else a model id whose family
    dslint knows (`meta-llama/Llama-2-7b-hf` is `llama`, `bert-base-uncased` is `bert`). The
    classes of each model type come from its modeling code in the transformers generations
    dslint ships (4.45 and 5.23; schemas/transformers-layers*.json, generated by
    `python -m dslint.schemagen.layer_classes`), judged for the transformers versions the
    repository allows: a name missing from both generations is missing in every known release
    (`LLaMADecoderLayer` was renamed `LlamaDecoderLayer` in 4.28); a model type only one
    generation has is judged only for that generation.

    Training arguments count where the HF Trainer (ms-swift, LLaMA-Factory) reads them; where
    that reader is only assumed (a training config no launch reaches, a program dslint could not
    read) the finding is a warning without a fix. An accelerate config is read by accelerate
    whatever the program.

    ## Why it matters
    The error comes at `accelerator.prepare`, after the model is loaded on every rank.

    ## Example
    ```yaml
    fsdp_config:
      fsdp_transformer_layer_cls_to_wrap: LLaMADecoderLayer
    ```
    with `--model_name_or_path meta-llama/Llama-2-7b-hf`. Use instead: `LlamaDecoderLayer`
    (`BertLayer` for BERT, `Qwen2DecoderLayer` for Qwen2 and Qwen2.5).

    ## Fix safety
    Safe when the name differs from the model's class only in case and the model type was read
    from a local `config.json`; otherwise the closest class name is an unsafe fix.
    """
    names = list(layer_names(plan))
    if not names:
        return
    model = _model(plan)
    if model is None:
        return
    model_type, model_related, certain = model
    from dslint.evidence.versions import candidates

    start = plan.origin.path if plan.origin is not None else None
    found = candidates("transformers", start, context.settings, plan.program)
    newest = _generations()[-1][1]
    for name, span, label, by_accelerate in names:
        verdict = found.judge(lambda v: _fails(model_type, name, v))  # noqa: B023 - judge calls it at once
        if not verdict.anywhere:
            continue
        suggestion = _suggestion(name, newest.get(model_type, ()))
        fix = None
        if suggestion and verdict.everywhere:
            same = suggestion.lower() == name.lower()
            fix = (Fix.safe if same and certain else Fix.unsafe)(f"Write {suggestion}", Edit.replace(span, suggestion))
        note = (f"in {verdict.where()}, so accelerate raises 'Could not find the transformer layer class {name} in the model'")
        severity = verdict.severity()
        program = plan.program
        if not by_accelerate and program is not None and not program.established:  # the Trainer reading these is assumed
            severity, fix = Severity.WARNING if severity is None else severity, None
            note += f"; {program.assumption}"
        help = f"the {model_type} layer class is {suggestion}" if suggestion and fix is None else None
        yield Finding(span, f"{label}: a {model_type} model has no {name}", related=[model_related], fix=fix, severity=severity,
                      note=verdict.qualify(note), help=help)


FSDP2_SINCE = "1.6.0"  # accelerate commands/launch.py --fsdp_version: absent from 1.5.2, in 1.6.0
PREFETCH_POLICY_GONE = "1.0.0"  # 0.34.2 utils/launch.py:238-244 copied it with a warning; 1.0.0 has no such option
PREFETCH_POLICY_DEPRECATED = "0.26.0"  # commands/launch.py: 0.25.0 has only --fsdp_backward_prefetch_policy; 0.26.0 adds --fsdp_backward_prefetch


def _truthy(value) -> bool:
    return value is True or str(value).strip().lower() in ("true", "1", "yes")


@rule("DS715", "fsdp-config-key", severity="warning", target="document", kinds=("accelerate-yaml",), fix="safe or unsafe")
def fsdp_config_key(document, context):
    """An accelerate `fsdp_config` key that the accelerate version in use renamed, ignores or rejects.

    ## What it checks
    The `fsdp_config` section of an accelerate config file, for the accelerate versions the
    repository allows (the `accelerate-version` setting, the installed package, or a pin):

    - `fsdp_backward_prefetch_policy`: the only name of the option before accelerate 0.26.0
      (0.25.0 commands/launch.py has no `--fsdp_backward_prefetch`); from 0.26.0 up to 0.34
      accelerate copied it to `fsdp_backward_prefetch` with a deprecation warning (0.34.2
      utils/launch.py:238-244);
      1.0.0 removed the option, and `accelerate launch` only sets the config's keys as attributes
      of its arguments (commands/launch.py:1263-1276), so the key is silently ignored and no
      backward prefetch is used. Fix: rename it `fsdp_backward_prefetch`.
    - `fsdp_version: 2` before accelerate 1.6.0, which has no such option: FSDP1 runs.
    - with `fsdp_version: 2` (accelerate 1.6.0 and later, utils/dataclasses.py
      `FullyShardedDataParallelPlugin.__post_init__`): `fsdp_state_dict_type: LOCAL_STATE_DICT`
      raises `FSDP2 does not support LOCAL_STATE_DICT` (2069-2073), an error, because the plugin
      reads `FSDP_STATE_DICT_TYPE` whatever the version. `fsdp_forward_prefetch` reaches the plugin
      only as `FSDP_FORWARD_PREFETCH`, which it reads only when `fsdp_version == 1` (1953-1954):
      under FSDP2 the key is ignored, a warning (the `forward_prefetch is not yet implemented in
      FSDP2` error of 1955-1956 needs code that builds the plugin with `forward_prefetch` itself,
      which a config file cannot do; same in 1.6.0 and 1.10.0). `fsdp_backward_prefetch` is set to None (1903-1904),
      `fsdp_sharding_strategy` is not read (deprecated for `fsdp_reshard_after_forward`,
      1836-1843), and `fsdp_use_orig_params` / `fsdp_sync_module_states` are obsolete
      (1940-1948): warnings.

    A finding that holds only in some allowed versions is info and names them.

    ## Why it matters
    A renamed or ignored key leaves FSDP at a default the config seems to change (no prefetch,
    full resharding, FSDP1 instead of FSDP2); the FSDP2 errors stop the run at
    `accelerator.prepare`, after the model is loaded.

    ## Example
    ```yaml
    distributed_type: FSDP
    fsdp_config:
      fsdp_backward_prefetch_policy: BACKWARD_PRE
    ```
    Use instead: `fsdp_backward_prefetch: BACKWARD_PRE`.

    ## Fix safety
    Renaming `fsdp_backward_prefetch_policy` to `fsdp_backward_prefetch` (when the new key is not
    set) is safe where every allowed accelerate version copies the old key to the new one
    (0.26.0 up to 1.0.0): they read both the same. It is unsafe where a version from 1.0.0 on
    ignores the old key (the prefetch you wrote starts to take effect) or one before 0.26.0 knows
    only the old name.
    """
    mapping = document.mapping
    section = mapping.get("fsdp_config") if mapping is not None else None
    if not isinstance(section, Mapping):
        return
    from dslint.documents.edits import rename_key
    from dslint.diagnostics import Severity
    from dslint.evidence.versions import candidates, compare

    found = candidates("accelerate", document.path, context.settings)

    def judged(failing_from=None, before=None, severity=None):
        """(the verdict, the finding's severity), or None when no candidate fails."""
        verdict = found.judge(lambda v: (failing_from is None or compare(v, failing_from) >= 0)
                              and (before is None or compare(v, before) < 0))
        if not verdict.anywhere:
            return None
        return verdict, (Severity.INFO if not verdict.everywhere else severity)

    old = section.entry("fsdp_backward_prefetch_policy")
    if old is not None:
        edit = rename_key(old, "fsdp_backward_prefetch") if section.entry("fsdp_backward_prefetch") is None else None
        help = None if edit else "the key is fsdp_backward_prefetch"
        title = "Rename it fsdp_backward_prefetch"
        if (gone := judged(failing_from=PREFETCH_POLICY_GONE)) is not None:
            verdict, severity = gone
            # a version that ignores the old key starts to prefetch: unsafe
            yield Finding(old.key_span, f"accelerate ≥ {PREFETCH_POLICY_GONE} ignores fsdp_backward_prefetch_policy silently",
                          fix=Fix.unsafe(title, edit) if edit else None, severity=severity,
                          note=verdict.qualify("no backward prefetch is used"), help=help)
        elif (copied := judged(failing_from=PREFETCH_POLICY_DEPRECATED, before=PREFETCH_POLICY_GONE)) is not None:
            # releases that copy it to the new key with a warning; before 0.26.0 it is the only key
            verdict, severity = copied
            fix = (Fix.safe if verdict.everywhere else Fix.unsafe)(title, edit) if edit else None
            yield Finding(old.key_span, "fsdp_backward_prefetch_policy is deprecated", fix=fix, severity=severity, help=help,
                          note=verdict.qualify("accelerate copies it to fsdp_backward_prefetch with a warning and ignores it from 1.0.0"))
    version = section.entry("fsdp_version")
    if version is None or str(version.value.to_python()).strip() != "2":
        return
    if (older := judged(before=FSDP2_SINCE)) is not None:
        verdict, severity = older
        yield Finding(version.key_span, f"fsdp_version: 2 is not an option before accelerate {FSDP2_SINCE}", severity=severity,
                      note=verdict.qualify("FSDP1 runs"))
    checks = (  # key, whether its value matters, severity, headline, what accelerate does
        ("fsdp_forward_prefetch", lambda v: _truthy(v), Severity.WARNING,
         "fsdp_forward_prefetch is ignored with fsdp_version 2",
         "accelerate reads FSDP_FORWARD_PREFETCH only for FSDP1: no forward prefetch runs"),
        ("fsdp_state_dict_type", lambda v: str(v).upper() == "LOCAL_STATE_DICT", Severity.ERROR,
         "LOCAL_STATE_DICT with fsdp_version 2", "accelerate raises 'FSDP2 does not support LOCAL_STATE_DICT'"),
        ("fsdp_backward_prefetch", lambda v: v is not None and str(v).upper() != "NO_PREFETCH", Severity.WARNING,
         "fsdp_backward_prefetch with fsdp_version 2 is ignored",
         "accelerate sets it to None ('backward_prefetch is not supported in FSDP2')"),
        ("fsdp_sharding_strategy", lambda v: v is not None, Severity.WARNING,
         "fsdp_sharding_strategy is not read with fsdp_version 2", "set fsdp_reshard_after_forward (true or false) instead"),
        ("fsdp_use_orig_params", lambda v: v is not None, Severity.INFO,
         "fsdp_use_orig_params is obsolete with fsdp_version 2", "FSDP2 always uses the original parameters"),
        ("fsdp_sync_module_states", lambda v: v is not None, Severity.INFO,
         "fsdp_sync_module_states is obsolete with fsdp_version 2 and is not read", None),
    )
    for key, applies, level, headline, why in checks:
        entry = section.entry(key)
        if entry is None or not applies(entry.value.to_python()):
            continue
        if (newer := judged(failing_from=FSDP2_SINCE, severity=level)) is None:
            continue
        verdict, severity = newer
        node = entry.value if level is Severity.ERROR else entry
        note, help = (why, None) if key != "fsdp_sharding_strategy" else (None, why)
        yield Finding(node.span if level is Severity.ERROR else entry.key_span, headline, severity=severity,
                      note=verdict.qualify(note), help=help)
