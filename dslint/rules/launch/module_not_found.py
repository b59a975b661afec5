"""DS326 module-not-found: `python -m MODULE` names a module that cannot be imported where the launch runs."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from dslint.diagnostics import Finding
from dslint.rule import rule

# Script text that may put modules on the path: an install, an environment file, a PYTHONPATH.
_INSTALLS = re.compile(r"\b(?:pip[0-9.]*|uv)\s+(?:pip\s+)?install\b|\bsetup\.py\s+(?:install|develop)\b|"
                       r"\b(?:conda|mamba|micromamba)\s+(?:install|env)\b|\bpoetry\s+install\b|\buv\s+sync\b|"
                       r"\bmim\s+install\b|\bpython[0-9.]*\s+-m\s+build\b")
_COMMENT = re.compile(r"(?:^|\s)#.*$", re.MULTILINE)


@rule("DS326", "module-not-found", severity="error", target="launch")
def module_not_found(plan, context):
    """`python -m MODULE` names a module that neither the repository nor its declared packages have.

    ## What it checks
    `python -m pkg.train` (and `torchrun -m`, `deepspeed --module`, `accelerate launch -m`, which
    run `python -m` in each process) imports the module from the folder the launch runs in, from
    PYTHONPATH, or from an installed distribution. dslint says the module cannot be found only
    when it knows every one of those places:

    - the repository is known (a `.git` or `pyproject.toml` folder above the script);
    - the module is not in the folder the script `cd`s into, nor (when it does not `cd`) in the
      script's folder or any folder above it up to the repository root, nor in `src/`;
    - its top-level package is either the repository's own (a folder or module of that name in
      one of those folders: then that package lacks the rest, whatever is installed), or it is
      nowhere in the repository and the repository declares its dependencies (requirements
      files, `setup.py`, `setup.cfg`, `pyproject.toml`, `Pipfile`, conda environment files,
      the `pip install` lines of its Dockerfiles, scripts and Markdown) with distributions whose
      import names dslint knows, none of which ships it;
    - it is not in the standard library, nor a module of a package dslint knows (`verl`,
      `openrlhf`, `swift`, `llamafactory`, `axolotl`, `torch`, ...).

    Nothing is said when anything may add to the path: a PYTHONPATH the launch's environment, the
    script or a documented call of it sets; an install in the script (`pip install -e .`,
    `setup.py develop`, `conda install` ...); a file the script sources; a `cd` into a folder
    dslint cannot name; a declared distribution whose import names dslint does not know, a URL or
    a dependency list computed at run time; a repository too large to walk.

    ## Why it matters
    Every process stops at once with `No module named 'pkg.train'` (runpy's
    `_get_module_details`), after the job waited for its devices.

    ## Example
    ```sh
    torchrun --nproc_per_node 8 -m trainer.sft --config cfg.yaml
    ```
    when the repository's package is `training/` and nothing declares a `trainer` package.
    Use instead: the module's real path, `-m training.sft`.
    """
    launch = plan.command
    word = launch.program if launch is not None and launch.module else None
    name = word.value if word is not None else None
    if name is None or not all(part.isidentifier() for part in name.split(".")):
        return
    top = name.split(".", 1)[0]
    if top in sys.stdlib_module_names or _known_module(name):
        return
    program = plan.program
    if program is not None and (program.established or program.facts is not None):
        return  # found in the repository, or a module of a known package
    from dslint.launch.named import repository_root

    origin = Path(os.path.abspath(plan.origin.path))
    root = repository_root(origin.parent)
    if root == Path(root.anchor or "/") or _may_add_to_path(plan, origin, root):
        return
    folders = _import_folders(plan, origin.parent, root)
    if any(_importable(name, folder) for folder in folders):
        return
    from dslint.files.tree import tree

    found = tree(str(root))
    if not found.complete:
        return
    places = [os.path.join(str(root), p) for p in found.where(top)]
    own = [folder for folder in folders if _importable(top, folder)]
    if any(_has_rest(place, name) for place in places):
        return
    if own:
        missing = _first_missing(name, own[0])
        why = f"{top} is the repository's own package ({_shown(own[0] / top, root)}), which has no {missing}"
    elif places or _named_in_metadata(str(root), top):
        return  # the repository has a `top` elsewhere: an install of it may put it on the path
    else:
        missing = top
        why = _undeclared(str(root), top)
        if why is None:
            return
    looked = ", ".join(_shown(folder, root) for folder in folders[:4]) + (" …" if len(folders) > 4 else "")
    yield Finding(word.span, f"module {name} is not found: the launch stops with No module named '{missing}'",
                  note=f"{why}; looked in {looked}")


def _known_module(name: str) -> bool:
    """A module of a package dslint knows: a framework's entry or a distribution's import name."""
    from dslint.evidence.imports import IMPORT_NAMES
    from dslint.launch.consumer import KNOWN_MODULES

    top = name.split(".", 1)[0]
    if any(name == prefix or name.startswith(prefix + ".") for prefix, _ in KNOWN_MODULES):
        return True
    return any(top in names for names in IMPORT_NAMES.values())


def _may_add_to_path(plan, origin: Path, root: Path) -> bool:
    """The launch's environment, its script or a documented call may put modules on the path."""
    from dslint.launch.callers import calls_of, may_set_anything, names_set

    if plan.runs_elsewhere is not None or "PYTHONPATH" in plan.env:
        return True
    text = _COMMENT.sub("", plan.origin.source.text)
    if "PYTHONPATH" in names_set(text) or may_set_anything(text) or _INSTALLS.search(text):
        return True
    return any(call.may_set("PYTHONPATH") for call in calls_of(origin, root))


