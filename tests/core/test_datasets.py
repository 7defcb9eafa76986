"""The on-disk dataset format: round trip, checksum, schema, atomic writes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gymforge.core.datasets import (
    DATA_FILE,
    METADATA_FILE,
    ArraySchema,
    DatasetError,
    read_dataset,
    write_dataset,
)


def _arrays():
    rng = np.random.default_rng(0)
    return {"obs": rng.normal(size=(5, 3)).astype(np.float32), "act": np.arange(5)}


def test_round_trip_keeps_arrays_and_metadata(tmp_path):
    path = write_dataset(tmp_path / "d", _arrays(), {"env_id": "X-v0", "seeds": [1, 2]})
    data = read_dataset(path, {"obs": ArraySchema("f", 2), "act": ArraySchema("iu", 1)})
    np.testing.assert_array_equal(data["obs"], _arrays()["obs"])
    assert data.metadata["env_id"] == "X-v0" and data.metadata["seeds"] == [1, 2]
    assert data.metadata["arrays"]["obs"] == {"dtype": "float32", "shape": [5, 3]}


def test_changed_bytes_fail_the_checksum(tmp_path):
    path = write_dataset(tmp_path / "d", _arrays(), {})
    np.savez(path / DATA_FILE, obs=np.zeros((5, 3), np.float32), act=np.arange(5))
    with pytest.raises(DatasetError, match="checksum mismatch"):
        read_dataset(path)


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"rew": ArraySchema("f", 1)}, "required array 'rew' missing"),
        ({"act": ArraySchema("f", 1)}, "expected kind in 'f'"),
        ({"obs": ArraySchema("f", 3)}, "expected 3 dims"),
        ({"obs": ArraySchema("f", 2, (None, 4))}, r"expected \(None, 4\)"),
    ],
)
def test_schema_violations_name_the_array(tmp_path, schema, message):
    path = write_dataset(tmp_path / "d", _arrays(), {})
    with pytest.raises(DatasetError, match=message):
        read_dataset(path, schema)


def test_expected_metadata_is_checked(tmp_path):
    path = write_dataset(tmp_path / "d", _arrays(), {"env_id": "X-v0"})
    with pytest.raises(DatasetError, match="'env_id' is 'X-v0', expected 'Y-v0'"):
        read_dataset(path, expect={"env_id": "Y-v0"})


def test_existing_path_is_refused_unless_overwrite(tmp_path):
    path = write_dataset(tmp_path / "d", _arrays(), {"n": 1})
    with pytest.raises(DatasetError, match="exists"):
        write_dataset(path, _arrays(), {"n": 2})
    write_dataset(path, _arrays(), {"n": 2}, overwrite=True)
    assert read_dataset(path).metadata["n"] == 2


def test_bad_metadata_or_arrays_write_nothing(tmp_path):
    with pytest.raises(DatasetError, match="JSON-serialisable"):
        write_dataset(tmp_path / "d", _arrays(), {"bad": object()})
    with pytest.raises(DatasetError, match="object dtype"):
        write_dataset(tmp_path / "e", {"x": np.array([object()])}, {})
    with pytest.raises(DatasetError, match="reserved"):
        write_dataset(tmp_path / "f", _arrays(), {"sha256": "x"})
    assert list(tmp_path.iterdir()) == []


def test_not_a_dataset_and_wrong_version_are_named(tmp_path):
    with pytest.raises(DatasetError, match="not a gymforge dataset"):
        read_dataset(tmp_path)
    path = write_dataset(tmp_path / "d", _arrays(), {})
    meta = json.loads((path / METADATA_FILE).read_text())
    meta["format_version"] = 99
    (path / METADATA_FILE).write_text(json.dumps(meta))
    with pytest.raises(DatasetError, match="format_version 99"):
        read_dataset(path)
