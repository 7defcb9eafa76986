"""One conformance suite over the registry: every id, no hand-written lists."""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env as gym_check_env
from gymnasium.vector import AutoresetMode
from stable_baselines3 import PPO
from stable_baselines3.common.env_checker import check_env as sb3_check_env

from gymforge.core.sb3 import as_sb3_vec_env
from gymforge.registry import all_specs

SINGLE = [s for s in all_specs() if not s.capabilities.multi_agent]
BATCHED = [s for s in SINGLE if s.capabilities.batched]


def ids(specs):
    return [s.id for s in specs]


def rollout(env: gym.Env, seed: int, steps: int) -> list[tuple]:
    """(obs, reward, terminated, truncated) over ``steps`` steps of seeded random actions."""
    env.action_space.seed(seed)
    obs, _ = env.reset(seed=seed)
    out = [(obs, 0.0, False, False)]
    for _ in range(steps):
        obs, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        out.append((obs, reward, terminated, truncated))
        if terminated or truncated:
            obs, _ = env.reset()
    return out


def assert_same(a: list[tuple], b: list[tuple]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x[0], y[0])
        assert x[1:] == y[1:]


@pytest.mark.parametrize("spec", SINGLE, ids=ids(SINGLE))
def test_gymnasium_check_env(spec):
    gym_check_env(gym.make(spec.id).unwrapped, skip_render_check=not spec.capabilities.render_modes)


@pytest.mark.parametrize("spec", SINGLE, ids=ids(SINGLE))
def test_sb3_check_env(spec):
    sb3_check_env(gym.make(spec.id).unwrapped, warn=True)


@pytest.mark.parametrize("spec", SINGLE, ids=ids(SINGLE))
def test_same_seed_same_trajectory_and_other_seed_differs(spec):
    first = rollout(gym.make(spec.id), seed=3, steps=300)
    assert_same(first, rollout(gym.make(spec.id), seed=3, steps=300))
    other = rollout(gym.make(spec.id), seed=4, steps=300)
    assert any(not np.array_equal(x[0], y[0]) for x, y in zip(first, other, strict=True))


@pytest.mark.parametrize("spec", SINGLE, ids=ids(SINGLE))
def test_observations_stay_inside_the_space(spec):
    env = gym.make(spec.id)
    for obs, *_ in rollout(env, seed=0, steps=1000):
        assert env.observation_space.contains(obs), obs


@pytest.mark.parametrize("spec", SINGLE, ids=ids(SINGLE))
def test_pickled_env_continues_identically(spec):
    env = gym.make(spec.id)
    env.reset(seed=7)
    env.action_space.seed(7)
    for _ in range(50):
        *_, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    clone = pickle.loads(pickle.dumps(env))
    for _ in range(100):
        action = env.action_space.sample()
        a, b = env.step(action), clone.step(action)
        np.testing.assert_array_equal(a[0], b[0])
        assert a[1:4] == b[1:4]
        if a[2] or a[3]:
            np.testing.assert_array_equal(env.reset()[0], clone.reset()[0])


@pytest.mark.parametrize("spec", BATCHED, ids=ids(BATCHED))
def test_make_vec_gives_a_same_step_torch_vector_env(spec):
    venv = gym.make_vec(spec.id, num_envs=4, vectorization_mode="vector_entry_point")
    assert venv.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert venv.single_observation_space == gym.make(spec.id).observation_space
    assert venv.single_action_space == gym.make(spec.id).action_space
    obs, _ = venv.reset(seed=0)
    assert isinstance(obs, torch.Tensor) and obs.shape == (4, *venv.single_observation_space.shape)


def _vector_trajectory(spec_id: str, num_envs: int, seed: int, actions: np.ndarray) -> list:
    venv = gym.make_vec(spec_id, num_envs=num_envs, vectorization_mode="vector_entry_point")
    obs, _ = venv.reset(seed=seed)
    out = [obs.clone()]
    for action in actions:
        obs, reward, terminated, truncated, _ = venv.step(torch.as_tensor(action))
        out.append((obs.clone(), reward.clone(), terminated.clone(), truncated.clone()))
    return out


@pytest.mark.parametrize("spec", BATCHED, ids=ids(BATCHED))
def test_batched_instances_equal_separate_runs_with_the_same_seeds(spec):
    num_envs, seed, steps = 5, 11, 200
    space = gym.make(spec.id).action_space
    space.seed(0)
    actions = np.stack([np.stack([space.sample() for _ in range(num_envs)]) for _ in range(steps)])
    batched = _vector_trajectory(spec.id, num_envs, seed, actions)
    for i in range(num_envs):
        single = _vector_trajectory(spec.id, 1, seed + i, actions[:, i : i + 1])
        torch.testing.assert_close(batched[0][i], single[0][0], rtol=0, atol=0)
        for b, s in zip(batched[1:], single[1:], strict=True):
            for x, y in zip(b, s, strict=True):
                torch.testing.assert_close(x[i], y[0], rtol=0, atol=0)


@pytest.mark.parametrize("spec", BATCHED, ids=ids(BATCHED))
def test_vector_instance_matches_the_scalar_env_until_its_first_episode_ends(spec):
    env = gym.make(spec.id)
    venv = gym.make_vec(spec.id, num_envs=3, vectorization_mode="vector_entry_point")
    vobs, _ = venv.reset(seed=20)
    obs, _ = env.reset(seed=21)
    np.testing.assert_array_equal(obs, vobs[1].numpy())
    env.action_space.seed(1)
    for _ in range(500):
        action = env.action_space.sample()
        obs, reward, terminated, truncated, _ = env.step(action)
        batch_action = torch.as_tensor(np.stack([action] * 3))
        vobs, vreward, vterm, vtrunc, _ = venv.step(batch_action)
        assert (reward, terminated, truncated) == (
            float(vreward[1]),
            bool(vterm[1]),
            bool(vtrunc[1]),
        )
        if terminated or truncated:
            break
        np.testing.assert_array_equal(obs, vobs[1].numpy())


def _sb3_env(spec):
    if spec.capabilities.batched:
        return as_sb3_vec_env(
            gym.make_vec(spec.id, num_envs=4, vectorization_mode="vector_entry_point")
        )
    return as_sb3_vec_env(
        gym.make_vec(
            spec.id,
            num_envs=2,
            vectorization_mode="sync",
            vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP},
        )
    )


@pytest.mark.parametrize("spec", SINGLE, ids=ids(SINGLE))
def test_ppo_trains_through_the_sb3_adapter(spec):
    vec_env = _sb3_env(spec)
    model = PPO("MlpPolicy", vec_env, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=256)
    assert model.num_timesteps >= 256
    obs = vec_env.reset()
    action, _ = model.predict(obs, deterministic=True)
    assert vec_env.action_space.contains(action[0])