def _import_folders(plan, base: Path, root: Path) -> list[Path]:
    """The folders the launch may run in: the one it cd's into, else the script's and those above it;
    and the repository's root and src/ (an editable install puts them on the path)."""
    if plan.folder is not None:
        folders = [Path(plan.folder)]
    else:
        folders = [base]
        here = base
        while here != root and root in here.parents:
            here = here.parent
            folders.append(here)
    for extra in (root, root / "src"):
        if extra not in folders:
            folders.append(extra)
    return folders


def _importable(name: str, folder: Path) -> bool:
    """Whether ``name`` (dotted) is a module, package or namespace folder below ``folder``, in any form."""
    *packages, last = name.split(".")
    here = folder.joinpath(*packages)
    if packages and not here.is_dir():
        return False
    if (here / last).is_dir():
        return True
    try:
        return any(_module_file(entry, last) for entry in os.listdir(here))
    except OSError:
        return False


def _module_file(entry: str, name: str) -> bool:
    return entry.startswith(name + ".") and (entry.endswith((".py", ".pyc", ".pyd", ".so", ".pyi")))


def _has_rest(place: str, name: str) -> bool:
    """Whether the folder or module ``place`` of the repository (named like the top package) holds the rest of ``name``."""
    rest = name.split(".")[1:]
    if not os.path.isdir(place):
        return not rest  # a module file: only the top itself
    if not rest:
        return True
    return _importable(".".join(rest), Path(place))


def _first_missing(name: str, folder: Path) -> str:
    """The first dotted prefix of ``name`` Python cannot find below ``folder`` (what its error names)."""
    parts = name.split(".")
    for index in range(2, len(parts) + 1):
        if not _importable(".".join(parts[:index]), folder):
            return ".".join(parts[:index])
    return name


def _named_in_metadata(root: str, top: str) -> bool:
    """The repository's packaging metadata names ``top`` (``package_dir={"top": "lib"}``, ``packages = ["top"]``)."""
    pattern = re.compile(rf"(?<![\w.]){re.escape(top)}(?![\w])")
    for file in ("setup.py", "setup.cfg", "pyproject.toml"):
        try:
            with open(os.path.join(root, file), encoding="utf-8", errors="replace") as handle:
                if pattern.search(handle.read(1_000_000)):
                    return True
        except OSError:
            continue
    return False


def _undeclared(root: str, top: str) -> str | None:
    """Why no installed distribution ships ``top``, when the repository's declarations say so; else None."""
    from dslint.evidence.imports import declared

    said = declared(root)
    if not said.files or said.unknown or said.unknown_names() or said.provides(top):
        return None
    shown = ", ".join(said.files[:3]) + (" …" if len(said.files) > 3 else "")
    return f"no folder or module {top} is in the repository, and none of the distributions it declares ({shown}) ships {top}"


def _shown(path: Path, root: Path) -> str:
    try:
        relative = os.path.relpath(path, root)
    except ValueError:
        return str(path)
    return "the repository root" if relative == "." else relative
