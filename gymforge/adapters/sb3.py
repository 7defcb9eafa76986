"""An SB3 ``VecEnv`` over any Gymnasium ``VectorEnv`` with SAME_STEP autoreset.

SB3 does not accept ``gym.make_vec(...)`` (SB3 issues #1568, #1608). Its own ``VecEnv`` resets on
the same step and reports the ended episode in ``infos[i]["terminal_observation"]`` and
``infos[i]["TimeLimit.truncated"]``; a SAME_STEP Gymnasium vector env maps onto that one to one.

Works for gymforge's vector envs of either array backend (tensors are moved to numpy here, the one device→host copy
per step that SB3's numpy rollout buffer forces) and for ``SyncVectorEnv``/``AsyncVectorEnv``
created with ``vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvObs, VecEnvStepReturn

from gymforge.adapters.info_rows import Columns, InfoRow, info_rows


def _to_numpy(x: Any) -> Any:
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    return x


class SB3VecEnv(VecEnv):
    """SB3 view of a Gymnasium ``VectorEnv``; build it with :func:`as_sb3_vec_env`."""

    def __init__(self, vector_env: gym.vector.VectorEnv) -> None:
        mode = vector_env.metadata.get("autoreset_mode")
        if mode != AutoresetMode.SAME_STEP:
            raise ValueError(
                f"vector_env.metadata['autoreset_mode'] must be AutoresetMode.SAME_STEP, got {mode!r}; "
                "for gym.make_vec(..., vectorization_mode='sync') pass "
                "vector_kwargs={'autoreset_mode': gym.vector.AutoresetMode.SAME_STEP}"
            )
        self.vector_env = vector_env
        self._device = getattr(vector_env, "device", None)
        self._actions: Any = None
        self._seeds: list[int] | None = None
        self._options: dict[str, Any] | None = None
        super().__init__(
            vector_env.num_envs,
            vector_env.single_observation_space,
            vector_env.single_action_space,
        )

    def reset(self) -> VecEnvObs:
        seed = self._seeds[0] if self._seeds else None
        obs, info = self.vector_env.reset(seed=seed, options=self._options)
        self._seeds = None
        self.reset_infos = self._split_info(info)
        return _to_numpy(obs)

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        if seed is None:
            return [None] * self.num_envs
        self._seeds = [seed + i for i in range(self.num_envs)]
        return list(self._seeds)

    def set_options(self, options: list[dict] | dict | None = None) -> None:
        self._options = options[0] if isinstance(options, list) else options

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self) -> VecEnvStepReturn:
        actions = self._actions
        if self._device is not None:
            actions = torch.as_tensor(np.asarray(actions), device=self._device)
        obs, reward, terminated, truncated, info = self.vector_env.step(actions)
        obs, reward = _to_numpy(obs), _to_numpy(reward)
        terminated, truncated = _to_numpy(terminated), _to_numpy(truncated)
        dones = np.logical_or(terminated, truncated)
        infos = self._split_info(info)
        if dones.any():
            final_obs = info["final_obs"]
            for i in np.flatnonzero(dones):
                infos[i]["terminal_observation"] = np.asarray(_to_numpy(final_obs[i]))
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        return obs, np.asarray(reward, dtype=np.float32), dones, infos

    def _split_info(self, info: dict[str, Any]) -> list[InfoRow]:
        """Turn Gymnasium's dict of per-env arrays into SB3's list of per-env mappings (views of
        the arrays, see :mod:`gymforge.adapters.info_rows`: no loop over the instances)."""
        columns: Columns = {}
        for key, value in info.items():
            if key.startswith("_") or key in ("final_obs", "final_info"):
                continue
            values = _to_numpy(value)
            if isinstance(values, dict):
                continue
            if isinstance(values, np.ndarray):  # (a copy: the env may reuse its tensors)
                values = values.copy()
            mask = info.get(f"_{key}")
            columns[key] = (values, None if mask is None else np.array(_to_numpy(mask)))
        return info_rows(columns, self.num_envs)

    def close(self) -> None:
        self.vector_env.close()

    def _indices(self, indices: VecEnvIndices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            return [indices]
        return list(indices)

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        envs = getattr(self.vector_env, "envs", None)
        if envs is not None:
            return [getattr(envs[i], attr_name) for i in self._indices(indices)]
        return [getattr(self.vector_env, attr_name) for _ in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        envs = getattr(self.vector_env, "envs", None)
        if envs is None:
            setattr(self.vector_env, attr_name, value)
            return
        for i in self._indices(indices):
            setattr(envs[i], attr_name, value)

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        envs = getattr(self.vector_env, "envs", None)
        if envs is None:
            result = getattr(self.vector_env, method_name)(*method_args, **method_kwargs)
            return [result for _ in self._indices(indices)]
        return [
            getattr(envs[i], method_name)(*method_args, **method_kwargs)
            for i in self._indices(indices)
        ]

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        return [False for _ in self._indices(indices)]


def as_sb3_vec_env(vector_env: gym.vector.VectorEnv) -> SB3VecEnv:
    """Wrap a SAME_STEP Gymnasium vector env (torch or numpy) as an SB3 ``VecEnv``."""
    return SB3VecEnv(vector_env)
