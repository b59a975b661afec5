"""What a large dataset JSON costs a run: dslint skips it after reading its head.

    python benchmarks/skip_data.py [--megabytes 20] [--rounds 15]

Writes a dataset of about the given size in two shapes (a top-level array of records, as
LLaMA-Factory and alpaca ship them, and an object holding one), then times, in this process:
the engine reading one such file as a walk finds it (``Engine._load``: stat, open, read the
64 KB head, decide), against ``json.load`` of the whole file (the least any parse costs). And,
as fresh processes: ``dslint check`` of the folder holding the dataset and one small config,
against ``dslint check`` of the small config alone. Medians of the rounds; nothing is asserted
(unit tests never time anything), the numbers are printed for the README and reports.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CONFIG = '{"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8, "zero_optimization": {"stage": 2}}\n'


def write_dataset(path: Path, megabytes: float, shape: str) -> None:
    record = {"instruction": "Summarise the following paragraph in one sentence.", "input": "x" * 400, "output": "y" * 300}
    count = int(megabytes * 1e6 / len(json.dumps(record)))
    records = [dict(record, id=i) for i in range(count)]
    path.write_text(json.dumps(records if shape == "array" else {"version": "1.0", "data": records}), encoding="utf-8")


def median_ms(work, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=15)
    options = parser.parse_args()

    from dslint.config import Settings
    from dslint.files.discovery import Candidate
    from dslint.run.engine import Engine, RunResult

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "GITHUB_ACTIONS")}
    with tempfile.TemporaryDirectory(prefix="dslint-skip-") as tmp:
        folder = Path(tmp)
        (folder / "ds_config.json").write_text(CONFIG, encoding="utf-8")
        engine = Engine(Settings(root=folder))
        print(f"dataset of about {options.megabytes:.0f} MB, {options.rounds} rounds, medians:")
        for shape in ("array", "object"):
            dataset = folder / "train_data.json"
            write_dataset(dataset, options.megabytes, shape)
            size = dataset.stat().st_size / 1e6
            result = RunResult()
            candidate = Candidate(dataset, dataset.name, False)
            skip = median_ms(lambda: engine._load(candidate, result), options.rounds)  # noqa: B023 - timed within this iteration
            assert result.skipped and engine._load(candidate, RunResult()) is None, "the dataset was not skipped"

            def load_all():
                with open(dataset, encoding="utf-8") as handle:  # noqa: B023 - called within this iteration
                    json.load(handle)

            full = median_ms(load_all, max(3, options.rounds // 3))
            print(f"  {shape:6} {size:5.1f} MB: skipped in {skip:.2f} ms ({result.skipped[0][1]}); json.load of it: {full:.0f} ms")
        dslint = [sys.executable, "-m", "dslint", "check", "--no-config", "-q"]
        with_data = median_ms(lambda: subprocess.run([*dslint, "."], cwd=folder, env=env, capture_output=True), options.rounds)
        alone = median_ms(lambda: subprocess.run([*dslint, "ds_config.json"], cwd=folder, env=env, capture_output=True), options.rounds)
        print(f"  dslint check of the folder (config + dataset): {with_data:.0f} ms; of the config alone: {alone:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
