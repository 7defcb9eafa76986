"""One conformance suite over the registry: every id, no hand-written lists."""

from __future__ import annotations

import gymnasium as gym
import pytest
import torch
from gymnasium.utils.env_checker import check_env as gym_check_env
from gymnasium.vector import AutoresetMode
from stable_baselines3 import PPO
from stable_baselines3.common.env_checker import check_env as sb3_check_env

from gymforge.core import conformance
from gymforge.core.sb3 import as_sb3_vec_env
from gymforge.registry import all_specs

SINGLE = [s for s in all_specs() if not s.capabilities.multi_agent]
BATCHED = [s for s in SINGLE if s.capabilities.batched]
SAME_ENGINE = [s for s in BATCHED if s.capabilities.same_engine]


def ids(specs):
    return [s.id for s in specs]


def make_vec_of(spec):
    return lambda n: gym.make_vec(spec.id, num_envs=n, vectorization_mode="vector_entry_point")


@pytest.mark.parametrize("spec", SINGLE, ids=ids(SINGLE))
def test_gymnasium_check_env(spec):
    gym_check_env(gym.make(spec.id).unwrapped, skip_render_check=not spec.capabilities.render_modes)


@pytest.mark.parametrize("spec", SINGLE, ids=ids(SINGLE))
def test_sb3_check_env(spec):
    sb3_check_env(gym.make(spec.id).unwrapped, warn=True)


@pytest.mark.parametrize("spec", SINGLE, ids=ids(SINGLE))
def test_same_seed_same_trajectory_and_other_seed_differs(spec):
    conformance.check_determinism(lambda: gym.make(spec.id))


@pytest.mark.parametrize("spec", SINGLE, ids=ids(SINGLE))
def test_observations_stay_inside_the_space(spec):
    conformance.check_observations_in_space(gym.make(spec.id))


@pytest.mark.parametrize("spec", SINGLE, ids=ids(SINGLE))
def test_pickled_env_continues_identically(spec):
    conformance.check_pickling(gym.make(spec.id))


@pytest.mark.parametrize("spec", BATCHED, ids=ids(BATCHED))
def test_make_vec_gives_a_same_step_torch_vector_env(spec):
    venv = make_vec_of(spec)(4)
    assert venv.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert venv.single_observation_space == gym.make(spec.id).observation_space
    assert venv.single_action_space == gym.make(spec.id).action_space
    obs, _ = venv.reset(seed=0)
    assert isinstance(obs, torch.Tensor) and obs.shape == (4, *venv.single_observation_space.shape)


@pytest.mark.parametrize("spec", BATCHED, ids=ids(BATCHED))
def test_batched_instances_equal_separate_runs_with_the_same_seeds(spec):
    conformance.check_batch_equivalence(make_vec_of(spec), gym.make(spec.id).action_space, steps=60)


@pytest.mark.parametrize("spec", SAME_ENGINE, ids=ids(SAME_ENGINE))
def test_vector_instance_matches_the_scalar_env_until_its_first_episode_ends(spec):
    conformance.check_vector_matches_scalar(gym.make(spec.id), make_vec_of(spec))


ONE_PER_FAMILY = list({s.family: s for s in reversed(BATCHED)}.values())  # each family's first


@pytest.mark.parametrize("spec", BATCHED, ids=ids(BATCHED))
def test_make_vec_takes_num_workers(spec):
    venv = gym.make_vec(spec.id, num_envs=2, vectorization_mode="vector_entry_point", num_workers=1)
    assert type(venv).__name__ != "ShardedVectorEnv"  # (one worker: this process)
    with pytest.raises(ValueError, match=r"num_workers must be an int in \[1, num_envs=2\]"):
        gym.make_vec(spec.id, num_envs=2, vectorization_mode="vector_entry_point", num_workers=3)


@pytest.mark.parametrize("spec", ONE_PER_FAMILY, ids=ids(ONE_PER_FAMILY))
def test_batch_over_worker_processes_equals_one_process(spec):
    def make_vec(n, workers):
        return gym.make_vec(
            spec.id, num_envs=n, vectorization_mode="vector_entry_point", num_workers=workers
        )

    conformance.check_sharded_equivalence(make_vec, gym.make(spec.id).action_space, steps=40)


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
