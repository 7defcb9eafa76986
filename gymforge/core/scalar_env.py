"""``TorchScalarEnv``: the standard single ``gymnasium.Env`` view of a batched torch env.

It runs the family's :class:`TorchVectorEnv` at ``num_envs=1`` without autoreset and converts to
numpy at the boundary, so ``gym.make(id)`` and ``gym.make_vec(id, ...)`` share one implementation
of the dynamics. A family writes no scalar class of its own: :func:`scalar_view` builds the view
of its vector class (on ``TorchScalarEnv``, or on a subclass that adds helpers, such as the
Off-CMAB ``CMABEnv``), and the registry (:mod:`gymforge.entry_points`) registers that view as
the id's ``gym.make`` entry point.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import torch

from gymforge.core.render_modes import check_render_mode
from gymforge.core.reset_options import check_reset_options
from gymforge.core.reset_seeds import MAX_SEED, validate_seed
from gymforge.core.vector_env import TorchVectorEnv


class TorchScalarEnv(gym.Env):
    """A ``gym.Env`` running ``vector_env_cls(num_envs=1, autoreset=False, **kwargs)`` on the CPU.

    ``render_mode`` must be None or one of the vector class's ``metadata["render_modes"]``: any
    other is refused at construction (:func:`~gymforge.core.render_modes.check_render_mode`).

    A family's view is built by :func:`scalar_view`, which sets ``vector_env_cls``, the
    docstring and the class's ``metadata``; a subclass that adds helpers (and leaves ``vector_env_cls`` unset) is a base for
    such views.
    """

    vector_env_cls: type[TorchVectorEnv]

    def __init__(self, render_mode: str | None = None, **kwargs: Any) -> None:
        # a mode the family cannot render is refused here, not by a later render()
        modes = self.vector_env_cls.metadata.get("render_modes", [])
        self.render_mode = check_render_mode(render_mode, modes, type(self).__name__)
        self._kwargs = kwargs
        self._vector = self.vector_env_cls(num_envs=1, device="cpu", autoreset=False, **kwargs)
        self.observation_space = self._vector.single_observation_space
        self.action_space = self._vector.single_action_space
        self.metadata = {"render_modes": list(modes)}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        options = check_reset_options(options)  # before the generator is reseeded
        if seed is not None:
            seed = validate_seed(seed)  # numpy integers become Python ints
        super().reset(seed=seed)
        if seed is None:
            # Draw from the env's own numpy generator so unseeded resets continue one stream.
            seed = int(self.np_random.integers(0, MAX_SEED))
        obs, info = self._vector.reset(seed=seed, options=options)
        return self._obs(obs), _unbatch_info(info)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        batched = torch.as_tensor(np.asarray(action))[None]
        obs, reward, terminated, truncated, info = self._vector.step(batched)
        return (
            self._obs(obs),
            float(reward[0]),
            bool(terminated[0]),
            bool(truncated[0]),
            _unbatch_info(info),
        )

    def _obs(self, obs: torch.Tensor) -> np.ndarray:
        return obs[0].numpy().astype(self.observation_space.dtype, copy=True)


def scalar_view(
    vector_env_cls: type[TorchVectorEnv],
    base: type[TorchScalarEnv] = TorchScalarEnv,
    *,
    name: str | None = None,
    module: str | None = None,
) -> type[TorchScalarEnv]:
    """The ``gym.Env`` class at batch size one over ``vector_env_cls``: a subclass of ``base``
    with ``vector_env_cls`` set and the vector class's docstring.

    ``name`` (default: the vector class's name with ``VecEnv`` replaced by ``Env``, e.g.
    ``ProbeVecEnv`` -> ``ProbeEnv``) and ``module`` (default the vector class's) are where
    ``pickle`` looks the class up, so a caller that pickles instances keeps the class at
    ``module.name`` (the registry keeps each id's view in :mod:`gymforge.entry_points`).
    """
    if not (isinstance(vector_env_cls, type) and issubclass(vector_env_cls, TorchVectorEnv)):
        raise TypeError(f"vector_env_cls must be a TorchVectorEnv subclass, got {vector_env_cls!r}")
    if not (isinstance(base, type) and issubclass(base, TorchScalarEnv)):
        raise TypeError(f"base must be a TorchScalarEnv subclass, got {base!r}")
    name = name or vector_env_cls.__name__.removesuffix("VecEnv") + "Env"
    namespace = {
        "__doc__": vector_env_cls.__doc__,
        "__module__": module or vector_env_cls.__module__,
        "__qualname__": name,
        "vector_env_cls": vector_env_cls,
        # what gym.make reads before building: the modes the vector class declares
        "metadata": {"render_modes": list(vector_env_cls.metadata.get("render_modes", []))},
    }
    return type(name, (base,), namespace)


def _unbatch_info(info: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in info.items():
        if key.startswith("_"):
            continue
        item = value[0]
        out[key] = item.item() if item.dim() == 0 else item.numpy().copy()
    return out
