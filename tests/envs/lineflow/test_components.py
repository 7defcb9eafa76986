"""Known answers for the LineFlow components beyond the first slice."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gymforge.envs.lineflow import LineBuilder, LineFlowEnv
from gymforge.envs.lineflow.scenarios import (
    carrier_magazine,
    part_distribution,
    waiting_time_jump,
    worker_assignment,
)
from gymforge.envs.lineflow.simpy_engine import LineSimulation


def _one_process_line(**process_params):
    line = LineBuilder("one_process")
    line.source("S", processing_time=0, unlimited_carriers=True, processing_std=0.0)
    line.process("P", processing_time=10, processing_std=0.0, **process_params)
    line.sink("Sink", processing_time=0)
    line.connect("S", "P", capacity=1, transition_time=0, put_time=0, get_time=0, put_std=0.0)
    line.connect("P", "Sink", capacity=1, transition_time=0, put_time=0, get_time=0, put_std=0.0)
    return line


def test_lineflow__each_worker_multiplies_processing_time_by_exp_minus_0_3():
    """With zero overheads a process of T = 10 finishes a part every 10·exp(−0.3·n)."""
    for n_workers in (1, 2, 3):
        line = _one_process_line(worker_pool="Pool")
        line.worker_pool("Pool", n_workers=n_workers, transition_time=0)
        sim = LineSimulation(line.build(), seed=0)
        sim.run_until(1000)
        cycle = 10 * math.exp(-0.3 * n_workers)
        assert sim.n_parts == math.ceil(1000 / cycle) - 1 or sim.n_parts == math.floor(1000 / cycle)


def test_lineflow__skill_levels_scale_the_speed_up():
    line = _one_process_line(worker_pool="Pool")
    line.worker_pool("Pool", n_workers=1, transition_time=0, skill_levels={"W0": {"P": 2.0}})
    sim = LineSimulation(line.build(), seed=0)
    sim.run_until(1000)
    assert sim.n_parts == math.floor(1000 / (10 * math.exp(-0.6)))


def test_lineflow__a_reassigned_worker_walks_for_the_transition_time():
    spec = worker_assignment(3)
    sim = LineSimulation(spec, seed=0)
    pool = sim.pools["Pool"]
    assert [w.station for w in pool.workers] == [0, 1, 2] * 3  # round-robin start
    sim.apply_action([2] * 9)
    sim.run_until(4.9)
    assert pool.workers[0].in_transit and pool.workers[0].station == 0
    sim.run_until(5.1)
    assert not pool.workers[0].in_transit and pool.workers[0].station == 2
    assert sim.stations["A2"].n_workers == 9


def test_lineflow__switch_routes_to_the_chosen_output():
    spec = part_distribution(3)
    sim = LineSimulation(spec, seed=0)
    for t in range(1, 200):
        sim.apply_action([2, 2])  # SwitchD → P2 only, SwitchF takes from P2 only
        sim.run_until(t)
    assert sim.stations["P0"].last_processing_time == 12.0  # never worked: still nominal
    assert sim.stations["P1"].last_processing_time == 22.0
    assert sim.stations["P2"].last_processing_time != 32.0
    assert sim.n_parts > 0


def test_lineflow__alternating_switch_round_robins():
    spec = part_distribution(3)
    spec = spec.replace(
        stations=tuple(
            type(s)(s.name, processing_time=s.processing_time, alternate=True)
            if s.name.startswith("Switch")
            else s
            for s in spec.stations
        )
    )
    sim = LineSimulation(spec, seed=0)
    sim.run_until(2000)
    assert all(sim.stations[f"P{i}"].last_processing_time != 12.0 + 10 * i for i in range(3))


def test_lineflow__magazine_closes_the_carrier_loop_and_its_count_is_an_action():
    env = LineFlowEnv(line=carrier_magazine())
    slots = [s.name for s in env.unwrapped.action_slots]
    assert slots == ["Magazine.magazine", "Source.waiting_time"]
    env.reset(seed=0)
    for _ in range(500):
        _, _, _, truncated, info = env.step(np.array([10, 0]))
    produced = info["n_parts"]
    assert produced > 100
    env.reset(seed=0)
    for _ in range(500):
        _, _, _, truncated, info = env.step(np.array([0, 0]))  # magazine emptied: nothing flows
    assert info["n_parts"] < 15
    assert not truncated


def test_lineflow__sequential_process_errors_cost_their_error_time():
    line = LineBuilder("errors")
    specs = {"c": {"p": {"Q": {"error_probability": 1.0, "error_time": 7.0}}}}
    line.source(
        "S", processing_time=0, processing_std=0.0, unlimited_carriers=True, carrier_specs=specs
    )
    line.sequential_process("Q", processing_time=3.0, processing_std=0.0, handling_time=0.0)
    line.sink("Sink", processing_time=0)
    line.connect("S", "Q", capacity=1, transition_time=0, put_time=0, get_time=0, put_std=0.0)
    line.connect("Q", "Sink", capacity=1, transition_time=0, put_time=0, get_time=0, put_std=0.0)
    sim = LineSimulation(line.build(), seed=0)
    sim.run_until(100.5)
    assert sim.n_parts == 10  # one part per 7 (error) + 3 (work)
    assert sim.stations["Q"].last_processing_time == 10.0


def test_lineflow__waiting_time_jump_is_seeded():
    a, b, c = (LineSimulation(waiting_time_jump(), seed=s) for s in (3, 3, 4))
    jump = lambda sim: (sim.stations["Assembly"].jump_start, sim.stations["Assembly"].jump_end)  # noqa: E731
    assert jump(a) == jump(b) != jump(c)
    start, end = jump(a)
    assert 500 <= start <= 1500 and 1600 <= end - start <= 2000
    assert a.stations["Assembly"].jump_factor > 1


def test_lineflow__a_deadlocked_line_truncates_with_the_reason():
    """A carrier loop that starts without carriers: every station waits forever at once."""
    line = LineBuilder("empty_loop")
    line.source("S", unlimited_carriers=False)
    line.process("P")
    line.sink("Sink")
    line.connect("S", "P")
    line.connect("P", "Sink")
    line.connect("Sink", "S")
    env = LineFlowEnv(line=line.build())
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step(np.array([0]))
    assert truncated and not terminated and reward == 0.0
    assert info["truncation_reason"] == "deadlock"
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.array([0]))


def test_lineflow__a_paused_line_is_not_a_deadlock():
    env = LineFlowEnv(line=_one_process_line().build())
    env.reset(seed=0)
    env.unwrapped.set_station_on("S", False)
    for _ in range(300):
        _, _, _, truncated, _ = env.step(np.array([0]))
        assert not truncated


def test_lineflow__switching_a_station_back_on_resumes_production():
    env = LineFlowEnv(scenario="simple_line")
    env.reset(seed=0)
    env.unwrapped.set_station_on("Source", False)
    for _ in range(200):
        *_, info = env.step(np.array([0]))
    stalled = info["n_parts"]
    env.unwrapped.set_station_on("Source", True)
    for _ in range(200):
        *_, info = env.step(np.array([0]))
    assert info["n_parts"] > stalled + 10
    with pytest.raises(ValueError, match="station must be one of"):
        env.unwrapped.set_station_on("Nope", True)


def test_lineflow__a_worker_sent_between_events_walks_from_the_decision_time():
    """An action at t = 3 (no event at 3) starts the 5-unit walk at 3, so it ends at 8."""
    spec = worker_assignment(3)
    sim = LineSimulation(spec, seed=0)
    sim.run_until(3.0)
    assert sim.env.now == 3.0
    sim.apply_action([2] + [w % 3 for w in range(1, 9)])
    sim.run_until(7.99)
    assert sim.pools["Pool"].workers[0].in_transit
    sim.run_until(8.01)
    assert sim.pools["Pool"].workers[0].station == 2
