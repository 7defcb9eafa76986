"""PettingZoo's own tooling on every game id: SuperSuit's vector conversion into SB3."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gymforge.registry import all_specs, make_parallel

GAMES = [s.id for s in all_specs() if s.capabilities.multi_agent]


@pytest.mark.parametrize("env_id", GAMES)
def test_supersuit_vector_env_trains_sb3_ppo(env_id):
    """``pettingzoo_env_to_vec_env_v1`` + ``concat_vec_envs_v1`` into SB3's PPO, as PettingZoo's
    SB3 tutorial does (SB3 is given no seed: SuperSuit's vector env has no ``seed`` method)."""
    ss = pytest.importorskip("supersuit")
    from stable_baselines3 import PPO

    env = make_parallel(env_id)
    venv = ss.pettingzoo_env_to_vec_env_v1(env)
    venv = ss.concat_vec_envs_v1(venv, 2, num_cpus=0, base_class="stable_baselines3")
    assert venv.num_envs == 2 * len(env.possible_agents)
    obs = venv.reset()
    assert obs.shape == (venv.num_envs, *env.observation_space(env.possible_agents[0]).shape)
    torch.manual_seed(0)
    model = PPO("MlpPolicy", venv, n_steps=16, batch_size=32, n_epochs=1, verbose=0)
    model.learn(64)
    actions, _ = model.predict(obs, deterministic=True)
    assert actions.shape[0] == venv.num_envs and np.all(np.isfinite(actions))
