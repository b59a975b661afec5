import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# CI lays shared/ beside the clone; DSLINT_CORPUS points elsewhere (a worktree, a local copy)
CORPUS = Path(os.environ.get("DSLINT_CORPUS") or ROOT.parent / "shared" / "corpus")


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"the shared corpus is not beside the repository ({CORPUS})")
    return CORPUS


@pytest.fixture(autouse=True, scope="session")
def _cache_outside_the_tree(tmp_path_factory):
    """dslint's persistent cache (.dslint_cache/ where it runs) goes to a temporary folder, so that
    test runs leave nothing in the repository or the corpus; tests of the cache set their own."""
    os.environ.setdefault("DSLINT_CACHE_DIR", str(tmp_path_factory.mktemp("dslint-cache")))


@pytest.fixture(autouse=True)
def _no_color(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)


# CI installs deepspeed, transformers and accelerate and sets DSLINT_REQUIRE_ORACLES=1:
# there an oracle test that skips because a package is missing is a failure, not a pass.
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and item.get_closest_marker("oracle"):
        item.config._dslint_oracle_skips = getattr(item.config, "_dslint_oracle_skips", 0) + 1
    if report.skipped and item.get_closest_marker("oracle") and os.environ.get("DSLINT_REQUIRE_ORACLES") == "1":
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"oracle test skipped while DSLINT_REQUIRE_ORACLES=1: {reason}"


# What the oracle tests need that `pip install -e ".[test]"` does not install (README, "Set up").
OPTIONAL_PACKAGES = """\
{skipped} oracle tests skipped: they compare dslint with the real packages (torch, deepspeed,
transformers, accelerate, TRL ...) or regenerate the shipped schemas from their releases.
To run them, install what .ci/run installs:
  pip install torch==2.13.0 && pip install --no-build-isolation deepspeed==0.19.8
  pip install -e ".[schemagen]"
  python -m dslint.schemagen.generations --prepare DIR && export DSLINT_SCHEMAGEN_TARGETS=DIR"""


# The generated oracle tests (test_oracle_generated.py) leave their agreement tables here, and the
# corpus and fixture tests their message headlines (headlines.py); they are printed at the end of
# the run, whatever the outcome.
def pytest_terminal_summary(terminalreporter, exitstatus, config):
    skipped = getattr(config, "_dslint_oracle_skips", 0)
    if skipped:
        terminalreporter.section("optional packages")
        for line in OPTIONAL_PACKAGES.format(skipped=skipped).splitlines():
            terminalreporter.write_line(line)
    tables = getattr(config, "_dslint_oracle_tables", [])
    if tables:
        terminalreporter.section("oracle agreement")
        for table in tables:
            terminalreporter.write_line(table)
    headlines = getattr(config, "_dslint_headlines", {})
    if headlines:
        from headlines import figures, line

        terminalreporter.section("message headlines")
        for title, messages in headlines.items():
            terminalreporter.write_line(line(title, figures(messages)))
