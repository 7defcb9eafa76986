"""The SimPy engine: hand-computed known answers on noise-free lines."""

from __future__ import annotations

import numpy as np
import pytest

from gymforge.envs.lineflow import LineBuilder, LineFlowEnv, ProcessSpec
from gymforge.envs.lineflow.features import observation_features
from gymforge.envs.lineflow.simpy_engine import LineSimulation


def noise_free_line():
    """S (T=2) → buffer (2 slots, 2 per slot) → P (T=5) → buffer → Sink (T=0), no noise.

    First part: made 0–2, put on 2–3, slot move 3–5, taken off 5–6, processed 6–11, put on
    11–12, moved 12–14, taken off 14–15: finished at t = 15. P is the bottleneck with a cycle of
    get 1 + process 5 + put 1 = 7, so part k finishes at 15 + 7·(k − 1).
    """
    line = LineBuilder("noise_free")
    line.source("S", processing_time=2, unlimited_carriers=True, processing_std=0.0)
    line.process("P", processing_time=5, processing_std=0.0)
    line.sink("Sink", processing_time=0)
    line.connect("S", "P", capacity=2, transition_time=2, put_std=0.0)
    line.connect("P", "Sink", capacity=2, transition_time=2, put_std=0.0)
    return line.build()


@pytest.mark.parametrize(("time", "parts"), [(15, 0), (15.001, 1), (22.001, 2), (100, 13)])
def test_lineflow__noise_free_line_finishes_parts_at_hand_computed_times(time, parts):
    sim = LineSimulation(noise_free_line(), seed=0)
    sim.run_until(time)
    assert sim.n_parts == parts


def test_lineflow__buffers_block_when_the_downstream_station_is_slow():
    """With P slow (T=50) carriers pile up: the input buffer fills, the source blocks.

    P's cycle is get 1 + process 50 + put 1 = 52; the first part leaves P's output buffer at
    57 + 2 (move) + 1 (get) = 60, then one every 52: 60, 112, 164, 216.
    """
    spec = noise_free_line()
    slow_process = ProcessSpec("P", processing_time=50, processing_std=0.0)
    slow = spec.replace(stations=(spec.stations[0], slow_process, spec.stations[2]))
    sim = LineSimulation(slow, seed=0)
    sim.run_until(200)
    buffer_in = sim.buffers["Buffer_S_to_P"]
    assert buffer_in.n_carriers == 2  # full
    assert sim.n_parts == 3


def waiting_time_rewards(waiting_time: int, seeds=range(3)) -> list[float]:
    env = LineFlowEnv()
    totals = []
    for seed in seeds:
        env.reset(seed=seed)
        total, done = 0.0, False
        while not done:
            _, reward, terminated, truncated, info = env.step(np.array([waiting_time]))
            total += reward
            done = terminated or truncated
        assert info["n_parts"] - info["n_scrap_parts"] == total
        totals.append(total)
    return totals


def test_lineflow__waiting_time_zero_floods_the_assembly_with_expired_parts():
    """Reference: waiting time 0 scores about −240 (parts expire and are scrapped)."""
    assert all(r < -200 for r in waiting_time_rewards(0))


def test_lineflow__a_waiting_time_near_the_optimum_scores_like_the_reference():
    """Reference: a fixed waiting time of 19 gives 155–156 parts and no scrap."""
    assert all(150 <= r <= 160 for r in waiting_time_rewards(19))


def test_lineflow__episode_is_4000_steps_and_truncated_not_terminated():
    env = LineFlowEnv()
    env.reset(seed=0)
    steps, terminated, truncated = 0, False, False
    while not (terminated or truncated):
        _, _, terminated, truncated, info = env.step(np.array([19]))
        steps += 1
    assert steps == 4000 and truncated and not terminated
    assert info["time"] == 4000.0
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.array([19]))


def test_lineflow__observation_layout_matches_the_feature_list():
    env = LineFlowEnv()
    obs, _ = env.reset(seed=0)
    names = [f.name for f in observation_features(env.line)]
    assert len(obs) == len(names) == 19
    values = dict(zip(names, obs, strict=True))
    assert values["time"] == 0.0
    assert values["S_component.waiting_time"] == 0.0
    for _ in range(100):
        obs, *_ = env.step(np.array([33]))
    values = dict(zip(names, obs, strict=True))
    assert values["time"] == pytest.approx(100 / 4000)
    assert values["S_component.waiting_time"] == pytest.approx(33 / 99)
    for station in ("S_main", "S_component", "Assembly", "Sink"):
        assert sum(values[f"{station}.mode={m}"] for m in ("working", "waiting", "failing")) == 1.0


def test_lineflow__scrap_factor_weights_scrap_in_the_reward():
    env = LineFlowEnv(scrap_factor=0.0)
    env.reset(seed=0)
    rewards = [env.step(np.array([0]))[1] for _ in range(4000)]
    assert min(rewards) >= 0  # scrap costs nothing
    env.set_scrap_factor(2.0)
    env.reset(seed=0)
    total, info = 0.0, {}
    for _ in range(4000):
        _, reward, _, _, info = env.step(np.array([0]))
        total += reward
    assert total == info["n_parts"] - 2.0 * info["n_scrap_parts"]
    with pytest.raises(ValueError, match="scrap_factor"):
        env.set_scrap_factor(-1)
