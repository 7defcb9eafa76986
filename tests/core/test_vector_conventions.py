"""Gymnasium's vector conventions on every batched id: autoreset modes, partial resets, the
numpy backend under Gymnasium's own vector wrappers, and a differential check against
Gymnasium's ``SyncVectorEnv``."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers.vector import (
    ArrayConversion,
    NormalizeObservation,
    NormalizeReward,
    RecordEpisodeStatistics,
)

from gymforge.checks.autoreset import (
    check_matches_sync_vector_env,
    check_modes_agree,
    sample_actions,
    truncate_after,
)
from gymforge.registry import all_specs

BATCHED = [s for s in all_specs() if s.capabilities.batched and not s.capabilities.multi_agent]
SAME_ENGINE = [s for s in BATCHED if s.capabilities.same_engine]


def ids(specs):
    return [s.id for s in specs]


def numpy_vec(spec, num_envs=3):
    def make(mode):
        return gym.make_vec(
            spec.id,
            num_envs=num_envs,
            vectorization_mode="vector_entry_point",
            autoreset_mode=mode,
            array_backend="numpy",
        )

    return make


@pytest.mark.parametrize("spec", BATCHED, ids=ids(BATCHED))
def test_every_mode_plays_the_same_first_episodes(spec):
    check_modes_agree(numpy_vec(spec), gym.make(spec.id).action_space)


@pytest.mark.parametrize("spec", SAME_ENGINE, ids=ids(SAME_ENGINE))
def test_every_mode_matches_gymnasiums_sync_vector_env(spec):
    check_matches_sync_vector_env(spec.id, numpy_vec(spec))


@pytest.mark.parametrize("spec", BATCHED, ids=ids(BATCHED))
def test_gymnasium_vector_wrappers_run(spec):
    """RecordEpisodeStatistics counts the forced episode ends; NormalizeObservation and
    NormalizeReward (NEXT_STEP only, as Gymnasium requires) update their statistics."""
    env = truncate_after(numpy_vec(spec)(AutoresetMode.NEXT_STEP).unwrapped, (2, 3, 4))
    stats = RecordEpisodeStatistics(env)
    wrapped = NormalizeReward(NormalizeObservation(stats))
    wrapped.reset(seed=0)
    lengths = []
    for action in sample_actions(gym.make(spec.id).action_space, 3, 6):
        obs, reward, *_, info = wrapped.step(action)
        assert isinstance(obs, np.ndarray) and isinstance(reward, np.ndarray)
        if "episode" in info:
            lengths += list(info["episode"]["l"][info["_episode"]])
    assert lengths and max(lengths) <= 4, lengths
    normaliser = wrapped.env
    assert normaliser.obs_rms.count > 1 and np.isfinite(obs).all()


@pytest.mark.parametrize("spec", BATCHED, ids=ids(BATCHED))
def test_array_conversion_over_the_torch_backend_equals_the_numpy_backend(spec):
    torch_env = gym.make_vec(
        spec.id, num_envs=2, vectorization_mode="vector_entry_point", array_backend="torch"
    )
    converted = ArrayConversion(torch_env, env_xp=torch, target_xp=np)
    native = numpy_vec(spec, 2)(AutoresetMode.SAME_STEP)
    a, b = converted.reset(seed=1)[0], native.reset(seed=1)[0]
    assert isinstance(a, np.ndarray) and np.array_equal(a, b)
    for action in sample_actions(gym.make(spec.id).action_space, 2, 3):
        for x, y in zip(converted.step(action)[:4], native.step(action)[:4], strict=True):
            assert np.array_equal(np.asarray(x), y)


def test_reset_mask_resets_only_the_masked_instances():
    venv = gym.make_vec(
        "Probe-Match-v0", num_envs=3, vectorization_mode="vector_entry_point", array_backend="torch"
    )
    venv.reset(seed=0)
    before = venv.step(torch.tensor([0, 0, 0]))[0].clone()
    obs, _ = venv.reset(options={"reset_mask": np.array([False, True, False])})
    assert torch.equal(obs[[0, 2]], before[[0, 2]])
    with pytest.raises(ValueError, match="bool array of shape"):
        venv.reset(options={"reset_mask": np.array([1, 0, 0])})
    with pytest.raises(ValueError, match="takes no seed"):
        venv.reset(seed=0, options={"reset_mask": np.array([True, False, False])})


def test_bad_vector_options_are_refused_by_name():
    make = dict(id="Probe-Match-v0", num_envs=2, vectorization_mode="vector_entry_point")
    with pytest.raises(ValueError, match="autoreset_mode must be one of"):
        gym.make_vec(**make, autoreset_mode="sometimes")
    with pytest.raises(ValueError, match="array_backend must be one of"):
        gym.make_vec(**make, array_backend="jax")
    with pytest.raises(ValueError, match="num_workers > 1 needs autoreset_mode SAME_STEP"):
        gym.make_vec(**make, num_workers=2, autoreset_mode="next_step")
    venv = gym.make_vec(**make, autoreset_mode="next_step")
    assert venv.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP


def test_a_batch_over_worker_processes_takes_the_numpy_backend():
    make = dict(id="Probe-Match-v0", num_envs=4, vectorization_mode="vector_entry_point")
    sharded = gym.make_vec(**make, num_workers=2, array_backend="numpy")
    plain = gym.make_vec(**make, array_backend="numpy")
    try:
        assert np.array_equal(sharded.reset(seed=2)[0], plain.reset(seed=2)[0])
        for action in sample_actions(gym.make("Probe-Match-v0").action_space, 4, 5):
            a, b = sharded.step(action), plain.step(action)
            for x, y in zip(a[:4], b[:4], strict=True):
                assert isinstance(x, np.ndarray) and np.array_equal(x, y)
    finally:
        sharded.close()
