"""Observations at an agent's boundary: numpy arrays from numpy, lists or torch tensors on any
device (a CUDA tensor is copied to the host once; ``np.asarray`` would raise on it)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch


def host_array(value: Any, dtype: Any = None) -> np.ndarray:
    """``value`` as a numpy array on the host (of ``dtype`` when given)."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    return np.asarray(value, dtype=dtype)
