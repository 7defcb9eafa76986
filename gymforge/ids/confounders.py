"""Confounder-stream ids: ``ConfounderStream-v0``/``-v1`` and presets of its stage schedule.

v1 draws its episodes batched from counter-based streams (``draws="counter"``); v0 keeps the
original per-instance generators (and the boards' numbers)."""

from __future__ import annotations

from gymforge.spec import Capabilities, EnvSpec

ORDER = 40

_VEC_ENV = "gymforge.envs.confounders.gym_env:ConfounderStreamVecEnv"
_CAPS = Capabilities(batched=True, devices=("cpu", "cuda"))
_AGENTS = {
    "rmdn": "gymforge.agents.confounders.online:rmdn_online_agent",
    "cnn": "gymforge.agents.confounders.online:cnn_online_agent",
}

_V0 = (
    (
        "ConfounderStream",
        "classify a stream of images whose confounding shifts over 5 stages (R-MDN)",
        {},
    ),
    (
        "ConfounderStream-Cyclic",
        "task-free stream: the shift cycles 0 -> 0.5 -> 0 over 8 stages, boundaries hidden",
        {"schedule": "cyclic", "n_stages": 8, "period": 4, "task_free": True},
    ),
)

SPECS: tuple[EnvSpec, ...] = tuple(
    EnvSpec(
        id=f"{name}-v{version}",
        family="confounders",
        summary=summary + ("" if version == 0 else "; batched counter-based draws"),
        vector_env=_VEC_ENV,
        kwargs=kwargs if version == 0 else {**kwargs, "draws": "counter"},
        capabilities=_CAPS,
        agents=_AGENTS,
    )
    for name, summary, kwargs in _V0
    for version in (0, 1)
)
