"""LineFlow engine parity: the batched torch engine vs. the exact SimPy engine, in distribution.

What it checks
    LineFlow runs one line description (``LineSpec``) on two engines: the exact SimPy engine
    behind ``gym.make(id)`` and the batched torch engine behind
    ``gym.make_vec(id, num_envs=B, vectorization_mode="vector_entry_point")``. They draw from
    different random streams, so they can only agree in distribution. The criterion:

        For every benchmark scenario and for the random policy plus each reference controller,
        the mean parts produced (and mean scrap) per episode of the torch engine lies within the
        95% confidence interval of the SimPy engine's mean, or within 2% of it, over at least
        32 seeds each.

    Scenarios are every LineFlow id of the registry with ``capabilities.batched`` (no
    hand-written list); policies are ``random`` plus every agent the registry names for the id
    (``spec.agents``, built as ``Class(env)``).

How it runs
    * SimPy engine: one ``gym.make(id, horizon=H)`` episode per seed ``1000 … 1000+N−1`` and
      policy; parts and scrap are the last step's ``info["n_parts"]`` and
      ``info["n_scrap_parts"]``.
    * Torch engine: one batched run per id holding every policy side by side, ``N`` instances
      per policy, reset with the seed list ``0 … N−1`` for each policy block; each policy acts
      on its own rows (reference agents get numpy observations and ``{"n_parts": …}`` of their
      rows). Parts and scrap are read from the step infos at the episode's last step
      (``infos["final_info"]`` under the ``infos["_final_info"]`` mask; SAME_STEP autoreset).
    * ``random``: each engine draws its own uniform actions over the ``MultiDiscrete`` action
      space from ``numpy.random.default_rng(seed)`` of the episode (SimPy) or instance (torch).
    * Episodes are jobs spread over ``--processes`` worker processes (default 2): one job per
      (id, policy) for SimPy and one per id for torch, the torch jobs first (they are the
      longest); every worker runs ``torch.set_num_threads(1)``.

Verdict
    Per (id, policy) and metric: SimPy mean ± 95% CI half-width ``t(0.975, N−1)·s/√N``
    (Student's t from SciPy when it imports, else 1.96), torch mean ± the same, and
    ``Δ = torch − SimPy``. PASS when ``|Δ| ≤ CI half-width`` of SimPy's mean or
    ``|Δ| ≤ 2%`` of SimPy's mean; for scrap, when SimPy's mean scrap is below 1 an absolute
    tolerance of 1 applies as well (the rule that passed is recorded). A row passes when both
    parts and scrap pass. Welch's two-sample p-value is reported for information only.

How to run (from the repository root)
    python -m benchmarks.lineflow.parity [--seeds 32] [--horizon 2000] [--ids ID ...]
                                         [--processes 2] [--quick] [--out benchmarks/results]

    The default horizon is 2000 steps, not the envs' 4000: the torch engine runs at only
    ~10–40 batched steps/s on the larger lines (ComponentAssembly, PartDistribution,
    WorkerAssignment, ComplexLine), so 32 seeds at horizon 4000 took 20 minutes on the 2-core
    development machine under other load, while horizon 2000 took 7 minutes (411 s).
    ``--horizon 4000`` runs the envs' own episode length. ``--quick`` is a smoke run (8 seeds,
    horizon 1000, 2–5 minutes, most of it the torch engine's per-step overhead); it still writes
    its files, so point ``--out`` elsewhere to keep the checked-in results.

Where results go
    ``<out>/lineflow_parity.json``: every episode's parts, scrap and steps for both engines,
    per-row statistics and verdicts, job timings, machine, package versions, command and date;
    ``<out>/lineflow_parity.md``: a table per id and the summary line. Both written atomically.

Code
    This module plans the jobs, runs them and holds the command line. The jobs and their worker
    pool live in ``parity_jobs.py``, the statistics in ``parity_stats.py`` and the
    Markdown in ``parity_report.py``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym

import gymforge  # noqa: F401  (registers the LineFlow ids with Gymnasium)
from benchmarks import common
from benchmarks.lineflow.parity_jobs import (
    DEFAULT_HORIZON,
    METRICS,
    MIN_CRITERION_SEEDS,
    RELATIVE_TOLERANCE,
    SCRAP_ABSOLUTE_TOLERANCE,
    SIMPY_SEED0,
    TORCH_SEED0,
    VERSIONED_PACKAGES,
    Job,
    SimpyJob,
    TorchJob,
    parity_specs,
    policies_of,
    run_jobs,
)
from benchmarks.lineflow.parity_report import render_markdown
from benchmarks.lineflow.parity_stats import compare, t_quantile
from gymforge.registry import EnvSpec

# --------------------------------------------------------------------------------------------
# Plan and run


@dataclass(frozen=True)
class Settings:
    seeds: int
    horizon: float
    ids: tuple[str, ...]
    processes: int
    quick: bool
    out: Path


def plan(settings: Settings) -> tuple[list[EnvSpec], list[Job]]:
    specs = parity_specs(settings.ids)
    torch_seeds = tuple(range(TORCH_SEED0, TORCH_SEED0 + settings.seeds))
    simpy_seeds = tuple(range(SIMPY_SEED0, SIMPY_SEED0 + settings.seeds))
    torch_jobs: list[Job] = []
    simpy_jobs: list[Job] = []
    for spec in specs:
        policies = policies_of(spec)
        torch_jobs.append(TorchJob(spec.id, policies, torch_seeds, settings.horizon))
        simpy_jobs.extend(SimpyJob(spec.id, p, simpy_seeds, settings.horizon) for p in policies)

    def torch_cost(job: Job) -> float:  # rough: batch size × line size
        env = gym.make(job.env_id)
        size = len(env.unwrapped.line.stations) + len(env.unwrapped.line.buffers)
        env.close()
        assert isinstance(job, TorchJob)
        return size * (1.0 + 0.5 * (len(job.policies) - 1))

    torch_jobs.sort(key=torch_cost, reverse=True)  # longest first: the pool balances better
    return specs, torch_jobs + simpy_jobs


def run(settings: Settings, log: Callable[[str], None]) -> dict[str, Any]:
    started = dt.datetime.now(dt.UTC)
    t0 = time.perf_counter()
    specs, jobs = plan(settings)
    log(
        f"{len(specs)} ids, {sum(len(policies_of(s)) for s in specs)} (id, policy) rows, "
        f"{settings.seeds} seeds, horizon {settings.horizon:g}, {len(jobs)} jobs on "
        f"{settings.processes} process(es)"
    )
    records = run_jobs(jobs, settings.processes, log)
    episodes: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    errors = []
    for record in records:
        if record["error"]:
            errors.append(
                {k: record[k] for k in ("engine", "env_id", "policies", "error")}
                | {"traceback_tail": record.get("traceback_tail")}
            )
        for episode in record["episodes"]:
            key = (record["env_id"], episode["policy"], record["engine"])
            episodes.setdefault(key, []).append(episode)
    ids: dict[str, Any] = {}
    n_pass = n_total = 0
    for spec in specs:
        rows = []
        for policy in policies_of(spec):
            sim = episodes.get((spec.id, policy, "simpy"), [])
            tor = episodes.get((spec.id, policy, "torch"), [])
            metrics = {m: compare(m, [e[m] for e in sim], [e[m] for e in tor]) for m in METRICS}
            verdict = all(metrics[m]["pass"] for m in METRICS)
            n_pass += verdict
            n_total += 1
            rows.append(
                {
                    "policy": policy,
                    "agent": spec.agents[policy],
                    "metrics": metrics,
                    "pass": verdict,
                    "simpy_episodes": sim,
                    "torch_episodes": tor,
                    "simpy_deadlocks": sum(e.get("truncation_reason") == "deadlock" for e in sim),
                }
            )
        ids[spec.id] = {"kwargs": dict(spec.kwargs), "rows": rows}
    _, quantile_source = t_quantile(max(settings.seeds - 1, 1))
    return {
        "benchmark": "lineflow_parity",
        "date": started.isoformat(timespec="seconds").replace("+00:00", "Z"),
        "wall_s": time.perf_counter() - t0,
        "command": common.command_line(),
        "settings": {
            **{k: v for k, v in asdict(settings).items() if k != "out"},
            "simpy_seeds": [SIMPY_SEED0, SIMPY_SEED0 + settings.seeds - 1],
            "torch_seeds": [TORCH_SEED0, TORCH_SEED0 + settings.seeds - 1],
            "step_size": 1.0,
            "relative_tolerance": RELATIVE_TOLERANCE,
            "scrap_absolute_tolerance": SCRAP_ABSOLUTE_TOLERANCE,
            "ci_quantile": quantile_source,
            "meets_seed_requirement": settings.seeds >= MIN_CRITERION_SEEDS,
        },
        "machine": common.machine_info(VERSIONED_PACKAGES),
        "summary": {"pass": n_pass, "total": n_total, "errors": len(errors)},
        "errors": errors,
        "jobs": [
            {
                k: r.get(k)
                for k in (
                    "engine",
                    "env_id",
                    "policies",
                    "num_envs",
                    "batch_steps",
                    "env_steps",
                    "wall_s",
                    "error",
                )
            }
            for r in records
        ],
        "ids": ids,
    }


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=None, help="episodes per engine (32)")
    parser.add_argument("--horizon", type=float, default=None, help="episode length (2000)")
    parser.add_argument("--ids", nargs="+", default=(), help="a subset of the batched ids")
    parser.add_argument("--processes", type=int, default=2, help="worker processes (2)")
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: 8 seeds, horizon 1000 unless given"
    )
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    seeds = args.seeds if args.seeds is not None else (8 if args.quick else 32)
    horizon = (
        args.horizon if args.horizon is not None else (1000.0 if args.quick else DEFAULT_HORIZON)
    )
    if seeds < 2:
        raise SystemExit("--seeds must be at least 2 (a CI needs two episodes)")
    settings = Settings(
        seeds=seeds,
        horizon=float(horizon),
        ids=tuple(args.ids),
        processes=max(1, args.processes),
        quick=args.quick,
        out=args.out,
    )

    def log(message: str) -> None:
        print(message, flush=True)

    report = run(settings, log)
    common.write_json(settings.out / "lineflow_parity.json", report, indent=1)
    common.write_atomic(settings.out / "lineflow_parity.md", render_markdown(report))
    summary = report["summary"]
    log(
        f"{summary['pass']} PASS / {summary['total']} total, {summary['errors']} error(s), "
        f"{report['wall_s']:.0f} s; results in {settings.out}/lineflow_parity.{{json,md}}"
    )
    return 0 if summary["pass"] == summary["total"] and not summary["errors"] else 1


if __name__ == "__main__":
    sys.exit(main())
