"""The stored Q-Mamba models: registered on the presets they were trained on, loadable, acting as
their labels say."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

import gymforge  # noqa: F401 - registers the ids
from gymforge.baselines.metabbo.qmamba_models import (
    CHOSEN_EPOCH_FOLDERS,
    MODEL_FOLDERS,
    MODEL_IDS,
    model_folder,
    qmamba_agent,
    qmamba_chosen_epochs_agent,
    qmamba_regularised_agent,
)
from gymforge.ids.metabbo import QMAMBA_CHOSEN_EPOCH_PRESETS, QMAMBA_PRESETS
from gymforge.registry import get_spec

PRESET_IDS = {
    "alg0": "MetaBBO",
    "alg1": "MetaBBO-Alg1",
    "alg2": "MetaBBO-Alg2",
    "pso": "MetaBBO-PSO",
}


def _actions(agent, obs, seed):
    agent.reset(seed=seed)
    return np.asarray(agent.act(obs))


def test_registered_exactly_on_the_presets_with_stored_models():
    assert set(QMAMBA_PRESETS) == set(MODEL_IDS)
    for preset, name in PRESET_IDS.items():
        for version in (0, 1):
            agents = set(get_spec(f"{name}-v{version}").agents)
            if preset in MODEL_IDS:
                assert set(MODEL_FOLDERS) <= agents
            else:
                assert not set(MODEL_FOLDERS) & agents
    with pytest.raises(ValueError, match="presets with models"):
        qmamba_agent(gym.make("MetaBBO-PSO-v0"))


@pytest.mark.parametrize("preset", sorted(MODEL_IDS))
def test_greedy_model_is_deterministic_and_the_regularised_one_samples(preset):
    venv = gym.make_vec(
        f"{PRESET_IDS[preset]}-v0", num_envs=8, vectorization_mode="vector_entry_point"
    )
    obs, _ = venv.reset(seed=0)
    greedy, regularised = qmamba_agent(venv), qmamba_regularised_agent(venv)
    g = [_actions(greedy, obs, seed) for seed in (1, 1, 2)]
    r = [_actions(regularised, obs, seed) for seed in (1, 1, 2)]
    assert np.array_equal(g[0], g[1]) and np.array_equal(g[0], g[2])  # greedy: seed-free
    assert np.array_equal(r[0], r[1]) and not np.array_equal(r[0], r[2])  # sampled, seeded
    assert all(venv.single_action_space.contains(a) for a in (*g[0], *r[0]))


@pytest.mark.parametrize("preset", sorted(MODEL_IDS))
def test_model_folders_record_their_training_and_data(preset):
    configs = {
        n: json.loads((model_folder(preset, n) / "config.json").read_text()) for n in MODEL_FOLDERS
    }
    assert all(c["env_id"] == MODEL_IDS[preset] for c in configs.values())
    assert configs["qmamba"]["config"]["bc_weight"] == 0.0
    assert configs["qmamba_regularised"]["config"]["bc_weight"] == 1.0
    assert configs["qmamba_regularised"]["config"]["temperature"] == pytest.approx(0.03)
    # the same dataset, and the paper's batch size and learning rate
    assert (
        configs["qmamba"]["dataset"]["sha256"] == configs["qmamba_regularised"]["dataset"]["sha256"]
    )
    for config in configs.values():
        assert config["train"]["batch_size"] == 64 and config["train"]["lr"] == pytest.approx(5e-3)
        assert (
            "--expert ppo_expert --mu 0.5 --episodes 10000" in config["dataset"]["collect_command"]
        )


def test_chosen_checkpoints_registered_where_stored_and_refused_elsewhere():
    assert set(QMAMBA_CHOSEN_EPOCH_PRESETS) == set(CHOSEN_EPOCH_FOLDERS) <= set(MODEL_IDS)
    for preset, name in PRESET_IDS.items():
        for version in (0, 1):
            agents = set(get_spec(f"{name}-v{version}").agents)
            assert ("qmamba_chosen_epochs" in agents) == (preset in CHOSEN_EPOCH_FOLDERS)
    unchosen = sorted(set(MODEL_IDS) - set(CHOSEN_EPOCH_FOLDERS))
    for preset in unchosen:
        with pytest.raises(ValueError, match="presets with one"):
            model_folder(preset, "qmamba_chosen_epochs")
    with pytest.raises(ValueError, match="qmamba_chosen_epochs"):
        model_folder("alg0", "qmamba_best")


@pytest.mark.parametrize("preset", sorted(CHOSEN_EPOCH_FOLDERS))
def test_chosen_checkpoint_is_a_greedy_model_of_its_preset_data(preset):
    folder = model_folder(preset, "qmamba_chosen_epochs")
    config = json.loads((folder / "config.json").read_text())
    shipped = json.loads((model_folder(preset, "qmamba") / "config.json").read_text())
    assert config["env_id"] == MODEL_IDS[preset] and config["config"]["bc_weight"] == 0.0
    assert config["dataset"]["sha256"] == shipped["dataset"]["sha256"]
    assert "--checkpoint-every" in config["training_command"] and "epoch_" in config["checkpoint"]
    venv = gym.make_vec(
        f"{PRESET_IDS[preset]}-v0", num_envs=8, vectorization_mode="vector_entry_point"
    )
    obs, _ = venv.reset(seed=0)
    chosen, shipped_agent = qmamba_chosen_epochs_agent(venv), qmamba_agent(venv)
    a = [_actions(chosen, obs, seed) for seed in (1, 2)]
    assert np.array_equal(a[0], a[1])  # greedy: seed-free
    assert not np.array_equal(a[0], _actions(shipped_agent, obs, 1))  # another network
