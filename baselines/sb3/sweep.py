"""Sweeps: a grid of train-and-evaluate jobs (tasks × algorithms × seeds × hyperparameters).

A sweep file (YAML or JSON)::

    version: 1
    name: lr-scan                      # optional
    tasks: [LineFlow-WaitingTime-v0]   # ids
    algos: [ppo, a2c]
    seeds: [0, 1, 2]
    steps: 100000                      # training steps of every job
    grid:                              # optional: every combination, set on each algorithm
      learning_rate: [0.0003, 0.001]
    config: {n_envs: 2}                # optional: overrides in the config-file schema
    vectorized: false                  # optional: train on the batched torch env
    trainer: sb3                       # optional: sb3 (default) or torch (the on-device
                                       #   trainer: ppo, a2c, recurrentppo; `config` then takes
                                       #   its settings, see gymforge.baselines.ondevice.config)
    eval_episodes: 5                   # optional: held-out episodes per job
    eval_offset: 0                     # optional: they use the seeds 2**62 + eval_offset + k

Every job trains with :func:`gymforge.baselines.sb3.run.train` into ``OUT/jobs/<job id>/`` and
evaluates its final agent on the held-out seeds; its row (with a SHA-256 of the trained policy's
parameters, ``policy_sha256``) is written to ``result.json`` there, and its settings to
``job.json``, so a re-run skips finished jobs (and refuses, before any training, a job folder
that holds the result of other settings). The rows are collected in ``OUT/results.csv`` and
``OUT/results.json``. Jobs run in a local process pool or as Ray tasks; with the same seeds both
give identical figures (CPU training is deterministic with one torch thread).
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import math
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gymforge.baselines.sb3.algorithms import get_algorithm
from gymforge.baselines.sb3.config import check_file
from gymforge.baselines.training.files import read_file
from gymforge.core.limits import check_workers
from gymforge.core.outputs import check_writable

SWEEP_KEYS = (
    "version",
    "name",
    "tasks",
    "algos",
    "seeds",
    "steps",
    "grid",
    "config",
    "vectorized",
    "trainer",
    "eval_episodes",
    "eval_offset",
)
TRAINERS = ("sb3", "torch")
BACKENDS = ("local", "ray")
RESULT_FILE = "result.json"
#: what a finished job was run with (its job entry, less its folder), beside its result
JOB_FILE = "job.json"
#: the most jobs one sweep may have: each trains a model (minutes), and every job's settings
#: are checked before the first starts, so a larger grid is almost surely a mistake
MAX_JOBS = 10_000
#: the columns of results.csv before the grid's hyperparameters
LEADING_COLUMNS = ("job", "task", "algo", "seed")
TRAILING_COLUMNS = (
    "steps",
    "mean_return",
    "std_return",
    "eval_seeds",
    "policy_sha256",
    "train_s",
    "out",
)


def _list(data: dict[str, Any], key: str, source: str) -> list[Any]:
    value = data.get(key)
    if not isinstance(value, list) or not value:
        raise ValueError(f"{source}: {key} must be a non-empty list, got {value!r}")
    return value


def check_job_count(
    source: str, tasks: list[Any], algos: list[Any], seeds: list[Any], grid: dict[str, list[Any]]
) -> int:
    """The sweep's job count, computed from the list lengths before any job is built; above
    :data:`MAX_JOBS` a ``ValueError`` names each field's share."""
    count = len(tasks) * len(algos) * len(seeds) * math.prod(len(v) for v in grid.values())
    if count > MAX_JOBS:
        shares = " x ".join(
            [f"tasks {len(tasks)}", f"algos {len(algos)}", f"seeds {len(seeds)}"]
            + [f"grid.{key} {len(values)}" for key, values in grid.items()]
        )
        raise ValueError(
            f"{source}: the sweep has {count:,} jobs ({shares}), more than the {MAX_JOBS:,} one "
            "sweep may run; shorten those lists or split the sweep"
        )
    return count


