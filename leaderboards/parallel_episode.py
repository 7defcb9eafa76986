"""Episodes of PettingZoo parallel agents on a multi-agent board (e.g. ``minmax/RandomBilinear``).

A multi-agent submission is an entry point ``module:factory`` called with the protocol's
``ParallelEnv``; the factory returns either

- one players object for every side: ``reset(seed)`` and ``act(observations) -> {agent:
  action}`` (the players protocol of :mod:`gymforge.agents.random_players`), or
- a dict ``{agent name: player}`` with one entry per agent of the env, each player having
  ``reset(seed)`` and ``act(observation, info) -> action`` for its own side.

:func:`as_players` turns either form into the first one, and rejects anything else with an
error naming what is wrong. The episode's metric reads the final info of the env's first agent
(the min-max envs give both agents the same ``distance`` and ``f``); its return is that agent's
summed reward. The episode loop itself is :func:`gymforge.agents.episode.run_parallel_episode`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gymforge.baselines.agent_loader import AgentRecord, load_factory


def _has_methods(obj: Any) -> bool:
    return callable(getattr(obj, "reset", None)) and callable(getattr(obj, "act", None))


class SidePlayers:
    """One player per agent name, played together as a players object."""

    def __init__(self, sides: Mapping[str, Any]) -> None:
        self.sides = dict(sides)

    def reset(self, seed: int | None = None) -> None:
        for side in self.sides.values():
            side.reset(seed=seed)

    def act(
        self, observations: Mapping[str, Any], infos: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        infos = infos or {}
        return {
            agent: side.act(observations[agent], dict(infos.get(agent, {})))
            for agent, side in self.sides.items()
        }


def as_players(obj: Any, agents: list[str], source: str) -> Any:
    """``obj`` as a players object for ``agents``; ``ValueError`` naming the problem otherwise."""
    if isinstance(obj, Mapping):
        keys = sorted(str(k) for k in obj)
        if set(obj) != set(agents):
            raise ValueError(
                f"agent from {source} is a dict of players with keys {keys}; it must have "
                f"exactly one player per agent: {sorted(agents)}"
            )
        for agent, side in obj.items():
            if not _has_methods(side):
                raise ValueError(
                    f"agent from {source}: the player of {agent!r} has no reset() and act() methods"
                )
        return SidePlayers({agent: obj[agent] for agent in agents})
    if _has_methods(obj):
        return obj
    raise ValueError(
        f"agent from {source} must be a players object (reset(seed), act(observations) -> "
        f"{{agent: action}}) or a dict of players keyed by {sorted(agents)}, got "
        f"{type(obj).__name__}"
    )


def build_players(record: AgentRecord, make_env: Any) -> Any:
    """The players of an entry-point ``record`` (the only kind multi-agent boards take)."""
    if record.kind != "entry_point":
        raise ValueError(
            f"multi-agent boards take entry points 'module:factory' only, got a {record.kind} "
            "artifact"
        )
    env = make_env()
    return as_players(
        load_factory(record.entry_point)(env), list(env.possible_agents), record.entry_point
    )
