"""The summary of ``batched.py``: medians per configuration, the verdicts against the
throughput targets, the per-step cost model and the machine facts recorded with them.

Pure functions of the measurements, so the report can be rebuilt from a results file.
"""

from __future__ import annotations

import contextlib
import os
import platform
import statistics
import sys
from typing import Any

import torch

from benchmarks import common
from benchmarks.lineflow.batched_setup import (
    SCENARIOS,
    TARGET_BATCH,
    TORCH,
    TORCH_WORKERS,
    VERSIONED_PACKAGES,
    Measurement,
)

# --------------------------------------------------------------------------------------------
# Summary and verdicts


def group_key(scenario: str, system: str, batch: int, threads: int) -> str:
    """Key of one configuration in the summary."""
    return f"{scenario}/{system}/B={batch}/threads={threads}"


def summarise(measurements: list[Measurement]) -> dict[str, dict[str, Any]]:
    """Median, min and max env steps/s (and diagnostics) per configuration."""
    groups: dict[str, list[Measurement]] = {}
    for m in measurements:
        groups.setdefault(group_key(m.scenario, m.system, m.batch, m.threads), []).append(m)
    summary = {}
    for key, all_runs in groups.items():
        group = [m for m in all_runs if m.env_steps_per_s is not None]
        rates = [m.env_steps_per_s for m in group if m.env_steps_per_s is not None]
        sweeps = [m.sweeps_per_step for m in group if m.sweeps_per_step is not None]
        rounds = [m.event_rounds_per_step for m in group if m.event_rounds_per_step is not None]
        canaries = [m.thread_canary_ratio for m in all_runs if m.thread_canary_ratio is not None]
        first = all_runs[0]
        summary[key] = {
            "scenario": first.scenario,
            "system": first.system,
            "batch": first.batch,
            "threads": first.threads,
            "workers": first.workers,
            "measurements": len(group),
            "skipped": len(all_runs) - len(group),
            "skip_reasons": sorted({m.skipped for m in all_runs if m.skipped}),
            "thread_canary_ratios": canaries,
            "median_env_steps_per_s": statistics.median(rates) if rates else None,
            "min_env_steps_per_s": min(rates) if rates else None,
            "max_env_steps_per_s": max(rates) if rates else None,
            "median_ms_per_vector_step": statistics.median(
                m.seconds / m.vector_steps * 1000 for m in group
            )
            if group
            else None,
            "median_sweeps_per_step": statistics.median(sweeps) if sweeps else None,
            "median_event_rounds_per_step": statistics.median(rounds) if rounds else None,
            "any_capped": any(m.capped for m in group),
        }
    return summary


def median_of(
    summary: dict[str, dict[str, Any]], scenario: str, system: str, batch: int, threads: int = 1
) -> float | None:
    """Median env steps/s of one configuration, or ``None``."""
    row = summary.get(group_key(scenario, system, batch, threads))
    return None if row is None else row["median_env_steps_per_s"]


def setting_label(system: str, threads: int, workers: int) -> str:
    """How a torch configuration uses the CPU: ``1 thread``, ``2 threads``, ``2 workers``."""
    if system == TORCH_WORKERS:
        return f"{workers} workers"
    return f"{threads} thread{'s' if threads > 1 else ''}"


