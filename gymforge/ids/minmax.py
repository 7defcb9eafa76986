"""Min-max ids: one PettingZoo game per ``MinMax-<Game>-v0`` and the single-agent ``MinMaxTuning-v0``."""

from __future__ import annotations

from gymforge.spec import Capabilities, EnvSpec

ORDER = 30

_PARALLEL = "gymforge.envs.minmax.parallel_env:MinMaxParallelEnv"
_BATCHED_PARALLEL = "gymforge.envs.minmax.parallel_env:MinMaxBatchedParallelEnv"
_MULTI_AGENT = Capabilities(multi_agent=True, batched=True, devices=("cpu", "cuda"))
_PLAYERS = {
    "gda": "gymforge.agents.minmax.players:gda_players",
    "negative_momentum": "gymforge.agents.minmax.players:negative_momentum_players",
}

_GAMES: tuple[tuple[str, str, str], ...] = (
    ("Bilinear", "bilinear", "bilinear game xᵀAy (default f = xy)"),
    (
        "Quadratic",
        "quadratic",
        "quadratic game a‖x‖² + xᵀBy − c‖y‖² (default 0.05x² + xy − 0.05y²)",
    ),
    ("XY2", "xy2", "f = −x·y² with x ≥ 0 (x projected)"),
    ("Sextic", "sextic", "almost-bilinear sextic game with a limit cycle"),
)

SPECS: tuple[EnvSpec, ...] = (
    *(
        EnvSpec(
            id=f"MinMax-{suffix}-v0",
            family="minmax",
            summary=f"MinMax two-player PettingZoo game: {summary}",
            entry_point=None,
            parallel_entry_point=_PARALLEL,
            batched_parallel_entry_point=_BATCHED_PARALLEL,
            kwargs={"game": game},
            capabilities=_MULTI_AGENT,
            agents=_PLAYERS,
        )
        for suffix, game, summary in _GAMES
    ),
    EnvSpec(
        id="MinMaxTuning-v0",
        family="minmax",
        summary="MinMax optimizer tuning: pick heavy-ball GDA's step size and momentum each step",
        entry_point="gymforge.envs.minmax.tuning_env:MinMaxTuningEnv",
        vector_entry_point="gymforge.envs.minmax.tuning_env:make_minmax_tuning_vec_env",
        kwargs={"game": "bilinear", "order": "simultaneous"},
        capabilities=Capabilities(batched=True, devices=("cpu", "cuda")),
        agents={"spectral": "gymforge.agents.minmax.tuning_agent:SpectralTuningAgent"},
    ),
)
