"""CUCB-Offline (after Chen et al. 2016): the optimistic counterpart of CLCB on logged data.

Per base arm ``μ̄_i = μ̂_i + √(log(4 m n / δ) / (2 N_i))`` (``+∞`` when unobserved; unclipped,
like CLCB's bounds), then ``ORACLE(μ̄)``: the same oracle and the same radius as CLCB with the opposite sign,
so a comparison isolates pessimism. For the LLM cache the optimistic index is a *lower* bound on
the costs (and ``p̂`` for the arrivals).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from gymforge.agents.cmab.clcb import empirical_means
from gymforge.agents.cmab.oracles import Oracle, default_oracle
from gymforge.envs.cmab.datasets import LoggedDataset
from gymforge.envs.cmab.influence import InfluenceProblem
from gymforge.envs.cmab.llm_cache import LLMCacheProblem


def upper_confidence_bounds(
    counts: np.ndarray, sums: np.ndarray, n: int, delta: float
) -> np.ndarray:
    counts = np.asarray(counts, dtype=np.float64)
    log_term = math.log(4 * counts.shape[0] * max(n, 1) / delta)
    ucb = empirical_means(counts, sums) + np.sqrt(log_term / (2 * np.maximum(counts, 1.0)))
    return np.where(counts > 0, ucb, np.inf)


def cucb_offline(
    dataset: LoggedDataset, *, delta: float = 0.1, oracle: Oracle | None = None
) -> torch.Tensor:
    """The super arm of ``ORACLE(μ̄)`` (natural form, batch axis 1)."""
    problem = dataset.problem
    if isinstance(problem, InfluenceProblem):
        raise ValueError("CUCB-Offline needs edge-level observations; use EMP for node-level IM")
    counts, sums = dataset.arm_statistics()
    index = upper_confidence_bounds(counts, sums, dataset.n, delta)
    if isinstance(problem, LLMCacheProblem):
        m = problem.n_queries
        cost_counts = np.asarray(counts[m:], dtype=np.float64)
        log_term = math.log(4 * m * max(dataset.n, 1) / delta)
        lower = empirical_means(cost_counts, sums[m:]) - np.sqrt(
            2 * log_term / np.maximum(cost_counts, 1.0)
        )
        index = np.concatenate(
            [
                empirical_means(counts[:m], sums[:m]),
                np.where(cost_counts > 0, lower, -np.inf),
            ]
        )
    return (oracle or default_oracle(problem))(problem, torch.as_tensor(index))
