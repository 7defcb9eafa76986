"""Helpers shared by the MetaBBO baselines: the preset behind an env and batch handling."""

from __future__ import annotations

from typing import Any

import numpy as np

from gymforge.core.arrays import host_array
from gymforge.envs.metabbo.presets import BINS, Preset

#: observation index of the remaining-budget feature: 1.0 exactly at an episode's start
REMAINING_BUDGET = 3
#: observation index of the "improved" feature
IMPROVED = 8


def env_preset(env: Any) -> Preset:
    """The :class:`Preset` of a ``MetaBBO`` env (scalar, wrapped or vector)."""
    inner = getattr(env, "unwrapped", env)
    inner = getattr(inner, "_vector", inner)  # TorchScalarEnv -> its MetaBBOVecEnv
    config = getattr(inner, "config", None)
    if config is None or not hasattr(config, "preset"):
        raise ValueError(f"env must be a MetaBBO env, got {env!r}")
    return config.preset


def as_batch(observation: Any) -> tuple[np.ndarray, bool]:
    """``observation`` as a ``[B, 9]`` array, and whether it was a single observation."""
    obs = host_array(observation, np.float64)
    if obs.ndim == 1:
        return obs[None, :], True
    if obs.ndim != 2:
        raise ValueError(f"observation must have shape [9] or [B, 9], got {obs.shape}")
    return obs, False


def to_bin(value: np.ndarray, low: float = 0.0, high: float = 1.0) -> np.ndarray:
    """Nearest of the 16 bins of ``[low, high]`` for continuous values."""
    b = np.rint((np.asarray(value, dtype=np.float64) - low) / (high - low) * (BINS - 1))
    return np.clip(b, 0, BINS - 1).astype(np.int64)


def unbatch(action: np.ndarray, single: bool) -> np.ndarray:
    """``[B, K]`` int64 actions, or ``[K]`` for a single observation."""
    action = np.asarray(action, dtype=np.int64)
    return action[0] if single else action
