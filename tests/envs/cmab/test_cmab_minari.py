"""Off-CMAB logged plays through Minari: the same records as the folder format, read back."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("minari")

from gymforge.agents.cmab.agent import OfflineAgent
from gymforge.cli import main
from gymforge.core.datasets import DatasetError
from gymforge.envs.cmab.board_dataset import folder_sha256
from gymforge.envs.cmab.datasets import load_dataset
from gymforge.envs.cmab.minari_logged import collect_minari
from gymforge.envs.cmab.problem import params_hash
from gymforge.minari_datasets import load_minari

CASES = [
    ("OffCMAB-Cascade-v0", "ucb", '{"n_items": 12, "list_size": 3}'),
    ("OffCMAB-LLMCache-v0", "empty", '{"n_queries": 10, "cache_size": 3}'),
    ("OffCMAB-InfluenceMax-v0", "independent", '{"n_nodes": 12}'),
    ("OffCMAB-KPath-v0", "uniform", "{}"),
]


def collect(env_id: str, root, *options: str) -> int:
    return main(["dataset", "collect", env_id, *options, "--minari-root", str(root)])


@pytest.fixture
def minari_home(tmp_path, monkeypatch):
    """Minari's datasets folder for the test (what OfflineAgent.fit("minari:NAME") reads)."""
    root = tmp_path / "minari"
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(root))
    return root


@pytest.mark.parametrize(("env_id", "logging", "kwargs"), CASES, ids=[c[0] for c in CASES])
def test_minari_gives_the_folder_datasets_records_and_clcb_choice(
    env_id, logging, kwargs, tmp_path, minari_home
):
    options = ["--agent", logging, "--n", "300", "--seed", "5", "--kwargs", kwargs]
    assert collect(env_id, minari_home, *options, "--out", str(tmp_path / "folder")) == 0
    assert collect(env_id, minari_home, *options, "--minari", "logged-v0") == 0
    folder = load_dataset(tmp_path / "folder")
    logged = load_dataset("minari:logged-v0")
    assert sorted(logged.arrays) == sorted(folder.arrays)
    for key, array in folder.arrays.items():
        assert logged[key].dtype == array.dtype and logged[key].shape == array.shape, key
        np.testing.assert_array_equal(logged[key], array, err_msg=key)
    file_only = {"format", "format_version", "sha256", "arrays", "created"}
    assert logged.metadata == {k: v for k, v in folder.metadata.items() if k not in file_only}
    assert params_hash(logged.params) == params_hash(folder.params)
    assert folder_sha256("minari:logged-v0") == folder_sha256(tmp_path / "folder")

    env = gym.make(env_id, **json.loads(kwargs))
    env.reset(seed=5)
    from_folder = OfflineAgent(env, learner="clcb").fit(tmp_path / "folder")
    from_minari = OfflineAgent(env, learner="clcb").fit("minari:logged-v0")
    np.testing.assert_array_equal(from_minari, from_folder)


def test_the_minari_episode_holds_what_the_env_would_show(minari_home):
    k, m, n = 3, 12, 200
    kwargs = {"n_items": m, "list_size": k}
    collect_minari("OffCMAB-Cascade-v0", "uniform", n, "cascade-v0", seed=2, env_kwargs=kwargs)
    records = load_dataset("minari:cascade-v0").arrays
    dataset = load_minari("cascade-v0")
    (episode,) = list(dataset.iterate_episodes())
    assert dataset.total_steps == n and dataset.spec.env_spec.kwargs["horizon"] == n
    np.testing.assert_array_equal(episode.actions, records["action"])
    (episode_metadata,) = dataset.storage.get_episode_metadata([0])
    assert (episode_metadata["seed"], dataset.storage.metadata["gymforge"]["seed"]) == (2, 2)
    clicks = records["click_position"].astype(int)
    np.testing.assert_array_equal(episode.rewards, (clicks < k).astype(float))
    assert not episode.terminations.any() and episode.truncations.tolist() == [False] * (n - 1) + [
        True
    ]
    np.testing.assert_array_equal(episode.observations[0], np.zeros(2 * m + 1))
    np.testing.assert_array_equal(episode.infos["click_position"], np.r_[-1, clicks])
    for t in range(n):  # the env's observation: items examined, the item clicked, t / horizon
        obs, ranked = episode.observations[t + 1], records["action"][t]
        examined = np.zeros(m)
        examined[ranked[: clicks[t] + 1]] = 1
        clicked = np.zeros(m)
        if clicks[t] < k:
            clicked[ranked[clicks[t]]] = 1
        np.testing.assert_array_equal(obs[:m], examined, err_msg=f"play {t}")
        np.testing.assert_array_equal(obs[m : 2 * m], clicked, err_msg=f"play {t}")
        assert obs[-1] == np.float32(t + 1) / np.float32(n)
    # the recovered env takes the logged actions and its reset seed draws the logged instance
    env = dataset.recover_environment()
    assert env.action_space == dataset.action_space
    env.reset(seed=episode_metadata["seed"])
    recorded = dataset.storage.metadata["gymforge"]["instance_params_hash"]
    assert params_hash(env.unwrapped.params) == recorded


