"""The memory measurement of ``scalar.py``: the peak resident set of one episode, each in a
fresh subprocess per system, and its summary.

A fresh process per reading keeps one system's imports and allocations out of the other's.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import textwrap
import time
from typing import Any

from benchmarks.lineflow.scalar_setup import GYMFORGE, LINEFLOW, MEMORY_SEED, REPO_ROOT

# --------------------------------------------------------------------------------------------
# Memory measurement (fresh subprocesses)

_EPISODE_CODE = """
n = 0
env.reset(seed={seed})
env.action_space.seed({seed})
while True:
    n += 1
    _, _, terminated, truncated, _ = env.step(env.action_space.sample())
    if terminated or truncated:
        break
"""

_REPORT_CODE = """
print("RESULT " + json.dumps({{
    "import_peak_rss_kib": import_peak,
    "peak_rss_kib": peak_rss_kib(),
    "ru_maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    "steps": n,
    "torch_imported": "torch" in sys.modules,
}}), flush=True)
"""

# VmHWM is the peak RSS of this process's own address space since its exec. ru_maxrss is not
# usable on its own in a child: Linux carries it over across execve from the address space being
# replaced, which for a child spawned by this (large) process is this process's, so every child
# would report at least the parent's RSS. ru_maxrss is still recorded, for reference.
_PEAK_CODE = """
import json, resource, sys


def peak_rss_kib():
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

"""

MEMORY_CODE = {
    GYMFORGE: """
import gymforge
import gymnasium as gym
import_peak = peak_rss_kib()
env = gym.make("LineFlow-WaitingTime-v0")
""",
    LINEFLOW: """
import lineflow.simulation
import lineflow.examples
import torch
torch.set_num_threads(1)
import_peak = peak_rss_kib()
env = lineflow.simulation.LineSimulation(lineflow.examples.WaitingTime(), simulation_end=4001)
""",
}


def memory_child_code(system: str) -> str:
    """The complete program a fresh memory-measuring child runs for ``system``."""
    return (
        _PEAK_CODE
        + textwrap.dedent(MEMORY_CODE[system])
        + _EPISODE_CODE.format(seed=MEMORY_SEED)
        + _REPORT_CODE.format()
    )


def run_memory_child(system: str) -> dict[str, Any]:
    """Run one fresh child for ``system``; return its figures (or an ``error``)."""
    env = dict(os.environ, PYGAME_HIDE_SUPPORT_PROMPT="1")
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", memory_child_code(system)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall_s = time.perf_counter() - start
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("RESULT "):
            return {"system": system, "wall_s": wall_s, **json.loads(line[len("RESULT ") :])}
    tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
    return {"system": system, "wall_s": wall_s, "error": f"rc {done.returncode}: {tail}"}


def measure_memory(systems: list[str], runs: int) -> list[dict[str, Any]]:
    """``runs`` rounds of one fresh child per system, interleaved."""
    results = []
    for index in range(runs):
        for system in systems:
            result = run_memory_child(system)
            results.append(result)
            if "error" in result:
                print(f"  memory {system:<12} run {index + 1}/{runs}  FAILED {result['error']}")
                continue
            print(
                f"  memory {system:<12} run {index + 1}/{runs}  peak RSS "
                f"{result['peak_rss_kib'] / 1024:7.1f} MiB (after import "
                f"{result['import_peak_rss_kib'] / 1024:.1f}), {result['steps']} steps, "
                f"torch imported: {result['torch_imported']}",
                flush=True,
            )
    return results


def summarise_memory(runs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Median peak RSS (and after-import RSS) per system over the successful children."""
    summary: dict[str, dict[str, Any]] = {}
    for system in dict.fromkeys(r["system"] for r in runs):
        good = [r for r in runs if r["system"] == system and "error" not in r]
        if not good:
            summary[system] = {"runs": 0, "errors": len(runs)}
            continue
        summary[system] = {
            "runs": len(good),
            "errors": sum(1 for r in runs if r["system"] == system and "error" in r),
            "median_peak_rss_kib": statistics.median(r["peak_rss_kib"] for r in good),
            "min_peak_rss_kib": min(r["peak_rss_kib"] for r in good),
            "max_peak_rss_kib": max(r["peak_rss_kib"] for r in good),
            "median_import_peak_rss_kib": statistics.median(r["import_peak_rss_kib"] for r in good),
            "median_ru_maxrss_kib": statistics.median(r["ru_maxrss_kib"] for r in good),
            "median_wall_s": statistics.median(r["wall_s"] for r in good),
            "torch_imported": any(r["torch_imported"] for r in good),
        }
    return summary
