"""Minari round trip of every id with a family dataset collector: ``minari.load_dataset``,
``iterate_episodes``, ``recover_environment``, then replay. MetaBBO's episodes replay exactly;
Off-CMAB's logged episodes do not, and each dataset says why in its metadata
(``gymforge_replay``). (The ids without a family collector, LineFlow's among them, go through
``gymforge.minari_datasets``; their exact replay is tested in :mod:`tests.test_minari_datasets`.)
"""

from __future__ import annotations

import numpy as np
import pytest

from gymforge.envs.cmab.problem import params_hash
from gymforge.envs.metabbo.dataset import collect, export_minari, load_dataset, write_trajectories
from gymforge.registry import all_specs

minari = pytest.importorskip("minari")
from gymforge.envs.cmab.minari_logged import REPLAY_KEY, collect_minari  # noqa: E402 - needs minari

COLLECTED = [s for s in all_specs() if s.dataset_collector is not None]
METABBO = [s.id for s in COLLECTED if s.family == "metabbo"]
OFFCMAB = [s.id for s in COLLECTED if s.family == "cmab"]
TINY_METABBO = {"dimension": 2, "population_size": 24, "max_generations": 4}
SMALL_OFFCMAB = {
    "OffCMAB-Cascade-v0": {"n_items": 12, "list_size": 3},
    "OffCMAB-LLMCache-v0": {"n_queries": 10, "cache_size": 3},
    "OffCMAB-InfluenceMax-v0": {"n_nodes": 12},
    "OffCMAB-KPath-v0": {},
}
#: Off-CMAB applications whose logged actions are sets as masks, not the env's actions
MASKS = {"OffCMAB-LLMCache-v0", "OffCMAB-InfluenceMax-v0"}


@pytest.fixture
def minari_home(tmp_path, monkeypatch):
    root = tmp_path / "minari"
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(root))
    return root


def episode_seed(dataset, episode) -> int:
    return int(next(iter(dataset.storage.get_episode_metadata([episode.id])))["seed"])


def test_every_collector_family_is_covered():
    assert {s.family for s in COLLECTED} == {"metabbo", "cmab"}
    assert set(OFFCMAB) == set(SMALL_OFFCMAB)


@pytest.mark.parametrize("env_id", METABBO)
def test_metabbo_episodes_replay_exactly_on_the_recovered_env(env_id, tmp_path, minari_home):
    arrays, metadata = collect(
        env_id, behavior="random", episodes=2, seed=3, env_kwargs=TINY_METABBO
    )
    data = load_dataset(write_trajectories(tmp_path / "ds", arrays, metadata))
    export_minari(data, "gymforge/metabbo-v0", root=minari_home)
    dataset = minari.load_dataset("gymforge/metabbo-v0")
    env = dataset.recover_environment()
    assert env.spec.id == env_id and dataset.action_space == env.action_space
    for episode in dataset.iterate_episodes():
        obs, _ = env.reset(seed=episode_seed(dataset, episode))
        np.testing.assert_array_equal(obs, episode.observations[0])
        for t, action in enumerate(episode.actions):
            obs, reward, terminated, truncated, _ = env.step(action)
            np.testing.assert_array_equal(obs, episode.observations[t + 1], err_msg=f"step {t}")
            assert reward == pytest.approx(episode.rewards[t], rel=1e-6, abs=0)
            assert (terminated, truncated) == (episode.terminations[t], episode.truncations[t])


@pytest.mark.parametrize("env_id", OFFCMAB)
def test_offcmab_datasets_say_why_they_do_not_replay(env_id, minari_home):
    kwargs = SMALL_OFFCMAB[env_id]
    collect_minari(env_id, "uniform", 20, "logged-v0", seed=2, env_kwargs=kwargs)
    dataset = minari.load_dataset("logged-v0")
    flag = dataset.storage.metadata[REPLAY_KEY]
    assert flag["exact"] is False and "collector's own per-record random streams" in flag["why"]
    assert ("MultiBinary masks" in flag["why"]) == (env_id in MASKS)
    (episode,) = list(dataset.iterate_episodes())
    env = dataset.recover_environment()
    env.reset(seed=episode_seed(dataset, episode))  # the logged instance
    recorded = dataset.storage.metadata["gymforge"]["instance_params_hash"]
    assert params_hash(env.unwrapped.params) == recorded
    if env_id in MASKS:  # the flag's first reason: the logged masks are not env actions
        assert not env.action_space.contains(episode.actions[0].astype(env.action_space.dtype))
        return
    replayed = [env.step(action)[:2] for action in episode.actions]  # the flag's other reason
    same = all(
        np.array_equal(obs, episode.observations[t + 1]) and reward == episode.rewards[t]
        for t, (obs, reward) in enumerate(replayed)
    )
    assert not same