def load_sweep(path: str | Path) -> dict[str, Any]:
    """Read and validate a sweep file; returns its mapping with defaults filled in."""
    source = str(path)
    data = read_file(path)
    extra = sorted(set(data) - set(SWEEP_KEYS))
    if extra:
        raise ValueError(f"{source}: unknown key {extra[0]!r}; allowed: {list(SWEEP_KEYS)}")
    if data.get("version") != 1:
        raise ValueError(f"{source}: version must be 1, got {data.get('version')!r}")
    tasks = _list(data, "tasks", source)
    from gymforge.registry import get_spec

    for task in tasks:
        get_spec(task)
    trainer = data.get("trainer", "sb3")
    if trainer not in TRAINERS:
        raise ValueError(f"{source}: trainer must be one of {list(TRAINERS)}, got {trainer!r}")
    algos = _list(data, "algos", source)
    if trainer == "torch":
        from gymforge.baselines.ondevice.config import ALGORITHMS as TORCH_ALGORITHMS
        from gymforge.baselines.ondevice.config import check as check_torch

        for algo in algos:
            if algo not in TORCH_ALGORITHMS:
                raise ValueError(
                    f"{source}: trainer torch trains {list(TORCH_ALGORITHMS)}, not {algo!r}"
                )
        check = check_torch
    else:
        for algo in algos:
            get_algorithm(algo)
        check = check_file
    seeds = _list(data, "seeds", source)
    for seed in seeds:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"{source}: seeds must be ints >= 0, got {seed!r}")
    steps = data.get("steps")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"{source}: steps must be an int >= 1, got {steps!r}")
    grid = data.get("grid") or {}
    if not isinstance(grid, dict):
        raise ValueError(f"{source}: grid must be a mapping of argument -> list of values")
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise ValueError(f"{source}: grid.{key} must be a non-empty list, got {values!r}")
    check_job_count(source, tasks, algos, seeds, grid)
    config = data.get("config") or {}
    if not isinstance(config, dict):
        raise ValueError(f"{source}: config must be a mapping, got {config!r}")
    # every job's config must validate: check each algorithm with the grid's keys once
    for algo in algos:
        trial = {"version": 1, **config}
        point = {key: values[0] for key, values in grid.items()}
        trial["algos"] = {**(config.get("algos") or {})}
        trial["algos"][algo] = {**(trial["algos"].get(algo) or {}), **point}
        check(trial, f"{source} (config + grid for {algo})")
    vectorized = data.get("vectorized", False)
    if not isinstance(vectorized, bool):
        raise ValueError(f"{source}: vectorized must be true or false, got {vectorized!r}")
    episodes = data.get("eval_episodes", 5)
    if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes < 1:
        raise ValueError(f"{source}: eval_episodes must be an int >= 1, got {episodes!r}")
    offset = data.get("eval_offset", 0)
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise ValueError(f"{source}: eval_offset must be an int >= 0, got {offset!r}")
    return {
        "version": 1,
        "name": str(data.get("name", Path(path).stem)),
        "tasks": tasks,
        "algos": algos,
        "seeds": seeds,
        "steps": steps,
        "grid": grid,
        "config": config,
        "vectorized": vectorized,
        "trainer": trainer,
        "eval_episodes": episodes,
        "eval_offset": offset,
    }


def expand_jobs(sweep: dict[str, Any], out: str | Path) -> list[dict[str, Any]]:
    """One job per (task, algo, grid point, seed), in that nesting order."""
    keys = list(sweep["grid"])
    points = [
        dict(zip(keys, values, strict=True))
        for values in itertools.product(*sweep["grid"].values())
    ]
    jobs = []
    combos = itertools.product(sweep["tasks"], sweep["algos"], points, sweep["seeds"])
    for index, (task, algo, point, seed) in enumerate(combos):
        job_id = f"{index:04d}-{task}-{algo}-s{seed}"
        overrides = json.loads(json.dumps(sweep["config"]))
        algos = overrides.setdefault("algos", {})
        algos[algo] = {**(algos.get(algo) or {}), **point}
        jobs.append(
            {
                "job": job_id,
                "task": task,
                "algo": algo,
                "seed": seed,
                "hyperparameters": point,
                "steps": sweep["steps"],
                "overrides": overrides,
                "vectorized": sweep["vectorized"],
                "trainer": sweep.get("trainer", "sb3"),
                "eval_episodes": sweep["eval_episodes"],
                "eval_offset": sweep.get("eval_offset", 0),
                "out": str(Path(out) / "jobs" / job_id),
            }
        )
    return jobs


