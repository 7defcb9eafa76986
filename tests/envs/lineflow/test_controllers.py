"""Every LineFlow reference controller meets its band (mean over seeds 0–4, upstream in brackets)
and beats random routing/control on the same seeds: every band excludes random's mean."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from gymforge.agents.lineflow.workers import best_partition, compositions, station_times
from gymforge.registry import all_specs, load_entry_point

BANDS = {
    ("LineFlow-WaitingTime-v0", "optimal"): (150, 165),  # [158–159]
    ("LineFlow-WaitingTimeJump-v0", "heuristic"): (105, 120),  # [113–115]
    ("LineFlow-WorkerAssignment-v0", "best_partition"): (280, 296),  # [288–291]
    ("LineFlow-PartDistribution-v0", "greedy"): (650, 670),  # [660]
    ("LineFlow-PartDistribution-v0", "optimal_share"): (648, 665),  # shares ∝ 1/T_i
    ("LineFlow-ComplexLine-v0", "heuristic"): (185, 225),  # [197–203]
}


def mean_return(env_id: str, agent_name: str, seeds=range(5)) -> float:
    env = gym.make(env_id)
    agent = load_entry_point(all_specs_by_id[env_id].agents[agent_name])(env)
    returns = []
    for seed in seeds:
        agent.reset(seed=seed)
        obs, info = env.reset(seed=seed)
        total, done = 0.0, False
        while not done:
            obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
            total += reward
            done = terminated or truncated
        returns.append(total)
    return float(np.mean(returns))


all_specs_by_id = {s.id: s for s in all_specs()}


#: random's mean over the same seeds (PartDistribution: random routing, 644.4)
RANDOM: dict[str, float | None] = {env_id: None for env_id, _ in BANDS}


@pytest.mark.parametrize(("env_id", "agent"), list(BANDS), ids=[f"{e}:{a}" for e, a in BANDS])
def test_lineflow__reference_controller_meets_its_band_and_beats_random(env_id, agent):
    low, high = BANDS[(env_id, agent)]
    if RANDOM[env_id] is None:
        RANDOM[env_id] = mean_return(env_id, "random")
    assert RANDOM[env_id] < low, "the band must exclude random's mean"
    assert low <= mean_return(env_id, agent) <= high


NAMED = [(s.id, name) for s in all_specs() if s.family == "lineflow" for name in s.agents]


@pytest.mark.parametrize(("env_id", "agent"), NAMED, ids=[f"{e}:{a}" for e, a in NAMED])
def test_lineflow__every_named_agent_acts_validly_on_single_and_batched_observations(env_id, agent):
    env = gym.make(env_id)
    controller = load_entry_point(all_specs_by_id[env_id].agents[agent])(env)
    controller.reset(seed=0)
    obs, info = env.reset(seed=0)
    for _ in range(50):
        action = controller.act(obs, info)
        assert env.action_space.contains(np.asarray(action, dtype=np.int64))
        obs, _, _, _, info = env.step(action)
    batch = controller.act(np.stack([obs, obs]), {"n_parts": np.array([info["n_parts"]] * 2)})
    assert np.asarray(batch).shape == (2, *env.action_space.shape)


def test_lineflow__best_partition_is_the_minimax_composition():
    times = np.array([16.0, 20.0, 24.0])
    options = compositions(9, 3)
    assert len(options) == 55
    worst = station_times(times[None], options).max(axis=1)
    assert tuple(best_partition(times, 9)) == tuple(options[worst.argmin()]) == (2, 3, 4)
    # greedy on the bottleneck (used for large pools) agrees with exhaustive search
    assert tuple(best_partition([16.0, 20.0, 24.0, 28.0, 32.0], 15)) == (2, 2, 3, 4, 4)
