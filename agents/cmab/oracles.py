"""α-approximation oracles for Off-CMAB: ``ORACLE(index) → super arm``.

An oracle receives the problem and a per-base-arm index (LCBs, UCBs or empirical means), reads
it as the parameters of an instance (:func:`index_params`) and returns the best super arm of that
instance in the problem's natural form, with a batch axis of 1. Available oracles:

- :func:`top_k_oracle`: exact for the cascade (the k largest indices, ranked by decreasing
  index: a heap selection in O(m log k)), the LLM cache (the k largest ``p(q)·c(q)``) and the
  k-path problem (the path of largest index sum);
- :func:`greedy_im_oracle`: greedy seed selection on Monte Carlo spreads, (1 − 1/e − ε);
- :func:`brute_force_oracle`: exhaustive search over all super arms, for small instances and for
  checking the others.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable

import torch

from gymforge.envs.cmab.cascade import CascadeProblem
from gymforge.envs.cmab.influence import InfluenceProblem
from gymforge.envs.cmab.kpath import KPathProblem
from gymforge.envs.cmab.llm_cache import LLMCacheProblem
from gymforge.envs.cmab.problem import Params, Problem
from gymforge.envs.cmab.super_arms import ids_to_mask

Oracle = Callable[[Problem, torch.Tensor], torch.Tensor]


def index_params(problem: Problem, index: torch.Tensor, clip: bool = True) -> Params:
    """Read a base-arm index ``(n_arms,)`` as instance parameters (batch axis 1), clipped to
    [0, 1] unless ``clip`` is false (ranking oracles keep the order of out-of-range bounds)."""
    index = torch.as_tensor(index, dtype=torch.float64)[None]
    if clip:
        index = index.clamp(0.0, 1.0)
    if isinstance(problem, LLMCacheProblem):
        m = problem.n_queries
        return {"p": index[:, :m], "c": index[:, m:]}
    if isinstance(problem, InfluenceProblem):
        return {"p": index}
    return {"mu": index}


def heap_top_k(values: list[float], k: int) -> list[int]:
    """Ids of the ``k`` largest values, largest first (a size-k heap: O(m log k); ties → lower id)."""
    return [-neg for _, neg in heapq.nlargest(k, ((v, -i) for i, v in enumerate(values)))]


def top_k_oracle(problem: Problem, index: torch.Tensor) -> torch.Tensor:
    """Exact oracle of the cascade, LLM cache and k-path problems (see the module docstring).

    Ranks the raw index (bounds may lie outside [0, 1] or be infinite); ties go to the lower id.
    """
    params = index_params(problem, index, clip=False)
    if isinstance(problem, CascadeProblem):
        ids = heap_top_k(params["mu"][0].tolist(), problem.list_size)
        return torch.tensor([ids], dtype=torch.int64)
    if isinstance(problem, LLMCacheProblem):
        p, c = params["p"][0], params["c"][0]
        weight = torch.where(p > 0, p * c, torch.zeros_like(p)).tolist()  # 0·∞ → 0
        ids = torch.tensor([heap_top_k(weight, problem.cache_size)], dtype=torch.int64)
        return ids_to_mask(ids, problem.n_queries)
    if isinstance(problem, KPathProblem):
        finite = {"mu": torch.nan_to_num(params["mu"], posinf=1e300, neginf=-1e300)}
        return problem.path_values(finite).argmax(1)
    raise ValueError(f"top_k_oracle does not solve {problem.name}; use greedy_im_oracle")


def greedy_im_oracle(samples: int = 500) -> Oracle:
    """Greedy influence maximization on ``samples`` Monte Carlo live-edge graphs."""

    def oracle(problem: Problem, index: torch.Tensor) -> torch.Tensor:
        if not isinstance(problem, InfluenceProblem):
            raise ValueError("greedy_im_oracle solves influence maximization only")
        ids = problem.greedy(index_params(problem, index)["p"][0], samples=samples)
        return ids_to_mask(ids[None], problem.n_nodes)

    return oracle


def brute_force_oracle(max_candidates: int = 200_000) -> Oracle:
    """Exhaustive search over all super arms (refuses more than ``max_candidates`` of them)."""

    def oracle(problem: Problem, index: torch.Tensor) -> torch.Tensor:
        params = index_params(problem, index)
        if isinstance(problem, KPathProblem):
            candidates = torch.arange(problem.n_paths)
        else:
            count = _combinations(problem.n_ids, problem.size)
            if count > max_candidates:
                raise ValueError(
                    f"brute force over {count} super arms exceeds max_candidates={max_candidates}"
                )
            ids = torch.tensor(
                list(itertools.combinations(range(problem.n_ids), problem.size)), dtype=torch.int64
            )
            candidates = problem.arm_from_ids(ids)
        expanded = {k: v.expand(candidates.shape[0], *v.shape[1:]) for k, v in params.items()}
        if isinstance(problem, InfluenceProblem):
            values = problem.spread(params["p"][0], candidates)
        else:
            values = problem.expected_reward(expanded, candidates)
        best = candidates[int(values.argmax())][None]
        if isinstance(problem, CascadeProblem):  # rank the chosen items by decreasing index
            order = torch.argsort(params["mu"][0][best[0]], descending=True, stable=True)
            best = best[:, order]
        return best

    return oracle


def _combinations(n: int, k: int) -> int:
    from math import comb

    return comb(n, k)


def default_oracle(problem: Problem) -> Oracle:
    """Top-k for the cascade, cache and k-path problems; greedy Monte Carlo for influence."""
    return greedy_im_oracle() if isinstance(problem, InfluenceProblem) else top_k_oracle
