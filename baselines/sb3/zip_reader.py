"""Read a saved Stable-Baselines3 model as data: no pickle, no import named by the file.

SB3's own loader (``PPO.load``) deserialises every ``":serialized:"`` entry of the zip's
``data`` file with cloudpickle, so a model file from somebody else can run any code when it is
loaded. This reader never does: it takes

- from ``data`` (JSON) only plain fields and the readable copies SB3 writes beside each
  serialised entry (the policy class's module, the spaces' type and shape, ``policy_kwargs``'
  ``net_arch`` and activation), parsed with :func:`ast.literal_eval` (literals only) or against
  allow-lists;
- from ``policy.pth`` the state dict, with ``torch.load(..., weights_only=True)``;

then rebuilds the algorithm's standard policy class from the env's action space and the declared
architecture, and loads the weights strictly (every tensor present, every shape equal). What it
cannot read safely (a custom policy or feature extractor, an unknown activation, an observation
that is not a flat vector) is refused with a message naming it. The result acts exactly as the
model SB3 would load (tested against ``PPO.load``).

Resuming one's own training run (``gymforge train --resume``) still uses SB3's full loader,
which also restores the optimiser and schedules; it says so when it does.
"""

from __future__ import annotations

import ast
import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

#: algorithm -> (module of its policy class, the class in it that ``MlpPolicy`` names).
POLICY_CLASSES: dict[str, tuple[str, str]] = {
    "ppo": ("stable_baselines3.common.policies", "ActorCriticPolicy"),
    "a2c": ("stable_baselines3.common.policies", "ActorCriticPolicy"),
    "trpo": ("stable_baselines3.common.policies", "ActorCriticPolicy"),
    "dqn": ("stable_baselines3.dqn.policies", "DQNPolicy"),
    "sac": ("stable_baselines3.sac.policies", "SACPolicy"),
    "recurrentppo": ("sb3_contrib.common.recurrent.policies", "RecurrentActorCriticPolicy"),
}
#: activation functions a model may declare, by the class name SB3 writes.
ACTIVATIONS = ("ReLU", "Tanh", "ELU", "LeakyReLU", "GELU", "SiLU", "Sigmoid", "Softplus")
#: ``policy_kwargs`` keys that shape the acting network and are plain values.
PLAIN_POLICY_KWARGS = {
    "ortho_init": bool,
    "log_std_init": float,
    "full_std": bool,
    "use_expln": bool,
    "squash_output": bool,
    "use_sde": bool,
    "share_features_extractor": bool,
    "normalize_images": bool,
    "n_critics": int,
    "lstm_hidden_size": int,
    "n_lstm_layers": int,
    "shared_lstm": bool,
    "enable_critic_lstm": bool,
    "clip_mean": float,
}
#: keys that affect only training (the optimiser), never the actions: ignored.
TRAINING_ONLY_KWARGS = ("optimizer_class", "optimizer_kwargs")
#: largest ``data`` entry and weights file read (bytes); a model past them is refused unread.
MAX_DATA_BYTES = 16 * 2**20
MAX_WEIGHTS_BYTES = 1024 * 2**20


@dataclass
class LoadedModel:
    """The acting part of a saved SB3 model: its policy and spaces, with SB3's ``predict``."""

    policy: Any
    observation_space: gym.spaces.Space
    action_space: gym.spaces.Space
    algorithm: str
    #: env steps the model was trained for (the file's plain ``num_timesteps`` field)
    num_timesteps: int = 0

    def predict(
        self,
        observation: Any,
        state: Any = None,
        episode_start: Any = None,
        deterministic: bool = False,
    ) -> tuple[np.ndarray, Any]:
        """The policy's action(s), as ``BaseAlgorithm.predict`` returns them."""
        return self.policy.predict(observation, state, episode_start, deterministic)

    def set_random_seed(self, seed: int) -> None:
        """Seed the streams sampled actions draw from (as ``BaseAlgorithm.set_random_seed``)."""
        from stable_baselines3.common.utils import set_random_seed

        set_random_seed(seed)
        self.action_space.seed(seed)


def _fail(path: Path, what: str) -> ValueError:
    return ValueError(f"SB3 model {path}: {what}")


