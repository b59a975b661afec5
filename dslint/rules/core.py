"""Rules about reading files at all: syntax, duplicate keys, files dslint could not read."""

from __future__ import annotations

from dslint.diagnostics import Finding, Fix, Related, Severity
from dslint.documents.model import DEEPSPEED, Mapping, Scalar, walk
from dslint.documents.edits import remove_json_entry
from dslint.rule import rule


@rule("DS001", "syntax-error", severity="error", kinds=("deepspeed-json", "training-yaml", "training-json", "accelerate-yaml", "launch-script"))
def syntax_error(document, context):
    """The file does not parse the way its consumer parses it.

    ## What it checks
    DeepSpeed configs are read with hjson, exactly as DeepSpeed reads a config path
    (`hjson.load(..., object_pairs_hook=dict_raise_error_on_duplicate_keys)`,
    deepspeed/runtime/config.py:444). Training and accelerate YAML are read with PyYAML's
    `safe_load` (YAML 1.1), as ms-swift, transformers' HfArgumentParser, LLaMA-Factory and
    accelerate do. Launch scripts get bash's own verdict: dslint carries a reader of bash 5.2's
    grammar (a port of parse.y's tokenizer and grammar, checked against `bash -n` on generated
    scripts and real ones), so it needs no bash to run. Like bash, it stops at the first error
    and names the line bash names, with bash's complaint (an unterminated quote, a missing `fi`
    or `done`, an unquoted `<placeholder>` that bash reads as redirections). The error is
    reported where the parser stopped; there is one per file, as bash stops there. Where the
    script turns `extglob` on (`shopt -s extglob`), the verdict is that of bash running it, which
    `bash -n` does not: bash runs each top-level command before it reads the next, so a pattern
    such as `!(keep.txt)` parses on a later line (or in a function called later), and not in the
    same command as the `shopt` (`shopt -s extglob; rm !(x)`, both in one `if`), nor after a
    `shopt` run in a subshell, a pipeline or the background. A `shopt` in a branch counts as run.

    ## Why it matters
    A config that does not parse fails the launch only after the job waited in the queue and
    the processes started. Other files are still linted.

    ## Example
    ```json
    {"train_batch_size": 16, "zero_optimization": {"stage": 2,, }}
    ```
    Use instead:
    ```json
    {"train_batch_size": 16, "zero_optimization": {"stage": 2}}
    ```
    """
    for problem in document.problems:
        yield Finding(problem.span, problem.message, note=problem.note)


@rule("DS005", "shell-construct-not-read", severity="info", kinds=("launch-script",))
def shell_construct_not_read(document, context):
    """A command bash accepts that dslint's script reader could not read.

    ## What it checks
    dslint reads launch scripts twice: with bash's grammar, for the verdict on the syntax
    (DS001), and with tree-sitter-bash, to follow commands, variables and launches. Where
    tree-sitter's grammar cannot read a command that bash accepts (some arithmetic and
    backquote forms), that command is skipped and every other command is still read. This
    info names the command that was skipped; it is never an error, since bash runs it.

    ## Why it matters
    Values set or launches made inside the skipped command are unknown to the other rules:
    a finding they would make there is missed, and a variable set there is treated as unknown.

    ## Example
    ```sh
    deepspeed train.py \\
        `# the model` --model m
    ```
    Use instead: nothing to change for bash. To let dslint follow the command, write it in a
    simpler form (`# comment` lines above the command instead of backquoted comments).
    """
    script = document.script
    if script is None:
        return
    for part in script.unread:
        yield Finding(part.span, f"dslint could not read this command (bash accepts it): `{part.text}`")


@rule("DS002", "duplicate-key", severity="error", kinds=(DEEPSPEED,), fix="unsafe")
def duplicate_key(document, context):
    """A key appears twice in the same object of a DeepSpeed config.

    ## What it checks
    Every object of a DeepSpeed JSON for keys that occur more than once.

    ## Why it matters
    DeepSpeed loads config files with a pairs hook that raises
    `ValueError: Duplicate keys in DeepSpeed config: [...]`
    (deepspeed/runtime/config_utils.py:205-211), so the launch crashes. HF Trainer and
    accelerate read the same file with `json.load`, which keeps the *last* value silently:
    the same file crashes under one launcher and silently changes meaning under another.
    Where every launch of the run that reads the config is a program established as one of
    those (transformers' `HfDeepSpeedConfig` loads the file with `json.load` and hands DeepSpeed
    the dict, integrations/deepspeed.py; accelerate's `DeepSpeedPlugin` does the same), nothing
    raises: the finding is a warning that the earlier value is dropped.

    ## Example
    ```json
    {"zero_optimization": {"stage": 2, "stage": 3}}
    ```
    Use instead:
    ```json
    {"zero_optimization": {"stage": 3}}
    ```

    ## Fix safety
    The fix removes the earlier occurrence, keeping the value HF and accelerate use today. It is
    unsafe: the earlier value may be the one you meant.
    """
    json_load_only = _read_only_with_json_load(document, context)
    for node, dotted, earlier, entry in _repeated_keys(document):
        yield Finding(
            entry.key_span,
            f"duplicate key '{dotted}'" + (": json.load keeps this later value" if json_load_only else ""),
            related=[Related("first occurrence", earlier.key_span)],
            severity=Severity.WARNING if json_load_only else None,
            note=("every launch that reads it here loads it with json.load (HF Trainer, accelerate), which keeps this "
                  "last value silently; DeepSpeed's own loader would refuse the file" if json_load_only else
                  "DeepSpeed raises 'Duplicate keys in DeepSpeed config' when it loads this file; "
                  "HF and accelerate silently keep this last value"),
            fix=Fix.unsafe(f"Remove the earlier '{entry.key}'", remove_json_entry(node, earlier)),
        )


