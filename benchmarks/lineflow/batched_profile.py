"""The profile part of ``batched.py``: where the torch engine's step time goes
(``torch.profiler`` operator tables, the loop structure and a ``cProfile`` summary).

Separate from the throughput measurement because profiling slows the step it looks at.
"""

from __future__ import annotations

import cProfile
import pstats
import time
from pathlib import Path
from typing import Any

import torch

from benchmarks.lineflow.batched_setup import (
    CPROFILE_STEPS,
    PROFILE_BATCH,
    STRUCTURE_STEPS,
    TOP_OPS,
    TORCH,
    Config,
    Scenario,
    Settings,
    synchronize,
)

# --------------------------------------------------------------------------------------------
# Profile


def profile_engine(scenario: Scenario, configs: list[Config], settings: Settings) -> dict[str, Any]:
    """``torch.profiler`` and ``cProfile`` over warmed torch steps at PROFILE_BATCH, 1 thread."""
    candidates = [c for c in configs if c.system == TORCH and c.threads == 1]
    if not candidates:
        return {"skipped": "no torch configuration"}
    config = min(candidates, key=lambda c: abs(c.batch - PROFILE_BATCH))
    torch.set_num_threads(1)
    env, actions = config.env, config.actions
    steps = settings.profile_steps
    print(
        f"  {scenario.key:<4} profiling torch B={config.batch}: {steps} steps under "
        f"torch.profiler, {CPROFILE_STEPS} under cProfile",
        flush=True,
    )
    structure = loop_structure(config, settings)
    activities = [torch.profiler.ProfilerActivity.CPU]
    on_cuda = settings.device.startswith("cuda")
    if on_cuda:
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    before = config.counter.snapshot() if config.counter and config.counter.active else None
    with torch.profiler.profile(activities=activities) as prof:
        start = time.perf_counter()
        for i in range(steps):
            env.step(actions[i % len(actions)])
        synchronize(settings.device)
        wall = time.perf_counter() - start
    sweeps = None
    if before is not None and config.counter is not None:
        sweeps = (config.counter.snapshot()[1] - before[1]) / steps
    averages = prof.key_averages()
    total_self_us = sum(e.self_cpu_time_total for e in averages)
    total_calls = sum(e.count for e in averages)
    rows = sorted(averages, key=lambda e: e.self_cpu_time_total, reverse=True)
    top = [
        {
            "op": e.key,
            "calls": e.count,
            "calls_per_step": e.count / steps,
            "self_cpu_ms": e.self_cpu_time_total / 1000,
            "share_of_op_time": e.self_cpu_time_total / total_self_us if total_self_us else None,
            "us_per_call": e.self_cpu_time_total / e.count if e.count else None,
            **(
                {"self_device_ms": getattr(e, "self_device_time_total", 0) / 1000}
                if on_cuda
                else {}
            ),
        }
        for e in rows[:TOP_OPS]
    ]

    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.enable()
    for i in range(CPROFILE_STEPS):
        env.step(actions[i % len(actions)])
    synchronize(settings.device)
    profiler.disable()
    cprofile_wall = time.perf_counter() - start
    return {
        "scenario": scenario.key,
        "batch": config.batch,
        "threads": 1,
        "device": settings.device,
        "loop_structure": structure,
        "torch_profiler": {
            "steps": steps,
            "wall_s": wall,
            "ms_per_step": wall / steps * 1000,
            "sweeps_per_step": sweeps,
            "aten_calls_per_step": total_calls / steps,
            "op_self_time_s": total_self_us / 1e6,
            "op_share_of_wall": total_self_us / 1e6 / wall if wall else None,
            "mean_us_per_op": total_self_us / total_calls if total_calls else None,
            "top_ops": top,
        },
        "cprofile": {"steps": CPROFILE_STEPS, "wall_s": cprofile_wall, **cprofile_rows(profiler)},
    }


def loop_structure(config: Config, settings: Settings) -> dict[str, Any] | None:
    """Event rounds, sweeps and the mean share of active instances per sweep, over
    STRUCTURE_STEPS untimed steps of ``config`` (``None`` without the engine counters)."""
    counter = config.counter
    if counter is None or not counter.active:
        return None
    events, sweeps = counter.snapshot()
    counter.track_active, counter.active_share_sum, counter.active_share_count = True, 0.0, 0
    try:
        for i in range(STRUCTURE_STEPS):
            config.env.step(config.actions[i % len(config.actions)])
        synchronize(settings.device)
    finally:
        counter.track_active = False
    share = (
        counter.active_share_sum / counter.active_share_count
        if counter.active_share_count
        else None
    )
    rounds = (counter.events - events - STRUCTURE_STEPS) / STRUCTURE_STEPS
    return {
        "steps": STRUCTURE_STEPS,
        "event_rounds_per_step": rounds,
        "sweeps_per_step": (counter.sweeps - sweeps) / STRUCTURE_STEPS,
        "mean_active_share_per_sweep": share,
        "mean_events_per_instance_per_step": None if share is None else share * rounds,
    }


def cprofile_rows(profiler: cProfile.Profile) -> dict[str, Any]:
    """Top Python-level callables by own time, and the gymforge functions by cumulative time."""
    stats = pstats.Stats(profiler)
    table = stats.stats  # type: ignore[attr-defined]  # {(file, line, name): (cc, nc, tt, ct, callers)}
    total = stats.total_tt  # type: ignore[attr-defined]

    def label(key: tuple[str, int, str]) -> str:
        path, line, name = key
        if path == "~":
            return name
        parts = Path(path).parts
        short = "/".join(parts[-2:]) if "gymforge" in path or "/envs/" in path else parts[-1]
        return f"{short}:{line}({name})"

    entries = [
        {"function": label(key), "calls": nc, "own_s": tt, "cumulative_s": ct}
        for key, (_, nc, tt, ct, _) in table.items()
    ]
    by_own = sorted(entries, key=lambda e: e["own_s"], reverse=True)[:TOP_OPS]
    ours = [
        e
        for key, e in zip(table, entries, strict=True)
        if "lineflow/batched" in key[0]
        or "core/vector_env" in key[0]
        or "core/seeding" in key[0]
        or "core/spaces" in key[0]
    ]
    by_cumulative = sorted(ours, key=lambda e: e["cumulative_s"], reverse=True)[:TOP_OPS]
    for row in (*by_own, *by_cumulative):
        row["own_share"] = row["own_s"] / total if total else None
        row["cumulative_share"] = row["cumulative_s"] / total if total else None
    return {
        "total_s": total,
        "top_by_own_time": by_own,
        "gymforge_by_cumulative_time": by_cumulative,
    }
