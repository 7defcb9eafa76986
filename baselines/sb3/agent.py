"""A trained SB3 model as a gymforge agent: ``reset(seed)``, ``act(observation, info)``.

The agent owns what the model needs between steps and the env does not give it: the stacked
observations of a frame-stacking run and the LSTM state of RecurrentPPO. It acts
deterministically (the mode of the policy), on one observation of the single env or a batch
``(B, *obs_shape)`` from a vector env.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from gymforge.agents.actions import to_env_action
from gymforge.baselines.sb3.algorithms import get_algorithm

ARTIFACT_FORMAT = "gymforge-sb3-agent"
ARTIFACT_FORMAT_VERSION = 1
MODEL_FILE = "model.zip"
CONFIG_FILE = "config.json"


class SB3Agent:
    """Deterministic policy of a trained SB3 model, on one observation or a batch.

    Args:
        model: an SB3 / sb3-contrib algorithm, or the acting part of a saved model read as data
            (:class:`~gymforge.baselines.sb3.zip_reader.LoadedModel`).
        frame_stack: observations the model sees stacked along the last axis (as SB3's
            ``VecFrameStack``: zeros after a reset, newest last).
        recurrent: the model keeps an LSTM state (RecurrentPPO).
        config: the run's ``config.json`` (kept for reference).
        env_action_space: the env's action space: actions are returned in its form (a flat
            ``Discrete`` index mapped back to ``MultiDiscrete`` entries); default the model's.
    """

    def __init__(
        self,
        model: Any,
        frame_stack: int = 1,
        recurrent: bool = False,
        config: dict[str, Any] | None = None,
        env_action_space: gym.Space | None = None,
    ) -> None:
        self.model = model
        self.frame_stack = int(frame_stack)
        self.recurrent = recurrent
        self.config = dict(config or {})
        self.env_action_space = env_action_space
        space = model.observation_space
        self._obs_shape = tuple(space.shape)
        if self.frame_stack > 1:
            last = self._obs_shape[-1]
            if last % self.frame_stack:
                raise ValueError(
                    f"frame_stack={self.frame_stack} does not divide the model's observation "
                    f"size {last}"
                )
            self._single_shape = (*self._obs_shape[:-1], last // self.frame_stack)
        else:
            self._single_shape = self._obs_shape
        # discrete actions need no rescaling or clipping, so the policy's forward is the action:
        # calling it directly skips predict's per-call checks (2-3x faster for small MLPs)
        self._fast = (
            not recurrent
            and isinstance(model.action_space, gym.spaces.Discrete | gym.spaces.MultiDiscrete)
            and isinstance(space, gym.spaces.Box)
        )
        self._stack: np.ndarray | None = None
        self._state: Any = None
        self._starts: np.ndarray | None = None

    @classmethod
    def for_env(cls, model: Any, env: gym.Env, recurrent: bool = False) -> SB3Agent:
        """The agent of ``model`` acting on ``env``'s flat observations: a model that reads k
        times the env's features was trained on k stacked frames."""
        env_shape = env.observation_space.shape
        model_shape = model.observation_space.shape
        if env_shape is None or model_shape is None or len(env_shape) != 1:
            raise ValueError("SB3 agents need a flat Box observation in the env and the model")
        if model_shape[0] % env_shape[0] != 0:
            raise ValueError(
                f"model observation {model_shape} is not a stack of the env's {env_shape}"
            )
        stack = model_shape[0] // env_shape[0]
        return cls(model, stack, recurrent, env_action_space=env.action_space)

    def reset(self, seed: int | None = None) -> None:
        """Forget the stacked frames and the recurrent state (call at every episode start)."""
        self._stack = None
        self._state = None
        self._starts = None

    def _batched(self, observation: Any) -> tuple[np.ndarray, bool]:
        obs = np.asarray(observation, dtype=np.float32)
        if obs.shape == self._single_shape:
            return obs[None], False
        if obs.shape[1:] == self._single_shape:
            return obs, True
        raise ValueError(
            f"observation shape must be {self._single_shape} or (B, *{self._single_shape}), "
            f"got {obs.shape}"
        )

    def _stacked(self, obs: np.ndarray) -> np.ndarray:
        if self.frame_stack == 1:
            return obs
        width = obs.shape[-1]
        if self._stack is None or self._stack.shape[0] != obs.shape[0]:
            self._stack = np.zeros((obs.shape[0], *self._obs_shape), dtype=np.float32)
        self._stack = np.roll(self._stack, -width, axis=-1)
        self._stack[..., -width:] = obs
        return self._stack

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> Any:
        """The model's deterministic action for ``observation`` (single or batched)."""
        obs, batched = self._batched(observation)
        obs = self._stacked(obs)
        if self.recurrent:
            if self._starts is None or self._starts.shape[0] != obs.shape[0]:
                self._starts = np.ones(obs.shape[0], dtype=bool)
            action, self._state = self.model.predict(
                obs, state=self._state, episode_start=self._starts, deterministic=True
            )
            self._starts = np.zeros(obs.shape[0], dtype=bool)
        elif self._fast:
            import torch

            policy = self.model.policy
            with torch.no_grad():
                tensor = torch.as_tensor(obs).to(policy.device)
                action = policy._predict(tensor, deterministic=True).cpu().numpy()
        else:
            action, _ = self.model.predict(obs, deterministic=True)
        action = np.asarray(action)
        if self.env_action_space is not None:
            mapped = [
                to_env_action(a, self.model.action_space, self.env_action_space) for a in action
            ]
            return np.stack([np.asarray(a) for a in mapped]) if batched else mapped[0]
        return action if batched else action[0]

    def episode_done(self, index: int) -> None:
        """Restart instance ``index``'s memory (batched use: an instance finished an episode)."""
        if self._stack is not None:
            self._stack[index] = 0.0
        if self._starts is not None:
            self._starts[index] = True


