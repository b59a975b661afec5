"""benchmarks/run.py runs end to end, and judges each target from the figures it measured.

Nothing here is timed: the quick runs check that every row is measured and every target judged;
the targets are checked on figures made up for the purpose.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load_benchmark():
    """benchmarks/run.py, which imports bench_prepare beside it by name (benchmarks/ is no package)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("benchmark_run", ROOT / "benchmarks" / "run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


bench = _load_benchmark()
Bump = sys.modules["bench_prepare"].Bump

OPTIONS = Namespace(scripts=1000, large=10000, framework="transformers")
N, BIG = "1,000", "10,000"


def command(row: str, seconds: float, files: int = 1, column: str = "this tree", memory=(0, 0)) -> bench.Command:
    return bench.Command(row, column, [], ROOT, files, {}, times=[seconds], memory=memory)


def judged(commands: list[bench.Command], previous: str | None = "aadbed8") -> dict[str, bool | None]:
    results = bench.Results(commands, "this tree", previous)
    return {target: passed for target, _, passed in bench.targets(results, OPTIONS)}


def measured() -> list[bench.Command]:
    """A run that meets every target (seconds; per-file rows with their file counts)."""
    return [
        command(bench.BARE, 0.010, 0, column=""),
        command(bench.R_JSON, 0.039), command(bench.R_YAML, 0.039), command(bench.R_SCRIPT, 0.059),
        command(bench.R_CORPUS, 2.048, 2048), command(bench.R_CORPUS, 6.0, 2048, column="aadbed8"),
        command(bench.P_YAML_ALL, 2.0, 400, column=""),  # 5 ms per file: dslint's 1 ms is 0.2 ×
        command(bench.R_SCRIPTS.format(n=N), 1.4, 1000), command(bench.R_CACHE_WARM.format(n=N), 0.08, 1000),
        command(bench.R_ALONE, 0.070), command(bench.R_WHOLE.format(n=N), 0.139, 1000),
        command(bench.R_STAGED.format(n=BIG), 0.139),
        command(bench.R_VENDORED.format(framework="transformers"), 1.9, 0),
        command(bench.R_LARGE.format(n=BIG), 20.0, 10000, memory=(250 * 1024, 290 * 1024)),
    ]


def test_a_run_that_meets_every_target_passes_them_all():
    verdicts = judged(measured())
    assert len(verdicts) == 11
    assert all(verdicts.values()), verdicts


@pytest.mark.parametrize("row, seconds, target", [
    (bench.R_JSON, 0.041, "one config (DeepSpeed JSON): at most 4 × `python -I -S -c pass`"),
    (bench.R_SCRIPT, 0.061, "one launch script: at most 6 × `python -I -S -c pass`"),
    (bench.R_CORPUS, 5.3, "corpus cold: at most 0.5 × yamllint's time per file"),  # 2.59 ms: 0.52 × yamllint's 5 ms
    (bench.R_WHOLE.format(n=N), 0.141, "one edited file in a 1,000-file repository (whole repository, warm cache): "
                                       "at most 2 × the same file alone"),
    (bench.R_VENDORED.format(framework="transformers"), 2.1, "a repository vendoring transformers, cold: at most 2 s"),
])
def test_a_figure_over_its_limit_fails_its_target(row, seconds, target):
    commands = [c for c in measured() if not (c.row == row and c.column == "this tree")]
    files = next(c.files for c in measured() if c.row == row)
    verdicts = judged([*commands, command(row, seconds, files)])
    assert verdicts[target] is False
    assert sum(1 for v in verdicts.values() if v is False) == 1, verdicts


def test_memory_is_judged_on_all_processes_together():
    """The large run forks a worker: its memory is the processes' sum, not the largest one's alone."""
    commands = [c for c in measured() if c.row != bench.R_LARGE.format(n=BIG)]
    verdicts = judged([*commands, command(bench.R_LARGE.format(n=BIG), 20.0, 10000, memory=(250 * 1024, 310 * 1024))])
    assert verdicts["10,000 files: peak memory at most 300 MB"] is False


def test_slower_than_the_previous_release_fails_and_missing_peers_are_not_judged():
    commands = [c for c in measured() if c.column != "aadbed8" and c.row != bench.P_YAML_ALL]
    verdicts = judged([*commands, command(bench.R_CORPUS, 2.0, 2048, column="aadbed8")])
    assert verdicts["corpus cold: faster than the previous release (`aadbed8`)"] is False
    assert verdicts["corpus cold: at most 0.5 × yamllint's time per file"] is None
    assert "corpus cold: faster than the previous release (`aadbed8`)" not in judged(commands, previous=None)


def test_an_edit_never_returns_a_file_to_a_content_a_run_saw(tmp_path):
    """Two commands edit the same config in turn: each must miss its own cached run every time."""
    path = tmp_path / "ds.json"
    path.write_text('{"train_batch_size": 8}\n', encoding="utf-8")
    bump = Bump(path)
    seen = []
    for _ in range(6):
        bump()
        seen.append(path.read_text(encoding="utf-8"))
    assert len(set(seen)) == len(seen)
    assert all(text.startswith('{"train_batch_size": 8}\n') and not text.strip("\n").endswith("\n") for text in seen)


def quick_run(tmp_path: Path, *extra: str) -> str:
    if not bench.CORPUS.is_dir():
        pytest.skip(f"the shared corpus is not beside the repository ({bench.CORPUS})")
    report = tmp_path / "report.md"
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick", "--markdown", str(report), *extra],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    text = report.read_text(encoding="utf-8")
    assert "FAILED" not in text
    dslint_rows = [bench.R_JSON, bench.R_YAML, bench.R_SCRIPT, bench.R_CORPUS, bench.R_SCRIPTS.format(n=30),
                   bench.R_CACHE_WARM.format(n=30), bench.R_ALONE, bench.R_STAGED.format(n=30), bench.R_WHOLE.format(n=30),
                   bench.R_STAGED.format(n=200), bench.R_LARGE.format(n=200), bench.R_VENDORED.format(framework="accelerate")]
    for row in [bench.BARE, *dslint_rows]:
        assert f"| {row} |" in text, row
    verdicts = [line.rsplit("|", 2)[1].strip() for line in text.splitlines() if line.startswith("| ") and "at most" in line]
    assert len(verdicts) >= 9 and set(verdicts) <= {"PASS", "FAIL", "n/a"}, verdicts
    assert "Load (`uptime`) at the start:" in text
    return text


def test_quick_run_in_place(tmp_path):
    quick_run(tmp_path, "--in-place")


@pytest.mark.slow
def test_quick_run_against_the_previous_release(tmp_path):
    """Builds this tree, aadbed8 and the peers into venvs (network for PyPI) and runs them side by side."""
    text = quick_run(tmp_path, "--venvs", str(tmp_path / "venvs"))
    assert "| `aadbed8`: median |" in text
    assert f"| {bench.PLAIN} |" in text
    assert "aadbed8: `aadbed8`" in text and "no run cache" in text
    (previous,) = [line for line in text.splitlines() if "faster than the previous release" in line]
    assert previous.endswith(("| PASS |", "| FAIL |")), previous  # the release's corpus row was measured