def check_job(job: dict[str, Any]) -> None:
    """Build the job's training configuration; a bad setting raises naming the job."""
    try:
        if job.get("trainer", "sb3") == "torch":
            from gymforge.baselines.ondevice.config import algo_config
            from gymforge.baselines.ondevice.config import load_config as load_torch_config

            algo_config(load_torch_config(job["task"], None, job["overrides"]), job["algo"])
        else:
            from gymforge.baselines.sb3.config import load_config

            load_config(job["task"], None, job["overrides"], vectorized=job["vectorized"])
    except ValueError as error:
        raise ValueError(f"sweep job {job['job']}: {error}") from None


def job_settings(job: dict[str, Any]) -> dict[str, Any]:
    """What a job's result depends on: its entry less its id and folder, as JSON values."""
    return json.loads(json.dumps({k: v for k, v in job.items() if k not in ("job", "out")}))


#: what an older finished job's row records of its settings (it has no job file)
_ROW_SETTINGS = ("task", "algo", "seed", "hyperparameters")


def check_finished_job(job: dict[str, Any]) -> None:
    """Refuse a job whose folder holds a result of other settings (a sweep re-run into the same
    ``--out`` after its file changed), which would otherwise be reported as this job's result
    without training; a result of the same settings is reused, a folder without one rerun."""
    out = Path(job["out"])
    if not (out / RESULT_FILE).is_file():
        return
    settings = job_settings(job)
    if (out / JOB_FILE).is_file():
        stored = json.loads((out / JOB_FILE).read_text())
    else:
        row = json.loads((out / RESULT_FILE).read_text())
        stored = {key: row.get(key) for key in _ROW_SETTINGS}
        settings = {key: settings[key] for key in _ROW_SETTINGS}
    changed = sorted(k for k in settings.keys() | stored.keys() if settings.get(k) != stored.get(k))
    if changed:
        raise ValueError(
            f"sweep job {job['job']}: {out} holds the result of other settings (changed: "
            f"{', '.join(changed)}); use a new --out, or delete {out} to rerun it"
        )


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """Train and evaluate one job (in whatever process runs it); returns its result row."""
    import torch

    torch.set_num_threads(1)
    from gymforge.baselines.sb3.agent import load_agent
    from gymforge.baselines.sb3.run import train
    from gymforge.baselines.training.evaluation import run_episodes, summarize
    from gymforge.baselines.training.runs import write_json
    from gymforge.baselines.training.seeds import eval_seeds

    out = Path(job["out"])
    done = out / RESULT_FILE
    if done.is_file():
        check_finished_job(job)
        return json.loads(done.read_text())
    if out.exists():  # an interrupted job: start it afresh
        import shutil

        shutil.rmtree(out)
    start = time.perf_counter()
    if job.get("trainer", "sb3") == "torch":
        from gymforge.baselines.ondevice.agent import TorchPolicyAgent, read_policy
        from gymforge.baselines.ondevice.run import train as train_torch

        result = train_torch(
            job["task"],
            job["algo"],
            job["steps"],
            seed=job["seed"],
            out=out,
            overrides=job["overrides"],
            tensorboard=False,
            log=lambda message: None,
        )
        state = read_policy(out)["state_dict"]
        agent: Any = TorchPolicyAgent(out)
        env_kwargs = json.loads((out / "config.json").read_text())["env_kwargs"]
    else:
        result = train(
            job["task"],
            job["algo"],
            job["steps"],
            seed=job["seed"],
            out=out,
            vectorized=job["vectorized"],
            overrides=job["overrides"],
            tensorboard=False,
        )
        agent = load_agent(out)
        state = agent.model.policy.state_dict()
        env_kwargs = agent.config["env_kwargs"]
    train_s = time.perf_counter() - start
    digest = hashlib.sha256()
    for key, tensor in sorted(state.items()):
        digest.update(key.encode())
        digest.update(tensor.detach().cpu().numpy().tobytes())
    offset = job.get("eval_offset", 0)
    seeds = eval_seeds(job["eval_episodes"], offset)
    episodes = run_episodes(agent, job["task"], env_kwargs, seeds)
    row = {
        "job": job["job"],
        "task": job["task"],
        "algo": job["algo"],
        "seed": job["seed"],
        "hyperparameters": job["hyperparameters"],
        "steps": result.steps,
        **summarize(episodes),
        "returns": [e["return"] for e in episodes],
        "eval_seeds": f"2**62+{offset}..{offset + len(seeds) - 1}",
        "policy_sha256": digest.hexdigest(),
        "train_s": round(train_s, 3),
        "out": str(out),
    }
    write_json(out / JOB_FILE, job_settings(job))
    write_json(done, row)
    return row


