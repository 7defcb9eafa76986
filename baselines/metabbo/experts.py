"""Trained online configurators ("experts") for the MetaBBO presets, as registered agents.

Each expert is a PPO policy trained by the suite's on-device trainer on its preset's *train*
split (``gymforge train MetaBBO-v0 --algo ppo --backend torch``, with the env's
``reward="log_error"``: Perf's per-generation rewards are nearly all earned in the first
generations, so later choices barely register in it), in the spirit of LDE and GLEET: a
policy-gradient configurator over the same nine optimisation-state features. How it acts was
chosen per preset on the validation split (:data:`ACTING`): by *sampling* from its policy
(seeded by ``reset(seed)``), as it was trained, on Alg0 and Alg1, where a configurator's varied
choices are part of what keeps the population diverse and the greedy choices score below random
configuration; greedily on Alg2, where the greedy choices validated better. The commands, training curves and validation scores are in
``benchmarks/results/metabbo_experts.md``; the policy files live under
``baselines/models/<id>/ppo-expert/`` beside the run's ``config.json`` (how it was trained) and
``validation.json`` (its validation scores); a dataset collected with ``--expert ppo_expert``
records all three in its metadata (``behavior_provenance``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from gymforge.baselines.ondevice.agent import CONFIG_FILE, POLICY_FILE, TorchPolicyAgent

MODELS = Path(__file__).resolve().parents[1] / "models"
#: preset -> the env id whose model folder holds its expert.
EXPERT_IDS: dict[str, str] = {
    "alg0": "MetaBBO-v0",
    "alg1": "MetaBBO-Alg1-v0",
    "alg2": "MetaBBO-Alg2-v0",
}


#: preset -> how its expert acts ("sampled" or "greedy"), chosen on the validation split.
ACTING: dict[str, str] = {"alg0": "sampled", "alg1": "sampled", "alg2": "greedy"}


def expert_policy_path(preset: str) -> Path:
    """The policy file of ``preset``'s expert."""
    if preset not in EXPERT_IDS:
        raise ValueError(f"no trained expert for preset {preset!r}; experts: {list(EXPERT_IDS)}")
    return MODELS / EXPERT_IDS[preset] / "ppo-expert" / POLICY_FILE


def _preset_of(env: Any) -> str:
    base = getattr(env, "unwrapped", env)
    base = getattr(base, "_vector", base)  # the scalar env wraps a vector env
    config = getattr(base, "config", None)
    preset = getattr(getattr(config, "preset", None), "name", None)
    if preset is None:
        raise ValueError("ppo_expert needs a MetaBBO env (one with a preset)")
    return str(preset)


def ppo_expert_agent(env: Any, device: str = "cpu") -> TorchPolicyAgent:
    """The trained PPO configurator of ``env``'s preset, acting as :data:`ACTING` says."""
    preset = _preset_of(env)
    path = expert_policy_path(preset)
    if not path.is_file():
        raise FileNotFoundError(f"the {preset} expert's policy file is missing: {path}")
    agent = TorchPolicyAgent(path, device=device, stochastic=ACTING[preset] == "sampled")
    space = getattr(env, "single_action_space", None) or env.action_space
    if tuple(agent.spec.nvec) != tuple(int(n) for n in space.nvec):
        raise ValueError(
            f"the {preset} expert chooses {list(agent.spec.nvec)} bins, the env {list(space.nvec)}"
        )
    agent.provenance = expert_provenance(path, ACTING[preset])  # type: ignore[attr-defined]
    return agent


#: env steps each preset's expert was trained for (its ``config.json``'s ``steps``; the same
#: run length on every preset); the boards' reference rows report it.
ppo_expert_agent.training_env_steps = 3_006_464  # type: ignore[attr-defined]


def expert_provenance(path: Path, acting: str) -> dict[str, Any]:
    """What an expert was built from: its policy file's name and SHA-256, acting rule, training
    command and settings, and its validation scores (where the model folder has them)."""
    folder = path.parent
    record: dict[str, Any] = {
        "policy_file": f"{folder.parent.name}/{folder.name}/{path.name}",
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "acting": "sampled from the policy" if acting == "sampled" else "greedy",
    }
    config = folder / CONFIG_FILE
    if config.is_file():
        data = json.loads(config.read_text(encoding="utf-8"))
        record["training"] = {k: data[k] for k in ("command", "steps", "seed") if k in data}
    validation = folder / "validation.json"
    if validation.is_file():
        record["validation"] = json.loads(validation.read_text(encoding="utf-8"))
    return record
