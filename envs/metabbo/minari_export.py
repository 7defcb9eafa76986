"""Offline MetaBBO datasets as Minari datasets (the Farama ecosystem's offline format)."""

from __future__ import annotations

import dataclasses
import json
import os
import warnings
from pathlib import Path

import numpy as np

from gymforge.envs.metabbo.dataset_format import MetaBBODataset


def export_minari(dataset: MetaBBODataset, dataset_id: str, root: str | Path | None = None):
    """Write ``dataset`` as the Minari dataset ``dataset_id`` (needs ``minari`` and ``h5py``).

    Args:
        root: the Minari datasets folder (``MINARI_DATASETS_PATH``); default Minari's own.

    Returns:
        the ``minari.MinariDataset``; ``minari.load_dataset(dataset_id)`` reads it back (with the
        same ``MINARI_DATASETS_PATH``). Each episode's observations have ``length + 1`` rows (the
        final observation last); the gymforge metadata is in the description.
    """
    try:
        import minari
        from minari.data_collector import EpisodeBuffer
    except ImportError as error:  # pragma: no cover - minari is a dev/offline extra
        raise ImportError("the Minari export needs `pip install gymforge[offline]`") from error
    from gymnasium import spaces

    meta = dataset.metadata
    obs_dim = int(meta["obs_dim"])
    observation_space = spaces.Box(0.0, 1.0, (obs_dim,), np.float32)
    action_space = spaces.MultiDiscrete(np.asarray(meta["action_nvec"], dtype=np.int64))
    buffers = []
    for i in range(len(dataset)):
        n = int(dataset.lengths[i])
        buffers.append(
            EpisodeBuffer(
                id=i,
                seed=int(dataset.arrays["episode_seeds"][i]),
                observations=np.concatenate(
                    [dataset.observations[i, :n], dataset.arrays["final_observations"][i][None]]
                ),
                actions=dataset.actions[i, :n],
                rewards=dataset.rewards[i, :n].astype(np.float64),
                terminations=dataset.arrays["terminations"][i, :n],
                truncations=dataset.arrays["truncations"][i, :n],
            )
        )
    summary = {k: v for k, v in meta.items() if k not in {"arrays"}}
    import gymnasium as gym

    env_spec = None
    if meta.get("env_id") in gym.registry:
        env_spec = dataclasses.replace(
            gym.spec(meta["env_id"]), kwargs=dict(meta.get("env_kwargs", {}))
        )
    previous = os.environ.get("MINARI_DATASETS_PATH")
    if root is not None:
        os.environ["MINARI_DATASETS_PATH"] = str(Path(root).resolve())
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=UserWarning, module="minari")
            return minari.create_dataset_from_buffers(
                dataset_id=dataset_id,
                buffer=buffers,
                env=env_spec,
                observation_space=observation_space,
                action_space=action_space,
                code_permalink="gymforge.envs.metabbo.dataset (gymforge "
                + str(meta.get("gymforge_version"))
                + ")",
                algorithm_name=f"behaviour {meta.get('behavior')} ({', '.join(meta.get('behaviors', []))})",
                author="gymforge",
                description="gymforge MetaBBO trajectories. gymforge metadata: "
                + json.dumps(summary, sort_keys=True),
            )
    finally:
        if root is not None:
            if previous is None:
                os.environ.pop("MINARI_DATASETS_PATH", None)
            else:
                os.environ["MINARI_DATASETS_PATH"] = previous
