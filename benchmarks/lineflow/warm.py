"""The warmed line state every measured torch env of ``batched.py`` starts from.

A LineFlow line starts empty and its torch engine's cost per step grows about 2.5x while it
fills up, so measured envs get the state of one warmed env (``warm_env``) tiled over their
instances (``transplant_state``). An env split over worker processes (``num_workers``) gets the
same state in each worker (``warm_shard``, run there through ``apply_to_shards``): the warm env
is deterministic, so each worker builds the same one and copies the slice of its own instances.
This module is importable on its own so that a worker can unpickle ``warm_shard``.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import gymnasium as gym
import numpy as np
import torch

import gymforge  # noqa: F401  (registers the LineFlow ids with Gymnasium)


def sample_action_batches(env: Any, seed: int, count: int, device: str | None) -> list[Any]:
    """``count`` action (batches) from ``env.action_space.sample()``, seeded; torch tensors of
    dtype long on ``device`` unless ``device`` is ``None`` (numpy, for the SimPy envs)."""
    env.action_space.seed(seed)
    batches = [env.action_space.sample() for _ in range(count)]
    if device is None:
        return batches
    return [torch.as_tensor(np.asarray(a), dtype=torch.long, device=device) for a in batches]


def warm_env(
    gym_id: str, batch: int, steps: int, seed: int, action_batches: int, device: str
) -> tuple[Any, float]:
    """The torch env of ``batch`` instances of ``gym_id`` reset with ``seed`` and stepped ``steps``
    times with seeded random actions (1 thread), and the seconds the steps took."""
    env = gym.make_vec(
        gym_id, num_envs=batch, vectorization_mode="vector_entry_point", device=device
    )
    env.reset(seed=seed)
    actions = sample_action_batches(env, seed, action_batches, device)
    torch.set_num_threads(1)
    start = time.perf_counter()
    for i in range(steps):
        env.step(actions[i % len(actions)])
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return env, time.perf_counter() - start


def transplant_state(env: Any, warm: Any, offset: int = 0) -> bool:
    """Give ``env`` the line state of ``warm``: instance ``i`` copies warm instance
    ``(offset + i) mod n`` (``offset``: the env's first instance in a larger batch).

    Only the tensors of the ``state`` dataclass with a batch axis of ``warm``'s size and the
    episode step counter move; ``env`` keeps its own seeds and random streams. The batch axis is
    the state's ``BATCH_DIM`` (the torch engine's is last), else the first. Returns whether the
    engine exposes what this needs.
    """
    target, source = env.unwrapped, warm.unwrapped
    state, warm_state = getattr(target, "state", None), getattr(source, "state", None)
    if not (dataclasses.is_dataclass(state) and dataclasses.is_dataclass(warm_state)):
        return False
    n, batch = source.num_envs, target.num_envs
    index = (torch.arange(batch, device=target.device) + offset) % n
    dim = getattr(warm_state, "BATCH_DIM", 0)
    for f in dataclasses.fields(warm_state):
        value = getattr(warm_state, f.name)
        if isinstance(value, torch.Tensor) and value.dim() >= 1 and value.shape[dim] == n:
            setattr(state, f.name, value.index_select(dim, index))
    steps = getattr(source, "_steps", None)
    if isinstance(steps, torch.Tensor) and steps.shape[:1] == (n,):
        target._steps = steps.index_select(0, index)
    return True


def warm_shard(
    shard: Any,
    offset: int,  # (``apply_to_shards`` passes the shard's first instance)
    gym_id: str,
    batch: int,
    steps: int,
    seed: int,
    action_batches: int,
) -> bool:
    """In a worker: build the warm env (as ``warm_env`` on the CPU) and transplant its state into
    the worker's ``shard``, whose first instance is instance ``offset`` of the whole batch."""
    warm, _ = warm_env(gym_id, batch, steps, seed, action_batches, "cpu")
    try:
        return transplant_state(shard, warm, offset)
    finally:
        warm.close()
