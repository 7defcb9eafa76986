"""``gymforge train``: every algorithm trains, saves and reloads; resume; space errors."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

from gymforge.baselines.sb3 import load_agent
from gymforge.baselines.sb3.agent import SB3Agent
from gymforge.baselines.sb3.run import train
from gymforge.baselines.training.evaluation import run_episodes
from gymforge.cli import main

PROBE = "Probe-Match-v0"


def _train_cli(*args: str) -> int:
    return main(["train", *args])


@pytest.mark.parametrize("algo", ["ppo", "a2c", "dqn", "recurrentppo", "trpo"])
def test_train__each_algorithm_trains_saves_and_reloads(algo, tiny_config, tmp_path):
    out = tmp_path / algo
    rc = _train_cli(
        PROBE, "--algo", algo, "--steps", "256", "--seed", "3", "--config", str(tiny_config),
        "--out", str(out),
    )  # fmt: skip
    assert rc == 0
    config = json.loads((out / "config.json").read_text())
    assert config["algo"] == algo and config["env_id"] == PROBE and config["seed"] == 3
    assert config["format"] == "gymforge-sb3-agent"
    assert config["steps"] >= 256
    assert (out / "tb").is_dir()  # TensorBoard logs
    agent = load_agent(out)
    assert agent.model.num_timesteps == config["steps"]
    # the loaded agent is the saved model's deterministic policy
    env = gym.make(PROBE)
    obs, info = env.reset(seed=5)
    agent.reset(seed=5)
    expected, _ = agent.model.predict(obs[None], deterministic=True)
    if algo != "recurrentppo":
        assert agent.act(obs, info) == expected[0]
    assert env.action_space.contains(agent.act(obs, info))
    # and it evaluates reproducibly on held-out seeds
    first = run_episodes(load_agent(out / "model.zip"), PROBE, {}, [2**62, 2**62 + 1])
    second = run_episodes(load_agent(out), PROBE, {}, [2**62, 2**62 + 1])
    assert first == second


def test_train__sac_on_a_box_action_env(tiny_config, tmp_path):
    result = train("Pendulum-v1", "sac", 200, seed=0, out=tmp_path / "sac", config_file=tiny_config)
    assert result.steps >= 200
    agent = load_agent(tmp_path / "sac")
    action = agent.act(np.zeros(3, dtype=np.float32))
    assert action.shape == (1,) and -2.0 <= action[0] <= 2.0


def test_train__ppo_learns_the_probe_task(tmp_path):
    """Not a smoke test: PPO must name the shown target far better than chance (1/4)."""
    result = train(
        PROBE, "ppo", 6000, seed=0, out=tmp_path / "ppo",
        overrides={"n_envs": 4, "eval": {"every": 0},
                   "algos": {"ppo": {"n_steps": 128, "batch_size": 128, "learning_rate": 3e-3}}},
    )  # fmt: skip
    episodes = run_episodes(load_agent(result.out), PROBE, {}, [2**62 + k for k in range(5)])
    hits = sum(e["return"] for e in episodes) / sum(e["length"] for e in episodes)
    assert hits > 0.9


def test_train__vectorized_uses_the_torch_vector_env(tiny_config, tmp_path):
    out = tmp_path / "vec"
    rc = _train_cli(
        PROBE, "--algo", "ppo", "--steps", "128", "--vectorized", "--device", "cpu",
        "--n-envs", "4", "--config", str(tiny_config), "--out", str(out),
    )  # fmt: skip
    assert rc == 0
    config = json.loads((out / "config.json").read_text())
    assert config["vectorized"] is True and config["n_envs"] == 4
    assert config["steps"] == 256  # one rollout of 64 steps x 4 envs


def test_train__periodic_eval_uses_held_out_seeds(tiny_config, tmp_path):
    out = tmp_path / "ev"
    rc = _train_cli(
        PROBE, "--algo", "ppo", "--steps", "256", "--config", str(tiny_config),
        "--eval-every", "128", "--eval-episodes", "2", "--out", str(out),
    )  # fmt: skip
    assert rc == 0
    rows = json.loads((out / "evaluations.json").read_text())["evaluations"]
    assert [r["timesteps"] for r in rows] == [128, 256]
    for row in rows:
        assert [e["seed"] for e in row["episodes"]] == [2**62, 2**62 + 1]
        assert row["mean_return"] == pytest.approx(np.mean([e["return"] for e in row["episodes"]]))
    # the last evaluation ran the final model: re-evaluating the saved agent gives the same
    again = run_episodes(load_agent(out), PROBE, {}, [2**62, 2**62 + 1])
    assert again == rows[-1]["episodes"]


def test_train__resume_continues_the_step_count(tiny_config, tmp_path):
    out = tmp_path / "run"
    args = ["--algo", "ppo", "--config", str(tiny_config), "--out", str(out)]
    assert _train_cli(PROBE, *args, "--steps", "256", "--checkpoint-every", "128") == 0
    checkpoints = sorted(p.name for p in (out / "checkpoints").iterdir())
    assert checkpoints == ["step_128", "step_256"]
    assert _train_cli(PROBE, "--algo", "ppo", "--steps", "512", "--resume", str(out)) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["steps"] == 512 and config["resumed_from"] == str(out)
    assert load_agent(out).model.num_timesteps == 512
    # new checkpoints continue the count
    assert "step_384" in {p.name for p in (out / "checkpoints").iterdir()}
    # resuming from an older checkpoint folder writes into its run folder
    rc = _train_cli(
        PROBE, "--algo", "ppo", "--steps", "384", "--resume", str(out / "checkpoints" / "step_128")
    )
    assert rc == 0
    assert json.loads((out / "config.json").read_text())["steps"] == 384


def test_train__resume_refuses_fewer_steps_and_other_settings(tiny_config, tmp_path, capsys):
    out = tmp_path / "run"
    assert _train_cli(PROBE, "--algo", "ppo", "--steps", "128", "--config", str(tiny_config),
                      "--out", str(out)) == 0  # fmt: skip
    assert _train_cli(PROBE, "--algo", "ppo", "--steps", "128", "--resume", str(out)) == 2
    assert "must exceed the 128 steps already trained" in capsys.readouterr().err
    assert _train_cli(PROBE, "--algo", "a2c", "--steps", "512", "--resume", str(out)) == 2
    assert "trained algo 'ppo', not 'a2c'" in capsys.readouterr().err
    rc = _train_cli(PROBE, "--algo", "ppo", "--steps", "512", "--resume", str(out), "--n-envs", "3")
    assert rc == 2 and "--resume continues a run with its own settings" in capsys.readouterr().err
    # an existing run is never overwritten by a fresh one
    assert _train_cli(PROBE, "--algo", "ppo", "--steps", "128", "--out", str(out)) == 2
    assert "already holds a run" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("env_id", "algo", "words"),
    [
        (PROBE, "sac", ["'sac'", "Discrete(4)", "['Box']", "['a2c', 'dqn', 'ppo', 'recurrentppo', 'trpo']"]),
        ("LineFlow-WaitingTime-v0", "dqn", ["'dqn'", "MultiDiscrete([100])", "['Discrete']", "'ppo'"]),
    ],
)  # fmt: skip
def test_train__wrong_algorithm_for_the_space_is_a_clear_error(
    env_id, algo, words, tmp_path, capsys
):
    out = tmp_path / "x"
    assert _train_cli(env_id, "--algo", algo, "--steps", "100", "--out", str(out)) == 2
    err = capsys.readouterr().err
    for word in words:
        assert word in err
    assert not out.exists()


def test_train__unknown_algorithm_lists_the_allowed(capsys):
    assert _train_cli(PROBE, "--algo", "ddpg", "--steps", "10") == 2
    err = capsys.readouterr().err
    assert "'ddpg'" in err and "'ppo'" in err and "'trpo'" in err


def test_agent__frame_stack_matches_sb3_vec_frame_stack(tmp_path):
    """The agent's own stacking equals what the model saw in training (SB3's VecFrameStack)."""
    from stable_baselines3.common.vec_env import DummyVecEnv, VecFrameStack

    result = train(
        PROBE, "ppo", 64, seed=1, out=tmp_path / "fs",
        overrides={"n_envs": 1, "frame_stack": 3, "eval": {"every": 0},
                   "algos": {"ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1}}},
    )  # fmt: skip
    agent = load_agent(result.out)
    assert agent.frame_stack == 3
    stacked_seen: list[np.ndarray] = []
    original = agent._stacked

    def spy(obs):  # what the model is handed
        stacked = original(obs)
        stacked_seen.append(np.array(stacked[0]))
        return stacked

    agent._stacked = spy
    venv = VecFrameStack(DummyVecEnv([lambda: gym.make(PROBE)]), n_stack=3)
    venv.seed(7)
    reference = venv.reset()
    env = gym.make(PROBE)
    obs, _ = env.reset(seed=7)
    agent.reset(seed=7)
    for _ in range(5):
        action = agent.act(obs)
        np.testing.assert_array_equal(stacked_seen[-1], reference[0])
        obs, *_ = env.step(action)
        reference, *_ = venv.step(np.array([action]))


def test_agent__acts_on_batches(tiny_config, tmp_path):
    result = train(PROBE, "ppo", 128, out=tmp_path / "b", config_file=tiny_config)
    agent = load_agent(result.out)
    batch = np.eye(6, dtype=np.float32)[:4]
    actions = agent.act(batch)
    assert actions.shape == (4,)
    for i in range(4):
        assert actions[i] == agent.act(batch[i])
    with pytest.raises(ValueError, match=r"observation shape must be \(6,\)"):
        agent.act(np.zeros(5, dtype=np.float32))


def test_agent__load_errors_name_the_missing_file(tmp_path):
    with pytest.raises(ValueError, match="no SB3 model"):
        load_agent(tmp_path)
    (tmp_path / "model.zip").write_bytes(b"")
    with pytest.raises(ValueError, match=r"no config\.json"):
        load_agent(tmp_path)


def test_sb3_agent_is_exported():
    assert SB3Agent.__name__ == "SB3Agent"


def test_train__results_are_reproducible_for_a_seed(tiny_config, tmp_path):
    a = train(PROBE, "ppo", 128, seed=4, out=tmp_path / "a", config_file=tiny_config)
    b = train(PROBE, "ppo", 128, seed=4, out=tmp_path / "b", config_file=tiny_config)
    pa = load_agent(a.out).model.policy.state_dict()
    pb = load_agent(b.out).model.policy.state_dict()
    for key in pa:
        np.testing.assert_array_equal(pa[key].numpy(), pb[key].numpy())


def test_cli__every_algorithm_is_a_train_row_with_its_own_help(capsys):
    from gymforge.commands.train import TRAINERS

    for algo in ("ppo", "a2c", "dqn", "sac", "recurrentppo", "trpo"):
        assert TRAINERS[algo] == f"gymforge.baselines.sb3.cli:train_{algo}"
    with pytest.raises(SystemExit):
        main(["train", PROBE, "--algo", "trpo", "--help"])
    help_text = capsys.readouterr().out
    assert "gymforge train Probe-Match-v0 --algo trpo" in help_text
    for option in ("--steps", "--seed", "--n-envs", "--vectorized", "--config", "--resume"):
        assert option in help_text
