"""Training configs: the versioned per-task defaults in ``baselines/configs/`` and user files.

A config file (YAML or JSON) holds, all keys but ``version`` optional::

    version: 1            # schema version, must be 1
    revision: 2           # revision of this hyperparameter set (bump when a value changes)
    description: "..."
    env_kwargs: {}        # keyword arguments of gym.make / gym.make_vec
    n_envs: 5             # parallel training envs
    frame_stack: 1        # observations stacked along the last axis (1: none)
    curriculum: null      # or {start, threshold, update, factor_max, look_back}
    eval: {every: 25000, episodes: 1}   # held-out evaluation (every 0: off)
    checkpoint_every: 0   # steps between resumable checkpoints (0: only the final model)
    algos:                # per-algorithm keyword arguments of the SB3 class
      ppo: {n_steps: 500, batch_size: 500}

The effective config of a run is ``default.yaml``, then ``<env id>.yaml`` when the id has one,
then (``--vectorized`` runs only) ``vectorized.yaml``, then the user's ``--config`` file, each overriding the previous key by key (``algos``, ``eval``
and ``curriculum`` merge one level deeper). Every file is validated on its own, so an error
names the file and the key.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import inspect
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gymforge.baselines.sb3.algorithms import ALGORITHMS, get_algorithm

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
            "eval": {"every": self.eval_every, "episodes": self.eval_episodes},
            "checkpoint_every": self.checkpoint_every,
            "algos": self.algos,
        }


#: the largest config or sweep file read (bytes): real ones are a few kB
MAX_FILE_BYTES = 1 << 20
#: aliases (``*name``) a YAML file may use: real configs use none or a few
MAX_YAML_ALIASES = 100
#: nodes a YAML document may hold once its aliases are expanded: a few nested anchors can
#: otherwise stand for billions of nodes ("billion laughs"), which copying the parsed mapping
#: (merging layers, expanding a sweep's jobs) would then build in memory
MAX_YAML_NODES = 100_000


class _LimitedLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses more than :data:`MAX_YAML_ALIASES` aliases, a recursive
    alias, and a document of more than :data:`MAX_YAML_NODES` nodes once expanded."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._aliases = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_YAML_ALIASES:
                raise yaml.YAMLError(
                    f"more than {MAX_YAML_ALIASES} aliases (*name); write the values out"
                )
        return super().compose_node(parent, index)

    def compose_document(self) -> Any:
        node = super().compose_document()
        expanded = _expanded_nodes(node, {}, set())
        if expanded > MAX_YAML_NODES:
            raise yaml.YAMLError(
                f"its aliases (*name) expand to more than {MAX_YAML_NODES:,} nodes (a "
                "'billion laughs' document); write the values out"
            )
        return node


def _expanded_nodes(node: yaml.Node, sizes: dict[int, int], open_nodes: set[int]) -> int:
    """Nodes under ``node`` with every alias expanded, counted once per distinct node (so in
    time linear in the document, however large the expansion)."""
    key = id(node)
    if key in sizes:
        return sizes[key]
    if key in open_nodes:
        raise yaml.YAMLError("a recursive alias (an anchor used inside itself)")
    open_nodes.add(key)
    total = 1
    if isinstance(node, yaml.SequenceNode):
        total += sum(_expanded_nodes(item, sizes, open_nodes) for item in node.value)
    elif isinstance(node, yaml.MappingNode):
        for item_key, item_value in node.value:
            total += _expanded_nodes(item_key, sizes, open_nodes)
            total += _expanded_nodes(item_value, sizes, open_nodes)
    open_nodes.discard(key)
    sizes[key] = min(total, MAX_YAML_NODES + 1)  # capped: the count only needs to cross it
    return sizes[key]


def load_yaml(text: str) -> Any:
    """``yaml.safe_load(text)`` with the alias limits of :class:`_LimitedLoader` (raises
    ``yaml.YAMLError`` naming the limit); every config and sweep file is read through it."""
    loader = _LimitedLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


@functools.lru_cache(maxsize=64)
def _parse_file(path: str, mtime_ns: int, size: int) -> Any:
    """The parsed contents of ``path`` (cached by modification time and size: a sweep reads the
    packaged defaults once per job, and the pure-Python YAML parser is slow)."""
    text = Path(path).read_text()
    return json.loads(text) if path.endswith(".json") else load_yaml(text)


def read_file(path: str | Path) -> dict[str, Any]:
    """Parse a YAML (``.yaml``/``.yml``) or JSON (``.json``) file into a mapping.

    Files over :data:`MAX_FILE_BYTES`, and YAML whose aliases expand too far (see
    :func:`load_yaml`), are refused before they are parsed or expanded.
    """
    path = Path(path)
    if path.suffix not in (".yaml", ".yml", ".json"):
        raise ValueError(f"config file must end in .yaml, .yml or .json, got {str(path)!r}")
    if not path.is_file():
        raise ValueError(f"config file not found: {path}")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ValueError(
            f"{path}: {size:,} bytes, more than the {MAX_FILE_BYTES:,} a config or sweep file "
            "may have"
        )
    try:
        parsed = _parse_file(str(path.resolve()), path.stat().st_mtime_ns, size)
    except (json.JSONDecodeError, yaml.YAMLError) as error:
        raise ValueError(f"{path}: not valid {path.suffix[1:].upper()}: {error}") from None
    data = copy.deepcopy(parsed)  # the caller may change it; the cache keeps its own
    if not isinstance(data, dict):
        raise ValueError(f"{path}: the top level must be a mapping, got {type(data).__name__}")
    return data


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


def check_file(
    data: dict[str, Any],
    source: str,
    parameters: Callable[[str], list[str]] | None = None,
    algorithms: tuple[str, ...] | None = None,
) -> None:
    """Validate one config mapping (complete or partial); errors name ``source`` and the key.

    ``parameters(algo)`` lists the settings an ``algos`` entry may hold and ``algorithms`` the
    algorithm names (default: the SB3 constructors and :data:`ALGORITHMS`; the on-device trainer
    passes its own).
    """
    parameters = parameters or algo_parameters
    algorithms = algorithms or tuple(ALGORITHMS)
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
        _unknown(ev, EVAL_KEYS, f"{source}: eval")
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


def file_sha256(path: str | Path) -> str:
    """Hex digest of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def load_config(
    env_id: str,
    user_file: str | Path | None = None,
    overrides: dict[str, Any] | None = None,
    config_dir: Path = CONFIG_DIR,
    check: Callable[[dict[str, Any], str], None] = check_file,
    vectorized: bool = False,
) -> TrainConfig:
    """The merged, validated config of a run on ``env_id``.

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
    return from_mapping(merged, tuple(source for source, _ in layers), check)


def from_mapping(
    merged: dict[str, Any],
    sources: tuple[str, ...] = (),
    check: Callable[[dict[str, Any], str], None] = check_file,
) -> TrainConfig:
    """A :class:`TrainConfig` from a complete mapping (e.g. ``TrainConfig.to_json()`` output)."""
    check(merged, sources[-1] if sources else "config")
    if check is check_file:
        check_rollout_sizes(merged, " + ".join(sources) or "config")
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
        checkpoint_every=int(merged.get("checkpoint_every", 0)),
        algos={k: dict(v or {}) for k, v in merged.get("algos", {}).items()},
        sources=sources,
    )
