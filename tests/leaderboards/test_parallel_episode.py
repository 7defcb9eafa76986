"""Multi-agent boards: the evaluator takes a players object or a dict of per-agent players."""

from __future__ import annotations

import numpy as np
import pytest

from gymforge.baselines.agent_loader import AgentRecord, parse_agent_spec
from gymforge.leaderboards import DEFAULT_ROOT
from gymforge.leaderboards.evaluator import make_env_factory, run_episodes
from gymforge.leaderboards.parallel_episode import as_players, build_players
from gymforge.leaderboards.protocol import load_protocol

TASK = "minmax/RandomBilinear"


def _episodes(agent: str, indices=(0, 1, 2)):
    protocol = load_protocol(DEFAULT_ROOT, TASK)
    return run_episodes(protocol, parse_agent_spec(agent, protocol.env_id), indices=list(indices))


def test_players_object_and_dict_of_sides_are_both_evaluated():
    joint = _episodes("sim_hb")  # one players object for both sides
    sides = _episodes("gda")  # a dict {"x": player, "y": player}
    for record in joint + sides:
        assert record["length"] == 100
        assert record["metric"] == pytest.approx(np.log10(record["info"]["distance"]))


def test_scores_order_like_the_paper_on_held_out_games():
    eg = np.mean([e["metric"] for e in _episodes("eg")])
    gda = np.mean([e["metric"] for e in _episodes("gda")])
    random = np.mean([e["metric"] for e in _episodes("random")])
    assert eg < -0.5 < gda < random  # EG converges, GDA barely moves, random walks away


def test_bad_players_are_rejected_with_a_clear_error():
    protocol = load_protocol(DEFAULT_ROOT, TASK)
    env = make_env_factory(protocol)()
    agents = list(env.possible_agents)
    with pytest.raises(ValueError, match=r"exactly one player per agent: \['x', 'y'\]"):
        as_players({"x": object()}, agents, "test")
    with pytest.raises(ValueError, match="the player of 'y' has no reset"):
        good = as_players({"x": _Still(), "y": _Still()}, agents, "test")
        assert good is not None
        as_players({"x": _Still(), "y": 3}, agents, "test")
    with pytest.raises(ValueError, match="must be a players object"):
        as_players(42, agents, "test")
    record = AgentRecord(kind="torchscript", sha256="0" * 64, artifact="model.pt")
    with pytest.raises(ValueError, match="entry points 'module:factory' only"):
        build_players(record, make_env_factory(protocol))


def test_players_returning_a_partial_dict_fail_the_episode():
    protocol = load_protocol(DEFAULT_ROOT, TASK)
    record = parse_agent_spec(f"{__name__}:half_players", protocol.env_id)
    with pytest.raises(ValueError, match=r"one action per agent \['x', 'y'\]"):
        run_episodes(protocol, record, indices=[0])


class _Still:
    def reset(self, seed=None):
        pass

    def act(self, observation, info=None):
        return np.zeros(4, np.float32)


class _Half:
    def reset(self, seed=None):
        pass

    def act(self, observations):
        return {"x": np.zeros(4, np.float32)}


def half_players(env):
    return _Half()
