"""Headline lengths: how long the one-line messages are, over the corpus and the fixture cases.

A message is the headline of a finding and fits a terminal line; the why goes in its notes and
the rule page (issue 13). The figures are printed at the end of the test run
(``conftest.pytest_terminal_summary``), and the corpus figures are held to these targets.
"""

from __future__ import annotations

import statistics

MEDIAN_TARGET = 100
P95_TARGET = 160
# No single headline of a fixture case is longer: a rule whose headline needs more than a terminal
# line moves the rest to its note or help. Values the rule does not choose (a parser's own error
# text, a long path) may make a real file's headline longer; the corpus figures cover those.
LINE_LIMIT = 140


def figures(messages: list[str]) -> dict[str, float]:
    lengths = sorted(len(message) for message in messages)
    if not lengths:
        return {"count": 0, "median": 0, "p95": 0, "max": 0}
    return {
        "count": len(lengths),
        "median": statistics.median(lengths),
        "p95": lengths[min(len(lengths) - 1, int(0.95 * len(lengths)))],
        "max": lengths[-1],
    }


def line(title: str, numbers: dict[str, float]) -> str:
    return (f"{title}: {numbers['count']} headlines, median {numbers['median']:g}, "
            f"95th percentile {numbers['p95']}, longest {numbers['max']} characters")


def record(config, title: str, messages: list[str]) -> None:
    """Keep the figures of ``messages`` for the summary at the end of the run."""
    stash = getattr(config, "_dslint_headlines", None)
    if stash is None:
        stash = config._dslint_headlines = {}
    stash.setdefault(title, []).extend(messages)
