"""``RandomPlayers``: every agent of a PettingZoo ``ParallelEnv`` acts uniformly at random.

The players protocol of multi-agent ids (``gymforge rollout`` on a PettingZoo id): built as
``Players(parallel_env)``; ``reset(seed)`` then ``act(observations) -> {agent: action}``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo import ParallelEnv


class RandomPlayers:
    """Every agent samples its action space uniformly (agent ``i`` seeded ``seed + i``)."""

    def __init__(self, env: ParallelEnv) -> None:
        self.spaces = {agent: env.action_space(agent) for agent in env.possible_agents}

    def reset(self, seed: int | None = None) -> None:
        for offset, space in enumerate(self.spaces.values()):  # one stream per agent
            space.seed(None if seed is None else seed + offset)

    def act(self, observations: dict[str, Any]) -> dict[str, np.ndarray]:
        return {agent: self.spaces[agent].sample() for agent in observations}
