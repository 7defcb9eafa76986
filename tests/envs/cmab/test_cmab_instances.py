"""Known answers of the four Off-CMAB applications' dynamics and evaluation helpers."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
import torch

from gymforge.core.instance_rng import InstanceRNG
from gymforge.envs.cmab.cascade import CascadeProblem
from gymforge.envs.cmab.influence import InfluenceProblem
from gymforge.envs.cmab.kpath import KPathProblem
from gymforge.envs.cmab.llm_cache import LLMCacheProblem, power_law
from gymforge.envs.cmab.loaders import attraction_from_ratings, costs_from_prompts
from gymforge.envs.cmab.problem import instance_params, param_rng


def test_cascade__expected_reward_and_trigger_probabilities_by_hand():
    problem = CascadeProblem(attraction=[0.5, 0.2, 0.1, 0.4], list_size=3)
    params = instance_params(problem, 0)
    arm = torch.tensor([[3, 0, 2]])
    # 1 − (1−0.4)(1−0.5)(1−0.1) = 1 − 0.27
    assert float(problem.expected_reward(params, arm)[0]) == pytest.approx(0.73)
    # position 0 always examined, position 1 after no click on item 3, position 2 after two
    expected = [0.6, 0.0, 0.6 * 0.5, 1.0]
    np.testing.assert_allclose(problem.trigger_probabilities(params, arm)[0], expected)
    best, value = problem.optimal(params)
    assert best[0].tolist() == [0, 3, 1]
    assert float(value[0]) == pytest.approx(1 - 0.5 * 0.6 * 0.8)


def test_cascade__click_frequencies_match_the_cascade_model():
    problem = CascadeProblem(attraction=[0.3, 0.6, 0.1], list_size=2)
    batch = 40_000
    params = {"mu": instance_params(problem, 0)["mu"].expand(batch, -1)}
    rng = InstanceRNG.create(list(range(batch)))
    reward, feedback = problem.play(params, torch.tensor([[0, 1]]).expand(batch, -1), rng)
    first = feedback["click_position"]
    # P(click at 0) = 0.3, P(click at 1) = 0.7·0.6 = 0.42, P(no click) = 0.28
    for position, probability in ((0, 0.3), (1, 0.42), (2, 0.28)):
        assert float((first == position).double().mean()) == pytest.approx(probability, abs=0.01)
    assert float(reward.mean()) == pytest.approx(0.72, abs=0.01)


def test_llm_cache__expected_cost_and_optimal_cache_by_hand():
    problem = LLMCacheProblem(
        cache_size=1, cost_model="fixed", cost_means=[0.1, 1.0, 0.5], arrival=[0.5, 0.2, 0.3]
    )
    params = instance_params(problem, 0)
    cache = torch.tensor([[True, False, False]])
    # queries 1 and 2 miss: 0.2·1.0 + 0.3·0.5
    assert float(problem.expected_cost(params, cache)[0]) == pytest.approx(0.35)
    best, value = problem.optimal(params)  # p·c = 0.05, 0.2, 0.15 → cache query 1
    assert best[0].tolist() == [False, True, False]
    assert float(value[0]) == pytest.approx(-(0.05 + 0.15))


def test_llm_cache__cost_is_observed_only_on_a_miss():
    problem = LLMCacheProblem(n_queries=5, cache_size=2)
    batch = 2000
    params = {k: v.expand(batch, -1) for k, v in instance_params(problem, 1).items()}
    cache = torch.zeros(batch, 5, dtype=torch.bool)
    cache[:, :2] = True
    reward, feedback = problem.play(params, cache, InstanceRNG.create(list(range(batch))))
    hit = feedback["query"] < 2
    assert torch.equal(feedback["miss"], ~hit)
    assert bool((feedback["cost"][hit] == 0).all()) and bool((reward[hit] == 0).all())
    triggered, _ = problem.triggered(params, feedback)
    assert bool(triggered[:, :5].all())  # arrivals: full feedback
    assert torch.equal(triggered[:, 5:].sum(1) == 1, ~hit)


def test_llm_cache__power_law_and_token_costs():
    p = power_law(3, 1.0)
    np.testing.assert_allclose(p, np.array([1, 1 / 2, 1 / 3]) / (11 / 6))
    costs = costs_from_prompts(["one two", "one two three four", "a"])
    np.testing.assert_allclose(costs, [0.5, 1.0, 0.25])
    problem = LLMCacheProblem(cache_size=1, cost_model="tokens", prompts=["a b", "c d e f"])
    assert problem.n_queries == 2 and problem.cost_noise == "none"


def test_kpath__optimum_is_the_better_path():
    problem = KPathProblem(n_paths=3, path_length=4, base=0.5, gap=0.2)
    params = problem.draw_params(param_rng(torch.arange(20)))
    best, value = problem.optimal(params)
    np.testing.assert_allclose(value.numpy(), 4 * 0.7)
    other = (best + 1) % 3
    np.testing.assert_allclose(problem.expected_reward(params, other).numpy(), 4 * 0.5)
    assert len(set(best.tolist())) > 1  # the better path depends on the seed


def test_influence__spread_of_a_path_graph_by_hand():
    graph = nx.DiGraph()
    graph.add_edge(0, 1, p=0.5)
    graph.add_edge(1, 2, p=0.5)
    problem = InfluenceProblem(graph=graph, n_seeds=1, mc_samples=40_000)
    params = instance_params(problem, 0)
    seeds = torch.tensor([[True, False, False]])
    # 1 + 0.5 + 0.25 from node 0
    assert float(problem.expected_reward(params, seeds)[0]) == pytest.approx(1.75, abs=0.02)
    best, _value = problem.optimal(params)
    assert best[0].tolist() == [True, False, False]
    edge_trigger = problem.trigger_probabilities(params, seeds)[0]
    np.testing.assert_allclose(edge_trigger.numpy(), [1.0, 0.5], atol=0.01)


def test_influence__rounds_follow_the_cascade():
    graph = nx.DiGraph([(0, 1), (1, 2), (0, 3)])
    nx.set_edge_attributes(graph, 1.0, "p")
    problem = InfluenceProblem(graph=graph, n_seeds=1)
    params = instance_params(problem, 0)
    reward, feedback = problem.play(
        params, torch.tensor([[True, False, False, False]]), InstanceRNG.create([0])
    )
    assert feedback["activation_round"][0].tolist() == [0, 1, 2, 1]
    assert float(reward[0]) == 4


def test_parameters_of_instance_i_depend_only_on_its_seed():
    for problem in (CascadeProblem(), LLMCacheProblem(), KPathProblem(), InfluenceProblem()):
        batch = problem.draw_params(param_rng(torch.tensor([5, 9, 11])))
        for row, seed in enumerate((5, 9, 11)):
            single = instance_params(problem, seed)
            for name in batch:
                assert torch.equal(batch[name][row], single[name][0]), (problem.name, name)


def test_ratings_file_gives_attraction(tmp_path):
    path = tmp_path / "ratings.csv"
    path.write_text("user,item,rating\nu1,a,5\nu1,b,2\nu2,a,3\nu2,c,4\n")
    np.testing.assert_allclose(attraction_from_ratings(path), [0.8, 0.4, 0.8])
    np.testing.assert_allclose(attraction_from_ratings(path, user="u1"), [1.0, 0.4])
    with pytest.raises(ValueError, match="n_items=5 exceeds"):
        attraction_from_ratings(path, n_items=5)


@pytest.mark.parametrize(
    ("factory", "match"),
    [
        (lambda: CascadeProblem(n_items=3, list_size=4), "list_size"),
        (lambda: CascadeProblem(mu_low=0.5, mu_high=0.2), "mu_low"),
        (lambda: CascadeProblem(attraction=[0.5, 1.5]), "attraction"),
        (lambda: LLMCacheProblem(cache_size=100), "cache_size"),
        (lambda: LLMCacheProblem(cost_model="gamma"), "cost_model"),
        (lambda: LLMCacheProblem(cost_model="fixed"), "cost_means"),
        (lambda: LLMCacheProblem(arrival=[0.5, 0.6], n_queries=2, cache_size=1), "sum to 1"),
        (lambda: KPathProblem(n_paths=1), "n_paths"),
        (lambda: KPathProblem(base=0.8, gap=0.3), "base"),
        (lambda: InfluenceProblem(graph="grid"), "graph must be one of"),
        (lambda: InfluenceProblem(n_seeds=0), "n_seeds"),
    ],
)
def test_bad_configuration_is_a_clear_value_error(factory, match):
    with pytest.raises(ValueError, match=match):
        factory()


def test_edge_list_file(tmp_path):
    path = tmp_path / "edges.txt"
    path.write_text("# a triangle\n0 1 0.5\n1 2 0.25\n2 0 1.0\n")
    problem = InfluenceProblem(graph="edge_list", edge_list=str(path), n_seeds=1)
    assert problem.n_nodes == 3 and problem.n_edges == 3
    np.testing.assert_allclose(instance_params(problem, 0)["p"][0].numpy(), [0.5, 0.25, 1.0])
    assert math.isclose(problem.alpha, 1 - 1 / math.e)
