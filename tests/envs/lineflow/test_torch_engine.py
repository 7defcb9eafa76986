"""The torch engine against the SimPy engine (the oracle): quick parity, spaces, support."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

from gymforge.envs.lineflow.batched.compiled import unsupported_reason
from gymforge.envs.lineflow.batched.vector_env import LineFlowVecEnv
from gymforge.envs.lineflow.builder import LineBuilder
from gymforge.envs.lineflow.gym_env import LineFlowEnv
from gymforge.envs.lineflow.scenarios import make_scenario
from gymforge.registry import all_specs

LINEFLOW = [s for s in all_specs() if s.family == "lineflow"]
BATCHED = [s for s in LINEFLOW if s.capabilities.batched]
HORIZON, SEEDS = 300, 12


def _kwargs(spec):
    return {k: v for k, v in spec.kwargs.items() if k in ("scenario", "scenario_kwargs")}


@pytest.mark.parametrize("spec", LINEFLOW, ids=[s.id for s in LINEFLOW])
def test_lineflow__registry_declares_batched_exactly_where_the_engine_supports_the_line(spec):
    kwargs = _kwargs(spec)
    line = make_scenario(kwargs["scenario"], **kwargs.get("scenario_kwargs", {}))
    assert (unsupported_reason(line) is None) == spec.capabilities.batched


def _torch_parts(spec, policy_seed: int) -> np.ndarray:
    env = LineFlowVecEnv(num_envs=SEEDS, horizon=HORIZON, **_kwargs(spec))
    env.reset(seed=0)
    rng = np.random.default_rng(policy_seed)
    space = env.single_action_space
    for _ in range(HORIZON):
        action = (
            np.stack([rng.integers(0, space.nvec) for _ in range(SEEDS)])
            if space.shape[0]
            else np.zeros((SEEDS, 0))
        )
        *_, info = env.step(torch.as_tensor(action, dtype=torch.long))
    return info["final_info"]["n_parts"].numpy()


def _simpy_parts(spec, policy_seed: int) -> np.ndarray:
    env = LineFlowEnv(horizon=HORIZON, **_kwargs(spec))
    rng = np.random.default_rng(policy_seed)
    parts = []
    for seed in range(SEEDS):
        env.reset(seed=1000 + seed)
        for _ in range(HORIZON):
            *_, info = env.step(rng.integers(0, env.action_space.nvec))
        parts.append(info["n_parts"])
    return np.array(parts)


@pytest.mark.parametrize("spec", BATCHED, ids=[s.id for s in BATCHED])
def test_lineflow__torch_engine_matches_simpy_in_distribution(spec):
    """Random policy, 12 seeds, 300 steps, every batched line: the means agree within 4 standard
    errors (+1 part). A smoke check with little power; the paper lines' check sized to catch a
    3 % bias is ``test_parity_power.py``, the full criterion ``benchmarks/lineflow/parity.py``.
    """
    torch_parts, simpy_parts = _torch_parts(spec, 1), _simpy_parts(spec, 2)
    se = np.sqrt(torch_parts.var(ddof=1) / SEEDS + simpy_parts.var(ddof=1) / SEEDS)
    assert abs(torch_parts.mean() - simpy_parts.mean()) <= 4 * se + 1.0, (torch_parts, simpy_parts)


def test_lineflow__vector_env_has_the_scalar_spaces_and_rejects_unsupported_lines():
    venv = gym.make_vec(
        "LineFlow-ComplexLine-v0", num_envs=3, vectorization_mode="vector_entry_point"
    )
    env = gym.make("LineFlow-ComplexLine-v0")
    assert venv.single_observation_space == env.observation_space
    assert venv.single_action_space == env.action_space
    line = LineBuilder("nok")
    line.source("S", nok_probability=0.1, unlimited_carriers=True)
    line.sink("Sink")
    line.connect("S", "Sink")
    with pytest.raises(ValueError, match="NOK parts are not supported yet"):
        LineFlowVecEnv(num_envs=2, line=line.build())


@pytest.mark.gpu
def test_lineflow__torch_engine_runs_on_cuda():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device on this machine")
    venv = LineFlowVecEnv(num_envs=256, device="cuda", scenario="worker_assignment")
    obs, _ = venv.reset(seed=0)
    for _ in range(50):
        obs, *_ = venv.step(
            torch.zeros(256, venv.single_action_space.shape[0], dtype=torch.long, device="cuda")
        )
    assert obs.device.type == "cuda" and obs.shape == (256, *venv.single_observation_space.shape)


def test_lineflow__controllers_drive_the_batched_engine():
    """The reference controllers act on batched observations and reach their level on the torch engine."""
    from gymforge.agents.lineflow import BestPartitionAgent

    venv = LineFlowVecEnv(num_envs=2, scenario="worker_assignment", horizon=400)
    agent = BestPartitionAgent(venv)
    obs, _ = venv.reset(seed=0)
    total = torch.zeros(2)
    for _ in range(400):
        obs, reward, *_ = venv.step(torch.as_tensor(agent.act(obs.numpy())))
        total += reward
    assert torch.all(total >= 20)  # the SimPy engine finishes 22–24 parts by t = 400 this way


def test_lineflow__controllers_drive_a_batch_split_over_worker_processes():
    """``num_workers=2``: the controller reads the line description (``shared_attributes``) from
    the sharded env and gets the same observations and rewards as on the one-process env."""
    from gymforge.agents.lineflow import BestPartitionAgent

    make = {
        "num_envs": 3,
        "vectorization_mode": "vector_entry_point",
        "array_backend": "torch",
        "horizon": 60,
    }
    plain = gym.make_vec("LineFlow-WorkerAssignment-v0", **make)
    sharded = gym.make_vec("LineFlow-WorkerAssignment-v0", num_workers=2, **make)
    try:
        assert sharded.line == plain.line and sharded.horizon == plain.horizon
        agents = [BestPartitionAgent(plain), BestPartitionAgent(sharded)]
        obs = [plain.reset(seed=4)[0], sharded.reset(seed=4)[0]]
        for _ in range(70):  # (past the end of the first episode)
            actions = [torch.as_tensor(a.act(o.numpy())) for a, o in zip(agents, obs, strict=True)]
            assert torch.equal(actions[0], actions[1])
            a, b = plain.step(actions[0]), sharded.step(actions[1])
            assert all(torch.equal(x, y) for x, y in zip(a[:4], b[:4], strict=True))
            obs = [a[0], b[0]]
    finally:
        sharded.close()
