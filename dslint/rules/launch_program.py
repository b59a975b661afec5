"""What a distributed launcher runs as the training script, and the argv it gives it.

``deepspeed``, ``torchrun`` and ``accelerate launch`` run ``python -u <script> <args>``: the
first word after their own options is a Python file (or, with ``--module``, a module; with
``--no_python``, an executable). ``deepspeed`` (and ``python -m torch.distributed.launch``)
also put ``--local_rank=N`` between the script and its own arguments.
"""

from __future__ import annotations

import os

from dslint.diagnostics import Edit, Finding, Fix, Related, Severity
from dslint.rule import rule

_CONFIG_SUFFIXES = (".yaml", ".yml", ".json")
_RUNS = {
    "deepspeed": "deepspeed/launcher/launch.py:223-236",
    "torchrun": "torch/distributed/run.py:944-967",
    "accelerate": "accelerate/utils/launch.py:125-130",
    "python": "the interpreter",
}


def _runs_python(launch) -> bool:
    """The launcher runs its program with Python (not ``--module``, not ``--no_python``)."""
    if launch.module:
        return False
    return not any(key in launch.launcher_options for key in ("no_python", "no-python"))


@rule("DS319", "launch-program-not-a-script", severity="error", target="launch", fix="unsafe")
def launch_program_not_a_script(plan, context):
    """The word where the launcher expects the training script is `python`, or a config file.

    ## What it checks
    `deepspeed`, `torchrun` and `accelerate launch` start each process as `python -u SCRIPT
    ARGS...`: the first word after their own options is the script (deepspeed
    launcher/launch.py:223-236, torch/distributed/run.py:944-967, accelerate
    utils/launch.py:125-130, which hands multi-GPU runs to torchrun). Two mistakes put
    something else there:

    - `accelerate launch python train.py` (or `torchrun python train.py`): the script is the
      word `python`, so every process runs `python -u python train.py` and Python stops with
      `can't open file '.../python': [Errno 2] No such file or directory`;
    - `torchrun cfg.yaml`, `deepspeed ds.json`, `python cfg.yaml`: the config is run as Python
      code, which fails or does nothing; the training script is missing from the line.

    `--module` (the word is a module name) and `--no_python` (an executable) are not judged.

    ## Why it matters
    Every process fails at start-up, after the job waited in the queue for its GPUs.

    ## Example
    ```sh
    accelerate launch --num_processes 8 python train.py --deepspeed ds.json
    ```
    Use instead:
    ```sh
    accelerate launch --num_processes 8 train.py --deepspeed ds.json
    ```

    ## Fix safety
    Unsafe: removing the `python` word makes the launcher run `train.py`, which changes what
    runs (to what the line means). A config file in the script's place has no fix: which
    script was meant is not on the line.
    """
    launch = plan.command
    if launch is None or plan.launcher not in _RUNS or not _runs_python(launch):
        return
    word = launch.program
    if word is None or word.value is None:
        return
    name = os.path.basename(word.value)
    runs = f"{plan.launcher} runs `python -u {word.value} ...`"
    from dslint.documents.shell.launchers import PYTHON_RE  # here: only a launch command of a script gets this far

    if PYTHON_RE.match(name) and plan.launcher != "python":
        fix = None
        args = launch.command.args
        nxt = args[args.index(word) + 1] if word in args and args.index(word) + 1 < len(args) else None
        source = word.span.source
        if nxt is not None and source.text[word.span.start : word.span.end] == word.raw and nxt.span.source is source:
            fix = Fix.unsafe(f"Remove `{word.raw}`: {plan.launcher} starts Python itself", Edit(source, word.span.start, nxt.span.start, ""))
        yield Finding(
            word.span,
            f"`{word.raw}` is where {plan.launcher} expects the training script",
            note=f"{runs}, and Python stops with \"can't open file '{name}'\"",
            fix=fix,
        )
    elif word.value.lower().endswith(_CONFIG_SUFFIXES):
        yield Finding(
            word.span,
            f"`{word.value}` is where {plan.launcher} expects the training script",
            note=f"{runs}, which reads the config as Python code",
            help="put the training script first and pass the config to it",
        )


def _local_rank_flag(plan) -> str | None:
    """The flag the launcher puts before the script's own arguments, or None when it puts none."""
    launch = plan.command
    if plan.launcher == "deepspeed":
        return None if "no_local_rank" in launch.launcher_options else "--local_rank=0"
    if launch.via == "python -m torch.distributed.launch" and "use_env" not in launch.launcher_options:
        return "--local-rank=0"  # torch/distributed/run.py:965-966: unless --use-env
    return None


@rule("DS320", "local-rank-before-arguments", severity="error", target="launch")
def local_rank_before_arguments(plan, context):
    """The deepspeed launcher puts `--local_rank=N` first, where the program reads its config by position.

    ## What it checks
    The deepspeed launcher starts each process as `python -u train.py --local_rank=N ARGS...`
    (deepspeed/launcher/launch.py:233-235, unless `--no_local_rank`), and so does
    `python -m torch.distributed.launch` without `--use-env` (`--local-rank=N`,
    torch/distributed/run.py:965-966). A program that reads its first argument by position
    (`sys.argv[1]`) then gets that flag instead of the argument the script wrote first.
    LLaMA-Factory's `src/train.py cfg.yaml` is the common case: its parser reads the YAML only
    when `sys.argv[1]` ends in `.yaml` (hparams/parser.py `read_args`), so under `deepspeed` it
    hands `--local_rank=0 cfg.yaml` to HfArgumentParser, which stops on `cfg.yaml`.

    An error when the program was read and takes `sys.argv[1]`; when the program could not be
    read and its first argument is a config file, a warning that names the assumption.

    ## Why it matters
    Every process stops while parsing its arguments, or silently ignores the config.

    ## Example
    ```sh
    deepspeed --num_gpus 8 src/train.py examples/train_full/qwen_sft.yaml
    ```
    Use instead:
    ```sh
    FORCE_TORCHRUN=1 llamafactory-cli train examples/train_full/qwen_sft.yaml
    ```
    or `deepspeed --no_local_rank ...` when the program takes its rank from `LOCAL_RANK`.
    """
    launch = plan.command
    if launch is None or plan.launcher not in ("deepspeed", "torchrun") or launch.module or not launch.program_args:
        return
    first = launch.program_args[0]
    flag = _local_rank_flag(plan)
    if flag is None or first.name is not None or first.value is None or first.value.value is None:
        return
    argument = first.value.value
    launcher = launch.via or plan.launcher
    program = plan.program
    facts = program.facts if program is not None else None
    script = launch.program.value if launch.program is not None else "the program"
    if facts is not None:
        read = facts.argv_reads.get(1)
        if read is None:
            return
        yield Finding(
            first.value.span,
            f"{script} reads `{flag}` as sys.argv[1], not `{argument}`",
            note=f"{launcher} passes `{flag}` before the program's arguments, and {script} reads sys.argv[1] ({read.where()})",
            related=[Related(f"{script} {read.text}", None)],
        )
    elif argument.lower().endswith((".yaml", ".yml", ".json")):
        why = program.assumption if program is not None and program.assumption else f"{script} was not read"
        yield Finding(
            first.value.span,
            f"{launcher} passes `{flag}` before `{argument}`",
            note=f"a program that reads its config as sys.argv[1] (as LLaMA-Factory's src/train.py does) gets `{flag}` instead ({why})",
            severity=Severity.WARNING,
        )
