"""MetaBBO baselines: static configuration, jDE-/SHADE-style adaptation, grid and SB3 agent."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
import torch

import gymforge  # noqa: F401 - registers the ids
from gymforge.baselines.metabbo.adaptive import JDEAgent, SHADEAgent
from gymforge.baselines.metabbo.static import (
    GRID_BINS,
    StaticAgent,
    grid_configurations,
    load_configs,
    save_result,
)
from gymforge.envs.metabbo.gym_env import MetaBBOVecEnv


def _obs(b: int, remaining: float, improved: float) -> np.ndarray:
    obs = np.full((b, 9), 0.5, dtype=np.float32)
    obs[:, 3], obs[:, 8] = remaining, improved
    return obs


@pytest.mark.parametrize("agent_cls", [JDEAgent, SHADEAgent, StaticAgent])
@pytest.mark.parametrize("preset", ["alg0", "alg1", "alg2", "pso"])
def test_baselines__valid_actions_on_every_preset(agent_cls, preset: str) -> None:
    venv = MetaBBOVecEnv(num_envs=3, preset=preset, population_size=24, max_generations=4)
    k = venv.single_action_space.shape[0]
    kwargs = {"bins": [8] * k} if agent_cls is StaticAgent else {}
    agent = agent_cls(venv, **kwargs)
    agent.reset(seed=0)
    obs, info = venv.reset(seed=0)
    for _ in range(6):  # crosses an autoreset
        action = agent.act(
            obs.numpy(), {k_: v.numpy() for k_, v in info.items() if isinstance(v, torch.Tensor)}
        )
        assert action.shape == (3, k) and action.dtype == np.int64
        obs, _, _, _, info = venv.step(torch.as_tensor(action))
    single = agent.act(obs[0].numpy(), {})
    assert single.shape == (k,)
    assert gym.make("MetaBBO-v0").action_space.contains(
        agent_cls(
            gym.make("MetaBBO-v0"), **({"bins": [1, 2, 3]} if agent_cls is StaticAgent else {})
        ).act(obs[0].numpy())
    )


def test_jde__keeps_successful_values_and_reverts_failures() -> None:
    env = gym.make("MetaBBO-v0")
    agent = JDEAgent(env, tau_f=1.0, tau_cr=1.0)
    agent.reset(seed=1)
    first = agent.act(_obs(4, 1.0, 0.0))  # episode start: everything resampled
    agent.act(_obs(4, 0.9, 1.0))  # the first tries improved: they become the kept values
    agent.tau_f = agent.tau_cr = 0.0
    kept = agent.act(_obs(4, 0.8, 0.0))  # second tries failed: back to the kept values
    np.testing.assert_array_equal(kept, first)
    restart = agent.act(_obs(4, 1.0, 1.0))  # a new episode: F = 0.5, Cr = 0.9 again
    np.testing.assert_array_equal(restart, np.tile([8, 8, 14], (4, 1)))


def test_shade__memory_takes_the_successful_values() -> None:
    env = gym.make("MetaBBO-v0")
    agent = SHADEAgent(env, memory=2, window=1)
    agent.reset(seed=0)
    a0 = agent.act(_obs(2, 1.0, 0.0), {"best_error": np.array([10.0, 10.0])})
    obs = _obs(2, 0.9, 1.0)
    obs[1, 8] = 0.0
    agent.act(obs, {"best_error": np.array([5.0, 10.0])})
    # instance 0 improved: slot 0 holds its F (Lehmer mean of one value) and Cr
    np.testing.assert_allclose(agent.m_f[0, 0], a0[0, :2] / 15.0)
    np.testing.assert_allclose(agent.m_cr[0, 0], a0[0, 2:] / 15.0)
    assert agent.slot.tolist() == [1, 0]
    np.testing.assert_allclose(agent.m_f[1], 0.5)  # instance 1 learned nothing


def test_static__grid_and_agent(tmp_path) -> None:
    configs = grid_configurations("alg1")
    assert len(configs) == len(GRID_BINS) ** 3 and len(configs[0]) == 10
    assert all(c[0] == c[3] == c[6] and c[2] == c[5] == c[8] for c in configs)  # shared values
    env = gym.make("MetaBBO-v0")
    agent = StaticAgent(env, bins=[1, 2, 3])
    np.testing.assert_array_equal(agent.act(np.zeros((2, 9))), [[1, 2, 3], [1, 2, 3]])
    with pytest.raises(ValueError, match=r"bins must be 3 integers in 0\.\.15"):
        StaticAgent(env, bins=[1, 2])
    path = tmp_path / "static.json"
    save_result({"preset": "alg0", "bins": [4, 5, 6]}, path)
    save_result({"preset": "alg1", "bins": [1] * 10}, path)
    assert load_configs(path)["alg0"]["bins"] == [4, 5, 6]
    assert set(json.loads(path.read_text())) == {"alg0", "alg1"}
    assert not list(tmp_path.glob("*.tmp"))
