"""The reference players of the MinMax PettingZoo ids and ``gymforge rollout`` on those ids."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import gymforge
from gymforge.agents.minmax.heavy_ball import run_heavy_ball
from gymforge.agents.minmax.players import HeavyBallPlayers
from gymforge.agents.random_players import RandomPlayers
from gymforge.cli import main
from gymforge.envs.minmax.games import make_game


def test_heavy_ball_players_equal_the_reference_solver():
    """Players built from observed gradients reproduce simultaneous heavy ball (run_heavy_ball)."""
    h, beta, steps = 0.1, -0.3, 30
    params = {"A": [[1.0, 0.5], [0.0, 1.5]]}
    env = gymforge.make_parallel("MinMax-Bilinear-v0", game_params=params, max_steps=steps)
    players = HeavyBallPlayers(env, step_size=h, momentum=beta)
    players.reset(seed=3)
    obs, _ = env.reset(seed=3)
    start = obs["x"][:4].astype(np.float64)
    while env.agents:
        obs, *_ = env.step(players.act(obs))
    ref = run_heavy_ball(
        make_game("bilinear", params),
        torch.tensor(start[None, :2]),
        torch.tensor(start[None, 2:]),
        h,
        beta,
        "simultaneous",
        steps,
    )
    expected = torch.cat([ref.x[-1, 0], ref.y[-1, 0]]).numpy()
    np.testing.assert_allclose(obs["x"][:4], expected, rtol=1e-4, atol=1e-4)


def test_gda_players_first_move_is_hand_computed():
    """On f = x·y at (x, y) = (0.5, −0.2): x plays −h·y = 0.01, y plays +h·x = 0.025 (h = 0.05)."""
    env = gymforge.make_parallel("MinMax-Bilinear-v0")
    players = HeavyBallPlayers(env, step_size=0.05)
    obs = np.array([0.5, -0.2, -0.2, 0.5], np.float32)  # x, y, ∇x f = y, ∇y f = x
    actions = players.act({"x": obs, "y": obs})
    np.testing.assert_allclose(actions["x"], [0.01], rtol=1e-6)
    np.testing.assert_allclose(actions["y"], [0.025], rtol=1e-6)


def test_heavy_ball_players_reject_a_nonpositive_step_size():
    env = gymforge.make_parallel("MinMax-Bilinear-v0")
    with pytest.raises(ValueError, match="step_size"):
        HeavyBallPlayers(env, step_size=0.0)


def test_random_players_are_seeded_and_stay_in_their_boxes():
    env = gymforge.make_parallel("MinMax-Quadratic-v0", max_increment=0.5)
    players = RandomPlayers(env)
    players.reset(seed=7)
    first = [players.act({"x": None, "y": None}) for _ in range(5)]
    players.reset(seed=7)
    again = [players.act({"x": None, "y": None}) for _ in range(5)]
    for a, b in zip(first, again, strict=True):
        for agent in ("x", "y"):
            np.testing.assert_array_equal(a[agent], b[agent])
            assert np.all(np.abs(a[agent]) <= 0.5)
    assert not np.array_equal(first[0]["x"], first[0]["y"])  # one stream per agent


@pytest.mark.parametrize("players", ["random", "gda", "negative_momentum"])
def test_cli__rollout_of_a_pettingzoo_id_is_zero_sum_and_seeded(players, capsys):
    argv = ["rollout", "MinMax-Quadratic-v0", "--agent", players, "--episodes", "2", "--json"]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    by_agent = result["returns_by_agent"]
    np.testing.assert_allclose(np.add(by_agent["x"], by_agent["y"]), 0.0, atol=1e-3)
    assert result["returns"] == by_agent["x"] and result["lengths"] == [100, 100]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["returns"] == result["returns"]


def test_cli__rollout_of_a_pettingzoo_id_refuses_record(capsys, tmp_path):
    argv = ["rollout", "MinMax-Bilinear-v0", "--record", str(tmp_path / "a.gif")]
    assert main(argv) == 2
    assert "PettingZoo" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
