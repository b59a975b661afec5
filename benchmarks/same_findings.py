"""Do two versions of dslint report the same findings? For optimisations, which must change none.

    python benchmarks/same_findings.py record DIR    # this checkout's findings, written to DIR
    python benchmarks/same_findings.py compare DIR   # this checkout against DIR; exit 1 on any difference

Runs ``dslint check --format json --exit-zero --no-cache`` (with the Python running this script, so the
dslint of its environment) on:

- ``corpus``: the shared corpus (``../shared/corpus``) as a folder, as a user runs it (the
  large-run split onto a worker included);
- ``corpus-one-process``: the same with ``DSLINT_WORKERS=1``;
- ``scripts``: the corpus's launch scripts (the ``launch_sh`` rows of its MANIFEST.tsv), copied
  flat into one folder (``NNNN_<name>``, in manifest order), where no configuration they name
  is found.

Each run's JSON report, its standard error and its exit code are kept; ``compare`` prints, per
run, the findings only one side has (path:line:column code message) and any other difference.
Timing is benchmarks/run.py's job: nothing here is timed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"


def launch_scripts(corpus: Path) -> list[Path]:
    """The corpus's launch scripts, in MANIFEST.tsv order."""
    out = []
    for line in (corpus / "MANIFEST.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        fields = line.split("\t")
        if len(fields) >= 4 and fields[3] == "launch_sh":
            out.append(corpus / fields[0].replace("/", "__") / fields[2])
    return out


def copy_scripts(scripts: list[Path], directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for index, path in enumerate(scripts):
        shutil.copyfile(path, directory / f"{index:04d}_{path.name}")


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "DSLINT_WORKERS")}
    env.update(NO_COLOR="1", **extra)
    return env


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> dict:
    done = subprocess.run([sys.executable, "-m", "dslint", *argv], cwd=cwd, env=env, capture_output=True)
    return {"argv": argv, "exit": done.returncode, "stderr": done.stderr.decode("utf-8", "replace"),
            "report": json.loads(done.stdout) if done.stdout.strip() else None}


def findings(corpus: Path) -> dict[str, dict]:
    # --no-cache: every run lints (a replay would compare the cache with itself), and nothing is
    # written into the shared corpus
    check = ["check", "--format", "json", "--exit-zero", "--no-cache"]
    out = {
        "corpus": run([*check, "."], corpus, environment()),
        "corpus-one-process": run([*check, "."], corpus, environment(DSLINT_WORKERS="1")),
    }
    with tempfile.TemporaryDirectory(prefix="dslint-same-") as tmp:
        copy_scripts(launch_scripts(corpus), Path(tmp) / "scripts")
        out["scripts"] = run([*check, "--no-config", "scripts"], Path(tmp), environment())
    return out


def line_of(diagnostic: dict) -> str:
    return f"{diagnostic['path']}:{diagnostic['line']}:{diagnostic['column']} {diagnostic['code']} {diagnostic['message']}"


def differences(before: dict, after: dict) -> list[str]:
    out = []
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name), after.get(name)
        if old is None or new is None:
            out.append(f"{name}: only {'after' if old is None else 'before'} has this run")
            continue
        if old == new:
            continue
        if old["exit"] != new["exit"]:
            out.append(f"{name}: exit {old['exit']} -> {new['exit']}")
        if old["stderr"] != new["stderr"]:
            out.append(f"{name}: standard error differs:\n--- before\n{old['stderr']}--- after\n{new['stderr']}")
        old_report, new_report = old["report"] or {}, new["report"] or {}
        old_diagnostics, new_diagnostics = old_report.get("diagnostics", []), new_report.get("diagnostics", [])
        if old_diagnostics != new_diagnostics:
            old_set = [json.dumps(d, sort_keys=True) for d in old_diagnostics]
            new_set = [json.dumps(d, sort_keys=True) for d in new_diagnostics]
            gone = [json.loads(d) for d in old_set if d not in set(new_set)]
            came = [json.loads(d) for d in new_set if d not in set(old_set)]
            out.append(f"{name}: {len(old_diagnostics)} -> {len(new_diagnostics)} findings, {len(gone)} gone, {len(came)} new"
                       + ("" if gone or came else " (the same findings in another order, or repeated)"))
            out += [f"  - {line_of(d)}" for d in gone[:20]]
            out += [f"  + {line_of(d)}" for d in came[:20]]
        for key in sorted(set(old_report) | set(new_report)):
            if key != "diagnostics" and old_report.get(key) != new_report.get(key):
                out.append(f"{name}: {key}: {old_report.get(key)} -> {new_report.get(key)}")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=["record", "compare"])
    parser.add_argument("directory", type=Path, help="where the recorded findings are kept")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help=f"the corpus (default {CORPUS})")
    options = parser.parse_args()
    if not (options.corpus / "MANIFEST.tsv").is_file():
        print(f"no corpus with a MANIFEST.tsv at {options.corpus}", file=sys.stderr)
        return 2
    recorded = options.directory / "findings.json"
    current = findings(options.corpus)
    if options.action == "record":
        options.directory.mkdir(parents=True, exist_ok=True)
        recorded.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        counts = ", ".join(f"{name}: {len((r['report'] or {}).get('diagnostics', []))} findings" for name, r in current.items())
        print(f"recorded {counts} in {recorded}")
        return 0
    before = json.loads(recorded.read_text(encoding="utf-8"))
    found = differences(before, current)
    if found:
        print("\n".join(found))
        return 1
    counts = ", ".join(f"{name}: {len((r['report'] or {}).get('diagnostics', []))}" for name, r in current.items())
    print(f"the same findings ({counts})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
