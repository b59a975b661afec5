"""DS327 empty-launcher-option: a launcher option whose value is a variable nothing sets."""

from __future__ import annotations

import os
import re
from pathlib import Path

from dslint.diagnostics import Finding
from dslint.rule import rule

# The options each launcher refuses when their value is empty: key -> (kind of check, where).
# "int": argparse `type=int` exits with `invalid int value: ''`; "nproc": torchrun's
# determine_local_world_size raises `Unsupported nproc_per_node value`; "nnodes": torchrun's
# parse_min_max_nnodes calls int('').
_TORCH = "torch 2.13.0 torch/distributed/run.py"
_DEEPSPEED = "DeepSpeed 0.19.8 deepspeed/launcher/runner.py"
_ACCELERATE = "accelerate 1.15.0 accelerate/commands/launch.py"
REFUSED = {
    "torchrun": {
        "nproc_per_node": ("nproc", f"{_TORCH}:432-439 type=str, :776 raises ValueError"),
        "nnodes": ("nnodes", f"{_TORCH}:425-431 type=str, :735 int()"),
        "node_rank": ("int", f"{_TORCH}:619-627 type=int"),
        "master_port": ("int", f"{_TORCH}:639-646 type=int"),
    },
    "deepspeed": {
        "num_gpus": ("int", f"{_DEEPSPEED}:90-95 type=int"),
        "num_nodes": ("int", f"{_DEEPSPEED}:84-88 type=int"),
        "node_rank": ("int", f"{_DEEPSPEED}:109-113 type=int"),
        "master_port": ("int", f"{_DEEPSPEED}:97-101 type=int"),
    },
    "accelerate": {
        "num_processes": ("int", f"{_ACCELERATE}:197-199 type=int"),
        "num_machines": ("int", f"{_ACCELERATE}:200-202 type=int"),
        "machine_rank": ("int", f"{_ACCELERATE}:291-293 type=int"),
        "main_process_port": ("int", f"{_ACCELERATE}:297-301 type=int"),
    },
}

# Variables a job system, the launcher's host or bash itself sets: an unset one in the script is
# not evidence of an empty value.
_PROVIDED_PREFIXES = ("SLURM_", "SBATCH_", "PBS_", "LSB_", "SGE_", "COBALT_", "FLUX_", "OMPI_", "PMI_", "PMIX_", "MV2_",
                      "PET_", "TORCHELASTIC_", "SM_", "AZUREML_", "AZ_BATCH", "AML_", "VC_", "MA_", "KUBERNETES_",
                      "ARNOLD_", "MLP_", "METIS_", "PAI_", "DLC_", "BASH", "HOST")
_PROVIDED = frozenset({"MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "NODE_RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
                       "GROUP_RANK", "ROLE_RANK", "NODE_COUNT", "RANDOM", "SRANDOM", "SECONDS", "LINENO", "PPID", "UID",
                       "EUID", "PWD", "OLDPWD", "HOME", "USER", "LOGNAME", "SHLVL", "PATH", "EPOCHSECONDS",
                       "EPOCHREALTIME", "OPTIND", "IFS", "SHELL", "TMPDIR"})
# A value written only of variables: `$N`, `${N}`, `${N:-}`, `${N-}`, `${N:=}`, in quotes or not.
_EXPANSION = re.compile(r"\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)(?::?[-=])?\})")
_COMMENT = re.compile(r"(?:^|\s)#.*$", re.MULTILINE)


