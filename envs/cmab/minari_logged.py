"""Off-CMAB logged plays as a Minari dataset: the mapping, its writer and its reader.

``gymforge dataset collect OffCMAB-<App>-v0 --agent L --n N --minari NAME`` writes the ``N``
logged plays of one instance as **one Minari episode of N steps**: the plays of the env
``gym.make(ID, horizon=N, action_format="ids", **kwargs)`` reset with the dataset's seed (which
draws the logged instance), one step per play. An episode of that env is exactly a run of plays
on one instance, and adaptive logging policies (ucb/lcb/emp) depend on the plays before them, so
the order is part of the data. (Why not one one-step episode per play, and what the format
costs: ``docs/design/offcmab_minari.md``.)

| Minari field | what it holds |
|---|---|
| ``observations`` | ``(N+1, 2m+1)`` float32: row 0 the reset observation (zeros), row ``t+1`` the env's observation after play ``t`` (its feedback features, then ``(t+1)/N``) |
| ``actions`` | the logged super arm of each play in its natural form, exactly the record's: cascade ``MultiDiscrete([m]*k)`` ranked ids; LLM cache ``MultiBinary(m)`` cache mask; influence ``MultiBinary(V)`` seed mask; k-path ``MultiDiscrete([n_paths])`` path index |
| ``rewards`` | ``(N,)`` the realised reward of each play |
| ``terminations`` / ``truncations`` | never terminated; truncated at the last play |
| ``infos`` | the rest of each record under its dataset name (``(N+1, ...)``, row 0 the reset's placeholder: −1, False or NaN): cascade ``click_position``; LLM cache ``query``, ``miss``, ``cost``; influence ``activation_round``; k-path ``outcomes`` |
| episode ``seed`` | the instance seed |

The cache and seed-set actions are masks rather than the env's ``k`` ids because logging
policies may play sets of any size (``empty`` caches, ``independent`` seed sets). The dataset's
metadata (``dataset.storage.metadata["gymforge"]``) holds what the folder format's
``metadata.json`` holds: env id and kwargs, application, logging policy and options, n, seed,
``instance_params_hash`` and the problem's public config; the description repeats it for people.
The plays draw from the collector's own per-record streams, not the env's: the episode does not
replay on the env step by step, but the instance is the env's. The dataset says so in its
metadata (``dataset.storage.metadata["gymforge_replay"]``: ``exact`` False and ``why``).

:func:`read_minari` rebuilds the record arrays and metadata bit for bit;
:func:`gymforge.envs.cmab.datasets.load_dataset` (``"minari:NAME"``) then checks the instance
hash as for a folder.
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from gymforge.core.datasets import DatasetError
from gymforge.core.extras import require
from gymforge.core.minari_folder import PREFIX, minari_root
from gymforge.envs.cmab.collect import (
    DATASET_KIND,
    RECORD_DTYPES,
    LoggedPlays,
    log_dataset,
    problem_for,
)
from gymforge.envs.cmab.problem import Problem

#: the record field that holds each application's super arm (the Minari action)
ARM_FIELD = {"cascade": "action", "llm_cache": "cached", "influence": "seeds", "kpath": "path"}
#: key of the gymforge metadata in the Minari dataset's metadata
METADATA_KEY = "gymforge"
#: key of the replay flag in the Minari dataset's metadata (see :func:`replay_flag`)
REPLAY_KEY = "gymforge_replay"
#: why the plays do not replay on ``dataset.recover_environment()``
_DRAWN_APART = (
    "the plays drew their feedback from the collector's own per-record random streams, not the "
    "env's, so stepping the recovered env (reset with the episode's seed: the same instance) with "
    "the logged actions gives other feedback, observations and rewards"
)
_MASKS = (
    "the actions are MultiBinary masks of sets of any size, which the env's k-id action space "
    "cannot hold, so they are not actions of the recovered env; and "
)
_PLACEHOLDER = {"b": False, "i": -1, "f": np.nan}


def action_space(problem: Problem) -> spaces.Space:
    """The Minari action space of ``problem``'s logged super arms (see the module table)."""
    if problem.name == "cascade":
        return spaces.MultiDiscrete(np.full(problem.size, problem.n_ids, dtype=np.int64))
    if problem.name == "kpath":
        return spaces.MultiDiscrete(np.array([problem.n_ids], dtype=np.int64))
    return spaces.MultiBinary(problem.n_ids)


