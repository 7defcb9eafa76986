"""The k-path semi-bandit instance of Off-CMAB's lower bound (Theorem 2), batched.

``n_paths`` disjoint paths of ``path_length`` = k edges each; the base arms are the edges
(``m = n_paths · k``), arm ``j·k + l`` is edge ``l`` of path ``j``. The super arm is a path; every
edge on it is observed (semi-bandit feedback) and the reward is the sum of their Bernoulli
outcomes, ``r(j; μ) = Σ_{l} μ_{jk+l}``.

Construction *(inferred; the reference states only the Ω(k·min{1, √(C*_∞/n)}) bound)*: every
edge has mean ``base``, except the edges of one path ``j*``, drawn uniformly from the instance's
seed, which have mean ``base + gap``. Picking any other path loses ``k·gap``; telling ``j*`` apart
needs ``Θ(1/gap²)`` observations of each path, which gives the ``k·√(C/n)`` rate.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from gymforge.core.instance_rng import InstanceRNG
from gymforge.envs.cmab.problem import Feedback, Params, Problem, check_int


class KPathProblem(Problem):
    """Args:
    n_paths: number of disjoint paths (>= 2).
    path_length: edges per path ``k`` (>= 1).
    base: mean of the ordinary edges.
    gap: extra mean of the optimal path's edges (``0 < base + gap <= 1``, ``gap >= 0``).
    """

    name = "kpath"
    id_name = "paths"
    size_name = "one path"

    def __init__(
        self, n_paths: int = 2, path_length: int = 5, base: float = 0.5, gap: float = 0.1
    ) -> None:
        self.n_paths = check_int("n_paths", n_paths, 2)
        self.path_length = check_int("path_length", path_length, 1)
        if not (base >= 0.0 and gap >= 0.0 and base + gap <= 1.0):
            raise ValueError(f"base and gap must be >= 0 with base + gap <= 1, got {base}, {gap}")
        self.base, self.gap = float(base), float(gap)
        self.n_arms = self.n_paths * self.path_length
        self.n_ids = self.n_paths
        self.size = 1
        self.feedback_dim = 2 * self.n_arms

    def draw_params(self, rng: InstanceRNG) -> Params:
        best = rng.integers(self.n_paths)
        path_of_arm = torch.arange(self.n_arms, device=best.device) // self.path_length
        mu = self.base + self.gap * (path_of_arm[None] == best[:, None]).to(torch.float32)
        return {"mu": mu}

    def arm_from_ids(self, ids: torch.Tensor) -> torch.Tensor:
        return ids[:, 0]

    def arms_of(self, path: torch.Tensor) -> torch.Tensor:
        """Base arm ids ``(B, k)`` of the paths ``(B,)``."""
        offsets = torch.arange(self.path_length, device=path.device)
        return path.long()[:, None] * self.path_length + offsets[None]

    def play(
        self, params: Params, arm: torch.Tensor, rng: InstanceRNG
    ) -> tuple[torch.Tensor, Feedback]:
        edges = self.arms_of(arm)
        outcomes = (rng.uniform(self.path_length) < params["mu"].gather(1, edges)).float()
        return outcomes.sum(1), {"path": arm.long(), "outcomes": outcomes}

    def triggered(self, params: Params, feedback: Feedback) -> tuple[torch.Tensor, torch.Tensor]:
        edges = self.arms_of(feedback["path"])
        zeros = torch.zeros(edges.shape[0], self.n_arms, device=edges.device)
        triggered = zeros.to(torch.bool).scatter(1, edges, True)
        return triggered, zeros.scatter(1, edges, feedback["outcomes"])

    def expected_reward(self, params: Params, arm: torch.Tensor) -> torch.Tensor:
        return params["mu"].double().gather(1, self.arms_of(arm)).sum(1)

    def path_values(self, params: Params) -> torch.Tensor:
        """Expected reward of every path ``(B, n_paths)``."""
        mu = params["mu"].double()
        return mu.reshape(mu.shape[0], self.n_paths, self.path_length).sum(2)

    def optimal(self, params: Params) -> tuple[torch.Tensor, torch.Tensor]:
        values = self.path_values(params)
        best = values.argmax(1)
        return best, values.gather(1, best[:, None])[:, 0]

    def trigger_probabilities(self, params: Params, arm: torch.Tensor) -> torch.Tensor:
        edges = self.arms_of(arm)
        out = torch.zeros(edges.shape[0], self.n_arms, dtype=torch.float64, device=edges.device)
        return out.scatter(1, edges, 1.0)

    def arm_statistics(self, arrays: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        path = arrays["path"].astype(np.int64)
        edges = path[:, None] * self.path_length + np.arange(self.path_length)[None]
        counts = np.bincount(edges.ravel(), minlength=self.n_arms).astype(np.float64)
        sums = np.bincount(edges.ravel(), weights=arrays["outcomes"].ravel(), minlength=self.n_arms)
        return counts, sums

    def public_config(self) -> dict[str, Any]:
        return {
            "n_paths": self.n_paths,
            "path_length": self.path_length,
            "base": self.base,
            "gap": self.gap,
        }
