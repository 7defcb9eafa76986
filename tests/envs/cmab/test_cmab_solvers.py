"""CLCB, its oracles and the baselines: formulas by hand, oracle agreement, known orderings."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
import torch

from gymforge.agents.cmab.clcb import clcb, im_edge_bounds, lower_confidence_bounds
from gymforge.agents.cmab.cucb_offline import cucb_offline
from gymforge.agents.cmab.emp import emp
from gymforge.agents.cmab.lec import lec
from gymforge.agents.cmab.lfu import lfu
from gymforge.agents.cmab.metrics import llm_cache_bound, suboptimality_gap, theorem1_bound
from gymforge.agents.cmab.oracles import brute_force_oracle, greedy_im_oracle, top_k_oracle
from gymforge.baselines.cmab.online_cucb import OnlineCUCBAgent
from gymforge.envs.cmab.cascade import CascadeProblem
from gymforge.envs.cmab.collect import collect_records, problem_for
from gymforge.envs.cmab.datasets import LoggedDataset
from gymforge.envs.cmab.influence import InfluenceProblem
from gymforge.envs.cmab.kpath import KPathProblem
from gymforge.envs.cmab.llm_cache import LLMCacheProblem
from gymforge.envs.cmab.problem import instance_params


def _tiny_cascade_dataset() -> LoggedDataset:
    """m=3 items, k=2; three records repeated 100 times.

    record [0, 1], click at 0: item 0 observed, clicked
    record [0, 1], no click:   items 0, 1 observed, not clicked
    record [2, 0], click at 1: item 2 observed (0), item 0 clicked
    → N = (300, 100, 100), clicks = (200, 0, 0), n = 300.
    """
    problem = CascadeProblem(attraction=[0.7, 0.1, 0.2], list_size=2)
    action = np.tile(np.array([[0, 1], [0, 1], [2, 0]], dtype=np.int16), (100, 1))
    click = np.tile(np.array([0, 2, 1], dtype=np.int16), 100)
    arrays = {"action": action, "click_position": click}
    return LoggedDataset(arrays, {"n": 300}, problem, instance_params(problem, 0))


def test_clcb_cascade_lcb_by_hand():
    dataset = _tiny_cascade_dataset()
    counts, sums = dataset.arm_statistics()
    np.testing.assert_array_equal(counts, [300, 100, 100])
    np.testing.assert_array_equal(sums, [200, 0, 0])
    lcb = lower_confidence_bounds(counts, sums, 300, 0.1, log_factor=2.0)
    # 2/3 − √(log(2·3·300/0.1) / 600) = 0.666667 − 0.127790 and 0 − √(log(18000) / 200)
    np.testing.assert_allclose(lcb, [0.5388769498, -0.2213382822, -0.2213382822], atol=1e-9)
    unseen = lower_confidence_bounds(np.array([0.0, 4.0]), np.array([0.0, 4.0]), 4, 0.1)
    assert unseen[0] == -np.inf
    assert clcb(dataset)[0, 0] == 0


def test_cucb_offline_is_optimistic_where_clcb_is_pessimistic():
    problem = CascadeProblem(attraction=[0.5, 0.5, 0.5], list_size=1)
    # item 0: 1000 observations, mean 0.5; item 1: 2 observations, mean 1.0; item 2 unseen
    action = np.array([[0]] * 1000 + [[1]] * 2, dtype=np.int16)
    click = np.array([0, 1] * 500 + [0, 0], dtype=np.int16)
    dataset = LoggedDataset({"action": action, "click_position": click}, {"n": 1002}, problem,
                            instance_params(problem, 0))  # fmt: skip
    assert clcb(dataset).tolist() == [[0]]  # well-observed
    assert cucb_offline(dataset).tolist() != [[0]]  # the unseen or barely seen one
    assert emp(dataset).tolist() == [[1]]  # the lucky one


def test_top_k_and_brute_force_oracles_agree():
    generator = torch.Generator().manual_seed(0)
    cascade = CascadeProblem(n_items=8, list_size=3)
    cache = LLMCacheProblem(n_queries=7, cache_size=3)
    kpath = KPathProblem(n_paths=4, path_length=3)
    for problem in (cascade, cache, kpath):
        for _ in range(5):
            index = torch.rand(problem.n_arms, generator=generator, dtype=torch.float64)
            fast, slow = top_k_oracle(problem, index), brute_force_oracle()(problem, index)
            assert torch.equal(fast, slow), problem.name


def test_greedy_im_oracle_matches_brute_force_on_a_star():
    # node 0 reaches 1..4 surely; node 5 reaches 6 with probability 0.5
    import networkx as nx

    graph = nx.DiGraph()
    for v in range(1, 5):
        graph.add_edge(0, v, p=1.0)
    graph.add_edge(5, 6, p=0.5)
    problem = InfluenceProblem(graph=graph, n_seeds=2, mc_samples=500)
    index = instance_params(problem, 0)["p"][0]
    greedy = greedy_im_oracle(samples=500)(problem, index)
    brute = brute_force_oracle()(problem, index)
    assert torch.nonzero(greedy[0]).ravel().tolist() == [0, 5]
    assert torch.equal(greedy, brute)


def test_im_node_level_estimator_recovers_edge_probabilities():
    problem = problem_for("OffCMAB-InfluenceMax-v0", {"n_nodes": 12, "graph_param": 0.2})
    params = instance_params(problem, 0)
    arrays = collect_records(problem, params, "independent", 40_000, seed=0, q=0.3)
    plug_in = im_edge_bounds(problem, arrays["seeds"], arrays["activation_round"], None)
    lower = im_edge_bounds(problem, arrays["seeds"], arrays["activation_round"], 0.1)
    truth = params["p"][0].double().numpy()
    assert np.abs(plug_in - truth).max() < 0.06
    assert np.mean(lower <= truth + 1e-9) > 0.95  # a lower bound (with high probability)
    assert np.all(lower <= plug_in + 1e-12)


def test_llm_cache_baselines_by_hand():
    problem = LLMCacheProblem(
        cache_size=1, cost_model="fixed", cost_means=[0.1, 1.0, 0.5], arrival=[0.5, 0.2, 0.3]
    )
    # observed: query 0 five times (cost 0.1), query 1 once (cost 1.0), query 2 three times (0.5)
    query = np.array([0] * 5 + [1] + [2] * 3, dtype=np.int32)
    cost = np.array([0.1] * 5 + [1.0] + [0.5] * 3, dtype=np.float32)
    arrays = {
        "cached": np.zeros((9, 3), bool),
        "query": query,
        "miss": np.ones(9, bool),
        "cost": cost,
    }
    dataset = LoggedDataset(arrays, {"n": 9}, problem, instance_params(problem, 0))
    assert lfu(dataset).tolist() == [[True, False, False]]  # most frequent
    assert lec(dataset).tolist() == [[False, False, True]]  # 3/9·0.5 > 1/9·1.0 > 5/9·0.1
    gap = suboptimality_gap(problem, dataset.params, lfu(dataset))
    assert gap == pytest.approx((0.2 * 1.0 + 0.3 * 0.5) - (0.5 * 0.1 + 0.3 * 0.5))


def test_clcb_beats_cucb_offline_on_small_synthetic_cascades():
    problem = problem_for("OffCMAB-Cascade-v0", {"n_items": 30, "list_size": 3})
    gaps: dict[str, list[float]] = {"clcb": [], "cucb": []}
    for seed in range(8):
        params = instance_params(problem, seed)
        arrays = collect_records(problem, params, "uniform", 100, seed)
        dataset = LoggedDataset(arrays, {"n": 100}, problem, params)
        gaps["clcb"].append(suboptimality_gap(problem, params, clcb(dataset)))
        gaps["cucb"].append(suboptimality_gap(problem, params, cucb_offline(dataset)))
    assert np.mean(gaps["clcb"]) < np.mean(gaps["cucb"])


def test_theorem_bounds_by_hand():
    assert theorem1_bound(100, 10, 0.1, c_inf=4.0, k_bar_2=2.0) == pytest.approx(
        2 * 2.0 * math.sqrt(2 * 4.0 * math.log(2 * 10 * 100 / 0.1) / 100)
    )
    assert theorem1_bound(100, 10, 0.1, c_1=3.0, k_bar=1.5) == pytest.approx(
        2 * math.sqrt(2 * 1.5 * 3.0 * math.log(2000 / 0.1) / 100)
    )
    assert llm_cache_bound(50, 10, 0.1) == pytest.approx(
        4 * math.sqrt(20 * math.log(3000 / 0.1) / 50)
    )


def test_online_cucb_learns_the_kpath_instance():
    env = gym.make("OffCMAB-KPath-v0", horizon=400, gap=0.3)
    agent = OnlineCUCBAgent(env)
    obs, info = env.reset(seed=0)
    best, _ = env.unwrapped.optimal_super_arm()
    plays = []
    for _ in range(400):
        action = agent.act(obs, info)
        plays.append(int(action[0]))
        obs, _, _, _, info = env.step(action)
    assert np.mean(np.array(plays[-100:]) == best[0]) > 0.9


def test_offline_agent_fits_a_dataset_and_plays_its_super_arm(tmp_path):
    from gymforge.agents.cmab.agent import OfflineAgent
    from gymforge.envs.cmab.collect import collect

    path = collect("OffCMAB-Cascade-v0", "uniform", 3000, tmp_path / "d", seed=6)
    env = gym.make("OffCMAB-Cascade-v0")
    obs, info = env.reset(seed=6)  # the logged instance
    agent = OfflineAgent(env)
    ids = agent.fit(path)
    _, _, _, _, info = env.step(agent.act(obs, info))
    np.testing.assert_array_equal(info["super_arm"], ids)
    _best, value = env.unwrapped.optimal_super_arm()
    assert value - env.unwrapped.expected_reward(ids) < 1e-3
    with pytest.raises(ValueError, match="learner must be one of"):
        OfflineAgent(env, learner="ppo")
