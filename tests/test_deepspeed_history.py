"""The DeepSpeed key history before 0.14, read from the releases' sdists (dslint/schemagen/deepspeed_history.py)."""

from __future__ import annotations

import pytest

from dslint.schemagen import deepspeed_history as history
from dslint.schemagen.generations import DEEPSPEED_SDISTS
from oracle_support import prepared_downloads


def _release(version: str, source: str) -> history.Release:
    return history.Release(version, {"deepspeed/runtime/zero/config.py": source})


ZERO = 'ZERO_OPTIMIZATION = "zero_optimization"\n\n\nclass DeepSpeedZeroConfig(DeepSpeedConfigModel):\n    stage: int = 0\n'
ZERO_PP = ZERO + "    zero_hpz_partition_size: int = Field(1, ge=0)\n"


def test_a_key_is_dated_to_the_first_release_that_names_it():
    order = ["0.9.5", "0.10.0", "0.14.0"]
    releases = [_release("0.9.5", ZERO), _release("0.10.0", ZERO_PP), _release("0.14.0", ZERO_PP)]
    found = history.introductions([("zero_optimization",), ("zero_optimization", "stage"),
                                   ("zero_optimization", "zero_hpz_partition_size")], releases, order)
    assert set(found) == {"zero_optimization.zero_hpz_partition_size"}
    entry = found["zero_optimization.zero_hpz_partition_size"]
    assert entry["introduced"] == "0.10.0"
    assert entry["source"] == ("absent from the deepspeed 0.9.5 sdist; deepspeed 0.10.0 sdist "
                               "deepspeed/runtime/zero/config.py:6")


def test_a_release_not_read_is_never_said_to_lack_a_key():
    order = ["0.9.5", "0.10.0", "0.10.1", "0.14.0"]
    releases = [_release("0.9.5", ZERO), _release("0.10.1", ZERO_PP), _release("0.14.0", ZERO_PP)]
    found = history.introductions([("zero_optimization", "zero_hpz_partition_size")], releases, order)
    assert found["zero_optimization.zero_hpz_partition_size"]["introduced"] == "0.10.0"
    assert "could not be read" in found["zero_optimization.zero_hpz_partition_size"]["source"]


def test_a_key_the_newest_release_does_not_name_says_nothing():
    order = ["0.9.5", "0.14.0"]
    releases = [_release("0.9.5", ZERO), _release("0.14.0", ZERO)]
    assert history.introductions([("zero_optimization", "built_at_run_time")], releases, order) == {}


def test_hand_curated_entries_win():
    current = {"deepspeed_range": ["0.14.0", "0.19.8"], "keys": {"a": {"introduced": "0.16.0", "source": "PR"}}}
    out = history.merged(current, {"a": {"introduced": "0.10.0", "source": "sdist"}, "b": {"introduced": "0.12.0", "source": "x"}})
    assert out["keys"]["a"]["source"] == "PR" and out["keys"]["b"]["introduced"] == "0.12.0"
    assert out["deepspeed_range"] == [history.OLDEST, "0.19.8"]


def test_the_shipped_history_reaches_back_to_the_oldest_release():
    from dslint.evidence.versions import known_releases

    assert known_releases("deepspeed")[0] == history.OLDEST
    data = history.json.loads(history.VERSIONS_FILE.read_text(encoding="utf-8"))
    assert data["deepspeed_range"][0] == history.OLDEST
    for key in ("zero_quantized_weights", "zero_quantized_gradients", "zero_hpz_partition_size"):
        assert data["keys"][f"zero_optimization.{key}"]["introduced"] == "0.10.0"


@pytest.mark.oracle
def test_regenerated_history_matches_shipped():
    folder = prepared_downloads(DEEPSPEED_SDISTS, "deepspeed-*.tar.gz", "the DeepSpeed sdists")
    status = history.main(["--sdists", str(folder), "--check"])
    if status == history.EXIT_OTHER_SDISTS:
        pytest.skip("the folder's sdists are not the ones the shipped history was made from (a download failed?)")
    assert status == 0
