"""SB3's info rows: views of the per-key arrays that behave as the per-instance dicts would."""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
import pytest
import torch

from gymforge.adapters.info_rows import info_rows


def _plain_dicts(info: dict, num_envs: int) -> list[dict]:
    """The per-instance dicts, built the obvious way (one loop per key and instance)."""
    rows: list[dict] = [{} for _ in range(num_envs)]
    for key, values in info.items():
        if key.startswith("_"):
            continue
        mask = info.get(f"_{key}", np.ones(num_envs, dtype=bool))
        for i in range(num_envs):
            if mask[i]:
                item = values[i]
                rows[i][key] = item.item() if isinstance(item, np.generic) else item
    return rows


def test_rows_equal_the_plain_dicts_and_take_writes() -> None:
    info = {
        "time": np.array([1.5, 2.5, 3.5]),
        "n_parts": np.array([3, 0, 7]),
        "_n_parts": np.array([True, False, True]),
        "name": np.array(["a", "b", "c"], dtype=object),
    }
    columns = {k: (v, info.get(f"_{k}")) for k, v in info.items() if not k.startswith("_")}
    rows = info_rows(columns, 3)
    assert [dict(row) for row in rows] == _plain_dicts(info, 3)
    assert rows[1].get("n_parts") is None and "n_parts" not in rows[1] and len(rows[1]) == 2
    assert isinstance(rows[0]["n_parts"], int) and rows[0] == {
        "time": 1.5,
        "n_parts": 3,
        "name": "a",
    }
    rows[1]["terminal_observation"] = np.zeros(2)
    rows[1]["time"] = -1.0
    assert rows[1]["time"] == -1.0 and rows[0]["time"] == 1.5  # writes stay in their row
    del rows[2]["name"]
    assert "name" not in rows[2] and "name" in rows[0]
    with pytest.raises(KeyError):
        del rows[1]["n_parts"]
    plain = rows[1].copy()
    assert type(plain) is dict and set(plain) == {"time", "name", "terminal_observation"}
    assert copy.deepcopy(rows[0]) == rows[0]


def test_sb3_adapter_infos_match_the_vector_envs_info_after_steps() -> None:
    from gymforge.adapters.sb3 import as_sb3_vec_env

    venv = gym.make_vec(
        "LineFlow-WaitingTime-v0", num_envs=4, vectorization_mode="vector_entry_point", horizon=5
    )
    sb3 = as_sb3_vec_env(venv)
    sb3.reset()
    action = np.zeros((4, *venv.single_action_space.shape), dtype=np.int64)
    for _ in range(6):  # through an episode end (horizon 5)
        sb3.step_async(action)
        _, _, dones, infos = sb3.step_wait()
        parts = [row["n_parts"] for row in infos]
        assert all(isinstance(p, int) for p in parts)
        if dones.any():
            for i in np.flatnonzero(dones):
                assert infos[i]["terminal_observation"].shape == venv.single_observation_space.shape
                assert infos[i]["TimeLimit.truncated"] is True
    venv.step(torch.zeros((4, *venv.single_action_space.shape), dtype=torch.long))
    assert [row["n_parts"] for row in infos] == parts  # the rows hold copies, not the env's tensors
    sb3.close()
