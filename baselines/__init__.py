"""RL baselines and comparison methods (SB3 training and others), and the stored models.

The stored reference models ship with the package: :func:`stored_model` finds one by env id and
run name (``stored_model("LineFlow-WaitingTime-v0", "ppo-seed11")``), in a checkout or a wheel.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def stored_models() -> Path:
    """The folder of stored reference models, ``<env id>/<run>/model.zip`` and its JSON files."""
    return Path(str(resources.files("gymforge.baselines") / "models"))


def stored_model(env_id: str, run: str) -> Path:
    """The ``model.zip`` of stored run ``run`` for ``env_id``; a missing one names the runs there."""
    path = stored_models() / env_id / run / "model.zip"
    if not path.is_file():
        runs = sorted(p.name for p in (stored_models() / env_id).glob("*") if p.is_dir())
        raise ValueError(f"no stored model {env_id}/{run}; stored runs of {env_id}: {runs}")
    return path
