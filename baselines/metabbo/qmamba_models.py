"""The stored Q-Mamba models, as registered agents of the presets they were trained on.

Each was trained by ``gymforge train <id> --algo qmamba`` on 10,000 trajectories of its preset
(half by the preset's trained PPO expert, half by uniform random configuration, µ = 0.5), at the
paper's settings (batch 64, AdamW 5e-3, β = 10, λ = 1, γ = 0.99) but for a few of its 300 epochs
(a CPU budget of 40 to 60 minutes; each model's ``config.json`` has its loss history).
``qmamba`` acts greedily on its Q-values, as the reference does; ``qmamba_regularised`` was
trained with a behaviour head (``--bc-weight 1``) and samples each bin from
behaviour × exp(Q / 0.03), the suite's labelled variant. ``qmamba_chosen_epochs`` acts
greedily with the checkpoint of a longer run chosen on the validation split by a rule stated
before the test split was used (its highest mean validation Perf), on the presets that have one.
Each folder under
``baselines/models/<id>/`` holds the network (``model.pt``) and ``config.json`` (settings, loss
history, the dataset's SHA-256 and the commands that collected it and trained the model).
Their validation and test figures: ``benchmarks/results/metabbo_reproduction.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gymforge.agents.metabbo.agent import QMambaAgent, load_agent
from gymforge.baselines.metabbo.common import env_preset

MODELS = Path(__file__).resolve().parents[1] / "models"
#: preset -> the env id whose model folder holds its Q-Mamba models
MODEL_IDS: dict[str, str] = {
    "alg0": "MetaBBO-v0",
    "alg1": "MetaBBO-Alg1-v0",
    "alg2": "MetaBBO-Alg2-v0",
}
#: registered agent name -> model folder (under ``MODELS / MODEL_IDS[preset]``)
MODEL_FOLDERS: dict[str, str] = {
    "qmamba": "qmamba-greedy",
    "qmamba_regularised": "qmamba-regularised",
}


#: preset -> model folder of the checkpoint chosen on the validation curve (greedy acting),
#: registered as ``qmamba_chosen_epochs``
CHOSEN_EPOCH_FOLDERS: dict[str, str] = {
    "alg0": "qmamba-greedy-epoch22",
}


def model_folder(preset: str, name: str) -> Path:
    """The folder of ``preset``'s stored model registered as ``name``."""
    if preset not in MODEL_IDS:
        raise ValueError(
            f"no stored Q-Mamba model for preset {preset!r}; presets with models: {list(MODEL_IDS)}"
        )
    if name == "qmamba_chosen_epochs":
        if preset not in CHOSEN_EPOCH_FOLDERS:
            raise ValueError(
                f"no checkpoint chosen on the validation curve for preset {preset!r}; presets "
                f"with one: {list(CHOSEN_EPOCH_FOLDERS)}"
            )
        return MODELS / MODEL_IDS[preset] / CHOSEN_EPOCH_FOLDERS[preset]
    if name not in MODEL_FOLDERS:
        raise ValueError(
            f"unknown Q-Mamba model {name!r}; models: {[*MODEL_FOLDERS, 'qmamba_chosen_epochs']}"
        )
    return MODELS / MODEL_IDS[preset] / MODEL_FOLDERS[name]


def _load(env: Any, name: str, device: str, **acting: float) -> QMambaAgent:
    return load_agent(model_folder(env_preset(env).name, name), device=device, **acting)


def qmamba_agent(env: Any, device: str = "cpu") -> QMambaAgent:
    """Q-Mamba trained on ``env``'s preset data, acting greedily (the reference's rule)."""
    return _load(env, "qmamba", device, support_threshold=0.0, temperature=0.0)


def qmamba_regularised_agent(env: Any, device: str = "cpu") -> QMambaAgent:
    """Q-Mamba with a behaviour head, sampling from behaviour × exp(Q / 0.03) (its config's rule)."""
    return _load(env, "qmamba_regularised", device)


def qmamba_chosen_epochs_agent(env: Any, device: str = "cpu") -> QMambaAgent:
    """Q-Mamba acting greedily with the training checkpoint chosen on the validation split."""
    return _load(env, "qmamba_chosen_epochs", device, support_threshold=0.0, temperature=0.0)
