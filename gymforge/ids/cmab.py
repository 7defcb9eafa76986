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
        vector_env=f"{_ENV}:{name}VecEnv",
        scalar_base=f"{_ENV}:CMABEnv",  # the scalar view's numpy evaluation helpers
        capabilities=_CAPABILITIES,
        agents={} if name == "InfluenceMax" else {"cucb": _ONLINE_CUCB},
        dataset_collector=_COLLECT,
        board_dataset="gymforge.envs.cmab.board_dataset:build",
    )
    for name, summary in (
        ("Cascade", "Off-CMAB cascading bandit: rank k of m items (m=100, k=5)"),
        ("LLMCache", "Off-CMAB LLM cache: cache k of m queries (m=100, k=40)"),
        ("InfluenceMax", "Off-CMAB influence maximization: k seeds, node feedback"),
        ("KPath", "Off-CMAB k-path semi-bandit (lower-bound instance)"),
    )
)
