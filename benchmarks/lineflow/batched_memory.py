"""The memory part of ``batched.py``: state tensor sizes are measured in process, the
resident set (and CUDA bytes) of a fresh child process per scenario and batch size.

A fresh child per reading keeps one measurement's allocations out of the next one's figure.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from typing import Any

from benchmarks.lineflow.batched_report import fmt_bytes
from benchmarks.lineflow.batched_setup import (
    MEMORY_SMALL_BATCH,
    MEMORY_STEPS,
    REPO_ROOT,
    Scenario,
    Settings,
)

# --------------------------------------------------------------------------------------------
# Memory (fresh children)

_MEMORY_CODE = """
import json, sys, torch
import gymnasium as gym
import gymforge

def status():
    values = {{}}
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(("VmRSS:", "VmHWM:")):
                values[line.split(":")[0]] = int(line.split()[1])
    return values

def cuda_bytes(peak=False):
    if not {device!r}.startswith("cuda"):
        return None
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() if peak else torch.cuda.memory_allocated()

torch.set_num_threads(1)
env = gym.make_vec({gym_id!r}, num_envs={batch}, vectorization_mode="vector_entry_point",
                   device={device!r})
env.reset(seed=0)
after_reset, cuda_after_reset = status(), cuda_bytes()
env.action_space.seed(0)
action = torch.as_tensor(env.action_space.sample(), dtype=torch.long, device={device!r})
for _ in range({steps}):
    env.step(action)
after_steps, cuda_after_steps, cuda_peak = status(), cuda_bytes(), cuda_bytes(peak=True)
print("RESULT " + json.dumps({{
    "rss_after_reset_kib": after_reset.get("VmRSS"),
    "rss_after_steps_kib": after_steps.get("VmRSS"),
    "peak_rss_kib": after_steps.get("VmHWM"),
    "cuda_after_reset_bytes": cuda_after_reset,
    "cuda_after_steps_bytes": cuda_after_steps,
    "cuda_peak_bytes": cuda_peak,
}}), flush=True)
"""


def memory_child(scenario: Scenario, batch: int, device: str) -> dict[str, Any]:
    """A fresh process that builds the torch env of ``batch``, resets it and steps it."""
    code = textwrap.dedent(
        _MEMORY_CODE.format(gym_id=scenario.gym_id, batch=batch, device=device, steps=MEMORY_STEPS)
    )
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("RESULT "):
            return {"batch": batch, "wall_s": wall, **json.loads(line[len("RESULT ") :])}
    tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
    return {"batch": batch, "wall_s": wall, "error": f"rc {done.returncode}: {tail}"}


def measure_rss(scenario: Scenario, settings: Settings) -> dict[str, Any]:
    """Per-instance growth between fresh children at the largest B and at B = 64."""
    large = max(settings.batch_sizes)
    if large <= MEMORY_SMALL_BATCH:
        return {"skipped": f"largest B {large} <= {MEMORY_SMALL_BATCH}"}
    small_run = memory_child(scenario, MEMORY_SMALL_BATCH, settings.device)
    large_run = memory_child(scenario, large, settings.device)
    result: dict[str, Any] = {"small": small_run, "large": large_run}
    if "error" in small_run or "error" in large_run:
        return result
    span = large - MEMORY_SMALL_BATCH
    for key, scale in (
        ("rss_after_reset_kib", 1024),
        ("rss_after_steps_kib", 1024),
        ("peak_rss_kib", 1024),
        ("cuda_after_reset_bytes", 1),
        ("cuda_after_steps_bytes", 1),
        ("cuda_peak_bytes", 1),
    ):
        a, b = small_run.get(key), large_run.get(key)
        name = key.removesuffix("_kib").removesuffix("_bytes") + "_bytes_per_instance"
        result[name] = None if a is None or b is None else (b - a) * scale / span
    print(
        f"  {scenario.key:<4} memory: RSS growth per instance (B={large} vs {MEMORY_SMALL_BATCH}) "
        f"after reset {fmt_bytes(result['rss_after_reset_bytes_per_instance'])}, after "
        f"{MEMORY_STEPS} steps {fmt_bytes(result['rss_after_steps_bytes_per_instance'])}, peak "
        f"{fmt_bytes(result['peak_rss_bytes_per_instance'])}",
        flush=True,
    )
    return result
