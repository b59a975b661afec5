"""How much of each launch does dslint resolve? The consumer, the world size and the global batch,
per launcher kind, over repositories (issue 22's resolution report).

    python benchmarks/resolution.py REPO [REPO ...] [--markdown FILE] [--values FILE]

Runs ``dslint explain --format json .`` in each repository's folder (from its root, as a user
would) with the Python running this script, and counts, for every launch block (not the
DeepSpeed configs no launch reaches, nor training configs no script launches):

- *distributed*: launches that start more than one process or say they may (every launcher but
  plain ``python``, and ``python -m`` of a framework that starts its own workers: verl, OpenRLHF);
- *consumer*: the program that reads the launch is established (``program.established``), not
  assumed from flags;
- *world size* and *global batch*: a value, not unknown (for verl and OpenRLHF, the samples per
  optimizer step their own arithmetic gives, ``framework.global_batch``).

``--values FILE`` writes every resolved value with its origin (path:line and the launch) as TSV, for
the by-hand check the report asks for: pick rows at random and check each against the files.
Nothing is timed; nothing is written in the repositories (``--no-config``, the cache in a temporary
folder).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path


def explain(repo: Path, cache: str) -> list[dict]:
    env = dict(os.environ, DSLINT_CACHE_DIR=cache)
    run = subprocess.run([sys.executable, "-m", "dslint", "explain", "--format", "json", "--no-config", "."], cwd=repo,
                         capture_output=True, text=True, env=env, timeout=1800)
    if not run.stdout.strip():
        print(f"{repo}: no output ({run.stderr.strip()[:200]})", file=sys.stderr)
        return []
    return json.loads(run.stdout)["launches"]


def distributed(launch: dict) -> bool:
    if launch.get("launcher") != "python":
        return True
    kind = (launch.get("program") or {}).get("kind")
    return kind in ("verl", "openrlhf")


def _value(field) -> object:
    return field.get("value") if isinstance(field, dict) else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", nargs="+", type=Path)
    parser.add_argument("--markdown", type=Path, help="also write the table as Markdown")
    parser.add_argument("--values", type=Path, help="write every resolved value with its origin (TSV)")
    options = parser.parse_args(argv)
    table: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        for repo in options.repos:
            for launch in explain(repo, cache):
                if launch.get("kind") != "launch" or not distributed(launch):
                    continue
                kind = launch.get("launcher") or "?"
                where = f"{repo.name}/{launch.get('path')}:{launch.get('line')}"
                counts = table[kind]
                counts["launches"] += 1
                counts["consumer"] += bool((launch.get("program") or {}).get("established"))
                world = _value(launch.get("world_size"))
                counts["world size"] += world is not None
                batch = (launch.get("batch") or {}).get("global_batch")
                formula = (launch.get("batch") or {}).get("formula", "")
                framework = (launch.get("framework") or {}).get("global_batch")
                if batch is None and framework:  # verl, OpenRLHF: the framework's own arithmetic
                    batch, formula = framework.get("value"), framework.get("origin", "")
                counts["global batch"] += batch is not None
                if world is not None:
                    rows.append((where, "world size", world, launch["world_size"].get("origin", "")))
                if batch is not None:
                    rows.append((where, "global batch", batch, formula))
    total = collections.Counter()
    for counts in table.values():
        total.update(counts)
    lines = ["| launcher | distributed launches | consumer | world size | global batch |", "|---|---|---|---|---|"]
    for kind, counts in sorted(table.items()) + [("all", total)]:
        n = counts["launches"] or 1
        cells = [f"{counts[k]} ({100 * counts[k] / n:.0f}%)" for k in ("consumer", "world size", "global batch")]
        lines.append(f"| {kind} | {counts['launches']} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if options.markdown:
        options.markdown.write_text(text, encoding="utf-8")
    if options.values:
        with options.values.open("w", encoding="utf-8") as handle:
            handle.write("launch\tvalue\tresolved\torigin\n")
            for row in rows:
                handle.write("\t".join(str(cell) for cell in row) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
