"""The held-out-function study of the MetaBBO experts: which functions each run is scored on,
how folds are paired and pooled, and the refusals."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from benchmarks.metabbo import expert_holdout as holdout
from gymforge.baselines.metabbo.experts import expert_policy_path

VALIDATION = holdout.load_protocol()["validation"]["function_ids"]


def _run(tmp: Path, name: str, train: list[int] | str, env_id: str = "MetaBBO-v0") -> Path:
    """A run folder shaped like `gymforge train`'s: a config, the stored expert's policy as the
    final policy and as a checkpoint at 500 steps."""
    run = tmp / name
    (run / "checkpoints" / "step_500").mkdir(parents=True)
    for folder in (run, run / "checkpoints" / "step_500"):
        shutil.copy(expert_policy_path("alg0"), folder / "policy.pt")
    config = {
        "env_id": env_id,
        "env_kwargs": {"reward": "log_error", "split": train},
        "steps": 1000,
        "command": ["gymforge", "train", env_id, "--out", name],
    }
    (run / "config.json").write_text(json.dumps(config))
    return run


@pytest.fixture
def fake_evaluation(monkeypatch):
    """Replace the episodes by known values: per function f and seed s, random scores
    (f, -f) and a policy scores (f + delta, -f - 2 delta), delta = 0.01 s for a checkpoint,
    0.02 s for a final policy, halved when sampled."""
    calls = []

    def fake(factory, preset, functions, seeds):
        calls.append(list(functions))
        f = np.repeat(np.asarray(functions, dtype=float), seeds)
        s = np.tile(np.arange(1, seeds + 1, dtype=float), len(functions))
        policy = getattr(factory, "keywords", {}).get("policy")
        if policy is None:
            return {"perf": f, "log10_error": -f}
        delta = (0.02 if policy.parent.name.startswith("fold") else 0.01) * s
        if factory.keywords["stochastic"]:
            delta = delta / 2
        return {"perf": f + delta, "log10_error": -f - 2 * delta}

    monkeypatch.setattr(holdout, "_evaluate_row", fake)
    return calls


def test_each_run_is_scored_on_the_validation_functions_it_did_not_train_on(
    tmp_path, fake_evaluation
):
    fold_a = [f for f in VALIDATION if f not in (8, 13)]
    fold_b = [f for f in VALIDATION if f not in (4, 24)]
    runs = [_run(tmp_path, "fold_a", fold_a), _run(tmp_path, "fold_b", fold_b)]
    result = holdout.study(runs, "alg0", seeds=3)
    assert [f["held_out_functions"] for f in result["folds"]] == [[8, 13], [4, 24]]
    # random, then (checkpoint, final) x (sampled, greedy), per fold
    assert fake_evaluation == [[8, 13]] * 5 + [[4, 24]] * 5
    row = result["folds"][0]["rows"]["fold_a@1000/greedy"]
    assert row["steps"] == 1000 and row["acting"] == "greedy"
    # paired differences: 0.02 s (final, greedy) over seeds 1..3, and -2x that in log10 error
    assert row["vs_random"]["perf"]["mean"] == pytest.approx(0.04)
    assert row["vs_random"]["log10_error"]["mean"] == pytest.approx(-0.08)
    assert row["perf"]["mean"] == pytest.approx(10.5 + 0.04)
    # per function: seeds 1..3 of each, so the same 0.04 / -0.08 for both functions
    assert sorted(row["vs_random_by_function"]) == ["13", "8"]
    assert row["vs_random_by_function"]["13"]["log10_error"] == pytest.approx(-0.08)
    # pooled: every fold's runs concatenated, checkpoint by checkpoint
    pooled = result["pooled"]
    assert sorted(pooled) == ["1000/greedy", "1000/sampled", "500/greedy", "500/sampled", "random"]
    assert pooled["random"]["perf"]["mean"] == pytest.approx((8 + 13 + 4 + 24) / 4)
    assert pooled["500/sampled"]["vs_random"]["perf"]["mean"] == pytest.approx(0.01)
    low, high = pooled["500/sampled"]["vs_random"]["perf"]["ci95"]
    assert 0.005 <= low < 0.01 < high <= 0.015
    assert list(pooled["1000/greedy"]["vs_random_by_function"]) == ["8", "13", "4", "24"]
    text = holdout.render_md({**result, "command": "c", "measured_at": "t", "wall_time_s": 1.0})
    assert "| f24 | +0.0200 | -0.04 | +0.0400 | -0.08 |" in text  # sampled, then greedy


def test_two_runs_of_one_fold_are_not_pooled(tmp_path, fake_evaluation):
    train = [f for f in VALIDATION if f != 8]
    runs = [_run(tmp_path, "fold_a", train), _run(tmp_path, "fold_b", train)]
    result = holdout.study(runs, "alg0", seeds=2)
    assert len(result["folds"]) == 1 and result["pooled"] == {}
    assert len(result["folds"][0]["rows"]) == 1 + 2 * 2 * 2
    assert "Held out [8]" in holdout.render_md(
        {**result, "command": "c", "measured_at": "t", "wall_time_s": 1.0}
    )


@pytest.mark.parametrize(
    ("train", "env_id", "message"),
    [
        ("easy", "MetaBBO-v0", "needs runs trained on a list of function ids"),
        (list(VALIDATION), "MetaBBO-v0", "trained on every validation function"),
        ([4, 6], "MetaBBO-Alg1-v0", "not MetaBBO-v0"),
    ],
)
def test_runs_that_cannot_be_held_out_are_refused(tmp_path, train, env_id, message):
    run = _run(tmp_path, "run", train, env_id)
    with pytest.raises(SystemExit, match=message):
        holdout.study([run], "alg0", seeds=1)


def test_a_folder_without_a_finished_run_is_refused(tmp_path):
    with pytest.raises(SystemExit, match=r"no config\.json"):
        holdout.study([tmp_path], "alg0", seeds=1)


def test_a_run_without_policies_is_refused_before_any_evaluation(tmp_path, fake_evaluation):
    good = _run(tmp_path, "fold_a", [f for f in VALIDATION if f != 8])
    empty = _run(tmp_path, "fold_b", [f for f in VALIDATION if f != 4])
    shutil.rmtree(empty / "checkpoints")
    (empty / "policy.pt").unlink()
    with pytest.raises(SystemExit, match=r"fold_b: no policy\.pt"):
        holdout.study([good, empty], "alg0", seeds=1)
    assert fake_evaluation == []
