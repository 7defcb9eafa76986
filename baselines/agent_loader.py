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

This is the one agent loader: the CLI (``rollout``, ``evaluate``), the demo, dataset collection
and the boards build agents through it. Files are data: SB3 zips are rebuilt from their JSON
fields and weights without unpickling anything (:mod:`gymforge.baselines.sb3.zip_reader`, acting
through :class:`~gymforge.baselines.sb3.agent.SB3Agent`), on-device policies load weights-only
(:class:`~gymforge.baselines.ondevice.agent.TorchPolicyAgent`). On one's own machine any
``module:factory`` and TorchScript file may be evaluated; a board takes only what
:func:`gymforge.leaderboards.admission.check_submittable` allows (registered agents and weight
files), so verify never imports code a submission names.
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

from gymforge.agents.actions import checked_env_action
from gymforge.baselines.ondevice.agent import POLICY_FILE, TorchPolicyAgent, is_policy_file
from gymforge.baselines.sb3.agent import SB3Agent
from gymforge.baselines.sb3.zip_reader import load_policy
from gymforge.hashing import sha256_bytes, sha256_file
from gymforge.registry import did_you_mean, get_spec, load_entry_point

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
        f"--agent {spec!r} is not a reference agent of {env_id} ({sorted(agents)}"
        f"{did_you_mean(spec, sorted(agents))}), an entry point 'module:factory', an SB3 model "
        "(.zip, sb3:ALGO:PATH), an on-device policy.pt or a TorchScript file"
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
            import torch

            torch.set_num_threads(1)
            model = load_policy(path, record.algorithm, env.action_space)
            return SB3Agent.for_env(model, env, recurrent=record.algorithm == "recurrentppo")
        if record.kind == "torch_policy":
            import torch

            torch.set_num_threads(1)
            return TorchPolicyAgent(path, env=env)
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


class TorchScriptAgent:
    """A TorchScript module mapping a batch of observations to a batch of actions (a program:
    evaluated on one's own machine, never taken by a board)."""

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
        return checked_env_action(out.cpu().numpy()[0], self.action_space, "TorchScript agent")
