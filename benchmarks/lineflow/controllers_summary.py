"""The summary of ``controllers.py``: per-controller means, rankings, the PartDistribution
bounds, the best controller found and how it compares with upstream's documented optima.

Pure functions of the episode records, so the report can be rebuilt from a results file.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import gymnasium as gym
import numpy as np

from benchmarks.lineflow.controllers_policies import Layout
from benchmarks.lineflow.controllers_setup import TOLERANCE, Controller

# --------------------------------------------------------------------------------------------
# Summaries


def summarise(controller: Controller, records: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean and std of return, parts and scrap of one controller's episodes."""
    ok = [r for r in records if r["error"] is None]
    returns = [r["return"] for r in ok]
    summary: dict[str, Any] = {
        "name": controller.name,
        "kind": controller.kind,
        "params": {k: (list(v) if isinstance(v, tuple) else v) for k, v in controller.params},
        "group": controller.group,
        "seeds": [r["seed"] for r in ok],
        "returns": returns,
        "parts": [r["parts"] for r in ok],
        "scrap": [r["scrap"] for r in ok],
        "mean_return": float(np.mean(returns)) if ok else None,
        "std_return": float(np.std(returns)) if ok else None,
        "mean_parts": float(np.mean([r["parts"] for r in ok])) if ok else None,
        "mean_scrap": float(np.mean([r["scrap"] for r in ok])) if ok else None,
        "std_parts": float(np.std([r["parts"] for r in ok])) if ok else None,
        "std_scrap": float(np.std([r["scrap"] for r in ok])) if ok else None,
        "truncated_episodes": sum(bool(r["truncated"]) for r in ok),
        "errors": sorted({f"seed {r['seed']}: {r['error']}" for r in records if r["error"]}),
    }
    if records and any(r["error"] for r in records):
        summary["traceback_tail"] = next(r["traceback_tail"] for r in records if r["error"])
    return summary


def group_records(
    records: Iterable[dict[str, Any]], phase: str
) -> dict[tuple[str, str], list[dict[str, Any]]]:
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in records:
        if r["phase"] == phase:
            grouped.setdefault((r["env_id"], r["controller"]), []).append(r)
    return grouped


def ranked(summaries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Best mean return first; errored controllers last."""
    return sorted(
        summaries,
        key=lambda s: (s["mean_return"] is None, -(s["mean_return"] or 0.0), s["name"]),
    )


def pd_bounds(env: gym.Env) -> dict[str, Any]:
    """Throughput bounds of a PartDistribution line over the horizon.

    ``ideal``: ``Σ_i H/(1.1·T_i)``, each parallel process busy all the time at its mean job time
    ``T_i·(1 + std)`` (upstream's "documented optimum", 738 for k = 5). ``with_handling``: each
    job also takes the input buffer's get time and the output buffer's mean put time
    ``put·(1 + put_std)``, as every carrier does in the engine.
    """
    layout = Layout(env)
    (out_slot,) = layout.slots_of("index_out")
    horizon = float(env.unwrapped.horizon)
    rows = []
    for name in layout.slots[out_slot].labels:
        buffer_in = layout.buffer(name)
        station = layout.line.station(buffer_in.downstream)
        (buffer_out,) = layout.line.outputs_of(station.name)
        job = (1 + station.processing_std) * station.processing_time
        handling = buffer_in.get_time + (1 + buffer_out.put_std) * buffer_out.put_time
        rows.append((station.name, station.processing_time, job, handling))
    return {
        "horizon": horizon,
        "processes": [{"station": s, "T": t, "mean_job": j, "handling": h} for s, t, j, h in rows],
        "ideal": sum(horizon / j for _, _, j, _ in rows),
        "with_handling": sum(horizon / (j + h) for _, _, j, h in rows),
    }


# --------------------------------------------------------------------------------------------
# Best-found and the "documented optima" section


def best_row(entry: dict[str, Any]) -> dict[str, Any] | None:
    """The best controller on all seeds among agents, baselines and confirmed search winners."""
    rows = list(entry["controllers"])
    if entry["search"]:
        rows += entry["search"]["confirmed_on_all_seeds"]
    rows = [r for r in rows if r["mean_return"] is not None]
    return max(rows, key=lambda r: r["mean_return"]) if rows else None


def best_of_kind(entry: dict[str, Any], kind: str) -> dict[str, Any] | None:
    """The best search winner of ``kind`` re-evaluated on all seeds, if any."""
    rows = entry["search"]["confirmed_on_all_seeds"] if entry["search"] else []
    rows = [r for r in rows if r["kind"] == kind and r["mean_return"] is not None]
    return max(rows, key=lambda r: r["mean_return"]) if rows else None


def row_named(entry: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((r for r in entry["controllers"] if r["name"] == name), None)


def optima_findings(ids: dict[str, Any]) -> list[dict[str, Any]]:
    """One finding per (scenario, k) with a documented optimum: documented vs. best found."""
    findings = []
    seen: set[tuple[str, Any]] = set()
    for env_id, entry in ids.items():
        key = (entry["scenario"], entry["k"])
        documented = entry["documented_optimum"]
        if documented is None or key in seen:
            continue
        seen.add(key)
        best = best_row(entry)
        if best is None:
            continue
        figure, source = documented
        gap = best["mean_return"] / figure - 1.0
        verdict = (
            "reproduces"
            if abs(gap) <= TOLERANCE
            else "exceeded"
            if gap > TOLERANCE
            else "does not reproduce"
        )
        findings.append(
            {
                "env_id": env_id,
                "scenario": entry["scenario"],
                "k": entry["k"],
                "documented": figure,
                "documented_source": source,
                "best_controller": best["name"],
                "best_mean_return": best["mean_return"],
                "best_std_return": best["std_return"],
                "best_mean_parts": best["mean_parts"],
                "best_mean_scrap": best["mean_scrap"],
                "best_seeds": best["seeds"],
                "relative_gap": gap,
                "verdict": verdict,
                "bounds": entry["bounds"],
            }
        )
    return findings
