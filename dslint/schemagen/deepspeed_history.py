"""Which DeepSpeed config keys the releases before 0.14 lacked, read from their source distributions.

Usage::

    pip download deepspeed==0.9.0 --no-deps --no-binary :all: -d DIR   # and each release to 0.14.0
    python -m dslint.schemagen.deepspeed_history --sdists DIR           # merge into schemas/deepspeed-versions.json
    python -m dslint.schemagen.deepspeed_history --sdists DIR --check   # exit 1 if the file is stale

``schemas/deepspeed.schema.json`` describes the keys of the newest release (it is generated from
the installed deepspeed); ``deepspeed-versions.json`` says in which release each later key came
(hand-curated from 0.14 on, with its pull request). This generator extends that back to
:data:`OLDEST`: for every key of the schema it reads each release's ``deepspeed/`` sources
(nothing is imported or built) and finds the first release from which the key is continuously
there. A key counts as there when its name is written in the release's sources as a string
literal (``ZERO_HPZ = "zero_hpz_partition_size"``, ``.get("stage3_max_live_parameters")``) or as
a field of a class (``zero_quantized_weights: bool = False``, a pydantic section). That test is
generous on purpose: a name that also appears elsewhere makes the key look older than it is,
which only makes dslint say less; a key is written as missing from a release only when its
name appears nowhere in that release's code. A release whose sdist is not in the folder is not
claimed to lack anything: the key is then dated to the oldest release it may have come in.

Entries already in the file (the hand-curated ones, and anything from 0.14 on) are kept; new
entries say ``introduced`` and where the key was first seen.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
import tarfile
from pathlib import Path

from dslint.schemagen._hfargs import SCHEMA_DIR

OLDEST = "0.9.0"
NEWEST = "0.14.0"  # the first release the hand-curated history starts from
VERSIONS_FILE = SCHEMA_DIR / "deepspeed-versions.json"
SCHEMA_FILE = SCHEMA_DIR / "deepspeed.schema.json"
RELEASES_FILE = SCHEMA_DIR / "releases.json"
EXIT_OTHER_SDISTS = 3  # --check: the folder's sdists are not the ones the file was made from


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


# ---- the keys of the newest release --------------------------------------------------------


def schema_paths(schema: dict) -> list[tuple[str, ...]]:
    """Every key path the shipped schema describes (sections and their keys)."""
    from dslint.schemagen import object_schema

    out: list[tuple[str, ...]] = []
    stack: list[tuple[tuple[str, ...], dict]] = [((), schema)]
    while stack:
        path, node = stack.pop()
        for key, spec in object_schema(schema, node).get("properties", {}).items():
            if len(path) > 4:
                continue
            out.append(path + (key,))
            stack.append((path + (key,), spec))
    return sorted(set(out))


# ---- what one release's sources name -------------------------------------------------------


class Release:
    """The names a release's ``deepspeed/`` sources write, each with its first place."""

    def __init__(self, version: str, files: dict[str, str]):
        self.version = version
        self.names: dict[str, str] = {}  # name -> "deepspeed/path.py:line"
        for path in sorted(files):
            self._read(path, files[path])

    def _read(self, path: str, text: str) -> None:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            for match in re.finditer(r"""["']([A-Za-z_][A-Za-z0-9_]*)["']""", text):
                line = text.count("\n", 0, match.start()) + 1
                self.names.setdefault(match.group(1), f"{path}:{line}")
            return
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
                self.names.setdefault(node.value, f"{path}:{node.lineno}")
            elif isinstance(node, ast.ClassDef):
                for statement in node.body:
                    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                        self.names.setdefault(statement.target.id, f"{path}:{statement.lineno}")

    @classmethod
    def from_sdist(cls, archive: Path) -> "Release":
        version = archive.name[len("deepspeed-"): -len(".tar.gz")]
        files = {}
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                parts = member.name.split("/", 1)
                if len(parts) != 2 or not member.isfile():
                    continue
                inner = parts[1]
                if not inner.startswith("deepspeed/") or not inner.endswith(".py"):
                    continue
                handle = tar.extractfile(member)
                if handle is not None:
                    files[inner] = handle.read().decode("utf-8", errors="replace")
        return cls(version, files)

    def has(self, path: tuple[str, ...]) -> bool:
        return all(part in self.names for part in path)


# ---- the history -----------------------------------------------------------------------------


