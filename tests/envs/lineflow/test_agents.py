"""LineFlow reference agents reach the reference's figures."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from gymforge.agents.lineflow import OptimalWaitingTimeAgent, optimal_waiting_time
from gymforge.envs.lineflow.scenarios import waiting_time


def test_lineflow__closed_form_waiting_time_is_18_point_5_on_the_reference_line():
    assert optimal_waiting_time(waiting_time()) == 18.5
    # a slower component source needs proportionally less waiting
    assert optimal_waiting_time(waiting_time(processing_time_source=10)) == pytest.approx(
        18.5 - 1.1 * 5
    )


def test_lineflow__optimal_controller_reaches_150_to_165_over_seeds_0_to_4():
    """Reference: upstream's optimal agent scores 158–159."""
    env = gym.make("LineFlow-WaitingTime-v0")
    agent = OptimalWaitingTimeAgent(env)
    returns = []
    for seed in range(5):
        obs, info = env.reset(seed=seed)
        total, done = 0.0, False
        while not done:
            obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
            total += reward
            done = terminated or truncated
        returns.append(total)
    assert 150 <= np.mean(returns) <= 165, returns


def test_lineflow__optimal_controller_acts_on_a_batch_of_observations():
    env = gym.make("LineFlow-WaitingTime-v0")
    agent = OptimalWaitingTimeAgent(env)
    obs, _ = env.reset(seed=0)
    batch = np.stack([obs, obs, obs])
    actions = agent.act(batch)
    assert actions.shape == (3, 1)
    assert np.all(actions == agent.act(obs))
