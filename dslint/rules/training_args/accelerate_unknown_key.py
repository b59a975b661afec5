"""DS721: a top-level key of an accelerate config file that accelerate does not know."""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix, Related, Severity
from dslint.documents.model import Scalar
from dslint.rule import rule
from dslint.rules._training import ArgSpace, arg_space, generations, in_use


@rule("DS721", "accelerate-unknown-key", severity="error", target="document", kinds=("accelerate-yaml",), fix="unsafe")
def accelerate_unknown_key(document, context):
    """A top-level key of an accelerate config file that accelerate does not know.

    ## What it checks
    `accelerate launch --config_file` builds `ClusterConfig(**yaml)` (`SageMakerConfig` for
    `compute_environment: AMAZON_SAGEMAKER`) after converting the legacy `fp16` and
    `dynamo_backend` keys, and raises `ValueError: The config file at ... had unknown keys
    ([...]), please try upgrading your accelerate version` for anything else
    (accelerate/commands/config/config_args.py). Keys differ between versions (`ipex_config`
    was removed, `parallelism_config` added); the version in use comes from settings, the
    installed package or repository pins. A key only some versions lack is reported only when
    a pin or setting bounds the versions (info naming them); with nothing pinned the release
    that runs is unknown.

    ## Why it matters
    `accelerate launch` reads the file before it starts a single process
    (`_validate_launch_command` in accelerate/commands/launch.py), so the job ends right after
    its queue wait. The error's advice to upgrade accelerate does not help with a misspelled
    key, and for a key that newer versions removed (`ipex_config`) it points the wrong way.

    ## Example
    `num_process: 8`
    Use instead: `num_processes: 8`.

    ## Fix safety
    Unsafe: the closest key is a guess.
    """
    mapping = document.mapping
    if mapping is None:
        return
    use = in_use("accelerate", document.path, context.settings)
    if use is None:
        return
    env = mapping.get("compute_environment")
    set_name = "sagemaker" if isinstance(env, Scalar) and env.value == "AMAZON_SAGEMAKER" else "cluster"
    space = arg_space(use.generation.schema_name, (set_name,))
    spaces = {g.version: arg_space(g.schema_name, (set_name,)) for g in generations("accelerate")}
    import difflib

    def unknown(space: ArgSpace, key: str) -> bool:
        return key not in space.fields and key not in space.reader.get("legacy-keys", [])

    for entry in mapping.entries:
        key = entry.key
        if not any(unknown(s, key) for s in spaces.values()):
            continue
        verdict = use.judge((set_name,), lambda s: unknown(s, key))  # noqa: B023 - judge calls it at once
        if not verdict.anywhere:
            continue
        elsewhere = [version for version, s in spaces.items() if not unknown(s, key)]
        close = [] if elsewhere else difflib.get_close_matches(key, list(space.fields), n=1, cutoff=0.75)
        note = "it raises 'The config file ... had unknown keys'"
        if elsewhere:
            note += f"; accelerate {', '.join(elsewhere)} has it"
        from dslint.documents.edits import rename_key

        fix = Fix.unsafe(f"Rename {key} to {close[0]}", rename_key(entry, close[0])) if close and close[0] != key \
            and verdict.everywhere else None
        help = f"did you mean '{close[0]}'?" if close and close[0] != key and fix is None else None
        yield Finding(entry.key_span, f"unknown config key '{key}' for {verdict.where()}", related=[Related(use.describe())], fix=fix,
                      severity=verdict.severity(unpinned=Severity.WARNING), note=note, help=help)
