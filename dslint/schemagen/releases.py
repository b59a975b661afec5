"""Write schemas/releases.json: the releases of each training package that dslint knows.

Usage::

    python -m dslint.schemagen.releases            # asks PyPI (pip index versions) and writes the file
    python -m dslint.schemagen.releases --check    # the shipped file matches the shipped schemas

A release is *known* when a shipped schema describes it: from the oldest schema generation's
``X.Y.0`` to the newest generation's version (DeepSpeed: ``deepspeed_range`` of
deepspeed-versions.json). Final releases only; ``.postN`` re-uploads count as their release.
When nothing pins a package, rules judge every known release (dslint/evidence/versions.py).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys

from dslint.schemagen._hfargs import SCHEMA_DIR

PACKAGES = ("deepspeed", "transformers", "accelerate", "trl", "ms-swift", "llamafactory")
OUT = SCHEMA_DIR / "releases.json"


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def bounds(package: str) -> tuple[str, str]:
    """(oldest, newest) known release of ``package``, from the shipped schemas."""
    if package == "deepspeed":
        low, high = json.loads((SCHEMA_DIR / "deepspeed-versions.json").read_text(encoding="utf-8"))["deepspeed_range"]
        return low, high
    versions = []
    for path in SCHEMA_DIR.glob("*.schema.json"):
        schema = json.loads(path.read_text(encoding="utf-8"))
        if schema.get("x-dslint-package") == package and schema.get("x-dslint-version"):
            versions.append(schema["x-dslint-version"])
    versions.sort(key=_key)
    oldest = versions[0].split(".")
    return ".".join(oldest[:2] + ["0"]), versions[-1]


def published(package: str) -> list[str]:
    out = subprocess.run([sys.executable, "-m", "pip", "index", "versions", package], capture_output=True, text=True,
                         check=True).stdout
    line = next(line for line in out.splitlines() if line.startswith("Available versions:"))
    found = set()
    for version in line.split(":", 1)[1].split(","):
        match = re.match(r"^(\d+(?:\.\d+)+)(?:\.post\d+)?$", version.strip())
        if match:
            found.add(match.group(1))
    return sorted(found, key=_key)


def known(package: str, releases: list[str]) -> list[str]:
    low, high = bounds(package)
    return [v for v in releases if _key(low) <= _key(v) <= _key(high)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dslint.schemagen.releases")
    parser.add_argument("--check", action="store_true", help="the shipped file covers the shipped schemas' range")
    args = parser.parse_args(argv)
    if args.check:
        data = json.loads(OUT.read_text(encoding="utf-8"))
        bad = [p for p in PACKAGES if (data["packages"][p][0], data["packages"][p][-1]) != bounds(p)]
        print("out of date: " + ", ".join(bad) if bad else "up to date")
        return 1 if bad else 0
    data = {
        "$comment": ("The releases dslint knows, per package: from the oldest shipped schema generation's X.Y.0 to "
                     "the newest generation (DeepSpeed: deepspeed-versions.json's deepspeed_range). Final releases "
                     "from PyPI (pip index versions); written by python -m dslint.schemagen.releases."),
        "packages": {p: known(p, published(p)) for p in PACKAGES},
    }
    rows = ",\n".join(f"  {json.dumps(p)}: {json.dumps(v)}" for p, v in data["packages"].items())
    OUT.write_text(f'{{"$comment": {json.dumps(data["$comment"])},\n "packages": {{\n{rows}\n }}\n}}\n', encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
