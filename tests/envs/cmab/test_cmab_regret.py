"""The exact regret the Off-CMAB envs report (``report_regret=True``), against brute force."""

from __future__ import annotations

import itertools

import gymnasium as gym
import numpy as np
import pytest
import torch

import gymforge  # noqa: F401  (registers the ids)
from gymforge.agents.cmab.agent import clcb_agent
from gymforge.envs.cmab.collect import collect_records, problem_for
from gymforge.envs.cmab.datasets import LoggedDataset
from gymforge.envs.cmab.problem import params_hash


def _cascade_value(mu: np.ndarray, ids: tuple[int, ...]) -> float:
    return 1.0 - float(np.prod([1.0 - mu[i] for i in ids]))


def test_one_play_reports_the_gap_to_the_brute_force_optimum():
    env = gym.make("OffCMAB-Cascade-v0", n_items=7, list_size=3, horizon=1, report_regret=True)
    for seed in (3, 11):
        _, info = env.reset(seed=seed)
        assert "regret" not in info and "gap" not in info
        mu = env.unwrapped.params["mu"][0].double().numpy()
        best = max(_cascade_value(mu, s) for s in itertools.combinations(range(7), 3))
        ids = (6, 0, 2)
        _, _, _, truncated, info = env.step(env.unwrapped.encode(ids))
        assert truncated
        expected = best - _cascade_value(mu, ids)
        assert expected > 1e-4  # the instance makes (6, 0, 2) visibly suboptimal
        assert info["gap"] == pytest.approx(expected, abs=1e-6)
        assert info["regret"] == pytest.approx(expected, abs=1e-6)


def test_regret_sums_the_gaps_and_is_shown_only_at_the_end():
    env = gym.make("OffCMAB-LLMCache-v0", n_queries=6, cache_size=2, horizon=3, report_regret=True)
    env.reset(seed=5)
    params = env.unwrapped.params
    weight = (params["p"][0] * params["c"][0]).double().numpy()
    cost = [
        float(weight.sum() - weight[list(s)].sum()) for s in itertools.combinations(range(6), 2)
    ]
    plays = [(0, 1), (2, 3), (4, 5)]
    seen = []
    for ids in plays:
        _, _, _, truncated, info = env.step(env.unwrapped.encode(ids))
        seen.append("regret" in info)
    assert seen == [False, False, True] and truncated
    gaps = [float(weight.sum() - weight[list(s)].sum()) - min(cost) for s in plays]
    assert info["regret"] == pytest.approx(sum(gaps), abs=1e-6)
    assert info["gap"] == pytest.approx(gaps[-1], abs=1e-6)


def test_reset_clears_the_regret_and_the_default_env_reports_nothing():
    env = gym.make("OffCMAB-KPath-v0", horizon=2, report_regret=True)
    env.reset(seed=0)
    best = int(env.unwrapped.optimal_super_arm()[0][0])
    env.step(np.array([1 - best]))
    env.reset(seed=0)
    env.step(np.array([best]))
    _, _, _, _, info = env.step(np.array([best]))
    assert info["regret"] == pytest.approx(0.0, abs=1e-9)
    plain = gym.make("OffCMAB-KPath-v0", horizon=1)
    plain.reset(seed=0)
    assert "regret" not in plain.step(np.array([0]))[4]
    with pytest.raises(ValueError, match="report_regret"):
        gym.make("OffCMAB-KPath-v0", report_regret="yes")


def test_clcb_played_once_scores_its_suboptimality_gap():
    """A fitted offline agent's one-play regret equals the gap of the super arm it chose."""
    env = gym.make("OffCMAB-Cascade-v0", horizon=1, report_regret=True)
    problem = problem_for("OffCMAB-Cascade-v0", {})
    env.reset(seed=21)
    params = env.unwrapped.params
    arrays = collect_records(problem, params, "uniform", 30, 21)
    agent = clcb_agent(env)
    metadata = {"n": 30, "instance_params_hash": params_hash(params), "seed": 21}
    chosen = agent.fit(LoggedDataset(arrays, metadata, problem, {}))
    _, _, _, _, info = env.step(agent.act(None))
    arm = torch.as_tensor(chosen)[None]
    value = float(problem.expected_reward(params, arm)[0])
    assert info["regret"] == pytest.approx(float(problem.optimal(params)[1][0]) - value, abs=1e-9)


def test_batched_regret_equals_separate_runs():
    kwargs = {"horizon": 2, "report_regret": True}
    vec = gym.make_vec(
        "OffCMAB-Cascade-v0", num_envs=3, vectorization_mode="vector_entry_point", **kwargs
    )
    vec.reset(seed=40)
    actions = torch.zeros(3, 5, dtype=torch.int64)
    actions[1, 0] = 7
    vec.step(actions)
    info = vec.step(actions)[4]
    assert float(info["regret"].min()) > 0  # the fixed lists are suboptimal on every instance
    for i in range(3):
        env = gym.make("OffCMAB-Cascade-v0", **kwargs)
        env.reset(seed=40 + i)
        env.step(actions[i].numpy())
        single = env.step(actions[i].numpy())[4]
        assert float(info["regret"][i]) == pytest.approx(single["regret"], abs=1e-9)
