"""LineSpec validation: bad lines fail on construction with the field and allowed values named."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from gymforge.envs.lineflow import (
    BufferSpec,
    LineBuilder,
    LineFlowEnv,
    LineSpec,
    SinkSpec,
    SourceSpec,
)


def simple_line(**buffer_params) -> LineSpec:
    line = LineBuilder("simple")
    line.source("S", processing_time=2, unlimited_carriers=True, processing_std=0.0)
    line.process("P", processing_time=5, processing_std=0.0)
    line.sink("Sink", processing_time=0)
    line.connect("S", "P", capacity=2, transition_time=2, put_std=0.0, **buffer_params)
    line.connect("P", "Sink", capacity=2, transition_time=2, put_std=0.0)
    return line.build()


def test_lineflow__negative_capacity_is_rejected():
    with pytest.raises(ValueError, match=r"capacity must be an int in \[1, 1000\], got -2"):
        BufferSpec("S", "P", capacity=-2)


@pytest.mark.parametrize("kind", ["source", "process", "assembly", "sink"])
def test_lineflow__negative_processing_time_is_rejected(kind):
    line = LineBuilder("bad")
    with pytest.raises(
        ValueError, match=rf"{kind} 'X'.processing_time must be a number >= 0, got -1"
    ):
        getattr(line, kind)("X", processing_time=-1)


def test_lineflow__a_buffer_that_connects_nothing_is_rejected():
    source = SourceSpec("S", unlimited_carriers=True)
    with pytest.raises(
        ValueError,
        match=r"buffer 'Buffer_S_to_Nowhere'.downstream must name a station.*allowed: \['S', 'Sink'\]",
    ):
        LineSpec(
            "bad", (source, SinkSpec("Sink")), (BufferSpec("S", "Sink"), BufferSpec("S", "Nowhere"))
        )


def test_lineflow__a_station_without_its_input_is_rejected():
    line = LineBuilder("bad")
    line.source("S", unlimited_carriers=True)
    line.process("P")
    line.sink("Sink")
    line.connect("S", "Sink")
    with pytest.raises(ValueError, match=r"process 'P' needs an input buffer"):
        line.build()


def test_lineflow__duplicate_names_and_unknown_buffer_kinds_are_rejected():
    with pytest.raises(ValueError, match=r"kind must be one of \('main', 'component', 'return'\)"):
        BufferSpec("A", "B", kind="side")
    line = LineBuilder("dup")
    line.source("X", unlimited_carriers=True)
    line.sink("X")
    line.connect("X", "X")
    with pytest.raises(ValueError, match=r"names must be unique, repeated: \['X'\]"):
        line.build()


def test_lineflow__carrier_specs_may_only_name_stations_of_the_line():
    line = LineBuilder("bad")
    line.source(
        "S",
        unlimited_carriers=True,
        carrier_specs={"c": {"p": {"Ghost": {"extra_processing_time": 1}}}},
    )
    line.sink("Sink")
    line.connect("S", "Sink")
    with pytest.raises(ValueError, match=r"names unknown stations \['Ghost'\]"):
        line.build()


def test_lineflow__unknown_scenario_lists_the_known_ones():
    with pytest.raises(
        ValueError, match=r"scenario must be one of \[.*'waiting_time'.*\], got 'nope'"
    ):
        gym.make("LineFlow-v0", scenario="nope")


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (np.array([100]), r"action must lie in \[0, \[99\]\] per entry"),
        (np.array([-1]), r"action must lie in"),
        (np.array([1, 2]), r"action must have shape \(1,\)"),
        (np.array([1.5]), r"action must hold integers"),
    ],
)
def test_lineflow__invalid_actions_raise_before_the_line_moves(action, message):
    env = LineFlowEnv()
    env.reset(seed=0)
    for _ in range(30):
        env.step(np.array([10]))
    with pytest.raises(ValueError, match=message):
        env.step(action)
    assert env._step_count == 30
    after, *_ = env.step(np.array([10]))
    fresh = LineFlowEnv()
    fresh.reset(seed=0)
    for _ in range(31):
        expected, *_ = fresh.step(np.array([10]))
    np.testing.assert_array_equal(after, expected)


@pytest.mark.parametrize(
    ("field", "value"), [("horizon", 0), ("step_size", -1.0), ("reward", "fun")]
)
def test_lineflow__bad_env_arguments_are_rejected(field, value):
    with pytest.raises(ValueError, match=field):
        LineFlowEnv(**{field: value})


def test_lineflow__unreachable_stations_are_rejected():
    line = LineBuilder("island")
    line.source("S", unlimited_carriers=True)
    line.sink("Sink")
    line.process("P1")
    line.process("P2")
    line.connect("S", "Sink")
    line.connect("P1", "P2")
    line.connect("P2", "P1")
    with pytest.raises(ValueError, match=r"stations \['P1', 'P2'\] are unreachable"):
        line.build()


def test_lineflow__worker_pools_must_exist_and_serve_a_station():
    line = LineBuilder("pools")
    line.source("S", unlimited_carriers=True)
    line.process("P", worker_pool="Ghost")
    line.sink("Sink")
    line.connect("S", "P")
    line.connect("P", "Sink")
    with pytest.raises(ValueError, match=r"worker_pool must name a pool of the line, got 'Ghost'"):
        line.build()
    line = LineBuilder("idle_pool")
    line.source("S", unlimited_carriers=True)
    line.sink("Sink")
    line.connect("S", "Sink")
    line.worker_pool("Pool", n_workers=2)
    with pytest.raises(ValueError, match=r"worker pool 'Pool' serves no station"):
        line.build()


def test_lineflow__several_inputs_need_a_switch():
    line = LineBuilder("merge")
    line.source("A", unlimited_carriers=True)
    line.source("B", unlimited_carriers=True)
    line.sink("Sink")
    line.connect("A", "Sink")
    line.connect("B", "Sink")
    with pytest.raises(
        ValueError, match=r"sink 'Sink' may have at most one input.*through a switch"
    ):
        line.build()


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"unlimited_carriers": True, "carriers_in_magazine": 3}, "carriers_in_magazine must be 0"),
        (
            {"unlimited_carriers": False, "carriers_in_magazine": 0},
            "carriers_in_magazine must be >= 1",
        ),
        (
            {"unlimited_carriers": False, "carriers_in_magazine": 40, "max_carriers": 30},
            "max_carriers must be >= carriers_in_magazine",
        ),
    ],
)
def test_lineflow__magazine_parameters_are_checked(params, message):
    with pytest.raises(ValueError, match=message):
        LineBuilder("m").magazine("M", **params)


def test_lineflow__scenario_arguments_are_checked():
    with pytest.raises(
        ValueError,
        match=r"scenario 'part_distribution' takes arguments \['n_processes'\], got unknown \['k'\]",
    ):
        gym.make("LineFlow-PartDistribution-v0", scenario_kwargs={"k": 3})
    with pytest.raises(ValueError, match=r"n_processes must be an int >= 2, got 1"):
        gym.make("LineFlow-PartDistribution-v0", scenario_kwargs={"n_processes": 1})
    env = gym.make("LineFlow-PartDistribution-v0", scenario_kwargs={"n_processes": 3})
    assert list(env.action_space.nvec) == [3, 3]
