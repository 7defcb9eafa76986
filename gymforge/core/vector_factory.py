"""``make_vector``: the factory behind every batched id's ``gym.make_vec`` entry point.

A ``TorchVectorEnv`` class builds one env in this process, always an instance of itself.
What ``gym.make_vec`` adds on top goes through this factory, so that a reader of the call sees
what comes back:

- ``num_workers=K`` (default 1): with ``K > 1`` the batch split over ``K`` processes, a
  :class:`~gymforge.core.sharded.ShardedVectorEnv` (:func:`~gymforge.core.sharded.sharded`);
- ``autoreset_mode`` and ``array_backend``: Gymnasium's vector options (see
  :mod:`gymforge.core.vector_env`), applied to the env just built.

What the env returns (``array_backend``), decided here for every batched id:

- **numpy by default**: ``gym.make_vec(id, n, vectorization_mode="vector_entry_point")`` returns
  numpy arrays on the host, as every other Gymnasium vector env does, so Gymnasium's vector
  wrappers (``RecordEpisodeStatistics``, ``NormalizeObservation``, ``NormalizeReward``,
  ``ClipReward``, ...), which compute with numpy, take it without an extra keyword;
- **torch when a device is named** (``device=...``, ``"cpu"`` included) **or asked for**
  (``array_backend="torch"``): tensors on the env's device, no host copy per step, which the
  on-device trainer, the CLI's batched rollout and the TorchRL adapter need. Naming the device
  decides, not which device it is, so ``device="cuda" if available else "cpu"`` returns
  tensors on either machine;
- ``array_backend="numpy"`` with a device: the dynamics run there and each step's outputs are
  copied to the host.

The dynamics and the numbers are the same under both backends (the numpy arrays are the
tensors' host copies), so trajectories and golden digests do not depend on the choice. A class
constructor (one env in this process) keeps the torch backend.

Every batched id's vector entry point is this factory bound to the id's class (built by the
registry, :mod:`gymforge.entry_points`), so a third-party ``TorchVectorEnv`` registered with
``EnvSpec(vector_env="module:Class")`` takes the same keywords through ``gym.make_vec``. Every
option is checked before the env is built.
"""

from __future__ import annotations

from typing import Any, TypeVar

from gymnasium.vector import AutoresetMode

from gymforge.core.sharded import (
    ShardedVectorEnv,
    check_num_workers,
    default_num_envs,
    sharded,
)
from gymforge.core.vector_env import TorchVectorEnv, check_constructor_keywords, check_num_envs
from gymforge.core.vector_options import parse_array_backend, parse_autoreset_mode

E = TypeVar("E", bound=TorchVectorEnv)


def make_vector(
    env_class: type[E],
    *,
    num_workers: int = 1,
    autoreset_mode: AutoresetMode | str | None = None,
    array_backend: str | None = None,
    **env_kwargs: Any,
) -> E | ShardedVectorEnv:
    """``env_class(**env_kwargs)`` with the vector options applied; with ``num_workers > 1``
    its instances split over that many processes instead (a ``ShardedVectorEnv``, CPU and
    SAME_STEP autoreset only).

    Args:
        env_class: the ``TorchVectorEnv`` class to build.
        num_workers: processes, this one included (an int in ``[1, num_envs]``).
        autoreset_mode: an ``AutoresetMode`` or its name; None keeps the class's (SAME_STEP, or
            DISABLED with ``autoreset=False``).
        array_backend: ``"torch"`` or ``"numpy"``; None: ``"torch"`` when ``env_kwargs`` names
            a ``device``, else ``"numpy"`` (see the module docstring).
        **env_kwargs: the class's keywords, ``num_envs`` among them.
    """
    mode = None if autoreset_mode is None else parse_autoreset_mode(autoreset_mode)
    backend = parse_array_backend(default_array_backend(array_backend, env_kwargs))
    check_constructor_keywords(env_class, env_kwargs)
    num_envs = check_num_envs(env_kwargs.get("num_envs", default_num_envs(env_class)))
    workers = check_num_workers(num_workers, num_envs)
    env: E | ShardedVectorEnv
    if workers == 1:
        env = env_class(**env_kwargs)
    else:
        if mode not in (None, AutoresetMode.SAME_STEP):
            raise ValueError(
                f"num_workers > 1 needs autoreset_mode SAME_STEP (the shards autoreset "
                f"themselves), got {mode}"
            )
        env = sharded(env_class, workers, **env_kwargs)
    env._apply_vector_options(mode, backend)
    return env


def default_array_backend(array_backend: str | None, env_kwargs: dict[str, Any]) -> str | None:
    """``array_backend`` when given, else ``"torch"`` when ``env_kwargs`` names a ``device``
    and ``"numpy"`` otherwise (unchecked: :func:`make_vector` parses it)."""
    if array_backend is not None:
        return array_backend
    return "torch" if "device" in env_kwargs else "numpy"
