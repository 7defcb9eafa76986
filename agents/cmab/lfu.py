"""LFU (least frequently used, after Zhu et al. 2023): cache the ``k`` most frequent queries.

Uses only the logged arrival frequencies ``p̂(q)``, ignoring costs.
"""

from __future__ import annotations

import torch

from gymforge.envs.cmab.datasets import LoggedDataset
from gymforge.envs.cmab.llm_cache import LLMCacheProblem
from gymforge.envs.cmab.super_arms import ids_to_mask


def lfu(dataset: LoggedDataset) -> torch.Tensor:
    """Cache mask ``(1, m)`` of the ``k`` most frequent queries (ties → lower query id)."""
    problem = dataset.problem
    if not isinstance(problem, LLMCacheProblem):
        raise ValueError("LFU is a caching baseline: it needs an LLM-cache dataset")
    frequency = torch.bincount(
        torch.as_tensor(dataset["query"]).long(), minlength=problem.n_queries
    )
    order = torch.sort(frequency.double(), descending=True, stable=True).indices
    return ids_to_mask(order[None, : problem.cache_size], problem.n_queries)
