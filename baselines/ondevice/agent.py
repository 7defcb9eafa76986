"""A trained on-device policy as a file and as a gymforge agent.

The artifact ``policy.pt`` is one self-contained ``torch.save`` of plain data (loaded with
``weights_only=True``, so loading never runs code from the file): the network's
:class:`~.policy.PolicySpec`, its weights, the observation statistics and the frame-stack depth.
The run's ``config.json`` beside it records how it was trained; the policy file alone is enough
to act, and its SHA-256 is what a leaderboard submission records.

:class:`TorchPolicyAgent` acts greedily (the most likely action) on one observation or a batch,
numpy or torch, on whatever device the observation is on, keeping the stacked frames and the
recurrent state between steps (``reset`` clears them; ``episode_done(i)`` clears instance i's).
With ``stochastic=True`` it samples from the policy instead, from a generator seeded by
``reset(seed)`` (a policy whose value is in its randomness, such as an optimizer configurator
whose varied choices keep the population diverse, is evaluated as it was trained).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import torch

from gymforge.agents.actions import checked_env_action
from gymforge.baselines.ondevice.normalization import RunningObsNorm
from gymforge.baselines.ondevice.policy import ActorCritic, PolicySpec
from gymforge.core.devices import check_device

POLICY_FORMAT = "gymforge-torch-policy"
POLICY_FORMAT_VERSION = 1
POLICY_FILE = "policy.pt"
CONFIG_FILE = "config.json"
ARTIFACT_FORMAT = "gymforge-torch-agent"


def policy_payload(
    policy: ActorCritic, obs_norm: RunningObsNorm | None, frame_stack: int, algo: str
) -> dict[str, Any]:
    """The contents of ``policy.pt`` (tensors moved to the CPU)."""
    return {
        "format": POLICY_FORMAT,
        "format_version": POLICY_FORMAT_VERSION,
        "algo": algo,
        "spec": policy.spec.to_json(),
        "frame_stack": int(frame_stack),
        "state_dict": {k: v.detach().cpu() for k, v in policy.state_dict().items()},
        "obs_norm": obs_norm.state_dict() if obs_norm is not None else None,
    }


def save_policy(path: Path, payload: dict[str, Any]) -> None:
    """Write ``payload`` atomically (temporary file in the same folder, then rename)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    torch.save(payload, tmp)
    os.replace(tmp, path)


def read_policy(path: str | Path) -> dict[str, Any]:
    """Load and check a ``policy.pt`` (a run folder holding one works too)."""
    path = Path(path)
    if path.is_dir():
        path = path / POLICY_FILE
    if not path.is_file():
        raise ValueError(f"no on-device policy at {path} (expected a run folder or {POLICY_FILE})")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # a truncated or foreign file
        raise ValueError(f"{path}: not a readable {POLICY_FORMAT} file ({error})") from None
    if not isinstance(payload, dict) or payload.get("format") != POLICY_FORMAT:
        raise ValueError(f"{path}: not a {POLICY_FORMAT} file")
    if payload.get("format_version") != POLICY_FORMAT_VERSION:
        raise ValueError(
            f"{path}: format_version must be {POLICY_FORMAT_VERSION}, got "
            f"{payload.get('format_version')!r}"
        )
    return payload


def is_policy_file(path: str | Path) -> bool:
    """Whether ``path`` is a readable on-device policy file."""
    try:
        read_policy(path)
    except ValueError:
        return False
    return True