def resolve_artifact(path: str | Path) -> tuple[Path, Path]:
    """``(model.zip, config.json)`` of a run folder, a checkpoint folder or a ``model.zip``."""
    path = Path(path)
    folder = path if path.is_dir() else path.parent
    model = path if path.is_file() else folder / MODEL_FILE
    config = folder / CONFIG_FILE
    if not model.is_file():
        raise ValueError(f"no SB3 model at {model} (expected a run folder or its {MODEL_FILE})")
    if not config.is_file():
        raise ValueError(f"no {CONFIG_FILE} beside {model}: cannot tell the algorithm")
    return model, config


def read_artifact_config(path: str | Path) -> dict[str, Any]:
    """The ``config.json`` of a saved agent, checked for its format."""
    _, config_path = resolve_artifact(path)
    try:
        config = json.loads(config_path.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{config_path}: corrupt or truncated JSON ({error})") from None
    if not isinstance(config, dict):
        raise ValueError(f"{config_path}: must be a JSON object")
    if config.get("format") != ARTIFACT_FORMAT:
        raise ValueError(f"{config_path}: format must be {ARTIFACT_FORMAT!r}")
    if config.get("format_version") != ARTIFACT_FORMAT_VERSION:
        raise ValueError(f"{config_path}: format_version must be {ARTIFACT_FORMAT_VERSION}")
    return config


def load_model(path: str | Path, action_space: Any = None, device: str = "cpu") -> tuple[Any, dict]:
    """The acting policy of a saved agent, read as data (no pickle); returns ``(model, config)``.

    ``action_space`` is the env's (default: built from the run's ``config.json``): the policy is
    rebuilt for it (:mod:`gymforge.baselines.sb3.zip_reader`).
    """
    from gymforge.baselines.sb3.zip_reader import load_policy
    from gymforge.baselines.training.evaluation import make_single_env

    model_path, _ = resolve_artifact(path)
    config = read_artifact_config(path)
    algo = get_algorithm(config["algo"])
    if action_space is None:
        env = make_single_env(config["env_id"], config.get("env_kwargs", {}))
        action_space = env.action_space
        env.close()
    model = load_policy(model_path, algo.name, action_space)
    model.policy.to(device)
    return model, config


def load_agent(path: str | Path, device: str = "cpu", action_space: Any = None) -> SB3Agent:
    """A saved run (folder, checkpoint folder or ``model.zip``) as a deterministic agent."""
    model, config = load_model(path, action_space=action_space, device=device)
    algo = get_algorithm(config["algo"])
    return SB3Agent(model, config.get("frame_stack", 1), algo.recurrent, config)
