"""The ``sb3`` behaviour: a saved SB3 model as the expert half of an offline MetaBBO dataset."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

import gymforge  # noqa: F401 - registers the ids
from gymforge.adapters.sb3 import as_sb3_vec_env
from gymforge.baselines.metabbo import sb3
from gymforge.envs.metabbo import dataset

TINY = {"dimension": 2, "population_size": 10, "max_generations": 8}


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    from stable_baselines3 import PPO

    venv = gym.make_vec("MetaBBO-v0", num_envs=2, vectorization_mode="vector_entry_point", **TINY)
    model = PPO("MlpPolicy", as_sb3_vec_env(venv), n_steps=8, batch_size=16, n_epochs=1, seed=0)
    model.learn(total_timesteps=16)
    path = tmp_path_factory.mktemp("sb3") / "ppo.zip"
    model.save(str(path))
    return path


@pytest.fixture
def behaviors(monkeypatch):
    """A private copy of the behaviour table, so registering ``sb3`` does not leak."""
    monkeypatch.setattr(dataset, "BEHAVIORS", dict(dataset.BEHAVIORS))
    return dataset.BEHAVIORS


def test_mix_with_the_sb3_expert_logs_the_models_greedy_actions(model_path, behaviors, monkeypatch):
    monkeypatch.setenv(sb3.EXPERT_MODEL_ENV, str(model_path))
    sb3.register_behavior()
    sb3.register_behavior()  # idempotent
    assert behaviors["sb3"] == "gymforge.baselines.metabbo.sb3:SB3Expert"
    arrays, meta = dataset.collect(
        "MetaBBO-v0", behavior="mix", mu=0.5, expert="sb3", episodes=4, seed=0, env_kwargs=TINY
    )
    assert meta["behaviors"] == ["sb3", "random"] and meta["counts"] == {"sb3": 2, "random": 2}
    # the dataset names the model that generated the expert half, by content hash
    source = meta["behavior_provenance"]["sb3"]
    assert source["model"] == str(model_path) and source["actions"] == "greedy"
    assert source["model_sha256"] == hashlib.sha256(model_path.read_bytes()).hexdigest()
    assert "random" not in meta["behavior_provenance"]
    model = sb3.SB3PolicyAgent(model_path).model
    for i in np.flatnonzero(arrays["behavior"] == 0):
        n = arrays["lengths"][i]
        greedy, _ = model.predict(arrays["observations"][i, :n], deterministic=True)
        np.testing.assert_array_equal(arrays["actions"][i, :n], greedy)
    # the uniform random half is not the model's policy
    i = np.flatnonzero(arrays["behavior"] == 1)[0]
    greedy, _ = model.predict(arrays["observations"][i], deterministic=True)
    assert (arrays["actions"][i] != greedy).any()


def test_cli_collector_knows_the_sb3_behaviour(model_path, behaviors, monkeypatch, tmp_path):
    from gymforge.registry import get_spec

    assert (
        get_spec("MetaBBO-v0").dataset_collector
        == "gymforge.baselines.metabbo.behaviors:collect_cli"
    )
    monkeypatch.setenv(sb3.EXPERT_MODEL_ENV, str(model_path))
    out = tmp_path / "ds"
    argv = ["--behavior", "sb3", "--episodes", "2", "--out", str(out), "--dimension", "2"]
    argv += ["--population-size", "10", "--max-generations", "8"]
    assert sb3.collect_cli("MetaBBO-v0", argv) == 0
    data = dataset.load_dataset(out)
    assert data.metadata["behaviors"] == ["sb3"] and len(data) == 2


def test_registering_the_collector_does_not_import_stable_baselines3():
    """The collector of every MetaBBO id must work where the optional SB3 is not installed."""
    code = (
        "import sys, gymforge\n"
        "from gymforge.registry import get_spec, load_entry_point\n"
        "load_entry_point(get_spec('MetaBBO-v0').dataset_collector)\n"
        "from gymforge.baselines.metabbo.behaviors import register_behavior\n"
        "register_behavior()\n"
        "assert 'stable_baselines3' not in sys.modules, 'SB3 imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_sb3_expert_names_a_missing_model(behaviors, monkeypatch, tmp_path):
    env = gym.make_vec("MetaBBO-v0", num_envs=1, vectorization_mode="vector_entry_point", **TINY)
    monkeypatch.delenv(sb3.EXPERT_MODEL_ENV, raising=False)
    with pytest.raises(ValueError, match=sb3.EXPERT_MODEL_ENV):
        sb3.SB3Expert(env)
    monkeypatch.setenv(sb3.EXPERT_MODEL_ENV, str(tmp_path / "nope.zip"))
    with pytest.raises(FileNotFoundError, match="no SB3 model"):
        sb3.SB3Expert(env)


def test_log_error_reward_telescopes_to_the_normalised_log_reduction():
    venv = gym.make_vec("MetaBBO-v0", num_envs=3, vectorization_mode="vector_entry_point", **TINY)
    env = sb3.log_error_reward_env(as_sb3_vec_env(venv))
    env.seed(5)
    env.reset()
    rng = np.random.default_rng(0)
    total = np.zeros(3)
    ended: dict[int, float] = {}
    for _ in range(2 * TINY["max_generations"]):  # past the first episodes' ends (autoreset)
        env.step_async(rng.integers(0, 16, size=(3, 3)))
        _, reward, dones, infos = env.step_wait()
        assert (reward >= -1e-6).all()  # the best error never increases
        total += reward
        for i in np.flatnonzero(dones):
            e0, e = infos[i]["initial_error"], infos[i]["best_error"]
            floor = np.log10(sb3.ERROR_FLOOR)
            expected = (np.log10(max(e0, 1e-8)) - np.log10(max(e, 1e-8))) / (
                np.log10(max(e0, 1e-8)) - floor
            )
            ended.setdefault(i, float(total[i]))
            np.testing.assert_allclose(total[i], expected, rtol=1e-4, atol=1e-6)
            total[i] = 0.0
    assert len(ended) == 3 and max(ended.values()) > 0


def test_sampled_sb3_expert_is_seeded(model_path, behaviors, monkeypatch):
    monkeypatch.setenv(sb3.EXPERT_MODEL_ENV, str(model_path))
    monkeypatch.setenv(sb3.EXPERT_SAMPLE_ENV, "1")
    sb3.register_behavior()

    def run(seed):
        arrays, _ = dataset.collect(
            "MetaBBO-v0", behavior="sb3", episodes=2, seed=seed, env_kwargs=TINY
        )
        return arrays

    first, again, other = run(0), run(0), run(1)
    np.testing.assert_array_equal(first["actions"], again["actions"])
    assert (first["actions"] != other["actions"]).any()
    greedy, _ = sb3.SB3PolicyAgent(model_path).model.predict(
        first["observations"].reshape(-1, 9), deterministic=True
    )
    assert (first["actions"].reshape(-1, 3) != greedy).any()  # sampled, not greedy
