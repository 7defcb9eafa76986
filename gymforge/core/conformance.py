"""Conformance checks for gymforge-style envs, importable by third-party env authors.

Gymnasium's ``check_env`` covers the API of one env; these checks cover what gymforge promises
on top: seeded determinism, observations inside the space, exact pickling, and for batched envs
that instance ``i`` of a batch equals a separate run of one instance with the same seed, and that
a batch split over worker processes equals the batch in one process. Each
raises ``AssertionError`` with a message on failure. ``tests/test_conformance.py`` runs them over
every registered id.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import torch

Transition = tuple[Any, float, bool, bool]


def random_rollout(env: gym.Env, seed: int, steps: int) -> list[Transition]:
    """``(obs, reward, terminated, truncated)`` over ``steps`` seeded random steps (with resets)."""
    env.action_space.seed(seed)
    obs, _ = env.reset(seed=seed)
    out: list[Transition] = [(obs, 0.0, False, False)]
    for _ in range(steps):
        obs, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        out.append((obs, float(reward), bool(terminated), bool(truncated)))
        if terminated or truncated:
            obs, _ = env.reset()
    return out


def assert_same_transitions(a: list[Transition], b: list[Transition]) -> None:
    assert len(a) == len(b), f"lengths differ: {len(a)} != {len(b)}"
    for t, (x, y) in enumerate(zip(a, b, strict=True)):
        np.testing.assert_array_equal(x[0], y[0], err_msg=f"observation differs at step {t}")
        assert x[1:] == y[1:], f"reward/terminated/truncated differ at step {t}: {x[1:]} != {y[1:]}"


def check_determinism(make_env: Callable[[], gym.Env], steps: int = 300) -> None:
    """The same seed gives the same trajectory; another seed gives a different one."""
    first = random_rollout(make_env(), seed=3, steps=steps)
    assert_same_transitions(first, random_rollout(make_env(), seed=3, steps=steps))
    other = random_rollout(make_env(), seed=4, steps=steps)
    assert any(not np.array_equal(x[0], y[0]) for x, y in zip(first, other, strict=True)), (
        "seeds 3 and 4 gave identical observations: the seed is ignored"
    )


def check_observations_in_space(env: gym.Env, steps: int = 1000) -> None:
    for t, (obs, *_) in enumerate(random_rollout(env, seed=0, steps=steps)):
        assert env.observation_space.contains(obs), (
            f"step {t}: {obs} outside {env.observation_space}"
        )


def check_pickling(env: gym.Env, warmup: int = 50, steps: int = 100) -> None:
    """A pickled copy taken mid-episode continues exactly like the original."""
    env.reset(seed=7)
    env.action_space.seed(7)
    for _ in range(warmup):
        *_, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    clone = pickle.loads(pickle.dumps(env))
    for t in range(steps):
        action = env.action_space.sample()
        a, b = env.step(action), clone.step(action)
        np.testing.assert_array_equal(a[0], b[0], err_msg=f"pickled copy diverged at step {t}")
        assert a[1:4] == b[1:4], f"pickled copy diverged at step {t}: {a[1:4]} != {b[1:4]}"
        if a[2] or a[3]:
            np.testing.assert_array_equal(env.reset()[0], clone.reset()[0])


def _vector_trajectory(
    make_vec: Callable[[int], Any], num_envs: int, seed: int, actions: np.ndarray
) -> list:
    venv = make_vec(num_envs)
    obs, _ = venv.reset(seed=seed)
    out = [(obs.clone(),)]
    for action in actions:
        obs, reward, terminated, truncated, _ = venv.step(torch.as_tensor(action))
        out.append((obs.clone(), reward.clone(), terminated.clone(), truncated.clone()))
    return out


def check_batch_equivalence(
    make_vec: Callable[[int], Any], action_space: gym.Space, num_envs: int = 5, steps: int = 200
) -> None:
    """Instance ``i`` of a batch seeded ``s`` equals a batch of one seeded ``s + i`` (with autoresets).

    Args:
        make_vec: ``make_vec(num_envs)`` returns a torch vector env.
        action_space: the single-instance action space (actions are sampled from it).
    """
    seed = 11
    action_space.seed(0)
    actions = np.stack(
        [np.stack([action_space.sample() for _ in range(num_envs)]) for _ in range(steps)]
    )
    batched = _vector_trajectory(make_vec, num_envs, seed, actions)
    for i in range(num_envs):
        single = _vector_trajectory(make_vec, 1, seed + i, actions[:, i : i + 1])
        for t, (b, s) in enumerate(zip(batched, single, strict=True)):
            for x, y in zip(b, s, strict=True):
                assert torch.equal(x[i], y[0]), f"instance {i} differs from its own run at step {t}"


def check_vector_matches_scalar(
    env: gym.Env, make_vec: Callable[[int], Any], num_envs: int = 3, steps: int = 500
) -> None:
    """Instance 1 of a vector env seeded ``s`` equals the scalar env seeded ``s + 1``, to its first episode end."""
    venv = make_vec(num_envs)
    vobs, _ = venv.reset(seed=20)
    obs, _ = env.reset(seed=21)
    np.testing.assert_array_equal(obs, vobs[1].cpu().numpy())
    env.action_space.seed(1)
    for t in range(steps):
        action = env.action_space.sample()
        obs, reward, terminated, truncated, _ = env.step(action)
        vobs, vreward, vterm, vtrunc, _ = venv.step(torch.as_tensor(np.stack([action] * num_envs)))
        scalar = (float(reward), bool(terminated), bool(truncated))
        vector = (float(vreward[1]), bool(vterm[1]), bool(vtrunc[1]))
        assert scalar == vector, f"step {t}: scalar {scalar} != vector {vector}"
        if terminated or truncated:
            return
        np.testing.assert_array_equal(obs, vobs[1].cpu().numpy(), err_msg=f"step {t}")


def _assert_same_infos(a: dict[str, Any], b: dict[str, Any], where: str) -> None:
    assert a.keys() == b.keys(), f"{where}: info keys {sorted(a)} != {sorted(b)}"
    for key, value in a.items():
        if isinstance(value, dict):
            _assert_same_infos(value, b[key], f"{where}, info {key!r}")
        else:
            assert torch.equal(value, b[key]), f"{where}: info {key!r} differs"


def check_sharded_equivalence(
    make_vec: Callable[..., Any],
    action_space: gym.Space,
    num_envs: int = 5,
    num_workers: int = 2,
    steps: int = 60,
) -> None:
    """A batch split over worker processes (``num_workers``) equals the same batch in one process:
    observations, rewards, flags and every info entry (``final_obs``/``final_info`` included),
    step by step.

    Args:
        make_vec: ``make_vec(num_envs, num_workers)`` returns a torch vector env.
        action_space: the single-instance action space (actions are sampled from it).
    """
    action_space.seed(0)
    actions = [
        torch.as_tensor(np.stack([action_space.sample() for _ in range(num_envs)]))
        for _ in range(steps)
    ]
    plain, sharded = make_vec(num_envs, 1), make_vec(num_envs, num_workers)
    try:
        a, b = plain.reset(seed=3), sharded.reset(seed=3)
        assert torch.equal(a[0], b[0]), "reset observations differ"
        _assert_same_infos(a[1], b[1], "reset")
        for t, action in enumerate(actions):
            a, b = plain.step(action), sharded.step(action)
            for name, x, y in zip(("obs", "reward", "terminated", "truncated"), a, b, strict=False):
                assert torch.equal(x, y), f"step {t}: {name} differs"
            _assert_same_infos(a[4], b[4], f"step {t}")
    finally:
        sharded.close()
