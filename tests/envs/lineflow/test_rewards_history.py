"""Rewards, state history and scrap-factor curricula."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from gymforge.envs.lineflow import LineFlowEnv


def run(env, action, steps):
    rewards, info = [], {}
    for _ in range(steps):
        _, reward, _, _, info = env.step(action)
        rewards.append(reward)
    return rewards, info


def test_lineflow__sparse_reward_pays_the_total_once_at_the_end():
    dense, sparse = LineFlowEnv(), LineFlowEnv(reward="parts-sparse")
    dense.reset(seed=2)
    sparse.reset(seed=2)
    d, _ = run(dense, np.array([19]), 4000)
    s, info = run(sparse, np.array([19]), 4000)
    assert all(r == 0 for r in s[:-1])
    assert s[-1] == sum(d) == info["n_parts"] - info["n_scrap_parts"]


def test_lineflow__uptime_reward_is_the_mean_working_fraction_over_the_window():
    env = LineFlowEnv(reward="uptime", uptime_lookback=10, record_history=True)
    env.reset(seed=0)
    rewards, _ = run(env, np.array([19]), 200)
    frame = env.history_frame()
    modes = frame[[f"{s.name}.mode" for s in env.line.stations]].iloc[1:]
    working = (modes == "working").to_numpy(dtype=float)
    expected = [working[max(0, t - 9) : t + 1].mean(axis=0).mean() for t in range(200)]
    np.testing.assert_allclose(rewards, expected)
    assert all(0 <= r <= 1 for r in rewards)


def test_lineflow__uptime_lookback_zero_means_since_the_episode_started():
    env = LineFlowEnv(reward="uptime", uptime_lookback=0, record_history=True)
    env.reset(seed=0)
    rewards, _ = run(env, np.array([19]), 100)
    modes = env.history_frame()[[f"{s.name}.mode" for s in env.line.stations]].iloc[1:]
    working = (modes == "working").to_numpy(dtype=float)
    assert rewards[-1] == pytest.approx(working.mean())


def test_lineflow__history_is_a_labelled_dataframe_with_one_row_per_step():
    env = gym.make("LineFlow-PartDistribution-v0", record_history=True)
    env.reset(seed=0)
    env.action_space.seed(0)
    for _ in range(120):
        env.step(env.action_space.sample())
    frame = env.unwrapped.history_frame()
    assert len(frame) == 121
    assert list(frame["time"][:3]) == [0.0, 1.0, 2.0]
    assert set(frame["SwitchD.mode"].cat.categories) == {"working", "waiting", "failing"}
    assert list(frame["SwitchD.index_out"].cat.categories) == [
        f"Buffer_SwitchD_to_P{i}" for i in range(5)
    ]
    assert frame["SwitchD.index_out"].isna().iloc[0]  # no action before the first step
    assert frame["n_parts"].is_monotonic_increasing
    env.reset(seed=1)
    assert len(env.unwrapped.history_frame()) == 1


def test_lineflow__history_needs_to_be_switched_on():
    env = LineFlowEnv()
    env.reset(seed=0)
    with pytest.raises(RuntimeError, match="record_history=True"):
        env.history_frame()


def test_lineflow__scrap_factor_can_change_mid_training_through_env_method():
    from stable_baselines3.common.vec_env import DummyVecEnv

    vec = DummyVecEnv([lambda: gym.make("LineFlow-ComplexLine-v0")] * 2)
    assert vec.get_attr("scrap_factor") == [pytest.approx(1 / 3)] * 2
    vec.env_method("set_scrap_factor", 0.5)
    assert vec.get_attr("scrap_factor") == [0.5, 0.5]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"reward": "fun"}, "reward"),
        ({"uptime_lookback": -1}, "uptime_lookback"),
        ({"render_mode": "ascii"}, "render_mode"),
    ],
)
def test_lineflow__bad_reward_and_render_arguments_name_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        LineFlowEnv(**kwargs)
