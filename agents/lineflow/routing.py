"""Routing controllers for lines with actionable switches (PartDistribution, MultiSink, …).

- :class:`GreedyRoutingAgent`: every switch sends to its least-filled output buffer and takes
  from its most-filled input buffer (the reference's PartDistribution greedy policy; 660 on k=5).
- :class:`OptimalShareAgent`: the distributing switch shares carriers over the parallel
  processes in proportion to their speed, ``ρ_i ∝ 1/T_i`` (the reference's optimal shares), by
  smooth weighted round-robin; collecting switches stay greedy.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from gymforge.agents.lineflow.base import LineController
from gymforge.core.arrays import host_array
from gymforge.envs.lineflow.spec import SwitchSpec


class GreedyRoutingAgent(LineController):
    """Least-filled output, most-filled input, for every actionable switch of the line."""

    def __init__(self, env: gym.Env | gym.vector.VectorEnv) -> None:
        super().__init__(env)
        self._rules: list[tuple[int, list[int], bool]] = []
        for i, slot in enumerate(self.slots):
            if slot.kind in ("index_in", "index_out"):
                fills = [self.feature(f"{buffer}.fill") for buffer in slot.labels]
                self._rules.append((i, fills, slot.kind == "index_in"))
        if not self._rules:
            raise ValueError(f"line {self.line.name!r} has no actionable switch to route")

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> np.ndarray:
        obs = host_array(observation)
        action = self.zero_action(obs)
        for slot, fills, take_fullest in self._rules:
            values = obs[..., fills]
            action[..., slot] = values.argmax(-1) if take_fullest else values.argmin(-1)
        return action


class OptimalShareAgent(GreedyRoutingAgent):
    """Routes each distributing switch's outputs in proportion to the downstream stations' speed.

    A switch output leading to a station with nominal processing time ``T`` gets weight ``1/T``;
    the agent cycles through outputs by smooth weighted round-robin, one choice per step, which
    over a window gives each output its share of the time and hence of the carriers.
    """

    def __init__(self, env: gym.Env | gym.vector.VectorEnv) -> None:
        super().__init__(env)
        self._shares: list[tuple[int, np.ndarray]] = []
        for i, slot in enumerate(self.slots):
            station = self.line.station(slot.owner)
            if slot.kind == "index_out" and isinstance(station, SwitchSpec):
                downstream = [
                    next(b for b in self.line.buffers if b.name == n).downstream
                    for n in slot.labels
                ]
                times = np.array(
                    [
                        max(getattr(self.line.station(d), "processing_time", 1.0), 1e-9)
                        for d in downstream
                    ]
                )
                weights = 1.0 / times
                self._shares.append((i, weights / weights.sum()))
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        self._credit = [np.zeros_like(share) for _, share in self._shares]

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> np.ndarray:
        action = super().act(observation, info)
        for (slot, share), credit in zip(self._shares, self._credit, strict=True):
            credit += share
            choice = int(credit.argmax())
            credit[choice] -= 1.0
            action[..., slot] = choice
        return action
