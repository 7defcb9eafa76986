"""LLM cache bandit (Off-CMAB §3, after Zhu et al. 2023), batched over instances.

``m`` queries arrive with probabilities ``p(q)`` (power law ``p ∝ rank^−α``, α = 0.9, where each
instance ranks the queries in a random order drawn from its seed, so an id says nothing about
popularity) and
have unknown mean costs ``c(q)``. The super arm is the cache content ``M`` (at most ``k``
queries); a query in the cache is served for free, a miss costs ``C_t`` with mean ``c(q)``, and
the cost is observed only on a miss. The env's reward is the negative cost, so
``r(M) = −Σ_{q∉M} p(q) c(q)`` and the optimal cache holds the ``k`` largest ``p(q) c(q)``.

Base arms (``2m``): arm ``q`` is the arrival indicator of query ``q`` (always observed: full
feedback, mean ``p(q)``); arm ``m + q`` is the cost of query ``q``, triggered only by a miss of
``q`` (probability ``p(q)·1{q∉M}``).

Cost models (``cost_model``):

- ``"bernoulli"`` (default): each instance draws ``c(q) ~ U[cost_low, cost_high]`` from its seed
  and each realised cost is ``Bernoulli(c(q))``, so costs are 0/1 with mean 0.5 on average over
  queries. *(Our reading of the paper's "costs ~ Bernoulli(0.5)"; with one common mean every
  policy that knows ``p`` would be optimal, so the means must differ across queries.)*
- ``"fixed"``: ``cost_means`` given by the user (the same for every instance).
- ``"tokens"``: costs proportional to the token counts of ``prompts`` (see
  :func:`gymforge.envs.cmab.loaders.costs_from_prompts`), one query per prompt.

``cost_noise`` is ``"bernoulli"`` (realised cost ``Bernoulli(c(q))``) or ``"none"`` (realised
cost ``c(q)``); by default Bernoulli for the first two models and none for token costs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from gymforge.core.instance_rng import InstanceRNG
from gymforge.envs.cmab.loaders import costs_from_prompts
from gymforge.envs.cmab.problem import (
    Feedback,
    Params,
    Problem,
    check_int,
    check_probabilities,
    check_unit_range,
)
from gymforge.envs.cmab.super_arms import ids_to_mask

COST_MODELS = ("bernoulli", "fixed", "tokens")
COST_NOISES = ("bernoulli", "none")


def power_law(n_queries: int, alpha: float) -> np.ndarray:
    """Arrival probabilities ``p(q) ∝ (q + 1)^−alpha``, q = 0 … n_queries − 1."""
    weights = np.arange(1, n_queries + 1, dtype=np.float64) ** (-float(alpha))
    return weights / weights.sum()


class LLMCacheProblem(Problem):
    """LLM cache with ``n_queries`` queries and a cache of ``cache_size``.

    Args:
        n_queries: number of distinct queries ``m`` (>= 2); ignored with ``prompts``.
        cache_size: cache capacity ``k`` (1 <= k < m).
        alpha: power-law exponent of the arrival probabilities (>= 0).
        cost_model: ``"bernoulli"``, ``"fixed"`` or ``"tokens"`` (module docstring).
        cost_low, cost_high: range of the per-instance mean costs of ``"bernoulli"``.
        cost_means: mean costs in [0, 1] for ``"fixed"``.
        prompts: the prompt texts for ``"tokens"``.
        token_encoding: tiktoken encoding for ``"tokens"`` (``None``: built-in word pieces).
        cost_noise: ``"bernoulli"``, ``"none"`` or ``None`` (the model's default).
        arrival: fixed arrival probabilities (summing to 1, in id order) instead of the
            shuffled power law.
    """

    name = "llm_cache"
    id_name = "queries"
    size_name = "cache_size"

    def __init__(
        self,
        n_queries: int = 100,
        cache_size: int = 40,
        alpha: float = 0.9,
        cost_model: str = "bernoulli",
        cost_low: float = 0.0,
        cost_high: float = 1.0,
        cost_means: Sequence[float] | None = None,
        prompts: Sequence[str] | None = None,
        token_encoding: str | None = None,
        cost_noise: str | None = None,
        arrival: Sequence[float] | None = None,
    ) -> None:
        if cost_model not in COST_MODELS:
            raise ValueError(f"cost_model must be one of {COST_MODELS}, got {cost_model!r}")
        self.cost_model = cost_model
        self.fixed_costs: np.ndarray | None = None
        if cost_model == "tokens":
            if not prompts:
                raise ValueError("cost_model='tokens' needs a non-empty prompts list")
            self.fixed_costs = costs_from_prompts(list(prompts), encoding=token_encoding)
            n_queries = len(prompts)
        elif cost_model == "fixed":
            if cost_means is None:
                raise ValueError("cost_model='fixed' needs cost_means")
            self.fixed_costs = check_probabilities("cost_means", cost_means)
            n_queries = self.fixed_costs.shape[0]
        self.n_queries = check_int("n_queries", n_queries, 2)
        self.cache_size = check_int("cache_size", cache_size, 1, self.n_queries - 1)
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not alpha >= 0:
            raise ValueError(f"alpha must be a number >= 0, got {alpha!r}")
        self.alpha_power = float(alpha)
        self.cost_low, self.cost_high = check_unit_range(
            "(cost_low, cost_high)", cost_low, cost_high
        )
        if cost_noise is None:
            cost_noise = "none" if cost_model == "tokens" else "bernoulli"
        if cost_noise not in COST_NOISES:
            raise ValueError(f"cost_noise must be one of {COST_NOISES} or None, got {cost_noise!r}")
        self.cost_noise = cost_noise
        if arrival is not None:
            probs = check_probabilities("arrival", arrival, self.n_queries)
            if not np.isclose(probs.sum(), 1.0):
                raise ValueError(f"arrival must sum to 1, got {probs.sum()}")
            self.arrival = probs
        else:
            self.arrival = power_law(self.n_queries, self.alpha_power)
        self.shuffle_arrival = arrival is None
        self.n_ids = self.n_queries
        self.n_arms = 2 * self.n_queries
        self.size = self.cache_size
        self.feedback_dim = 2 * self.n_queries

    def draw_params(self, rng: InstanceRNG) -> Params:
        batch, device = rng.seed.shape[0], rng.seed.device
        p = torch.as_tensor(self.arrival, dtype=torch.float32, device=device).expand(batch, -1)
        if self.shuffle_arrival:  # which query is popular is random, not its id
            p = p.gather(1, torch.argsort(rng.uniform(self.n_queries), dim=1))
        if self.fixed_costs is not None:
            c = torch.as_tensor(self.fixed_costs, dtype=torch.float32, device=device)
            c = c.expand(batch, -1).clone()
        else:
            c = self.cost_low + (self.cost_high - self.cost_low) * rng.uniform(self.n_queries)
        return {"p": p.contiguous(), "c": c}

    def arm_from_ids(self, ids: torch.Tensor) -> torch.Tensor:
        return ids_to_mask(ids, self.n_queries)

    def play(
        self, params: Params, arm: torch.Tensor, rng: InstanceRNG
    ) -> tuple[torch.Tensor, Feedback]:
        u = rng.uniform(2)
        cdf = torch.cumsum(params["p"], dim=1)
        query = torch.searchsorted(cdf, u[:, :1].contiguous()).clamp_(max=self.n_queries - 1)
        miss = ~arm.gather(1, query)[:, 0]
        mean = params["c"].gather(1, query)[:, 0]
        cost = (u[:, 1] < mean).to(torch.float32) if self.cost_noise == "bernoulli" else mean
        cost = torch.where(miss, cost, torch.zeros_like(cost))
        feedback = {"cached": arm, "query": query[:, 0], "miss": miss, "cost": cost}
        return -cost, feedback

    def triggered(self, params: Params, feedback: Feedback) -> tuple[torch.Tensor, torch.Tensor]:
        query, miss = feedback["query"], feedback["miss"]
        batch, m = query.shape[0], self.n_queries
        arrived = torch.zeros(batch, m, device=query.device).scatter(1, query[:, None], 1.0)
        cost_seen = arrived.to(torch.bool) & miss[:, None]
        triggered = torch.cat([torch.ones_like(cost_seen), cost_seen], dim=1)
        outcomes = torch.cat([arrived, cost_seen * feedback["cost"][:, None]], dim=1)
        return triggered, outcomes

    def features(
        self, feedback: Feedback, triggered: torch.Tensor, outcomes: torch.Tensor
    ) -> torch.Tensor:
        return outcomes

    def expected_cost(self, params: Params, arm: torch.Tensor) -> torch.Tensor:
        """``Σ_{q∉M} p(q) c(q)`` per instance ``(B,)`` float64 for cache masks ``arm``."""
        weight = params["p"].double() * params["c"].double()
        return (weight * (~arm).double()).sum(1)

    def expected_reward(self, params: Params, arm: torch.Tensor) -> torch.Tensor:
        return -self.expected_cost(params, arm)

    def optimal(self, params: Params) -> tuple[torch.Tensor, torch.Tensor]:
        weight = params["p"].double() * params["c"].double()
        ids = torch.topk(weight, self.cache_size, dim=1).indices
        arm = ids_to_mask(ids, self.n_queries)
        return arm, self.expected_reward(params, arm)

    def trigger_probabilities(self, params: Params, arm: torch.Tensor) -> torch.Tensor:
        p = params["p"].double()
        return torch.cat([torch.ones_like(p), p * (~arm).double()], dim=1)

    def arm_statistics(self, arrays: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        query = arrays["query"].astype(np.int64)
        miss = arrays["miss"].astype(bool)
        m = self.n_queries
        arrivals = np.bincount(query, minlength=m).astype(np.float64)
        cost_counts = np.bincount(query[miss], minlength=m).astype(np.float64)
        cost_sums = np.bincount(query[miss], weights=arrays["cost"][miss], minlength=m)
        counts = np.concatenate([np.full(m, float(query.shape[0])), cost_counts])
        return counts, np.concatenate([arrivals, cost_sums])

    def public_config(self) -> dict[str, Any]:
        return {
            "n_queries": self.n_queries,
            "cache_size": self.cache_size,
            "alpha": self.alpha_power,
            "cost_model": self.cost_model,
            "cost_low": self.cost_low,
            "cost_high": self.cost_high,
            "cost_noise": self.cost_noise,
            "arrival": self.arrival.tolist(),
            "shuffle_arrival": self.shuffle_arrival,
            "fixed_costs": None if self.fixed_costs is None else self.fixed_costs.tolist(),
        }
