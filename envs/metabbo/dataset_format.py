"""The checked format of offline MetaBBO datasets: its arrays, loading and writing.

Arrays (``N`` episodes, ``T = max_generations`` columns, ``K`` controlled hyperparameters;
episodes that terminate early are zero-padded after ``lengths[i]`` steps):

=====================  ==================  ==================================================
name                   shape, dtype        meaning
=====================  ==================  ==================================================
``observations``       [N, T, 9] float32   observation before step ``t``
``actions``            [N, T, K] int64     bins taken
``rewards``            [N, T] float32      ``(e_{t-1} - e_t) / e_0``
``best_errors``        [N, T] float64      ``e_t``, the best error after step ``t``
``terminations``       [N, T] bool         target error reached at step ``t``
``truncations``        [N, T] bool         generation budget used up at step ``t``
``lengths``            [N] int64           steps in the episode (``1..T``)
``final_observations`` [N, 9] float32      observation after the last step
``behavior``           [N] int64           index into ``metadata["behaviors"]``
``episode_seeds``      [N] int64           reset seed of the episode's instance
``function_ids``       [N] int64           BBOB function of the episode
``instance_ids``       [N] int64           instance seed (random mode) or COCO instance id
``initial_error``      [N] float64         ``e_0``
``final_error``        [N] float64         ``e_T``, the best error at the end
``evaluations``        [N] int64           objective evaluations used
=====================  ==================  ==================================================

:func:`load_dataset` checks the checksum, every array's dtype and shape and their agreement,
and raises :class:`~gymforge.core.datasets.DatasetError` (a ``ValueError``) naming the problem.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gymforge.core.datasets import ArraySchema, DatasetError, read_dataset, write_dataset

DATA_FORMAT = "metabbo-trajectories"
DATA_FORMAT_VERSION = 1

_SCHEMA: dict[str, ArraySchema] = {
    "observations": ArraySchema("f", 3),
    "actions": ArraySchema("iu", 3),
    "rewards": ArraySchema("f", 2),
    "best_errors": ArraySchema("f", 2),
    "terminations": ArraySchema("b", 2),
    "truncations": ArraySchema("b", 2),
    "lengths": ArraySchema("iu", 1),
    "final_observations": ArraySchema("f", 2),
    "behavior": ArraySchema("iu", 1),
    "episode_seeds": ArraySchema("iu", 1),
    "function_ids": ArraySchema("iu", 1),
    "instance_ids": ArraySchema("iu", 1),
    "initial_error": ArraySchema("f", 1),
    "final_error": ArraySchema("f", 1),
    "evaluations": ArraySchema("iu", 1),
}


@dataclass(frozen=True)
class MetaBBODataset:
    """A loaded, checked MetaBBO dataset (see the module docstring for the arrays)."""

    arrays: dict[str, np.ndarray]
    metadata: dict[str, Any]
    path: Path | None = None

    @property
    def observations(self) -> np.ndarray:
        return self.arrays["observations"]

    @property
    def actions(self) -> np.ndarray:
        return self.arrays["actions"]

    @property
    def rewards(self) -> np.ndarray:
        return self.arrays["rewards"]

    @property
    def lengths(self) -> np.ndarray:
        return self.arrays["lengths"]

    @property
    def valid(self) -> np.ndarray:
        """``[N, T]`` bool, the steps inside each episode."""
        return np.arange(self.observations.shape[1])[None, :] < self.lengths[:, None]

    @property
    def returns(self) -> np.ndarray:
        """``[N]`` episode returns (Perf)."""
        return (self.rewards * self.valid).sum(1)

    def __len__(self) -> int:
        return int(self.observations.shape[0])


def _check_arrays(
    arrays: Mapping[str, np.ndarray], metadata: Mapping[str, Any], where: str
) -> None:
    obs = arrays["observations"]
    n, t, obs_dim = obs.shape
    k = len(metadata.get("action_nvec", ()))
    expected = {
        "actions": (n, t, k),
        "rewards": (n, t),
        "best_errors": (n, t),
        "terminations": (n, t),
        "truncations": (n, t),
        "final_observations": (n, obs_dim),
        **{
            name: (n,)
            for name in (
                "lengths",
                "behavior",
                "episode_seeds",
                "function_ids",
                "instance_ids",
                "initial_error",
                "final_error",
                "evaluations",
            )
        },
    }
    if metadata.get("obs_dim") != obs_dim:
        raise DatasetError(
            f"{where}: observations have {obs_dim} features, metadata says {metadata.get('obs_dim')}"
        )
    for name, shape in expected.items():
        if tuple(arrays[name].shape) != shape:
            raise DatasetError(
                f"{where}: array {name!r} has shape {tuple(arrays[name].shape)}, expected {shape}"
            )
    lengths = arrays["lengths"]
    if n and ((lengths < 1).any() or (lengths > t).any()):
        raise DatasetError(f"{where}: lengths must lie in 1..{t}")
    nvec = np.asarray(metadata["action_nvec"])
    if n and ((arrays["actions"] < 0).any() or (arrays["actions"] >= nvec).any()):
        raise DatasetError(f"{where}: actions outside 0..nvec-1 (nvec={list(nvec)})")
    behaviors = metadata.get("behaviors", [])
    if n and ((arrays["behavior"] < 0).any() or (arrays["behavior"] >= len(behaviors)).any()):
        raise DatasetError(f"{where}: behavior indices outside 0..{len(behaviors) - 1}")


def load_dataset(path: str | Path) -> MetaBBODataset:
    """Load and check a dataset written by :func:`write_trajectories` / ``dataset collect``.

    Raises:
        DatasetError: missing files, checksum mismatch, wrong format, dtypes or shapes.
    """
    data = read_dataset(path, _SCHEMA, expect={"data_format": DATA_FORMAT})
    if data.metadata.get("data_format_version") != DATA_FORMAT_VERSION:
        raise DatasetError(
            f"dataset {str(path)!r}: data_format_version {data.metadata.get('data_format_version')!r} "
            f"is not supported (this gymforge reads {DATA_FORMAT_VERSION})"
        )
    _check_arrays(data.arrays, data.metadata, f"dataset {str(path)!r}")
    return MetaBBODataset(arrays=dict(data.arrays), metadata=dict(data.metadata), path=Path(path))


def write_trajectories(
    path: str | Path,
    arrays: Mapping[str, np.ndarray],
    metadata: Mapping[str, Any],
    *,
    overwrite: bool = False,
) -> Path:
    """Check ``arrays`` against the layout and write them (atomically) as a dataset folder."""
    record = {"data_format": DATA_FORMAT, "data_format_version": DATA_FORMAT_VERSION, **metadata}
    missing = sorted(set(_SCHEMA) - set(arrays))
    if missing:
        raise DatasetError(f"cannot write a MetaBBO dataset without arrays {missing}")
    _check_arrays(arrays, record, "arrays to write")
    return write_dataset(path, arrays, record, overwrite=overwrite)
