"""Confounder-stream ids: ``ConfounderStream-v0`` and presets of its stage schedule."""

from __future__ import annotations

from gymforge.spec import Capabilities, EnvSpec

ORDER = 40

_ENV = "gymforge.envs.confounders.gym_env:ConfounderStreamEnv"
_VEC_ENV = "gymforge.envs.confounders.gym_env:make_confounder_stream_vec_env"
_CAPS = Capabilities(batched=True, devices=("cpu", "cuda"))
_AGENTS = {
    "rmdn": "gymforge.agents.confounders.online:rmdn_online_agent",
    "cnn": "gymforge.agents.confounders.online:cnn_online_agent",
}

SPECS: tuple[EnvSpec, ...] = (
    EnvSpec(
        id="ConfounderStream-v0",
        family="confounders",
        summary="classify a stream of images whose confounding shifts over 5 stages (R-MDN)",
        entry_point=_ENV,
        vector_entry_point=_VEC_ENV,
        capabilities=_CAPS,
        agents=_AGENTS,
    ),
    EnvSpec(
        id="ConfounderStream-Cyclic-v0",
        family="confounders",
        summary="task-free stream: the shift cycles 0 -> 0.5 -> 0 over 8 stages, boundaries hidden",
        entry_point=_ENV,
        vector_entry_point=_VEC_ENV,
        kwargs={"schedule": "cyclic", "n_stages": 8, "period": 4, "task_free": True},
        capabilities=_CAPS,
        agents=_AGENTS,
    ),
)
