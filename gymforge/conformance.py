"""The conformance suite of an env id, importable: the same checks the tests run on every id.

Each check is a function of an env id that raises ``AssertionError`` (or the error of the
failing library checker) when the id breaks the contract. :data:`CHECKS` names them; each applies
to the ids whose capabilities it needs (:func:`applicable`). ``tests/test_conformance.py``
parametrizes over the registry with these checks, and an author of a new family runs
:func:`check_id` on a new id, so both run the very same checks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import torch
from gymnasium.vector import AutoresetMode

from gymforge.core import conformance
from gymforge.registry import EnvSpec, get_spec


def make_vec_of(env_id: str) -> Callable[[int], Any]:
    """``n -> gym.make_vec(env_id, num_envs=n)`` through the id's vector entry point."""
    return lambda n: gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point")


def gymnasium_check_env(env_id: str) -> None:
    """Gymnasium's own env checker (render check only where the id has render modes)."""
    from gymnasium.utils.env_checker import check_env

    render = bool(get_spec(env_id).capabilities.render_modes)
    check_env(gym.make(env_id).unwrapped, skip_render_check=not render)


def sb3_check_env(env_id: str) -> None:
    """Stable-Baselines3's env checker."""
    from stable_baselines3.common.env_checker import check_env

    check_env(gym.make(env_id).unwrapped, warn=True)


def determinism(env_id: str) -> None:
    """The same seed gives the same trajectory, another seed a different one."""
    conformance.check_determinism(lambda: gym.make(env_id))


def observations_in_space(env_id: str) -> None:
    """Every observation lies inside the observation space."""
    conformance.check_observations_in_space(gym.make(env_id))


def pickling(env_id: str) -> None:
    """A pickled env continues identically."""
    conformance.check_pickling(gym.make(env_id))


def same_step_torch_vector_env(env_id: str) -> None:
    """``make_vec`` gives a same-step autoreset vector env of torch observations whose single
    spaces are the scalar env's."""
    venv = make_vec_of(env_id)(4)
    assert venv.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert venv.single_observation_space == gym.make(env_id).observation_space
    assert venv.single_action_space == gym.make(env_id).action_space
    obs, _ = venv.reset(seed=0)
    assert isinstance(obs, torch.Tensor) and obs.shape == (4, *venv.single_observation_space.shape)


def batch_equivalence(env_id: str) -> None:
    """Batched instances equal separate runs with the same seeds."""
    action_space = gym.make(env_id).action_space
    conformance.check_batch_equivalence(make_vec_of(env_id), action_space, steps=60)


def vector_matches_scalar(env_id: str) -> None:
    """A vector instance matches the scalar env until its first episode ends."""
    conformance.check_vector_matches_scalar(gym.make(env_id), make_vec_of(env_id))


def num_workers_argument(env_id: str) -> None:
    """``make_vec`` takes ``num_workers`` (one worker runs in this process) and refuses more
    workers than instances."""
    venv = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", num_workers=1)
    assert type(venv).__name__ != "ShardedVectorEnv"  # (one worker: this process)
    try:
        gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", num_workers=3)
    except ValueError as error:
        assert "num_workers must be an int in [1, num_envs=2]" in str(error), error
    else:
        raise AssertionError("num_workers=3 > num_envs=2 was accepted")


def sharded_equivalence(env_id: str) -> None:
    """A batch over worker processes equals the same batch in one process."""

    def make_vec(n: int, workers: int) -> Any:
        return gym.make_vec(
            env_id, num_envs=n, vectorization_mode="vector_entry_point", num_workers=workers
        )

    conformance.check_sharded_equivalence(make_vec, gym.make(env_id).action_space, steps=40)


def ppo_trains_through_sb3(env_id: str) -> None:
    """SB3's PPO trains a few hundred steps through the SB3 adapter and acts inside the space."""
    from stable_baselines3 import PPO

    from gymforge.adapters.sb3 import as_sb3_vec_env

    if get_spec(env_id).capabilities.batched:
        vec_env = as_sb3_vec_env(
            gym.make_vec(env_id, num_envs=4, vectorization_mode="vector_entry_point")
        )
    else:
        vec_env = as_sb3_vec_env(
            gym.make_vec(
                env_id,
                num_envs=2,
                vectorization_mode="sync",
                vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP},
            )
        )
    model = PPO("MlpPolicy", vec_env, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=256)
    assert model.num_timesteps >= 256
    obs = vec_env.reset()
    action, _ = model.predict(obs, deterministic=True)
    assert vec_env.action_space.contains(action[0])


def _single(spec: EnvSpec) -> bool:
    return not spec.capabilities.multi_agent


def _batched(spec: EnvSpec) -> bool:
    return _single(spec) and spec.capabilities.batched


def _same_engine(spec: EnvSpec) -> bool:
    return _batched(spec) and spec.capabilities.same_engine


@dataclass(frozen=True)
class Check:
    """One conformance check: the function of an env id and the ids it applies to."""

    run: Callable[[str], None]
    applies: Callable[[EnvSpec], bool]


#: name -> check, in the order :func:`check_id` runs them.
CHECKS: dict[str, Check] = {
    "gymnasium_check_env": Check(gymnasium_check_env, _single),
    "sb3_check_env": Check(sb3_check_env, _single),
    "determinism": Check(determinism, _single),
    "observations_in_space": Check(observations_in_space, _single),
    "pickling": Check(pickling, _single),
    "same_step_torch_vector_env": Check(same_step_torch_vector_env, _batched),
    "batch_equivalence": Check(batch_equivalence, _batched),
    "vector_matches_scalar": Check(vector_matches_scalar, _same_engine),
    "num_workers_argument": Check(num_workers_argument, _batched),
    "sharded_equivalence": Check(sharded_equivalence, _batched),
    "ppo_trains_through_sb3": Check(ppo_trains_through_sb3, _single),
}


def applicable(env_id: str) -> list[str]:
    """The names of the checks that apply to ``env_id``, in :data:`CHECKS` order."""
    spec = get_spec(env_id)
    return [name for name, check in CHECKS.items() if check.applies(spec)]


def run_check(name: str, env_id: str) -> None:
    """Run the check ``name`` on ``env_id``; its failure propagates."""
    if name not in CHECKS:
        raise ValueError(f"unknown conformance check {name!r}; known: {list(CHECKS)}")
    CHECKS[name].run(env_id)


def check_id(env_id: str, names: list[str] | None = None) -> list[str]:
    """Run the applicable checks (or only ``names``) on ``env_id``; one ``"name: error"`` line
    per failed check, an empty list when the id conforms."""
    problems = []
    for name in applicable(env_id) if names is None else names:
        try:
            run_check(name, env_id)
        except Exception as error:  # every failure is reported; none stops the rest
            problems.append(f"{name}: {type(error).__name__}: {error}")
    return problems
