"""Turn an ``--agent SPEC`` into a runnable agent and a record of what it was.

SPEC is one of:

- a reference agent name of the protocol's env id (``random``, ``optimal``, ... as listed by
  ``gymforge info ID``), or an entry point ``module:factory``; the factory is called with an env
  built from the protocol (its own copy, never the one being evaluated) and must return an object
  with ``reset(seed)`` and ``act(observation, info)`` (:class:`gymforge.agents.base.Agent`);
- a saved Stable-Baselines3 model, ``PATH.zip`` (the algorithm is read from the file) or
  ``sb3:ALGO:PATH`` with ALGO one of :data:`SB3_ALGORITHMS`;
- a TorchScript module, ``PATH.pt`` / ``PATH.ts`` or ``torchscript:PATH``: called on a batch of
  one float32 observation, it returns the batch of one action;
- a policy of the on-device trainer (``gymforge train --backend torch``): its ``policy.pt`` or the
  run folder holding it (weights, network and observation statistics in one file).

The record (:class:`AgentRecord`) names the kind, the entry point or the artifact and its sha256;
results and submissions store it, and verify rebuilds the agent from it.

Files are data: SB3 zips are rebuilt from their JSON fields and weights without unpickling
anything, on-device policies load weights-only. On one's own machine any ``module:factory`` and
TorchScript file may be evaluated; a board takes only what :func:`check_submittable` allows
(registered agents and weight files), so verify never imports code a submission names.
"""

from __future__ import annotations

import json
import pickle
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from gymforge.baselines.ondevice.agent import POLICY_FILE, TorchPolicyAgent, is_policy_file
from gymforge.leaderboards.files import sha256_bytes, sha256_file
from gymforge.registry import get_spec, load_entry_point

#: algorithm name -> SB3 class ``"module:Class"``.
SB3_ALGORITHMS: dict[str, str] = {
    "ppo": "stable_baselines3:PPO",
    "a2c": "stable_baselines3:A2C",
    "dqn": "stable_baselines3:DQN",
    "sac": "stable_baselines3:SAC",
    "recurrentppo": "sb3_contrib:RecurrentPPO",
    "trpo": "sb3_contrib:TRPO",
}
KINDS = ("entry_point", "sb3", "torchscript", "torch_policy")