def _run_local(
    jobs: list[dict[str, Any]], workers: int, on_done: Callable[[dict[str, Any]], None]
) -> list[dict[str, Any]]:
    if workers == 1:
        rows = []
        for job in jobs:
            rows.append(run_job(job))
            on_done(rows[-1])
        return rows
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = {pool.submit(run_job, job): i for i, job in enumerate(jobs)}
        rows: list[Any] = [None] * len(jobs)
        for future in as_completed(futures):
            rows[futures[future]] = future.result()
            on_done(rows[futures[future]])
    return rows


def _run_ray(
    jobs: list[dict[str, Any]], address: str | None, on_done: Callable[[dict[str, Any]], None]
) -> list[dict[str, Any]]:
    try:
        import ray
    except ImportError:
        raise ValueError("--backend ray needs Ray: pip install 'gymforge[distributed]'") from None
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    remote = ray.remote(num_cpus=1)(run_job)
    pending = {remote.remote(job): i for i, job in enumerate(jobs)}
    rows: list[Any] = [None] * len(jobs)
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        for ref in ready:
            index = pending.pop(ref)
            rows[index] = ray.get(ref)
            on_done(rows[index])
    return rows


def results_table(rows: list[dict[str, Any]], grid_keys: list[str]) -> str:
    """The rows as CSV text: job, task, algo, seed, one column per grid key, figures."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*LEADING_COLUMNS, *grid_keys, *TRAILING_COLUMNS])
    for row in rows:
        writer.writerow(
            [
                *(row[c] for c in LEADING_COLUMNS),
                *(row["hyperparameters"].get(k) for k in grid_keys),
                *(row[c] for c in TRAILING_COLUMNS),
            ]
        )
    return buffer.getvalue()


def run_sweep(
    path: str | Path,
    out: str | Path | None = None,
    backend: str = "local",
    address: str | None = None,
    workers: int = 1,
    progress: bool = False,
) -> dict[str, Any]:
    """Run every job of the sweep file at ``path``; returns ``{"sweep", "rows", "out"}``.

    Args:
        path: the sweep file.
        out: output folder (default ``sweeps/<name>``).
        backend: ``"local"`` (a process pool of ``workers``) or ``"ray"``.
        address: Ray cluster address (``ray.init(address=...)``); ``None`` starts or joins a
            local Ray instance (or uses the one already initialised in this process).
        workers: local processes (1: run in this process; at most 4 per CPU core, and no more
            than the jobs are used).
        progress: show a progress bar.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {list(BACKENDS)}, got {backend!r}")
    check_workers("--workers", workers)
    if address is not None and backend != "ray":
        raise ValueError("--address needs --backend ray")
    sweep = load_sweep(path)
    out = Path(out) if out is not None else Path("sweeps") / sweep["name"]
    jobs = expand_jobs(sweep, out)
    for job in jobs:  # every job's settings, before any folder or training
        check_job(job)
        check_finished_job(job)
    check_writable(out, "--out")
    out.mkdir(parents=True, exist_ok=True)
    from tqdm import tqdm

    bar = tqdm(total=len(jobs), desc=f"sweep {sweep['name']}", disable=not progress)

    def on_done(row: dict[str, Any]) -> None:
        bar.update(1)
        bar.set_postfix_str(f"{row['job']}: {row['mean_return']:.2f}")

    try:
        if backend == "local":
            rows = _run_local(jobs, min(workers, len(jobs)), on_done)
        else:
            rows = _run_ray(jobs, address, on_done)
    finally:
        bar.close()
    grid_keys = list(sweep["grid"])
    summary = {"sweep": sweep, "backend": backend, "rows": rows, "out": str(out)}
    _write_text(out / "results.csv", results_table(rows, grid_keys))
    _write_text(out / "results.json", json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return summary


def _write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
