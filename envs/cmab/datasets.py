"""Load logged Off-CMAB datasets and compute their data-coverage coefficients.

:func:`load_dataset` checks the checksum and the record schema of a dataset written by
:mod:`gymforge.envs.cmab.collect` (a folder, or ``"minari:NAME"`` for its Minari export, see
:mod:`gymforge.envs.cmab.minari_logged`) and rebuilds the instance it was logged from (checking
the recorded parameter hash), so learners get the records and evaluators the true parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from gymforge.core.datasets import ArraySchema, DatasetError, read_dataset
from gymforge.core.minari_folder import is_minari_name
from gymforge.envs.cmab.collect import DATASET_KIND, RECORD_DTYPES, problem_for
from gymforge.envs.cmab.problem import Params, Problem, instance_params, params_hash


@dataclass(frozen=True)
class LoggedDataset:
    """A logged dataset: records, metadata, and the instance it came from.

    Attributes:
        arrays: the record arrays (see :mod:`gymforge.envs.cmab.collect`).
        metadata: env id, logging policy, n, seed, parameter hash, ...
        problem: the application's structure.
        params: the true parameters of the logged instance (leading axis 1); for evaluation
            only — a learner must not read them.
    """

    arrays: dict[str, np.ndarray]
    metadata: dict[str, Any]
    problem: Problem
    params: Params

    @property
    def n(self) -> int:
        return int(self.metadata["n"])

    def __getitem__(self, name: str) -> np.ndarray:
        return self.arrays[name]

    def arm_statistics(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-base-arm observation counts ``N_i`` and outcome sums."""
        return self.problem.arm_statistics(self.arrays)


def _schema(application: str) -> dict[str, ArraySchema]:
    kinds = {np.bool_: "b", np.int16: "i", np.int32: "i", np.float32: "f"}
    return {key: ArraySchema(kinds[dtype]) for key, dtype in RECORD_DTYPES[application].items()}


def load_dataset(path: str | Path, *, minari_root: str | Path | None = None) -> LoggedDataset:
    """Load and check an Off-CMAB dataset: a dataset folder, or ``"minari:NAME"`` for the Minari
    dataset ``NAME`` (under ``minari_root``, else ``MINARI_DATASETS_PATH`` or Minari's default)
    written by the collector's ``--minari NAME``. Both give the same :class:`LoggedDataset`.

    Raises:
        DatasetError: checksum mismatch, missing or mistyped arrays, records of different
            lengths, ids out of range, or an instance whose parameters no longer hash to the
            recorded value (e.g. the env's defaults changed since the data were logged); for a
            Minari name also a missing dataset or one that is not Off-CMAB logged plays.
    """
    if is_minari_name(path):
        from gymforge.envs.cmab.minari_logged import read_minari

        arrays, metadata = read_minari(str(path), minari_root)
        return _bind(arrays, metadata, str(path))
    raw = read_dataset(path, expect={"kind": DATASET_KIND})
    application = raw.metadata.get("application")
    if application not in RECORD_DTYPES:
        raise DatasetError(f"{path}: unknown application {application!r}")
    raw = read_dataset(path, _schema(application))
    return _bind(dict(raw.arrays), dict(raw.metadata), path)


def _bind(arrays: dict[str, np.ndarray], metadata: dict[str, Any], path: Any) -> LoggedDataset:
    """Check the records against the metadata and rebuild the logged instance (hash-checked)."""
    lengths = {key: value.shape[0] for key, value in arrays.items()}
    if len(set(lengths.values())) != 1 or next(iter(lengths.values())) != metadata["n"]:
        raise DatasetError(
            f"{path}: record arrays must all have n={metadata['n']} rows, got {lengths}"
        )
    problem = problem_for(metadata["env_id"], metadata.get("env_kwargs"))
    params = instance_params(problem, int(metadata["seed"]))
    if params_hash(params) != metadata["instance_params_hash"]:
        raise DatasetError(
            f"{path}: the instance rebuilt from env_id/env_kwargs/seed does not match the recorded "
            "instance_params_hash"
        )
    _check_ids(problem, arrays, path)
    return LoggedDataset(arrays, metadata, problem, params)


def _check_ids(problem: Problem, arrays: dict[str, np.ndarray], path: Any) -> None:
    for key, high in (("action", problem.n_ids), ("query", problem.n_ids), ("path", problem.n_ids)):
        if (
            key in arrays
            and arrays[key].size
            and (arrays[key].min() < 0 or arrays[key].max() >= high)
        ):
            raise DatasetError(f"{path}: array {key!r} holds ids outside [0, {high - 1}]")
    for key in ("cached", "seeds", "activation_round"):
        if key in arrays and arrays[key].shape[1:] != (problem.n_ids,):
            raise DatasetError(f"{path}: array {key!r} must have {problem.n_ids} columns")


def coverage(
    problem: Problem,
    params: Params,
    counts: np.ndarray,
    n: int,
    optimal_arm: torch.Tensor | None = None,
) -> dict[str, float]:
    """Data-coverage coefficients of a dataset against the optimal super arm ``S*``.

    ``p_i^{D_S}`` is estimated by the observed fraction ``N_i / n`` of records that triggered
    arm ``i``; ``p_i^{S*}`` is the instance's exact triggering probability under ``S*`` (Monte
    Carlo for influence maximization). Returns ``C_inf = max_i p_i^{S*}/p_i^{D_S}`` (C3),
    ``C_1 = Σ_i p_i^{S*}/p_i^{D_S}`` (C4) over arms with ``p_i^{S*} > 0`` (``inf`` if such an arm
    was never observed), ``K_star`` (arms S* can trigger), ``K_bar = Σ p_i^{S*}`` and
    ``K_bar_2 = Σ √p_i^{S*}``.
    """
    if optimal_arm is None:
        optimal_arm, _ = problem.optimal(params)
    p_star = problem.trigger_probabilities(params, optimal_arm)[0].cpu().numpy()
    p_data = np.asarray(counts, dtype=np.float64) / float(n)
    relevant = p_star > 0
    with np.errstate(divide="ignore"):
        ratio = np.where(p_data[relevant] > 0, p_star[relevant] / p_data[relevant], np.inf)
    return {
        "C_inf": float(ratio.max(initial=0.0)),
        "C_1": float(ratio.sum()),
        "K_star": int(relevant.sum()),
        "K_bar": float(p_star.sum()),
        "K_bar_2": float(np.sqrt(p_star).sum()),
    }
