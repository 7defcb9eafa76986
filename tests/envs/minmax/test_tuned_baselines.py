"""The tuned min-max baselines: known behaviour on bilinear games and the recorded constants."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

import gymforge
from gymforge.agents.minmax.players import AltHeavyBallPlayers, HeavyBallPlayers, HeavyBallSide
from gymforge.baselines.minmax.game_players import ExtragradientPlayers, OptimisticPlayers
from gymforge.baselines.minmax.tuned import (
    ALT_TUNING_BOARD,
    GAMES_BOARD,
    TUNING_BOARD,
    FixedTuningAgent,
    gda_game_players,
)
from gymforge.envs.minmax.parallel_env import MinMaxBatchedParallelEnv, MinMaxParallelEnv

RESULTS = Path(__file__).resolve().parents[3] / "benchmarks" / "results" / "minmax_baselines.json"


def _final_distance(players, steps=200, seed=0, **kwargs):
    env = MinMaxParallelEnv(**{"game": "bilinear", "max_steps": steps, **kwargs})
    obs, _ = env.reset(seed=seed)
    players.reset(seed=seed)
    start = None
    for _ in range(steps):
        if start is None:
            start = float(np.linalg.norm(obs["x"][:2]))
        obs, _, _, _, infos = env.step(players.act(obs))
    return start, infos["x"]["distance"]


def test_eg_ogda_and_alt_hb_converge_and_gda_diverges_on_xy():
    shape = MinMaxParallelEnv(game="bilinear")
    start, eg = _final_distance(ExtragradientPlayers(shape, step_size=0.5))
    _, ogda = _final_distance(OptimisticPlayers(shape, step_size=0.3))
    _, alt = _final_distance(AltHeavyBallPlayers(shape, step_size=0.5, momentum=-0.3))
    _, gda = _final_distance(HeavyBallPlayers(shape, step_size=0.1))
    assert eg < 1e-3 * start and ogda < 1e-3 * start and alt < 0.05 * start
    assert gda > 1.5 * start  # Sim-GDA spirals out: (1 + h²)^(T/2) = 2.7 here


def test_alt_gda_cycles_on_xy():
    shape = MinMaxParallelEnv(game="bilinear")
    start, alt = _final_distance(AltHeavyBallPlayers(shape, step_size=0.1, momentum=0.0))
    assert 0.5 * start < alt < 2.0 * start  # ρ = 1: neither converges nor diverges


def test_random_bilinear_draws_a_game_per_seed_independent_of_the_batch():
    env = gymforge.make_parallel("MinMax-RandomBilinear-v0")
    env.reset(seed=5)
    single = env.game.b.clone()
    batched = MinMaxBatchedParallelEnv(num_envs=3, game="bilinear", random_game_dim=4)
    batched.reset(seed=3)
    assert torch.equal(batched.game.b[2], single[0])
    assert not torch.equal(batched.game.b[0], batched.game.b[1])
    sigma = torch.linalg.svdvals(batched.game.b)
    assert float(sigma.min()) >= 0.2 - 1e-9 and float(sigma.max()) <= 1.0 + 1e-9


def test_random_game_dim_rejects_bad_values():
    with pytest.raises(ValueError, match="random_game_dim must be None or an int >= 1"):
        MinMaxParallelEnv(game="bilinear", random_game_dim=0)
    with pytest.raises(ValueError, match="random_game_dim draws bilinear games"):
        MinMaxParallelEnv(game="quadratic", random_game_dim=3)


def test_dict_of_sides_plays_like_the_joint_players():
    env = gymforge.make_parallel("MinMax-RandomBilinear-v0")
    sides = gda_game_players(env)
    joint = HeavyBallPlayers(env, step_size=GAMES_BOARD["gda"][0], momentum=0.0)
    obs, _ = env.reset(seed=1)
    for _ in range(5):
        a = {name: side.act(obs[name], {}) for name, side in sides.items()}
        b = joint.act(obs)
        for name in a:
            np.testing.assert_array_equal(a[name], b[name])
        obs, *_ = env.step(a)
    with pytest.raises(ValueError, match="agent must be one of"):
        HeavyBallSide(env, "z")


def test_fixed_tuning_agent_checks_the_action_box():
    import gymnasium as gym

    env = gym.make("MinMaxTuning-v0")
    agent = FixedTuningAgent(env, 0.01, -0.9)
    assert env.action_space.contains(agent.act(env.reset(seed=0)[0]))
    with pytest.raises(ValueError, match="momentum must be in"):
        FixedTuningAgent(env, 0.01, -0.95)
    with pytest.raises(ValueError, match="step_size must be a number"):
        FixedTuningAgent(env, "big", 0.0)


def test_constants_are_the_recorded_tuning_choices():
    result = json.loads(RESULTS.read_text())
    boards = (
        ("tuning_board", TUNING_BOARD),
        ("alt_tuning_board", ALT_TUNING_BOARD),
        ("games_board", GAMES_BOARD),
    )
    for board, constants in boards:
        assert set(result[board]) == set(constants)
        for method, entry in result[board].items():
            assert constants[method] == (entry["chosen"]["h"], entry["chosen"]["beta"]), method
    assert max(result["config"]["games_seeds"]) < 2**62  # tuned on training seeds only
    assert max(result["config"]["tuning_seeds"]) < 2**62


def test_chosen_step_sizes_are_inside_their_grids_or_at_the_action_box():
    """A choice at the grid's largest step size would mean the grid was too small, unless that
    step size is the env's own limit (h_max = 0.5 on the tuning envs)."""
    result = json.loads(RESULTS.read_text())
    grids = {
        "tuning_board": "tuning_h",
        "alt_tuning_board": "alt_tuning_h",
        "games_board": "games_h",
    }
    for board, grid_key in grids.items():
        largest = max(result["config"][grid_key])
        for method, entry in result[board].items():
            if entry["chosen"]["h"] == largest:
                assert board != "games_board" and largest == 0.5, (board, method)


def _tuning_episode(env_id, agent_factory, seed=3):
    import gymnasium as gym

    env = gym.make(env_id)
    obs, _ = env.reset(seed=seed)
    start = float(np.hypot(obs[0], obs[1]))
    agent = agent_factory(env)
    info = {}
    for _ in range(100):
        obs, _, terminated, truncated, info = env.step(agent.act(obs))
        if terminated or truncated:
            break
    return start, float(info["distance"])


def test_alt_hb_converges_on_the_alternating_tuning_env_and_alt_gda_circles():
    from gymforge.baselines.minmax.tuned import alt_gda_tuning_agent, alt_hb_tuning_agent

    start, hb = _tuning_episode("MinMaxTuning-Alt-v0", alt_hb_tuning_agent)
    _, gda = _tuning_episode("MinMaxTuning-Alt-v0", alt_gda_tuning_agent)
    # Alt-HB at (0.5, -0.5): spectral radius about 0.96, so about 0.96^100 = 0.017 of the start
    assert hb < 0.05 * start
    assert 0.5 * start < gda < 2.0 * start  # Alt-GDA: spectral radius 1
    # the same constant pair on simultaneous updates diverges (the paper's contrast)
    _, sim = _tuning_episode("MinMaxTuning-v0", alt_hb_tuning_agent)
    assert sim > start
