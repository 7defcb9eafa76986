"""Training configs of both backends: versioned per-task defaults, user files, overrides.

A config file (YAML or JSON) holds, all keys but ``version`` optional::

    version: 1            # schema version, must be 1
    revision: 2           # revision of this hyperparameter set (bump when a value changes)
    description: "..."
    env_kwargs: {}        # keyword arguments of gym.make / gym.make_vec
    n_envs: 5             # parallel training envs
    frame_stack: 1        # observations stacked along the last axis (1: none)
    curriculum: null      # or {start, threshold, update, factor_max, look_back}
    eval: {every: 25000, episodes: 1}   # held-out evaluation (every 0: off)
                          # (+ keep_best: true, on-device trainer only: the run's policy is
                          # its best-evaluated one; evaluations on seeds disjoint from boards)
    checkpoint_every: 0   # steps between resumable checkpoints (0: only the final model)
    algos:                # per-algorithm settings (SB3 class arguments, or PPOConfig's)
      ppo: {n_steps: 500, batch_size: 500}

The packaged layers live in ``baselines/configs/`` (SB3) and ``baselines/configs/ondevice/``
(the on-device trainer). The effective config of a run is ``default.yaml``, then
``<env id>.yaml`` when the id has one, then (``--vectorized`` runs only) ``vectorized.yaml``,
then the user's ``--config`` file, then the command line's overrides, each overriding the
previous key by key (``algos``, ``eval`` and ``curriculum`` merge one level deeper). Every layer
is validated on its own, so an error names the file and the key; what an ``algos`` entry may
hold is the backend's business (the ``check`` it passes).
"""

from __future__ import annotations

import argparse
import copy
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gymforge.baselines.training.files import read_file

SCHEMA_VERSION = 1
CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs"
TOP_KEYS = (
    "version",
    "revision",
    "description",
    "env_kwargs",
    "n_envs",
    "frame_stack",
    "curriculum",
    "eval",
    "checkpoint_every",
    "algos",
)
#: the layer ``--vectorized`` runs add after the task's file
VECTORIZED_FILE = "vectorized.yaml"
CURRICULUM_KEYS = ("start", "threshold", "update", "factor_max", "look_back")
EVAL_KEYS = ("every", "episodes")
#: ``eval.keep_best``: the on-device trainer's choice of the best validated policy
KEEP_BEST_KEY = "keep_best"
#: SB3 constructor arguments that ``gymforge train`` sets itself.
RESERVED_ALGO_KWARGS = (
    "policy",
    "env",
    "seed",
    "device",
    "verbose",
    "tensorboard_log",
    "_init_setup_model",
)


@dataclass(frozen=True)
class Curriculum:
    """Scrap-factor curriculum (LineFlow): raise the factor when training returns are high.

    After every rollout, when the mean return of the last ``look_back`` finished training
    episodes is at least ``threshold``, the factor grows by ``update`` (capped at ``factor_max``)
    and the window starts afresh. Training starts at ``start``.
    """

    start: float = 0.0
    threshold: float = 0.0
    update: float = 0.02
    factor_max: float = float("inf")
    look_back: int = 5


