"""The PettingZoo views: API tests, alternating order, batch equivalence, HB players through the env."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from pettingzoo.test import api_test, seed_test

import gymforge
from gymforge.agents.minmax.heavy_ball import run_heavy_ball
from gymforge.envs.minmax.games import GAME_NAMES
from gymforge.envs.minmax.parallel_env import (
    MinMaxAECEnv,
    MinMaxBatchedParallelEnv,
    MinMaxParallelEnv,
)


@pytest.mark.parametrize("game", GAME_NAMES)
def test_aec_view_passes_pettingzoo_api_and_seed_tests(game):
    api_test(MinMaxAECEnv(game=game, max_steps=30), num_cycles=100)
    seed_test(lambda: MinMaxAECEnv(game=game, max_steps=30), num_cycles=60)


def _hb_increment(obs, agent, prev, h, beta, m, n):
    x, y = obs[:m], obs[m : m + n]
    gx, gy = obs[m + n : 2 * m + n], obs[2 * m + n :]
    if agent == "x":
        return (-h * gx + beta * (x - prev)).astype(np.float32), x
    return (h * gy + beta * (y - prev)).astype(np.float32), y


@pytest.mark.parametrize("order", ["simultaneous", "alternating"])
def test_heavy_ball_players_through_the_env_match_the_reference_solver(order):
    """Sim-HB through the ParallelEnv and Alt-HB through the AEC view equal run_heavy_ball."""
    h, beta, steps = 0.1, 0.3, 20
    params = {"A": [[1.0, 0.5], [0.0, 1.5]]}
    env_kwargs = {"game": "bilinear", "game_params": params, "max_steps": steps}
    if order == "simultaneous":
        env = gymforge.make_parallel("MinMax-Bilinear-v0", game_params=params, max_steps=steps)
        obs, _ = env.reset(seed=5)
        start = obs["x"][:4].copy()
        prev = {"x": obs["x"][:2].astype(np.float64), "y": obs["x"][2:4].astype(np.float64)}
        while env.agents:
            actions = {}
            for agent in ("x", "y"):
                actions[agent], prev[agent] = _hb_increment(
                    obs[agent].astype(np.float64), agent, prev[agent], h, beta, 2, 2
                )
            obs, *_ = env.step(actions)
        final = obs["x"][:4]
    else:
        env = MinMaxAECEnv(**env_kwargs)
        env.reset(seed=5)
        start = env.observe("x")[:4].copy()
        prev = {"x": start[:2].astype(np.float64), "y": start[2:4].astype(np.float64)}
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            action, prev[agent] = _hb_increment(
                obs.astype(np.float64), agent, prev[agent], h, beta, 2, 2
            )
            env.step(action)
            final = env.observe("x")[:4]
    # The env's actions are float32, so compare with a float32-level tolerance.
    from gymforge.envs.minmax.games import make_game

    ref = run_heavy_ball(
        make_game("bilinear", params),
        torch.tensor(start[None, :2], dtype=torch.float64),
        torch.tensor(start[None, 2:4], dtype=torch.float64),
        h,
        beta,
        order,
        steps,
    )
    expected = torch.cat([ref.x[-1, 0], ref.y[-1, 0]]).numpy()
    np.testing.assert_allclose(final, expected, rtol=1e-4, atol=1e-4)


def test_alternating_view_lets_y_see_the_new_x():
    env = MinMaxAECEnv(game="bilinear")
    env.reset(seed=0)
    before = env.observe("y")
    env.step(np.array([0.5], dtype=np.float32))
    after = env.observe("y")
    assert after[0] == pytest.approx(before[0] + 0.5, abs=1e-6)  # x moved
    assert after[3] == pytest.approx(after[0], abs=1e-6)  # ∇_y f = x at the new x
    assert env.agent_selection == "y" and env.rewards == {"x": 0.0, "y": 0.0}
    env.step(np.array([0.0], dtype=np.float32))
    f = after[0] * after[1]
    assert env.rewards["x"] == pytest.approx(-f, rel=1e-5) and env.rewards["y"] == pytest.approx(
        f, rel=1e-5
    )


def test_batched_instances_equal_separate_runs():
    batched = MinMaxBatchedParallelEnv(num_envs=4, game="sextic", max_steps=10)
    obs_b, _ = batched.reset(seed=3)
    gen = torch.Generator().manual_seed(0)
    actions = [
        {a: 0.2 * torch.rand(4, 1, generator=gen, dtype=torch.float64) - 0.1 for a in "xy"}
        for _ in range(10)
    ]
    traj_b = [obs_b["x"]]
    for act in actions:
        traj_b.append(batched.step(act)[0]["x"])
    for i in range(4):
        single = MinMaxBatchedParallelEnv(num_envs=1, game="sextic", max_steps=10)
        obs, _ = single.reset(seed=3 + i)
        traj = [obs["x"]]
        for act in actions:
            traj.append(single.step({a: v[i : i + 1] for a, v in act.items()})[0]["x"])
        for b, s in zip(traj_b, traj, strict=True):
            assert torch.equal(b[i], s[0])


def test_xy2_keeps_x_nonnegative_and_truncates_at_max_steps():
    env = MinMaxParallelEnv(game="xy2", max_steps=5)
    obs, _ = env.reset(seed=0)
    for t in range(5):
        obs, rewards, terms, truncs, infos = env.step(
            {"x": np.array([-1.0], np.float32), "y": np.array([0.1], np.float32)}
        )
        assert obs["x"][0] >= 0.0
        assert rewards["x"] == -rewards["y"] == pytest.approx(-infos["x"]["f"])
        assert truncs["x"] == (t == 4) and not terms["x"]
    assert env.agents == []


def test_bad_actions_and_kwargs_raise_value_errors_before_any_change():
    env = MinMaxParallelEnv(game="bilinear")
    obs, _ = env.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions\['y'\]\[0\] must lie in"):
        env.step({"x": np.array([0.1], np.float32), "y": np.array([5.0], np.float32)})
    with pytest.raises(ValueError, match=r"actions\['x'\] must have shape \(1, 1\)"):
        env.step({"x": np.array([0.1, 0.2], np.float32), "y": np.array([0.0], np.float32)})
    with pytest.raises(ValueError, match=r"actions\['x'\]\[0\] must lie in"):
        env.step({"x": np.array([np.nan], np.float32), "y": np.array([0.0], np.float32)})
    with pytest.raises(ValueError, match=r"actions must be a dict with keys \['x', 'y'\]"):
        env.step({"x": np.array([0.1], np.float32)})
    np.testing.assert_array_equal(env.step({"x": np.zeros(1), "y": np.zeros(1)})[0]["x"], obs["x"])
    with pytest.raises(ValueError, match=r"game must be one of \['bilinear'"):
        MinMaxParallelEnv(game="go")
    with pytest.raises(ValueError, match="max_steps must be an int >= 1"):
        MinMaxParallelEnv(game="bilinear", max_steps=0)
    with pytest.raises(ValueError, match="max_increment must be a finite number > 0"):
        MinMaxParallelEnv(game="bilinear", max_increment=float("inf"))


def test_batched_env_runs_one_game_per_instance():
    env = MinMaxBatchedParallelEnv(
        num_envs=2, game="bilinear", game_params={"A": [[[1.0]], [[2.0]]]}
    )
    obs, _ = env.reset(seed=0)
    zero = torch.zeros(2, 1)
    *_, infos = env.step({"x": zero, "y": zero})
    x, y = obs["x"][:, 0].double(), obs["x"][:, 1].double()
    torch.testing.assert_close(
        infos["y"]["f"].double(), torch.stack([x[0] * y[0], 2 * x[1] * y[1]])
    )
    with pytest.raises(ValueError, match="it must be 1 or num_envs=3"):
        MinMaxBatchedParallelEnv(
            num_envs=3, game="bilinear", game_params={"A": torch.ones(2, 1, 1)}
        )


def test_make_parallel_with_num_envs_builds_the_batched_view_on_the_registered_game():
    batched = gymforge.make_parallel("MinMax-Quadratic-v0", num_envs=3, max_steps=7)
    assert isinstance(batched, MinMaxBatchedParallelEnv) and batched.num_envs == 3
    obs, _ = batched.reset(seed=2)
    single = gymforge.make_parallel("MinMax-Quadratic-v0", max_steps=7)
    first, _ = single.reset(seed=4)
    np.testing.assert_array_equal(obs["x"][2].numpy(), first["x"])  # instance i = seed s + i
    assert batched.game.value(batched.state.x, batched.state.y).shape == (3,)
