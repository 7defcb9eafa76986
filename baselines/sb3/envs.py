"""Training envs for SB3 runs, with training seeds disjoint from evaluation ones.

Seeds (ranges in :mod:`gymforge.baselines.training.seeds`): a run with seed ``S`` and ``K``
training envs resets env ``i`` first with seed ``S + i`` and later draws every episode's seed
from a generator seeded by ``(S, i, start step)`` in ``[0, TRAIN_SEED_LIMIT)`` (the torch vector
env instead continues instance ``i``'s own counter stream, seeded ``S + i``). Held-out
evaluation uses ``EVAL_SEED_BASE + k``, outside that range, so no evaluation episode was ever
seen in training.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv, VecFrameStack, VecMonitor

from gymforge.baselines.training.evaluation import make_single_env
from gymforge.baselines.training.seeds import TRAIN_SEED_LIMIT
from gymforge.registry import get_spec


class TrainingSeeds(gym.Wrapper):
    """Give every unseeded ``reset`` an explicit seed from the training range.

    Args:
        env: the env to wrap.
        stream: entropy of this env's seed generator, e.g. ``(run seed, env index, start step)``.
    """

    def __init__(self, env: gym.Env, stream: tuple[int, ...]) -> None:
        super().__init__(env)
        self._seed_rng = np.random.default_rng(list(stream))

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        if seed is None:
            seed = int(self._seed_rng.integers(0, TRAIN_SEED_LIMIT))
        return self.env.reset(seed=seed, options=options)


def make_train_env(
    env_id: str,
    env_kwargs: dict[str, Any],
    n_envs: int,
    seed: int,
    frame_stack: int = 1,
    vectorized: bool = False,
    device: str = "cpu",
    start_step: int = 0,
) -> VecEnv:
    """The SB3 ``VecEnv`` a run trains on (episode statistics recorded by ``VecMonitor``).

    Args:
        env_id, env_kwargs: what to build.
        n_envs: number of parallel envs.
        seed: the run's seed; env ``i`` starts with ``seed + i`` (see the module docstring).
        frame_stack: stack this many observations along the last axis (1: none).
        vectorized: use the id's batched torch vector env through
            :func:`gymforge.core.sb3.as_sb3_vec_env` instead of ``n_envs`` single envs.
        device: torch device of the vectorized env.
        start_step: the step a resumed run starts at (gives resumed envs fresh seeds).
    """
    if vectorized:
        spec = get_spec(env_id)
        if spec.vector_entry_point is None:
            raise ValueError(
                f"--vectorized needs an id with a batched torch engine; {env_id} has none "
                "(drop --vectorized)"
            )
        from gymforge.adapters.sb3 import as_sb3_vec_env

        vector_env = gym.make_vec(
            env_id,
            num_envs=n_envs,
            vectorization_mode="vector_entry_point",
            device=device,
            **env_kwargs,
        )
        venv: VecEnv = as_sb3_vec_env(vector_env)
        venv.seed(seed + start_step)
    else:
        factories = [
            (lambda i=i: TrainingSeeds(make_single_env(env_id, env_kwargs), (seed, i, start_step)))
            for i in range(n_envs)
        ]
        venv = DummyVecEnv(factories)
        if start_step == 0:
            venv.seed(seed)
    venv = VecMonitor(venv)
    if frame_stack > 1:
        venv = VecFrameStack(venv, n_stack=frame_stack)
    return venv
