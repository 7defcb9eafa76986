"""Min-max games: two-player games (PettingZoo) and heavy-ball momentum step-size tuning."""

from gymforge.envs.minmax.games import GAME_NAMES, GAME_PARAMS, Game, make_game
from gymforge.envs.minmax.parallel_env import (
    MinMaxAECEnv,
    MinMaxBatchedParallelEnv,
    MinMaxParallelEnv,
)
from gymforge.envs.minmax.tuning_env import MinMaxTuningVecEnv

__all__ = [
    "GAME_NAMES",
    "GAME_PARAMS",
    "Game",
    "MinMaxAECEnv",
    "MinMaxBatchedParallelEnv",
    "MinMaxParallelEnv",
    "MinMaxTuningVecEnv",
    "make_game",
]
