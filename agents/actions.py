"""An action in the env's own form, whatever form a policy produced it in.

Saved policies (SB3 models, on-device policies, TorchScript modules) return arrays; an env wants
its action space's form: a ``Discrete`` int, a ``MultiDiscrete`` or ``Box`` array of the space's
shape and dtype. A model trained on the flat ``Discrete`` product of a ``MultiDiscrete`` space
returns one index, which maps back to the entries.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np


def to_env_action(action: Any, model_space: gym.Space, env_space: gym.Space) -> Any:
    """``action`` (in ``model_space``) as an action of ``env_space``, for one observation."""
    action = np.asarray(action)
    if isinstance(model_space, gym.spaces.Discrete) and isinstance(
        env_space, gym.spaces.MultiDiscrete
    ):
        flat = int(action.reshape(-1)[0])
        return np.array(np.unravel_index(flat, tuple(env_space.nvec)), dtype=env_space.dtype)
    if isinstance(env_space, (gym.spaces.MultiDiscrete, gym.spaces.Box)):
        return action.reshape(env_space.shape).astype(env_space.dtype)
    if isinstance(env_space, gym.spaces.Discrete):
        return int(action.reshape(-1)[0])
    return action


def checked_env_action(action: Any, space: gym.Space, source: str) -> Any:
    """:func:`to_env_action` for a policy acting in the env's own space, refused when outside."""
    action = to_env_action(action, space, space)
    if not space.contains(action):
        raise ValueError(f"{source} returned {action!r}, outside the action space {space}")
    return action
