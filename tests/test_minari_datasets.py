"""Minari datasets for any single-agent id, and training from a Minari dataset id."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

pytest.importorskip("minari")

from gymforge.baselines import stored_model
from gymforge.cli import main
from gymforge.minari_datasets import load_minari
from gymforge.registry import all_specs

GENERIC = [s for s in all_specs() if not s.capabilities.multi_agent and s.dataset_collector is None]


def collect(env_id: str, root, *options: str) -> int:
    return main(["dataset", "collect", env_id, *options, "--minari-root", str(root)])


@pytest.mark.parametrize("spec", GENERIC, ids=[s.id for s in GENERIC])
def test_collected_episodes_replay_exactly_on_the_env(spec, tmp_path, capsys):
    name = f"{spec.id.lower()}-random-v0"
    options = ["--agent", "random", "--episodes", "2", "--max-steps", "15", "--seed", "3"]
    assert collect(spec.id, tmp_path, *options, "--minari", name) == 0
    assert f"wrote Minari dataset {name}: 2 episodes" in capsys.readouterr().out
    dataset = load_minari(name, tmp_path)
    env = gym.make(spec.id, max_episode_steps=15)
    assert dataset.observation_space == env.observation_space
    assert dataset.action_space == env.action_space
    for k, episode in enumerate(dataset.iterate_episodes()):
        obs, _ = env.reset(seed=3 + k)
        np.testing.assert_array_equal(episode.observations[0], obs)
        for t, action in enumerate(episode.actions):
            obs, reward, terminated, truncated, _ = env.step(action)
            np.testing.assert_array_equal(episode.observations[t + 1], obs, err_msg=f"step {t}")
            assert episode.rewards[t] == pytest.approx(reward, abs=0, rel=1e-6)
            assert (episode.terminations[t], episode.truncations[t]) == (terminated, truncated)
        assert terminated or truncated


def test_a_stored_model_and_a_reference_controller_collect_on_lineflow(tmp_path, capsys):
    model = str(stored_model("LineFlow-WaitingTime-v0", "ppo-seed11"))
    short = ["--episodes", "1", "--kwargs", '{"horizon": 200}']
    assert (
        collect(
            "LineFlow-WaitingTime-v0", tmp_path, "--agent", model, *short, "--minari", "wt-ppo-v0"
        )
        == 0
    )
    assert (
        collect(
            "LineFlow-WaitingTime-v0",
            tmp_path,
            "--agent",
            "optimal",
            *short,
            "--minari",
            "wt-opt-v0",
        )
        == 0
    )
    ppo, optimal = load_minari("wt-ppo-v0", tmp_path), load_minari("wt-opt-v0", tmp_path)
    assert ppo.total_steps == optimal.total_steps == 200
    described = ppo.storage.metadata["description"]
    assert "LineFlow-WaitingTime-v0" in described and model in described
    assert (
        collect(
            "LineFlow-WaitingTime-v0",
            tmp_path,
            "--agent",
            "optimal",
            *short,
            "--minari",
            "wt-opt-v0",
        )
        == 2
    )
    assert "exists; pass --overwrite" in capsys.readouterr().err


def test_pettingzoo_ids_and_unknown_agents_are_refused(tmp_path, capsys):
    assert collect("MinMax-Bilinear-v0", tmp_path, "--agent", "gda", "--episodes", "1") == 2
    assert "PettingZoo id" in capsys.readouterr().err
    args = ["--agent", "optimla", "--episodes", "1", "--minari", "x-v0"]
    assert collect("LineFlow-v0", tmp_path, *args) == 2
    assert "did you mean 'optimal'?" in capsys.readouterr().err


def test_qmamba_trains_the_same_from_a_minari_id_as_from_the_dataset_folder(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    tiny = ["--max-generations", "5", "--dimension", "2", "--population-size", "6"]
    collect_argv = ["dataset", "collect", "MetaBBO-v0", "--mix", "0.5", "--n", "4", *tiny]
    assert main([*collect_argv, "--out", str(tmp_path / "data"), "--minari", "bbo-v0"]) == 0
    train = ["train", "MetaBBO-v0", "--algo", "qmamba", "--epochs", "2", "--quiet"]
    assert main([*train, "--dataset", str(tmp_path / "data"), "--out", str(tmp_path / "a")]) == 0
    assert main([*train, "--dataset", "minari:bbo-v0", "--out", str(tmp_path / "b")]) == 0
    a = torch.load(tmp_path / "a" / "model.pt", weights_only=False)
    b = torch.load(tmp_path / "b" / "model.pt", weights_only=False)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_qmamba_fit_takes_a_minari_id(tmp_path, monkeypatch):
    from gymforge.agents.metabbo.train import TrainConfig, fit

    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    tiny = ["--max-generations", "4", "--dimension", "2", "--population-size", "6"]
    argv = ["dataset", "collect", "MetaBBO-v0", "--agent", "random", "--n", "3", *tiny]
    assert main([*argv, "--out", str(tmp_path / "data"), "--minari", "bbo-fit-v0"]) == 0
    by_id = fit("minari:bbo-fit-v0", train=TrainConfig(epochs=1))
    by_folder = fit(str(tmp_path / "data"), train=TrainConfig(epochs=1))
    assert by_id.history == by_folder.history and len(by_id.history) == 1
