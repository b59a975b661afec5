"""DS303 missing-reference: a file the launch names is not there."""

from __future__ import annotations

import os
from pathlib import Path

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
    looked up where the launch runs: in the folder the script `cd`s into before it, else relative
    to the naming file's folder, each folder above it up to the repository root, and the working
    directory. ms-swift preset names (`zero0` … `zero3_offload`, and 2.x's `default-zero2` …)
    count as found. axolotl opens `deepspeed:` relative to the directory it runs in
    (src/axolotl/utils/config/__init__.py `normalize_config`); its `deepspeed_configs/zero*.json`
    presets are files of its repository, which `axolotl fetch deepspeed_configs` copies there, so a
    missing preset is `info`.

    A path is judged only where dslint knows the file's place; nothing is said of:

    - a relative path, when the script `cd`s before the launch into a folder dslint cannot name
      (`cd "$ROOT"`, `cd ~/LLaMA-Factory`, `cd /path/to/checkout` not on this machine, a `cd` in
      an `if`) or into one outside the repository: it is looked up there, not here;
    - a file the script writes, or may write, before the launch: a redirection (`> f`, `>> f`,
      `cat <<EOF > f`), or a command that names the path or a folder above it (`cp`, `tee`,
      `mkdir -p`, `wget -O`, `python make_config.py --out f`), other than one that only reads it
      (`cat`, `ls`, `grep`, `echo` …) or another launch;
    - an absolute path (`/data/ckpt/ds.json`): it names the machine that runs the launch;
    - a value only the caller knows (`ds_config.$SLURM_JOBID.json`);
    - a relative path whose first folder is nowhere in this repository, given to another project's
      program (`llamafactory-cli train examples/train_lora/x.yaml`): commands copied from that
      project's README run from its checkout.

    A default the caller can override (`--deepspeed ${DS_CONFIG:-ds.json}`, `${1:-cfg.yaml}`) is
    judged: the launch as written, when its caller does not set the variable, stops on it.

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
        raw = reference.raw.strip()
        if "$" in raw or "<" in raw or os.path.isabs(raw) or raw.startswith("~"):
            continue
        axolotl_preset = _axolotl_preset(plan, reference)  # axolotl's own rule of where it looks, below
        if plan.runs_elsewhere is not None or _written_before(plan, reference) \
                or (axolotl_preset is None and _another_checkout(plan, raw, reference)):
            continue
        help = None
        if reference.role == "deepspeed" and plan.consumer in ("swift", "megatron") and "/" not in raw and not raw.endswith(".json"):
            import difflib

            close = difflib.get_close_matches(raw, SWIFT_PRESETS, n=1)
            help = f"ms-swift presets are {', '.join(SWIFT_PRESETS)}" + (f" (did you mean '{close[0]}'?)" if close else "")
        shown = ", ".join(reference.tried[:4]) + (" …" if len(reference.tried) > 4 else "")
        message = f"{reference.role} file '{raw}' not found"
        looked = f"looked at {shown}"
        if axolotl_preset is not None:
            yield Finding(reference.span, message, severity=axolotl_preset,
                          note=f"{looked}; axolotl opens it relative to the directory it runs in",
                          help="deepspeed_configs/ is not installed with axolotl: `axolotl fetch deepspeed_configs` copies its "
                          "presets into the working directory" if axolotl_preset == Severity.INFO else help)
        elif reference.assumed is not None:
            yield Finding(reference.span, message, help=help,
                          note=f"{looked}; it is the default of {reference.assumed}: the launch stops on it unless its caller sets the variable")
        else:
            yield Finding(reference.span, message, note=looked, help=help)


def _written_before(plan, reference) -> bool:
    """Whether the launch's script writes (or may write) the file before the launch."""
    from dslint.launch.named import repository_root
    from dslint.launch.prior import written_before

    origin = plan.origin
    launch = getattr(plan.command, "command", None)
    if origin is None or origin.kind != SCRIPT or launch is None or getattr(origin, "script", None) is None:
        return False
    base = Path(origin.path).parent
    root = repository_root(base)
    stop = base if root == Path(root.anchor or "/") else root
    span = reference.span
    word = span.source.text[span.start:span.end] if span is not None and span.source is origin.source else None
    return written_before(origin.script, launch, reference.raw.strip(), word, base, stop) is not None


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
    if "/" not in raw.strip("./"):
        return False
    relative = os.path.normpath(raw)
    head = relative.split(os.sep, 1)[0]
    bases = {tried[: -len(relative)] or "." for tried in map(os.path.normpath, reference.tried) if tried.endswith(relative)}
    return bool(bases) and not any(os.path.isdir(os.path.join(base, head)) for base in bases)
