"""The on-device trainer end to end: it learns, it is reproducible, its artifacts load everywhere
an SB3 model does, it resumes, and it refuses bad input before any work."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch

from gymforge.baselines.ondevice.agent import TorchPolicyAgent, read_policy
from gymforge.baselines.ondevice.ppo import PPO
from gymforge.baselines.ondevice.ppo_config import PPOConfig
from gymforge.baselines.ondevice.run import train
from gymforge.cli import main

QUIET = {"tensorboard": False, "log": lambda message: None}


def _tiny(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(text)
    return path


def _probe_return(agent: TorchPolicyAgent, episodes: int = 8) -> float:
    env = gym.make("Probe-Match-v0")
    total = 0.0
    for k in range(episodes):
        obs, _ = env.reset(seed=10_000 + k)
        agent.reset()
        done = False
        while not done:
            obs, reward, terminated, truncated, _ = env.step(agent.act(obs))
            total += float(reward)
            done = terminated or truncated
    return total / episodes


def test_ppo_learns_the_probe_task(tmp_path):
    """Probe-Match rewards naming the target shown in the observation: random play earns a
    quarter of the steps before it runs out of patience, a learned policy all 32."""
    config = _tiny(
        tmp_path,
        "version: 1\nn_envs: 64\neval: {every: 0}\nalgos:\n  ppo: {n_steps: 16, learning_rate: 0.003}\n",
    )
    result = train(
        "Probe-Match-v0", "ppo", 40_000, seed=1, out=tmp_path / "run", config_file=config, **QUIET
    )
    agent = TorchPolicyAgent(result.out / "policy.pt")
    assert _probe_return(agent) >= 30.0
    untrained = PPO(
        gym.make_vec(
            "Probe-Match-v0",
            num_envs=2,
            vectorization_mode="vector_entry_point",
            array_backend="torch",
        ),
        PPOConfig(),
        seed=1,
    )
    payload = {**read_policy(result.out / "policy.pt"), "state_dict": untrained.policy.state_dict()}
    assert _probe_return(TorchPolicyAgent(payload)) < 10.0


@pytest.mark.parametrize("algo", ["ppo", "a2c", "recurrentppo"])
def test_same_seed_same_run_on_cpu(tmp_path, algo):
    config = _tiny(
        tmp_path, "version: 1\nn_envs: 8\neval: {every: 0}\nalgos:\n  recurrentppo: {n_steps: 8}\n"
    )
    digests = []
    for name in ("a", "b"):
        result = train(
            "Probe-Match-v0", algo, 600, seed=3, out=tmp_path / name, config_file=config, **QUIET
        )
        state = read_policy(result.out)["state_dict"]
        digests.append(torch.cat([v.flatten().float() for v in state.values()]))
    assert torch.equal(digests[0], digests[1])
    other = train(
        "Probe-Match-v0", algo, 600, seed=4, out=tmp_path / "c", config_file=config, **QUIET
    )
    assert not torch.equal(
        digests[0],
        torch.cat([v.flatten().float() for v in read_policy(other.out)["state_dict"].values()]),
    )


def test_box_actions_and_obs_normalisation_on_minmax_tuning(tmp_path):
    config = _tiny(
        tmp_path,
        "version: 1\nn_envs: 16\neval: {every: 0}\nalgos:\n  ppo: {n_steps: 8, normalize_obs: true}\n",
    )
    result = train(
        "MinMaxTuning-v0", "ppo", 512, seed=0, out=tmp_path / "run", config_file=config, **QUIET
    )
    payload = read_policy(result.out)
    assert payload["spec"]["action_kind"] == "gaussian"
    assert payload["obs_norm"]["count"].item() > 0
    env = gym.make("MinMaxTuning-v0")
    obs, _ = env.reset(seed=0)
    action = TorchPolicyAgent(payload).act(obs)
    assert env.action_space.contains(np.asarray(action, dtype=np.float32))


def test_lineflow_run_writes_artifacts_evaluates_on_simpy_and_resumes(tmp_path):
    config = _tiny(
        tmp_path,
        "version: 1\nn_envs: 32\nframe_stack: 2\neval: {every: 1024, episodes: 1}\n"
        "checkpoint_every: 1024\nalgos:\n  ppo: {n_steps: 16}\n",
    )
    out = tmp_path / "run"
    first = train(
        "LineFlow-WaitingTime-v0", "ppo", 1024, seed=0, out=out, config_file=config, **QUIET
    )
    assert first.steps == 1024
    assert {p.name for p in out.iterdir()} >= {
        "policy.pt",
        "config.json",
        "evaluations.json",
        "checkpoints",
    }
    evaluations = json.loads((out / "evaluations.json").read_text())["evaluations"]
    assert evaluations[-1]["episodes"][0]["length"] == 4000  # a whole episode of the SimPy engine
    assert evaluations[-1]["episodes"][0]["seed"] == 2**62
    # a corrupt newest checkpoint is skipped with the previous one used
    resumed = train(None, None, 2048, resume=out, **QUIET)
    assert resumed.steps == 2048
    newest = out / "checkpoints" / "step_2048"
    (newest / "trainer.pt").write_bytes(b"truncated")
    again = train(None, None, 3072, resume=out, **QUIET)
    assert again.steps == 3072
    config_json = json.loads((out / "config.json").read_text())
    assert config_json["resumed_from"].endswith("step_1024")
    assert config_json["frame_stack"] == 2


def test_artifact_goes_through_evaluate_and_rollout(tmp_path, capsys):
    config = _tiny(
        tmp_path, "version: 1\nn_envs: 16\neval: {every: 0}\nalgos:\n  ppo: {n_steps: 8}\n"
    )
    result = train(
        "LineFlow-WaitingTime-v0",
        "ppo",
        128,
        seed=0,
        out=tmp_path / "run",
        config_file=config,
        **QUIET,
    )
    assert (
        main(["rollout", "LineFlow-WaitingTime-v0", "--agent", str(result.out), "--episodes", "1"])
        == 0
    )
    assert (
        main(
            [
                "rollout",
                "LineFlow-WaitingTime-v0",
                "--agent",
                str(result.out / "policy.pt"),
                "--num-envs",
                "4",
            ]
        )
        == 0
    )
    out_file = tmp_path / "results.json"
    code = main(
        [
            "evaluate",
            "--protocol",
            "lineflow/WaitingTime",
            "--agent",
            str(result.out),
            "--out",
            str(out_file),
            "--quiet",
        ]
    )
    assert code == 0
    results = json.loads(out_file.read_text())
    assert results["agent"]["kind"] == "torch_policy"


def test_stochastic_acting_samples_reproducibly_per_seed(tmp_path):
    config = _tiny(
        tmp_path, "version: 1\nn_envs: 8\neval: {every: 0}\nalgos:\n  ppo: {n_steps: 4}\n"
    )
    result = train(
        "MetaBBO-v0", "ppo", 64, seed=0, out=tmp_path / "run", config_file=config, **QUIET
    )
    obs = torch.rand(64, 9)
    greedy = TorchPolicyAgent(result.out / "policy.pt")
    sampler = TorchPolicyAgent(result.out / "policy.pt", stochastic=True)
    first = []
    for seed in (1, 1, 2):
        sampler.reset(seed=seed)
        first.append(torch.as_tensor(sampler.act(obs)))
    assert torch.equal(first[0], first[1]) and not torch.equal(first[0], first[2])
    # an untrained policy is close to uniform over 16 bins: samples vary, the greedy pick does not
    assert not torch.equal(first[0], torch.as_tensor(greedy.act(obs)))
    assert torch.equal(torch.as_tensor(greedy.act(obs)), torch.as_tensor(greedy.act(obs)))
    with pytest.raises(ValueError, match="stochastic must be True or False"):
        TorchPolicyAgent(result.out / "policy.pt", stochastic="yes")


def test_agent_acts_on_torch_batches_on_the_tensors_device(tmp_path):
    config = _tiny(
        tmp_path, "version: 1\nn_envs: 8\neval: {every: 0}\nalgos:\n  recurrentppo: {n_steps: 4}\n"
    )
    result = train(
        "LineFlow-WaitingTime-v0",
        "recurrentppo",
        64,
        seed=0,
        out=tmp_path / "run",
        config_file=config,
        **QUIET,
    )
    agent = TorchPolicyAgent(result.out)
    venv = gym.make_vec(
        "LineFlow-WaitingTime-v0",
        num_envs=3,
        vectorization_mode="vector_entry_point",
        array_backend="torch",
    )
    obs, _ = venv.reset(seed=0)
    action = agent.act(obs)
    assert isinstance(action, torch.Tensor) and action.shape == (3, 1)
    venv.step(action)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--steps", "0"], "steps must be an int >= 1"),
        (["--steps", "10", "--device", "tpu"], "device must be one of"),
        (["--steps", "10", "--n-envs", "0"], "n_envs must be an int >= 1"),
    ],
)
def test_bad_arguments_fail_before_any_work(tmp_path, capsys, argv, message):
    out = tmp_path / "run"
    code = main(
        [
            "train",
            "LineFlow-WaitingTime-v0",
            "--algo",
            "ppo",
            "--backend",
            "torch",
            "--out",
            str(out),
            *argv,
        ]
    )
    assert code == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_torch_backend_refuses_ids_without_a_batched_engine_and_unknown_algos(capsys):
    assert (
        main(
            [
                "train",
                "LineFlow-WaitingTime-v0",
                "--algo",
                "dqn",
                "--backend",
                "torch",
                "--steps",
                "10",
            ]
        )
        == 2
    )
    assert "--backend torch trains" in capsys.readouterr().err


def test_trainer_refuses_an_env_of_numpy_outputs():
    venv = gym.make_vec("Probe-Match-v0", num_envs=2, vectorization_mode="vector_entry_point")
    with pytest.raises(ValueError, match='array_backend="torch"'):
        PPO(venv, PPOConfig())


def test_partial_reset_resets_only_the_masked_instances():
    venv = gym.make_vec(
        "LineFlow-WaitingTime-v0",
        num_envs=3,
        vectorization_mode="vector_entry_point",
        array_backend="torch",
    )
    venv.reset(seed=5)
    for _ in range(50):
        obs, *_ = venv.step(torch.zeros(3, 1, dtype=torch.long))
    again, _ = venv.reset(options={"reset_mask": np.array([False, True, False])})
    assert torch.equal(again[0], obs[0]) and torch.equal(again[2], obs[2])
    assert not torch.equal(again[1], obs[1])
    with pytest.raises(ValueError, match="reset_mask"):
        venv.reset(options={"reset_mask": np.array([True, False])})


def test_every_batched_single_agent_id_trains_and_its_policy_acts_on_the_single_env(tmp_path):
    from gymforge.registry import all_specs

    ids = [s.id for s in all_specs() if s.vector_entry_point and not s.capabilities.multi_agent]
    assert len(ids) >= 20
    for env_id in ids:
        result = train(
            env_id,
            "ppo",
            8,
            n_envs=2,
            out=tmp_path / env_id,
            overrides={"eval": {"every": 0}, "algos": {"ppo": {"n_steps": 4}}},
            **QUIET,
        )
        env = gym.make(env_id)
        obs, _ = env.reset(seed=0)
        action = TorchPolicyAgent(result.out).act(obs)
        if isinstance(env.action_space, gym.spaces.Box):
            action = np.asarray(action, dtype=env.action_space.dtype)
        assert env.action_space.contains(action), (env_id, action)
        env.step(action)
        env.close()
