"""Off-CMAB's sync budget: host synchronisations per ``step`` counted on the CPU (the calls
that would synchronise with a CUDA device), exact because the counts are deterministic."""

from __future__ import annotations

from collections import deque

import networkx as nx
import numpy as np
import pytest
import torch

import gymforge  # noqa: F401 - registers the ids
from gymforge.checks.batch_and_device import sync_profile
from gymforge.checks.sync_counter import SyncCounter
from gymforge.envs.cmab.gym_env import InfluenceMaxVecEnv
from gymforge.envs.cmab.influence import InfluenceProblem, cascade_rounds
from gymforge.registry import all_specs

#: syncs per step at most: one read for the action check, one for "did any episode end"
BUDGET = {
    "OffCMAB-Cascade-v0": 2,
    "OffCMAB-LLMCache-v0": 2,
    "OffCMAB-KPath-v0": 2,
    "OffCMAB-InfluenceMax-v0": 2,
}
CMAB_IDS = sorted(spec.id for spec in all_specs() if spec.id.startswith("OffCMAB-"))


def test_every_cmab_id_has_a_budget() -> None:
    assert sorted(BUDGET) == CMAB_IDS


@pytest.mark.parametrize("env_id", CMAB_IDS)
def test_step_stays_within_the_sync_budget(env_id: str) -> None:
    counter = sync_profile(env_id, "cpu", batch=256, steps=12)
    assert counter.total <= BUDGET[env_id] * 12, counter.top_sites()
    assert counter.by_kind["to_device"] == 0, counter.top_sites()  # nothing copied per step


def _path_graph(n: int) -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_edges_from((i, i + 1) for i in range(n - 1))
    nx.set_edge_attributes(graph, 1.0, "p")
    return graph


def _star_graph(n: int) -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_edges_from((0, i) for i in range(1, n))
    graph.add_edges_from((i, 0) for i in range(1, n))
    nx.set_edge_attributes(graph, 1.0, "p")
    return graph


def _syncs_and_depth(graph: nx.DiGraph, steps: int = 6) -> tuple[int, int]:
    env = InfluenceMaxVecEnv(num_envs=32, graph=graph, n_seeds=1)
    env.reset(seed=0)
    actions = [torch.full((32, 1), a, dtype=torch.int64) for a in range(steps)]
    depth = torch.tensor(0)
    with SyncCounter() as syncs:
        for action in actions:
            info = env.step(action)[4]
            depth = torch.maximum(depth, info["activation_round"].max())  # no host read
    return syncs.total, int(depth)


def test_influence_syncs_do_not_grow_with_cascade_rounds() -> None:
    deep_syncs, deep = _syncs_and_depth(_path_graph(40))  # seed 0 … 5: 34 to 39 rounds
    shallow_syncs, shallow = _syncs_and_depth(_star_graph(40))  # every cascade within 2 rounds
    assert deep == 39 and shallow <= 2
    assert deep_syncs == shallow_syncs == 2 * 6


def _rounds_by_breadth_first_search(
    edges: np.ndarray, n_nodes: int, live: np.ndarray, seeds: np.ndarray
) -> np.ndarray:
    """Activation round = live-edge distance from the seed set (an independent reference)."""
    out = np.full(n_nodes, -1)
    queue = deque(int(s) for s in np.flatnonzero(seeds))
    out[list(queue)] = 0
    while queue:
        u = queue.popleft()
        for (a, b), ok in zip(edges, live, strict=True):
            if ok and a == u and out[b] < 0:
                out[b] = out[u] + 1
                queue.append(int(b))
    return out


@pytest.mark.parametrize("check_every", [1, 3, 64])
def test_cascade_rounds_match_breadth_first_search(check_every: int) -> None:
    problem = InfluenceProblem(n_nodes=25, graph_param=0.15, graph_seed=3)
    generator = torch.Generator().manual_seed(check_every)
    live = torch.rand(40, problem.n_edges, generator=generator) < 0.5
    seeds = torch.rand(40, problem.n_nodes, generator=generator) < 0.08
    rounds = cascade_rounds(problem.src, problem.dst, problem.n_nodes, live, seeds, check_every)
    for row in range(40):
        expected = _rounds_by_breadth_first_search(
            problem.edges, problem.n_nodes, live[row].numpy(), seeds[row].numpy()
        )
        assert rounds[row].tolist() == expected.tolist()


def test_edge_tensors_are_copied_to_a_device_once() -> None:
    problem = InfluenceProblem()
    meta = torch.device("meta")
    first, again = problem._edges_on(meta), problem._edges_on("meta")
    assert first[0].device == meta and first[0] is again[0] and first[1] is again[1]
