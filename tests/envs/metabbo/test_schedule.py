"""Budget-schedule configurator: known-answer bins, jitter, seeding, errors, use as an expert."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

import gymforge  # noqa: F401 - registers the ids
from gymforge.baselines.metabbo.schedule import DEFAULT_SCHEDULES, Schedule, ScheduleAgent
from gymforge.envs.metabbo.dataset import collect
from gymforge.envs.metabbo.gym_env import MetaBBOVecEnv


def _obs(remaining: list[float]) -> np.ndarray:
    obs = np.full((len(remaining), 9), 0.5, dtype=np.float32)
    obs[:, 3] = remaining
    return obs


def test_schedule_without_jitter_follows_the_curve_by_hand() -> None:
    schedule = Schedule(start=(15, 6, 15), end=(3, 0, 15), power=2.0)
    # used fractions 0, 0.5, 1: curve 0, 0.25, 1 -> 15 - 12 * c, 6 - 6 * c, 15
    bins = schedule.bins(np.array([0.0, 0.5, 1.0]))
    assert bins.tolist() == [[15, 6, 15], [12, 4, 15], [3, 0, 15]]  # 4.5 rounds to even 4
    linear = Schedule(start=(0,), end=(15,))
    assert linear.bins(np.array([0.2, 0.5, 2.0]))[:, 0].tolist() == [3, 8, 15]  # 7.5 -> 8, clip


def test_agent_reads_the_remaining_budget_feature_and_unbatches() -> None:
    env = gym.make("MetaBBO-v0")
    agent = ScheduleAgent(env, Schedule(start=(15, 15, 15), end=(0, 0, 0)))
    agent.reset(seed=0)
    assert agent.act(_obs([1.0, 0.0, 0.6])).tolist() == [[15] * 3, [0] * 3, [9] * 3]
    single = agent.act(_obs([1.0])[0])
    assert single.shape == (3,) and env.action_space.contains(single)


def test_jitter_stays_within_its_range_and_is_seeded() -> None:
    env = gym.make("MetaBBO-v0")
    agent = ScheduleAgent(env, Schedule(start=(8, 8, 8), end=(8, 8, 8), jitter=3))
    obs = _obs([0.5] * 4000)
    agent.reset(seed=7)
    first = agent.act(obs)
    assert first.min() == 5 and first.max() == 11  # every offset in -3..3 occurs
    agent.reset(seed=7)
    assert np.array_equal(agent.act(obs), first)
    agent.reset(seed=8)
    assert not np.array_equal(agent.act(obs), first)


def test_default_schedule_plays_a_whole_batched_episode() -> None:
    venv = MetaBBOVecEnv(num_envs=2, population_size=20, max_generations=5, autoreset=False)
    agent = ScheduleAgent(venv)
    assert agent.schedule == DEFAULT_SCHEDULES["alg0"]
    agent.reset(seed=0)
    obs, _ = venv.reset(seed=0)
    done = np.zeros(2, dtype=bool)
    while not done.all():
        action = agent.act(obs.numpy())
        assert venv.action_space.contains(action)
        obs, _, terminated, truncated, _ = venv.step(torch.as_tensor(action))
        done |= (terminated | truncated).numpy()


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"start": (16, 0, 0), "end": (0, 0, 0)}, "start"),
        ({"start": (1, 2), "end": (1, 2, 3)}, "same length"),
        ({"start": (1,), "end": (-1,)}, "end"),
        ({"start": (1,), "end": (1,), "jitter": -1}, "jitter"),
        ({"start": (1,), "end": (1,), "power": 0.0}, "power"),
    ],
)
def test_bad_schedules_name_the_field(kwargs, field) -> None:
    with pytest.raises(ValueError, match=field):
        Schedule(**kwargs)


def test_agent_rejects_a_schedule_of_the_wrong_size_and_presets_without_default() -> None:
    with pytest.raises(ValueError, match="3 hyperparameters"):
        ScheduleAgent(gym.make("MetaBBO-v0"), Schedule(start=(1, 2), end=(1, 2)))
    with pytest.raises(ValueError, match="no default schedule for preset 'alg1'"):
        ScheduleAgent(MetaBBOVecEnv(num_envs=1, preset="alg1", population_size=24))


def test_schedule_is_a_dataset_expert() -> None:
    arrays, metadata = collect(
        "MetaBBO-v0",
        behavior="mix",
        expert="schedule",
        mu=0.5,
        episodes=4,
        seed=3,
        env_kwargs={"population_size": 16, "max_generations": 6},
    )
    assert metadata["behaviors"] == ["schedule", "random"]
    assert sorted(arrays["behavior"].tolist()) == [0, 0, 1, 1]
    first = arrays["actions"][arrays["behavior"] == 0][:, 0]
    assert (first[:, 0] >= 5).all() and (first[:, 2] >= 10).all()  # start (10, 6, 15) +- 5
