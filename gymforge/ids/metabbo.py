"""MetaBBO ids: ``MetaBBO-v0`` (Q-Mamba's Alg0 preset) and one id per larger optimizer preset.

Each has a v1 that draws its random instances batched from counter-based streams
(``draws="counter"``); v0 keeps the per-instance generators (and the boards', experts' and
datasets' numbers)."""

from __future__ import annotations

from gymforge.spec import Capabilities, EnvSpec

ORDER = 10

_VEC_ENV = "gymforge.envs.metabbo.gym_env:MetaBBOVecEnv"
_CAPS = Capabilities(batched=True, devices=("cpu", "cuda"), offline_dataset=True)
_COLLECTOR = "gymforge.baselines.metabbo.behaviors:collect_cli"  # dataset collect + "sb3" behaviour
_BASELINES = "gymforge.baselines.metabbo"
_AGENTS: dict[str, str] = {
    "static": f"{_BASELINES}.static:StaticAgent",  # best grid configuration on the train split
    "jde": f"{_BASELINES}.adaptive:JDEAgent",
    "shade": f"{_BASELINES}.adaptive:SHADEAgent",
}
#: agents for Alg0 only (the budget schedule searched for it)
_ALG0_AGENTS: dict[str, str] = {"schedule": f"{_BASELINES}.schedule:ScheduleAgent"}
#: the stored Q-Mamba models, on the presets whose data they were trained on
_QMAMBA_AGENTS: dict[str, str] = {
    "qmamba": f"{_BASELINES}.qmamba_models:qmamba_agent",
    "qmamba_regularised": f"{_BASELINES}.qmamba_models:qmamba_regularised_agent",
}
#: presets with stored Q-Mamba models (``qmamba_models.MODEL_IDS`` names their folders)
QMAMBA_PRESETS: tuple[str, ...] = ("alg0", "alg1", "alg2")
#: the checkpoint of a longer run chosen on the validation curve, where one was chosen
_QMAMBA_CHOSEN_AGENT: dict[str, str] = {
    "qmamba_chosen_epochs": f"{_BASELINES}.qmamba_models:qmamba_chosen_epochs_agent",
}
#: presets with such a checkpoint (``qmamba_models.CHOSEN_EPOCH_FOLDERS`` names their folders)
QMAMBA_CHOSEN_EPOCH_PRESETS: tuple[str, ...] = ("alg0",)
#: the trained PPO configurator of Q-Mamba's three presets (not PSO)
_EXPERT_AGENTS: dict[str, str] = {"ppo_expert": f"{_BASELINES}.experts:ppo_expert_agent"}


def _spec(id_: str, preset: str, summary: str, version: int) -> EnvSpec:
    agents = dict(_AGENTS)
    if preset == "alg0":
        agents |= _ALG0_AGENTS
    if preset in ("alg0", "alg1", "alg2"):
        agents |= _EXPERT_AGENTS
    if preset in QMAMBA_PRESETS:
        agents |= _QMAMBA_AGENTS
    if preset in QMAMBA_CHOSEN_EPOCH_PRESETS:
        agents |= _QMAMBA_CHOSEN_AGENT
    return EnvSpec(
        id=f"{id_}-v{version}",
        family="metabbo",
        summary=summary + ("" if version == 0 else "; batched counter-based instance draws"),
        vector_env=_VEC_ENV,
        kwargs={"preset": preset} if version == 0 else {"preset": preset, "draws": "counter"},
        capabilities=_CAPS,
        agents=agents,
        dataset_collector=_COLLECTOR,
    )


_PRESETS = (
    ("MetaBBO", "alg0", "configure DE (Q-Mamba Alg0: F1, F2, Cr) each generation on BBOB problems"),
    (
        "MetaBBO-Alg1",
        "alg1",
        "configure three DE sub-populations and their migration (K=10) on BBOB problems",
    ),
    (
        "MetaBBO-Alg2",
        "alg2",
        "configure four DE sub-populations incl. bound handling (K=16) on BBOB problems",
    ),
    (
        "MetaBBO-PSO",
        "pso",
        "configure a particle swarm (w, c1, c2, c3) each generation on BBOB problems",
    ),
)

SPECS: tuple[EnvSpec, ...] = tuple(
    _spec(name, preset, summary, version)
    for name, preset, summary in _PRESETS
    for version in (0, 1)
)
