"""The jobs of ``parity.py``: the tolerances and constants, one seeded episode batch per job
on the SimPy env or the torch engine, and the process pool that runs them.

Jobs are plain frozen records run by top-level functions, so worker processes started with
``spawn`` can receive and run them.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

import gymforge  # noqa: F401  (registers the LineFlow ids with Gymnasium)
from gymforge.registry import EnvSpec, all_specs, get_spec, load_entry_point

RANDOM = "random"
SIMPY_SEED0 = 1000
TORCH_SEED0 = 0
RELATIVE_TOLERANCE = 0.02
SCRAP_ABSOLUTE_TOLERANCE = 1.0
MIN_CRITERION_SEEDS = 32
DEFAULT_HORIZON = 2000.0  # the envs' own is 4000; see the module docstring
VERSIONED_PACKAGES = ("gymforge", "gymnasium", "numpy", "simpy", "torch", "scipy")
METRICS = ("parts", "scrap")


# --------------------------------------------------------------------------------------------
# Jobs


@dataclass(frozen=True)
class SimpyJob:
    """``len(seeds)`` SimPy episodes of one (id, policy)."""

    env_id: str
    policy: str
    seeds: tuple[int, ...]
    horizon: float


@dataclass(frozen=True)
class TorchJob:
    """One batched torch run of one id: ``len(seeds)`` instances per policy, side by side."""

    env_id: str
    policies: tuple[str, ...]
    seeds: tuple[int, ...]
    horizon: float


Job = SimpyJob | TorchJob


def parity_specs(ids: Sequence[str] | None = None) -> list[EnvSpec]:
    """LineFlow ids with a torch engine (``capabilities.batched``), in registry order."""
    specs = [
        s
        for s in all_specs()
        if s.family == "lineflow" and s.capabilities.batched and s.vector_entry_point
    ]
    if ids:
        known = {s.id for s in specs}
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise SystemExit(f"not a batched LineFlow id: {unknown}; choose from {sorted(known)}")
        specs = [s for s in specs if s.id in set(ids)]
    return specs


def policies_of(spec: EnvSpec) -> tuple[str, ...]:
    """``random`` first, then every named agent of the id."""
    return (RANDOM, *(name for name in spec.agents if name != RANDOM))


def build_agent(env: Any, spec: EnvSpec, policy: str) -> Any:
    return load_entry_point(spec.agents[policy])(env)


def random_actions(generators: Sequence[np.random.Generator], nvec: np.ndarray) -> np.ndarray:
    """One uniform ``MultiDiscrete(nvec)`` action per generator."""
    return np.stack([g.integers(0, nvec) for g in generators]).astype(np.int64)


def _error(record: dict[str, Any], error: BaseException) -> None:
    record["error"] = f"{type(error).__name__}: {error}"
    record["traceback_tail"] = traceback.format_exc().strip().splitlines()[-8:]


def run_simpy(job: SimpyJob) -> dict[str, Any]:
    """SimPy episodes, one per seed; errors are recorded, not raised."""
    record: dict[str, Any] = {
        "engine": "simpy",
        "env_id": job.env_id,
        "policies": [job.policy],
        "episodes": [],
        "error": None,
    }
    start = time.perf_counter()
    try:
        spec = get_spec(job.env_id)
        env = gym.make(job.env_id, horizon=job.horizon)
        nvec = np.asarray(env.action_space.nvec)
        agent = None if job.policy == RANDOM else build_agent(env, spec, job.policy)
        for seed in job.seeds:
            rng = np.random.default_rng(seed)
            if agent is not None:
                agent.reset(seed=seed)
            obs, info = env.reset(seed=seed)
            steps, terminated, truncated = 0, False, False
            while not (terminated or truncated):
                if agent is None:
                    action = rng.integers(0, nvec).astype(np.int64)
                else:
                    action = agent.act(obs, info)
                obs, _, terminated, truncated, info = env.step(action)
                steps += 1
            record["episodes"].append(
                {
                    "policy": job.policy,
                    "seed": int(seed),
                    "parts": int(info["n_parts"]),
                    "scrap": int(info["n_scrap_parts"]),
                    "steps": steps,
                    "truncation_reason": info.get("truncation_reason"),
                }
            )
        env.close()
    except Exception as error:  # recorded in the results; the run goes on
        _error(record, error)
    record["wall_s"] = time.perf_counter() - start
    record["env_steps"] = sum(e["steps"] for e in record["episodes"])
    return record


def run_torch(job: TorchJob) -> dict[str, Any]:
    """One batched run of every policy of an id; errors are recorded, not raised."""
    import torch  # only the torch jobs need it

    torch.set_num_threads(1)
    n = len(job.seeds)
    batch = n * len(job.policies)
    record: dict[str, Any] = {
        "engine": "torch",
        "env_id": job.env_id,
        "policies": list(job.policies),
        "num_envs": batch,
        "episodes": [],
        "error": None,
    }
    start = time.perf_counter()
    try:
        spec = get_spec(job.env_id)
        env = gym.make_vec(
            job.env_id,
            num_envs=batch,
            vectorization_mode="vector_entry_point",
            array_backend="torch",
            horizon=job.horizon,
        )
        nvec = np.asarray(env.single_action_space.nvec)
        blocks: list[tuple[str, slice, Any]] = []
        for p, policy in enumerate(job.policies):
            rows = slice(p * n, (p + 1) * n)
            if policy == RANDOM:
                actor: Any = [np.random.default_rng(seed) for seed in job.seeds]
            else:
                actor = build_agent(env, spec, policy)
                actor.reset(seed=job.seeds[0])
            blocks.append((policy, rows, actor))
        seeds = [int(s) for _ in job.policies for s in job.seeds]
        obs, _ = env.reset(seed=seeds)
        parts_now = np.zeros(batch, dtype=np.int64)
        final_parts = np.full(batch, -1, dtype=np.int64)
        final_scrap = np.full(batch, -1, dtype=np.int64)
        final_step = np.full(batch, -1, dtype=np.int64)
        max_steps = int(env.unwrapped.max_steps)
        step = 0
        while (final_step < 0).any():
            if step > max_steps:
                raise RuntimeError(f"no episode end after {step} steps (max_steps {max_steps})")
            obs_np = obs.numpy()
            action = np.empty((batch, len(nvec)), dtype=np.int64)
            for policy, rows, actor in blocks:
                if policy == RANDOM:
                    action[rows] = random_actions(actor, nvec)
                else:
                    action[rows] = actor.act(obs_np[rows], {"n_parts": parts_now[rows]})
            obs, _, _, _, infos = env.step(action)
            step += 1
            parts_now = infos["n_parts"].numpy().astype(np.int64)
            if "final_info" in infos:
                ended = infos["_final_info"].numpy() & (final_step < 0)
                final = infos["final_info"]
                final_parts[ended] = final["n_parts"].numpy()[ended]
                final_scrap[ended] = final["n_scrap_parts"].numpy()[ended]
                final_step[ended] = step
        for policy, rows, _ in blocks:
            for i, seed in zip(range(rows.start, rows.stop), job.seeds, strict=True):
                record["episodes"].append(
                    {
                        "policy": policy,
                        "seed": int(seed),
                        "parts": int(final_parts[i]),
                        "scrap": int(final_scrap[i]),
                        "steps": int(final_step[i]),
                    }
                )
        record["batch_steps"] = step
        env.close()
    except Exception as error:  # recorded in the results; the run goes on
        _error(record, error)
    record["wall_s"] = time.perf_counter() - start
    record["env_steps"] = sum(e["steps"] for e in record["episodes"])
    return record


def run_job(item: tuple[int, Job]) -> tuple[int, dict[str, Any]]:
    index, job = item
    return index, run_torch(job) if isinstance(job, TorchJob) else run_simpy(job)


def _worker_init() -> None:
    with contextlib.suppress(ImportError):
        import torch

        torch.set_num_threads(1)


def run_jobs(jobs: list[Job], processes: int, log: Callable[[str], None]) -> list[dict[str, Any]]:
    """Run ``jobs`` (inline when ``processes`` is 1); results in job order."""
    start = time.perf_counter()
    by_index: dict[int, dict[str, Any]] = {}

    def progress(record: dict[str, Any]) -> None:
        label = f"{record['engine']:5s} {record['env_id']} {','.join(record['policies'])}"
        status = "ERROR " + record["error"] if record["error"] else "ok"
        log(
            f"  [{len(by_index)}/{len(jobs)}, {time.perf_counter() - start:5.0f} s] {label}: "
            f"{record['wall_s']:.1f} s, {record['env_steps'] / max(record['wall_s'], 1e-9):,.0f}"
            f" env steps/s, {status}"
        )

    if processes <= 1:
        _worker_init()
        for item in enumerate(jobs):
            index, record = run_job(item)
            by_index[index] = record
            progress(record)
    else:
        context = multiprocessing.get_context("spawn")
        with context.Pool(processes, initializer=_worker_init) as pool:
            for index, record in pool.imap_unordered(run_job, list(enumerate(jobs)), chunksize=1):
                by_index[index] = record
                progress(record)
    return [by_index[i] for i in range(len(jobs))]
