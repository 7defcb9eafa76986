"""The boards' "by method" aggregate (IQM over a method's rows with a bootstrap CI) and rows of
on-device trained runs tagged with their trainer."""

from __future__ import annotations

import json

import numpy as np
import pytest
from leaderboard_helpers import TASK, meta, small_root

from gymforge.leaderboards.board import load_boards
from gymforge.leaderboards.render import render_overview, write_all
from gymforge.leaderboards.stats import iqm, method_iqm
from gymforge.leaderboards.submission import submit


def test_method_iqm__known_answer_and_agrees_with_the_boards_own_iqm():
    # 5 rows: rliable trims 25% (one row) from each end -> mean of 2, 3, 4
    center, low, high = method_iqm([100.0, 2.0, 3.0, 4.0, -50.0])
    assert center == pytest.approx(3.0)
    assert low <= center <= high
    rng = np.random.default_rng(3)
    for n in (4, 8, 12):  # sizes where both trims drop the same rows
        scores = rng.normal(size=n).tolist()
        assert method_iqm(scores)[0] == pytest.approx(iqm(scores))


def test_method_iqm__one_row_and_bad_input():
    assert method_iqm([7.5]) == (7.5, 7.5, 7.5)
    with pytest.raises(ValueError, match="finite"):
        method_iqm([1.0, float("nan")])
    with pytest.raises(ValueError, match="finite"):
        method_iqm([])


def test_method_iqm__seeded_so_renders_repeat():
    scores = [150.0, 120.0, 155.0, 130.0, 153.0]
    assert method_iqm(scores) == method_iqm(scores)
    center, low, high = method_iqm(scores)
    assert 120.0 <= low < center < high <= 155.0


def test_by_method__on_device_rows_are_tagged_and_aggregated(tmp_path):
    """Two seeds of a `--backend torch` run go on a board through the trained-rows tool: one
    method naming the on-device trainer, aggregated with its IQM and CI in the overview."""
    from gymforge.baselines.ondevice.run import train
    from gymforge.leaderboards.trained_rows import submit_run

    root = small_root(tmp_path / "board")
    submit(root, TASK, "random", meta("Random"), submission_id="20260101-random")
    for seed in (0, 1):
        run = train(
            "LineFlow-WaitingTime-v0",
            "ppo",
            64,
            seed=seed,
            n_envs=4,
            out=tmp_path / f"run{seed}",
            overrides={"eval": {"every": 0}, "algos": {"ppo": {"n_steps": 16}}},
            tensorboard=False,
            log=lambda message: None,
        )
        folder = submit_run(root, run.out, f"20260102-ppo-torch-seed-{seed}", "a sweep job")
        record = json.loads((folder / "submission.json").read_text())
        assert record["meta"]["method"] == "PPO (on-device trainer, gymforge train --backend torch)"
        assert record["meta"]["command"] == "a sweep job"
        assert record["agent"]["kind"] == "torch_policy"
    write_all(root)
    overview = render_overview(load_boards(root)).decode()
    line = next(x for x in overview.splitlines() if "on-device trainer" in x)
    cells = [c.strip() for c in line.split("|")]
    assert cells[3] == "2"  # rows
    assert cells[5].startswith("[") and cells[5].endswith("]")  # the CI


def test_by_method__refuses_a_folder_that_is_not_a_run(tmp_path):
    from gymforge.leaderboards.trained_rows import submit_run

    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "config.json").write_text(json.dumps({"format": "something"}))
    with pytest.raises(ValueError, match="format 'something'"):
        submit_run(small_root(tmp_path / "board"), tmp_path / "run")
