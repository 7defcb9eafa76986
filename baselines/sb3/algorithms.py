"""The SB3 algorithms ``gymforge train`` offers, and which spaces each of them can act in.

One row per algorithm: where its class lives (Stable-Baselines3 or sb3-contrib), which action
spaces it supports, and the policy it uses. :func:`check_spaces` turns an algorithm/space
mismatch into a clear ``ValueError`` before anything is built.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from gymnasium import spaces

_ON_POLICY_ACTIONS: tuple[type[spaces.Space], ...] = (
    spaces.Box,
    spaces.Discrete,
    spaces.MultiDiscrete,
    spaces.MultiBinary,
)
_OBSERVATIONS: tuple[type[spaces.Space], ...] = (
    spaces.Box,
    spaces.Discrete,
    spaces.MultiDiscrete,
    spaces.MultiBinary,
    spaces.Dict,
)


@dataclass(frozen=True)
class Algorithm:
    """One trainable algorithm.

    Attributes:
        name: the ``--algo`` name.
        entry_point: ``"module:Class"`` of the SB3 / sb3-contrib class.
        action_spaces: action space types it can output.
        recurrent: keeps an LSTM state between steps (its policies end in ``LstmPolicy``).
        off_policy: learns from a replay buffer (saved with checkpoints so resuming keeps it).
    """

    name: str
    entry_point: str
    action_spaces: tuple[type[spaces.Space], ...]
    recurrent: bool = False
    off_policy: bool = False

    def load_class(self) -> Any:
        """The algorithm class (imports SB3 / sb3-contrib on first use)."""
        module, _, attr = self.entry_point.partition(":")
        return getattr(importlib.import_module(module), attr)

    def policy_for(self, observation_space: spaces.Space) -> str:
        """SB3's policy name for this observation space."""
        dict_obs = isinstance(observation_space, spaces.Dict)
        if self.recurrent:
            return "MultiInputLstmPolicy" if dict_obs else "MlpLstmPolicy"
        return "MultiInputPolicy" if dict_obs else "MlpPolicy"


ALGORITHMS: dict[str, Algorithm] = {
    "ppo": Algorithm("ppo", "stable_baselines3:PPO", _ON_POLICY_ACTIONS),
    "a2c": Algorithm("a2c", "stable_baselines3:A2C", _ON_POLICY_ACTIONS),
    "dqn": Algorithm("dqn", "stable_baselines3:DQN", (spaces.Discrete,), off_policy=True),
    "sac": Algorithm("sac", "stable_baselines3:SAC", (spaces.Box,), off_policy=True),
    "recurrentppo": Algorithm(
        "recurrentppo", "sb3_contrib:RecurrentPPO", _ON_POLICY_ACTIONS, recurrent=True
    ),
    "trpo": Algorithm("trpo", "sb3_contrib:TRPO", _ON_POLICY_ACTIONS),
}


def get_algorithm(name: str) -> Algorithm:
    """The row of ``name``, or ``ValueError`` listing the allowed names."""
    if name not in ALGORITHMS:
        raise ValueError(f"algo must be one of {sorted(ALGORITHMS)}, got {name!r}")
    return ALGORITHMS[name]


def _space_name(space: spaces.Space) -> str:
    return type(space).__name__


def fitting_algorithms(observation_space: spaces.Space, action_space: spaces.Space) -> list[str]:
    """Names of the algorithms that can train on these spaces."""
    if not isinstance(observation_space, _OBSERVATIONS):
        return []
    return sorted(a.name for a in ALGORITHMS.values() if isinstance(action_space, a.action_spaces))


def check_spaces(
    algo: Algorithm, observation_space: spaces.Space, action_space: spaces.Space, env_id: str
) -> None:
    """Raise ``ValueError`` unless ``algo`` can train on an env with these spaces.

    The message names the algorithm, the offending space, what the algorithm accepts and the
    algorithms that do fit the env.
    """
    fitting = fitting_algorithms(observation_space, action_space)
    if not isinstance(observation_space, _OBSERVATIONS):
        allowed = [t.__name__ for t in _OBSERVATIONS]
        raise ValueError(
            f"algo {algo.name!r} cannot train on {env_id}: observation space "
            f"{_space_name(observation_space)} ({observation_space}) is not one of {allowed}"
        )
    if not isinstance(action_space, algo.action_spaces):
        allowed = [t.__name__ for t in algo.action_spaces]
        raise ValueError(
            f"algo {algo.name!r} cannot act in {env_id}'s action space {action_space} "
            f"({_space_name(action_space)}): {algo.name} supports {allowed}; "
            f"algorithms allowed for {env_id}: {fitting}"
        )
