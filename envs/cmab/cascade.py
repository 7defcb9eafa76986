"""Cascading bandit for learning to rank (Off-CMAB §3), batched over instances.

``m`` items have attraction probabilities ``μ``. A super arm is a ranked list of ``k`` distinct
items; the user examines it top-down and clicks the first attractive item. Feedback reveals the
items up to and including the first click (the outcome is 1 for the clicked item, 0 for the ones
above it); the reward is 1 on a click: ``r(S; μ) = 1 − ∏_{i∈S} (1 − μ_i)``. The item at position
``j`` is triggered with probability ``∏_{l<j} (1 − μ_{S_l})``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from gymforge.core.instance_rng import InstanceRNG
from gymforge.envs.cmab.problem import (
    Feedback,
    Params,
    Problem,
    check_int,
    check_probabilities,
    check_unit_range,
)


class CascadeProblem(Problem):
    """Cascading bandit with ``n_items`` items and ranked lists of ``list_size``.

    Args:
        n_items: number of items ``m`` (>= 2).
        list_size: length ``k`` of the ranked list (1 <= k <= m).
        mu_low, mu_high: per-instance attraction probabilities are drawn ``U[mu_low, mu_high]``
            from the instance's seed (the paper's synthetic setting is ``U[0, 1]``).
        attraction: fixed attraction probabilities (length ``n_items``), e.g. from
            :func:`gymforge.envs.cmab.loaders.attraction_from_ratings`; the same for every
            instance. Overrides ``mu_low``/``mu_high``.
    """

    name = "cascade"

    def __init__(
        self,
        n_items: int = 100,
        list_size: int = 5,
        mu_low: float = 0.0,
        mu_high: float = 1.0,
        attraction: Any = None,
    ) -> None:
        if attraction is not None:
            fixed = check_probabilities("attraction", attraction)
            n_items = fixed.shape[0]
            self.attraction: np.ndarray | None = fixed
        else:
            self.attraction = None
        self.n_items = check_int("n_items", n_items, 2)
        self.list_size = check_int("list_size", list_size, 1, self.n_items)
        self.mu_low, self.mu_high = check_unit_range("(mu_low, mu_high)", mu_low, mu_high)
        self.n_arms = self.n_ids = self.n_items
        self.size = self.list_size
        self.feedback_dim = 2 * self.n_items

    def draw_params(self, rng: InstanceRNG) -> Params:
        batch = rng.seed.shape[0]
        if self.attraction is not None:
            mu = torch.as_tensor(self.attraction, dtype=torch.float32, device=rng.seed.device)
            return {"mu": mu.expand(batch, -1).clone()}
        u = rng.uniform(self.n_items)
        return {"mu": self.mu_low + (self.mu_high - self.mu_low) * u}

    def arm_from_ids(self, ids: torch.Tensor) -> torch.Tensor:
        return ids

    def play(
        self, params: Params, arm: torch.Tensor, rng: InstanceRNG
    ) -> tuple[torch.Tensor, Feedback]:
        # One uniform per play: the first click is at the first position j with
        # u < F(j) = 1 − ∏_{l≤j} (1 − μ_{S_l}), exactly the cascade's first-click distribution.
        u = rng.uniform(1)
        no_click_through = torch.cumprod(1.0 - params["mu"].gather(1, arm), dim=1)
        first = (u >= 1.0 - no_click_through).sum(1)
        return (first < self.list_size).to(torch.float32), {"action": arm, "click_position": first}

    def _position_masks(self, feedback: Feedback) -> tuple[torch.Tensor, torch.Tensor]:
        positions = torch.arange(self.list_size, device=feedback["action"].device)
        first = feedback["click_position"][:, None]
        return positions[None] <= first, positions[None] == first

    def triggered(self, params: Params, feedback: Feedback) -> tuple[torch.Tensor, torch.Tensor]:
        examined, clicked = self._position_masks(feedback)
        action = feedback["action"]
        zeros = torch.zeros(action.shape[0], self.n_items, device=action.device)
        triggered = zeros.to(torch.bool).scatter(1, action, examined)
        outcomes = zeros.scatter(1, action, clicked.to(torch.float32))
        return triggered, outcomes

    def observation(
        self, params: Params, feedback: Feedback
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        # Written straight into one buffer: the hot path of the vector env. The triggered mask
        # gets its own small scatter (cheaper than comparing a strided slice of the buffer).
        examined, clicked = self._position_masks(feedback)
        action, m = feedback["action"], self.n_items
        batch, device = action.shape[0], action.device
        buffer = torch.zeros(batch, 2 * m + 1, device=device)
        buffer.scatter_(1, action, examined.to(torch.float32))
        buffer.scatter_(1, action + m, clicked.to(torch.float32))
        triggered = torch.zeros(batch, m, dtype=torch.bool, device=device)
        triggered.scatter_(1, action, examined)
        return buffer, triggered, buffer[:, m : 2 * m]

    def expected_reward(self, params: Params, arm: torch.Tensor) -> torch.Tensor:
        mu = params["mu"].double().gather(1, arm.long())
        return 1.0 - torch.prod(1.0 - mu, dim=1)

    def optimal(self, params: Params) -> tuple[torch.Tensor, torch.Tensor]:
        arm = torch.topk(params["mu"].double(), self.list_size, dim=1).indices
        return arm, self.expected_reward(params, arm)

    def trigger_probabilities(self, params: Params, arm: torch.Tensor) -> torch.Tensor:
        mu = params["mu"].double().gather(1, arm.long())
        reach = torch.cumprod(torch.cat([torch.ones_like(mu[:, :1]), 1.0 - mu[:, :-1]], 1), 1)
        out = torch.zeros(arm.shape[0], self.n_items, dtype=torch.float64, device=arm.device)
        return out.scatter(1, arm.long(), reach)

    def arm_statistics(self, arrays: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        action = arrays["action"].astype(np.int64)
        first = arrays["click_position"].astype(np.int64)
        positions = np.arange(self.list_size)
        examined = positions[None] <= first[:, None]
        clicked = positions[None] == first[:, None]
        counts = np.bincount(action[examined], minlength=self.n_items).astype(np.float64)
        sums = np.bincount(action[clicked], minlength=self.n_items).astype(np.float64)
        return counts, sums

    def public_config(self) -> dict[str, Any]:
        return {
            "n_items": self.n_items,
            "list_size": self.list_size,
            "mu_low": self.mu_low,
            "mu_high": self.mu_high,
            "attraction": None if self.attraction is None else self.attraction.tolist(),
        }
