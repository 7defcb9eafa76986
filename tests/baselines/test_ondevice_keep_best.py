"""``eval.keep_best``: the on-device run's ``policy.pt`` is its best-evaluated policy, the final
one is kept beside it, every evaluation row carries the training seconds so far, and a backend
that cannot keep the best policy refuses the key instead of ignoring it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from gymforge.baselines.ondevice.run import _best, train
from gymforge.baselines.sb3.config import check_file as sb3_check

QUIET = {"tensorboard": False, "log": lambda message: None}


def _weights(path: Path) -> dict[str, torch.Tensor]:
    return torch.load(path, weights_only=True)["state_dict"]


def _same(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_best_takes_the_highest_mean_and_the_later_of_ties():
    rows = [
        {"timesteps": 10, "mean_return": 3.0},
        {"timesteps": 20, "mean_return": 5.0},
        {"timesteps": 30, "mean_return": 5.0},
        {"timesteps": 40, "mean_return": 4.0},
    ]
    assert _best(rows)["timesteps"] == 30


def test_keep_best_makes_the_best_evaluated_policy_the_runs_policy(tmp_path):
    config = tmp_path / "tiny.yaml"
    config.write_text(
        "version: 1\nn_envs: 16\neval: {every: 512, episodes: 2, keep_best: true}\n"
        "algos:\n  ppo: {n_steps: 16, learning_rate: 0.003}\n"
    )
    result = train(
        "Probe-Match-v0", "ppo", 4096, seed=3, out=tmp_path / "run", config_file=config, **QUIET
    )
    rows = result.evaluations
    assert len(rows) == 8
    seconds = [row["train_s"] for row in rows]
    assert seconds == sorted(seconds) and seconds[0] > 0
    record = json.loads((result.out / "config.json").read_text())
    best = _best(rows)
    assert record["policy_chosen"]["timesteps"] == best["timesteps"]
    assert record["train_config"]["eval"]["keep_best"] is True
    chosen = _weights(result.out / "policy.pt")
    source = "policy_last.pt" if best["timesteps"] == result.steps else "policy_best.pt"
    assert _same(chosen, _weights(result.out / source))
    assert _same(_weights(result.out / "policy_best.pt"), chosen)


def test_without_keep_best_the_final_policy_is_the_runs_policy(tmp_path):
    config = tmp_path / "tiny.yaml"
    config.write_text(
        "version: 1\nn_envs: 16\neval: {every: 1024, episodes: 1}\nalgos:\n  ppo: {n_steps: 16}\n"
    )
    result = train(
        "Probe-Match-v0", "ppo", 2048, seed=3, out=tmp_path / "run", config_file=config, **QUIET
    )
    assert not (result.out / "policy_last.pt").exists()
    assert not (result.out / "policy_best.pt").exists()
    record = json.loads((result.out / "config.json").read_text())
    assert "policy_chosen" not in record and "keep_best" not in record["train_config"]["eval"]


def test_keep_best_is_refused_where_it_would_be_ignored():
    with pytest.raises(ValueError, match="keep_best"):
        sb3_check({"version": 1, "eval": {"every": 10, "keep_best": True}}, "user.yaml")
    from gymforge.baselines.ondevice.config import check

    with pytest.raises(ValueError, match="true or false"):
        check({"version": 1, "eval": {"keep_best": "yes"}}, "user.yaml")
