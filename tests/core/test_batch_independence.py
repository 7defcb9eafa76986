"""Batch independence: an instance behaves the same whatever the batch it runs in.

Instance ``i`` of a batch reset with seed ``s`` must produce the same observations, rewards,
terminations and truncations in a batch of 2 as in a batch of 5, given the same actions, for
every id with a batched engine. This is what lets a user scale ``num_envs`` without changing
results, and it is the property a GPU kernel with batch-size-dependent reductions (or writes
whose order matters) would break; the ``gpu`` variant checks it on CUDA.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

from gymforge.core.golden import _actions
from gymforge.registry import all_specs

BATCHED = [spec.id for spec in all_specs() if spec.vector_entry_point is not None]
SMALL, LARGE, KEPT, STEPS, SEED = 2, 5, 2, 30, 7


def _as_numpy(value: object) -> np.ndarray:
    return value.cpu().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)


def _first_rows(env_id: str, batch: int, device: str) -> list[list[np.ndarray]]:
    """Per step: obs, reward, terminated, truncated of the first ``KEPT`` instances."""
    env = gym.make_vec(
        env_id, num_envs=batch, vectorization_mode="vector_entry_point", device=device
    )
    try:
        obs, _ = env.reset(seed=SEED)
        rows = [[_as_numpy(obs)[:KEPT]]]
        for step in range(STEPS):
            kept = _actions(env.single_action_space, np.random.default_rng(step), KEPT)
            others = _actions(env.single_action_space, np.random.default_rng(1000 + step), batch)
            others[:KEPT] = kept  # the kept instances act alike in both batches; the rest differ
            out = env.step(torch.as_tensor(others, device=device))
            rows.append([_as_numpy(value)[:KEPT] for value in out[:4]])
        return rows
    finally:
        env.close()


def _assert_independent(env_id: str, device: str) -> None:
    small, large = _first_rows(env_id, SMALL, device), _first_rows(env_id, LARGE, device)
    for step, (a, b) in enumerate(zip(small, large, strict=True)):
        for field, x, y in zip(("obs", "reward", "terminated", "truncated"), a, b, strict=False):
            assert np.array_equal(x, y, equal_nan=True), f"{env_id}: step {step}, {field} differs"


@pytest.mark.parametrize("env_id", BATCHED)
def test_instance_behaves_the_same_in_batches_of_different_sizes(env_id: str) -> None:
    torch.set_num_threads(1)
    _assert_independent(env_id, "cpu")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("env_id", BATCHED)
def test_instance_behaves_the_same_in_batches_of_different_sizes_on_cuda(env_id: str) -> None:
    _assert_independent(env_id, "cuda")
