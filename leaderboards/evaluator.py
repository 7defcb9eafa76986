"""Run an agent under a protocol: the evaluator builds the env, the agent only sees observations.

For each held-out seed of the protocol, one episode: ``agent.reset(seed)``, ``env.reset(seed)``,
then ``agent.act(observation, info)`` until the episode ends (or the protocol's ``max_steps``).
The agent is built once from its own copy of the env (factories read spaces and configuration
from it) and never receives the env being evaluated, so an episode's score depends only on the
agent, its seed and the protocol. Agents must behave the same in an episode whatever ran before
it (``reset(seed)`` resets them): ``verify`` re-runs single episodes and compares.

Multi-agent ids (PettingZoo ``ParallelEnv``): the agent is a players object or a dict of
per-agent players, run by :mod:`gymforge.leaderboards.parallel_episode`.

Offline protocols (an ``offline_dataset`` block, :mod:`gymforge.leaderboards.offline`): before
each episode an agent with a ``fit`` method gets ``fit(dataset)`` with the episode's logged
dataset (built by the family's collector on the episode's instance and checked against the
protocol's sha256), then ``reset(seed)``. Agents without ``fit`` (the random agent, online
learners, saved models) are evaluated without the data; every episode records the dataset's
sha256 and ``fit`` (whether the agent received it).
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from gymforge.agents.episode import Episode, run_episode, run_parallel_episode
from gymforge.baselines.agent_loader import AgentRecord, build_agent
from gymforge.checks.machine import cpu_model
from gymforge.hashing import sha256_bytes
from gymforge.leaderboards.files import canonical_json
from gymforge.leaderboards.offline import episode_datasets
from gymforge.leaderboards.parallel_episode import SidePlayers, build_players
from gymforge.leaderboards.protocol import Protocol
from gymforge.leaderboards.stats import aggregate
from gymforge.registry import get_spec, make_parallel

RESULTS_SCHEMA = "gymforge.results/1"


def make_env_factory(protocol: Protocol) -> Any:
    """A function building a fresh env of the protocol (after checking the id is unchanged)."""
    spec = get_spec(protocol.env_id)
    frozen = protocol.data["env"]["registry_kwargs"]
    if canonical_json(dict(spec.kwargs)) != canonical_json(frozen):
        raise ValueError(
            f"protocol {protocol.task}: the registered kwargs of {protocol.env_id} changed since "
            f"the protocol was frozen ({frozen} -> {dict(spec.kwargs)}); bump the env version "
            "and freeze a new protocol"
        )
    kwargs = protocol.env_kwargs
    if spec.capabilities.multi_agent:  # a PettingZoo ParallelEnv (parallel_episode.py)

        def make_parallel_env() -> Any:
            return make_parallel(protocol.env_id, **kwargs)

        return make_parallel_env

    def make_env() -> gym.Env:
        return gym.make(protocol.env_id, **kwargs)

    return make_env


def _scalar(value: Any) -> float | int:
    array = np.asarray(value)
    if array.size != 1:
        raise ValueError(f"info value {value!r} is not a scalar")
    item = array.reshape(()).item()
    return item if isinstance(item, int) and not isinstance(item, bool) else float(item)


def protocol_record(
    protocol: Protocol, episode: Episode, extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The per-episode record a results file stores: seed, return, length, ``extra`` (the
    offline track's dataset entries), the protocol's final-info entries and its metric."""
    record: dict[str, Any] = {
        "seed": episode.seed,
        "return": episode.total_return,
        "length": episode.length,
        **(extra or {}),
    }
    if episode.stopped_at_max_steps:
        record["truncated_by_protocol"] = True
    info = episode.final_info
    missing = [key for key in protocol.record_info if key not in info]
    if missing:
        raise ValueError(f"protocol {protocol.task}: final info has no {missing}")
    record["info"] = {key: _scalar(info[key]) for key in protocol.record_info}
    metric = protocol.metric
    if metric != "return" and metric[5:] not in protocol.record_info:
        raise ValueError(f"protocol {protocol.task}: metric {metric} must be in record_info")
    raw = episode.total_return if metric == "return" else float(record["info"][metric[5:]])
    record["metric"] = protocol.metric_value(raw)
    return record


