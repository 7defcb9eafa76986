"""The TorchVectorEnv base, the scalar adapter and the SB3 adapter, exercised on the probe env."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from stable_baselines3 import PPO

from gymforge.adapters.sb3 import as_sb3_vec_env
from gymforge.core.instance_rng import InstanceRNG
from gymforge.core.reset_seeds import batch_reset_seeds
from gymforge.entry_points import ProbeEnv
from gymforge.envs.probe import ProbeVecEnv


def test_core__probe_terminates_after_patience_mistakes():
    env = ProbeEnv(n_targets=4, max_steps=10, patience=3)
    obs, _ = env.reset(seed=0)
    rewards = []
    for _ in range(3):
        wrong = (int(np.argmax(obs[:4])) + 1) % 4
        obs, reward, terminated, truncated, info = env.step(wrong)
        rewards.append(reward)
    assert rewards == [0.0, 0.0, 0.0]
    assert terminated and not truncated
    assert info["mistakes"] == 3


def test_core__probe_truncates_at_max_steps_with_perfect_play():
    env = ProbeEnv(n_targets=4, max_steps=5, patience=1)
    obs, _ = env.reset(seed=0)
    total = 0.0
    for step in range(5):
        obs, reward, terminated, truncated, _ = env.step(int(np.argmax(obs[:4])))
        total += reward
        assert not terminated
        assert truncated == (step == 4)
    assert total == 5.0
    assert obs[4] == 1.0  # elapsed fraction


def test_core__same_step_autoreset_reports_final_obs_and_starts_a_new_episode():
    venv = ProbeVecEnv(num_envs=2, n_targets=4, max_steps=3, patience=10)
    obs, _ = venv.reset(seed=0)
    for _ in range(3):
        obs, _, terminated, truncated, info = venv.step(torch.zeros(2, dtype=torch.long))
    assert truncated.all() and not terminated.any()
    assert info["_final_obs"].all()
    # the final observation shows the full elapsed time, the new one a fresh episode
    assert torch.all(info["final_obs"][:, 4] == 1.0)
    assert torch.all(obs[:, 4] == 0.0) and torch.all(obs[:, 5] == 0.0)
    assert torch.equal(info["final_info"]["mistakes"], info["mistakes"])
    obs, *_, info = venv.step(torch.zeros(2, dtype=torch.long))
    assert "final_obs" not in info
    assert torch.all(obs[:, 4] == 1 / 3)


def test_core__seed_s_gives_instance_i_the_seed_s_plus_i():
    venv = ProbeVecEnv(num_envs=3)
    venv.reset(seed=40)
    assert venv.rng.seed.tolist() == [40, 41, 42]
    venv.reset(seed=[5, 9, 2])
    assert venv.rng.seed.tolist() == [5, 9, 2]


@pytest.mark.parametrize(
    ("seed", "message"),
    [(-1, "seed must be in"), (1.5, "seed must be an int"), ([1, 2], "num_envs=3")],
)
def test_core__bad_seeds_raise_a_clear_error(seed, message):
    with pytest.raises(ValueError, match=message):
        ProbeVecEnv(num_envs=3).reset(seed=seed)


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (torch.tensor([0, 4, 1]), r"action\[1\] must be in \{0, …, 3\}, got 4"),
        (torch.tensor([0, -1, 1]), r"action\[1\] must be in"),
        (torch.tensor([0, 1]), r"action must have shape \(3,\)"),
        (torch.tensor([0.0, 1.0, 2.0]), "must hold integers"),
    ],
)
def test_core__invalid_actions_raise_before_any_state_changes(action, message):
    venv = ProbeVecEnv(num_envs=3)
    venv.reset(seed=0)
    before = (venv.state.steps.clone(), venv.rng.counter.clone())
    with pytest.raises(ValueError, match=message):
        venv.step(action)
    assert torch.equal(venv.state.steps, before[0])
    assert torch.equal(venv.rng.counter, before[1])


def test_core__scalar_env_rejects_out_of_space_actions():
    env = ProbeEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="must be in"):
        env.step(7)


def test_core__step_before_reset_is_an_error():
    with pytest.raises(RuntimeError, match="reset"):
        ProbeVecEnv(num_envs=2).step(torch.zeros(2, dtype=torch.long))


def test_core__instance_rng_advances_only_selected_instances():
    rng = InstanceRNG.create([1, 2, 3])
    first = rng.uniform(where=torch.tensor([True, False, True]))
    assert rng.counter.tolist() == [1, 0, 1]
    second = rng.uniform()
    assert second[1] == first[1]  # instance 1 did not advance, so it draws the same number again
    assert second[0] != first[0]


def test_core__instance_rng_is_uniform():
    values = InstanceRNG.create(list(range(20000))).uniform()
    counts = torch.histc(values, bins=10, min=0, max=1)
    expected = 2000
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 27.9  # 99.9% quantile of chi-square with 9 degrees of freedom


def test_core__sb3_adapter_reports_terminal_observation_and_time_limit():
    vec = as_sb3_vec_env(ProbeVecEnv(num_envs=2, max_steps=2, patience=10))
    vec.seed(0)
    vec.reset()
    vec.step(np.zeros(2, dtype=np.int64))
    obs, rewards, dones, infos = vec.step(np.zeros(2, dtype=np.int64))
    assert dones.all()
    for info in infos:
        assert info["TimeLimit.truncated"] is True
        assert info["terminal_observation"][4] == 1.0
    assert np.all(obs[:, 4] == 0.0)
    assert rewards.dtype == np.float32


def test_core__sb3_adapter_refuses_next_step_autoreset():
    venv = gym.make_vec("Probe-Match-v0", num_envs=2, vectorization_mode="sync")
    with pytest.raises(ValueError, match="SAME_STEP"):
        as_sb3_vec_env(venv)


def test_core__ppo_learns_the_probe_env_through_the_adapter():
    """PPO must clearly beat chance (0.25 per step) on the probe env: the adapter carries signal."""
    vec = as_sb3_vec_env(ProbeVecEnv(num_envs=8, n_targets=4, max_steps=16, patience=16))
    model = PPO(
        "MlpPolicy", vec, n_steps=64, batch_size=256, learning_rate=3e-3, seed=0, device="cpu"
    )
    model.learn(total_timesteps=8192)
    env = ProbeEnv(n_targets=4, max_steps=16, patience=16)
    obs, _ = env.reset(seed=123)
    hits = 0
    for _ in range(16):
        action, _ = model.predict(obs, deterministic=True)
        obs, reward, *_ = env.step(int(action))
        hits += reward
    assert hits >= 14


def test_batch_reset_seeds__instance_seeds_and_the_generator_seed() -> None:
    rng = np.random.default_rng(0)
    assert batch_reset_seeds(5, 3, rng) == ([5, 6, 7], 5)
    assert batch_reset_seeds([9, 2], 2, rng) == ([9, 2], 9)
    drawn, generator_seed = batch_reset_seeds(None, 2, np.random.default_rng(1))
    assert generator_seed is None
    assert drawn == [int(s) for s in np.random.default_rng(1).integers(0, 2**62, size=2)]
    with pytest.raises(ValueError, match="seed"):
        batch_reset_seeds(-1, 2, rng)


def test_batch_reset_seeds__the_vector_base_and_the_batched_games_seed_alike() -> None:
    from gymforge.envs.minmax.parallel_env import MinMaxBatchedParallelEnv

    for seed in (4, [7, 3]):
        games = MinMaxBatchedParallelEnv(num_envs=2)
        venv = ProbeVecEnv(num_envs=2)
        games.reset(seed=seed)
        venv.reset(seed=seed)
        assert games.rng.seed.tolist() == venv.rng.seed.tolist()
        assert games.np_random.integers(2**62) == venv.np_random.integers(2**62)
