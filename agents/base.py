"""The agent protocol that reference agents, baselines and leaderboard submissions implement."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Agent(Protocol):
    """A policy the CLI and the evaluator can run.

    ``act`` takes one observation, or a batch with a leading instance axis, and returns the
    matching action(s). Agents are built by a factory ``factory(env) -> Agent`` that may read the
    env's spaces and configuration; during evaluation they only ever see observations and infos.
    """

    def reset(self, seed: int | None = None) -> None:
        """Start a new episode (and seed any randomness of the agent)."""

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> Any:
        """The action for ``observation``."""
