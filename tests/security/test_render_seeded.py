"""The by-method intervals are a function of the rows alone: renders repeat byte for byte.

rliable's bootstrap draws from numpy's global random state; with more than a handful of rows
per method its percentiles then move from run to run. ``method_iqm`` seeds that state for the
call and restores it, so the boards render the same bytes whatever the global state was.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from gymforge.leaderboards import stats
from gymforge.leaderboards.evaluator import episodes_digest, summarise
from gymforge.leaderboards.files import write_json_atomic
from gymforge.leaderboards.protocol import load_protocol
from gymforge.leaderboards.render import OVERVIEW, render_all
from gymforge.leaderboards.stats import method_iqm

REPO = Path(__file__).resolve().parents[2]
TASK = "cmab/KPath"
SOURCE = REPO / "leaderboards" / TASK / "submissions" / "20261205-random-uniform-actions"
SCORES = [0.5, 1.7, 2.2, 3.9, 4.1, 6.6, 7.3, 9.8, 12.5]


@pytest.fixture(autouse=True)
def fewer_resamples(monkeypatch: pytest.MonkeyPatch) -> None:
    """2,000 resamples instead of 20,000: the same code path, ten times faster."""
    monkeypatch.setattr(stats, "METHOD_RESAMPLES", 2_000)


def test_security__method_interval_repeats_and_leaves_the_global_state_alone() -> None:
    runs = []
    for seed in (1, 2):
        np.random.seed(seed)
        runs.append(method_iqm(SCORES))
    assert runs[0] == runs[1]
    center, low, high = runs[0]
    assert low < center < high
    np.random.seed(7)
    expected = np.random.random(3)
    np.random.seed(7)
    method_iqm(SCORES)
    assert np.array_equal(np.random.random(3), expected)


def _board_of_nine(root: Path) -> Path:
    """A copy of the KPath board whose one method has 9 rows, scaled apart by :data:`SCORES`."""
    (root / "protocols" / "cmab").mkdir(parents=True)
    shutil.copyfile(
        REPO / "leaderboards" / "protocols" / f"{TASK}.json", root / "protocols" / f"{TASK}.json"
    )
    protocol = load_protocol(root, TASK)
    submission = json.loads((SOURCE / "submission.json").read_text())
    results = json.loads((SOURCE / "results.json").read_text())
    for index, factor in enumerate(SCORES):
        sid = f"20261205-seed-{index}"
        episodes = [{**e, "metric": e["metric"] * factor} for e in results["episodes"]]
        folder = root / TASK / "submissions" / sid
        meta = {**submission["meta"], "name": f"Seed {index}", "method": "one method, 9 seeds"}
        write_json_atomic(folder / "submission.json", {**submission, "id": sid, "meta": meta})
        write_json_atomic(
            folder / "results.json",
            {
                **results,
                "episodes": episodes,
                "episodes_sha256": episodes_digest(episodes),
                "aggregate": summarise(protocol, episodes),
            },
        )
    return root


def test_security__board_with_nine_rows_per_method_renders_identically(tmp_path: Path) -> None:
    root = _board_of_nine(tmp_path)
    np.random.seed(1)
    first = render_all(root)
    np.random.seed(2)
    second = render_all(root)
    assert first == second
    (line,) = [
        row for row in first[OVERVIEW].decode().splitlines() if "one method, 9 seeds | 9 |" in row
    ]
    assert line.count("[") == 1  # a 95% interval, not "–"
