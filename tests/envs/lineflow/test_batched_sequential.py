"""The torch engine's carrier types, part-dependent times and sequential processes.

A line with noise-free stations whose processing times are known by hand: a source emits two
carrier types in random runs, a sequential process ``P`` works part by part (with an error on
one part), a process ``Q`` adds the carrier's parts' extra times. The observed processing times
must be exactly the hand-computed ones on both engines.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gymforge.envs.lineflow.batched.compiled import compile_line, unsupported_reason
from gymforge.envs.lineflow.batched.vector_env import LineFlowVecEnv
from gymforge.envs.lineflow.builder import LineBuilder
from gymforge.envs.lineflow.features import observation_features
from gymforge.envs.lineflow.gym_env import LineFlowEnv

T_P, T_Q, HANDLING, ERROR = 3.0, 1.0, 2.0, 0.5
# type A: part 1 errs (always, 0.5) then takes 3 + 3, part 2 takes 3 + 1 -> 10.5 at P; 1 at Q
# type B: one part at P (3), its second part only names Q: 1 + 2 -> 3 at Q
P_TIMES = {"A": ERROR + (T_P + 3.0) + (T_P + 1.0), "B": T_P}
Q_TIMES = {"A": T_Q, "B": T_Q + 2.0}
SCALE_P, SCALE_Q = 4 * T_P, 4 * T_Q  # features.timed_scale


def _line():
    line = LineBuilder("sequential_known_answer")
    line.source(
        "S",
        processing_time=1.0,
        processing_std=0.0,
        unlimited_carriers=True,
        carrier_min_creation=2,
        carrier_max_creation=3,
        carrier_specs={
            "A": {
                "a1": {
                    "P": {"extra_processing_time": 3.0, "error_probability": 1.0, "error_time": 0.5}
                },
                "a2": {"P": {"extra_processing_time": 1.0}},
            },
            "B": {"b1": {"P": {}}, "b2": {"Q": {"extra_processing_time": 2.0}}},
        },
    )
    line.sequential_process("P", processing_time=T_P, processing_std=0.0, handling_time=HANDLING)
    line.process("Q", processing_time=T_Q, processing_std=0.0)
    line.sink("Sink", processing_std=0.0)
    line.connect("S", "P", capacity=4, transition_time=2.0)
    line.connect("P", "Q", capacity=4, transition_time=2.0)
    line.connect("Q", "Sink", capacity=2, transition_time=1.0)
    return line.build()


def _columns(spec):
    names = [f.name for f in observation_features(spec)]
    return {n: names.index(n) for n in ("P.processing_time", "Q.processing_time", "P.mode=failing")}


def _observed_torch(spec, steps: int) -> np.ndarray:
    env = LineFlowVecEnv(num_envs=8, line=spec, horizon=float(steps))
    obs, _ = env.reset(seed=0)
    rows = [obs.numpy()]
    action = torch.zeros(8, env.single_action_space.shape[0], dtype=torch.long)
    for _ in range(steps - 1):
        obs, *_ = env.step(action)
        rows.append(obs.numpy())
    return np.concatenate(rows)


def _observed_simpy(spec, steps: int) -> np.ndarray:
    env = LineFlowEnv(line=spec, horizon=float(steps))
    rows = []
    for seed in range(2):
        obs, _ = env.reset(seed=seed)
        rows.append(obs)
        for _ in range(steps - 1):
            obs, *_ = env.step(np.zeros(env.action_space.shape, dtype=np.int64))
            rows.append(obs)
    return np.stack(rows)


def test_sequential__line_is_supported_and_typed():
    spec = _line()
    assert unsupported_reason(spec) is None
    line = compile_line(spec)
    # type 0 is the empty carrier, then A and B of the source
    assert line.part_count[1:, 1].tolist() == [2, 1]  # parts naming P (row 1)
    assert line.type_extra[1:, 2].tolist() == [0.0, 2.0]  # summed extra time at Q (row 2)


@pytest.mark.parametrize("engine", ["torch", "simpy"])
def test_sequential__processing_times_are_the_hand_computed_ones(engine):
    spec = _line()
    obs = _observed_torch(spec, 300) if engine == "torch" else _observed_simpy(spec, 300)
    col = _columns(spec)
    initial_p, initial_q = T_P / SCALE_P, T_Q / SCALE_Q
    expected_p = {initial_p} | {min(t / SCALE_P, 1.0) for t in P_TIMES.values()}
    expected_q = {initial_q} | {min(t / SCALE_Q, 1.0) for t in Q_TIMES.values()}
    seen_p = set(np.round(obs[:, col["P.processing_time"]], 6).tolist())
    seen_q = set(np.round(obs[:, col["Q.processing_time"]], 6).tolist())
    assert seen_p == {round(x, 6) for x in expected_p}
    assert seen_q == {round(x, 6) for x in expected_q}
    assert obs[:, col["P.mode=failing"]].max() == 1.0  # the error of part a1 is visible


def test_sequential__both_carrier_types_are_emitted_in_runs():
    spec = _line()
    env = LineFlowVecEnv(num_envs=4, line=spec, horizon=400.0)
    env.reset(seed=3)
    names = [f.name for f in observation_features(spec)]
    a, b = names.index("S.carrier_type=A"), names.index("S.carrier_type=B")
    action = torch.zeros(4, env.single_action_space.shape[0], dtype=torch.long)
    kinds, emitted = [], []
    for _ in range(399):
        obs, *_ = env.step(action)
        assert torch.all(obs[:, a] + obs[:, b] == 1.0)
        kinds.append(obs[:, b].clone())
        emitted.append(env.state.run_left[0].clone())  # row 0 (batch axis last)
    kinds = torch.stack(kinds)
    assert 0.2 < float(kinds.mean()) < 0.8  # both types, about equally often
    assert int(torch.stack(emitted).max()) <= 2  # runs of at most 3 (one already emitted)


def test_sequential__torch_engine_matches_simpy_in_distribution():
    spec, horizon, seeds = _line(), 300, 12
    env = LineFlowVecEnv(num_envs=seeds, line=spec, horizon=float(horizon))
    env.reset(seed=0)
    action = torch.zeros(seeds, env.single_action_space.shape[0], dtype=torch.long)
    for _ in range(horizon):
        *_, info = env.step(action)
    torch_parts = info["final_info"]["n_parts"].numpy()
    simpy_env = LineFlowEnv(line=spec, horizon=float(horizon))
    simpy_parts = []
    for seed in range(seeds):
        simpy_env.reset(seed=1000 + seed)
        for _ in range(horizon):
            *_, info = simpy_env.step(np.zeros(simpy_env.action_space.shape, dtype=np.int64))
        simpy_parts.append(info["n_parts"])
    simpy_parts = np.array(simpy_parts)
    se = np.sqrt(torch_parts.var(ddof=1) / seeds + simpy_parts.var(ddof=1) / seeds)
    assert abs(torch_parts.mean() - simpy_parts.mean()) <= 4 * se + 1.0, (torch_parts, simpy_parts)
