"""Configs of the on-device trainer: the schema of ``gymforge train`` config files, with the
settings of :class:`.ppo_config.PPOConfig` under ``algos``.

The packaged files live in ``baselines/configs/ondevice/`` (``default.yaml``, then
``<env id>.yaml`` when the id has one); a user's ``--config`` file and command-line overrides are
layered on top, exactly as for the SB3 backend (:mod:`gymforge.baselines.training.config`).
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

from gymforge.baselines.ondevice import a2c, recurrent_ppo
from gymforge.baselines.ondevice.ppo_config import PPOConfig
from gymforge.baselines.training import config
from gymforge.baselines.training.config import CONFIG_DIR, EVAL_KEYS, KEEP_BEST_KEY, TrainConfig

ONDEVICE_CONFIG_DIR = CONFIG_DIR / "ondevice"
#: algorithm -> its defaults over :class:`PPOConfig`'s
ALGORITHM_DEFAULTS: dict[str, dict[str, Any]] = {
    "ppo": {},
    "a2c": a2c.DEFAULTS,
    "recurrentppo": recurrent_ppo.DEFAULTS,
}
ALGORITHMS = tuple(ALGORITHM_DEFAULTS)


def _parameters(algo: str) -> list[str]:
    return sorted(f.name for f in fields(PPOConfig))


def check(data: dict[str, Any], source: str) -> None:
    """Validate one config layer; ``algos`` entries are checked against :class:`PPOConfig`."""
    config.check_layer(data, source, _parameters, ALGORITHMS, (*EVAL_KEYS, KEEP_BEST_KEY))
    for name, settings in (data.get("algos") or {}).items():
        merged = {**ALGORITHM_DEFAULTS[name], **(settings or {})}
        PPOConfig.from_mapping(merged, f"{source}: algos.{name}")


def load_config(
    env_id: str, user_file: str | Path | None = None, overrides: dict[str, Any] | None = None
) -> TrainConfig:
    """The merged, validated config of an on-device run on ``env_id``."""
    return config.load_config(env_id, user_file, overrides, ONDEVICE_CONFIG_DIR, check)


def from_mapping(merged: dict[str, Any], sources: tuple[str, ...] = ()) -> TrainConfig:
    """A config from a complete mapping (a stored run's ``train_config``)."""
    return config.from_mapping(merged, sources, check)


def algo_config(cfg: TrainConfig, algo: str) -> PPOConfig:
    """The algorithm's hyperparameters: its defaults, then the config's ``algos.<algo>``."""
    if algo not in ALGORITHM_DEFAULTS:
        raise ValueError(f"unknown algorithm {algo!r} for the torch backend; allowed: {ALGORITHMS}")
    merged = {**ALGORITHM_DEFAULTS[algo], **cfg.algo_kwargs(algo)}
    return PPOConfig.from_mapping(merged, f"algos.{algo}")
