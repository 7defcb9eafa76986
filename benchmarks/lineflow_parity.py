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
    python -m benchmarks.lineflow_parity [--seeds 32] [--horizon 2000] [--ids ID ...]
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
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import math
import multiprocessing
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import gymforge  # noqa: F401  (registers the LineFlow ids with Gymnasium)
from benchmarks import common
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


# --------------------------------------------------------------------------------------------
# Statistics


def t_quantile(df: int) -> tuple[float, str]:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom and where it came from."""
    try:
        from scipy import stats
    except ImportError:
        return 1.959964, "normal 1.96 (SciPy not installed)"
    return float(stats.t.ppf(0.975, df)), "Student's t (SciPy)"


def describe(values: Sequence[float]) -> dict[str, Any]:
    """Mean, sample std, standard error and 95% CI half-width of ``values``."""
    x = np.asarray(values, dtype=np.float64)
    n = int(x.size)
    if n == 0:
        return {"n": 0, "mean": None, "std": None, "se": None, "ci95": None}
    std = float(x.std(ddof=1)) if n > 1 else 0.0
    se = std / math.sqrt(n)
    q, _ = t_quantile(max(n - 1, 1))
    return {
        "n": n,
        "mean": float(x.mean()),
        "std": std,
        "se": se,
        "ci95": q * se,
        "min": float(x.min()),
        "max": float(x.max()),
    }


def welch_p(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Two-sided Welch t-test p-value (information only), or None without SciPy."""
    try:
        from scipy import stats
    except ImportError:
        return None
    if len(a) < 2 or len(b) < 2 or (np.std(a) == 0 and np.std(b) == 0):
        return None if np.mean(a) != np.mean(b) else 1.0
    return float(stats.ttest_ind(a, b, equal_var=False).pvalue)


def compare(metric: str, simpy: Sequence[float], torch_: Sequence[float]) -> dict[str, Any]:
    """SimPy and torch statistics of one metric and the parity verdict."""
    s, t = describe(simpy), describe(torch_)
    out: dict[str, Any] = {"simpy": s, "torch": t, "welch_p": welch_p(simpy, torch_)}
    if s["mean"] is None or t["mean"] is None:
        out.update({"delta": None, "delta_pct": None, "pass": False, "rule": "missing data"})
        return out
    delta = t["mean"] - s["mean"]
    delta_pct = 100.0 * delta / s["mean"] if s["mean"] else None
    rules: list[tuple[str, float]] = [
        ("within SimPy 95% CI", s["ci95"]),
        ("within 2%", RELATIVE_TOLERANCE * abs(s["mean"])),
    ]
    if metric == "scrap" and s["mean"] < 1:
        rules.append(("within abs. 1 (SimPy mean scrap < 1)", SCRAP_ABSOLUTE_TOLERANCE))
    passed = [name for name, tolerance in rules if abs(delta) <= tolerance + 1e-12]
    out.update(
        {
            "delta": delta,
            "delta_pct": delta_pct,
            "tolerance": max(tol for _, tol in rules),
            "pass": bool(passed),
            "rule": passed[0] if passed else "outside every tolerance",
        }
    )
    return out


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


# --------------------------------------------------------------------------------------------
# Output


def mean_ci(stats: dict[str, Any]) -> str:
    if stats["mean"] is None:
        return "–"
    return f"{stats['mean']:.1f} ± {stats['ci95']:.1f}"


def delta_text(metric: dict[str, Any]) -> str:
    if metric["delta"] is None:
        return "–"
    if metric["delta_pct"] is None:
        return f"{metric['delta']:+.2f} (abs.)"
    return f"{metric['delta_pct']:+.1f}%"


def p_text(metric: dict[str, Any]) -> str:
    return "–" if metric["welch_p"] is None else f"{metric['welch_p']:.2g}"


def verdict_text(metric: dict[str, Any]) -> str:
    if metric["pass"]:
        return "PASS" + (" (abs. 1)" if metric["rule"].startswith("within abs.") else "")
    return "**FAIL**"


