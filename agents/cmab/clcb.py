"""CLCB: combinatorial lower confidence bound (Off-CMAB, Algorithm 1) and its application variants.

Generic CLCB (Alg. 1): for every base arm, the number of observations ``N_i``, the empirical
mean ``μ̂_i`` and the lower confidence bound

    μ̲_i = μ̂_i − √( log(4 m n / δ) / (2 N_i) ),

then ``Ŝ = ORACLE(μ̲)``. Arms never observed (``N_i = 0``, unstated in the paper) get the most
pessimistic value ``−∞``. The bounds are *not* clipped to [0, 1] before a ranking oracle: with
few observations most LCBs are negative, and clipping them to 0 would erase the order among them
(the oracle would then pick arbitrary ties); oracles that need probabilities clip themselves.

- CLCB-Cascade (Alg. 5): the same with ``log(2 m n / δ)``, oracle top-k.
- CLCB-LLM-C (Alg. 3): empirical arrival probabilities ``p̂`` (full feedback) and an *upper*
  bound on the cost, ``c̄ = ĉ + √(2 log(4 m n / δ) / N_c)`` (``+∞`` when unobserved), oracle
  top-k of ``p̂·c̄`` (``m`` = number of queries; a query never seen arriving has weight 0).
- CLCB-IM-N (Alg. 4): edge-level lower bounds from node-level data (:func:`im_edge_bounds`).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from gymforge.agents.cmab.oracles import Oracle, default_oracle
from gymforge.envs.cmab.datasets import LoggedDataset
from gymforge.envs.cmab.influence import InfluenceProblem
from gymforge.envs.cmab.llm_cache import LLMCacheProblem
from gymforge.envs.cmab.problem import Problem


def _check_delta(delta: float) -> float:
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    return float(delta)


def empirical_means(counts: np.ndarray, sums: np.ndarray) -> np.ndarray:
    """``μ̂_i = sums_i / N_i`` (0 where ``N_i = 0``)."""
    counts = np.asarray(counts, dtype=np.float64)
    return np.divide(sums, counts, out=np.zeros_like(counts), where=counts > 0)


def lower_confidence_bounds(
    counts: np.ndarray,
    sums: np.ndarray,
    n: int,
    delta: float,
    log_factor: float = 4.0,
    radius_scale: float = 1.0,
) -> np.ndarray:
    """``μ̲_i = μ̂_i − √(log(log_factor · m · n / δ) / (2 N_i))``, ``−∞`` where unobserved (unclipped)."""
    counts = np.asarray(counts, dtype=np.float64)
    m = counts.shape[0]
    log_term = math.log(log_factor * m * max(n, 1) / _check_delta(delta))
    radius = radius_scale * np.sqrt(log_term / (2.0 * np.maximum(counts, 1.0)))
    lcb = empirical_means(counts, sums) - radius
    return np.where(counts > 0, lcb, -np.inf)


def clcb_from_statistics(
    problem: Problem,
    counts: np.ndarray,
    sums: np.ndarray,
    n: int,
    *,
    delta: float = 0.1,
    oracle: Oracle | None = None,
    radius_scale: float = 1.0,
) -> torch.Tensor:
    """Generic CLCB (Alg. 1; the cascade uses Alg. 5's ``log(2mn/δ)``) and CLCB-LLM-C (Alg. 3)."""
    oracle = oracle or default_oracle(problem)
    if isinstance(problem, LLMCacheProblem):
        index = llm_cache_index(problem, counts, sums, n, delta, radius_scale)
        return oracle(problem, torch.as_tensor(index))
    if isinstance(problem, InfluenceProblem):
        raise ValueError("influence maximization needs node-level records: use clcb_im")
    log_factor = 2.0 if problem.name == "cascade" else 4.0
    lcb = lower_confidence_bounds(counts, sums, n, delta, log_factor, radius_scale)
    return oracle(problem, torch.as_tensor(lcb))


def llm_cache_index(
    problem: LLMCacheProblem,
    counts: np.ndarray,
    sums: np.ndarray,
    n: int,
    delta: float,
    radius_scale: float = 1.0,
) -> np.ndarray:
    """CLCB-LLM-C's index over the ``2m`` arms: ``p̂`` then the cost UCBs ``c̄`` (Alg. 3)."""
    m = problem.n_queries
    arrival = empirical_means(counts[:m], sums[:m])
    cost_counts = np.asarray(counts[m:], dtype=np.float64)
    log_term = math.log(4 * m * max(n, 1) / _check_delta(delta))
    ucb = empirical_means(cost_counts, sums[m:]) + radius_scale * np.sqrt(
        2.0 * log_term / np.maximum(cost_counts, 1.0)
    )
    return np.concatenate([arrival, np.where(cost_counts > 0, ucb, np.inf)])


def _bernstein_radius(mean: np.ndarray, count: np.ndarray, log_term: float) -> np.ndarray:
    """Variance-adaptive radius ``√(2 p̂(1−p̂) L / N) + 3 L / N`` (``inf`` where ``N = 0``)."""
    safe = np.maximum(count, 1.0)
    radius = np.sqrt(2 * mean * (1 - mean) * log_term / safe) + 3 * log_term / safe
    return np.where(count > 0, radius, np.inf)


def im_edge_bounds(
    problem: InfluenceProblem,
    seeds: np.ndarray,
    rounds: np.ndarray,
    delta: float | None,
    radius_scale: float = 1.0,
) -> np.ndarray:
    """Edge probabilities from node-level cascades, CLCB-IM-N style (Alg. 4).

    With seeds drawn independently (node ``u`` with probability ``q_u``) and only the seed sets
    ``S_0`` and the round-1 activations ``S_1`` used: for a non-seed ``v``,
    ``P(v ∉ S_1 | v ∉ S_0) = ∏_w (1 − q_w p_wv)`` and conditioning on ``u ∉ S_0`` removes the
    factor of ``u``, so ``p_uv = (1/q_u)(1 − p(v̄)/p(v̄|ū))``. With ``delta`` the bound is
    pessimistic: an upper bound on ``q_u`` and ``p(v̄)``, a lower bound on ``p(v̄|ū)``, each from a
    variance-adaptive interval with ``L = log(12 n E / δ)`` (the exact constants of the paper's
    intervals are not in the reference; this empirical-Bernstein form is ours). ``delta=None``
    gives the plug-in estimate (the EMP baseline); ``radius_scale`` multiplies every radius (1 is
    the bound as stated; smaller values are a tuned, no longer guaranteed, confidence constant).
    Returns ``(E,)`` values in [0, 1].
    """
    seeds = np.asarray(seeds, dtype=bool)
    first = np.asarray(rounds) == 1
    n = seeds.shape[0]
    src, dst = problem.edges[:, 0], problem.edges[:, 1]
    log_term = 0.0 if delta is None else math.log(12 * n * problem.n_edges / _check_delta(delta))
    q_hat = seeds.mean(0)
    not_seed = ~seeds
    quiet = not_seed & ~first
    n_v = not_seed.sum(0).astype(np.float64)
    p_v = np.divide(quiet.sum(0), n_v, out=np.ones_like(n_v), where=n_v > 0)
    ns = not_seed.astype(np.float32)
    n_uv = (ns[:, src] * ns[:, dst]).sum(0).astype(np.float64)
    quiet_uv = (ns[:, src] * quiet[:, dst].astype(np.float32)).sum(0).astype(np.float64)
    p_v_given_u = np.divide(quiet_uv, n_uv, out=np.ones_like(n_uv), where=n_uv > 0)
    q_u, p_vbar = q_hat[src], p_v[dst]
    if delta is not None:
        c = radius_scale
        q_u = q_u + c * _bernstein_radius(q_hat, np.full_like(q_hat, n), log_term)[src]
        p_vbar = p_vbar + c * _bernstein_radius(p_v, n_v, log_term)[dst]
        p_v_given_u = p_v_given_u - c * _bernstein_radius(p_v_given_u, n_uv, log_term)
    with np.errstate(divide="ignore", invalid="ignore"):
        estimate = (1.0 - np.minimum(p_vbar, 1.0) / p_v_given_u) / np.minimum(q_u, 1.0)
    valid = (p_v_given_u > 0) & (q_u > 0) & np.isfinite(estimate)
    return np.clip(np.where(valid, estimate, 0.0), 0.0, 1.0)


def clcb_im(
    dataset: LoggedDataset,
    *,
    delta: float = 0.1,
    oracle: Oracle | None = None,
    radius_scale: float = 1.0,
) -> torch.Tensor:
    """CLCB-IM-N: the seed set of ``ORACLE(p̲)`` on the lower-bound graph."""
    problem = dataset.problem
    if not isinstance(problem, InfluenceProblem):
        raise ValueError("clcb_im needs an influence-maximization dataset")
    seeds, rounds = dataset["seeds"], dataset["activation_round"]
    bounds = im_edge_bounds(problem, seeds, rounds, delta, radius_scale)
    return (oracle or default_oracle(problem))(problem, torch.as_tensor(bounds))


def clcb(
    dataset: LoggedDataset,
    *,
    delta: float = 0.1,
    oracle: Oracle | None = None,
    radius_scale: float = 1.0,
) -> torch.Tensor:
    """CLCB on a logged dataset, dispatching to the application's variant.

    Returns the chosen super arm in the problem's natural form with a batch axis of 1.
    """
    if isinstance(dataset.problem, InfluenceProblem):
        return clcb_im(dataset, delta=delta, oracle=oracle, radius_scale=radius_scale)
    counts, sums = dataset.arm_statistics()
    return clcb_from_statistics(
        dataset.problem,
        counts,
        sums,
        dataset.n,
        delta=delta,
        oracle=oracle,
        radius_scale=radius_scale,
    )
