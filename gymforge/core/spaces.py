"""Validation of batched actions against a single-instance Gymnasium space.

Every env checks its actions here before any state changes, so a bad action raises one clear
``ValueError`` naming the field, the offending instance and the allowed values.
"""

from __future__ import annotations

import numpy as np
import torch
from gymnasium import spaces


def _first_bad(mask: torch.Tensor) -> int:
    return int(torch.nonzero(mask.reshape(mask.shape[0], -1).any(dim=1))[0, 0])


def _in_uniform_range(action: torch.Tensor, space: spaces.Discrete | spaces.MultiDiscrete) -> bool:
    """Fast path for an integer ``action``: True when every entry of ``space`` allows the same
    range ``[start, start + n)`` and all of ``action`` lies in it (one ``aminmax``); False means
    "not known to be valid" (the full check decides, and words any error)."""
    if action.numel() == 0:
        return False
    if isinstance(space, spaces.Discrete):
        lo, n = int(space.start), int(space.n)
    else:
        starts, ns = np.asarray(space.start).reshape(-1), np.asarray(space.nvec).reshape(-1)
        if ns.size == 0 or starts.min() != starts.max() or ns.min() != ns.max():
            return False
        lo, n = int(starts[0]), int(ns[0])
    amin, amax = torch.aminmax(action)
    return lo <= int(amin) and int(amax) < lo + n


def validate_batched_action(
    action: torch.Tensor, space: spaces.Space, num_envs: int, field: str = "action"
) -> None:
    """Raise ``ValueError`` unless ``action`` is a batch of ``num_envs`` valid actions of ``space``."""
    if isinstance(space, spaces.Discrete):
        expected: tuple[int, ...] = (num_envs,)
    elif isinstance(space, (spaces.MultiDiscrete, spaces.Box)):
        expected = (num_envs, *space.shape)
    else:
        raise TypeError(f"unsupported action space {space}")
    if tuple(action.shape) != expected:
        raise ValueError(f"{field} must have shape {expected}, got {tuple(action.shape)}")
    if isinstance(space, spaces.Box):
        low = torch.as_tensor(space.low, device=action.device)
        high = torch.as_tensor(space.high, device=action.device)
        bad = ~torch.isfinite(action) | (action < low) | (action > high)
        if bad.any():
            i = _first_bad(bad)
            raise ValueError(
                f"{field}[{i}] must lie in [{space.low.tolist()}, {space.high.tolist()}], "
                f"got {action[i].tolist()}"
            )
        return
    if action.dtype.is_floating_point or action.dtype == torch.bool:
        raise ValueError(f"{field} must hold integers, got dtype {action.dtype}")
    if _in_uniform_range(action, space):
        return
    start = torch.as_tensor(np.asarray(space.start), device=action.device)
    n = torch.as_tensor(
        np.asarray(space.n if isinstance(space, spaces.Discrete) else space.nvec),
        device=action.device,
    )
    bad = (action < start) | (action >= start + n)
    if bad.any():
        i = _first_bad(bad)
        allowed = (
            f"{{{int(space.start)}, …, {int(space.start + space.n - 1)}}}"
            if isinstance(space, spaces.Discrete)
            else f"[{space.start.tolist()}, {(space.start + space.nvec - 1).tolist()}] per entry"
        )
        raise ValueError(f"{field}[{i}] must be in {allowed}, got {action[i].tolist()}")


def as_action_tensor(action: object, device: torch.device) -> torch.Tensor:
    """Turn numpy arrays, lists or tensors into a tensor on ``device`` (no copy when already there)."""
    if isinstance(action, torch.Tensor):
        return action.to(device)
    array = np.asarray(action)
    if array.dtype == object:
        raise ValueError(f"action must be numeric, got {action!r}")
    return torch.as_tensor(array, device=device)