def replay_flag(application: str) -> dict[str, Any]:
    """The flag stored under :data:`REPLAY_KEY`: ``{"exact": False, "why": ...}``, because an
    Off-CMAB logged episode never replays on the recovered env step by step (Minari users who
    replay datasets read it; ``docs/design/offcmab_minari.md`` explains)."""
    masks = application in ("llm_cache", "influence")
    return {"exact": False, "why": (_MASKS if masks else "") + _DRAWN_APART}


def check_target(name: str, root: str | Path | None, overwrite: bool) -> None:
    """Raise unless ``name`` is a valid Minari id that may be written (before any work)."""
    minari = require("minari", "Minari datasets")
    try:
        minari.dataset.minari_dataset.parse_dataset_id(name)
    except ValueError:
        raise ValueError(
            f"--minari must be a Minari dataset id such as 'cascade-uniform-v0' "
            f"((namespace/)name-vN), got {name!r}"
        ) from None
    with minari_root(root):
        if name in minari.list_local_datasets() and not overwrite:
            raise ValueError(f"--minari: Minari dataset {name!r} exists; pass --overwrite")


def write_minari(
    plays: LoggedPlays,
    metadata: dict[str, Any],
    problem: Problem,
    name: str,
    *,
    root: str | Path | None = None,
    overwrite: bool = False,
) -> Any:
    """Write ``plays`` (collected ``with_steps``) as the Minari dataset ``name``.

    ``metadata`` is the collector's (:func:`gymforge.envs.cmab.collect.logged_metadata`).
    Returns the ``minari.MinariDataset``; a failed write leaves no dataset behind.
    """
    if plays.rewards is None or plays.features is None:
        raise ValueError("write_minari needs plays collected with with_steps=True")
    check_target(name, root, overwrite)
    minari = require("minari", "Minari datasets")
    from minari.data_collector import EpisodeBuffer

    records, n = plays.records, int(metadata["n"])
    arm = ARM_FIELD[problem.name]
    actions = records[arm].astype(np.int64 if records[arm].dtype.kind == "i" else np.int8)
    steps = np.arange(1, n + 1, dtype=np.float32) / np.float32(n)
    observations = np.zeros((n + 1, problem.feedback_dim + 1), dtype=np.float32)
    observations[1:, :-1] = plays.features
    observations[1:, -1] = steps
    infos = {key: _with_reset_row(value) for key, value in records.items() if key != arm}
    truncations = np.zeros(n, dtype=bool)
    truncations[-1] = True
    episode = EpisodeBuffer(
        id=0,
        seed=int(metadata["seed"]),
        observations=observations,
        actions=actions.reshape(n, -1) if problem.name == "kpath" else actions,
        rewards=plays.rewards.astype(np.float64),
        terminations=np.zeros(n, dtype=bool),
        truncations=truncations,
        infos=infos,
    )
    recorded = {**metadata, "gymforge_version": _version()}
    with minari_root(root):
        if name in minari.list_local_datasets():
            minari.delete_dataset(name)
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", category=UserWarning, module="minari")
                dataset = minari.create_dataset_from_buffers(
                    dataset_id=name,
                    buffer=[episode],
                    env=_env_spec(metadata),
                    observation_space=spaces.Box(
                        0.0, 1.0, (problem.feedback_dim + 1,), dtype=np.float32
                    ),
                    action_space=action_space(problem),
                    algorithm_name=f"gymforge logging policy {metadata['logging']}",
                    author="gymforge",
                    code_permalink="gymforge.envs.cmab.minari_logged",
                    description=_description(recorded),
                )
            dataset.storage.update_metadata(
                {METADATA_KEY: recorded, REPLAY_KEY: replay_flag(problem.name)}
            )
        except BaseException:
            if name in minari.list_local_datasets():
                minari.delete_dataset(name)
            raise
    return dataset


def collect_minari(
    env_id: str,
    logging: str,
    n: int,
    name: str,
    *,
    seed: int = 0,
    env_kwargs: dict[str, Any] | None = None,
    block: int | None = None,
    q: float = 0.5,
    delta: float = 0.1,
    root: str | Path | None = None,
    overwrite: bool = False,
) -> Any:
    """Collect like :func:`gymforge.envs.cmab.collect.collect` and write the Minari dataset
    ``name`` instead of a folder; returns the ``minari.MinariDataset``."""
    check_target(name, root, overwrite)
    plays, metadata = log_dataset(
        env_id,
        logging,
        n,
        seed=seed,
        env_kwargs=env_kwargs,
        block=block,
        q=q,
        delta=delta,
        with_steps=True,
    )
    problem = problem_for(env_id, env_kwargs)
    return write_minari(plays, metadata, problem, name, root=root, overwrite=overwrite)


