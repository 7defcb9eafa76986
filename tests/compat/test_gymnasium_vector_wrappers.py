"""Gymnasium's own vector wrappers on every batched id's default output.

``gym.make_vec(id, n, vectorization_mode="vector_entry_point")`` returns numpy arrays unless a
device is named (:mod:`gymforge.core.vector_factory`), so the wrappers take it with no keyword
besides ``autoreset_mode=NEXT_STEP`` where Gymnasium requires that mode (``NormalizeObservation``).
Episodes are shortened with each family's length keyword so that every wrapper sees episode ends.
(Gymnasium's ``check_env`` on every single-agent id runs in :mod:`tests.test_conformance`.)
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers.vector import (
    ClipReward,
    DictInfoToList,
    FlattenObservation,
    NormalizeObservation,
    NormalizeReward,
    RecordEpisodeStatistics,
    TransformObservation,
)

import gymforge  # noqa: F401 - registers the ids
from gymforge.registry import all_specs

BATCHED = [s for s in all_specs() if s.capabilities.batched and not s.capabilities.multi_agent]

#: per family, the keywords that make its episodes a few steps long
SHORT: dict[str, dict[str, Any]] = {
    "lineflow": {"horizon": 4},
    "metabbo": {"max_generations": 3},
    "cmab": {"horizon": 3},
    "minmax": {"max_steps": 3},
    "probe": {"max_steps": 3},
    "confounders": {"n_stages": 2, "samples_per_group": 32},
}
NUM_ENVS, STEPS = 2, 10


def make(spec: Any, **options: Any) -> gym.vector.VectorEnv:
    """The id's vector env of :data:`NUM_ENVS` short episodes, with only ``options`` added."""
    return gym.make_vec(
        spec.id,
        NUM_ENVS,
        vectorization_mode="vector_entry_point",
        **SHORT[spec.family],
        **options,
    )


def play(env: gym.vector.VectorEnv) -> list[Any]:
    """Reset and :data:`STEPS` seeded random steps; the infos of every step."""
    obs, _ = env.reset(seed=0)
    assert isinstance(obs, np.ndarray) and env.observation_space.contains(obs)
    env.action_space.seed(0)
    infos = []
    for _ in range(STEPS):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        assert isinstance(obs, np.ndarray) and np.isfinite(obs).all()
        assert isinstance(reward, np.ndarray) and reward.shape == (NUM_ENVS,)
        assert terminated.dtype == np.bool_ and truncated.dtype == np.bool_
        infos.append(info)
    return infos


def test_every_family_has_a_short_episode_setting():
    assert {s.family for s in BATCHED} <= set(SHORT)


@pytest.mark.parametrize("spec", BATCHED, ids=[s.id for s in BATCHED])
def test_default_output_goes_through_the_same_step_wrappers(spec):
    """The default (SAME_STEP) env under ``RecordEpisodeStatistics``, ``ClipReward``,
    ``NormalizeReward`` and ``DictInfoToList``, stacked, with no keyword at all."""
    stats = RecordEpisodeStatistics(make(spec))
    infos = play(DictInfoToList(NormalizeReward(ClipReward(stats, -1.0, 1.0))))
    assert all(isinstance(info, list) and len(info) == NUM_ENVS for info in infos)
    ended = [row for info in infos for row in info if "episode" in row]
    assert ended, "no episode ended"
    assert all(float(row["episode"]["l"]) > 0 for row in ended)
    assert len(stats.length_queue) == len(ended)


@pytest.mark.parametrize("spec", BATCHED, ids=[s.id for s in BATCHED])
def test_next_step_output_goes_through_the_observation_wrappers_and_normalisers(spec):
    """The observation wrappers (``NormalizeObservation``, ``FlattenObservation``,
    ``TransformObservation``: NEXT_STEP or DISABLED only, as Gymnasium requires) and
    ``NormalizeReward`` over ``RecordEpisodeStatistics``, ``autoreset_mode`` the only keyword."""
    stats = RecordEpisodeStatistics(make(spec, autoreset_mode=AutoresetMode.NEXT_STEP))
    flat = FlattenObservation(stats)
    scaled = TransformObservation(flat, lambda obs: obs * 0.5, flat.observation_space)
    observations = NormalizeObservation(scaled)
    infos = play(NormalizeReward(observations))
    assert any("episode" in info for info in infos), "no episode ended"
    assert observations.obs_rms.count > STEPS
    assert observations.observation_space.shape == (
        NUM_ENVS,
        flat.single_observation_space.shape[0],
    )