@rule("DS327", "empty-launcher-option", severity="error", target="launch")
def empty_launcher_option(plan, context):
    """A launcher option's value is a variable that nothing sets: the launcher refuses the empty value.

    ## What it checks
    The options whose launcher refuses an empty value (or the next word, when bash drops the empty
    one), read from their argparse definitions:

    - torchrun / `python -m torch.distributed.run`: `--nproc_per_node` (type=str, then
      `determine_local_world_size` raises `ValueError: Unsupported nproc_per_node value`,
      torch/distributed/run.py:432-439 and :745-778 in torch 2.13.0), `--nnodes` (type=str, then
      `parse_min_max_nnodes` calls `int('')`, :425-431 and :731-742), `--node_rank` and
      `--master_port` (type=int, :619-627 and :639-646: argparse exits with `invalid int value`);
    - deepspeed: `--num_gpus`, `--num_nodes`, `--node_rank`, `--master_port` (type=int,
      deepspeed/launcher/runner.py:84-113 in DeepSpeed 0.19.8);
    - accelerate launch: `--num_processes`, `--num_machines`, `--machine_rank`,
      `--main_process_port` (type=int, accelerate/commands/launch.py:197-202 and :291-301 in
      accelerate 1.15.0).

    It speaks when the value is written only of variables (`$N`, `"${N}"`, `${N:-}`) and each of
    them is empty when the launch runs, as far as the repository says:

    - no line of the script may set it (an assignment, `export`, `read`, `for`, `declare` ...,
      counted anywhere in the script, in any branch or function), and it has no non-empty default;
    - the script sources no other file and evals no string (either may set anything);
    - no job system or bash sets it (`SLURM_*`, `PBS_*`, `PET_*`, `MASTER_ADDR`, `MASTER_PORT`,
      `WORLD_SIZE`, `RANK`, `NODE_RANK`, `RANDOM` ...: platforms export these);
    - no documented call sets it: a code block of a Markdown file of the repository that runs the
      script (`NPROC_PER_NODE=8 bash train.sh`, or `export NPROC_PER_NODE=8` before it in the same
      block), another script or a Makefile target that runs it after setting it; a Python file
      that names the script may run it with any environment (dslint.launch.callers).

    Bash removes an unquoted empty word: `--nproc_per_node $N train.py` hands torchrun
    `--nproc_per_node train.py`. The word that takes its place is judged as the value: a flag or
    no word is `expected one argument`; a word the option accepts (`8`), or one only known at run
    time, says nothing.

    ## Why it matters
    The launcher stops before any process starts: argparse exits with
    `argument --node_rank/--node-rank: invalid int value: ''`, torchrun raises
    `ValueError: Unsupported nproc_per_node value: `.

    ## Example
    ```sh
    torchrun --nproc_per_node=${NPROC_PER_NODE} train.py
    ```
    with nothing setting NPROC_PER_NODE. Use instead: `${NPROC_PER_NODE:-8}`, a line that sets it,
    or the call that sets it in the README (`NPROC_PER_NODE=8 bash train.sh`).
    """
    launch = plan.command
    table = REFUSED.get(plan.launcher)
    script = getattr(plan.origin, "script", None)
    if launch is None or table is None or script is None or launch.command.from_eval:
        return
    text = _COMMENT.sub("", plan.origin.source.text)
    from dslint.launch.callers import may_set_anything, names_set

    if may_set_anything(text):
        return

    set_here = names_set(text)
    for option in launch.launcher_option_list:
        check = table.get(option.key or "")
        if check is None or option.value is None or len(option.values) != 1:
            continue
        names = _only_variables(option)
        if not names or any(_may_be_set(name, set_here) for name in names):
            continue
        outcome = _outcome(option, launch, check[0])
        if outcome is None:
            continue
        calls = _calls(plan)
        if any(call.may_set(name) for call in calls for name in names):
            continue
        shown = ", ".join(f"${name}" for name in names)
        documented = f"; the calls of the script in the repository ({', '.join(c.where() for c in calls[:3])}) do not set it" \
            if calls else "; no README or script of the repository calls it with the variable set"
        yield Finding(option.span, f"{option.name} is empty: {shown} is set nowhere",
                      note=f"{outcome} ({check[1]}); no line of {os.path.basename(plan.origin.path)} sets {shown}"
                      f" and it has no default{documented}",
                      help=f"give it a default (`${{{names[0]}:-...}}`) or set it before the launch")


def _may_be_set(name: str, set_here: set[str]) -> bool:
    return name in set_here or name in _PROVIDED or name.startswith(_PROVIDED_PREFIXES)


def _only_variables(option) -> list[str]:
    """The variables the option's value is written of, when it is written of nothing else; else []."""
    raw = option.value.raw
    names = [m.group(1) or m.group(2) for m in _EXPANSION.finditer(raw)]
    rest = _EXPANSION.sub("", raw).replace('"', "").replace("'", "")
    return names if names and not rest else []


def _outcome(option, launch, kind: str) -> str | None:
    """What the launcher does with the empty value (or the word bash puts in its place); None when it may accept it."""
    raw = option.value.raw
    removed = not option.inline and '"' not in raw and "'" not in raw
    if not removed:
        return _refusal(option.name, kind, "")
    words = launch.command.argv
    index = next((i for i, w in enumerate(words) if w is option.value), None)
    if index is None:
        return None
    following = words[index + 1] if index + 1 < len(words) else None
    if following is None:
        return f"bash drops the empty word and {option.name} is left without a value: argparse exits with " \
               "`expected one argument`"
    if following.value is None:
        return None
    if following.value.startswith("-") and len(following.value) > 1 and not following.value[1:2].isdigit():
        return f"bash drops the empty word, so {option.name} is followed by {following.value}: argparse exits with " \
               "`expected one argument`"
    if _accepts(kind, following.value):
        return None
    refused = _refusal(option.name, kind, following.value)
    return f"bash drops the empty word, so the launcher reads {following.value!r} as its value: {refused}"


def _accepts(kind: str, value: str) -> bool:
    if kind == "nproc":
        return value.isdigit() or value in ("cpu", "gpu", "xpu", "auto")
    if kind == "nnodes":
        return re.fullmatch(r"\d+(:\d+)?", value) is not None
    return re.fullmatch(r"[+-]?\d+", value.strip()) is not None


def _refusal(name: str, kind: str, value: str) -> str:
    if kind == "nproc":
        return f"torchrun raises `ValueError: Unsupported nproc_per_node value: {value}`"
    if kind == "nnodes":
        return f"torchrun raises `ValueError: invalid literal for int() with base 10: {value.split(':')[0]!r}`"
    return f"argparse exits with `argument {name}: invalid int value: {value!r}`"


def _calls(plan) -> list:
    """The calls of the launch's script that the repository documents or makes."""
    from dslint.launch.callers import calls_of
    from dslint.launch.named import repository_root

    path = Path(os.path.abspath(plan.origin.path))
    root = repository_root(path.parent)
    if root == Path(root.anchor or "/"):
        cwd = Path.cwd().resolve()
        root = cwd if cwd == path.parent or cwd in path.parents else path.parent
    return list(calls_of(path, root))
