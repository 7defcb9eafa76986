"""The Q-Mamba models trained on the Alg0 data, as registered agents of ``MetaBBO-v0``.

Both were trained by ``gymforge train MetaBBO-v0 --algo qmamba`` on the same 10,000 Alg0
trajectories (half by the trained PPO expert, half by uniform random configuration, µ = 0.5), at
the paper's settings (batch 64, AdamW 5e-3, β = 10, λ = 1, γ = 0.99) but for 12 of its 300 epochs
(a 40-minute CPU budget). ``qmamba`` acts greedily on its Q-values, as the reference does;
``qmamba_regularised`` was trained with a behaviour head (``--bc-weight 1``) and samples each bin
from behaviour × exp(Q / 0.03), the suite's labelled variant. Each folder under
``baselines/models/MetaBBO-v0/`` holds the network (``model.pt``) and ``config.json`` (settings,
loss history, the dataset's SHA-256 and the commands that collected it and trained the model).
Their validation and test figures: ``benchmarks/results/metabbo_reproduction.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gymforge.agents.metabbo.agent import QMambaAgent, load_agent
from gymforge.baselines.metabbo.common import env_preset

MODELS = Path(__file__).resolve().parents[1] / "models" / "MetaBBO-v0"
#: registered agent name -> model folder
MODEL_FOLDERS: dict[str, str] = {
    "qmamba": "qmamba-greedy",
    "qmamba_regularised": "qmamba-regularised",
}


def _load(env: Any, name: str, device: str, **acting: float) -> QMambaAgent:
    preset = env_preset(env).name
    if preset != "alg0":
        raise ValueError(f"the stored Q-Mamba models configure Alg0 (MetaBBO-v0), not {preset!r}")
    return load_agent(MODELS / MODEL_FOLDERS[name], device=device, **acting)


def qmamba_agent(env: Any, device: str = "cpu") -> QMambaAgent:
    """Q-Mamba trained on the Alg0 data, acting greedily (the reference's rule)."""
    return _load(env, "qmamba", device, support_threshold=0.0, temperature=0.0)


def qmamba_regularised_agent(env: Any, device: str = "cpu") -> QMambaAgent:
    """Q-Mamba with a behaviour head, sampling from behaviour × exp(Q / 0.03) (its config's rule)."""
    return _load(env, "qmamba_regularised", device)