def render_markdown(report: dict[str, Any]) -> str:
    settings, machine, summary = report["settings"], report["machine"], report["summary"]
    n = settings["seeds"]
    lines = [
        "# LineFlow engine parity: torch engine vs. SimPy engine",
        "",
        f"Run {report['date']} ({report['wall_s']:.0f} s) on {machine['platform']}, "
        f"{machine['cpus_usable']} CPUs, Python {machine['python']}, torch "
        f"{machine['versions'].get('torch')}; `{report['command']}`.",
        "",
        f"**{summary['pass']} PASS / {summary['total']} total** (id, policy) rows"
        + (f"; {summary['errors']} job(s) raised, see the JSON" if summary["errors"] else "")
        + ".",
        "",
        f"Criterion: for every batched LineFlow id of the registry and for `random` plus each "
        f"reference agent, the torch engine's mean parts per episode (and mean scrap) lies within "
        f"the 95% CI of the SimPy engine's mean, or within 2% of it; for scrap, when SimPy's mean "
        f'scrap is below 1, within an absolute 1 (marked "abs. 1"). {n} seeds per engine '
        f"(SimPy {settings['simpy_seeds'][0]}–{settings['simpy_seeds'][1]}, one "
        f"`gym.make(id, horizon=H)` episode each; torch {settings['torch_seeds'][0]}–"
        f"{settings['torch_seeds'][1]} per policy, all policies of an id in one "
        f'`gym.make_vec(..., vectorization_mode="vector_entry_point")` batch), '
        f"**horizon {settings['horizon']:g}** (step size 1). CI: mean ± "
        f"t(0.975, n−1)·s/√n ({settings['ci_quantile']}). `random` draws uniform actions from "
        f"`numpy.random.default_rng(seed)` per episode/instance, separately in each engine. "
        f"Δ% = (torch − SimPy) / SimPy.",
        "",
        "Reading the verdicts: the torch mean has its own sampling noise, so even with exact "
        "parity |Δ| exceeds SimPy's CI half-width with probability about 15% (the difference of "
        "two independent means has √2 × SimPy's standard error) wherever the 2% tolerance does "
        "not cover the CI. A lone FAIL of a high-variance row can therefore be chance; the Welch "
        "p-value (information only, not part of the criterion) tells a systematic gap (p ≪ 0.01) "
        "from noise.",
        "",
    ]
    if not settings["meets_seed_requirement"]:
        lines += [
            f"_Smoke run: {n} seeds is below the criterion's {MIN_CRITERION_SEEDS}._",
            "",
        ]
    for env_id, entry in report["ids"].items():
        lines += [
            f"## {env_id}",
            "",
            "| policy | SimPy parts | torch parts | Δ% | parts | SimPy scrap | torch scrap | Δ% "
            "| scrap | verdict | Welch p parts / scrap |",
            "|---|---:|---:|---:|---|---:|---:|---:|---|---|---:|",
        ]
        for row in entry["rows"]:
            p, s = row["metrics"]["parts"], row["metrics"]["scrap"]
            lines.append(
                f"| {row['policy']} | {mean_ci(p['simpy'])} | {mean_ci(p['torch'])} | "
                f"{delta_text(p)} | {verdict_text(p)} | {mean_ci(s['simpy'])} | "
                f"{mean_ci(s['torch'])} | {delta_text(s)} | {verdict_text(s)} | "
                f"{'PASS' if row['pass'] else '**FAIL**'} | {p_text(p)} / {p_text(s)} |"
            )
        lines.append("")
    if report["errors"]:
        lines += ["## Errors", ""]
        lines += [
            f"- {e['engine']} {e['env_id']} {','.join(e['policies'])}: `{e['error']}`"
            for e in report["errors"]
        ]
        lines.append("")
    lines += ["## Jobs", "", "| engine | id | policies | batch | env steps/s | wall s |"]
    lines.append("|---|---|---|---:|---:|---:|")
    for job in report["jobs"]:
        rate = job["env_steps"] / job["wall_s"] if job["wall_s"] else 0.0
        lines.append(
            f"| {job['engine']} | {job['env_id']} | {', '.join(job['policies'])} | "
            f"{job.get('num_envs') or 1} | {rate:,.0f} | {job['wall_s']:.1f} |"
        )
    lines.append("")
    return "\n".join(lines)


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