def verdicts(
    summary: dict[str, dict[str, Any]], scenarios: list[str], threads: list[int], workers: int
) -> dict[str, Any]:
    """Per scenario with a target: the best median over the CPU settings (thread counts, and
    worker processes) at TARGET_BATCH."""
    rows = {}
    for key in scenarios:
        target = SCENARIOS[key].target
        if target is None:
            continue
        candidates = {
            setting_label(TORCH, n, 1): median_of(summary, key, TORCH, TARGET_BATCH, n)
            for n in sorted(set(threads) | {1})
        }
        if workers > 1:
            candidates[setting_label(TORCH_WORKERS, 1, workers)] = median_of(
                summary, key, TORCH_WORKERS, TARGET_BATCH
            )
        measured = {n: v for n, v in candidates.items() if v is not None}
        best_setting = max(measured, key=lambda n: measured[n]) if measured else None
        best = None if best_setting is None else measured[best_setting]
        rows[key] = {
            "target_env_steps_per_s": target,
            "batch": TARGET_BATCH,
            "median_by_setting": candidates,
            "best_setting": best_setting,
            "best_median_env_steps_per_s": best,
            "fraction_of_target": None if best is None else best / target,
            "speed_up_needed": None if best is None else target / best,
            "passed": None if best is None else best >= target,
        }
    verdict_values = [r["passed"] for r in rows.values()]
    overall = (
        False
        if False in verdict_values
        else (None if None in verdict_values or not verdict_values else True)
    )
    return {"scenarios": rows, "passed": overall}


def cost_model(
    summary: dict[str, dict[str, Any]], scenarios: list[str], threads: list[int]
) -> dict[str, Any]:
    """Split a vector step's time at ``TARGET_BATCH`` into a fixed and a per-instance part.

    Two-point fit of the median ms per vector step, ``t(B) = fixed + per_instance * B``, through
    ``TARGET_BATCH`` and the largest measured B (same thread setting). ``fixed`` is the cost that
    does not grow with the batch (operator dispatch and Python: a cost per tensor op, times the
    op count of the step's event rounds and sweeps); ``per_instance`` is the element work. The target's time budget per vector step is ``TARGET_BATCH / target``: a
    target is out of reach of any change that only cuts one part when that part alone exceeds
    the budget. The fit is an approximation (a larger batch also spills caches, which inflates
    ``per_instance`` and deflates ``fixed``); read it as where the time goes, not to the digit.
    """
    rows: dict[str, Any] = {}
    for key in scenarios:
        target = SCENARIOS[key].target
        if target is None:
            continue
        for n in sorted(set(threads) | {1}):
            small = summary.get(group_key(key, TORCH, TARGET_BATCH, n))
            larger = [
                row
                for row in summary.values()
                if row["scenario"] == key
                and row["system"] == TORCH
                and row["threads"] == n
                and row["batch"] > TARGET_BATCH
                and row["median_ms_per_vector_step"] is not None
            ]
            if small is None or small["median_ms_per_vector_step"] is None or not larger:
                continue
            large = max(larger, key=lambda row: row["batch"])
            t_small, t_large = (
                small["median_ms_per_vector_step"],
                large["median_ms_per_vector_step"],
            )
            per_instance = (t_large - t_small) / (large["batch"] - TARGET_BATCH)  # ms
            fixed = t_small - per_instance * TARGET_BATCH
            rows[f"{key}/threads={n}"] = {
                "scenario": key,
                "threads": n,
                "fit_batches": [TARGET_BATCH, large["batch"]],
                "ms_per_vector_step": t_small,
                "fixed_ms": fixed,
                "per_instance_us": per_instance * 1000,
                "element_ms_at_target_batch": per_instance * TARGET_BATCH,
                "budget_ms": TARGET_BATCH / target * 1000,
            }
    return rows


# --------------------------------------------------------------------------------------------
# Reporting


def machine_info(device: str) -> dict[str, Any]:
    """Platform, CPUs, load, interpreter, accelerator and package versions."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    cpu_model = None
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    gpu = None
    if device.startswith("cuda") and torch.cuda.is_available():
        gpu = torch.cuda.get_device_name(torch.device(device))
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_model": cpu_model,
        "cpu_count": os.cpu_count(),
        "cpus_usable": common.cpus_usable(),
        "load_average_at_start": None if load is None else list(load),
        "python": sys.version.split()[0],
        "torch_default_threads": torch.get_num_threads(),
        "torch_cuda_available": torch.cuda.is_available(),
        "gpu": gpu,
        "versions": common.package_versions(VERSIONED_PACKAGES),
        "git_revision": common.git_revision(),
    }
