"""Configuration of the probe env."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProbeConfig:
    """Parameters of ``Probe-Match-v0``.

    Attributes:
        n_targets: number of possible targets and actions (>= 2).
        max_steps: steps after which an episode is truncated (>= 1).
        patience: wrong actions after which an episode terminates (>= 1).
    """

    n_targets: int = 4
    max_steps: int = 32
    patience: int = 3

    def __post_init__(self) -> None:
        for name, minimum in (("n_targets", 2), ("max_steps", 1), ("patience", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
