"""The stored Q-Mamba models: registered on Alg0 only, loadable, acting as their labels say."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

import gymforge  # noqa: F401 - registers the ids
from gymforge.baselines.metabbo.qmamba_models import (
    MODEL_FOLDERS,
    MODELS,
    qmamba_agent,
    qmamba_regularised_agent,
)
from gymforge.registry import get_spec


def _actions(agent, obs, seed):
    agent.reset(seed=seed)
    return np.asarray(agent.act(obs))


@pytest.mark.parametrize("env_id", ["MetaBBO-v0", "MetaBBO-v1"])
def test_registered_on_alg0_ids_only(env_id):
    agents = get_spec(env_id).agents
    assert set(MODEL_FOLDERS) <= set(agents)
    for other in ("MetaBBO-Alg1-v0", "MetaBBO-Alg2-v0", "MetaBBO-PSO-v0"):
        assert not set(MODEL_FOLDERS) & set(get_spec(other).agents)
    with pytest.raises(ValueError, match="configure Alg0"):
        qmamba_agent(gym.make("MetaBBO-Alg1-v0"))


def test_greedy_model_is_deterministic_and_the_regularised_one_samples():
    venv = gym.make_vec("MetaBBO-v0", num_envs=8, vectorization_mode="vector_entry_point")
    obs, _ = venv.reset(seed=0)
    greedy, regularised = qmamba_agent(venv), qmamba_regularised_agent(venv)
    g = [_actions(greedy, obs, seed) for seed in (1, 1, 2)]
    r = [_actions(regularised, obs, seed) for seed in (1, 1, 2)]
    assert np.array_equal(g[0], g[1]) and np.array_equal(g[0], g[2])  # greedy: seed-free
    assert np.array_equal(r[0], r[1]) and not np.array_equal(r[0], r[2])  # sampled, seeded
    assert all(venv.single_action_space.contains(a) for a in (*g[0], *r[0]))


def test_model_folders_record_their_training_and_data():
    configs = {
        n: json.loads((MODELS / f / "config.json").read_text()) for n, f in MODEL_FOLDERS.items()
    }
    assert configs["qmamba"]["config"]["bc_weight"] == 0.0
    assert configs["qmamba_regularised"]["config"]["bc_weight"] == 1.0
    assert configs["qmamba_regularised"]["config"]["temperature"] == pytest.approx(0.03)
    # the same dataset, and the paper's batch size and learning rate
    assert (
        configs["qmamba"]["dataset"]["sha256"] == configs["qmamba_regularised"]["dataset"]["sha256"]
    )
    for config in configs.values():
        assert config["train"]["batch_size"] == 64 and config["train"]["lr"] == pytest.approx(5e-3)
        assert (
            "--expert ppo_expert --mu 0.5 --episodes 10000" in config["dataset"]["collect_command"]
        )
