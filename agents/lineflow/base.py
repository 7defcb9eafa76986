"""What every LineFlow reference controller needs: the env's feature and action layout."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from gymforge.envs.lineflow.features import ActionSlot, action_slots
from gymforge.envs.lineflow.spec import LineSpec


class LineController:
    """Base of the LineFlow controllers: looks up features and action entries by name.

    Args:
        env: a LineFlow env (``gym.make``), its unwrapped env, or a LineFlow vector env; anything
            with ``line`` (a ``LineSpec``) and ``features`` attributes.
    """

    def __init__(self, env: gym.Env | gym.vector.VectorEnv | Any) -> None:
        base = env.unwrapped if hasattr(env, "unwrapped") else env
        self.line: LineSpec = base.line
        self.horizon: float = getattr(base, "horizon", 4000.0)
        self._feature_index = {f.name: i for i, f in enumerate(base.features)}
        self.slots: list[ActionSlot] = action_slots(self.line)
        self._slot_index = {(s.owner, s.kind, s.worker): i for i, s in enumerate(self.slots)}

    def feature(self, name: str) -> int:
        """Index of observation feature ``name``."""
        if name not in self._feature_index:
            raise ValueError(f"line {self.line.name!r} has no observation feature {name!r}")
        return self._feature_index[name]

    def slot(self, owner: str, kind: str, worker: int = -1) -> int:
        """Index of an action entry."""
        key = (owner, kind, worker)
        if key not in self._slot_index:
            raise ValueError(f"line {self.line.name!r} has no action {owner}.{kind}")
        return self._slot_index[key]

    def zero_action(self, obs: np.ndarray) -> np.ndarray:
        """An all-zero action with the batch shape of ``obs``."""
        return np.zeros((*obs.shape[:-1], len(self.slots)), dtype=np.int64)

    def reset(self, seed: int | None = None) -> None:
        """Stateless unless a controller overrides it."""
