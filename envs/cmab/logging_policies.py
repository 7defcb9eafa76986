"""Logging policies ``D_S`` that produce offline datasets (Off-CMAB §4, Fig. 2).

A policy proposes the super arms of the next block of records, in the application's natural form
(ranked ids, cache mask, seed mask, path index), from the statistics of the records logged so far.

- ``uniform``: a uniformly random super arm (ranked list, cache, seed set of size k, or path).
- ``ucb`` / ``lcb`` / ``emp``: top-k (the oracle) on the upper / lower confidence bounds / the
  empirical means of the records logged so far, refreshed after every block of records (a logger
  that is itself a learner, as in the paper's logging ablation). Unobserved arms count as
  +∞ (ucb), −∞ (lcb) or 0 (emp); ties are broken at random.
- ``empty`` (LLM cache): the empty cache, so every query misses: an out-of-distribution logger
  that never plays a feasible cache, yet covers every cost arm.
- ``independent`` (influence maximization): every node is a seed independently with probability
  ``q`` (the seed-set size varies), the logging that CLCB-IM-N's estimator needs.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from gymforge.envs.cmab.cascade import CascadeProblem
from gymforge.envs.cmab.influence import InfluenceProblem
from gymforge.envs.cmab.kpath import KPathProblem
from gymforge.envs.cmab.llm_cache import LLMCacheProblem
from gymforge.envs.cmab.problem import Problem
from gymforge.envs.cmab.super_arms import ids_to_mask

POLICIES: dict[str, tuple[str, ...]] = {
    "cascade": ("uniform", "ucb", "lcb", "emp"),
    "llm_cache": ("uniform", "ucb", "lcb", "emp", "empty"),
    "influence": ("independent", "uniform"),
    "kpath": ("uniform", "ucb", "lcb", "emp"),
}
ADAPTIVE = ("ucb", "lcb", "emp")


def check_policy(problem: Problem, name: str) -> str:
    allowed = POLICIES[problem.name]
    if name not in allowed:
        raise ValueError(
            f"logging policy for {problem.name} must be one of {allowed}, got {name!r}"
        )
    return name


def _index(counts: np.ndarray, sums: np.ndarray, kind: str, log_term: float) -> torch.Tensor:
    counts_t = torch.as_tensor(counts, dtype=torch.float64)
    mean = torch.as_tensor(sums, dtype=torch.float64) / counts_t.clamp(min=1)
    radius = torch.sqrt(log_term / (2 * counts_t.clamp(min=1)))
    unseen = counts_t == 0
    if kind == "ucb":
        return torch.where(unseen, math.inf, mean + radius)
    if kind == "lcb":
        return torch.where(unseen, -math.inf, mean - radius)
    return torch.where(unseen, 0.0, mean)


def _random_subsets(rows: int, n: int, k: int, generator: torch.Generator) -> torch.Tensor:
    keys = torch.rand(rows, n, generator=generator)
    return torch.topk(keys, k, dim=1).indices  # a uniformly random ordered k-subset


def _top_k_rows(index: torch.Tensor, rows: int, k: int, generator: torch.Generator) -> torch.Tensor:
    """Top-k ids of ``index`` (n,) for each of ``rows`` rows, ties broken at random per row."""
    perm = torch.argsort(torch.rand(rows, index.shape[0], generator=generator), dim=1)
    order = torch.sort(index[perm], dim=1, descending=True, stable=True).indices[:, :k]
    return perm.gather(1, order)


def propose(
    problem: Problem,
    name: str,
    rows: int,
    counts: np.ndarray,
    sums: np.ndarray,
    logged: int,
    generator: torch.Generator,
    *,
    q: float = 0.5,
    log_term: float = 1.0,
) -> torch.Tensor:
    """The super arms of the next ``rows`` records under logging policy ``name``.

    Args:
        counts, sums: per-base-arm observation counts and outcome sums of the records so far.
        logged: records logged so far.
        q: seed probability of ``independent``.
        log_term: the ``log(·)`` of the confidence radius ``√(log_term / 2N)`` of ucb/lcb.
    """
    k = problem.size
    if name == "uniform":
        if isinstance(problem, KPathProblem):
            return torch.randint(problem.n_paths, (rows,), generator=generator)
        ids = _random_subsets(rows, problem.n_ids, k, generator)
        return ids if isinstance(problem, CascadeProblem) else ids_to_mask(ids, problem.n_ids)
    if name == "empty":
        return torch.zeros(rows, problem.n_ids, dtype=torch.bool)
    if name == "independent":
        return torch.rand(rows, problem.n_ids, generator=generator) < q
    index = _index(counts, sums, name, log_term)
    if isinstance(problem, CascadeProblem):
        return _top_k_rows(index, rows, k, generator)
    if isinstance(problem, LLMCacheProblem):
        m = problem.n_queries
        arrival = torch.as_tensor(sums[:m], dtype=torch.float64) / max(logged, 1)
        cost = index[m:].clamp(min=0.0, max=1.0)
        return ids_to_mask(_top_k_rows(arrival * cost, rows, k, generator), m)
    if isinstance(problem, KPathProblem):
        index = torch.nan_to_num(index, posinf=1e300, neginf=-1e300)  # inf - inf would be nan
        values = index.reshape(problem.n_paths, problem.path_length).sum(1)
        return _top_k_rows(values, rows, 1, generator)[:, 0]
    assert not isinstance(problem, InfluenceProblem)
    raise ValueError(f"logging policy {name!r} is not defined for {problem.name}")
