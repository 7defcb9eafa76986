"""Discrete-action clients at the front door, through the one documented line.

cleanrl's ``ppo.py`` asserts a ``Discrete`` action space and TorchRL's ``GymEnv`` calls
``int(action)``: both fail on LineFlow's ``MultiDiscrete([100])``. With
``gymforge.wrappers.DiscreteAction`` (one line) they run; these tests drive the real libraries.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

import gymforge  # noqa: F401
from gymforge.registry import all_specs
from gymforge.wrappers import DiscreteAction, DiscreteActionVector

SHORT = {"horizon": 200}


def test_discrete_view_steps_exactly_like_the_entries_it_stands_for():
    raw, flat = gym.make("LineFlow-PartDistribution-v0"), gym.make("LineFlow-PartDistribution-v0")
    flat = DiscreteAction(flat)
    assert flat.action_space == gym.spaces.Discrete(25)
    a, _ = raw.reset(seed=3)
    b, _ = flat.reset(seed=3)
    for index in [0, 7, 24, 12, 5] * 20:
        entries = np.array(np.unravel_index(index, (5, 5)))
        a, ra, *_ = raw.step(entries)
        b, rb, *_ = flat.step(index)
        np.testing.assert_array_equal(a, b)
        assert ra == rb


def test_discrete_view_passes_gymnasiums_checker_and_refuses_huge_products():
    from gymnasium.utils.env_checker import check_env

    check_env(DiscreteAction(gym.make("LineFlow-WaitingTime-v0", **SHORT)))
    with pytest.raises(ValueError, match="max_actions: the product of the choices"):
        DiscreteAction(gym.make("LineFlow-ComplexLine-v0"))
    with pytest.raises(ValueError, match="MultiDiscrete"):
        DiscreteAction(gym.make("MinMaxTuning-v0"))


@pytest.mark.parametrize("as_torch", [True, False])
def test_discrete_vector_view_matches_the_entries(as_torch):
    def make():
        return gym.make_vec(
            "LineFlow-PartDistribution-v0", num_envs=3, vectorization_mode="vector_entry_point"
        )

    raw, flat = make(), DiscreteActionVector(make())
    assert flat.single_action_space == gym.spaces.Discrete(25)
    raw.reset(seed=1)
    flat.reset(seed=1)
    for step in range(30):
        index = np.array([step % 25, (3 * step) % 25, 24])
        entries = np.stack(np.unravel_index(index, (5, 5)), axis=1)
        a = raw.step(torch.as_tensor(entries))
        b = flat.step(torch.as_tensor(index) if as_torch else index)
        for x, y in zip(a[:2], b[:2], strict=True):
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_a_cleanrl_style_ppo_loop_runs_through_the_documented_line():
    """The structure of cleanrl's ppo.py: SyncVectorEnv of wrapped envs, RecordEpisodeStatistics,
    Gymnasium 1.x ``infos["episode"]``, a categorical policy on ``single_action_space.n``."""
    envs = gym.vector.SyncVectorEnv(
        [lambda: DiscreteAction(gym.make("LineFlow-WaitingTime-v0", **SHORT)) for _ in range(2)]
    )
    envs = gym.wrappers.vector.RecordEpisodeStatistics(envs)
    assert isinstance(envs.single_action_space, gym.spaces.Discrete), "cleanrl's assertion"
    torch.manual_seed(0)
    obs_dim = int(np.prod(envs.single_observation_space.shape))
    actor = torch.nn.Sequential(
        torch.nn.Linear(obs_dim, 32),
        torch.nn.Tanh(),
        torch.nn.Linear(32, envs.single_action_space.n),
    )
    optimizer = torch.optim.Adam(actor.parameters(), lr=1e-3)
    obs, _ = envs.reset(seed=0)
    returns = []
    for _ in range(2):  # two iterations of 128-step rollouts (the episodes last 200 steps)
        log_probs, rewards = [], []
        for _ in range(128):
            dist = torch.distributions.Categorical(logits=actor(torch.as_tensor(obs).float()))
            action = dist.sample()
            obs, reward, _, _, infos = envs.step(action.numpy())
            log_probs.append(dist.log_prob(action))
            rewards.append(torch.as_tensor(reward, dtype=torch.float32))
            if "episode" in infos:
                returns += [float(r) for r in infos["episode"]["r"][infos["_episode"]]]
        advantage = torch.stack(rewards) - torch.stack(rewards).mean()
        loss = -(torch.stack(log_probs) * advantage).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert len(returns) == 2 and all(np.isfinite(returns))


SINGLE_AGENT = [s.id for s in all_specs() if not s.capabilities.multi_agent]


def one_choice(space: gym.Space) -> bool:
    """A MultiDiscrete of one entry: a single choice (TorchRL calls ``int(action)`` on it)."""
    return isinstance(space, gym.spaces.MultiDiscrete) and space.nvec.size == 1


@pytest.mark.parametrize("env_id", SINGLE_AGENT)
def test_torchrl_gym_env_passes_its_spec_check_on_every_single_agent_id(env_id):
    """Unchanged (``GymEnv(id)``), or through the documented line for one-choice ids."""
    pytest.importorskip("torchrl")
    from torchrl.envs import GymEnv, GymWrapper
    from torchrl.envs.utils import check_env_specs

    if one_choice(gym.spec(env_id).make().action_space):
        env = GymWrapper(DiscreteAction(gym.make(env_id)))
    else:
        env = GymEnv(env_id)
    check_env_specs(env, seed=0)
    assert env.rollout(3)["action"].shape[0] == 3
