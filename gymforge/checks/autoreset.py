"""Conformance checks of Gymnasium's vector conventions on a ``TorchVectorEnv``.

Episodes of most ids last hundreds or thousands of steps, so the checks end them early and
deterministically: :func:`truncate_after` truncates instance ``i`` after ``periods[i]`` steps of
each episode (a per-instance time limit, like Gymnasium's ``TimeLimit`` on a single env). Two
checks build on it:

- :func:`check_modes_agree`: under ``NEXT_STEP`` and ``DISABLED`` (with ``reset_mask``) every
  instance's first episode equals its first episode under ``SAME_STEP`` step by step, and each
  mode's own rules hold around the ends (``final_obs`` masks; the reset step's reward 0 and
  False flags; the reset observation inside the space);
- :func:`check_matches_sync_vector_env`: the env equals Gymnasium's own ``SyncVectorEnv`` over
  ``gym.make`` copies of the id (``TimeLimit``-ed to the same periods) in every mode, instance by
  instance through its first episode and its reset step. For ids whose single env is the batched
  dynamics at one instance (the registry's ``same_engine``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from gymforge.core.vector_env import StepOutput, TorchVectorEnv

Step = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]


def truncate_after(venv: TorchVectorEnv, periods: Sequence[int]) -> TorchVectorEnv:
    """Make instance ``i`` of ``venv`` truncate after ``periods[i]`` steps of every episode."""
    limit = torch.as_tensor(list(periods), dtype=torch.int64, device=venv.device)
    count = torch.zeros_like(limit)
    step_instances, reset_instances = venv._step_instances, venv._reset_instances

    def step(action: torch.Tensor) -> StepOutput:
        out = step_instances(action)
        count.add_(1)
        out.truncated = out.truncated | (count >= limit)
        return out

    def reset(mask: torch.Tensor) -> None:
        reset_instances(mask)
        count.masked_fill_(mask, 0)

    venv._step_instances = step  # type: ignore[method-assign]
    venv._reset_instances = reset  # type: ignore[method-assign]
    return venv


def sample_actions(space: gym.Space, num_envs: int, steps: int, seed: int = 0) -> list:
    """``steps`` batches of ``num_envs`` seeded samples of the single action ``space``."""
    space.seed(seed)
    return [np.stack([space.sample() for _ in range(num_envs)]) for _ in range(steps)]


def _roll(env: Any, actions: list, seed: int) -> list[Step]:
    """Reset with ``seed`` and play ``actions``; under DISABLED reset finished instances with
    ``reset_mask`` after each step (the returned step keeps the final observation)."""
    env.reset(seed=seed)
    disabled = env.metadata["autoreset_mode"] == AutoresetMode.DISABLED
    steps = []
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        steps.append((np.asarray(obs), np.asarray(reward), terminated, truncated, info))
        done = np.asarray(terminated) | np.asarray(truncated)
        if disabled and done.any():
            env.reset(options={"reset_mask": done})
    return steps


def _first_end(steps: list[Step], i: int) -> int:
    for t, (_, _, terminated, truncated, _) in enumerate(steps):
        if terminated[i] or truncated[i]:
            return t
    raise AssertionError(f"instance {i} never finished; lengthen the rollout")


def _final_observation(steps: list[Step], mode: AutoresetMode, i: int, t: int) -> np.ndarray:
    """Instance ``i``'s final observation at its end step ``t`` under ``mode``."""
    obs, *_, info = steps[t]
    if mode == AutoresetMode.SAME_STEP:
        assert bool(info["_final_obs"][i]), f"instance {i}, step {t}: _final_obs not set"
        return np.asarray(info["final_obs"])[i]
    assert "final_obs" not in info, f"{mode} must not return final_obs"
    return obs[i]


