"""Measure dslint's precision on public training repositories, the way a new user meets it.

    python benchmarks/precision/run.py benchmarks/precision/repos-dev.tsv [--seed 16]
           [--warnings 60] [--infos 30] [--mirror /work/.mirror] [--trees DIR] [--dslint PATH]

For each ``repo<TAB>commit`` row of the TSV (the set is named after the file: ``repos-dev.tsv``
is the set ``dev``; a row without a commit is measured at the mirror's HEAD, which is printed):

1. the tree at that commit is written out of the repository's bare snapshot in the mirror
   (``<mirror>/<owner>+<name>/repo``, as the ``fetch`` tool leaves it). This script cannot fetch:
   a repository or commit that is not in the mirror is listed, with what to fetch, and skipped;
2. dslint runs as a user runs it: ``cd <tree> && dslint check --format json --exit-zero .``, and
   ``dslint explain --format json <script>`` on every shell script of the tree (``*.sh``,
   ``*.bash``, ``*.slurm``, ``*.sbatch``, and files without a suffix whose first line is a shell
   ``#!``);
3. results are written beside this script:

   - ``results/<set>/<owner>+<name>.json``: dslint's findings (its own messages, with path, line
     and code), the launches ``explain`` found (path, line, launcher, consumer, world size, global
     batch, the factors left unknown) and the timings;
   - ``<set>-summary.json`` and ``<set>-summary.md``: findings by severity and rule; for the
     distributed launches (every launcher but plain ``python``) the share whose consumer is
     identified, whose world size is known and whose global batch is resolved; timings; and
     the precision measured from the verdicts in the judging sheet;
   - ``<set>-judged.tsv``: one row per finding, to be judged by hand (``verdict`` true or false,
     and a one-line ``reason``). Every error is marked ``sampled``, and a seeded random sample
     of the warnings and of the infos. Re-running keeps each earlier verdict on the finding with
     the same repo, path, code and message (the line and the commit may change), so judgments
     carry over between dslint versions; judged findings that dslint no longer reports move to
     ``<set>-judged-gone.tsv``, which the summary counts (a false finding gone is a fix, a true
     one gone is a lost detection).

Nothing from the repositories is written here except their names and commits, file paths, line
numbers, and dslint's own output about them. The trees stay outside the worktree (``--trees``).

Standard library only; not a test module (pytest collects ``tests/`` only).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHELL_SUFFIXES = {".sh", ".bash", ".slurm", ".sbatch"}
SHEET_COLUMNS = ["repo", "commit", "path", "line", "code", "severity", "message", "verdict", "reason", "sampled"]
SEVERITIES = ("error", "warning", "info")
CHECK_TIMEOUT = 900
EXPLAIN_TIMEOUT = 120


@dataclass
class Repo:
    name: str  # owner/name
    commit: str

    @property
    def slug(self) -> str:
        return self.name.replace("/", "+")


# ---- inputs --------------------------------------------------------------------------------------


def read_repos(tsv: Path) -> list[Repo]:
    with tsv.open(newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    return [Repo(row["repo"].strip(), (row.get("commit") or "").strip()) for row in rows if row.get("repo", "").strip()]


def set_name(tsv: Path) -> str:
    stem = tsv.stem
    return stem[len("repos-"):] if stem.startswith("repos-") else stem


def dslint_command(explicit: str | None) -> str:
    if explicit:
        return explicit
    beside = Path(sys.executable).parent / "dslint"
    found = str(beside) if beside.exists() else shutil.which("dslint")
    if not found:
        sys.exit("no dslint found beside this Python or on PATH; pass --dslint")
    return found


def dslint_identity(dslint: str) -> dict:
    """The dslint version and, when it runs from a git checkout, the commit (and whether it is dirty)."""
    version = run([dslint, "--version"], Path.cwd(), 60).stdout.strip()
    identity = {"version": version, "commit": None, "dirty": None}  # commit: of the dslint package directory
    interpreter = Path(dslint).read_text(errors="replace").splitlines()[0].removeprefix("#!").strip()
    if not interpreter or not Path(interpreter.split()[0]).exists():
        return identity
    where = run([*interpreter.split(), "-c", "import dslint, os; print(os.path.dirname(dslint.__file__))"], Path.cwd(), 60)
    package = Path(where.stdout.strip() or ".")
    # the last commit that changed the package itself: benchmark-only commits do not change dslint
    head = run(["git", "-C", str(package), "log", "-1", "--format=%H", "--", "."], Path.cwd(), 60)
    if head.returncode == 0 and head.stdout.strip():
        status = run(["git", "-C", str(package), "status", "--porcelain", "--untracked-files=no", "--", "."], Path.cwd(), 60)
        identity.update(commit=head.stdout.strip(), dirty=bool(status.stdout.strip()))
    return identity


# ---- processes -----------------------------------------------------------------------------------


def environment() -> dict[str, str]:
    # PYTHONDONTWRITEBYTECODE would make every run recompile dslint, which an installed dslint never does.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "GITHUB_ACTIONS")}
    env["NO_COLOR"] = "1"
    # Every measurement is a first run: nothing replayed from .dslint_cache/, nothing written into the trees.
    env["DSLINT_NO_CACHE"] = "1"
    return env


def run(argv: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                              env=environment(), stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(argv, -1, "", f"timed out after {timeout} s")


def last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


# ---- trees ---------------------------------------------------------------------------------------


def materialise(repo: Repo, mirror: Path, trees: Path) -> tuple[Path | None, str | None]:
    """The tree of repo@commit, written once from the mirror; or None and what is missing.

    Snapshots lack large files (4 MiB and more) and Git LFS content, so ``git archive`` would stop
    at the first missing blob: the files are written one by one and the missing ones listed in
    ``<tree>.missing`` beside it (a user's checkout would have them; dslint skips such data files).
    """
    git_dir = mirror / repo.slug / "repo"
    git = ["git", "--git-dir", str(git_dir)]
    if not git_dir.is_dir():
        return None, f"not in the mirror: fetch github:{repo.name}"
    if not repo.commit:  # a list without commits (the held-out candidates): measure the snapshot, and say which
        repo.commit = run([*git, "rev-parse", "HEAD"], trees, 60).stdout.strip()
        print(f"{repo.name}: no commit in the list, measuring the mirror's HEAD {repo.commit}; record it", file=sys.stderr)
    if run([*git, "cat-file", "-e", f"{repo.commit}^{{commit}}"], trees, 60).returncode:
        head = run([*git, "rev-parse", "HEAD"], trees, 60).stdout.strip()
        return None, f"commit {repo.commit} is not in the mirror's snapshot (its HEAD is {head})"
    tree = trees / f"{repo.slug}-{repo.commit[:12]}"
    done = trees / f"{tree.name}.complete"  # beside the tree, not in it, where dslint would see it
    if done.exists():
        return tree, None
    shutil.rmtree(tree, ignore_errors=True)
    tree.mkdir(parents=True)
    listing = subprocess.run([*git, "ls-tree", "-r", "-z", repo.commit], capture_output=True, check=True).stdout
    entries = []  # (mode, object id, path) of blobs; submodules (commits) are left out as a clone leaves them
    for record in listing.split(b"\0"):
        if record:
            meta, path = record.split(b"\t", 1)
            mode, kind, oid = meta.split()
            if kind == b"blob":
                entries.append((mode.decode(), oid.decode(), path.decode(errors="surrogateescape")))
    missing = []
    with subprocess.Popen([*git, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE) as batch:
        for mode, oid, path in entries:
            batch.stdin.write(oid.encode() + b"\n")
            batch.stdin.flush()
            header = batch.stdout.readline().split()
            if len(header) < 3 or header[1] != b"blob":
                missing.append(path)
                continue
            content = batch.stdout.read(int(header[2]))
            batch.stdout.read(1)  # the newline after the content
            target = tree / path
            target.parent.mkdir(parents=True, exist_ok=True)
            if mode == "120000":
                link = os.fsdecode(content)
                if (target.parent / link).resolve().is_relative_to(tree.resolve()):
                    os.symlink(link, target)
                continue
            target.write_bytes(content)
            if mode == "100755":
                target.chmod(0o755)
        batch.stdin.close()
    (trees / f"{tree.name}.missing").write_text("".join(p + "\n" for p in missing))
    done.write_text(repo.commit + "\n")
    return tree, None


def shell_scripts(tree: Path) -> list[str]:
    found = []
    for directory, subdirs, files in os.walk(tree):
        subdirs[:] = sorted(d for d in subdirs if d != ".git")
        for name in sorted(files):
            path = Path(directory, name)
            if path.suffix in SHELL_SUFFIXES or (not path.suffix and starts_as_shell(path)):
                found.append(path.relative_to(tree).as_posix())
    return found


def starts_as_shell(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            first = handle.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and any(shell in first for shell in (b"bash", b"/sh", b"env sh", b"zsh"))


# ---- one repository ------------------------------------------------------------------------------


def clean(text: object) -> str:
    return " ".join(str(text).split())


def check(dslint: str, tree: Path) -> dict:
    start = time.perf_counter()
    done = run([dslint, "check", "--format", "json", "--exit-zero", "."], tree, CHECK_TIMEOUT)
    seconds = time.perf_counter() - start
    result = {"seconds": round(seconds, 3), "exit": done.returncode, "crash": None, "files": None, "diagnostics": []}
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        result["crash"] = last_line(done.stderr) or "no JSON on stdout"
        return result
    if done.returncode:
        result["crash"] = last_line(done.stderr)
    result["files"] = report.get("summary", {}).get("files")
    result["diagnostics"] = [
        {"path": d["path"], "line": d.get("line"), "code": d["code"], "name": d.get("name"),
         "severity": d["severity"], "message": clean(d["message"]), "fixable": d.get("fix") is not None}
        for d in report.get("diagnostics", [])
    ]
    return result


def value_of(entry: object) -> object:
    return entry.get("value") if isinstance(entry, dict) else None


def consumer_of(launch: dict) -> tuple[str | None, object]:
    """The consumer dslint established and its evidence (``program`` in explain's JSON); a consumer
    that is only assumed from the flags does not count as identified."""
    program = launch.get("program")
    if isinstance(program, dict):
        if program.get("established"):
            return program.get("kind"), program.get("evidence") or [program.get("program")]
        return None, None
    consumer = launch.get("consumer")  # explain before the program field: a guess from the flags
    if isinstance(consumer, dict):
        return consumer.get("kind") or consumer.get("value") or consumer.get("name"), consumer.get("evidence")
    return consumer, launch.get("consumer_evidence")


def launch_record(launch: dict) -> dict:
    batch = launch.get("batch") or {}
    consumer, evidence = consumer_of(launch)
    unknown = [factor for factor in ("micro_batch", "gradient_accumulation", "data_parallel")
               if value_of(batch.get(factor)) is None]
    return {
        "path": launch.get("path"), "line": launch.get("line"), "kind": launch.get("kind"),
        "launcher": launch.get("launcher"), "entry": launch.get("entry"),
        "consumer": consumer, "consumer_evidence": evidence,
        "world_size": value_of(launch.get("world_size")),
        "global_batch": batch.get("global_batch"), "unknown_factors": unknown,
    }


def explain(dslint: str, tree: Path, scripts: list[str]) -> dict:
    launches: dict[tuple, dict] = {}
    failures = []
    start = time.perf_counter()
    for script in scripts:
        done = run([dslint, "explain", "--format", "json", script], tree, EXPLAIN_TIMEOUT)
        try:
            report = json.loads(done.stdout)
        except json.JSONDecodeError:
            failures.append({"script": script, "exit": done.returncode, "error": last_line(done.stderr) or "no JSON"})
            continue
        for launch in report.get("launches", []):
            if launch.get("kind") == "launch":
                record = launch_record(launch)
                launches.setdefault((record["path"], record["line"]), record)
    return {"seconds": round(time.perf_counter() - start, 3), "scripts": len(scripts),
            "failures": failures, "launches": sorted(launches.values(), key=lambda r: (r["path"], r["line"]))}


def measure(repo: Repo, tree: Path, dslint: str) -> dict:
    return {"repo": repo.name, "commit": repo.commit, "check": check(dslint, tree),
            "explain": explain(dslint, tree, shell_scripts(tree))}


# ---- the judging sheet ---------------------------------------------------------------------------


def key(row: dict) -> tuple:
    return row["repo"], row["path"], row["code"], row["message"]


def read_sheet(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def write_sheet(path: Path, rows: list[dict]) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, SHEET_COLUMNS, delimiter="\t", lineterminator="\n", extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def build_sheet(results: list[dict], earlier: list[dict], seed: int, quota: dict[str, int | None]) -> tuple[list[dict], list[dict]]:
    """Rows for every finding, earlier verdicts carried over; and the judged rows no longer found."""
    rows = [
        {"repo": r["repo"], "commit": r["commit"], "path": d["path"], "line": str(d["line"] or ""),
         "code": d["code"], "severity": d["severity"], "message": d["message"], "verdict": "", "reason": "", "sampled": ""}
        for r in results for d in r["check"]["diagnostics"]
    ]
    rows.sort(key=lambda row: (row["repo"], row["path"], int(row["line"] or 0), row["code"], row["message"]))
    judged: dict[tuple, list[dict]] = {}
    for old in earlier:
        if old.get("verdict", "").strip():
            judged.setdefault(key(old), []).append(old)
    for same_line in (True, False):  # the verdict on the same line first; then, lines having moved, in order
        for row in rows:
            candidates = judged.get(key(row))
            if row["verdict"] or not candidates:
                continue
            pick = next((c for c in candidates if c.get("line") == row["line"]), None) if same_line else candidates[0]
            if pick is not None:
                candidates.remove(pick)
                row["verdict"], row["reason"] = pick["verdict"].strip(), pick.get("reason", "").strip()
    gone = [old for olds in judged.values() for old in olds]
    rng = random.Random(seed)
    for severity in SEVERITIES:
        population = [row for row in rows if row["severity"] == severity]
        wanted = quota.get(severity)
        chosen = population if wanted is None or wanted >= len(population) else rng.sample(population, wanted)
        for row in chosen:
            row["sampled"] = "yes"
    return rows, gone


# ---- summary -------------------------------------------------------------------------------------


def share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "0/0"


def summarise(name: str, results: list[dict], missing: list[dict], rows: list[dict], gone: list[dict],
              identity: dict, seed: int, quota: dict) -> dict:
    by_severity = Counter(row["severity"] for row in rows)
    by_rule = Counter((row["code"], row["severity"]) for row in rows)
    precision = {}
    for severity in SEVERITIES:
        verdicts = Counter(row["verdict"] for row in rows if row["severity"] == severity and row["verdict"])
        sampled = [row for row in rows if row["severity"] == severity and row["sampled"]]
        in_sample = Counter(row["verdict"] for row in sampled if row["verdict"])
        precision[severity] = {
            "findings": by_severity[severity], "sampled": len(sampled),
            "sampled_unjudged": sum(1 for row in sampled if not row["verdict"]),
            "sampled_false": in_sample["false"],
            "judged": verdicts["true"] + verdicts["false"], "true": verdicts["true"], "false": verdicts["false"],
        }
    launches = [launch for r in results for launch in r["explain"]["launches"]]
    distributed = [launch for launch in launches if launch["launcher"] not in (None, "python")]
    known_world = [launch for launch in distributed if launch["world_size"] is not None]
    return {
        "set": name, "dslint": identity, "seed": seed, "sample_quota": quota,
        "repositories": len(results), "missing": missing,
        "findings": {severity: by_severity[severity] for severity in SEVERITIES},
        "by_rule": [{"code": code, "severity": severity, "count": count}
                    for (code, severity), count in sorted(by_rule.items(), key=lambda item: (-item[1], item[0]))],
        "precision": precision,
        "gone": dict(Counter(f"{row['severity']}:{row['verdict']}" for row in gone)),
        "launches": {
            "all": len(launches), "distributed": len(distributed),
            "by_launcher": dict(Counter(launch["launcher"] or "none" for launch in launches)),
            "consumer_identified": sum(1 for launch in distributed if launch["consumer"]),
            "consumer_with_evidence": sum(1 for launch in distributed if launch["consumer_evidence"]),
            "world_size_known": len(known_world),
            "global_batch_resolved": sum(1 for launch in distributed if launch["global_batch"] is not None),
            "global_batch_resolved_with_world_known": sum(1 for launch in known_world if launch["global_batch"] is not None),
        },
        "timing": {
            "check_seconds": round(sum(r["check"]["seconds"] for r in results), 2),
            "explain_seconds": round(sum(r["explain"]["seconds"] for r in results), 2),
            "explain_runs": sum(r["explain"]["scripts"] for r in results),
            "files_checked": sum(r["check"]["files"] or 0 for r in results),
        },
        "crashes": [{"repo": r["repo"], "check": r["check"]["crash"]} for r in results if r["check"]["crash"]]
                   + [{"repo": r["repo"], "explain": f} for r in results for f in r["explain"]["failures"]],
        "per_repo": [
            {"repo": r["repo"], "commit": r["commit"], "files": r["check"]["files"],
             **{severity: sum(1 for d in r["check"]["diagnostics"] if d["severity"] == severity) for severity in SEVERITIES},
             "scripts": r["explain"]["scripts"], "launches": len(r["explain"]["launches"]),
             "distributed": sum(1 for launch in r["explain"]["launches"] if launch["launcher"] not in (None, "python")),
             "check_seconds": r["check"]["seconds"], "explain_seconds": r["explain"]["seconds"]}
            for r in results
        ],
    }


def markdown(summary: dict) -> str:
    lines = [f"# Precision measurement: set `{summary['set']}`", "",
             f"{summary['dslint']['version']} at commit {summary['dslint']['commit'] or 'unknown'}"
             + (" (with uncommitted changes)" if summary['dslint']['dirty'] else "")
             + f"; sample seed {summary['seed']}, quota {summary['sample_quota']}.", ""]
    if summary["missing"]:
        lines += ["Skipped (not in the mirror):", ""] + [f"- {m['repo']}: {m['why']}" for m in summary["missing"]] + [""]
    lines += ["## Findings and precision", "",
              "Rates over the seeded sample (every error, a random sample of warnings and infos), and over every",
              "finding with a verdict (the sample plus any judged beyond it).", "",
              "| severity | findings | sampled | false in sample | false rate (sample) | judged | false | false rate (judged) |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for severity, p in summary["precision"].items():
        judged_in_sample = p["sampled"] - p["sampled_unjudged"]
        sample_rate = f"{100 * p['sampled_false'] / judged_in_sample:.1f}%" if judged_in_sample else "-"
        rate = f"{100 * p['false'] / p['judged']:.1f}%" if p["judged"] else "-"
        lines.append(f"| {severity} | {p['findings']} | {p['sampled']} | {p['sampled_false']} | {sample_rate} | "
                     f"{p['judged']} | {p['false']} | {rate} |")
    unjudged = sum(p["sampled_unjudged"] for p in summary["precision"].values())
    if unjudged:
        lines += ["", f"{unjudged} sampled findings have no verdict yet."]
    if summary["gone"]:
        lines += ["", "Judged findings no longer reported (severity:verdict): "
                  + ", ".join(f"{k} {v}" for k, v in sorted(summary["gone"].items()))]
    launches = summary["launches"]
    d = launches["distributed"]
    lines += ["", "## Distributed launches (every launcher but plain `python`)", "",
              f"- launches found by `explain`: {launches['all']} ({launches['by_launcher']}); distributed: {d}",
              f"- consumer identified: {share(launches['consumer_identified'], d)}"
              f" (with evidence shown: {share(launches['consumer_with_evidence'], d)})",
              f"- world size known: {share(launches['world_size_known'], d)}",
              f"- global batch resolved: {share(launches['global_batch_resolved'], d)};"
              f" of those with the world size known: {share(launches['global_batch_resolved_with_world_known'], launches['world_size_known'])}",
              "", "## Timing", "",
              f"- `dslint check`: {summary['timing']['check_seconds']} s for {summary['timing']['files_checked']} files in"
              f" {summary['repositories']} repositories (one process per repository)",
              f"- `dslint explain`: {summary['timing']['explain_seconds']} s for {summary['timing']['explain_runs']} scripts"
              " (one process per script)",
              "", "## Per repository", "",
              "| repo | files | error | warning | info | scripts | launches | distributed | check s | explain s |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in summary["per_repo"]:
        lines.append(f"| {r['repo']} | {r['files']} | {r['error']} | {r['warning']} | {r['info']} | {r['scripts']} | "
                     f"{r['launches']} | {r['distributed']} | {r['check_seconds']:.2f} | {r['explain_seconds']:.2f} |")
    lines += ["", "## By rule", "", "| code | severity | count |", "|---|---|---:|"]
    lines += [f"| {r['code']} | {r['severity']} | {r['count']} |" for r in summary["by_rule"]]
    if summary["crashes"]:
        lines += ["", "## Crashes", ""] + [f"- {json.dumps(c)}" for c in summary["crashes"]]
    return "\n".join(lines) + "\n"


# ---- main ----------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", type=Path, help="TSV with repo and commit columns (repos-<set>.tsv)")
    parser.add_argument("--mirror", type=Path, default=Path(os.environ.get("DSLINT_MIRROR", "/work/.mirror")))
    parser.add_argument("--trees", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "dslint-precision",
                        help="where the repositories' trees are written (outside the worktree)")
    parser.add_argument("--dslint", help="the dslint executable (default: beside this Python, else on PATH)")
    parser.add_argument("--out", type=Path, default=HERE, help="where results, summary and sheet go")
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--warnings", type=int, default=60, help="warnings to sample for judging")
    parser.add_argument("--infos", type=int, default=30, help="infos to sample for judging")
    parser.add_argument("--from-results", action="store_true",
                        help="do not run dslint: summarise the results already written, with the sheet's verdicts")
    args = parser.parse_args(argv)

    name = set_name(args.repos)
    if args.from_results:
        return resummarise(args, name)
    dslint = dslint_command(args.dslint)
    identity = dslint_identity(dslint)
    args.trees.mkdir(parents=True, exist_ok=True)
    results_dir = args.out / "results" / name
    results_dir.mkdir(parents=True, exist_ok=True)

    results, missing = [], []
    for repo in read_repos(args.repos):
        tree, why = materialise(repo, args.mirror, args.trees)
        if tree is None:
            missing.append({"repo": repo.name, "why": why})
            print(f"skip {repo.name}: {why}", file=sys.stderr)
            continue
        result = measure(repo, tree, dslint)
        (results_dir / f"{repo.slug}.json").write_text(json.dumps(result, indent=1) + "\n")
        counts = Counter(d["severity"] for d in result["check"]["diagnostics"])
        print(f"{repo.name}: {counts['error']} errors, {counts['warning']} warnings, {counts['info']} infos, "
              f"{len(result['explain']['launches'])} launches, check {result['check']['seconds']:.1f} s, "
              f"explain {result['explain']['seconds']:.1f} s", file=sys.stderr)
        results.append(result)

    sheet = args.out / f"{name}-judged.tsv"
    quota = {"error": None, "warning": args.warnings, "info": args.infos}
    gone_path = args.out / f"{name}-judged-gone.tsv"
    rows, gone = build_sheet(results, read_sheet(sheet) + read_sheet(gone_path), args.seed, quota)
    write_sheet(sheet, rows)
    if gone:
        write_sheet(gone_path, gone)
    elif gone_path.exists():
        gone_path.unlink()
    summary = summarise(name, results, missing, rows, gone, identity, args.seed, quota)
    (args.out / f"{name}-summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    (args.out / f"{name}-summary.md").write_text(markdown(summary))
    if missing:
        print("missing from the mirror (fetch them, then run again):", file=sys.stderr)
        for m in missing:
            print(f"  {m['repo']}: {m['why']}", file=sys.stderr)
    print(f"wrote {sheet.relative_to(Path.cwd()) if sheet.is_relative_to(Path.cwd()) else sheet}", file=sys.stderr)
    return 0


def resummarise(args, name: str) -> int:
    """The summary again from the results a run wrote and the verdicts judged since (the dslint
    that made them is the one the earlier summary records, not the one installed now)."""
    results_dir = args.out / "results" / name
    results = [json.loads((results_dir / f"{repo.slug}.json").read_text()) for repo in read_repos(args.repos)
               if (results_dir / f"{repo.slug}.json").exists()]
    earlier = json.loads((args.out / f"{name}-summary.json").read_text())
    sheet = args.out / f"{name}-judged.tsv"
    quota = {"error": None, "warning": args.warnings, "info": args.infos}
    gone_path = args.out / f"{name}-judged-gone.tsv"
    rows, gone = build_sheet(results, read_sheet(sheet) + read_sheet(gone_path), args.seed, quota)
    write_sheet(sheet, rows)
    summary = summarise(name, results, earlier.get("missing", []), rows, gone, earlier["dslint"], args.seed, quota)
    (args.out / f"{name}-summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    (args.out / f"{name}-summary.md").write_text(markdown(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
