"""Logged datasets: collection through the CLI, round trip, tampering, coverage coefficients."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gymforge.cli import main
from gymforge.core.datasets import DatasetError
from gymforge.envs.cmab.collect import collect
from gymforge.envs.cmab.datasets import coverage, load_dataset


def test_cli_collects_a_dataset_that_reloads_with_its_metadata(tmp_path):
    out = tmp_path / "cascade"
    code = main(
        ["dataset", "collect", "OffCMAB-Cascade-v0", "--logging", "uniform", "--n", "300",
         "--out", str(out), "--seed", "4", "--kwargs", '{"n_items": 20}']
    )  # fmt: skip
    assert code == 0
    dataset = load_dataset(out)
    meta = dataset.metadata
    assert (meta["env_id"], meta["logging"], meta["n"], meta["seed"]) == (
        "OffCMAB-Cascade-v0", "uniform", 300, 4
    )  # fmt: skip
    assert meta["env_kwargs"] == {"n_items": 20} and len(meta["sha256"]) == 64
    assert len(meta["instance_params_hash"]) == 64
    assert dataset["action"].shape == (300, 5) and dataset["action"].max() < 20
    # the same options give the same records
    again = collect("OffCMAB-Cascade-v0", "uniform", 300, tmp_path / "again", seed=4,
                    env_kwargs={"n_items": 20})  # fmt: skip
    np.testing.assert_array_equal(load_dataset(again)["action"], dataset["action"])


def test_tampered_data_fail_the_checksum(tmp_path):
    path = collect("OffCMAB-KPath-v0", "uniform", 50, tmp_path / "kpath", seed=0)
    data = path / "data.npz"
    raw = bytearray(data.read_bytes())
    raw[-40] ^= 0xFF
    data.write_bytes(bytes(raw))
    with pytest.raises(DatasetError, match="checksum"):
        load_dataset(path)


def test_a_changed_instance_is_detected(tmp_path):
    path = collect("OffCMAB-Cascade-v0", "uniform", 50, tmp_path / "cascade", seed=0)
    meta_path = path / "metadata.json"
    meta = json.loads(meta_path.read_text())
    meta["seed"] = 1  # now the rebuilt instance differs from the logged one
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(DatasetError, match="instance_params_hash"):
        load_dataset(path)


def test_bad_options_fail_before_anything_is_written(tmp_path):
    with pytest.raises(ValueError, match="logging policy for cascade must be one of"):
        collect("OffCMAB-Cascade-v0", "empty", 10, tmp_path / "x")
    with pytest.raises(ValueError, match="n must be >= 1"):
        collect("OffCMAB-Cascade-v0", "uniform", 0, tmp_path / "x")
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    ("env_id", "logging", "keys"),
    [
        ("OffCMAB-LLMCache-v0", "empty", {"cached", "query", "miss", "cost"}),
        ("OffCMAB-InfluenceMax-v0", "independent", {"seeds", "activation_round"}),
        ("OffCMAB-Cascade-v0", "lcb", {"action", "click_position"}),
    ],
)
def test_every_application_collects(tmp_path, env_id, logging, keys):
    dataset = load_dataset(collect(env_id, logging, 200, tmp_path / "d", seed=2))
    assert set(dataset.arrays) == keys
    if logging == "empty":
        assert bool(dataset["miss"].all()) and not dataset["cached"].any()


def test_kpath_uniform_coverage_by_hand(tmp_path):
    dataset = load_dataset(collect("OffCMAB-KPath-v0", "uniform", 4000, tmp_path / "k", seed=0))
    counts, _ = dataset.arm_statistics()
    result = coverage(dataset.problem, dataset.params, counts, dataset.n)
    # S* triggers its 5 edges surely; uniform logging over 2 paths triggers each w.p. 1/2
    assert result["K_star"] == 5 and result["K_bar"] == 5 and result["K_bar_2"] == 5
    assert result["C_inf"] == pytest.approx(2.0, rel=0.05)
    assert result["C_1"] == pytest.approx(10.0, rel=0.05)


def test_out_of_distribution_cache_logging_has_finite_coverage_on_covered_arms(tmp_path):
    dataset = load_dataset(
        collect("OffCMAB-LLMCache-v0", "empty", 3000, tmp_path / "c", seed=0,
                env_kwargs={"n_queries": 10, "cache_size": 3})
    )  # fmt: skip
    counts, _ = dataset.arm_statistics()
    result = coverage(dataset.problem, dataset.params, counts, dataset.n)
    # every query arrives, so every cost arm is observed: the ratio p·1{q∉M*} / p ≤ 1
    assert result["C_inf"] == pytest.approx(1.0, abs=0.3)  # up to sampling noise of N_i / n
