"""Influence maximization under the independent cascade model (Off-CMAB §3), batched.

A directed graph ``G(V, E)`` with edge probabilities ``p_uv`` (the base arms, one per edge). A
super arm is a seed set; the cascade activates the seeds at round 0, and every node activated at
round ``r`` gets one chance to activate each inactive out-neighbour ``v`` at round ``r + 1`` with
probability ``p_uv``. The reward is the number of activated nodes (the spread ``σ(S; G)``).

Feedback is node-level: the round at which each node activated (``-1`` if never), i.e. the sets
``S_{t,0}, S_{t,1}, …`` of the reference; which edge activated a node is not observed. An edge is
triggered when its source activates; as its "outcome" the env reports whether its target
activated in the next round (the node-level evidence; it may have been another in-edge).

Every edge is tried at most once, so drawing one uniform per edge up front (the live-edge view)
gives exactly the cascade's distribution. Expected spreads are Monte Carlo estimates over a fixed
set of live-edge samples (common random numbers), so comparisons between seed sets are not
blurred by independent noise; the optimal super arm is the greedy one, a (1 − 1/e)-approximation
(up to the Monte Carlo error).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from gymforge.core.extras import require
from gymforge.core.instance_rng import InstanceRNG
from gymforge.envs.cmab.loaders import read_edge_list
from gymforge.envs.cmab.problem import Feedback, Params, Problem, check_int, check_unit_range
from gymforge.envs.cmab.super_arms import ids_to_mask

if TYPE_CHECKING:
    import networkx as nx

GRAPHS = ("gnp", "barabasi_albert", "watts_strogatz", "edge_list")


def make_graph(
    graph: str | nx.DiGraph, n_nodes: int, graph_param: float | None, graph_seed: int
) -> tuple[int, np.ndarray, np.ndarray | None]:
    """Node count, directed edges ``(E, 2)`` and optional fixed probabilities of a graph.

    ``graph`` is a networkx ``DiGraph`` (edge attribute ``p`` optional, nodes relabelled in sorted
    order), a path to an edge list, or one of: ``"gnp"`` (directed G(n, p), ``graph_param`` = p,
    default 0.1), ``"barabasi_albert"`` (``graph_param`` = edges per new node, default 2) or
    ``"watts_strogatz"`` (ring of ``graph_param`` neighbours, default 4, rewiring 0.1); undirected
    generators give both directions of every edge.
    """
    if type(graph).__module__.startswith("networkx"):
        directed = graph if graph.is_directed() else graph.to_directed()
        order = {node: i for i, node in enumerate(sorted(directed.nodes))}
        edges = np.array([(order[u], order[v]) for u, v in directed.edges], dtype=np.int64)
        probs = [data.get("p") for _, _, data in directed.edges(data=True)]
        fixed = None if any(p is None for p in probs) else np.array(probs, dtype=np.float64)
        if edges.size == 0:
            raise ValueError("graph has no edges")
        return len(order), edges, fixed
    if graph not in GRAPHS:
        if Path(str(graph)).is_file():
            return read_edge_list(graph)
        raise ValueError(f"graph must be one of {GRAPHS}, an edge-list file or a networkx graph")
    if graph == "edge_list":
        raise ValueError("graph='edge_list' needs edge_list=<path>")
    n_nodes = check_int("n_nodes", n_nodes, 2)
    nx = require("networkx", f"the {graph!r} graph of OffCMAB-InfluenceMax")
    if graph == "gnp":
        g = nx.gnp_random_graph(n_nodes, graph_param or 0.1, seed=graph_seed, directed=True)
    elif graph == "barabasi_albert":
        g = nx.barabasi_albert_graph(n_nodes, int(graph_param or 2), seed=graph_seed)
    else:
        g = nx.watts_strogatz_graph(n_nodes, int(graph_param or 4), 0.1, seed=graph_seed)
    g = g.to_directed() if not g.is_directed() else g
    edges = np.array(sorted(g.edges), dtype=np.int64)
    if edges.size == 0:
        raise ValueError(f"the {graph} graph with these parameters has no edges")
    return n_nodes, edges, None


def cascade_rounds(
    src: torch.Tensor,
    dst: torch.Tensor,
    n_nodes: int,
    live: torch.Tensor,
    seeds: torch.Tensor,
    check_every: int = 1,
) -> torch.Tensor:
    """Activation round ``(R, V)`` (−1 = never) of cascades with live edges ``(R, E)`` and seed
    masks ``(R, V)``.

    A cascade ends within ``n_nodes − 1`` rounds (each round that goes on activates a new
    node). Every ``check_every`` rounds one host read asks whether any live edge still fires
    and stops the loop if none does: ``1`` stops at the first idle round (fewest rounds, one
    device synchronisation per round); ``check_every >= n_nodes − 1`` runs every round with no
    read at all. Rounds after the last activation change nothing, so the result is the same.
    """
    # Float 0/1 states keep each round to six tensor operations; ``count`` sums the states of
    # rounds 0 … last, so a node active from round a on has count = last − a + 1.
    active = seeds.to(torch.float32)
    frontier, count, zero = active, active.clone(), torch.zeros_like(active)
    live = live.to(torch.float32)
    last = 0
    for r in range(1, n_nodes):
        fired = frontier.index_select(1, src).mul_(live)
        if r % check_every == 0 and not bool(fired.any()):
            break
        reached = torch.index_add(zero, 1, dst, fired).add_(active).clamp_(max=1.0)
        frontier, active = reached - active, reached
        count += active
        last = r
    return torch.where(active > 0, (last + 1 - count).to(torch.int64), -1)


class InfluenceProblem(Problem):
    """Influence maximization with ``n_seeds`` seeds under the independent cascade.

    Args:
        graph: a generator name, ``"edge_list"``, or a networkx graph (see :func:`make_graph`).
        n_nodes: nodes of a generated graph.
        graph_param: the generator's parameter (see :func:`make_graph`).
        graph_seed: seed of the generated topology (the same for every instance).
        edge_list: path of an edge list (``u v`` or ``u v p`` per line) for ``graph="edge_list"``.
        edge_prob_low, edge_prob_high: per-instance edge probabilities ``U[low, high]`` drawn from
            the instance's seed, unless the graph fixes them.
        n_seeds: seed-set size ``k``.
        mc_samples: live-edge samples of the Monte Carlo spread estimates used for evaluation.
    """

    name = "influence"
    id_name = "nodes"
    size_name = "n_seeds"
    #: rounds between the host reads that end a played cascade early: graphs of up to 65 nodes
    #: run every round with no read (a sync-free ``step``); larger ones read once per 64 rounds.
    step_check_every = 64

    def __init__(
        self,
        graph: str | nx.DiGraph = "gnp",
        n_nodes: int = 30,
        graph_param: float | None = None,
        graph_seed: int = 0,
        edge_list: str | None = None,
        edge_prob_low: float = 0.05,
        edge_prob_high: float = 0.3,
        n_seeds: int = 3,
        mc_samples: int = 2000,
    ) -> None:
        source = edge_list if graph == "edge_list" and edge_list else graph
        self.n_nodes, edges, fixed = make_graph(source, n_nodes, graph_param, graph_seed)
        self.graph_description = graph if isinstance(graph, str) else "networkx graph"
        self.graph_seed = int(graph_seed)
        self.edges = edges
        self.fixed_probs = fixed
        if fixed is not None and (fixed.min() < 0 or fixed.max() > 1):
            raise ValueError("edge probabilities must lie in [0, 1]")
        self.prob_low, self.prob_high = check_unit_range(
            "(edge_prob_low, edge_prob_high)", edge_prob_low, edge_prob_high
        )
        self.n_seeds = check_int("n_seeds", n_seeds, 1, self.n_nodes - 1)
        self.mc_samples = check_int("mc_samples", mc_samples, 1)
        self.src = torch.as_tensor(edges[:, 0])
        self.dst = torch.as_tensor(edges[:, 1])
        self._edges_by_device: dict[torch.device, tuple[torch.Tensor, torch.Tensor]] = {}
        self.n_edges = edges.shape[0]
        self.n_arms = self.n_edges
        self.n_ids = self.n_nodes
        self.size = self.n_seeds
        self.alpha = 1.0 - 1.0 / math.e
        self.feedback_dim = 2 * self.n_nodes

    # --- dynamics ------------------------------------------------------------------------
    def draw_params(self, rng: InstanceRNG) -> Params:
        batch, device = rng.seed.shape[0], rng.seed.device
        if self.fixed_probs is not None:
            p = torch.as_tensor(self.fixed_probs, dtype=torch.float32, device=device)
            return {"p": p.expand(batch, -1).clone()}
        u = rng.uniform(self.n_edges)
        return {"p": self.prob_low + (self.prob_high - self.prob_low) * u}

    def arm_from_ids(self, ids: torch.Tensor) -> torch.Tensor:
        return ids_to_mask(ids, self.n_nodes)

    def _edges_on(self, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        """Edge sources and targets on ``device``, copied there once (not on every play)."""
        device = torch.device(device)
        if device not in self._edges_by_device:
            self._edges_by_device[device] = (self.src.to(device), self.dst.to(device))
        return self._edges_by_device[device]

    def play(
        self, params: Params, arm: torch.Tensor, rng: InstanceRNG
    ) -> tuple[torch.Tensor, Feedback]:
        live = rng.uniform(self.n_edges) < params["p"]
        src, dst = self._edges_on(arm.device)
        rounds = cascade_rounds(src, dst, self.n_nodes, live, arm, self.step_check_every)
        reward = (rounds >= 0).sum(1).to(torch.float32)
        return reward, {"seeds": arm, "activation_round": rounds}

    def triggered(self, params: Params, feedback: Feedback) -> tuple[torch.Tensor, torch.Tensor]:
        rounds = feedback["activation_round"]
        src, dst = self._edges_on(rounds.device)
        source_round = rounds[:, src]
        triggered = source_round >= 0
        outcomes = (triggered & (rounds[:, dst] == source_round + 1)).to(torch.float32)
        return triggered, outcomes

    def features(
        self, feedback: Feedback, triggered: torch.Tensor, outcomes: torch.Tensor
    ) -> torch.Tensor:
        rounds = feedback["activation_round"]
        active = (rounds >= 0).to(torch.float32)
        return torch.cat([active, active * (rounds + 1).to(torch.float32) / self.n_nodes], 1)

    # --- evaluation (Monte Carlo over fixed live-edge samples) ---------------------------
    def _live_samples(self, p: torch.Tensor, samples: int, seed: int) -> torch.Tensor:
        generator = torch.Generator(device="cpu").manual_seed(seed)
        u = torch.rand(samples, self.n_edges, generator=generator, dtype=torch.float64)
        return u.to(p.device) < p.double()[None]

    def spread(
        self, p: torch.Tensor, seed_masks: torch.Tensor, samples: int | None = None, seed: int = 0
    ) -> torch.Tensor:
        """Monte Carlo spread ``(C,)`` float64 of seed masks ``(C, V)`` for edge probabilities
        ``p`` ``(E,)`` of one instance, over ``samples`` fixed live-edge graphs."""
        samples = samples or self.mc_samples
        live = self._live_samples(p, samples, seed)
        count = seed_masks.shape[0]
        src, dst = self._edges_on(p.device)
        # Chunk so that rows x edges stays near 2**22 booleans.
        chunk = max(1, (1 << 22) // max(1, samples * self.n_edges))
        out = []
        for start in range(0, count, chunk):
            masks = seed_masks[start : start + chunk]
            rows = masks.shape[0]
            rounds = cascade_rounds(
                src,
                dst,
                self.n_nodes,
                live.repeat(rows, 1),
                masks.repeat_interleave(samples, dim=0),
            )
            active = (rounds >= 0).double().sum(1).reshape(rows, samples)
            out.append(active.mean(1))
        return torch.cat(out)

    def activation_probabilities(
        self, p: torch.Tensor, seed_mask: torch.Tensor, samples: int | None = None, seed: int = 0
    ) -> torch.Tensor:
        """Monte Carlo probability ``(V,)`` that each node activates under one seed mask ``(V,)``."""
        samples = samples or self.mc_samples
        live = self._live_samples(p, samples, seed)
        src, dst = self._edges_on(p.device)
        rounds = cascade_rounds(src, dst, self.n_nodes, live, seed_mask[None].expand(samples, -1))
        return (rounds >= 0).double().mean(0)

    def greedy(
        self, p: torch.Tensor, k: int | None = None, samples: int | None = None
    ) -> torch.Tensor:
        """Greedy seed ids ``(k,)`` maximizing the Monte Carlo spread for probabilities ``p`` ``(E,)``."""
        k = k or self.n_seeds
        chosen = torch.zeros(self.n_nodes, dtype=torch.bool, device=p.device)
        order: list[int] = []
        eye = torch.eye(self.n_nodes, dtype=torch.bool, device=p.device)
        for _ in range(k):
            candidates = torch.nonzero(~chosen)[:, 0]
            masks = chosen[None] | eye[candidates]
            values = self.spread(p, masks, samples)
            best = int(candidates[int(values.argmax())])
            chosen[best] = True
            order.append(best)
        return torch.tensor(order, dtype=torch.int64, device=p.device)

    def expected_reward(self, params: Params, arm: torch.Tensor) -> torch.Tensor:
        return torch.stack(
            [self.spread(params["p"][b], arm[b : b + 1])[0] for b in range(arm.shape[0])]
        )

    def optimal(self, params: Params) -> tuple[torch.Tensor, torch.Tensor]:
        ids = torch.stack([self.greedy(params["p"][b]) for b in range(params["p"].shape[0])])
        arm = ids_to_mask(ids, self.n_nodes)
        return arm, self.expected_reward(params, arm)

    def trigger_probabilities(self, params: Params, arm: torch.Tensor) -> torch.Tensor:
        src, _ = self._edges_on(arm.device)
        return torch.stack(
            [
                self.activation_probabilities(params["p"][b], arm[b])[src]
                for b in range(arm.shape[0])
            ]
        )

    def arm_statistics(self, arrays: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        rounds = arrays["activation_round"].astype(np.int64)
        src, dst = self.edges[:, 0], self.edges[:, 1]
        triggered = rounds[:, src] >= 0
        evidence = triggered & (rounds[:, dst] == rounds[:, src] + 1)
        return triggered.sum(0).astype(np.float64), evidence.sum(0).astype(np.float64)

    def public_config(self) -> dict[str, Any]:
        return {
            "graph": self.graph_description,
            "n_nodes": self.n_nodes,
            "graph_seed": self.graph_seed,
            "edges": self.edges.tolist(),
            "edge_prob_low": self.prob_low,
            "edge_prob_high": self.prob_high,
            "n_seeds": self.n_seeds,
        }
