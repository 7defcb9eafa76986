"""Read a Minari dataset of MetaBBO episodes as a :class:`MetaBBODataset`, for training.

``gymforge train MetaBBO-v0 --algo qmamba --dataset minari:NAME`` reads the Minari dataset
``NAME`` (from ``MINARI_DATASETS_PATH`` or Minari's default folder): one written by
``gymforge dataset collect MetaBBO-v0 ... --minari NAME``, or any Minari dataset of a MetaBBO id
with its observation and action spaces. Episodes are zero-padded to the longest, as in the
checked format; what Minari does not store (best errors, function ids) is absent, so training
uses the logged rewards (``--reward env``).
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from gymforge.core.extras import require
from gymforge.envs.metabbo.dataset_format import MetaBBODataset

#: prefix of a Minari dataset id where a dataset path is expected
PREFIX = "minari:"


def load_minari_dataset(name: str) -> MetaBBODataset:
    """The Minari dataset ``name`` (with or without the ``minari:`` prefix) as arrays."""
    minari = require("minari", "reading a Minari dataset")
    dataset_id = name.removeprefix(PREFIX)
    data = minari.load_dataset(dataset_id)
    where = f"Minari dataset {dataset_id!r}"
    if not isinstance(data.action_space, spaces.MultiDiscrete):
        raise ValueError(f"{where}: actions must be MultiDiscrete bins, got {data.action_space}")
    if not isinstance(data.observation_space, spaces.Box) or len(data.observation_space.shape) != 1:
        raise ValueError(f"{where}: observations must be flat Box vectors")
    episodes = list(data.iterate_episodes())
    if not episodes:
        raise ValueError(f"{where} has no episodes")
    n, horizon = len(episodes), max(len(e.rewards) for e in episodes)
    obs_dim, k = data.observation_space.shape[0], len(data.action_space.nvec)
    arrays = {
        "observations": np.zeros((n, horizon, obs_dim), np.float32),
        "actions": np.zeros((n, horizon, k), np.int64),
        "rewards": np.zeros((n, horizon), np.float32),
        "terminations": np.zeros((n, horizon), bool),
        "truncations": np.zeros((n, horizon), bool),
        "lengths": np.zeros(n, np.int64),
        "final_observations": np.zeros((n, obs_dim), np.float32),
    }
    for i, episode in enumerate(episodes):
        length = len(episode.rewards)
        arrays["observations"][i, :length] = episode.observations[:length]
        arrays["actions"][i, :length] = np.asarray(episode.actions).reshape(length, k)
        arrays["rewards"][i, :length] = episode.rewards
        arrays["terminations"][i, :length] = episode.terminations
        arrays["truncations"][i, :length] = episode.truncations
        arrays["lengths"][i] = length
        arrays["final_observations"][i] = episode.observations[length]
    env_spec = data.spec.env_spec
    metadata = {
        "env_id": None if env_spec is None else env_spec.id,
        "obs_dim": int(obs_dim),
        "action_nvec": [int(v) for v in data.action_space.nvec],
        "source": f"{PREFIX}{dataset_id}",
    }
    return MetaBBODataset(arrays=arrays, metadata=metadata, path=None)