@dataclass(frozen=True)
class AgentRecord:
    """What an evaluated agent was.

    Attributes:
        kind: ``"entry_point"``, ``"sb3"``, ``"torchscript"`` or ``"torch_policy"``.
        entry_point: ``module:factory`` (entry points only).
        artifact: path of the model file (every kind but entry points).
        algorithm: SB3 algorithm name (sb3 only).
        sha256: of the artifact file, or of the entry-point string.
    """

    kind: str
    sha256: str
    entry_point: str | None = None
    artifact: str | None = None
    algorithm: str | None = None

    def to_json(self) -> dict[str, Any]:
        data = {"kind": self.kind, "sha256": self.sha256}
        for key in ("entry_point", "artifact", "algorithm"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        return data

    @classmethod
    def from_json(cls, data: Any, where: str) -> AgentRecord:
        """Parse and check a stored record; ``where`` names the file in errors."""
        if not isinstance(data, dict):
            raise ValueError(f"{where}: agent must be an object")
        allowed = {"kind", "sha256", "entry_point", "artifact", "algorithm"}
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise ValueError(
                f"{where}: agent field {unknown[0]!r} unknown; allowed {sorted(allowed)}"
            )
        kind = data.get("kind")
        if kind not in KINDS:
            raise ValueError(f"{where}: agent.kind must be one of {KINDS}, got {kind!r}")
        if not isinstance(data.get("sha256"), str) or len(data["sha256"]) != 64:
            raise ValueError(f"{where}: agent.sha256 must be a 64-character hex digest")
        needed = {"entry_point": ["entry_point"], "sb3": ["artifact", "algorithm"]}
        for key in needed.get(kind, ["artifact"]):
            if not isinstance(data.get(key), str):
                raise ValueError(f"{where}: agent.{key} must be a string for kind {kind!r}")
        if kind == "sb3" and data["algorithm"] not in SB3_ALGORITHMS:
            raise ValueError(
                f"{where}: agent.algorithm must be one of {sorted(SB3_ALGORITHMS)}, "
                f"got {data['algorithm']!r}"
            )
        return cls(**data)


def parse_agent_spec(spec: str, env_id: str) -> AgentRecord:
    """Resolve an ``--agent`` string into a record (artifacts hashed; nothing is loaded yet)."""
    if not spec:
        raise ValueError("--agent must not be empty")
    agents = get_spec(env_id).agents
    if spec in agents:
        return _entry_point_record(agents[spec])
    if spec.startswith("sb3:"):
        _, _, rest = spec.partition(":")
        algorithm, sep, path = rest.partition(":")
        if not sep or algorithm not in SB3_ALGORITHMS:
            raise ValueError(
                f"--agent sb3:ALGO:PATH needs ALGO in {sorted(SB3_ALGORITHMS)}, got {spec!r}"
            )
        return _artifact_record("sb3", Path(path), algorithm)
    if spec.startswith("torchscript:"):
        return _artifact_record("torchscript", Path(spec.partition(":")[2]), None)
    path = Path(spec)
    if path.is_dir() and (path / "model.zip").is_file():  # a `gymforge train` run folder
        path = path / "model.zip"
    elif path.is_dir() and (path / POLICY_FILE).is_file():  # a `--backend torch` run folder
        path = path / POLICY_FILE
    if path.suffix in (".zip", ".pt", ".ts", ".pth") or path.is_file():
        if not path.is_file():
            raise ValueError(f"--agent file not found: {path}")
        if _is_sb3_zip(path):
            return _artifact_record("sb3", path, detect_sb3_algorithm(path))
        if _is_torchscript(path):
            return _artifact_record("torchscript", path, None)
        if is_policy_file(path):
            return _artifact_record("torch_policy", path, None)
        raise ValueError(
            f"--agent {path} is neither a Stable-Baselines3 model (.zip with 'data' and "
            "'policy.pth'), a TorchScript module nor an on-device policy (policy.pt)"
        )
    if ":" in spec:
        return _entry_point_record(spec)
    raise ValueError(
        f"--agent {spec!r} is not a reference agent of {env_id} ({sorted(agents)}), an entry "
        "point 'module:factory', an SB3 model (.zip, sb3:ALGO:PATH) or a TorchScript file"
    )


def submittable_entry_points(protocol: Any) -> set[str]:
    """The entry points a board of ``protocol`` runs: the registered agents of its env id and
    the agents its protocol names (``agents``, and the offline learners of its offline track).
    Nothing else named by a submission is imported."""
    allowed = set(get_spec(protocol.env_id).agents.values())
    allowed |= set(protocol.data.get("agents", {}).values())
    offline = protocol.offline_dataset or {}
    allowed |= set(offline.get("agents", {}).values())
    return allowed


def check_submittable(record: AgentRecord, protocol: Any) -> None:
    """Refuse an agent a public board must not run; raises ``ValueError`` naming why.

    A board takes registered agents (by name or their entry point) and weight files read as
    data: SB3 zips (:mod:`gymforge.baselines.sb3.zip_reader`) and on-device policies (loaded
    weights-only). An arbitrary ``module:factory`` would import code named by the submission,
    and a TorchScript file is a program: both stay usable with ``gymforge evaluate`` on one's
    own machine, never on a board.
    """
    if record.kind == "entry_point":
        allowed = submittable_entry_points(protocol)
        if record.entry_point not in allowed:
            raise ValueError(
                f"agent entry point {record.entry_point!r} is not a registered agent of "
                f"{protocol.env_id}; a board runs only registered agents ({sorted(allowed)}) "
                "and weight files (SB3 model.zip, on-device policy.pt), never code named by "
                "a submission"
            )
    elif record.kind == "torchscript":
        raise ValueError(
            "a TorchScript module is a program, not weights; a board takes registered agents "
            "and weight files (SB3 model.zip, on-device policy.pt) only"
        )


def load_factory(entry_point: str) -> Any:
    """Import the factory of ``module:factory``; failures become a ``ValueError`` naming it."""
    module, _, attribute = entry_point.partition(":")
    if not module or not attribute:
        raise ValueError(f"entry point must look like 'module:factory', got {entry_point!r}")
    try:
        factory = load_entry_point(entry_point)
    except (ImportError, AttributeError) as error:
        raise ValueError(f"cannot import agent entry point {entry_point!r}: {error}") from error
    if not callable(factory):
        raise ValueError(f"agent entry point {entry_point!r} is not callable")
    return factory


def _entry_point_record(entry_point: str) -> AgentRecord:
    load_factory(entry_point)
    return AgentRecord(
        kind="entry_point", entry_point=entry_point, sha256=sha256_bytes(entry_point.encode())
    )


def _artifact_record(kind: str, path: Path, algorithm: str | None) -> AgentRecord:
    if not path.is_file():
        raise ValueError(f"--agent file not found: {path}")
    return AgentRecord(kind=kind, artifact=str(path), algorithm=algorithm, sha256=sha256_file(path))


def _is_sb3_zip(path: Path) -> bool:
    if not zipfile.is_zipfile(path):
        return False
    names = set(zipfile.ZipFile(path).namelist())
    return "data" in names and "policy.pth" in names


def _is_torchscript(path: Path) -> bool:
    if not zipfile.is_zipfile(path):
        return False
    names = zipfile.ZipFile(path).namelist()
    return any(n.endswith("/constants.pkl") for n in names) and any("/code/" in n for n in names)


def detect_sb3_algorithm(path: Path) -> str:
    """The algorithm of a saved SB3 model.

    From the ``config.json`` that ``gymforge train`` writes beside its ``model.zip`` when there is
    one, otherwise from the class names and fields in the zip's ``data`` file.
    """
    config = Path(path).parent / "config.json"
    if config.is_file():
        try:
            data = json.loads(config.read_text())
        except json.JSONDecodeError:
            data = {}
        if data.get("format") == "gymforge-sb3-agent" and data.get("algo") in SB3_ALGORITHMS:
            return str(data["algo"])
    try:
        with zipfile.ZipFile(path) as archive:
            data = json.loads(archive.read("data"))
    except (zipfile.BadZipFile, KeyError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(
            f"--agent {path}: the SB3 model's 'data' entry is unreadable or not JSON ({error})"
        ) from None
    if not isinstance(data, dict):
        raise ValueError(f"--agent {path}: the SB3 model's 'data' entry is not a JSON object")
    policy = data.get("policy_class", {})
    policy_text = json.dumps(policy) if isinstance(policy, dict) else str(policy)
    if "Recurrent" in policy_text or "lstm" in json.dumps(data.get("policy_kwargs", {})).lower():
        return "recurrentppo"
    if "cg_max_steps" in data:
        return "trpo"
    if "exploration_fraction" in data:
        return "dqn"
    if "target_entropy" in data:
        return "sac"
    if "clip_range" in data and "n_epochs" in data:
        return "ppo"
    if "normalize_advantage" in data or "use_rms_prop" in data:
        return "a2c"
    raise ValueError(
        f"cannot tell the algorithm of {path}; pass --agent sb3:ALGO:PATH with ALGO in "
        f"{sorted(SB3_ALGORITHMS)}"
    )


def build_agent(record: AgentRecord, make_env: Any, base: Path | None = None) -> Any:
    """The agent of ``record``; ``make_env()`` builds a fresh env of the protocol for factories.

    ``base`` is the folder that relative artifact paths are relative to (a submission folder).
    """
    if record.kind == "entry_point":
        agent = load_factory(record.entry_point)(make_env())
        for method in ("reset", "act"):
            if not callable(getattr(agent, method, None)):
                raise ValueError(
                    f"agent from {record.entry_point} has no {method}() method "
                    "(see gymforge.agents.base.Agent)"
                )
        return agent
    path = Path(record.artifact)
    if base is not None and not path.is_absolute():
        path = base / path
    if not path.is_file():
        raise ValueError(f"agent artifact not found: {path}")
    if sha256_file(path) != record.sha256:
        raise ValueError(f"agent artifact {path} does not match its recorded sha256")
    env = make_env()
    try:
        if record.kind == "sb3":
            return SB3Agent(path, record.algorithm, env)
        if record.kind == "torch_policy":
            return OnDevicePolicyAgent(path, env)
        return TorchScriptAgent(path, env)
    except (
        RuntimeError,
        EOFError,
        KeyError,
        OSError,
        pickle.UnpicklingError,  # (TorchScript's constants; torch's weights-only refusals)
        zipfile.BadZipFile,
    ) as error:
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise ValueError(
            f"--agent {path}: cannot be loaded as a {record.kind} artifact (truncated or "
            f"corrupt file?): {first}"
        ) from None


def _to_env_action(action: Any, model_space: gym.Space, env_space: gym.Space) -> Any:
    """Map a model's action to the env's action space (Discrete index -> MultiDiscrete entries)."""
    action = np.asarray(action)
    if isinstance(model_space, gym.spaces.Discrete) and isinstance(
        env_space, gym.spaces.MultiDiscrete
    ):
        flat = int(action.reshape(-1)[0])
        return np.array(np.unravel_index(flat, tuple(env_space.nvec)), dtype=env_space.dtype)
    if isinstance(env_space, (gym.spaces.MultiDiscrete, gym.spaces.Box)):
        return action.reshape(env_space.shape).astype(env_space.dtype)
    if isinstance(env_space, gym.spaces.Discrete):
        return int(action.reshape(-1)[0])
    return action


class SB3Agent:
    """A saved SB3 model acting deterministically, one observation at a time.

    The model is read as data (:mod:`gymforge.baselines.sb3.zip_reader`): nothing in the file is
    unpickled, so a model from a stranger runs no code when it is loaded.

    When the model was trained on stacked frames (its observation has k times the env's
    features), the agent stacks the last k observations itself as SB3's ``VecFrameStack`` does
    (zeros before the first one, the newest last). Recurrent models keep their LSTM state within
    an episode. ``reset`` clears both.
    """

    def __init__(self, path: Path, algorithm: str, env: gym.Env) -> None:
        import torch

        from gymforge.baselines.sb3.zip_reader import load_policy

        torch.set_num_threads(1)
        self.model = load_policy(path, algorithm, env.action_space)
        self.recurrent = algorithm == "recurrentppo"
        self._torch = torch
        self.model.policy.set_training_mode(False)
        # discrete actions need no rescaling or clipping, so the policy's forward is the action
        self._fast = isinstance(
            self.model.action_space, gym.spaces.Discrete | gym.spaces.MultiDiscrete
        ) and isinstance(self.model.observation_space, gym.spaces.Box)
        self.env_action_space = env.action_space
        env_shape = env.observation_space.shape
        model_shape = self.model.observation_space.shape
        if env_shape is None or model_shape is None or len(env_shape) != 1:
            raise ValueError("SB3 agents need a flat Box observation in the env and the model")
        if model_shape[0] % env_shape[0] != 0:
            raise ValueError(
                f"model observation {model_shape} is not a stack of the env's {env_shape}"
            )
        self.n_stack = model_shape[0] // env_shape[0]
        self._width = env_shape[0]
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        self._stack = np.zeros(self._width * self.n_stack, dtype=np.float32)
        self._state = None
        self._episode_start = np.ones((1,), dtype=bool)

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> Any:
        obs = np.asarray(observation, dtype=np.float32).reshape(-1)
        self._stack = np.concatenate([self._stack[self._width :], obs])
        if self.recurrent:
            action, self._state = self.model.predict(
                self._stack[None],
                state=self._state,
                episode_start=self._episode_start,
                deterministic=True,
            )
            self._episode_start = np.zeros((1,), dtype=bool)
            action = action[0]
        elif self._fast:
            # the policy's own deterministic forward, as `predict` calls it, without predict's
            # per-call checks (2-3x faster for small MLPs; the same actions)
            with self._torch.no_grad():
                action = self.model.policy._predict(
                    self._torch.as_tensor(self._stack)[None], deterministic=True
                )
            action = action.cpu().numpy()[0]
        else:
            action, _ = self.model.predict(self._stack, deterministic=True)
        return _to_env_action(action, self.model.action_space, self.env_action_space)


class OnDevicePolicyAgent:
    """A policy of the on-device trainer acting greedily on one observation at a time, with
    actions in the env's own form (checked against its action space)."""

    def __init__(self, path: Path, env: gym.Env) -> None:
        import torch

        torch.set_num_threads(1)
        self.agent = TorchPolicyAgent(path)
        self.action_space = env.action_space
        shape = env.observation_space.shape
        if shape is None or tuple(shape) != tuple(self.agent.spec.obs_shape):
            raise ValueError(
                f"policy {path} reads observations of shape {tuple(self.agent.spec.obs_shape)}; "
                f"the env's observation space is {env.observation_space}"
            )

    def reset(self, seed: int | None = None) -> None:
        self.agent.reset(seed)

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> Any:
        action = self.agent.act(np.asarray(observation, dtype=np.float32), info)
        action = _to_env_action(action, self.action_space, self.action_space)
        if not self.action_space.contains(action):
            raise ValueError(f"policy returned {action!r}, outside {self.action_space}")
        return action


class TorchScriptAgent:
    """A TorchScript module mapping a batch of observations to a batch of actions."""

    def __init__(self, path: Path, env: gym.Env) -> None:
        import torch

        torch.set_num_threads(1)
        self._torch = torch
        try:
            with warnings.catch_warnings():  # torch >= 2.9 marks TorchScript deprecated
                warnings.simplefilter("ignore", DeprecationWarning)
                self.module = torch.jit.load(str(path), map_location="cpu")
        except RuntimeError as error:
            raise ValueError(f"cannot load TorchScript module {path}: {error}") from error
        self.module.eval()
        self.action_space = env.action_space

    def reset(self, seed: int | None = None) -> None:
        """TorchScript agents are stateless."""

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> Any:
        obs = self._torch.as_tensor(np.asarray(observation, dtype=np.float32)[None])
        with self._torch.no_grad():
            out = self.module(obs)
        action = _to_env_action(out.cpu().numpy()[0], self.action_space, self.action_space)
        if not self.action_space.contains(action):
            raise ValueError(
                f"TorchScript agent returned {action!r}, outside the action space "
                f"{self.action_space}"
            )
        return action
