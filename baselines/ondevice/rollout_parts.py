"""Bookkeeping pieces of the on-device rollout: frame stacks kept as tensors, the wall-clock split
of an iteration, and the tally of finished episodes."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch


class FrameStack:
    """The last ``k`` observations of each instance side by side, newest last, zeros before an
    episode's first (as SB3's ``VecFrameStack``)."""

    def __init__(self, k: int, width: int) -> None:
        self.k, self.width = k, width
        self.frames: torch.Tensor | None = None

    def reset(self, obs: torch.Tensor) -> torch.Tensor:
        pad = obs.new_zeros(obs.shape[0], (self.k - 1) * self.width)
        self.frames = torch.cat([pad, obs], dim=1)
        return self.frames

    def peek(self, obs: torch.Tensor) -> torch.Tensor:
        """The stack with ``obs`` pushed, without keeping it (a final observation)."""
        assert self.frames is not None
        return torch.cat([self.frames[:, self.width :], obs], dim=1)

    def push(self, obs: torch.Tensor, starts: torch.Tensor) -> torch.Tensor:
        pushed = self.peek(obs)
        fresh = torch.nn.functional.pad(obs, ((self.k - 1) * self.width, 0))
        self.frames = torch.where(starts[:, None], fresh, pushed)
        return self.frames


@dataclass
class Timings:
    """Wall-clock seconds spent in the env, in the policy during collection, and in updates."""

    env: float = 0.0
    policy: float = 0.0
    update: float = 0.0

    def as_dict(self) -> dict[str, float]:
        return {"env": self.env, "policy": self.policy, "update": self.update}


@dataclass
class EpisodeTally:
    """Returns and lengths of the episodes that finished since the last :meth:`drain`."""

    returns: list[float] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
