"""DS303 missing-reference: a file the launch names is not there."""

from __future__ import annotations

import os
import re

from dslint.diagnostics import Finding, Severity
from dslint.documents.model import SCRIPT
from dslint.launch.presets import SWIFT_PRESETS
from dslint.rule import rule


@rule("DS303", "missing-reference", severity="warning", target="launch")
def missing_reference(plan, context):
    """A launch names a file (DeepSpeed config, training config, accelerate config) that is not there.

    ## What it checks
    `--deepspeed`, `--deepspeed_config`, a positional YAML config, `--config_file`,
    `deepspeed:` in a training YAML and `deepspeed_config_file` in an accelerate config are
    looked up relative to the naming file's folder, each folder above it up to the repository
    root, and the working directory. ms-swift preset names (`zero0` … `zero3_offload`) count as
    found. A value dslint cannot know statically (a variable from the caller) is not judged.
    axolotl opens `deepspeed:` relative to the directory it runs in (src/axolotl/utils/config/__init__.py
    `normalize_config`); its `deepspeed_configs/zero*.json` presets are files of its repository,
    which `axolotl fetch deepspeed_configs` copies there, so a missing preset is `info`.

    ## Why it matters
    DeepSpeed reports a missing config as `Expected a string path to an existing deepspeed
    config` (deepspeed/runtime/config.py:451) only after the processes started; ms-swift and
    LLaMA-Factory fail in their argument parsing.

    Two kinds of path are reported as `info`, with the assumption they rest on:

    - a default the caller can override (`--deepspeed ${DS_CONFIG:-ds.json}`, `${1:-cfg.yaml}`):
      the launch may never use it;
    - a relative path whose first folder is nowhere in this repository, given to another
      project's program (`llamafactory-cli train examples/train_lora/x.yaml`, `swift sft`,
      `python -m pkg.train`): commands copied from that project's README run from its checkout;
    - an absolute path (`/data/ckpt/ds.json`): it names the machine that runs the launch;
    - a file the launch's own script writes before the launch (`cat <<EOF > cfg.yaml`,
      `> f`, `tee f`, `cp template.json f`): it is there when the launch runs.

    ## Why it matters
    DeepSpeed reports a missing config as `Expected a string path to an existing deepspeed
    config` (deepspeed/runtime/config.py:451) only after the processes started; ms-swift and
    LLaMA-Factory fail in their argument parsing.

    ## Example
    `--deepspeed configs/ds_zero3.json` when the file is `configs/ds_z3.json`.
    Use instead: the right path, relative to where the launch runs.
    """
    for reference in plan.references:
        if reference.resolved or reference.inline or reference.raw is None or not reference.tried:
            continue
        raw = reference.raw
        if "$" in raw or "<" in raw:
            continue
        help = None
        if reference.role == "deepspeed" and plan.consumer in ("swift", "megatron") and "/" not in raw and not raw.endswith(".json"):
            import difflib

            close = difflib.get_close_matches(raw, SWIFT_PRESETS, n=1)
            help = f"ms-swift presets are {', '.join(SWIFT_PRESETS)}" + (f" (did you mean '{close[0]}'?)" if close else "")
        shown = ", ".join(reference.tried[:4]) + (" …" if len(reference.tried) > 4 else "")
        message = f"{reference.role} file '{raw}' not found"
        looked = f"looked at {shown}"
        axolotl_preset = _axolotl_preset(plan, reference)
        if axolotl_preset is not None:
            yield Finding(reference.span, message, severity=axolotl_preset,
                          note=f"{looked}; axolotl opens it relative to the directory it runs in",
                          help="deepspeed_configs/ is not installed with axolotl: `axolotl fetch deepspeed_configs` copies its "
                          "presets into the working directory" if axolotl_preset == Severity.INFO else help)
        elif reference.assumed is not None:
            yield Finding(reference.span, message, severity=Severity.INFO, help=help,
                          note=f"{looked}; assuming {reference.assumed} keeps its default '{raw}' (the caller may set it)")
        elif os.path.isabs(raw.strip()):
            yield Finding(reference.span, message, severity=Severity.INFO, help=help,
                          note="an absolute path names a file on the machine that runs the launch, which dslint does not see")
        elif (written := _written_before(plan, raw)) is not None:
            yield Finding(reference.span, message, severity=Severity.INFO, help=help,
                          note=f"{looked}; the script writes '{raw}' itself before the launch (line {written}), so it is there when it runs")
        elif _another_checkout(plan, raw, reference):
            yield Finding(reference.span, message, severity=Severity.INFO, help=help, note=(
                f"{looked}; '{raw.split('/', 1)[0]}/' is nowhere in this repository: {plan.program.program} is another "
                "project's program, and commands copied from its README run from its own checkout"))
        else:
            yield Finding(reference.span, message, note=looked, help=help)


# A command that writes a file: a redirection (`> f`, `>> f`, `cat <<EOF > f`), `tee [-a] f`,
# or the last word of `cp`/`mv`/`ln -s` (`cp template.yaml f`).
_WRITES = re.compile(r"""(?:>>?|\btee(?:\s+-a)?|\b(?:cp|mv|ln\s+-s)(?:\s+-\w+)*\s+\S+)\s*["']?([^\s"'<>|;&()]+)""")


def _written_before(plan, raw: str) -> int | None:
    """The line of the launch's script that writes the file the launch names, before the launch."""
    origin = plan.origin
    if origin is None or origin.kind != SCRIPT or plan.span is None or plan.span.source is not origin.source:
        return None
    wanted = os.path.normpath(raw.strip())
    source = origin.source
    for match in _WRITES.finditer(source.text, 0, plan.span.start):
        if os.path.normpath(match.group(1)) == wanted:
            return source.position(match.start(1))[0]
    return None


def _axolotl_preset(plan, reference) -> Severity | None:
    """For axolotl's `deepspeed:`: INFO for one of its presets (fetched into the working directory
    at run time), WARNING for another path; None for other programs."""
    program = plan.program
    if program is None or program.kind != "axolotl" or not program.established or reference.role != "deepspeed":
        return None
    from dslint.frameworks.axolotl import PRESETS

    head, _, name = reference.raw.strip().removeprefix("./").rpartition("/")
    return Severity.INFO if head == "deepspeed_configs" and name in PRESETS else Severity.WARNING


def _another_checkout(plan, raw: str, reference) -> bool:
    """A relative path under a folder this repository does not have, given to an installed program."""
    program = plan.program
    if program is None or not program.established or program.facts is not None:
        return False  # the program is a file of this repository (or unknown): its paths are this repository's
    if os.path.isabs(raw) or "/" not in raw.strip("./"):
        return False
    relative = os.path.normpath(raw.strip())
    head = relative.split(os.sep, 1)[0]
    bases = {tried[: -len(relative)] or "." for tried in map(os.path.normpath, reference.tried) if tried.endswith(relative)}
    return bool(bases) and not any(os.path.isdir(os.path.join(base, head)) for base in bases)
