"""``QMambaAgent``: a trained Q-Mamba network behind the project's agent protocol.

Acting is recurrent: the agent keeps one :class:`~gymforge.agents.metabbo.mamba.MambaState` per
instance and feeds it ``K`` tokens per environment step, so a step costs the same at generation 1
and at generation 500 (the reference re-runs the network over the whole growing sequence at each
decision). Saved models are a folder with ``model.pt`` (the ``state_dict``) and ``config.json``
(architecture, training options, training history and the dataset's checksum).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import torch

from gymforge.agents.metabbo.mamba import MambaState
from gymforge.agents.metabbo.qmamba import QMambaConfig, QMambaNet, check_acting
from gymforge.core.arrays import host_array

MODEL_FORMAT = "gymforge-qmamba"
MODEL_FORMAT_VERSION = 1
WEIGHTS_FILE = "model.pt"
CONFIG_FILE = "config.json"

__all__ = ["QMambaAgent", "load_agent", "load_model", "save_model"]


class QMambaAgent:
    """Autoregressive actions from a :class:`QMambaNet` (greedy, as the reference, unless the
    config or the arguments ask for behaviour-regularised acting), batched over instances.

    ``act(obs)`` takes one observation ``[obs_dim]`` (returns ``[K]``) or a batch ``[N, obs_dim]``
    (returns ``[N, K]``), int64 bins. Episode boundaries: ``reset()`` starts every instance
    afresh; in a vector env with same-step autoreset, pass the step's ``info`` and the instances
    flagged in ``info["_final_obs"]`` start afresh (their observation is a new episode's first).

    Args:
        net: a trained network (put in eval mode; CPU unless ``device`` says otherwise).
        device: where to run the network.
        support_threshold, temperature: override the config's acting rule (``0`` and ``0``: the
            reference's greedy step; anything else needs a network with a behaviour head; see
            :mod:`gymforge.agents.metabbo.qmamba`); ``None``: the config's.
        seed: seed of the sampling generator (``temperature > 0``), reseeded by ``reset(seed)``.
    """

    def __init__(
        self,
        net: QMambaNet,
        device: str | torch.device = "cpu",
        support_threshold: float | None = None,
        temperature: float | None = None,
        seed: int = 0,
    ) -> None:
        check_acting(
            net.config.support_threshold if support_threshold is None else support_threshold,
            net.config.temperature if temperature is None else temperature,
            net.config.has_behavior_head,
        )
        self.net = net.to(device).eval()
        self.device = torch.device(device)
        self.support_threshold = support_threshold
        self.temperature = temperature
        self._generator = torch.Generator(device=self.device).manual_seed(seed)
        self._state: MambaState | None = None

    @property
    def config(self) -> QMambaConfig:
        return self.net.config

    def reset(self, seed: int | None = None) -> None:
        """Forget every instance's context; ``seed`` reseeds the sampling generator (used only
        with ``temperature > 0``; the greedy policy is deterministic)."""
        self._state = None
        if seed is not None:
            self._generator.manual_seed(seed)

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> np.ndarray:
        obs = torch.as_tensor(host_array(observation), dtype=torch.float32, device=self.device)
        single = obs.ndim == 1
        if single:
            obs = obs.unsqueeze(0)
        if obs.ndim != 2 or obs.shape[-1] != self.config.obs_dim:
            raise ValueError(
                f"observation must be [{self.config.obs_dim}] or [N, {self.config.obs_dim}], "
                f"got {tuple(np.shape(observation))}"
            )
        n = obs.shape[0]
        if self._state is None or self._state.ssm.shape[0] != n:
            self._state = self.net.initial_state(n)
        elif info is not None and "_final_obs" in info:
            restarted = torch.as_tensor(np.asarray(info["_final_obs"]), device=self.device)
            self._state = self._state.select(~restarted.bool().reshape(n))
        actions, self._state = self.net.act(
            obs, self._state, self.support_threshold, self.temperature, self._generator
        )
        out = actions.cpu().numpy().astype(np.int64)
        return out[0] if single else out


def save_model(net: QMambaNet, path: str | Path, extra: dict[str, Any] | None = None) -> Path:
    """Write ``net`` as a model folder at ``path`` (atomically: temp folder, then rename)."""
    path = Path(path)
    record = {
        "format": MODEL_FORMAT,
        "format_version": MODEL_FORMAT_VERSION,
        "config": net.config.to_json(),
        **(extra or {}),
    }
    text = json.dumps(record, indent=2, sort_keys=True)  # fails before anything is written
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    try:
        torch.save(net.state_dict(), staging / WEIGHTS_FILE)
        (staging / CONFIG_FILE).write_text(text)
        if path.exists():
            shutil.rmtree(path)
        os.replace(staging, path)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return path


def load_model(path: str | Path) -> tuple[QMambaNet, dict[str, Any]]:
    """Read a model folder written by :func:`save_model`; returns ``(net, config record)``."""
    path = Path(path)
    if not (path / CONFIG_FILE).is_file() or not (path / WEIGHTS_FILE).is_file():
        raise ValueError(
            f"{str(path)!r} is not a Q-Mamba model folder: expected {CONFIG_FILE} and {WEIGHTS_FILE}"
        )
    record = json.loads((path / CONFIG_FILE).read_text())
    if record.get("format") != MODEL_FORMAT or record.get("format_version") != MODEL_FORMAT_VERSION:
        raise ValueError(
            f"{path / CONFIG_FILE}: format {record.get('format')!r} v{record.get('format_version')!r}"
            f" is not {MODEL_FORMAT!r} v{MODEL_FORMAT_VERSION}"
        )
    net = QMambaNet(QMambaConfig(**record["config"]))
    state = torch.load(path / WEIGHTS_FILE, map_location="cpu", weights_only=True)
    net.load_state_dict(state)
    return net.eval(), record


def load_agent(
    path: str | Path,
    device: str = "cpu",
    support_threshold: float | None = None,
    temperature: float | None = None,
) -> QMambaAgent:
    """A :class:`QMambaAgent` from a saved model folder (acting overrides: see the agent)."""
    net, _ = load_model(path)
    return QMambaAgent(
        net, device=device, support_threshold=support_threshold, temperature=temperature
    )
