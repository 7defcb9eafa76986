"""The paper's baselines with tuned *fixed* hyperparameters, as leaderboard agents.

Three boards, two kinds of agent:

- ``MinMaxTuning-v0`` and ``MinMaxTuning-Alt-v0`` (the env applies simultaneous, resp.
  alternating, heavy ball with the ``(h, β)`` the agent picks each step):
  :class:`FixedTuningAgent` plays one constant pair: Sim-GDA (``β = 0``) or Sim-HB there,
  Alt-GDA or Alt-HB here. Extragradient and OGDA are not expressible as these envs' action
  (the env owns the update rule), so they appear only on the games board.
- ``MinMax-RandomBilinear-v0`` (the players move ``x`` and ``y`` themselves): GDA, Sim-HB,
  Alt-HB, extragradient and OGDA players.

The constants below were chosen by ``benchmarks/minmax/baselines.py`` on training seeds only
(below ``2**62``; the boards evaluate on ``2**62 + 1000000 + i``), as the best mean score of
each method over a grid; ``benchmarks/results/minmax_baselines.md`` records the grid and every
score, and a test checks that these constants are the ones recorded there.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from pettingzoo import ParallelEnv

from gymforge.agents.minmax.players import AltHeavyBallPlayers, HeavyBallPlayers, HeavyBallSide
from gymforge.agents.minmax.tuning_agent import ConstantChoice, observation_ndim
from gymforge.baselines.minmax.game_players import ExtragradientPlayers, OptimisticPlayers

#: MinMaxTuning-v0: method -> (h, β), chosen on training seeds.
TUNING_BOARD: dict[str, tuple[float, float]] = {
    "gda": (0.01, 0.0),
    "sim_hb": (0.01, -0.9),
}

#: MinMaxTuning-Alt-v0: method -> (h, β), chosen on training seeds.
ALT_TUNING_BOARD: dict[str, tuple[float, float]] = {
    "alt_gda": (0.01, 0.0),
    "alt_hb": (0.5, -0.5),
}

#: MinMax-RandomBilinear-v0: method -> (h, β) (β = 0 for methods without momentum).
GAMES_BOARD: dict[str, tuple[float, float]] = {
    "gda": (0.02, 0.0),
    "sim_hb": (0.02, -0.9),
    "alt_hb": (1.5, -0.3),
    "eg": (1.0, 0.0),
    "ogda": (0.5, 0.0),
}


class FixedTuningAgent(ConstantChoice):
    """Plays one constant ``(h, β)`` on ``MinMaxTuning-v0`` (scalar or vector env).

    Args:
        env: the env (its action box bounds the pair).
        step_size: ``h``, in ``[0, h_max]``.
        momentum: ``β``, in ``[beta_min, beta_max]``.
    """

    def __init__(self, env: gym.Env | gym.vector.VectorEnv, step_size: float, momentum: float):
        space = getattr(env, "single_action_space", None) or env.action_space
        for index, (name, value) in enumerate((("step_size", step_size), ("momentum", momentum))):
            low, high = float(space.low[index]), float(space.high[index])
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"{name} must be a number in [{low}, {high}], got {value!r}")
            if not space.low[index] <= np.float32(value) <= space.high[index]:  # as float32
                raise ValueError(f"{name} must be in [{low}, {high}] (the action box), got {value}")
        self.choice = np.array([step_size, momentum], dtype=np.float32)
        self._obs_ndim = observation_ndim(env)


def gda_tuning_agent(env: gym.Env) -> FixedTuningAgent:
    """Sim-GDA (β = 0) with the step size tuned on training seeds of ``MinMaxTuning-v0``."""
    return FixedTuningAgent(env, TUNING_BOARD["gda"][0], 0.0)


def sim_hb_tuning_agent(env: gym.Env) -> FixedTuningAgent:
    """Sim-HB with the fixed ``(h, β)`` tuned on training seeds of ``MinMaxTuning-v0``."""
    return FixedTuningAgent(env, *TUNING_BOARD["sim_hb"])


def alt_gda_tuning_agent(env: gym.Env) -> FixedTuningAgent:
    """Alt-GDA (β = 0) with the step size tuned on training seeds of ``MinMaxTuning-Alt-v0``."""
    return FixedTuningAgent(env, ALT_TUNING_BOARD["alt_gda"][0], 0.0)


def alt_hb_tuning_agent(env: gym.Env) -> FixedTuningAgent:
    """Alt-HB with the fixed ``(h, β)`` tuned on training seeds of ``MinMaxTuning-Alt-v0``."""
    return FixedTuningAgent(env, *ALT_TUNING_BOARD["alt_hb"])


def gda_game_players(env: ParallelEnv) -> dict[str, HeavyBallSide]:
    """Simultaneous GDA with the step size tuned on training games, one player per agent name."""
    h = GAMES_BOARD["gda"][0]
    return {agent: HeavyBallSide(env, agent, step_size=h) for agent in env.possible_agents}


def sim_hb_game_players(env: ParallelEnv) -> HeavyBallPlayers:
    """Sim-HB with the ``(h, β)`` tuned on training games."""
    h, beta = GAMES_BOARD["sim_hb"]
    return HeavyBallPlayers(env, step_size=h, momentum=beta)


def alt_hb_game_players(env: ParallelEnv) -> AltHeavyBallPlayers:
    """Alt-HB with the ``(h, β)`` tuned on training games."""
    h, beta = GAMES_BOARD["alt_hb"]
    return AltHeavyBallPlayers(env, step_size=h, momentum=beta)


def eg_game_players(env: ParallelEnv) -> ExtragradientPlayers:
    """Extragradient with the step size tuned on training games."""
    return ExtragradientPlayers(env, step_size=GAMES_BOARD["eg"][0])


def ogda_game_players(env: ParallelEnv) -> OptimisticPlayers:
    """Optimistic GDA with the step size tuned on training games."""
    return OptimisticPlayers(env, step_size=GAMES_BOARD["ogda"][0])