class TorchPolicyAgent:
    """Greedy (or sampled) actions of a saved on-device policy.

    Args:
        payload: the contents of a ``policy.pt`` (:func:`read_policy`), or its path.
        device: where the network runs; observations on another device are moved there and the
            actions moved back.
        stochastic: sample actions from the policy (seeded by ``reset(seed)``, seed 0 when none)
            instead of taking the most likely one.
        env: the env it acts on, when known: its observation shape is checked against the
            policy's, and single actions come in its action space's form, checked to lie in it.
    """

    def __init__(
        self,
        payload: dict[str, Any] | str | Path,
        device: str = "cpu",
        stochastic: bool = False,
        env: Any = None,
    ) -> None:
        if not isinstance(stochastic, bool):
            raise ValueError(f"stochastic must be True or False, got {stochastic!r}")
        self.stochastic = stochastic
        if not isinstance(payload, dict):
            payload = read_policy(payload)
        self.spec = PolicySpec.from_json(payload["spec"])
        self.algo = str(payload.get("algo", "ppo"))
        self.device = check_device(device)
        self.policy = ActorCritic(self.spec).to(self.device)
        self.policy.load_state_dict(payload["state_dict"])
        self.policy.eval()
        self.frame_stack = int(payload["frame_stack"])
        self.width = self.spec.obs_dim // self.frame_stack
        self.obs_norm: RunningObsNorm | None = None
        if payload.get("obs_norm") is not None:
            self.obs_norm = RunningObsNorm(self.width, self.device)
            self.obs_norm.load_state_dict(payload["obs_norm"])
        self.action_space = None if env is None else env.action_space
        if env is not None:
            shape = env.observation_space.shape
            if shape is None or tuple(shape) != tuple(self.spec.obs_shape):
                raise ValueError(
                    f"the policy reads observations of shape {tuple(self.spec.obs_shape)}; the "
                    f"env's observation space is {env.observation_space}"
                )
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        """Forget stacked frames and the recurrent state (call at every episode start); a
        stochastic agent also reseeds its sampling (``seed`` 0 when ``None``)."""
        self._frames: torch.Tensor | None = None
        self._state: torch.Tensor | None = None
        self._generator: torch.Generator | None = None
        if self.stochastic:
            self._generator = torch.Generator(device=self.device)
            self._generator.manual_seed(int(seed or 0))

    def episode_done(self, index: int) -> None:
        """Restart instance ``index``'s memory (batched use: it finished an episode)."""
        if self._frames is not None:
            self._frames[index] = 0.0
        if self._state is not None:
            self._state[:, index] = 0.0

    @torch.no_grad()
    def act(self, observation: Any, info: dict[str, Any] | None = None) -> Any:
        """The greedy (or sampled) action(s) for one observation ``(d,)`` or a batch ``(B, d)``."""
        as_numpy = not isinstance(observation, torch.Tensor)
        source = None if as_numpy else observation.device
        obs = torch.as_tensor(np.asarray(observation) if as_numpy else observation)
        obs = obs.to(self.device, torch.float32)
        single = tuple(self.spec.obs_shape)
        batched = tuple(obs.shape[1:]) == single
        if not batched and tuple(obs.shape) != single:
            raise ValueError(
                f"observation shape must be {single} or (B, *{single}), got {tuple(obs.shape)}"
            )
        obs = obs.reshape(-1, self.width) if batched else obs.reshape(1, self.width)
        if self.obs_norm is not None:
            obs = self.obs_norm(obs)
        if self.frame_stack > 1:
            if self._frames is None or self._frames.shape[0] != obs.shape[0]:
                self._frames = obs.new_zeros(obs.shape[0], self.spec.obs_dim)
            self._frames = torch.cat([self._frames[:, self.width :], obs], dim=1)
            obs = self._frames
        if self.policy.memory is not None:
            if self._state is None or self._state.shape[1] != obs.shape[0]:
                self._state = self.policy.initial_state(obs.shape[0], self.device)
            feats, self._state = self.policy.remember(obs[None], self._state, None)
            obs = feats[0]
        out, _ = self.policy.heads(obs)
        if self._generator is not None:
            chosen = self.policy.sample(out, self._generator)[0]
        else:
            chosen = self.policy.mode(out)
        action = self.policy.env_action(chosen)
        if not batched:
            action = action[0]
        if as_numpy:
            result = action.cpu().numpy()
            if self.action_space is not None and not batched:
                return checked_env_action(result, self.action_space, "the policy")
            return result.item() if result.ndim == 0 else result
        return action.to(source)
