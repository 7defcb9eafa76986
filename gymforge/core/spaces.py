"""Validation of batched actions against a single-instance Gymnasium space.

Every env checks its actions here before any state changes, so a bad action raises one clear
``ValueError`` naming the field, the offending instance and the allowed values.
"""

from __future__ import annotations

from typing import NoReturn

import numpy as np
import torch
from gymnasium import spaces


def _first_bad(mask: torch.Tensor) -> int:
    return int(torch.nonzero(mask.reshape(mask.shape[0], -1).any(dim=1))[0, 0])


def _uniform_range(space: spaces.Discrete | spaces.MultiDiscrete) -> tuple[int, int] | None:
    """``(start, n)`` when every entry of ``space`` allows the same range ``[start, start + n)``."""
    if isinstance(space, spaces.Discrete):
        return int(space.start), int(space.n)
    starts, ns = np.asarray(space.start).reshape(-1), np.asarray(space.nvec).reshape(-1)
    if ns.size == 0 or starts.min() != starts.max() or ns.min() != ns.max():
        return None
    return int(starts[0]), int(ns[0])


def _in_uniform_range(action: torch.Tensor, space: spaces.Discrete | spaces.MultiDiscrete) -> bool:
    """Fast path for an integer ``action``: True when every entry of ``space`` allows the same
    range ``[start, start + n)`` and all of ``action`` lies in it (one ``aminmax``, one host
    read); False means "not known to be valid" (the full check decides, and words any error)."""
    bounds = _uniform_range(space)
    if action.numel() == 0 or bounds is None:
        return False
    lo, n = bounds
    amin, amax = torch.aminmax(action)
    return bool((amin >= lo) & (amax < lo + n))


#: the action spaces a batch of actions can be checked against
CHECKED_SPACES = (spaces.Discrete, spaces.MultiDiscrete, spaces.Box)


def _expected_shape(space: spaces.Space, num_envs: int) -> tuple[int, ...]:
    if isinstance(space, spaces.Discrete):
        return (num_envs,)
    if isinstance(space, (spaces.MultiDiscrete, spaces.Box)):
        return (num_envs, *space.shape)
    raise TypeError(f"unsupported action space {space}")


def _check_shape_and_dtype(
    action: torch.Tensor, space: spaces.Space, num_envs: int, field: str
) -> None:
    """The checks that need no values (and so no device synchronisation)."""
    expected = _expected_shape(space, num_envs)
    if tuple(action.shape) != expected:
        raise ValueError(f"{field} must have shape {expected}, got {tuple(action.shape)}")
    if isinstance(space, spaces.Box):
        return
    if action.dtype.is_floating_point or action.dtype == torch.bool:
        raise ValueError(f"{field} must hold integers, got dtype {action.dtype}")


def _bounds(space: spaces.Space, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """Lowest and highest allowed value per entry (both inclusive), as tensors on ``device``."""
    if isinstance(space, spaces.Box):
        low, high = space.low, space.high
    else:
        low = np.asarray(space.start)
        high = low + np.asarray(space.n if isinstance(space, spaces.Discrete) else space.nvec) - 1
    return torch.as_tensor(low, device=device), torch.as_tensor(high, device=device)


def _out_of_range(action: torch.Tensor, low: torch.Tensor, high: torch.Tensor) -> torch.Tensor:
    bad = (action < low) | (action > high)
    return bad | ~torch.isfinite(action) if action.dtype.is_floating_point else bad


def _raise_first_bad(
    action: torch.Tensor, space: spaces.Space, bad: torch.Tensor, field: str
) -> NoReturn:
    i = _first_bad(bad)
    if isinstance(space, spaces.Box):
        allowed = f"[{space.low.tolist()}, {space.high.tolist()}]"
        raise ValueError(f"{field}[{i}] must lie in {allowed}, got {action[i].tolist()}")
    allowed = (
        f"{{{int(space.start)}, …, {int(space.start + space.n - 1)}}}"
        if isinstance(space, spaces.Discrete)
        else f"[{space.start.tolist()}, {(space.start + space.nvec - 1).tolist()}] per entry"
    )
    raise ValueError(f"{field}[{i}] must be in {allowed}, got {action[i].tolist()}")


def validate_batched_action(
    action: torch.Tensor, space: spaces.Space, num_envs: int, field: str = "action"
) -> None:
    """Raise ``ValueError`` unless ``action`` is a batch of ``num_envs`` valid actions of ``space``."""
    _check_shape_and_dtype(action, space, num_envs, field)
    if not isinstance(space, spaces.Box) and _in_uniform_range(action, space):
        return
    bad = _out_of_range(action, *_bounds(space, action.device))
    if bad.any():
        _raise_first_bad(action, space, bad, field)


class BatchedActionCheck:
    """:func:`validate_batched_action` for one space, batch size and device, with the bounds
    built on the device once: a valid batch costs one device-to-host read and no host-to-device
    copy (what a vector env's every ``step`` pays)."""

    def __init__(self, space: spaces.Space, num_envs: int, device: torch.device) -> None:
        self.space, self.num_envs, self.device = space, num_envs, device
        _expected_shape(space, num_envs)  # unsupported spaces fail here, not on the first step
        uniform = None if isinstance(space, spaces.Box) else _uniform_range(space)
        # A uniform integer range is checked against Python ints (one aminmax, no tensors).
        self._uniform = uniform
        self._low, self._high = _bounds(space, device)

    def check_shape(self, action: torch.Tensor, field: str = "action") -> None:
        """Raise ``ValueError`` unless ``action``'s shape and dtype fit the batch (no host read),
        for envs that check the values themselves with errors of their own."""
        _check_shape_and_dtype(action, self.space, self.num_envs, field)

    def __call__(self, action: torch.Tensor, field: str = "action") -> None:
        _check_shape_and_dtype(action, self.space, self.num_envs, field)
        if action.device != self.device:
            validate_batched_action(action, self.space, self.num_envs, field)
            return
        if self._uniform is not None and action.numel() > 0:
            lo, n = self._uniform
            amin, amax = torch.aminmax(action)
            if bool((amin >= lo) & (amax < lo + n)):
                return
        bad = _out_of_range(action, self._low, self._high)
        if bool(bad.any()):
            _raise_first_bad(action, self.space, bad, field)


def as_action_tensor(action: object, device: torch.device) -> torch.Tensor:
    """Turn numpy arrays, lists or tensors into a tensor on ``device`` (no copy when already there)."""
    if isinstance(action, torch.Tensor):
        return action.to(device)
    array = np.asarray(action)
    if array.dtype == object:
        raise ValueError(f"action must be numeric, got {action!r}")
    return torch.as_tensor(array, device=device)
