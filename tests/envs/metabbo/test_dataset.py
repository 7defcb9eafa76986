"""MetaBBO offline datasets: collection, reload, consistency with the env, tampering, Minari."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gymforge.core.datasets import DatasetError
from gymforge.envs.metabbo.dataset import (
    collect,
    export_minari,
    load_dataset,
    write_trajectories,
)

TINY = {"dimension": 2, "population_size": 10, "max_generations": 8}


@pytest.fixture(scope="module")
def random_data():
    return collect("MetaBBO-v0", behavior="random", episodes=4, seed=3, env_kwargs=TINY)


def test_collect_writes_a_dataset_that_reloads_with_the_same_arrays(random_data, tmp_path):
    arrays, metadata = random_data
    path = write_trajectories(tmp_path / "ds", arrays, metadata)
    data = load_dataset(path)
    assert len(data) == 4
    assert data.observations.shape == (4, 8, 9) and data.observations.dtype == np.float32
    assert data.actions.shape == (4, 8, 3) and data.actions.dtype == np.int64
    for name, value in arrays.items():
        assert np.array_equal(data.arrays[name], value), name
    meta = data.metadata
    assert meta["env_id"] == "MetaBBO-v0" and meta["behaviors"] == ["random"]
    assert meta["mu"] is None and meta["seed"] == 3 and meta["preset"] == "alg0"
    assert meta["split"] == "easy" and meta["subset"] == "train"
    assert meta["action_nvec"] == [16, 16, 16] and "gymforge_version" in meta
    assert list(data.arrays["episode_seeds"]) == [3, 4, 5, 6]
    # easy/train split functions only
    assert set(data.arrays["function_ids"]) <= {
        4,
        6,
        7,
        8,
        9,
        10,
        11,
        12,
        13,
        14,
        18,
        19,
        20,
        22,
        23,
        24,
    }


def test_rewards_telescope_to_perf_and_padding_is_zero(random_data):
    arrays, _ = random_data
    valid = np.arange(8)[None, :] < arrays["lengths"][:, None]
    perf = 1.0 - arrays["final_error"] / arrays["initial_error"]
    np.testing.assert_allclose((arrays["rewards"] * valid).sum(1), perf, rtol=1e-4, atol=1e-5)
    assert (arrays["rewards"][~valid] == 0).all()
    rows = np.arange(4)
    last = arrays["lengths"] - 1
    assert np.array_equal(arrays["best_errors"][rows, last], arrays["final_error"])
    previous = np.concatenate([arrays["initial_error"][:, None], arrays["best_errors"][:, :-1]], 1)
    expected = (previous - arrays["best_errors"]) / arrays["initial_error"][:, None]
    np.testing.assert_allclose(arrays["rewards"][valid], expected[valid], rtol=1e-5, atol=1e-7)
    assert (arrays["actions"] >= 0).all() and (arrays["actions"] < 16).all()
    last = arrays["lengths"] - 1
    ended = arrays["terminations"][np.arange(4), last] | arrays["truncations"][np.arange(4), last]
    assert ended.all()


def test_episodes_do_not_depend_on_the_batching(random_data):
    arrays, _ = random_data
    chunked, _ = collect(
        "MetaBBO-v0", behavior="random", episodes=4, seed=3, env_kwargs=TINY, batch_size=2
    )
    # the env's instances are batch-independent; random actions of the two chunks differ
    # (one random agent per batch), so compare what does not depend on the policy
    assert np.array_equal(chunked["function_ids"], arrays["function_ids"])
    assert np.array_equal(chunked["instance_ids"], arrays["instance_ids"])
    assert np.array_equal(chunked["observations"][:, 0], arrays["observations"][:, 0])


def test_tampering_and_bad_shapes_are_detected(random_data, tmp_path):
    arrays, metadata = random_data
    path = write_trajectories(tmp_path / "ds", arrays, metadata)
    raw = bytearray((path / "data.npz").read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    (path / "data.npz").write_bytes(bytes(raw))
    with pytest.raises(DatasetError, match="checksum mismatch"):
        load_dataset(path)

    path2 = write_trajectories(tmp_path / "ds2", arrays, metadata)
    meta = json.loads((path2 / "metadata.json").read_text())
    meta["action_nvec"] = [16, 16]
    (path2 / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(DatasetError, match="'actions' has shape"):
        load_dataset(path2)

    bad = {**arrays, "rewards": arrays["rewards"][:, :-1]}
    with pytest.raises(DatasetError, match="'rewards' has shape"):
        write_trajectories(tmp_path / "ds3", bad, metadata)
    assert not (tmp_path / "ds3").exists()
    with pytest.raises(DatasetError, match="not a gymforge dataset"):
        load_dataset(tmp_path / "missing")


def test_bad_collection_options_are_named():
    with pytest.raises(ValueError, match="mu must be in"):
        collect("MetaBBO-v0", behavior="mix", mu=1.5, episodes=2, env_kwargs=TINY)
    with pytest.raises(ValueError, match="only applies to --behavior mix"):
        collect("MetaBBO-v0", behavior="random", mu=0.5, episodes=2, env_kwargs=TINY)
    with pytest.raises(ValueError, match="--behavior must be"):
        collect("MetaBBO-v0", behavior="nonsense", episodes=2, env_kwargs=TINY)
    with pytest.raises(ValueError, match="episodes must be"):
        collect("MetaBBO-v0", behavior="random", episodes=0, env_kwargs=TINY)


def test_minari_export_reads_back(random_data, tmp_path, monkeypatch):
    minari = pytest.importorskip("minari")
    arrays, metadata = random_data
    data = load_dataset(write_trajectories(tmp_path / "ds", arrays, metadata))
    export_minari(data, "gymforge/metabbo-tiny-v0", root=tmp_path / "minari")
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    loaded = minari.load_dataset("gymforge/metabbo-tiny-v0")
    assert loaded.total_episodes == 4
    assert loaded.total_steps == int(arrays["lengths"].sum())
    for i, episode in enumerate(loaded.iterate_episodes()):
        n = int(arrays["lengths"][i])
        assert episode.observations.shape == (n + 1, 9)
        np.testing.assert_array_equal(episode.actions, arrays["actions"][i, :n])
        np.testing.assert_allclose(episode.rewards, arrays["rewards"][i, :n])
        np.testing.assert_array_equal(episode.observations[-1], arrays["final_observations"][i])
    assert "gymforge metadata" in loaded.storage.metadata["description"]
    assert loaded.env_spec.id == "MetaBBO-v0" and loaded.env_spec.kwargs["max_generations"] == 8


def test_mix_runs_the_expert_on_a_fraction_mu_of_the_episodes():
    pytest.importorskip("gymforge.baselines.metabbo.adaptive")
    arrays, meta = collect(
        "MetaBBO-v0", behavior="mix", mu=0.5, expert="jde", episodes=6, seed=0, env_kwargs=TINY
    )
    assert meta["behaviors"] == ["jde", "random"] and meta["mu"] == 0.5
    assert meta["counts"] == {"jde": 3, "random": 3}
    assert meta["behavior_entry_points"]["jde"].endswith(":JDEAgent")
    assert sorted(arrays["behavior"].tolist()) == [0, 0, 0, 1, 1, 1]

    # jDE mostly repeats its last successful values; uniform random actions hardly ever repeat
    def distinct(rows):
        return len({tuple(a) for a in arrays["actions"][rows].reshape(-1, 3)})

    assert distinct(arrays["behavior"] == 0) < 0.5 * distinct(arrays["behavior"] == 1)
    with pytest.raises(ValueError, match="--expert must be one of"):
        collect("MetaBBO-v0", behavior="mix", expert="random", episodes=2, env_kwargs=TINY)