def _read_entry(archive: zipfile.ZipFile, name: str, limit: int, path: Path) -> bytes:
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise _fail(path, f"has no {name!r} entry (not a Stable-Baselines3 model)") from None
    if info.file_size > limit:
        raise _fail(path, f"entry {name!r} is {info.file_size} bytes; at most {limit} are read")
    with archive.open(info) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise _fail(path, f"entry {name!r} expands past {limit} bytes")
    return data


def read_zip(path: str | Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(data, state_dict)`` of a saved SB3 model, both read as data."""
    import torch

    path = Path(path)
    try:
        with zipfile.ZipFile(path) as archive:
            raw = _read_entry(archive, "data", MAX_DATA_BYTES, path)
            weights = _read_entry(archive, "policy.pth", MAX_WEIGHTS_BYTES, path)
    except (zipfile.BadZipFile, OSError) as error:
        raise _fail(path, f"is not a readable zip file ({error})") from None
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise _fail(path, f"its 'data' entry is not JSON ({error})") from None
    if not isinstance(data, dict):
        raise _fail(path, "its 'data' entry is not a JSON object")
    try:
        state = torch.load(io.BytesIO(weights), map_location="cpu", weights_only=True)
    except Exception as error:  # weights_only refuses anything but tensors and containers
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise _fail(
            path,
            f"'policy.pth' cannot be read as a plain state dict (truncated or corrupt file, or "
            f"it holds more than tensors): {first}",
        ) from None
    if not isinstance(state, dict):
        raise _fail(path, "'policy.pth' is not a state dict")
    return data, state


def _literal(text: Any, field: str, path: Path) -> Any:
    """A readable copy SB3 wrote (JSON value or its ``str``), as a Python literal."""
    if not isinstance(text, str):
        return text
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise _fail(path, f"{field} {text[:80]!r} is not a plain value") from None


def _class_name(entry: Any) -> str:
    """``Discrete`` from ``"<class 'gymnasium.spaces.discrete.Discrete'>"``."""
    text = entry.get(":type:", "") if isinstance(entry, dict) else ""
    return text.rstrip("'>").rsplit(".", 1)[-1]


def policy_kwargs_of(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """The acting network's ``policy_kwargs``, from plain values and allow-lists only."""
    import torch.nn as nn

    raw = data.get("policy_kwargs", {})
    if not isinstance(raw, dict):
        raise _fail(path, "policy_kwargs is not an object")
    kwargs: dict[str, Any] = {}
    for key, value in raw.items():
        if key == ":type:" or key == ":serialized:" or key in TRAINING_ONLY_KWARGS:
            continue
        if key == "net_arch":
            arch = _literal(value, "policy_kwargs.net_arch", path)
            ok_list = isinstance(arch, list) and all(isinstance(n, int) for n in arch)
            ok_dict = isinstance(arch, dict) and all(
                isinstance(v, list) and all(isinstance(n, int) for n in v) for v in arch.values()
            )
            if not (ok_list or ok_dict):
                raise _fail(path, f"policy_kwargs.net_arch {arch!r} is not a list of widths")
            kwargs[key] = arch
        elif key == "activation_fn":
            name = str(value).rstrip("'>").rsplit(".", 1)[-1]
            if not str(value).startswith("<class 'torch.nn.") or name not in ACTIVATIONS:
                raise _fail(
                    path,
                    f"policy_kwargs.activation_fn {value!r} is not one of torch.nn's {ACTIVATIONS}",
                )
            kwargs[key] = getattr(nn, name)
        elif key in PLAIN_POLICY_KWARGS:
            kwargs[key] = PLAIN_POLICY_KWARGS[key](_literal(value, f"policy_kwargs.{key}", path))
        else:
            raise _fail(
                path,
                f"policy_kwargs.{key} cannot be read safely (custom classes are not loaded); "
                f"readable keys: net_arch, activation_fn, {sorted(PLAIN_POLICY_KWARGS)}",
            )
    return kwargs


def _observation_space(data: dict[str, Any], path: Path) -> gym.spaces.Box:
    entry = data.get("observation_space")
    if _class_name(entry) != "Box":
        raise _fail(path, f"observation space {_class_name(entry) or entry!r} is not a Box")
    shape = _literal(entry.get("_shape"), "observation_space.shape", path)
    if not (isinstance(shape, list | tuple) and len(shape) == 1 and int(shape[0]) > 0):
        raise _fail(path, f"observation shape {shape!r} is not a flat vector")
    return gym.spaces.Box(-np.inf, np.inf, shape=(int(shape[0]),), dtype=np.float32)


def _stored_action_space(entry: Any, path: Path) -> gym.Space:
    """A discrete action space from the model's readable copy of it (no env given)."""
    kind = _class_name(entry)
    if kind == "Discrete":
        return gym.spaces.Discrete(int(_literal(entry.get("n"), "action_space.n", path)))
    if kind == "MultiDiscrete":
        text = str(entry.get("nvec", "")).strip("[] ")
        if not text or not all(part.isdigit() for part in text.split()):
            raise _fail(path, f"action_space.nvec {entry.get('nvec')!r} is not a list of sizes")
        return gym.spaces.MultiDiscrete([int(part) for part in text.split()])
    raise _fail(path, f"a {kind or 'stored'} action space needs the env's space to be rebuilt")


def _action_space(data: dict[str, Any], env_space: gym.Space | None, path: Path) -> gym.Space:
    """The env's action space, or ``Discrete(n)`` over a MultiDiscrete's product; the model's
    stored type and size must agree with it. Without an env, a discrete space is read from the
    file."""
    entry = data.get("action_space")
    if env_space is None:
        env_space = _stored_action_space(entry, path)
    kind = _class_name(entry)
    if kind == "Discrete" and isinstance(env_space, gym.spaces.MultiDiscrete):
        space: gym.Space = gym.spaces.Discrete(int(np.prod(env_space.nvec)))
    else:
        space = env_space
    if kind != type(space).__name__:
        raise _fail(path, f"action space {kind or entry!r} does not fit the env's {env_space}")
    if kind == "Discrete":
        n = _literal(entry.get("n"), "action_space.n", path)
        if int(n) != space.n:
            raise _fail(path, f"action space Discrete({n}) does not fit the env's {env_space}")
    else:
        shape = _literal(entry.get("_shape"), "action_space.shape", path)
        if tuple(shape) != tuple(space.shape):
            raise _fail(path, f"action shape {shape} does not fit the env's {env_space}")
    return space


def load_policy(
    path: str | Path, algorithm: str, env_action_space: gym.Space | None
) -> LoadedModel:
    """The policy of the SB3 model at ``path`` (saved by ``algorithm``), rebuilt as data, for
    the env's action space (``None``: the discrete space stored in the file).

    Raises ``ValueError`` naming what cannot be read safely or does not fit the env.
    """
    import importlib

    path = Path(path)
    if algorithm not in POLICY_CLASSES:
        raise ValueError(f"algorithm must be one of {sorted(POLICY_CLASSES)}, got {algorithm!r}")
    data, state = read_zip(path)
    module, class_name = POLICY_CLASSES[algorithm]
    declared = data.get("policy_class", {})
    declared_module = declared.get("__module__") if isinstance(declared, dict) else None
    if declared_module != module:
        raise _fail(
            path,
            f"its policy class comes from {declared_module!r}; only {algorithm}'s standard "
            f"policy ({module}.{class_name}) is rebuilt (custom code is never loaded)",
        )
    observation_space = _observation_space(data, path)
    action_space = _action_space(data, env_action_space, path)
    policy_cls = getattr(importlib.import_module(module), class_name)
    try:
        policy = policy_cls(
            observation_space, action_space, lambda _: 0.0, **policy_kwargs_of(data, path)
        )
        policy.load_state_dict(state, strict=True)
    except (RuntimeError, TypeError, ValueError) as error:
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise _fail(path, f"its weights do not fit the declared architecture ({first})") from None
    policy.set_training_mode(False)
    steps = data.get("num_timesteps", 0)
    steps = steps if isinstance(steps, int) and not isinstance(steps, bool) else 0
    return LoadedModel(policy, observation_space, action_space, algorithm, steps)
