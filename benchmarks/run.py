"""Time dslint against peer linters and the programs it stands in for, on this machine.

    python benchmarks/run.py [--rounds N] [--markdown FILE]

Needs the peers installed beside dslint (this script installs nothing):

    pip install yamllint check-jsonschema

A peer that is missing is skipped with a note, and so is DeepSpeed's own config loader when
deepspeed is not installed. Commands (each a fresh process, as a pre-commit hook or CI step runs it):

- ``python -c pass``: the floor, Python's own start-up;
- dslint on one small DeepSpeed config: the pre-commit case;
- yamllint on one YAML file of the corpus, check-jsonschema (with dslint's DeepSpeed schema,
  ``schemas/deepspeed.schema.json``) on one JSON file, and DeepSpeed's ``DeepSpeedConfig`` loading
  one config;
- dslint on the whole ``../shared/corpus`` plus 1,000 generated launch scripts (written to a
  temporary directory), and on the corpus alone;
- dslint on the 1,000 generated launch scripts alone, cold (``--no-cache``) and with a warm run
  cache (the same run again, nothing changed: ``.dslint_cache/`` replays it);
- the pre-commit case with launch context: one DeepSpeed config, changed before every run, named
  alone in a generated 1,000-file git repository whose launch scripts reference it (the reference
  index is warm, the run cache misses), against the same config changed and linted alone in a
  folder of its own with the same options (the one-file run as pre-commit makes it);
- yamllint on the corpus's YAML files and check-jsonschema on its JSON files (the same files
  dslint reads, which it also classifies, links and checks against far more rules).

Every dslint row but the warm ones passes ``--no-cache``; the cache of the warm rows is kept in a
temporary folder (``DSLINT_CACHE_DIR``), never in the corpus.

Runs are interleaved (round after round, every command once per round) so that a noisy moment
hits all commands alike, after one warm-up round that is not counted (it also writes the
bytecode caches). Reported: the median and the minimum wall time, the time per file, the ratio
to ``python -c pass``, and the peak memory of each command (``ru_maxrss`` from
``resource.getrusage(RUSAGE_CHILDREN)`` in a wrapper process that runs only that command).

PYTHONDONTWRITEBYTECODE is removed from the commands' environment: with it set, every run
recompiles every module it imports, which installed packages never do.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
SCHEMA = ROOT / "schemas" / "deepspeed.schema.json"
SMALL_CONFIG = "axolotl-ai-cloud__axolotl/deepspeed_configs/zero1.json"
BIN = Path(sys.executable).parent
SCRIPTS_COLD = "dslint: launch scripts, cold"
SCRIPTS_WARM = "dslint: launch scripts, warm cache"
CHANGED_IN_REPO = "dslint: one changed config in a repository"
CHANGED_ALONE = "dslint: one changed config alone"


def tool(name: str) -> str | None:
    """The console script installed beside this Python (not a pyenv shim, which adds its own start-up)."""
    beside = BIN / name
    if beside.exists():
        return str(beside)
    return shutil.which(name)


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "GITHUB_ACTIONS")}
    env["NO_COLOR"] = "1"
    return env


# ---- generated launch scripts --------------------------------------------------------------------

LAUNCHERS = [
    "deepspeed --num_gpus {n} train.py --deepspeed {ds}",
    "torchrun --nproc_per_node {n} --nnodes 1 train.py --deepspeed {ds}",
    "accelerate launch --num_processes {n} train.py",
    "NPROC_PER_NODE={n} swift sft --model Qwen/Qwen2.5-7B-Instruct --deepspeed zero2",
    "FORCE_TORCHRUN=1 llamafactory-cli train examples/train_lora/llama3_lora_sft.yaml",
    "python train.py --deepspeed {ds}",
]
FLAGS = ["--per_device_train_batch_size {b}", "--gradient_accumulation_steps {g}", "--learning_rate 1e-5", "--bf16 true",
         "--output_dir out/$RUN", "--max_grad_norm 1.0", "--warmup_steps 10", "--lr_scheduler_type cosine", "--num_train_epochs 3"]


def generate_scripts(directory: Path, count: int, configs: list[Path] | list[str]) -> list[Path]:
    rng = random.Random(0)
    paths = []
    for index in range(count):
        n = rng.choice([1, 2, 4, 8])
        lines = ["#!/bin/bash", "set -euo pipefail", f"export CUDA_VISIBLE_DEVICES={','.join(str(i) for i in range(n))}",
                 f"RUN=run{index}", "MASTER_PORT=$((RANDOM % 1000 + 20000))"]
        if rng.random() < 0.3:
            lines.append('if [ -z "${NGPU:-}" ]; then NGPU=' + str(n) + "; fi")
        ds = str(rng.choice(configs)) if configs else "ds_config.json"
        command = rng.choice(LAUNCHERS).format(n=n, ds=ds)
        flags = [f.format(b=rng.choice([1, 2, 4]), g=rng.choice([1, 4, 8])) for f in rng.sample(FLAGS, rng.randint(2, 7))]
        lines.append(" \\\n    ".join([command, *flags]))
        if rng.random() < 0.1:
            lines.append("")  # a blank line after a continuation, now and then
        path = directory / f"launch_{index:04d}.sh"
        path.write_text("\n".join(lines) + "\n")
        paths.append(path)
    return paths


def generate_repository(directory: Path, files: int, configs: list[Path]) -> Path:
    """A git work tree of ``files`` files: DeepSpeed configs under configs/ and launch scripts
    under scripts/ that name them relative to the root. Returns the config to change and lint."""
    (directory / "configs").mkdir(parents=True)
    (directory / "scripts").mkdir()
    names = []
    for index, config in enumerate(configs):
        name = f"configs/ds_{index:02d}.json"
        shutil.copyfile(config, directory / name)
        names.append(name)
    generate_scripts(directory / "scripts", files - len(names), names)
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(directory)], check=False)
    else:
        (directory / ".git").mkdir()
    return directory / names[0]


class Toggle:
    """Changes a config before each run: a trailing newline on, then off, so every run misses the
    run cache while the reference index stays warm."""

    def __init__(self, path: Path):
        self.path, self.text, self.flip = path, path.read_text(encoding="utf-8").rstrip("\n"), False

    def __call__(self) -> None:
        self.flip = not self.flip
        self.path.write_text(self.text + ("\n\n" if self.flip else "\n"), encoding="utf-8")


# ---- measuring -----------------------------------------------------------------------------------

MEMORY_WRAPPER = "import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); " \
                 "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"


def run_once(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd, stdin=subprocess.DEVNULL)
    return time.perf_counter() - start


def peak_memory_kb(argv: list[str], env: dict[str, str], cwd: Path) -> int:
    out = subprocess.run([sys.executable, "-c", MEMORY_WRAPPER, *argv], capture_output=True, text=True, env=env, cwd=cwd)
    return int(out.stdout.strip() or 0)


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7, help="measured rounds (default 7), after one warm-up round")
    parser.add_argument("--scripts", type=int, default=1000, help="generated launch scripts (default 1000)")
    parser.add_argument("--markdown", type=Path, default=None, help="also write the results as a README section to this file")
    options = parser.parse_args()

    if not CORPUS.is_dir():
        print(f"the shared corpus is not beside the repository ({CORPUS})", file=sys.stderr)
        return 2
    env = environment()
    dslint = [tool("dslint")] if tool("dslint") else [sys.executable, "-m", "dslint"]
    cold = [*dslint, "check", "--no-cache"]
    yamllint, check_jsonschema = tool("yamllint"), tool("check-jsonschema")
    yaml_files = sorted(str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".yml"))
    json_files = sorted(str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*.json"))
    ds_configs = [CORPUS / p for p in json_files if "deepspeed" in p.lower() or "ds_" in p.lower() or "zero" in p.lower()][:40]
    one_yaml = next(p for p in yaml_files if "accelerate" not in p)

    with tempfile.TemporaryDirectory(prefix="dslint-bench-") as tmp:
        scripts_dir = Path(tmp) / "scripts"
        scripts_dir.mkdir()
        generate_scripts(scripts_dir, options.scripts, ds_configs)
        repository = Path(tmp) / "repository"
        changed = generate_repository(repository, options.scripts, ds_configs)
        env["DSLINT_CACHE_DIR"] = str(Path(tmp) / "cache")
        script_files = [p for p in CORPUS.rglob("*") if p.suffix in (".sh", ".bash", ".slurm", ".sbatch")]
        corpus_files = len(yaml_files) + len(json_files) + len(script_files)

        # (label, argv, cwd, files)
        commands: list[tuple[str, list[str], Path, int]] = [
            ("python -c pass", [sys.executable, "-c", "pass"], CORPUS, 0),
            ("dslint: one small config", [*cold, "--no-config", SMALL_CONFIG], CORPUS, 1),
        ]
        alone = Path(tmp) / "alone"
        alone.mkdir()
        shutil.copyfile(changed, alone / changed.name)
        before = {CHANGED_IN_REPO: Toggle(changed), CHANGED_ALONE: Toggle(alone / changed.name)}
        notes = []
        if yamllint:
            commands.append(("yamllint: one YAML file", [yamllint, one_yaml], CORPUS, 1))
        else:
            notes.append("yamllint is not installed: skipped (pip install yamllint)")
        if check_jsonschema:
            commands.append(("check-jsonschema: one JSON file", [check_jsonschema, "--schemafile", str(SCHEMA), SMALL_CONFIG], CORPUS, 1))
        else:
            notes.append("check-jsonschema is not installed: skipped (pip install check-jsonschema)")
        try:
            import importlib.util

            has_deepspeed = importlib.util.find_spec("deepspeed") is not None
        except (ImportError, ValueError):
            has_deepspeed = False
        if has_deepspeed:
            load = ("import logging, warnings; warnings.simplefilter('ignore'); "
                    "from deepspeed.runtime.config import DeepSpeedConfig; DeepSpeedConfig(%r)" % SMALL_CONFIG)
            commands.append(("DeepSpeedConfig: one config", [sys.executable, "-c", load], CORPUS, 1))
        else:
            notes.append("deepspeed is not installed: DeepSpeedConfig skipped")
        commands.append((f"dslint: corpus + {options.scripts} scripts", [*cold, "--no-config", ".", str(scripts_dir)], CORPUS,
                         corpus_files + options.scripts))
        commands.append(("dslint: corpus", [*cold, "--no-config", "."], CORPUS, corpus_files))
        commands.append((SCRIPTS_COLD, [*cold, "--no-config", "."], scripts_dir, options.scripts))
        commands.append((SCRIPTS_WARM, [*dslint, "check", "--no-config", "."], scripts_dir, options.scripts))
        commands.append((CHANGED_ALONE, [*dslint, "check", "--no-config", changed.name], alone, 1))
        commands.append((CHANGED_IN_REPO, [*dslint, "check", "--no-config", str(changed.relative_to(repository))], repository, 1))
        if yamllint:
            commands.append(("yamllint: corpus YAML", [yamllint, *yaml_files], CORPUS, len(yaml_files)))
        if check_jsonschema:
            commands.append(("check-jsonschema: corpus JSON", [check_jsonschema, "--schemafile", str(SCHEMA), *json_files], CORPUS,
                             len(json_files)))

        times: dict[str, list[float]] = {label: [] for label, *_ in commands}
        speed = []
        for round_number in range(options.rounds + 1):
            speed.append(calibration())
            for label, argv, cwd, _ in commands:
                if label in before:
                    before[label]()
                elapsed = run_once(argv, env, cwd)
                if round_number:  # round 0 warms caches and writes bytecode
                    times[label].append(elapsed)
        memory = {label: peak_memory_kb(argv, env, cwd) for label, argv, cwd, _ in commands}

    floor = statistics.median(times["python -c pass"])
    rows = []
    for label, _, _, files in commands:
        median = statistics.median(times[label])
        rows.append((label, files, median, min(times[label]), median / files if files else None, median / floor, memory[label] / 1024))

    machine = (f"{os.cpu_count()} cores, {cpu_model()}, Python {platform.python_version()} ({platform.system()} {platform.release()}); "
               f"{options.rounds} interleaved rounds after one warm-up; PYTHONDONTWRITEBYTECODE unset; "
               f"calibration loop {statistics.median(speed) * 1000:.0f} ms (min {min(speed) * 1000:.0f} ms)")
    lines = [f"Machine: {machine}", ""]
    lines.append("| command | files | median | min | per file | × `python -c pass` | peak RSS |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|")
    for label, files, median, fastest, per_file, ratio, rss in rows:
        per = f"{per_file * 1000:.2f} ms" if per_file is not None else "–"
        lines.append(f"| {label} | {files or '–'} | {median * 1000:.0f} ms | {fastest * 1000:.0f} ms | {per} | {ratio:.1f} | {rss:.0f} MB |")
    by = {row[0]: row for row in rows}

    def median_of(label):
        return by[label][2] if label in by else None

    checks = []
    one = median_of("dslint: one small config")
    checks.append((f"one file within 6 × python -c pass: {one / floor:.1f} ×", one <= 6 * floor))
    if median_of("yamllint: one YAML file"):
        checks.append((f"one file faster than yamllint on one file: {one * 1000:.0f} ms vs {median_of('yamllint: one YAML file') * 1000:.0f} ms",
                       one < median_of("yamllint: one YAML file")))
    scripts_cold, scripts_warm, in_repo = median_of(SCRIPTS_COLD), median_of(SCRIPTS_WARM), median_of(CHANGED_IN_REPO)
    one_changed = median_of(CHANGED_ALONE)
    checks.append((f"{options.scripts} launch scripts cold at most 1.5 s: {scripts_cold:.2f} s", scripts_cold <= 1.5))
    checks.append((f"{options.scripts} launch scripts with a warm cache at most 0.3 s: {scripts_warm:.2f} s", scripts_warm <= 0.3))
    checks.append((f"one changed config in a {options.scripts}-file repository at most 2 × the same config alone: "
                   f"{in_repo * 1000:.0f} ms vs {one_changed * 1000:.0f} ms ({in_repo / one_changed:.2f} ×)", in_repo <= 2 * one_changed))
    per_file = by["dslint: corpus"][4]
    for peer in ("yamllint: corpus YAML", "check-jsonschema: corpus JSON"):
        if peer in by:
            checks.append((f"per file faster than {peer.split(':')[0]}: {per_file * 1000:.2f} ms vs {by[peer][4] * 1000:.2f} ms "
                           f"({by[peer][4] / per_file:.1f} ×)", per_file < by[peer][4]))
    lines += ["", "Targets:"]
    lines += [f"- [{'x' if ok else ' '}] {text}" for text, ok in checks]
    lines += [f"- note: {note}" for note in notes]
    report = "\n".join(lines)
    print(report)
    if options.markdown:
        options.markdown.write_text(report + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
