"""Batched state of the probe env."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class ProbeState:
    """State of ``B`` probe instances."""

    target: torch.Tensor  # (B,) int64, the target the agent must name this step
    steps: torch.Tensor  # (B,) int64, steps taken in the current episode
    mistakes: torch.Tensor  # (B,) int64, wrong actions in the current episode
