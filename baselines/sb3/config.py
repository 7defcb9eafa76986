"""The SB3 backend's configs: the schema of :mod:`gymforge.baselines.training.config`, with the
keyword arguments of the SB3 / sb3-contrib classes under ``algos``.

The packaged files are ``baselines/configs/*.yaml`` (``default.yaml``, the task's file, and
``vectorized.yaml`` for ``--vectorized`` runs). On top of the shared layer checks, an ``algos``
entry may only name the class's constructor arguments, and the merged settings are refused when
SB3's constructors would reject them with a bare ``AssertionError`` (see
:func:`check_rollout_sizes`), so that a run or a sweep stops before any training.
"""

from __future__ import annotations

import functools
import inspect
from pathlib import Path
from typing import Any

from gymforge.baselines.sb3.algorithms import ALGORITHMS, get_algorithm
from gymforge.baselines.training.config import (
    CONFIG_DIR,
    RESERVED_ALGO_KWARGS,
    TrainConfig,
    build,
    check_layer,
    merge_layers,
)


def algo_parameters(algo: str) -> list[str]:
    """Constructor arguments a config may set for ``algo``."""
    return list(_algo_parameters(algo))


@functools.cache
def _algo_parameters(algo: str) -> tuple[str, ...]:
    """:func:`algo_parameters`, read from the class's signature once (a sweep checks every
    job's config)."""
    init = get_algorithm(algo).load_class().__init__
    names = [
        name
        for name, p in inspect.signature(init).parameters.items()
        if name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    return tuple(sorted(n for n in names if n not in RESERVED_ALGO_KWARGS))


def check_file(data: dict[str, Any], source: str) -> None:
    """Validate one config layer of an SB3 run; errors name ``source`` and the key."""
    check_layer(data, source, algo_parameters, tuple(ALGORITHMS))


#: algorithms whose SB3 constructor asserts, with ``normalize_advantage`` on (the default), that
#: a rollout holds more than one step (``n_steps * n_envs > 1``); PPO also asserts
#: ``batch_size > 1`` (stable_baselines3/ppo/ppo.py, sb3_contrib/trpo/trpo.py)
NORMALIZED_ROLLOUT_ALGOS = {"ppo": True, "trpo": False}
#: SB3's defaults of the settings those asserts read
SB3_DEFAULTS = {"n_steps": {"ppo": 2048, "trpo": 2048}, "batch_size": {"ppo": 64, "trpo": 128}}


def check_rollout_sizes(merged: dict[str, Any], source: str) -> None:
    """Refuse, naming ``source`` and the field, the merged settings that SB3's constructors
    reject with a bare ``AssertionError`` (one rollout step, or minibatches of one, while
    advantages are normalised), so that a run or a sweep stops before any training."""
    n_envs = merged.get("n_envs", 1)
    for algo, needs_batch in NORMALIZED_ROLLOUT_ALGOS.items():
        kwargs = (merged.get("algos") or {}).get(algo) or {}
        if not kwargs.get("normalize_advantage", True):
            continue
        n_steps = kwargs.get("n_steps", SB3_DEFAULTS["n_steps"][algo])
        batch_size = kwargs.get("batch_size", SB3_DEFAULTS["batch_size"][algo])
        if isinstance(n_steps, int) and isinstance(n_envs, int) and n_steps * n_envs <= 1:
            raise ValueError(
                f"{source}: algos.{algo}.n_steps x n_envs must be > 1 while "
                f"normalize_advantage is on (SB3 normalises advantages over the rollout), got "
                f"n_steps={n_steps} x n_envs={n_envs}; raise one or set "
                f"algos.{algo}.normalize_advantage: false"
            )
        if needs_batch and isinstance(batch_size, int) and batch_size <= 1:
            raise ValueError(
                f"{source}: algos.{algo}.batch_size must be > 1 while normalize_advantage is on "
                f"(SB3 normalises advantages over each minibatch), got {batch_size}"
            )


def load_config(
    env_id: str,
    user_file: str | Path | None = None,
    overrides: dict[str, Any] | None = None,
    vectorized: bool = False,
) -> TrainConfig:
    """The merged, validated config of an SB3 run on ``env_id`` (the layers of
    :func:`gymforge.baselines.training.config.merge_layers`)."""
    merged, sources = merge_layers(env_id, user_file, overrides, CONFIG_DIR, check_file, vectorized)
    return from_mapping(merged, sources)


def from_mapping(merged: dict[str, Any], sources: tuple[str, ...] = ()) -> TrainConfig:
    """A config from a complete mapping (a stored run's ``train_config``)."""
    check_file(merged, sources[-1] if sources else "config")
    check_rollout_sizes(merged, " + ".join(sources) or "config")
    return build(merged, sources)