def board_episode(
    protocol: Protocol,
    agent: Any,
    env: gym.Env,
    seed: int,
    dataset: tuple[Any, str] | None = None,
) -> dict[str, Any]:
    """One episode of ``agent`` on ``env`` with ``seed``; returns its per-episode record.

    ``dataset`` is ``(dataset, sha256)`` on offline protocols: handed to ``agent.fit`` first
    when the agent has one.
    """
    fitted = False
    if dataset is not None:
        fit = getattr(agent, "fit", None)
        fitted = callable(fit)
        if fitted:
            fit(dataset[0])
    episode = run_episode(env, agent, seed, max_steps=protocol.max_steps)
    extra = {"dataset_sha256": dataset[1], "fit": fitted} if dataset is not None else None
    return protocol_record(protocol, episode, extra)


def run_episodes(
    protocol: Protocol,
    record: AgentRecord,
    indices: Sequence[int] | None = None,
    base: Path | None = None,
    progress: bool = False,
) -> list[dict[str, Any]]:
    """Episodes ``indices`` (positions in the protocol's seed list; default all) of the agent."""
    seeds = protocol.seeds
    chosen = list(range(len(seeds))) if indices is None else list(indices)
    make_env = make_env_factory(protocol)
    datasets: dict[int, Any] = {}
    if protocol.offline_dataset is not None:
        datasets = episode_datasets(protocol, chosen)
    multi_agent = get_spec(protocol.env_id).capabilities.multi_agent
    if multi_agent:
        agent = build_players(record, make_env)
    else:
        agent = build_agent(record, make_env, base=base)
    env = make_env()
    episodes = []
    iterator: Any = chosen
    if progress:
        from tqdm import tqdm

        iterator = tqdm(chosen, desc=f"evaluate {protocol.task}", unit="episode")
    try:
        for index in iterator:
            if multi_agent:
                episode = run_parallel_episode(
                    env,
                    agent,
                    seeds[index],
                    max_steps=protocol.max_steps,
                    pass_infos=isinstance(agent, SidePlayers),
                )
                result = protocol_record(protocol, episode)
            else:
                result = board_episode(protocol, agent, env, seeds[index], datasets.get(index))
            episodes.append({"index": index, **result})
    finally:
        env.close()
    return episodes


def summarise(protocol: Protocol, episodes: list[dict[str, Any]]) -> dict[str, Any]:
    """The aggregate block: statistics of the metric, and its normalised mean and CI."""
    block = aggregate([e["metric"] for e in episodes])
    scores = protocol.normalisation_scores()
    if scores is None:
        block["normalised"] = None
        block["normalised_ci95"] = None
    else:
        block["normalised"] = protocol.normalise(block["mean"])
        block["normalised_ci95"] = [protocol.normalise(v) for v in block["ci95"]]
    return block


def _git_commit() -> str | None:
    root = Path(__file__).resolve().parents[1]
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for package in ("gymforge", "gymnasium", "numpy", "torch", "stable-baselines3", "simpy"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = None
    return found


def provenance(wall_time_s: float) -> dict[str, Any]:
    """Package versions, git commit, hardware and wall time of an evaluation."""
    return {
        "versions": _versions(),
        "git_commit": _git_commit(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "hardware": {"cpu": cpu_model(), "cpus": os.cpu_count(), "device": "cpu"},
        "wall_time_s": round(wall_time_s, 3),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def episodes_digest(episodes: list[dict[str, Any]]) -> str:
    """The content hash over the episode list (canonical JSON)."""
    return sha256_bytes(canonical_json(episodes))


def evaluate(
    protocol: Protocol, record: AgentRecord, base: Path | None = None, progress: bool = False
) -> dict[str, Any]:
    """Evaluate the agent of ``record`` on every seed of ``protocol``; the results document."""
    start = time.perf_counter()
    episodes = run_episodes(protocol, record, base=base, progress=progress)
    elapsed = time.perf_counter() - start
    spec = get_spec(protocol.env_id)
    if spec.capabilities.multi_agent:  # no gymnasium EnvSpec: the registry row's essentials
        env_spec = canonical_json(
            {
                "id": spec.id,
                "parallel_entry_point": spec.parallel_entry_point,
                "kwargs": {**spec.kwargs, **protocol.env_kwargs},
            }
        ).decode()
    else:
        env = gym.make(protocol.env_id, **protocol.env_kwargs)
        try:
            env_spec = env.spec.to_json() if env.spec is not None else None
        finally:
            env.close()
    return {
        "schema": RESULTS_SCHEMA,
        "task": protocol.task,
        "protocol": {"version": protocol.version, "sha256": protocol.sha256},
        "env": {"id": protocol.env_id, "kwargs": protocol.env_kwargs, "spec": env_spec},
        "agent": record.to_json(),
        "metric": protocol.metric,
        "episodes": episodes,
        "episodes_sha256": episodes_digest(episodes),
        "aggregate": summarise(protocol, episodes),
        "provenance": provenance(elapsed),
    }
