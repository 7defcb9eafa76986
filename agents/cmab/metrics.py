"""Evaluation of an offline learner's super arm: the α-approximate suboptimality gap and the
theoretical bounds it is compared with (Off-CMAB §2–3)."""

from __future__ import annotations

import math

import torch

from gymforge.envs.cmab.problem import Params, Problem


def suboptimality_gap(
    problem: Problem,
    params: Params,
    arm: torch.Tensor,
    *,
    alpha: float | None = None,
    optimum: float | None = None,
) -> float:
    """``SubOpt(Ŝ; α, I) = α · r(S*; μ) − r(Ŝ; μ)`` under the true parameters ``params``.

    ``alpha`` defaults to the problem's oracle ratio (1 except for influence maximization, where
    ``S*`` is the greedy seed set); pass ``optimum`` to reuse a computed ``r(S*; μ)``. For the LLM
    cache, whose reward is the negative cost, the gap is the cost excess over the optimal cache.
    """
    alpha = problem.alpha if alpha is None else alpha
    if optimum is None:
        optimum = float(problem.optimal(params)[1][0])
    value = float(problem.expected_reward(params, arm)[0])
    if optimum < 0:  # a cost: α-approximation of a minimisation is not defined; use α = 1
        return optimum - value
    return alpha * optimum - value


def theorem1_bound(
    n: int,
    m: int,
    delta: float,
    *,
    c_inf: float | None = None,
    k_bar_2: float | None = None,
    c_1: float | None = None,
    k_bar: float | None = None,
    alpha: float = 1.0,
    b1: float = 1.0,
) -> float:
    """CLCB's gap bound (Theorem 1): ``2αB₁ K̄*₂ √(2 C*_∞ log(2mn/δ)/n)`` under C3, or
    ``2αB₁ √(2 K̄* C*_1 log(2mn/δ)/n)`` under C4 (pass ``c_1`` and ``k_bar``)."""
    log_term = math.log(2 * m * n / delta)
    if c_1 is not None and k_bar is not None:
        return 2 * alpha * b1 * math.sqrt(2 * k_bar * c_1 * log_term / n)
    if c_inf is None or k_bar_2 is None:
        raise ValueError("pass c_inf and k_bar_2 (C3) or c_1 and k_bar (C4)")
    return 2 * alpha * b1 * k_bar_2 * math.sqrt(2 * c_inf * log_term / n)


def llm_cache_bound(n: int, m: int, delta: float) -> float:
    """CLCB-LLM-C's gap bound under empty-cache logging: ``4 √(2 m log(6 m n / δ) / n)``."""
    return 4 * math.sqrt(2 * m * math.log(6 * m * n / delta) / n)


def kpath_lower_bound_rate(n: int, k: int, c_inf: float) -> float:
    """The rate of Theorem 2's lower bound, ``k · min{1, √(C*_∞ / n)}`` (constants omitted)."""
    return k * min(1.0, math.sqrt(c_inf / n))
