"""CLI smoke: collect a tiny dataset, train Q-Mamba on it, act with the saved model in the env."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import torch

from gymforge.agents.metabbo.agent import load_agent, load_model
from gymforge.cli import main

TINY = ["--dimension", "2", "--population-size", "10", "--max-generations", "6"]


def test_collect_train_and_act_from_the_command_line(tmp_path, capsys):
    data = tmp_path / "data"
    model = tmp_path / "model"
    assert (
        main(
            [
                "dataset",
                "collect",
                "MetaBBO-v0",
                "--behavior",
                "random",
                "--episodes",
                "4",
                "--out",
                str(data),
                "--seed",
                "1",
                *TINY,
            ]
        )
        == 0
    )
    assert "wrote" in capsys.readouterr().out
    assert main(["dataset", "info", str(data)]) == 0
    assert '"behaviors"' in capsys.readouterr().out
    assert (
        main(
            [
                "train",
                "MetaBBO-v0",
                "--algo",
                "qmamba",
                "--dataset",
                str(data),
                "--out",
                str(model),
                "--epochs",
                "3",
                "--batch-size",
                "2",
                "--d-state",
                "4",
                "--checkpoint-every",
                "2",
                "--quiet",
            ]
        )
        == 0
    )
    _, record = load_model(model)
    assert len(record["history"]) == 3 and record["config"]["action_nvec"] == [16, 16, 16]
    # one checkpoint (after epoch 2 of 3), beside the final model, a model folder of its own
    checkpoints = tmp_path / "model.checkpoints"
    assert [p.name for p in checkpoints.iterdir()] == ["epoch_002"]
    _, at_two = load_model(checkpoints / "epoch_002")
    assert at_two["history"] == record["history"][:2]
    assert record["config"]["d_state"] == 4 and record["dataset"]["sha256"]
    assert record["train"]["batch_size"] == 2 and record["time_limit"] is None

    agent = load_agent(model)
    env = gym.make("MetaBBO-v0", dimension=2, population_size=10, max_generations=6)
    agent.reset()
    obs, info = env.reset(seed=5)
    done, steps = False, 0
    while not done:
        action = agent.act(obs, info)
        assert env.action_space.contains(action)
        obs, _, terminated, truncated, info = env.step(action)
        done, steps = terminated or truncated, steps + 1
    assert steps <= 6

    venv = gym.make_vec(
        "MetaBBO-v0",
        num_envs=3,
        vectorization_mode="vector_entry_point",
        array_backend="torch",
        dimension=2,
        population_size=10,
        max_generations=6,
    )
    obs, info = venv.reset(seed=0)
    agent.reset()
    for _ in range(8):  # crosses an autoreset
        action = agent.act(obs.numpy(), {k: np.asarray(v) for k, v in info.items()})
        assert action.shape == (3, 3)
        obs, _, _, _, info = venv.step(torch.as_tensor(action))


def test_cli_errors_are_clear(tmp_path, capsys):
    train = ["train", "MetaBBO-v0", "--algo", "qmamba", "--dataset", str(tmp_path / "none")]
    train += ["--out", str(tmp_path / "m")]
    code = main(train)
    assert code != 0 and "not a gymforge dataset" in capsys.readouterr().err
    code = main([*train, "--device", "gpu0"])  # checked before the (missing) dataset is read
    assert code != 0 and "--device must be one of" in capsys.readouterr().err
    code = main([*train, "--checkpoint-every", "-1"])  # also before the dataset is read
    assert code != 0 and "--checkpoint-every must be >= 0" in capsys.readouterr().err
    stale = tmp_path / "m.checkpoints" / "epoch_005"
    stale.mkdir(parents=True)  # another run's checkpoints: not mixed with this run's
    code = main([*train, "--checkpoint-every", "1"])
    assert code != 0 and "already holds checkpoints" in capsys.readouterr().err
    stale.rmdir()
    (tmp_path / "m.checkpoints").rmdir()
    code = main(
        [
            "dataset",
            "collect",
            "MetaBBO-v0",
            "--behavior",
            "mix",
            "--mu",
            "2",
            "--episodes",
            "2",
            "--out",
            str(tmp_path / "d"),
            *TINY,
        ]
    )
    assert code != 0 and "mu must be in" in capsys.readouterr().err
    assert not (tmp_path / "d").exists() and not (tmp_path / "m").exists()
