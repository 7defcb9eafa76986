"""Min-max ids: one PettingZoo game per ``MinMax-<Game>-v0``, the held-out-games id
``MinMax-RandomBilinear-v0`` and the single-agent tuning ids ``MinMaxTuning-v0`` (simultaneous
heavy ball) and ``MinMaxTuning-Alt-v0`` (alternating)."""

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
_TUNED = "gymforge.baselines.minmax.tuned"
_SPECTRAL = "gymforge.agents.minmax.tuning_agent:SpectralTuningAgent"
#: the paper's methods with fixed hyperparameters tuned on training games (the games board).
_TUNED_PLAYERS = {
    "alt_hb": f"{_TUNED}:alt_hb_game_players",
    "eg": f"{_TUNED}:eg_game_players",
    "ogda": f"{_TUNED}:ogda_game_players",
    "sim_hb": f"{_TUNED}:sim_hb_game_players",
    "gda": f"{_TUNED}:gda_game_players",
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


def _tuning_spec(env_id: str, method: str, order: str, tuned: tuple[str, ...]) -> EnvSpec:
    """A single-agent tuning id: the agent picks ``method`` step size and momentum each step;
    its agents are the spectral tuner and the fixed pairs ``tuned`` tuned on training seeds."""
    return EnvSpec(
        id=env_id,
        family="minmax",
        summary=f"MinMax optimizer tuning: pick {method} step size and momentum each step",
        vector_env="gymforge.envs.minmax.tuning_env:MinMaxTuningVecEnv",
        kwargs={"game": "bilinear", "order": order},
        capabilities=Capabilities(batched=True, devices=("cpu", "cuda")),
        agents={"spectral": _SPECTRAL, **{n: f"{_TUNED}:{n}_tuning_agent" for n in tuned}},
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
        id="MinMax-RandomBilinear-v0",
        family="minmax",
        summary="MinMax two-player PettingZoo game: a 4 × 4 bilinear game drawn from each reset seed",
        entry_point=None,
        parallel_entry_point=_PARALLEL,
        batched_parallel_entry_point=_BATCHED_PARALLEL,
        kwargs={"game": "bilinear", "random_game_dim": 4},
        capabilities=_MULTI_AGENT,
        agents=_TUNED_PLAYERS,
    ),
    _tuning_spec("MinMaxTuning-v0", "heavy-ball GDA's", "simultaneous", ("gda", "sim_hb")),
    _tuning_spec(
        "MinMaxTuning-Alt-v0", "alternating heavy ball's", "alternating", ("alt_gda", "alt_hb")
    ),
)