def published(releases_file: Path = RELEASES_FILE) -> list[str]:
    """DeepSpeed releases from OLDEST to NEWEST: schemas/releases.json, or PyPI (pip index
    versions) before that file reaches back to OLDEST."""
    known = json.loads(releases_file.read_text(encoding="utf-8"))["packages"]["deepspeed"]
    if not known or _key(min(known, key=_key)) > _key(OLDEST):
        from dslint.schemagen.releases import published as from_pypi

        known = from_pypi("deepspeed")
    return [v for v in sorted(known, key=_key) if _key(OLDEST) <= _key(v) <= _key(NEWEST)]


def introductions(paths: list[tuple[str, ...]], releases: list[Release], order: list[str]) -> dict[str, dict]:
    """dotted path -> {"introduced", "source"} for keys the oldest release lacks and NEWEST has."""
    read = {r.version: r for r in releases}
    newest = read.get(NEWEST)
    if newest is None:
        raise SystemExit(f"the sdist of deepspeed {NEWEST} is needed: it anchors the history")
    out = {}
    for path in paths:
        if not newest.has(path):
            continue  # not named in NEWEST's code the way this reader sees: say nothing
        first = None  # the first release from which the key is there in every release read
        for version in reversed(order):
            release = read.get(version)
            if release is None:
                continue
            if not release.has(path):
                break
            first = version
        if first is None or first == order[0]:
            continue
        # An unread release just before `first` may already have had it: date it there.
        index = order.index(first)
        introduced = first
        while index > 0 and order[index - 1] not in read:
            index -= 1
            introduced = order[index]
        before = next((v for v in reversed(order[:order.index(introduced)]) if v in read), None)
        where = read[first].names[path[-1]]
        note = f"absent from the deepspeed {before} sdist; deepspeed {first} sdist {where}"
        if introduced != first:
            note += f" (the {introduced} sdist could not be read: dated to the oldest release it may have come in)"
        out[".".join(path)] = {"introduced": introduced, "source": note}
    return out


def merged(current: dict, found: dict[str, dict], read: list[str] | None = None) -> dict:
    data = json.loads(json.dumps(current))
    if read is not None:
        data["sdists_read"] = read  # which releases the generated entries rest on
    keys = data.setdefault("keys", {})
    for dotted, entry in found.items():
        if dotted in keys:
            continue  # hand-curated entries (with their pull requests) win
        keys[dotted] = entry
    data["keys"] = dict(sorted(keys.items()))
    low = data.get("deepspeed_range", [NEWEST, NEWEST])
    data["deepspeed_range"] = [OLDEST, low[1]]
    data["$comment"] = (
        "History of DeepSpeed config keys whose status changed between 0.9 and 0.19. Versions are the first release "
        "with the change; 'first tag' is the first git tag containing the commit. Paths are dotted config key paths. "
        f"Entries from 0.14 on are hand-curated; keys added between {OLDEST} and {NEWEST} are written by "
        "python -m dslint.schemagen.deepspeed_history from the releases' sdists.")
    return data


def render(data: dict) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dslint.schemagen.deepspeed_history", description=__doc__.split("\n")[0])
    parser.add_argument("--sdists", required=True, type=Path, help="folder of deepspeed-X.Y.Z.tar.gz from pip download")
    parser.add_argument("--check", action="store_true", help="exit 1 if schemas/deepspeed-versions.json is stale")
    args = parser.parse_args(argv)
    order = published()
    releases = [Release.from_sdist(p) for p in sorted(args.sdists.glob("deepspeed-*.tar.gz"))
                if p.name[len("deepspeed-"): -len(".tar.gz")] in order]
    missing = [v for v in order if v not in {r.version for r in releases}]
    if missing:
        print(f"no sdist read for {', '.join(missing)}: keys are dated to the oldest release they may have come in", file=sys.stderr)
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    current = json.loads(VERSIONS_FILE.read_text(encoding="utf-8"))
    read = [v for v in order if v not in missing]
    if args.check and current.get("sdists_read") != read:
        # Other sdists date keys differently (an unread release is never said to lack a key).
        print(f"made from the sdists of {', '.join(current.get('sdists_read', []))}; this folder has {', '.join(read)}")
        return EXIT_OTHER_SDISTS
    text = render(merged(current, introductions(schema_paths(schema), releases, order), read))
    if args.check:
        stale = text != VERSIONS_FILE.read_text(encoding="utf-8")
        print("out of date" if stale else "up to date")
        return 1 if stale else 0
    VERSIONS_FILE.write_text(text, encoding="utf-8")
    print(f"wrote {VERSIONS_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