def test_cache_and_seed_set_actions_are_masks_of_any_size(minari_home):
    collect_minari("OffCMAB-InfluenceMax-v0", "independent", 100, "im-v0", q=0.3)
    dataset = load_minari("im-v0")
    (episode,) = list(dataset.iterate_episodes())
    assert isinstance(dataset.action_space, gym.spaces.MultiBinary)
    assert len(set(episode.actions.sum(1).tolist())) > 1  # seed sets of several sizes
    np.testing.assert_array_equal(
        episode.actions.astype(bool), load_dataset("minari:im-v0")["seeds"]
    )


def test_a_dataset_of_another_id_or_instance_is_refused_naming_the_field(minari_home):
    collect_minari("OffCMAB-Cascade-v0", "uniform", 50, "cascade-v0", seed=1)
    kpath = gym.make("OffCMAB-KPath-v0")
    kpath.reset(seed=1)
    with pytest.raises(ValueError, match="env_id 'OffCMAB-Cascade-v0'"):
        OfflineAgent(kpath).fit("minari:cascade-v0")
    cascade = gym.make("OffCMAB-Cascade-v0")
    cascade.reset(seed=0)  # another instance than the logged one
    agent = OfflineAgent(cascade)
    with pytest.raises(ValueError, match="instance_params_hash"):
        agent.fit("minari:cascade-v0")
    assert agent.super_arm is None
    cascade.reset(seed=1)
    assert agent.fit("minari:cascade-v0").shape == (5,)

    # a Minari dataset that is not Off-CMAB logged plays
    options = ["--agent", "random", "--episodes", "1", "--max-steps", "3", "--minari", "probe-v0"]
    assert collect("Probe-Match-v0", minari_home, *options) == 0
    with pytest.raises(DatasetError, match=r"'gymforge\.kind' is None"):
        load_dataset("minari:probe-v0")
    with pytest.raises(DatasetError, match="not found"):
        load_dataset("minari:absent-v0")

    # a recorded instance that no longer matches its env id, kwargs and seed
    dataset = load_minari("cascade-v0")
    metadata = dict(dataset.storage.metadata["gymforge"])
    dataset.storage.update_metadata({"gymforge": {**metadata, "seed": 0}})
    with pytest.raises(DatasetError, match="instance_params_hash"):
        load_dataset("minari:cascade-v0")


def test_cli_checks_its_targets_before_any_work(tmp_path, minari_home, capsys):
    base = ["--agent", "uniform", "--n", "20"]
    assert collect("OffCMAB-KPath-v0", minari_home, *base) == 2
    assert "give --out DIR" in capsys.readouterr().err
    assert collect("OffCMAB-KPath-v0", minari_home, *base, "--minari", "no version") == 2
    assert "--minari must be a Minari dataset id" in capsys.readouterr().err
    assert collect("OffCMAB-KPath-v0", minari_home, *base, "--minari", "k-v0") == 0
    assert "minari:k-v0" in capsys.readouterr().out
    assert main(["dataset", "info", "minari:k-v0", "--minari-root", str(minari_home)]) == 0
    assert '"kind": "offcmab-logged-plays"' in capsys.readouterr().out
    out = tmp_path / "folder"
    again = [*base, "--minari", "k-v0", "--out", str(out)]
    assert collect("OffCMAB-KPath-v0", minari_home, *again) == 2
    assert "exists; pass --overwrite" in capsys.readouterr().err
    assert not out.exists()  # refused before the folder was written
    assert collect("OffCMAB-KPath-v0", minari_home, *again, "--seed", "3", "--overwrite") == 0
    assert load_dataset("minari:k-v0").metadata["seed"] == 3 and out.exists()