def read_minari(name: str, root: str | Path | None = None) -> tuple[dict[str, np.ndarray], dict]:
    """The record arrays and metadata of the Off-CMAB Minari dataset ``name`` (``minari:`` prefix
    optional), exactly as collected.

    Raises:
        DatasetError: no such dataset, not an Off-CMAB logged dataset (naming the metadata field),
            or episodes, actions or infos that do not hold the application's records.
    """
    minari = require("minari", "reading a Minari dataset")
    dataset_id = name.removeprefix(PREFIX)
    where = f"Minari dataset {dataset_id!r}"
    with minari_root(root):
        if dataset_id not in minari.list_local_datasets():
            raise DatasetError(f"{where} not found (MINARI_DATASETS_PATH or --minari-root)")
        data = minari.load_dataset(dataset_id)
        metadata = data.storage.metadata.get(METADATA_KEY)
        if not isinstance(metadata, dict) or metadata.get("kind") != DATASET_KIND:
            found = metadata.get("kind") if isinstance(metadata, dict) else None
            raise DatasetError(
                f"{where}: metadata field '{METADATA_KEY}.kind' is {found!r}, expected "
                f"{DATASET_KIND!r} (an Off-CMAB dataset from `gymforge dataset collect "
                "OffCMAB-... --minari NAME`)"
            )
        application = metadata.get("application")
        if application not in RECORD_DTYPES:
            raise DatasetError(
                f"{where}: metadata field '{METADATA_KEY}.application' must be one of "
                f"{sorted(RECORD_DTYPES)}, got {application!r}"
            )
        if data.total_episodes != 1:
            raise DatasetError(
                f"{where}: expected 1 episode of logged plays, got {data.total_episodes}"
            )
        episode = next(iter(data.iterate_episodes()))
    return _records(episode, application, where), dict(metadata)


def _records(episode: Any, application: str, where: str) -> dict[str, np.ndarray]:
    dtypes = RECORD_DTYPES[application]
    arm = ARM_FIELD[application]
    infos = dict(episode.infos or {})
    expected = sorted(set(dtypes) - {arm})
    if sorted(infos) != expected:
        raise DatasetError(f"{where}: infos must hold {expected}, got {sorted(infos)}")
    raw = {key: np.asarray(value)[1:] for key, value in infos.items()}
    actions = np.asarray(episode.actions)
    raw[arm] = actions[:, 0] if application == "kpath" else actions
    records = {}
    for key, dtype in dtypes.items():
        value = raw[key].astype(dtype)
        if not np.array_equal(value, raw[key], equal_nan=value.dtype.kind == "f"):
            raise DatasetError(f"{where}: field {key!r} does not fit {np.dtype(dtype).name}")
        records[key] = value
    return records


def _with_reset_row(value: np.ndarray) -> np.ndarray:
    """``value`` below one placeholder row (the reset's info has no play yet)."""
    reset = np.full((1, *value.shape[1:]), _PLACEHOLDER[value.dtype.kind], dtype=value.dtype)
    return np.concatenate([reset, value])


def _env_spec(metadata: dict[str, Any]) -> gym.envs.registration.EnvSpec:
    """The spec of the env whose episode the dataset is (see the module docstring)."""
    spec = gym.spec(metadata["env_id"])
    kwargs = {
        **dict(spec.kwargs),
        **metadata["env_kwargs"],
        "horizon": int(metadata["n"]),
        "action_format": "ids",
    }
    return dataclasses.replace(spec, kwargs=kwargs)


def _description(metadata: dict[str, Any]) -> str:
    return (
        f"gymforge Off-CMAB logged plays: {metadata['n']} plays of {metadata['env_id']} "
        f"(instance seed {metadata['seed']}, instance_params_hash "
        f"{metadata['instance_params_hash'][:12]}) by the logging policy "
        f"{metadata['logging']!r}, as one episode of {metadata['n']} steps; actions are the "
        "logged super arms, infos the rest of each record (row 0: reset placeholder). "
        f"Metadata: {json.dumps(metadata, sort_keys=True)}"
    )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gymforge")
    except PackageNotFoundError:  # pragma: no cover - a source tree without an install
        return "unknown"
