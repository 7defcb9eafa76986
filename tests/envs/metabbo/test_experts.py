"""The trained MetaBBO experts: registered, loadable, reproducible sampling, recorded provenance."""

from __future__ import annotations

import hashlib

import gymnasium as gym
import numpy as np
import pytest
import torch

import gymforge  # noqa: F401 - registers the ids
from benchmarks.metabbo.experts import paired_test
from gymforge.baselines.metabbo.experts import (
    ACTING,
    EXPERT_IDS,
    expert_policy_path,
    ppo_expert_agent,
)
from gymforge.registry import get_spec


@pytest.mark.parametrize(("preset", "env_id"), sorted(EXPERT_IDS.items()))
def test_each_expert_is_registered_and_samples_valid_reproducible_actions(preset, env_id):
    assert "ppo_expert" in get_spec(env_id).agents
    venv = gym.make_vec(env_id, num_envs=4, vectorization_mode="vector_entry_point")
    obs, _ = venv.reset(seed=0)
    agent = ppo_expert_agent(venv)
    actions = []
    for seed in (7, 7, 8):
        agent.reset(seed=seed)
        actions.append(np.asarray(agent.act(obs)))
    assert np.array_equal(actions[0], actions[1])
    # a sampling expert draws other actions under another seed; a greedy one does not
    assert np.array_equal(actions[0], actions[2]) == (ACTING[preset] == "greedy")
    assert all(venv.single_action_space.contains(a) for a in actions[0])
    record = agent.provenance
    assert record["sha256"] == hashlib.sha256(expert_policy_path(preset).read_bytes()).hexdigest()
    assert record["acting"] in ("sampled from the policy", "greedy")
    assert "--backend torch" in " ".join(record["training"]["command"])
    assert record["validation"]["expert"]["perf"]["mean"] > 0.0


def test_pso_has_no_expert_and_a_foreign_env_is_refused():
    assert "ppo_expert" not in get_spec("MetaBBO-PSO-v0").agents
    with pytest.raises(ValueError, match="no trained expert for preset 'pso'"):
        ppo_expert_agent(gym.make("MetaBBO-PSO-v0"))
    with pytest.raises(ValueError, match="needs a MetaBBO env"):
        ppo_expert_agent(gym.make("MinMaxTuning-v0"))


def test_the_scalar_env_takes_the_expert_too():
    env = gym.make("MetaBBO-v0", max_generations=3)
    obs, _ = env.reset(seed=1)
    agent = ppo_expert_agent(env)
    agent.reset(seed=1)
    action = agent.act(obs)
    assert env.action_space.contains(np.asarray(action))
    env.step(action)


def test_paired_test_known_answers():
    shifted = paired_test(np.full(40, 0.5))
    assert shifted["mean"] == 0.5 and shifted["ci95"] == [0.5, 0.5]
    assert shifted["p_value"] < 1e-3  # every sign flip gives a smaller |mean|
    symmetric = paired_test(np.array([1.0, -1.0] * 20))
    assert symmetric["mean"] == 0.0 and symmetric["p_value"] == 1.0
    torch.manual_seed(0)
    noise = paired_test(torch.randn(200).numpy())
    assert noise["p_value"] > 0.01 and noise["ci95"][0] < 0 < noise["ci95"][1]