@dataclass(frozen=True)
class TrainConfig:
    """The validated, merged config of one training run."""

    revision: int = 0
    description: str = ""
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    n_envs: int = 1
    frame_stack: int = 1
    curriculum: Curriculum | None = None
    eval_every: int = 0
    eval_episodes: int = 1
    eval_keep_best: bool = False
    checkpoint_every: int = 0
    algos: dict[str, dict[str, Any]] = field(default_factory=dict)
    sources: tuple[str, ...] = ()

    def algo_kwargs(self, algo: str) -> dict[str, Any]:
        """Keyword arguments for ``algo``'s constructor (a copy)."""
        return copy.deepcopy(self.algos.get(algo, {}))

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (stored in the run's ``config.json``)."""
        curriculum = None
        if self.curriculum is not None:
            curriculum = {k: getattr(self.curriculum, k) for k in CURRICULUM_KEYS}
            if curriculum["factor_max"] == float("inf"):
                curriculum["factor_max"] = None
        return {
            "version": SCHEMA_VERSION,
            "revision": self.revision,
            "description": self.description,
            "env_kwargs": self.env_kwargs,
            "n_envs": self.n_envs,
            "frame_stack": self.frame_stack,
            "curriculum": curriculum,
            "eval": {
                "every": self.eval_every,
                "episodes": self.eval_episodes,
                **({KEEP_BEST_KEY: True} if self.eval_keep_best else {}),
            },
            "checkpoint_every": self.checkpoint_every,
            "algos": self.algos,
        }


def _int(value: Any, where: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{where} must be an int >= {minimum}, got {value!r}")
    return value


def _number(value: Any, where: str, minimum: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < minimum:
        raise ValueError(f"{where} must be a number >= {minimum}, got {value!r}")
    return float(value)


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{where} must be a mapping, got {value!r}")
    return value


def _unknown(keys: Any, allowed: tuple[str, ...], where: str) -> None:
    extra = sorted(set(keys) - set(allowed))
    if extra:
        raise ValueError(f"{where}: unknown key {extra[0]!r}; allowed: {list(allowed)}")


def check_layer(
    data: dict[str, Any],
    source: str,
    parameters: Callable[[str], list[str]],
    algorithms: tuple[str, ...],
    eval_keys: tuple[str, ...] = EVAL_KEYS,
) -> None:
    """Validate one config mapping (complete or partial); errors name ``source`` and the key.

    ``parameters(algo)`` lists the settings an ``algos`` entry may hold and ``algorithms`` the
    algorithm names: each backend passes its own (SB3's constructors, the on-device
    :class:`~gymforge.baselines.ondevice.ppo_config.PPOConfig`).
    ``eval_keys`` are the ``eval`` keys the backend reads (the on-device trainer adds
    ``keep_best``; SB3 refuses it rather than ignore it).
    """
    _unknown(data, TOP_KEYS, source)
    if "version" not in data:
        raise ValueError(f"{source}: missing key 'version' (must be {SCHEMA_VERSION})")
    if data["version"] != SCHEMA_VERSION:
        raise ValueError(f"{source}: version must be {SCHEMA_VERSION}, got {data['version']!r}")
    if "revision" in data:
        _int(data["revision"], f"{source}: revision", 0)
    if "description" in data and not isinstance(data["description"], str):
        raise ValueError(f"{source}: description must be a string, got {data['description']!r}")
    if "env_kwargs" in data:
        _mapping(data["env_kwargs"], f"{source}: env_kwargs")
    if "n_envs" in data:
        _int(data["n_envs"], f"{source}: n_envs", 1)
    if "frame_stack" in data:
        _int(data["frame_stack"], f"{source}: frame_stack", 1)
    if "checkpoint_every" in data:
        _int(data["checkpoint_every"], f"{source}: checkpoint_every", 0)
    if data.get("curriculum") is not None:
        cur = _mapping(data["curriculum"], f"{source}: curriculum")
        _unknown(cur, CURRICULUM_KEYS, f"{source}: curriculum")
        for key in ("start", "update"):
            if key in cur:
                _number(cur[key], f"{source}: curriculum.{key}", 0.0)
        if "threshold" in cur:
            _number(cur["threshold"], f"{source}: curriculum.threshold", float("-inf"))
        if cur.get("factor_max") is not None:
            _number(cur["factor_max"], f"{source}: curriculum.factor_max", 0.0)
        if "look_back" in cur:
            _int(cur["look_back"], f"{source}: curriculum.look_back", 1)
    if "eval" in data:
        ev = _mapping(data["eval"], f"{source}: eval")
        _unknown(ev, eval_keys, f"{source}: eval")
        if KEEP_BEST_KEY in ev and not isinstance(ev[KEEP_BEST_KEY], bool):
            raise ValueError(
                f"{source}: eval.keep_best must be true or false, got {ev[KEEP_BEST_KEY]!r}"
            )
        if "every" in ev:
            _int(ev["every"], f"{source}: eval.every", 0)
        if "episodes" in ev:
            _int(ev["episodes"], f"{source}: eval.episodes", 1)
    if "algos" in data:
        algos = _mapping(data["algos"], f"{source}: algos")
        _unknown(algos, algorithms, f"{source}: algos")
        for name, kwargs in algos.items():
            kwargs = _mapping(kwargs if kwargs is not None else {}, f"{source}: algos.{name}")
            allowed = parameters(name)
            for key in kwargs:
                if key in RESERVED_ALGO_KWARGS:
                    raise ValueError(
                        f"{source}: algos.{name}.{key} is set by gymforge train itself "
                        f"(use its command-line options); settable: {allowed}"
                    )
                if key not in allowed:
                    raise ValueError(
                        f"{source}: algos.{name}: unknown argument {key!r}; allowed: {allowed}"
                    )
                check_hyperparameter(key, kwargs[key], f"{source}: algos.{name}.{key}")


#: numeric hyperparameters checked before training: name -> (low, high, low allowed, int).
HYPERPARAMETER_RANGES: dict[str, tuple[float, float, bool, bool]] = {
    "learning_rate": (0.0, math.inf, False, False),
    "gamma": (0.0, 1.0, True, False),
    "gae_lambda": (0.0, 1.0, True, False),
    "clip_range": (0.0, math.inf, False, False),
    "ent_coef": (0.0, math.inf, True, False),
    "vf_coef": (0.0, math.inf, True, False),
    "max_grad_norm": (0.0, math.inf, False, False),
    "n_steps": (1, math.inf, True, True),
    "batch_size": (1, math.inf, True, True),
    "n_epochs": (1, math.inf, True, True),
    "buffer_size": (1, math.inf, True, True),
    "learning_starts": (0, math.inf, True, True),
    "tau": (0.0, 1.0, False, False),
}


def check_hyperparameter(key: str, value: Any, where: str) -> None:
    """Raise ``ValueError`` naming ``where`` when a known numeric hyperparameter is out of range
    (other settings are left to the algorithm)."""
    if key not in HYPERPARAMETER_RANGES:
        return
    low, high, closed, integer = HYPERPARAMETER_RANGES[key]
    kinds = (int,) if integer else (int, float)
    ok = not isinstance(value, bool) and isinstance(value, kinds) and math.isfinite(value)
    ok = ok and (value >= low if closed else value > low) and value <= high
    if not ok:
        bound = f"{'[' if closed else '('}{low:g}, {high:g}]".replace("inf]", "inf)")
        kind = "an int" if integer else "a number"
        raise ValueError(f"{where} must be {kind} in {bound}, got {value!r}")


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if key in ("algos", "eval", "curriculum") and isinstance(value, dict):
            inner = dict(merged.get(key) or {})
            if key == "algos":
                for algo, kwargs in value.items():
                    inner[algo] = {**inner.get(algo, {}), **(kwargs or {})}
            else:
                inner.update(value)
            merged[key] = inner
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def task_config_path(env_id: str, config_dir: Path = CONFIG_DIR) -> Path | None:
    """The packaged defaults file of ``env_id``, if it has one."""
    path = config_dir / f"{env_id}.yaml"
    return path if path.is_file() else None


def merge_layers(
    env_id: str,
    user_file: str | Path | None,
    overrides: dict[str, Any] | None,
    config_dir: Path,
    check: Callable[[dict[str, Any], str], None],
    vectorized: bool = False,
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The merged mapping of a run's config layers on ``env_id``, each layer validated, and the
    layers' names.

    Args:
        env_id: the id whose packaged defaults apply.
        user_file: an optional ``--config`` file (YAML or JSON).
        overrides: an optional mapping in the file schema (``version`` may be left out), applied
            last; sweeps pass their hyperparameter grid points this way.
        config_dir, check: where the packaged files are and how each layer is validated (the
            on-device trainer has its own folder and algorithm settings).
        vectorized: add the ``vectorized.yaml`` layer of ``config_dir`` (when it has one) after
            the task's file: rollout and minibatch sizes for hundreds of batched instances.
    """
    layers: list[tuple[str, dict[str, Any]]] = [
        ("default.yaml", read_file(config_dir / "default.yaml"))
    ]
    task_path = task_config_path(env_id, config_dir)
    if task_path is not None:
        layers.append((task_path.name, read_file(task_path)))
    if vectorized and (config_dir / VECTORIZED_FILE).is_file():
        layers.append((VECTORIZED_FILE, read_file(config_dir / VECTORIZED_FILE)))
    if user_file is not None:
        layers.append((str(user_file), read_file(user_file)))
    if overrides:
        layers.append(("overrides", {"version": SCHEMA_VERSION, **overrides}))
    merged: dict[str, Any] = {}
    for source, data in layers:
        check(data, source)
        merged = _merge(merged, data)
    return merged, tuple(source for source, _ in layers)


def load_config(
    env_id: str,
    user_file: str | Path | None,
    overrides: dict[str, Any] | None,
    config_dir: Path,
    check: Callable[[dict[str, Any], str], None],
) -> TrainConfig:
    """The merged, validated config of a run on ``env_id`` (see :func:`merge_layers`)."""
    merged, sources = merge_layers(env_id, user_file, overrides, config_dir, check)
    return from_mapping(merged, sources, check)


def from_mapping(
    merged: dict[str, Any],
    sources: tuple[str, ...],
    check: Callable[[dict[str, Any], str], None],
) -> TrainConfig:
    """A :class:`TrainConfig` from a complete mapping (e.g. ``TrainConfig.to_json()`` output),
    validated by ``check``."""
    check(merged, sources[-1] if sources else "config")
    return build(merged, sources)


def build(merged: dict[str, Any], sources: tuple[str, ...]) -> TrainConfig:
    """A :class:`TrainConfig` from a complete mapping that has been validated."""
    cur = merged.get("curriculum")
    curriculum = None
    if cur is not None:
        cur = {k: v for k, v in cur.items() if v is not None}
        curriculum = Curriculum(**cur)
    ev = merged.get("eval", {})
    return TrainConfig(
        revision=int(merged.get("revision", 0)),
        description=str(merged.get("description", "")),
        env_kwargs=dict(merged.get("env_kwargs", {})),
        n_envs=int(merged.get("n_envs", 1)),
        frame_stack=int(merged.get("frame_stack", 1)),
        curriculum=curriculum,
        eval_every=int(ev.get("every", 0)),
        eval_episodes=int(ev.get("episodes", 1)),
        eval_keep_best=bool(ev.get(KEEP_BEST_KEY, False)),
        checkpoint_every=int(merged.get("checkpoint_every", 0)),
        algos={k: dict(v or {}) for k, v in merged.get("algos", {}).items()},
        sources=sources,
    )


def config_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The config overrides of ``--eval-every``, ``--eval-episodes`` and ``--checkpoint-every``
    (in the config-file schema); with ``--resume`` none of them, nor ``--config``/``--n-envs``,
    may be given."""
    overrides: dict[str, Any] = {}
    if args.eval_every is not None or args.eval_episodes is not None:
        overrides["eval"] = {
            k: v
            for k, v in (("every", args.eval_every), ("episodes", args.eval_episodes))
            if v is not None
        }
    if args.checkpoint_every is not None:
        overrides["checkpoint_every"] = args.checkpoint_every
    if args.resume is not None and (args.config is not None or overrides or args.n_envs):
        raise ValueError(
            "--resume continues a run with its own settings; drop --config, --n-envs, "
            "--eval-every, --eval-episodes and --checkpoint-every"
        )
    return overrides
