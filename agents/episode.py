"""The one episode loop: an agent meets an env for one seeded episode.

Every place that plays episodes (the CLI's rollouts, the demo, dataset collection, the trainers'
held-out evaluation, the board evaluator) calls :func:`run_episode` for a Gymnasium env and
:func:`run_parallel_episode` for a PettingZoo ``ParallelEnv``, so that "an episode" means the same
thing everywhere: ``agent.reset(seed)``, ``env.reset(seed=seed)``, then act and step until the env
ends the episode or ``max_steps`` (a protocol's cap) is reached. What a caller needs beyond the
totals (frames, the transitions of a dataset, a reward curve) it collects with ``on_step``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: ``on_step(observation, action, reward, terminated, truncated, info)``, after every step
#: (``observation`` is the one the step returned).
StepHook = Callable[[Any, Any, float, bool, bool, dict[str, Any]], None]
#: ``on_reset(observation, info)``, right after ``env.reset``.
ResetHook = Callable[[Any, dict[str, Any]], None]


@dataclass
class Episode:
    """What one episode gave.

    Attributes:
        seed: the episode's seed (agent and env).
        total_return: sum of the rewards (of the first agent, for parallel envs).
        length: steps taken.
        final_info: the info of the last step (of the first agent, for parallel envs).
        stopped_at_max_steps: the loop, not the env, ended the episode (``max_steps``).
        first_observation: what ``env.reset`` returned.
        returns_by_agent: every agent's summed reward (parallel envs only).
    """

    seed: int
    total_return: float = 0.0
    length: int = 0
    final_info: dict[str, Any] = field(default_factory=dict)
    stopped_at_max_steps: bool = False
    first_observation: Any = None
    returns_by_agent: dict[str, float] = field(default_factory=dict)


def run_episode(
    env: Any,
    agent: Any,
    seed: int,
    max_steps: int | None = None,
    on_step: StepHook | None = None,
    on_reset: ResetHook | None = None,
) -> Episode:
    """One episode of ``agent`` (``reset(seed)``, ``act(observation, info)``) on ``env``.

    The agent gets a copy of each info, so it cannot change what the caller records.
    """
    agent.reset(seed=seed)
    observation, info = env.reset(seed=seed)
    episode = Episode(seed=int(seed), first_observation=observation, final_info=dict(info))
    if on_reset is not None:
        on_reset(observation, info)
    done = False
    while not done:
        action = agent.act(observation, dict(info))
        observation, reward, terminated, truncated, info = env.step(action)
        episode.total_return += float(reward)
        episode.length += 1
        done = bool(terminated or truncated)
        if on_step is not None:
            on_step(observation, action, float(reward), bool(terminated), bool(truncated), info)
        if not done and max_steps is not None and episode.length >= max_steps:
            done = episode.stopped_at_max_steps = True
    episode.final_info = dict(info)
    return episode


def run_parallel_episode(
    env: Any,
    players: Any,
    seed: int,
    max_steps: int | None = None,
    pass_infos: bool = False,
) -> Episode:
    """One episode of ``players`` on a PettingZoo ``ParallelEnv``.

    ``players.act(observations)`` (or ``act(observations, infos)`` with ``pass_infos``) returns
    one action per live agent; the record follows the env's first agent (the two-player games
    give both the same figures of merit).
    """
    players.reset(seed=seed)
    observations, infos = env.reset(seed=seed)
    first = env.possible_agents[0]
    episode = Episode(seed=int(seed), first_observation=observations)
    episode.returns_by_agent = dict.fromkeys(env.possible_agents, 0.0)
    done = False
    while not done:
        actions = players.act(observations, infos) if pass_infos else players.act(observations)
        if not isinstance(actions, Mapping) or set(actions) != set(env.agents):
            got = sorted(actions) if isinstance(actions, Mapping) else type(actions).__name__
            raise ValueError(
                f"players must return a dict with one action per agent {sorted(env.agents)}, "
                f"got {got}"
            )
        observations, rewards, terminations, truncations, infos = env.step(dict(actions))
        for agent, reward in rewards.items():
            episode.returns_by_agent[agent] += float(reward)
        episode.total_return += float(rewards[first])
        episode.length += 1
        done = all(terminations[a] or truncations[a] for a in terminations) or not env.agents
        if not done and max_steps is not None and episode.length >= max_steps:
            done = episode.stopped_at_max_steps = True
    episode.final_info = dict(infos.get(first, {}))
    return episode


class PolicyAgent:
    """A plain ``policy(observation) -> action`` function as an agent (stateless)."""

    def __init__(self, policy: Callable[[Any], Any]) -> None:
        self.policy = policy

    def reset(self, seed: int | None = None) -> None:
        """A function has no episode state."""

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> Any:
        return self.policy(observation)
