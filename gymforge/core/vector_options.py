"""Gymnasium's vector options of a ``TorchVectorEnv``: the autoreset mode and the array backend.

``autoreset_mode`` takes an :class:`~gymnasium.vector.AutoresetMode` or its value or name
(``"next_step"``, ``"NextStep"``, ...); ``array_backend`` is ``"torch"`` (tensors on the env's
device) or ``"numpy"`` (arrays on the host, for Gymnasium's numpy-based vector wrappers such as
``RecordEpisodeStatistics`` and ``NormalizeObservation``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from gymnasium.vector import AutoresetMode

ARRAY_BACKENDS = ("torch", "numpy")


def parse_autoreset_mode(mode: Any) -> AutoresetMode:
    """``mode`` as an ``AutoresetMode``; anything else raises ``ValueError`` naming the choices."""
    if isinstance(mode, AutoresetMode):
        return mode
    if isinstance(mode, str):
        wanted = mode.replace("_", "").lower()
        for choice in AutoresetMode:
            if wanted in (choice.value.lower(), choice.name.replace("_", "").lower()):
                return choice
    choices = [m.name for m in AutoresetMode]
    raise ValueError(f"autoreset_mode must be one of AutoresetMode.{choices}, got {mode!r}")


def parse_array_backend(backend: Any) -> str:
    """``backend`` checked against :data:`ARRAY_BACKENDS`."""
    if backend not in ARRAY_BACKENDS:
        raise ValueError(f"array_backend must be one of {ARRAY_BACKENDS}, got {backend!r}")
    return str(backend)


def to_numpy(value: Any) -> Any:
    """Tensors as numpy arrays (on the host), recursively through dicts, tuples and lists."""
    if torch.is_tensor(value):
        return value.detach().cpu().numpy()
    if isinstance(value, dict):
        return {key: to_numpy(item) for key, item in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(to_numpy(item) for item in value)
    return value


def as_bool_mask(mask: Any, num_envs: int, device: torch.device) -> torch.Tensor:
    """A reset mask (numpy array, tensor or list) as a bool ``(num_envs,)`` tensor on ``device``."""
    tensor = torch.as_tensor(mask if torch.is_tensor(mask) else np.asarray(mask))
    if tensor.dtype != torch.bool or tuple(tensor.shape) != (num_envs,):
        raise ValueError(
            f"options['reset_mask'] must be a bool array of shape ({num_envs},), got "
            f"dtype {tensor.dtype} and shape {tuple(tensor.shape)}"
        )
    return tensor.to(device)
