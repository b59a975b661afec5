"""Which package versions the training-argument schemas are made from, and how to install them.

Usage::

    python -m dslint.schemagen.generations --prepare DIR      # pip install each generation into DIR/<name>
                                                              # (and download the DeepSpeed sdists the key history reads
                                                              # and the wheels argument_names reads)
    python -m dslint.schemagen.generations --regenerate DIR   # run every generator (after --prepare)
    python -m dslint.schemagen.generations --check DIR        # every shipped schema is up to date

Each generation is installed with ``pip install --no-deps --target DIR/<name>`` (never into the
environment, never pulling a torch build): the package and the few pinned companions its
argument modules import (the transformers/trl/peft versions it requires, an older
huggingface_hub where the newer one breaks them). torch, deepspeed, pydantic and the rest come
from the running interpreter. A generation with ``target=None`` is imported from the running
interpreter itself (``pip install transformers==5.23.0 accelerate==1.15.0 trl==1.16.0``).
Imports that still fail (PIL, vllm, Megatron ...) are stubbed inside the generator process.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from dslint.schemagen._hfargs import SCHEMA_DIR
from dslint.schemagen.downloads import download_release_file


@dataclass(frozen=True)
class Generation:
    module: str  # dslint.schemagen.<module>
    schema: str  # file in schemas/
    target: str | None  # sub-directory of the targets folder; None: the running interpreter
    requirements: tuple[str, ...] = ()
    extra_args: tuple[str, ...] = ()


GENERATIONS: tuple[Generation, ...] = (
    Generation("transformers", "transformers.schema.json", None, ("transformers==5.23.0",)),
    Generation("transformers", "transformers-4.45.schema.json", "tf445",
               ("transformers==4.45.2", "huggingface_hub==0.25.2", "tokenizers==0.20.3", "trl==0.12.2")),
    Generation("trl", "trl.schema.json", None, ("trl==1.16.0",)),
    Generation("trl", "trl-0.12.schema.json", "tf445",
               ("transformers==4.45.2", "huggingface_hub==0.25.2", "tokenizers==0.20.3", "trl==0.12.2")),
    Generation("accelerate", "accelerate.schema.json", None, ("accelerate==1.15.0",)),
    Generation("accelerate", "accelerate-0.34.schema.json", "acc034", ("accelerate==0.34.2",)),
    Generation("swift", "ms-swift.schema.json", "swift460",
               ("ms-swift==4.6.0", "transformers==5.19.0", "trl==0.29.1", "peft==0.20.0", "modelscope==1.40.2",
                "modelscope-hub==0.5.1")),
    Generation("swift", "ms-swift-3.12.schema.json", "swift3",
               ("ms-swift==3.12.6", "transformers==4.57.3", "trl==0.24.0", "peft==0.18.1", "huggingface_hub==0.36.0",
                "tokenizers==0.22.1", "omegaconf", "antlr4-python3-runtime==4.9.3", "datasets==3.6.0", "dill==0.3.8",
                "multiprocess==0.70.16", "fsspec==2025.3.0", "modelscope==1.29.2", "megatron-core==0.15.0")),
    Generation("swift", "ms-swift-2.6.schema.json", "swift2",
               ("ms-swift==2.6.1", "transformers==4.47.1", "trl==0.11.4", "peft==0.12.0", "huggingface_hub==0.27.1",
                "tokenizers==0.21.0", "datasets==3.6.0", "dill==0.3.8", "multiprocess==0.70.16", "fsspec==2025.3.0",
                "modelscope==1.29.2")),
    Generation("llamafactory", "llamafactory.schema.json", "lf095",
               ("llamafactory==0.9.5", "transformers==5.6.0", "trl==0.24.0", "peft==0.18.1", "omegaconf",
                "antlr4-python3-runtime==4.9.3", "huggingface_hub==1.10.0", "httpx==0.28.1", "httpcore==1.0.9",
                "h11==0.16.0", "anyio==4.14.2", "datasets==4.0.0", "dill==0.3.8", "multiprocess==0.70.16",
                "fsspec==2025.3.0", "tokenizers==0.22.1")),
    Generation("llamafactory", "llamafactory-0.8.schema.json", "lf083",
               ("llamafactory==0.8.3", "transformers==4.43.4", "trl==0.9.6", "peft==0.12.0", "huggingface_hub==0.24.7",
                "tokenizers==0.19.1", "datasets==2.21.0", "dill==0.3.8", "multiprocess==0.70.16", "fsspec==2024.6.1")),
)


def command(generation: Generation, targets: Path | None, *, check: bool = False,
            python: str | None = None) -> list[str]:
    cmd = [python or sys.executable, "-m", f"dslint.schemagen.{generation.module}",
           "--output", str(SCHEMA_DIR / generation.schema)]
    if generation.target is not None:
        if targets is None:
            raise ValueError(f"{generation.schema} is made from a --target copy: give the targets folder")
        cmd += ["--path", str(targets / generation.target)]
    if check:
        cmd.append("--check")
    return cmd + list(generation.extra_args)


#: Sub-folder of the targets folder with the DeepSpeed sdists deepspeed_history reads.
DEEPSPEED_SDISTS = "deepspeed-sdists"
#: Sub-folder of the targets folder with the wheels argument_names reads.
ARGUMENT_WHEELS = "argument-wheels"


def _download_sdist(version: str, folder: Path) -> bool:
    """Fetch the deepspeed sdist file itself: ``pip download --no-binary`` would build metadata
    first, and some releases' setup.py imports torch (0.13.0), which pip's isolated build
    environment lacks. The file is all the history needs, so no build step is run."""
    return download_release_file("deepspeed", f"deepspeed-{version}.tar.gz", folder)


def prepare_sdists(folder: Path) -> None:
    """Download each DeepSpeed release from deepspeed_history.OLDEST to NEWEST as an sdist.

    A release with no sdist on the index is skipped with a note: the history then dates keys to
    the oldest release they may have come in, and says so.
    """
    from dslint.schemagen.deepspeed_history import published

    folder.mkdir(parents=True, exist_ok=True)
    for version in published():
        if (folder / f"deepspeed-{version}.tar.gz").is_file():
            continue
        if not _download_sdist(version, folder):
            print(f"could not download the deepspeed {version} sdist; the history says which release it skipped", file=sys.stderr)


def prepare_wheels(folder: Path) -> None:
    """Download the wheels whose argument names argument_names records (about 180 files, 500 MB)."""
    from dslint.schemagen import argument_names

    for package in argument_names.PACKAGES.values():
        missing = argument_names.download(package, folder)
        if missing:
            print(f"no {package.name} wheel for {', '.join(missing)}: the names check says which it lacks", file=sys.stderr)


def prepare(targets: Path) -> int:
    prepare_sdists(targets / DEEPSPEED_SDISTS)
    prepare_wheels(targets / ARGUMENT_WHEELS)
    done: set[str] = set()
    for generation in GENERATIONS:
        if generation.target is None or generation.target in done:
            continue
        done.add(generation.target)
        cmd = [sys.executable, "-m", "pip", "install", "--no-deps", "--target", str(targets / generation.target),
               *generation.requirements]
        print(" ".join(cmd))
        if subprocess.call(cmd):
            return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dslint.schemagen.generations", description=__doc__.split("\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--prepare", metavar="DIR", help="install every generation into DIR/<name>")
    group.add_argument("--regenerate", metavar="DIR", help="write every schema (targets in DIR)")
    group.add_argument("--check", metavar="DIR", help="check every schema (targets in DIR)")
    args = parser.parse_args(argv)
    if args.prepare:
        return prepare(Path(args.prepare))
    targets = Path(args.regenerate or args.check)
    status = 0
    for generation in GENERATIONS:
        code = subprocess.call(command(generation, targets, check=bool(args.check)))
        status = max(status, 1 if code == 1 else 0)
    return status


if __name__ == "__main__":
    sys.exit(main())
