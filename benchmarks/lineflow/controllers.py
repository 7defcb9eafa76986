"""LineFlow controllers: every registered reference agent and fixed-policy baselines vs. upstream.

What it measures
    Episode returns (reward ``parts − scrap_factor·scrap``), finished parts
    (``info["n_parts"]``) and scrapped components (``info["n_scrap_parts"]``) of 4000-step
    episodes (horizon 4000, step size 1) for

    * every LineFlow id of the registry (``gymforge.registry.all_specs()``, family ``lineflow``;
      no hand-written id list) and every agent the registry names for it, ``random`` included,
      on seeds ``0 … N−1`` (``--seeds``, default 5);
    * fixed-policy baselines and small searches on the paper scenarios, chosen by the id's
      ``scenario`` keyword and built from the env's own feature names
      (``env.unwrapped.features``) and action layout (``env.unwrapped.action_slots``):

      - WaitingTime / WaitingTimeJump: fixed waiting times 0 (WT only) and 15–22;
      - PartDistribution: routing variants (least expected delay ``(fill·capacity + c)·T_i``,
        fastest non-full, round-robin per step or per carrier, random; collecting switch
        most-filled, round-robin or random), plus the idealised throughput bound
        ``Σ_i horizon/(1.1·T_i)`` (upstream's "documented optimum" 738 for k = 5) and the same
        bound with each carrier's buffer get and put times added;
      - WorkerAssignment: all compositions of the workers over the stations (55 for k = 3; worker
        → station indices filling stations in order) on the search seeds (``--search-seeds``,
        default 3 = seeds 0–2 as upstream), plus the round-robin default (worker w at w mod k);
      - ComplexLine: the reference heuristic over a grid of ``waiting_time`` ×
        ``ramp_up_waiting_time``, with alternative worker partitions, plus an
        emptiest-buffer routing with a fixed source waiting time.

      The best ``--top`` (default 5) of each search are re-evaluated on all ``--seeds`` seeds.

    Each figure is set beside upstream's controller on upstream's simulator (lineflow-rl 0.5.0,
    seeds 0–2, measured by ``upstream_anchors.py``; ``--render-only`` refreshes that
    column from its results), and a section lists where upstream's documented optima do not
    reproduce, with the best controller found here.

How it runs
    Episodes are independent jobs spread over ``--processes`` worker processes (default 2); each
    worker keeps one ``gym.make(id)`` env per id and resets it with the episode's seed, so the
    figures do not depend on the number of processes. An agent or env that raises is recorded
    with its error and the run goes on. torch is not imported.

How to run (from the repository root)
    python -m benchmarks.lineflow.controllers [--seeds 5] [--search-seeds 3] [--top 5]
                                              [--processes 2] [--quick] [--out benchmarks/results]

    ``--quick`` is a smoke run (1 seed, trimmed grids, about 20 s); it still writes its files, so
    point ``--out`` elsewhere to keep the checked-in results.

Where results go
    ``<out>/lineflow_controllers.json``: every episode, per-controller summaries, searches,
    bounds, machine, package versions, command and date; ``<out>/lineflow_controllers.md``: one
    table per id and the "documented optima" section. Both are written atomically.
    Standard deviations are population standard deviations over seeds (``numpy.std``).

Code
    This module plans the episodes, runs them and holds the command line. The rest lives in
    ``controllers_setup.py`` (upstream figures, records), ``controllers_policies.py``
    (the fixed policies, which each scenario gets), ``controllers_episodes.py`` (the worker
    processes), ``controllers_summary.py`` (means, rankings, documented optima) and
    ``controllers_report.py`` (the Markdown).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

import gymforge  # noqa: F401  (registers the LineFlow ids with Gymnasium)
from benchmarks import common
from benchmarks.lineflow.controllers_episodes import run_jobs
from benchmarks.lineflow.controllers_policies import (
    baseline_controllers,
    scenario_of,
    search_controllers,
    size_of,
)
from benchmarks.lineflow.controllers_report import fmt, render_markdown
from benchmarks.lineflow.controllers_setup import (
    DOCUMENTED_OPTIMA,
    FAMILY,
    REFERENCE_SOURCE,
    RESULT_NAME,
    VERSIONED_PACKAGES,
    Controller,
    Job,
    Settings,
)
from benchmarks.lineflow.controllers_summary import (
    group_records,
    optima_findings,
    pd_bounds,
    ranked,
    summarise,
)
from benchmarks.lineflow.upstream_reference import load_anchors, upstream_reference
from gymforge.registry import EnvSpec, all_specs

# --------------------------------------------------------------------------------------------
# Plan and run


@dataclass
class IdPlan:
    """What is evaluated on one id."""

    spec: EnvSpec
    scenario: str
    scenario_kwargs: dict[str, Any]
    k: int | None
    agents: list[Controller] = field(default_factory=list)
    baselines: list[Controller] = field(default_factory=list)
    searches: list[Controller] = field(default_factory=list)
    bounds: dict[str, Any] | None = None
    setup_error: str | None = None


def plan(settings: Settings, log: Callable[[str], None]) -> list[IdPlan]:
    """Every LineFlow id of the registry with its agents, baselines and searches."""
    plans = []
    for spec in all_specs():
        if spec.family != FAMILY:
            continue
        scenario, scenario_kwargs = scenario_of(spec)
        item = IdPlan(spec, scenario, scenario_kwargs, None)
        item.agents = [Controller(name, "registry") for name in spec.agents]
        try:
            env = gym.make(spec.id)
            item.k = size_of(scenario, env)
            item.baselines = baseline_controllers(scenario, env, settings.quick)
            item.searches = search_controllers(scenario, env, settings.quick)
            if scenario == "part_distribution":
                item.bounds = pd_bounds(env)
            env.close()
        except Exception as error:  # the agents still run (and record the same error)
            item.setup_error = f"{type(error).__name__}: {error}"
            log(f"  {spec.id}: setup failed ({item.setup_error}); baselines skipped")
        plans.append(item)
    return plans


def run(settings: Settings, log: Callable[[str], None]) -> dict[str, Any]:
    """Evaluate everything; the report's ``ids`` hold per-id summaries, searches and bounds."""
    plans = plan(settings, log)
    anchors = load_anchors()
    jobs = [
        Job(p.spec.id, c, s, "main")
        for p in plans
        for c in (*p.agents, *p.baselines)
        for s in settings.seed_list
    ]
    jobs += [
        Job(p.spec.id, c, s, "main")
        for p in plans
        for c in p.searches
        for s in settings.search_seed_list
    ]
    log(
        f"{len(plans)} LineFlow ids, {len(jobs)} episodes in the first pass "
        f"({settings.processes} processes)."
    )
    t0 = time.perf_counter()
    records = run_jobs(jobs, settings.processes, log, "first pass")
    main_s = time.perf_counter() - t0
    grouped = group_records(records, "main")

    confirm_jobs: list[Job] = []
    search_summaries: dict[str, list[dict[str, Any]]] = {}
    for p in plans:
        summaries = [summarise(c, grouped[(p.spec.id, c.name)]) for c in p.searches]
        search_summaries[p.spec.id] = ranked(summaries)
        best_names = [s["name"] for s in search_summaries[p.spec.id][: settings.top]]
        by_name = {c.name: c for c in p.searches}
        for name in best_names:
            confirm_jobs += [
                Job(p.spec.id, by_name[name], s, "confirm") for s in settings.seed_list
            ]
    t1 = time.perf_counter()
    if confirm_jobs:
        log(f"Re-evaluating the best {settings.top} of each search on all seeds.")
        records += run_jobs(confirm_jobs, settings.processes, log, "confirm")
    confirm_s = time.perf_counter() - t1
    confirmed = group_records(records, "confirm")

    ids: dict[str, Any] = {}
    for p in plans:
        by_name = {c.name: c for c in p.searches}
        rows = [summarise(c, grouped[(p.spec.id, c.name)]) for c in (*p.agents, *p.baselines)]
        rank_of = {s["name"]: i for i, s in enumerate(search_summaries[p.spec.id], 1)}
        confirmed_rows = [
            {**summarise(by_name[name], recs), "search_rank": rank_of[name]}
            for (env_id, name), recs in confirmed.items()
            if env_id == p.spec.id
        ]
        for row in (*rows, *confirmed_rows):
            row["reference"] = upstream_reference(anchors, p.scenario, p.k, row["name"])
        ids[p.spec.id] = {
            "scenario": p.scenario,
            "scenario_kwargs": p.scenario_kwargs,
            "k": p.k,
            "setup_error": p.setup_error,
            "controllers": rows,
            "search": {
                "seeds": settings.search_seed_list,
                "count": len(p.searches),
                "ranking": search_summaries[p.spec.id],
                "confirmed_on_all_seeds": sorted(confirmed_rows, key=lambda r: r["search_rank"]),
            }
            if p.searches
            else None,
            "bounds": p.bounds,
            "documented_optimum": DOCUMENTED_OPTIMA.get((p.scenario, p.k)),
        }
    return {
        "ids": ids,
        "episodes": records,
        "timing_s": {"first_pass": main_s, "confirm": confirm_s},
        "n_episodes": len(records),
        "n_errors": sum(r["error"] is not None for r in records),
    }


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="LineFlow reference agents and fixed-policy baselines vs. upstream figures."
    )
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0..N-1 per controller (5)")
    parser.add_argument(
        "--search-seeds", type=int, default=3, help="seeds 0..N-1 for the searches (3)"
    )
    parser.add_argument(
        "--top", type=int, default=5, help="search winners re-evaluated on all seeds (5)"
    )
    parser.add_argument("--processes", type=int, default=2, help="worker processes (2)")
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: 1 seed, trimmed grids, top 2"
    )
    parser.add_argument(
        "--render-only",
        action="store_true",
        help="run nothing: refresh the upstream column of the stored results from the anchors",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("benchmarks/results"),
        help="folder for lineflow_controllers.json and .md (benchmarks/results)",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds, args.search_seeds, args.top = 1, 1, 2
    for name in ("seeds", "search_seeds", "top", "processes"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    return args


def refresh_references(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` with every row's upstream figure taken again from the measured anchors."""
    anchors = load_anchors()
    for entry in report["ids"].values():
        rows = [*entry["controllers"]]
        if entry["search"]:
            rows += entry["search"]["confirmed_on_all_seeds"]
        for row in rows:
            row["reference"] = upstream_reference(
                anchors, entry["scenario"], entry["k"], row["name"]
            )
    return {**report, "reference_source": REFERENCE_SOURCE}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.render_only:
        json_path = args.out / f"{RESULT_NAME}.json"
        report = refresh_references(json.loads(json_path.read_text()))
        common.write_json(json_path, report, indent=1)
        common.write_atomic(args.out / f"{RESULT_NAME}.md", render_markdown(report))
        print(f"Refreshed the upstream figures of {json_path} and its Markdown.")
        return 0
    settings = Settings(args.seeds, args.search_seeds, args.top, args.processes, args.quick)
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    start = time.perf_counter()
    results = run(settings, lambda line: print(line, flush=True))
    wall = time.perf_counter() - start
    report: dict[str, Any] = {
        "benchmark": RESULT_NAME,
        "started_utc": started,
        "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "wall_s": wall,
        "command": common.command_line(),
        "interpreter": common.interpreter_name(),
        "machine": common.machine_info(VERSIONED_PACKAGES),
        "settings": {
            "seeds": settings.seeds,
            "seed_list": settings.seed_list,
            "search_seeds": settings.search_seeds,
            "search_seed_list": settings.search_seed_list,
            "top": settings.top,
            "processes": settings.processes,
            "quick": settings.quick,
            "horizon": 4000,
            "step_size": 1,
        },
        "reference_source": REFERENCE_SOURCE,
        "findings": optima_findings(results["ids"]),
        **results,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    json_path = args.out / f"{RESULT_NAME}.json"
    md_path = args.out / f"{RESULT_NAME}.md"
    common.write_json(json_path, report, indent=1)
    common.write_atomic(md_path, render_markdown(report))

    print()
    for env_id, entry in report["ids"].items():
        cells = ", ".join(f"{r['name']} {fmt(r['mean_return'])}" for r in entry["controllers"])
        print(f"{env_id}: {cells}")
    for f in report["findings"]:
        print(
            f"{f['scenario']} k={f['k']}: documented {f['documented']:g}, best "
            f"{fmt(f['best_mean_return'])} ({f['best_controller']}) — {f['verdict']}"
        )
    print(
        f"{report['n_errors']} episode(s) errored. {wall:.0f} s. Wrote {json_path} and {md_path}."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
