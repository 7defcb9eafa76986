"""Online CUCB (Chen et al. 2016) for the interactive Off-CMAB envs.

Keeps per-base-arm counts and outcome sums from the ``triggered``/``outcomes`` of each step's
``info`` and plays ``ORACLE(μ̄)`` with ``μ̄_i = μ̂_i + √(1.5 ln t / N_i)`` (1 when unobserved).
For the LLM cache the optimistic index is the arrival frequency and a *lower* bound on each cost
(an uncached query is the only way to observe its cost). Works on a scalar env and on a vector
env (one learner per instance). Influence maximization is not supported: its node-level feedback
does not reveal edge outcomes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from gymforge.agents.cmab.oracles import top_k_oracle
from gymforge.envs.cmab.influence import InfluenceProblem
from gymforge.envs.cmab.llm_cache import LLMCacheProblem


class OnlineCUCBAgent:
    """``OnlineCUCBAgent(env)``: an online combinatorial UCB learner (see the module docstring)."""

    def __init__(self, env: Any, exploration: float = 1.5) -> None:
        unwrapped = getattr(env, "unwrapped", env)
        self.scalar = hasattr(unwrapped, "_vector")
        self.vector = unwrapped._vector if self.scalar else unwrapped
        self.problem = self.vector.problem
        if isinstance(self.problem, InfluenceProblem):
            raise ValueError("online CUCB needs edge-level feedback; influence max. has node-level")
        self.exploration = float(exploration)
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        shape = (self.vector.num_envs, self.problem.n_arms)
        self.counts = torch.zeros(shape, dtype=torch.float64)
        self.sums = torch.zeros(shape, dtype=torch.float64)
        self.t = 0

    def observe(self, info: dict[str, Any]) -> None:
        """Add one step's ``triggered`` arms and ``outcomes`` to the statistics."""
        triggered = torch.as_tensor(np.asarray(info["triggered"])).reshape(self.counts.shape)
        outcomes = torch.as_tensor(np.asarray(info["outcomes"])).reshape(self.counts.shape)
        self.counts += triggered.double().cpu()
        self.sums += outcomes.double().cpu() * triggered.double().cpu()
        self.t += 1

    def index(self) -> torch.Tensor:
        """The optimistic index ``(B, n_arms)``."""
        mean = self.sums / self.counts.clamp(min=1)
        radius = torch.sqrt(self.exploration * math.log(max(self.t, 2)) / self.counts.clamp(min=1))
        ucb = torch.where(self.counts > 0, mean + radius, 1.0).clamp(0, 1)
        if isinstance(self.problem, LLMCacheProblem):
            m = self.problem.n_queries
            lower = torch.where(self.counts[:, m:] > 0, mean[:, m:] - radius[:, m:], 0.0)
            ucb = torch.cat([mean[:, :m], lower.clamp(0, 1)], dim=1)
        return ucb

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> Any:
        """Update from ``info`` (the previous step's feedback, if any) and return the next action."""
        if info and "triggered" in info:
            self.observe(info)
        ids = []
        for row in self.index():
            arm = top_k_oracle(self.problem, row)
            if arm.dtype == torch.bool:
                ids.append(torch.nonzero(arm[0])[:, 0])
            elif arm.dim() == 1:
                ids.append(arm)
            else:
                ids.append(arm[0])
        action = self.vector.encode(torch.stack(ids))
        return action[0].numpy() if self.scalar else action
