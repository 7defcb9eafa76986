"""The evaluator: differential checks against the rollout CLI, SB3's own loops and TorchScript."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
import torch
from leaderboard_helpers import ENV_ID, HORIZON, SEEDS, TASK, protocol_data, small_root

from gymforge.baselines.agent_loader import (
    SB3_ALGORITHMS,
    detect_sb3_algorithm,
    parse_agent_spec,
)
from gymforge.cli import main, rollout
from gymforge.hashing import sha256_file
from gymforge.leaderboards.evaluator import evaluate, run_episodes
from gymforge.leaderboards.files import write_json_atomic
from gymforge.leaderboards.protocol import load_protocol


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return small_root(tmp_path_factory.mktemp("board"))


@pytest.fixture(scope="module")
def protocol(root):
    return load_protocol(root, TASK)


def _manual_returns(policy, seeds=SEEDS, horizon=HORIZON):
    """Run ``policy(obs, t)`` on a fresh ``gym.make`` for each seed (the reference loop)."""
    env = gym.make(ENV_ID, horizon=horizon)
    returns = []
    for seed in seeds:
        obs, _ = env.reset(seed=seed)
        total, done, t = 0.0, False, 0
        while not done:
            obs, reward, terminated, truncated, _ = env.step(policy(obs, t))
            total += float(reward)
            done = terminated or truncated
            t += 1
        returns.append(total)
    return returns


def test_leaderboards__evaluate_matches_the_rollout_command(tmp_path):
    data = protocol_data(seeds=SEEDS[:2], horizon=4000)
    write_json_atomic(tmp_path / "protocols" / f"{TASK}.json", data)
    protocol = load_protocol(tmp_path, TASK)
    episodes = run_episodes(protocol, parse_agent_spec("optimal", ENV_ID))
    expected = rollout(ENV_ID, "optimal", episodes=2, seed=SEEDS[0])
    assert [e["return"] for e in episodes] == expected["returns"]
    assert [e["length"] for e in episodes] == expected["lengths"] == [4000, 4000]
    assert all(e["info"]["n_parts"] - e["info"]["n_scrap_parts"] == e["return"] for e in episodes)


def test_leaderboards__results_record_hashes_versions_and_aggregates(protocol):
    record = parse_agent_spec("gymforge.agents.lineflow:OptimalWaitingTimeAgent", ENV_ID)
    results = evaluate(protocol, record)
    assert results["protocol"] == {"version": 1, "sha256": sha256_file(protocol.path)}
    assert results["agent"]["kind"] == "entry_point"
    assert [e["seed"] for e in results["episodes"]] == SEEDS
    scores = [e["metric"] for e in results["episodes"]]
    assert results["aggregate"]["mean"] == pytest.approx(np.mean(scores))
    low, high = results["aggregate"]["ci95"]
    assert low <= results["aggregate"]["mean"] <= high
    assert results["aggregate"]["normalised"] == pytest.approx(
        protocol.normalise(float(np.mean(scores)))
    )
    assert results["provenance"]["versions"]["gymforge"]
    assert results["provenance"]["hardware"]["cpus"] >= 1
    assert results["env"]["spec"] is not None and ENV_ID in results["env"]["spec"]
    # same agent, same protocol: the same episodes
    assert evaluate(protocol, record)["episodes"] == results["episodes"]


def _sb3_env():
    return gym.make(ENV_ID, horizon=HORIZON)


def test_leaderboards__sb3_model_evaluates_like_sb3_predict(protocol, tmp_path):
    from stable_baselines3 import PPO

    model = PPO("MlpPolicy", _sb3_env(), seed=3)  # an untrained policy is a policy all the same
    path = tmp_path / "ppo_model.zip"
    model.save(path)
    assert detect_sb3_algorithm(path) == "ppo"
    by_path = run_episodes(protocol, parse_agent_spec(str(path), ENV_ID))
    by_name = run_episodes(protocol, parse_agent_spec(f"sb3:ppo:{path}", ENV_ID))
    expected = _manual_returns(lambda obs, t: model.predict(obs, deterministic=True)[0])
    assert [e["return"] for e in by_path] == [e["return"] for e in by_name] == expected


def test_leaderboards__frame_stacked_model_matches_sb3_vec_frame_stack(protocol, tmp_path):
    from stable_baselines3 import A2C
    from stable_baselines3.common.vec_env import DummyVecEnv, VecFrameStack

    venv = VecFrameStack(DummyVecEnv([_sb3_env]), n_stack=3)
    model = A2C("MlpPolicy", venv, seed=1)
    path = tmp_path / "a2c_stacked.zip"
    model.save(path)
    assert detect_sb3_algorithm(path) == "a2c"
    episodes = run_episodes(protocol, parse_agent_spec(str(path), ENV_ID))
    expected = []
    for seed in SEEDS:  # SB3's own frame stacking, first episode of each seed
        venv.seed(seed)
        obs = venv.reset()
        total, done = 0.0, False
        while not done:
            obs, reward, dones, _ = venv.step(model.predict(obs, deterministic=True)[0])
            total += float(reward[0])
            done = bool(dones[0])
        expected.append(total)
    assert [e["return"] for e in episodes] == expected


def test_leaderboards__recurrent_model_keeps_its_state_within_an_episode(protocol, tmp_path):
    from sb3_contrib import RecurrentPPO

    model = RecurrentPPO("MlpLstmPolicy", _sb3_env(), n_steps=32, batch_size=32, seed=2)
    path = tmp_path / "rppo.zip"
    model.save(path)
    assert detect_sb3_algorithm(path) == "recurrentppo"
    episodes = run_episodes(protocol, parse_agent_spec(str(path), ENV_ID))
    state = {}

    def policy(obs, t):
        if t == 0:
            state["lstm"] = None
        action, state["lstm"] = model.predict(
            obs[None], state=state["lstm"], episode_start=np.array([t == 0]), deterministic=True
        )
        return action[0]

    assert [e["return"] for e in episodes] == _manual_returns(policy)


@pytest.mark.parametrize(
    ("algorithm", "env_id"), [("dqn", "CartPole-v1"), ("sac", "Pendulum-v1"), ("trpo", ENV_ID)]
)
def test_leaderboards__sb3_algorithm_is_detected_from_the_file(tmp_path, algorithm, env_id):
    cls_path = SB3_ALGORITHMS[algorithm]
    module, _, name = cls_path.partition(":")
    cls = getattr(__import__(module, fromlist=[name]), name)
    env = gym.make(env_id, horizon=HORIZON) if env_id == ENV_ID else gym.make(env_id)
    path = tmp_path / f"{algorithm}.zip"
    cls("MlpPolicy", env).save(path)
    assert detect_sb3_algorithm(path) == algorithm


class _Fixed(torch.nn.Module):
    def __init__(self, value: int) -> None:
        super().__init__()
        self.value = value

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return torch.full((obs.shape[0], 1), self.value, dtype=torch.int64)


def test_leaderboards__torchscript_agent_runs_batched_module(protocol, tmp_path):
    path = tmp_path / "agent.pt"
    torch.jit.script(_Fixed(19)).save(str(path))
    record = parse_agent_spec(str(path), ENV_ID)
    assert record.kind == "torchscript" and record.sha256 == sha256_file(path)
    episodes = run_episodes(protocol, record)
    assert [e["return"] for e in episodes] == _manual_returns(lambda obs, t: np.array([19]))

    bad = tmp_path / "bad.pt"
    torch.jit.script(_Fixed(100)).save(str(bad))  # MultiDiscrete([100]) allows 0..99
    with pytest.raises(ValueError, match="outside the action space"):
        run_episodes(protocol, parse_agent_spec(f"torchscript:{bad}", ENV_ID))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nonexistent.zip", "file not found"),
        ("sb3:xgboost:model.zip", "ALGO in"),
        ("optimal_agent", "is not a reference agent"),
        ("gymforge.agents.lineflow:NoSuchAgent", "cannot import agent entry point"),
        ("no_such_module:Agent", "cannot import agent entry point"),
    ],
)
def test_leaderboards__bad_agent_spec_is_a_clear_error(root, tmp_path, capsys, spec, message):
    out = tmp_path / "results.json"
    args = ["evaluate", "--root", str(root), "--protocol", TASK, "--agent", spec, "--out", str(out)]
    assert main(args) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_leaderboards__evaluate_command_writes_results(root, tmp_path, capsys):
    out = tmp_path / "results.json"
    code = main(
        [
            "evaluate",
            "--root",
            str(root),
            "--protocol",
            "ShortWaitingTime",
            "--agent",
            "random",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert code == 0
    results = json.loads(out.read_text())
    assert results["task"] == TASK and results["aggregate"]["n"] == len(SEEDS)
    assert "normalised" in capsys.readouterr().out
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]  # no temporary leftovers