def _read_only_with_json_load(document, context) -> bool:
    """Do launches read this config, all through a program established as one that loads it with
    ``json.load`` and hands DeepSpeed the dict (transformers' HfDeepSpeedConfig, accelerate's
    DeepSpeedPlugin)? Then nothing raises: the later value wins."""
    readers = context.deepspeed_readers.get(id(document), ())
    if not readers:
        return False
    from dslint.rules._deepspeed import STRICT_JSON_CONSUMERS

    return all(getattr(plan.program, "established", False) and plan.consumer in STRICT_JSON_CONSUMERS
                                 and getattr(plan.program, "kind", None) != "inference" for plan in readers)


def _repeated_keys(document):
    """(mapping, dotted key, the entry before, the repeated entry) for each key a mapping repeats."""
    if document.root is None:
        return
    for path, node in walk(document.root):
        if not isinstance(node, Mapping):
            continue
        first_seen = {}
        for entry in node.entries:
            if entry.key in first_seen:
                yield node, ".".join(str(p) for p in path + (entry.key,)), first_seen[entry.key], entry
            first_seen[entry.key] = entry


@rule("DS006", "yaml-duplicate-key", severity="warning", kinds=("training-yaml", "accelerate-yaml"))
def yaml_duplicate_key(document, context):
    """A key appears twice in the same mapping of a training or accelerate YAML file.

    ## What it checks
    Every mapping of a training YAML (HF, ms-swift, LLaMA-Factory, axolotl, verl) or an
    accelerate config for keys that occur more than once.

    ## Why it matters
    The YAML specification says keys are unique, and the readers disagree on what to do with a
    repeated one. `yaml.safe_load` (transformers' HfArgumentParser, ms-swift, accelerate's
    config loader, LLaMA-Factory before 0.9.3) keeps the later value and drops the earlier one
    without a word, so the setting a reader of the file sees first is not the one the run uses.
    OmegaConf (LLaMA-Factory from 0.9.3, Hydra applications such as verl) refuses the file:
    `ConstructorError: found duplicate key` (omegaconf/_utils.py:136-150 in omegaconf 2.3.0).

    A key repeated with the same value (as the reader loads it: `1.0e-05` and `1.0e-5`) loses
    nothing under `yaml.safe_load`: an info, which OmegaConf's readers would still refuse.

    ## Example
    ```yaml
    learning_rate: 1.0e-4
    per_device_train_batch_size: 4
    learning_rate: 2.0e-5
    ```
    Use instead:
    ```yaml
    per_device_train_batch_size: 4
    learning_rate: 2.0e-5
    ```

    ## Fix safety
    No fix: either value may be the one you meant.
    """
    for _, dotted, earlier, entry in _repeated_keys(document):
        if _same_value(earlier.value, entry.value):  # nothing is dropped for yaml.safe_load's readers
            yield Finding(entry.key_span, f"duplicate key '{dotted}' repeats the same value",
                          related=[Related("first occurrence", earlier.key_span)], severity=Severity.INFO,
                          note="yaml.safe_load (HF, ms-swift, accelerate) reads the file as if it were written once; OmegaConf "
                               "(LLaMA-Factory 0.9.3+, Hydra apps) refuses it: found duplicate key")
            continue
        yield Finding(entry.key_span, f"duplicate key '{dotted}': yaml.safe_load keeps this later value",
                      related=[Related("first occurrence, dropped", earlier.key_span)],
                      note="yaml.safe_load (HF, ms-swift, accelerate) drops the earlier value silently; OmegaConf "
                           "(LLaMA-Factory 0.9.3+, Hydra apps) refuses the file: found duplicate key")


def _same_value(earlier, later) -> bool:
    """Both values are scalars that load as the same value (`1.0e-05` and `1.0e-5`)."""
    return (isinstance(earlier, Scalar) and isinstance(later, Scalar) and type(earlier.value) is type(later.value)
            and earlier.value == later.value)


@rule("DS003", "unreadable-file", severity="error", kinds=("unreadable",))
def unreadable_file(document, context):
    """dslint could not read a file it was asked to check.

    ## What it checks
    Files that cannot be opened (permissions, a symbolic link loop) or that exceed dslint's
    size limit (10 MB; real configs are a few kilobytes), and launch scripts past the script
    limits (256 KB, 5,000 lines or 1,000 commands; real launch scripts have a few hundred lines),
    which are reported instead of parsed, so that no input makes a run slow.

    ## Why it matters
    A config that was not read was not checked; a gate that skips it silently gives false
    confidence. If the file is not a config, exclude it in the `exclude` setting.

    ## Example
    `configs/ds.json` is a symbolic link that points to itself.
    Use instead: point the link at the real config, or exclude the path.
    """
    for problem in document.problems:
        yield Finding(problem.span, problem.message, note=problem.note)
