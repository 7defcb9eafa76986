"""Off-CMAB ids: one per application (cascading ranking, LLM cache, influence maximization, k-path)."""

from __future__ import annotations

from gymforge.spec import Capabilities, EnvSpec

ORDER = 20

_ENV = "gymforge.envs.cmab.gym_env"
_COLLECT = "gymforge.envs.cmab.collect:collect_cli"
_CAPABILITIES = Capabilities(batched=True, devices=("cpu", "cuda"), offline_dataset=True)
_ONLINE_CUCB = "gymforge.baselines.cmab.online_cucb:OnlineCUCBAgent"

SPECS: tuple[EnvSpec, ...] = tuple(
    EnvSpec(
        id=f"OffCMAB-{name}-v0",
        family="cmab",
        summary=summary,
        entry_point=f"{_ENV}:{name}Env",
        vector_entry_point=f"{_ENV}:make_{factory}_vec_env",
        capabilities=_CAPABILITIES,
        agents={} if name == "InfluenceMax" else {"cucb": _ONLINE_CUCB},
        dataset_collector=_COLLECT,
    )
    for name, factory, summary in (
        ("Cascade", "cascade", "Off-CMAB cascading bandit: rank k of m items (m=100, k=5)"),
        ("LLMCache", "llm_cache", "Off-CMAB LLM cache: cache k of m queries (m=100, k=40)"),
        (
            "InfluenceMax",
            "influence_max",
            "Off-CMAB influence maximization: k seeds, node feedback",
        ),
        ("KPath", "kpath", "Off-CMAB k-path semi-bandit (lower-bound instance)"),
    )
)
