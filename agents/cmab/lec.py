"""LEC (least expected cost, after Zhu et al. 2023): cache the ``k`` queries with the largest
empirical ``p̂(q)·ĉ(q)``, i.e. evict those whose expected cost is least.

``ĉ(q)`` is the mean of the costs observed on misses of ``q`` (0 if never observed).
"""

from __future__ import annotations

import torch

from gymforge.agents.cmab.clcb import empirical_means
from gymforge.envs.cmab.datasets import LoggedDataset
from gymforge.envs.cmab.llm_cache import LLMCacheProblem
from gymforge.envs.cmab.super_arms import ids_to_mask


def lec(dataset: LoggedDataset) -> torch.Tensor:
    """Cache mask ``(1, m)`` of the ``k`` largest empirical expected costs (ties → lower id)."""
    problem = dataset.problem
    if not isinstance(problem, LLMCacheProblem):
        raise ValueError("LEC is a caching baseline: it needs an LLM-cache dataset")
    m = problem.n_queries
    means = torch.as_tensor(empirical_means(*dataset.arm_statistics()))
    weight = means[:m] * means[m:]
    order = torch.sort(weight, descending=True, stable=True).indices
    return ids_to_mask(order[None, : problem.cache_size], m)
