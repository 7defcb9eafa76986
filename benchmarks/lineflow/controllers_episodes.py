"""The episodes of ``controllers.py``: one seeded episode per job, run in worker processes
that keep one env per id.

Top-level functions taking plain records, so workers started with ``spawn`` can run them.
"""

from __future__ import annotations

import multiprocessing
import time
import traceback
from collections.abc import Callable
from typing import Any

import gymnasium as gym

import gymforge  # noqa: F401  (registers the LineFlow ids with Gymnasium)
from benchmarks.lineflow.controllers_policies import build_policy
from benchmarks.lineflow.controllers_setup import Job
from gymforge.registry import EnvSpec, all_specs

# --------------------------------------------------------------------------------------------
# Running episodes (in worker processes)

_ENVS: dict[str, gym.Env] = {}
_SPECS: dict[str, EnvSpec] = {}


def _env(env_id: str) -> gym.Env:
    if env_id not in _ENVS:
        _ENVS[env_id] = gym.make(env_id)
    return _ENVS[env_id]


def _spec(env_id: str) -> EnvSpec:
    if not _SPECS:
        _SPECS.update({s.id: s for s in all_specs()})
    return _SPECS[env_id]


def run_episode(job: Job) -> dict[str, Any]:
    """One episode of ``job``; errors are returned, not raised."""
    record: dict[str, Any] = {
        "env_id": job.env_id,
        "controller": job.controller.name,
        "group": job.controller.group,
        "phase": job.phase,
        "seed": job.seed,
        "return": None,
        "parts": None,
        "scrap": None,
        "steps": 0,
        "truncated": None,
        "deadlock": None,
        "wall_s": 0.0,
        "error": None,
    }
    start = time.perf_counter()
    try:
        env = _env(job.env_id)
        agent = build_policy(env, _spec(job.env_id), job.controller)
        agent.reset(seed=job.seed)
        obs, info = env.reset(seed=job.seed)
        total, steps, terminated, truncated = 0.0, 0, False, False
        while not (terminated or truncated):
            obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
            total += float(reward)
            steps += 1
        record.update(
            {
                "return": total,
                "parts": int(info["n_parts"]),
                "scrap": int(info["n_scrap_parts"]),
                "steps": steps,
                "truncated": bool(truncated),
                "deadlock": bool(info.get("deadlock", False)),
            }
        )
    except Exception as error:  # recorded in the results; the run goes on
        lines = traceback.format_exc().strip().splitlines()
        record["error"] = f"{type(error).__name__}: {error}"
        record["traceback_tail"] = lines[-6:]
    record["wall_s"] = time.perf_counter() - start
    return record


def run_jobs(
    jobs: list[Job], processes: int, log: Callable[[str], None], label: str
) -> list[dict[str, Any]]:
    """Run ``jobs`` over ``processes`` worker processes (inline when 1); results in job order."""
    start = time.perf_counter()
    results: list[dict[str, Any]] = []
    step = max(1, len(jobs) // 10)

    def progress(done: int) -> None:
        if done % step == 0 or done == len(jobs):
            log(f"  {label}: {done}/{len(jobs)} episodes, {time.perf_counter() - start:.0f} s")

    if processes <= 1:
        for job in jobs:
            results.append(run_episode(job))
            progress(len(results))
        return results
    with multiprocessing.get_context("fork").Pool(processes) as pool:
        indexed = pool.imap_unordered(_indexed_episode, list(enumerate(jobs)), chunksize=1)
        by_index: dict[int, dict[str, Any]] = {}
        for index, record in indexed:
            by_index[index] = record
            progress(len(by_index))
    return [by_index[i] for i in range(len(jobs))]


def _indexed_episode(item: tuple[int, Job]) -> tuple[int, dict[str, Any]]:
    index, job = item
    return index, run_episode(job)