def check_modes_agree(
    make_vec: Callable[[AutoresetMode], TorchVectorEnv],
    action_space: gym.Space,
    periods: Sequence[int] = (3, 4, 5),
    steps: int = 12,
    seed: int = 5,
) -> None:
    """Every instance's first episode is the same under the three modes (see module docstring).

    Args:
        make_vec: returns a numpy-backend vector env of ``len(periods)`` instances in a mode.
        action_space: the single-instance action space.
    """
    actions = sample_actions(action_space, len(periods), steps)
    runs = {}
    for mode in AutoresetMode:
        env = truncate_after(make_vec(mode), periods)
        assert env.metadata["autoreset_mode"] == mode, env.metadata
        space = env.single_observation_space
        runs[mode] = _roll(env, actions, seed)
        env.close()
    same = runs[AutoresetMode.SAME_STEP]
    for i in range(len(periods)):
        end = _first_end(same, i)
        for mode, run in runs.items():
            assert _first_end(run, i) == end, f"{mode}: instance {i} ends at another step"
            for t in range(end):
                for k, name in enumerate(("obs", "reward", "terminated", "truncated")):
                    assert np.array_equal(run[t][k][i], same[t][k][i]), (
                        f"{mode}: instance {i}, step {t}: {name} differs from SAME_STEP"
                    )
            for k in (1, 2, 3):
                assert run[end][k][i] == same[end][k][i], f"{mode}: instance {i} end flags"
            np.testing.assert_array_equal(
                _final_observation(run, mode, i, end),
                _final_observation(same, AutoresetMode.SAME_STEP, i, end),
                err_msg=f"{mode}: instance {i}: final observation differs",
            )
        if end + 1 < steps:
            obs, reward, terminated, truncated, _ = runs[AutoresetMode.NEXT_STEP][end + 1]
            assert (reward[i], terminated[i], truncated[i]) == (0, False, False), (
                f"NEXT_STEP: instance {i}'s reset step must give reward 0 and False flags"
            )
            assert space.contains(obs[i].astype(space.dtype)), (
                f"NEXT_STEP: instance {i}'s reset observation is outside the space"
            )


def check_matches_sync_vector_env(
    env_id: str,
    make_vec: Callable[[AutoresetMode], TorchVectorEnv],
    periods: Sequence[int] = (3, 4, 5),
    steps: int = 12,
    seed: int = 5,
) -> None:
    """The env equals Gymnasium's ``SyncVectorEnv`` over ``gym.make(env_id)`` copies in each mode,
    instance by instance through its first episode, its final observation and (NEXT_STEP) its
    reset step. ``make_vec(mode)``: a numpy-backend vector env of ``len(periods)`` instances."""
    single = gym.make(env_id)
    actions = sample_actions(single.action_space, len(periods), steps)
    for mode in AutoresetMode:
        ours = truncate_after(make_vec(mode), periods)
        theirs = SyncVectorEnv(
            [lambda p=p: gym.make(env_id, max_episode_steps=p) for p in periods],
            autoreset_mode=mode,
        )
        run_ours, run_theirs = _roll(ours, actions, seed), _roll(theirs, actions, seed)
        ours.close()
        theirs.close()
        for i in range(len(periods)):
            end = _first_end(run_theirs, i)
            assert _first_end(run_ours, i) == end, f"{mode}: instance {i} ends at another step"
            for t in range(end + 1):
                for k, name in enumerate(("obs", "reward", "terminated", "truncated")):
                    if k == 0 and t == end and mode == AutoresetMode.SAME_STEP:
                        continue  # (a reset observation: Gymnasium reseeds from its own stream)
                    assert np.array_equal(run_ours[t][k][i], run_theirs[t][k][i]), (
                        f"{mode}: instance {i}, step {t}: {name} differs from SyncVectorEnv"
                    )
            np.testing.assert_array_equal(
                _final_observation(run_ours, mode, i, end),
                _final_observation(run_theirs, mode, i, end),
                err_msg=f"{mode}: instance {i}: final observation differs from SyncVectorEnv",
            )
            if mode == AutoresetMode.NEXT_STEP and end + 1 < steps:
                for run in (run_ours, run_theirs):
                    assert (run[end + 1][1][i], run[end + 1][2][i], run[end + 1][3][i]) == (
                        0,
                        False,
                        False,
                    ), f"NEXT_STEP: instance {i}'s reset step"
