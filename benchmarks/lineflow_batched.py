"""Batched LineFlow throughput: the torch engine vs. SimPy under ``SyncVectorEnv`` vs. lineflow-rl.

One run measures aggregate env steps per second (``B`` x vector steps / s), side by side, of

=============  ===============================================================================
system         how it is built
=============  ===============================================================================
torch          ``gym.make_vec(id, num_envs=B, vectorization_mode="vector_entry_point",
               device=...)``: gymforge's batched torch engine (``LineFlowVecEnv``), at every
               ``--batch-sizes`` B (default 1, 64, 1024, 4096, 16384); on CPU with
               ``torch.set_num_threads(1)`` and, at B >= 1024, also with 2 threads
               (``--threads``)
torch-workers  the same with ``num_workers=K`` (``--workers``, default 2): the batch split over K
               worker processes of one torch thread each (``ShardedVectorEnv``: one CPU core
               per process, the same results bit for bit), at B >= 1024 on CPU
simpy-sync     ``gym.make_vec(id, num_envs=B, vectorization_mode="sync")``: gymforge's SimPy
               engine in Gymnasium's ``SyncVectorEnv`` (a Python loop), B = 1 and 64
lineflow-rl    lineflow-rl 0.5.0's single ``LineSimulation(line, simulation_end=4001)`` (the
               anchor, built as in ``lineflow_scalar.py``), B = 1
=============  ===============================================================================

on four scenarios:

=====  ======================================  =================================================
key    gymforge id                             lineflow-rl 0.5.0 (``lineflow.examples``)
=====  ======================================  =================================================
WT     ``LineFlow-WaitingTime-v0``             ``WaitingTime()``
WA3    ``LineFlow-WorkerAssignment-v0`` (k=3)  ``WorkerAssignment(n_assemblies=3)``
CL3    ``LineFlow-ComplexLine-v0`` (k=3)       ``ComplexLine(n_assemblies=3, n_workers=9,
                                               scrap_factor=1/3, alternate=False)``
PD5    ``LineFlow-PartDistribution-v0`` (k=5)  ``MultiProcess(alternate=False, n_processes=5)``
=====  ======================================  =================================================

Targets (the issue's, torch engine at B = 4096, best CPU setting -- 1 or 2 threads, or K worker
processes -- median of the repeats)
    WT >= 1,000,000 env steps/s; WA3 >= 200,000; CL3 >= 200,000. PD5 has no target.

Method
    * Actions: ``--action-batches`` (4) distinct random batches per env, drawn with the env's
      ``action_space.sample()`` (space seeded) before any clock starts and reused cyclically.
    * Steady state: a LineFlow line starts empty, and the torch engine's cost per step grows
      about 2.5x over the first ~150 steps while the line fills up (more events per step). A
      measurement taken a few steps after ``reset`` would therefore overstate the rate, and at
      B = 16384 an honest 150-step warm-up costs minutes. So, per scenario, one torch env of
      ``--warm-up-batch`` (1024) instances is stepped ``--warm-up-steps`` (150) steps untimed,
      and every measured torch env is reset (its own seeds and random streams) and then given
      that warmed line state: instance ``i`` copies warm instance ``i mod 1024`` (a slice for
      B <= 1024, a tiling above). Copies diverge at their first random draw, since each keeps
      its own stream. Checked on WA3 with the engine's sweep counter (below): B = 1024 tiled
      from 256 runs 19.8 sweeps per step vs. 19.8 warmed on its own, B = 4096 tiled from 1024
      20.1 vs. 21.3, so tiling may understate the cost at the largest B by a few percent.
      A torch-workers env gets the same state: each worker builds the same warm env (it is
      deterministic) and copies the slice of its own instances (``lineflow_warm.warm_shard``).
      ``--warm-up own`` warms every env itself instead (slow at large B). The SimPy envs get an
      untimed warm-up of ``--warm-up-steps`` steps too; lineflow-rl a 200-step one.
    * Each torch/SimPy configuration is then calibrated (untimed steps, >= 1 and >= 0.3 s) to
      pick ``N`` vector steps per measurement so that one measurement lasts about
      ``--target-seconds`` (2.5 s); a measurement stops early after ``--cap-seconds`` (10 s) and
      its rate comes from the steps completed. lineflow-rl is measured as in
      ``lineflow_scalar.py``: one whole 4000-step episode per measurement (reset untimed).
    * More than one torch thread: on a machine whose cores other jobs keep busy, every parallel
      torch op waits milliseconds for a descheduled worker thread, and one engine step (tens of
      thousands of ops) can take 30 s instead of 0.5 s (seen while developing this benchmark:
      one WA3 step at B = 4096 took 32 s with 2 threads). So a multi-thread configuration is
      never calibrated (it reuses the
      1-thread ``N``), and before each of its measurements a canary (40 parallel adds of 2**18
      doubles) is timed with N threads and with 1; above a ratio of 3 the measurement is
      skipped and reported as such, with the ratio. This bounds the run time; the table shows
      how many of the repeats ran.
    * ``--repeats`` (3) rounds; each round measures every configuration of the scenario once,
      in turn (interleaved), after an untimed ``gc.collect()``. The figure is the median (min
      and max shown). Envs keep running across rounds (SAME_STEP / NEXT_STEP autoreset), so
      their episodes progress; the episode step at which each torch measurement started is
      recorded.
    * Diagnostics for the torch engine: the number of event rounds (``Engine.next_event``
      calls that found an event) and settle sweeps (``Engine._sweep`` calls) per vector step,
      counted by wrapping the two methods of the measured env's ``Engine`` instance (a Python
      call per sweep; they are left out when the engine has no such methods).
    * Memory per instance (torch engine): bytes of the state tensors (every field of the env's
      ``state`` dataclass, plus the ``InstanceRNG`` tensors) / B; and the growth of process RSS
      (``VmRSS`` of ``/proc/self/status``, after ``reset`` and after 3 steps, and the peak
      ``VmHWM``) per instance between two fresh child processes at the largest B and at B = 64,
      so imports and allocator baselines cancel. On CUDA the children report
      ``torch.cuda.memory_allocated`` / ``max_memory_allocated`` growth instead.
    * Profile: WA3 at B = 4096 (1 thread), from the warmed state: ``--profile-steps`` (20)
      vector steps under ``torch.profiler`` (aten op self times, op counts), then 10 under
      ``cProfile`` (Python-level: which engine methods and torch calls take the time).

How to run (from the repository root, with the project's interpreter)
    python -m benchmarks.lineflow_batched               # everything, CPU (about 9 minutes)
    python -m benchmarks.lineflow_batched --scenarios WT --batch-sizes 1 64 4096 --repeats 1
    python -m benchmarks.lineflow_batched --no-anchor --no-sync --skip-memory --skip-profile
    python -m benchmarks.lineflow_batched --out /tmp/results

    Results go to ``<out>/lineflow_batched.json`` (machine info, versions, every measurement,
    medians, verdicts, memory, profile, the exact command) and ``<out>/lineflow_batched.md``.

GPU
    ``--device cuda`` runs the torch engine on CUDA (SimPy and lineflow-rl stay on the CPU;
    thread count fixed at 1; timing ends with ``torch.cuda.synchronize()``), and writes
    ``<out>/lineflow_batched_cuda.{json,md}`` so the CPU results are not overwritten. Without a
    usable CUDA device it prints why and exits with status 0, writing nothing. On a GPU machine:

        bash benchmarks/lineflow_batched_gpu.sh OUT_DIR     # or, by hand:
        python -m benchmarks.lineflow_batched --device cuda --batch-sizes 1 1024 4096 16384 65536 \\
            --out OUT_DIR

    The shell script picks an interpreter (``$PYTHON``, ``.venv/bin/python``, ``python3``),
    records ``nvidia-smi`` and runs the measurement within a few minutes of device time.

Figures are medians on a noisy 2-core machine that other jobs share: read the ratios and the
orders of magnitude, not the last digit.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import dataclasses
import gc
import json
import math
import os
import platform
import pstats
import re
import statistics
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import torch

import gymforge  # noqa: F401  (registers the LineFlow ids with Gymnasium)
from benchmarks import common
from benchmarks.common import fmt_rate, fmt_verdict
from benchmarks.lineflow_warm import sample_action_batches, transplant_state, warm_env, warm_shard

TORCH = "torch"
TORCH_WORKERS = "torch-workers"  # the torch engine split over worker processes (num_workers)
SYNC = "simpy-sync"
LINEFLOW = "lineflow-rl"
SYSTEM_ORDER = (LINEFLOW, SYNC, TORCH, TORCH_WORKERS)

DEFAULT_BATCH_SIZES = (1, 64, 1024, 4096, 16384)
SYNC_BATCH_SIZES = (1, 64)
MULTI_THREAD_MIN_BATCH = 1024  # the second thread setting is measured from this B on
DEFAULT_THREADS = (1, 2)
DEFAULT_WORKERS = 2  # worker processes of the torch-workers system (1 thread each)
TARGET_BATCH = 4096
MEMORY_SMALL_BATCH = 64
MEMORY_STEPS = 3
ANCHOR_HORIZON = 4000
ANCHOR_WARM_UP_STEPS = 200
CALIBRATION_MIN_S = 0.3
CANARY_OPS = 40  # the thread-contention canary: this many parallel adds ...
CANARY_ELEMENTS = 1 << 18  # ... of float64 tensors this long (above torch's grain size)
CONTENTION_RATIO = 3.0  # canary time with N threads / with 1 thread above which N is skipped
BASE_SEED = 1000
WARM_SEED = 7
PROFILE_SCENARIO = "WA3"
PROFILE_BATCH = 4096
CPROFILE_STEPS = 10
STRUCTURE_STEPS = 5
TOP_OPS = 15
VERSIONED_PACKAGES = ("gymforge", "lineflow-rl", "numpy", "torch", "simpy", "gymnasium")
REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Scenario:
    """One benchmarked line: its gymforge id, lineflow-rl equivalent and throughput target."""

    key: str
    gym_id: str
    lineflow_class: str  # a name in lineflow.examples
    lineflow_kwargs: dict[str, Any]
    lineflow_text: str
    target: float | None  # env steps/s of the torch engine at TARGET_BATCH, at least


SCENARIOS: dict[str, Scenario] = {
    s.key: s
    for s in (
        Scenario("WT", "LineFlow-WaitingTime-v0", "WaitingTime", {}, "WaitingTime()", 1_000_000.0),
        Scenario(
            "WA3",
            "LineFlow-WorkerAssignment-v0",
            "WorkerAssignment",
            {"n_assemblies": 3},
            "WorkerAssignment(n_assemblies=3)",
            200_000.0,
        ),
        Scenario(
            "CL3",
            "LineFlow-ComplexLine-v0",
            "ComplexLine",
            {"n_assemblies": 3, "n_workers": 9, "scrap_factor": 1 / 3, "alternate": False},
            "ComplexLine(n_assemblies=3, n_workers=9, scrap_factor=1/3, alternate=False)",
            200_000.0,
        ),
        Scenario(
            "PD5",
            "LineFlow-PartDistribution-v0",
            "MultiProcess",
            {"alternate": False, "n_processes": 5},
            "MultiProcess(alternate=False, n_processes=5)",
            None,
        ),
    )
}


@dataclass
class Settings:
    """What the command line chose."""

    device: str
    batch_sizes: list[int]
    threads: list[int]
    workers: int  # torch-workers processes (1: not measured)
    repeats: int
    target_seconds: float
    cap_seconds: float
    warm_up: str  # "tiled" or "own"
    warm_up_steps: int
    warm_up_batch: int
    action_batches: int
    anchor: bool
    sync: bool
    profile_steps: int  # 0: no profile


@dataclass
class Measurement:
    """One timed run of one configuration."""

    scenario: str
    system: str
    batch: int
    threads: int
    round: int
    vector_steps: int
    env_steps: int
    seconds: float
    env_steps_per_s: float | None  # None: skipped
    capped: bool
    skipped: str | None = None  # why the measurement was not taken
    thread_canary_ratio: float | None = None  # multi-thread configs: canary time N / 1 thread
    episode_step_start: int | None = None  # torch: the episode step the timing started at
    event_rounds_per_step: float | None = None
    sweeps_per_step: float | None = None
    workers: int = 1  # processes the batch is split over (torch-workers)


# --------------------------------------------------------------------------------------------
# Small helpers


def tensor_bytes(value: Any) -> int:
    """Bytes held by the tensors among the fields of a dataclass (or ``vars``) ``value``."""
    items = (
        [getattr(value, f.name) for f in dataclasses.fields(value)]
        if dataclasses.is_dataclass(value)
        else list(vars(value).values())
    )
    return sum(t.element_size() * t.nelement() for t in items if isinstance(t, torch.Tensor))


def field_bytes(value: Any) -> dict[str, int]:
    """Bytes of every tensor field of the dataclass ``value``."""
    if not dataclasses.is_dataclass(value):
        return {}
    out = {}
    for f in dataclasses.fields(value):
        tensor = getattr(value, f.name)
        if isinstance(tensor, torch.Tensor):
            out[f.name] = tensor.element_size() * tensor.nelement()
    return out


def synchronize(device: str) -> None:
    """Wait for queued kernels on a CUDA ``device``; nothing on the CPU."""
    if device.startswith("cuda"):
        torch.cuda.synchronize()


# --------------------------------------------------------------------------------------------
# Building the systems


def make_torch(scenario: Scenario, batch: int, device: str, workers: int = 1) -> Any:
    """The torch engine's vector env of ``batch`` instances on ``device``, split over ``workers``
    processes when more than one."""
    return gym.make_vec(
        scenario.gym_id,
        num_envs=batch,
        vectorization_mode="vector_entry_point",
        device=device,
        num_workers=workers,
    )


def make_sync(scenario: Scenario, batch: int) -> Any:
    """The SimPy engine under Gymnasium's ``SyncVectorEnv``."""
    return gym.make_vec(scenario.gym_id, num_envs=batch, vectorization_mode="sync")


def make_anchor(anchor: Any, scenario: Scenario) -> Any:
    """lineflow-rl's ``LineSimulation`` of ``scenario`` with a 4000-step episode."""
    line_simulation, examples = anchor
    line = getattr(examples, scenario.lineflow_class)(**scenario.lineflow_kwargs)
    # simulation_end = H + 1 gives exactly H steps (its reset consumes one time unit)
    return line_simulation(line, simulation_end=ANCHOR_HORIZON + 1)


class EngineCounter:
    """Counts the torch engine's event rounds and settle sweeps by wrapping two methods of one
    ``Engine`` instance (``next_event`` and ``_sweep``); inert when they do not exist.

    With ``track_active`` set (the profile only: it costs one reduction per sweep), it also sums
    the share of instances each sweep's ``active`` mask selects.
    """

    def __init__(self, env: Any) -> None:
        self.events = 0
        self.sweeps = 0
        self.active = False
        self.track_active = False
        self.active_share_sum = 0.0
        self.active_share_count = 0
        engine = getattr(env.unwrapped, "engine", None)
        next_event = getattr(engine, "next_event", None)
        sweep = getattr(engine, "_sweep", None)
        if not (callable(next_event) and callable(sweep)):
            return

        def counted_next_event(*args: Any, **kwargs: Any) -> Any:
            self.events += 1
            return next_event(*args, **kwargs)

        def counted_sweep(*args: Any, **kwargs: Any) -> Any:
            self.sweeps += 1
            if self.track_active:
                mask = kwargs.get("active", args[1] if len(args) > 1 else None)
                if isinstance(mask, torch.Tensor) and mask.dtype == torch.bool:
                    self.active_share_sum += float(mask.float().mean())
                    self.active_share_count += 1
            return sweep(*args, **kwargs)

        engine.next_event = counted_next_event
        engine._sweep = counted_sweep
        self.active = True

    def snapshot(self) -> tuple[int, int]:
        """Current (next_event calls, sweeps)."""
        return self.events, self.sweeps


def episode_step(env: Any) -> int | None:
    """The torch env's step count within the current episode (instance 0), if exposed."""
    steps = getattr(env.unwrapped, "_steps", None)
    return int(steps[0]) if isinstance(steps, torch.Tensor) and steps.numel() else None


# --------------------------------------------------------------------------------------------
# Configurations and their measurement


@dataclass
class Config:
    """One system at one batch size and thread count on one scenario, with its live env."""

    scenario: str
    system: str
    batch: int
    threads: int
    env: Any
    actions: list[Any]
    counter: EngineCounter | None = None
    workers: int = 1  # processes the batch is split over (torch-workers)
    steps: int = 1  # vector steps per measurement (from the calibration)
    calibration_s_per_step: float | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return (
            f"{self.scenario} {self.system} B={self.batch} threads={self.threads} "
            f"workers={self.workers}"
        )


def timed_vector_steps(
    config: Config, steps: int, cap_s: float, device: str, offset: int = 0
) -> tuple[int, float, bool]:
    """Step ``config``'s vector env ``steps`` times (cyclic pre-sampled actions), stopping after
    the step that passes ``cap_s``; returns (steps done, seconds, capped)."""
    env, actions = config.env, config.actions
    count = len(actions)
    synchronize(device)
    start = time.perf_counter()
    done, capped = 0, False
    for i in range(steps):
        env.step(actions[(offset + i) % count])
        done += 1
        if time.perf_counter() - start > cap_s and done < steps:
            capped = True
            break
    synchronize(device)
    return done, time.perf_counter() - start, capped


def thread_canary(threads: int) -> float:
    """Seconds for CANARY_OPS element-wise adds big enough to run in parallel on ``threads``."""
    torch.set_num_threads(threads)
    x = torch.ones(CANARY_ELEMENTS, dtype=torch.float64)
    out = torch.empty_like(x)
    torch.add(x, x, out=out)
    start = time.perf_counter()
    for _ in range(CANARY_OPS):
        torch.add(x, out, out=out)
    return time.perf_counter() - start


def contention_ratio(threads: int) -> float:
    """Canary time with ``threads`` threads over canary time with 1 (CPU only).

    On a machine whose cores are busy with other jobs, every parallel torch op waits for a
    descheduled worker thread (milliseconds each): a step of the engine, ~5000 ops, can then take
    30 s instead of 0.5 s. The canary detects this in well under a second.
    """
    one = thread_canary(1)
    many = thread_canary(threads)
    torch.set_num_threads(1)
    return many / one


def calibrate(config: Config, settings: Settings) -> None:
    """Untimed steps (>= 1 and >= CALIBRATION_MIN_S) that set ``config.steps``."""
    torch.set_num_threads(config.threads)
    done, elapsed = 0, 0.0
    while done == 0 or elapsed < CALIBRATION_MIN_S:
        n, seconds, _ = timed_vector_steps(
            config, max(1, done), settings.cap_seconds, settings.device, offset=done
        )
        done, elapsed = done + n, elapsed + seconds
    per_step = elapsed / done
    config.calibration_s_per_step = per_step
    config.steps = max(1, round(settings.target_seconds / per_step))


def measure(config: Config, round_index: int, settings: Settings) -> Measurement:
    """One timed measurement of a torch or SimPy ``config``.

    A multi-thread configuration is first checked with the thread canary; under contention
    (ratio > CONTENTION_RATIO) it is skipped, since a single step may then take minutes.
    """
    ratio = None
    if config.threads > 1 and settings.device == "cpu":
        ratio = contention_ratio(config.threads)
        if ratio > CONTENTION_RATIO:
            return Measurement(
                scenario=config.scenario,
                system=config.system,
                batch=config.batch,
                threads=config.threads,
                round=round_index,
                vector_steps=0,
                env_steps=0,
                seconds=0.0,
                env_steps_per_s=None,
                capped=False,
                skipped=f"CPU contention: {config.threads}-thread canary {ratio:.0f}x slower "
                "than 1 thread",
                thread_canary_ratio=ratio,
            )
    torch.set_num_threads(config.threads)
    gc.collect()
    start_step = episode_step(config.env) if config.system == TORCH else None
    before = config.counter.snapshot() if config.counter and config.counter.active else None
    done, seconds, capped = timed_vector_steps(
        config, config.steps, settings.cap_seconds, settings.device, offset=round_index
    )
    rounds = sweeps = None
    if before is not None and config.counter is not None:
        events, sweep_count = config.counter.snapshot()
        rounds = (events - before[0] - done) / done  # each advance ends with one empty look
        sweeps = (sweep_count - before[1]) / done
    return Measurement(
        scenario=config.scenario,
        system=config.system,
        batch=config.batch,
        threads=config.threads,
        round=round_index,
        vector_steps=done,
        env_steps=done * config.batch,
        seconds=seconds,
        env_steps_per_s=done * config.batch / seconds,
        capped=capped,
        thread_canary_ratio=ratio,
        episode_step_start=start_step,
        event_rounds_per_step=rounds,
        sweeps_per_step=sweeps,
        workers=config.workers,
    )


def measure_anchor(config: Config, round_index: int, settings: Settings) -> Measurement:
    """One lineflow-rl episode (reset untimed), as in ``lineflow_scalar.py``."""
    torch.set_num_threads(1)
    sim, actions = config.env, config.actions
    gc.collect()
    sim.reset(seed=BASE_SEED + round_index)
    start = time.perf_counter()
    done, capped = 0, False
    for action in actions:
        _, _, terminated, truncated, _ = sim.step(action)
        done += 1
        if terminated or truncated:
            break
        if time.perf_counter() - start > settings.cap_seconds:
            capped = True
            break
    seconds = time.perf_counter() - start
    return Measurement(
        scenario=config.scenario,
        system=LINEFLOW,
        batch=1,
        threads=1,
        round=round_index,
        vector_steps=done,
        env_steps=done,
        seconds=seconds,
        env_steps_per_s=done / seconds,
        capped=capped,
    )


def log_measurement(m: Measurement, repeats: int) -> None:
    """One progress line."""
    head = (
        f"  {m.scenario:<4} {m.system:<11} B={m.batch:<6} t={m.threads}  round {m.round + 1}/"
        f"{repeats}"
    )
    if m.env_steps_per_s is None:
        print(f"{head}  skipped: {m.skipped}", flush=True)
        return
    extra = ""
    if m.thread_canary_ratio is not None:
        extra += f"  canary {m.thread_canary_ratio:.1f}x"
    if m.episode_step_start is not None:
        extra += f"  from episode step {m.episode_step_start}"
    if m.sweeps_per_step is not None:
        extra += f"  {m.sweeps_per_step:.1f} sweeps/step"
    print(
        f"{head}  {m.env_steps_per_s:>12,.0f} env steps/s  ({m.vector_steps} steps in "
        f"{m.seconds:.2f} s{', capped' if m.capped else ''}){extra}",
        flush=True,
    )


# --------------------------------------------------------------------------------------------
# One scenario


def warm_up_batch(settings: Settings) -> int:
    """B of the warm env whose state the measured envs copy."""
    return min(settings.warm_up_batch, max(settings.batch_sizes))


def warm_state_env(scenario: Scenario, settings: Settings) -> tuple[Any, float]:
    """The torch env of ``--warm-up-batch`` instances stepped ``--warm-up-steps`` times."""
    return warm_env(
        scenario.gym_id,
        warm_up_batch(settings),
        settings.warm_up_steps,
        WARM_SEED,
        settings.action_batches,
        settings.device,
    )


def warm_workers(env: Any, scenario: Scenario, settings: Settings) -> bool:
    """Give each worker's shard of the torch-workers ``env`` the warm state (``warm_shard``)."""
    done = env.apply_to_shards(
        warm_shard,
        scenario.gym_id,
        warm_up_batch(settings),
        settings.warm_up_steps,
        WARM_SEED,
        settings.action_batches,
    )
    return all(done)


def ready_torch_env(
    scenario: Scenario,
    settings: Settings,
    batch: int,
    workers: int,
    warm: Any | None,
    info: dict[str, Any],
) -> tuple[Any, list[Any], list[str]]:
    """A torch env of ``batch`` instances (over ``workers`` processes), reset with BASE_SEED and
    given the warm state, its action batches and notes on how it was warmed."""
    env = make_torch(scenario, batch, settings.device, workers)
    env.reset(seed=BASE_SEED)
    actions = sample_action_batches(env, BASE_SEED, settings.action_batches, settings.device)
    if warm is not None:
        source = f"state from the warm env (B={warm.unwrapped.num_envs})"
        if workers > 1 and warm_workers(env, scenario, settings):
            return env, actions, [f"{source}, rebuilt in each worker"]
        if workers == 1 and transplant_state(env, warm):
            return env, actions, [source]
    notes = [] if warm is None else ["engine state not transplantable; warmed on its own"]
    torch.set_num_threads(1)
    start = time.perf_counter()
    for i in range(settings.warm_up_steps):
        env.step(actions[i % len(actions)])
    synchronize(settings.device)
    info["own_warm_up_s"][f"{batch}/workers={workers}"] = time.perf_counter() - start
    return env, actions, notes


def build_torch_configs(
    scenario: Scenario, settings: Settings, warm: Any | None
) -> tuple[list[Config], dict[str, Any]]:
    """Torch configs for every B (thread counts, and worker processes from
    MULTI_THREAD_MIN_BATCH on, on the CPU), their envs reset and warmed."""
    configs: list[Config] = []
    info: dict[str, Any] = {"warm_up": settings.warm_up, "own_warm_up_s": {}}
    for batch in settings.batch_sizes:
        env, actions, notes = ready_torch_env(scenario, settings, batch, 1, warm, info)
        counter = EngineCounter(env)
        threads = [1]
        if batch >= MULTI_THREAD_MIN_BATCH:
            threads = sorted(set(settings.threads))
        for n in threads:
            configs.append(
                Config(scenario.key, TORCH, batch, n, env, actions, counter, notes=list(notes))
            )
        workers = settings.workers
        if batch >= MULTI_THREAD_MIN_BATCH and workers > 1 and settings.device == "cpu":
            env, actions, notes = ready_torch_env(scenario, settings, batch, workers, warm, info)
            configs.append(
                Config(
                    scenario.key,
                    TORCH_WORKERS,
                    batch,
                    1,
                    env,
                    actions,
                    workers=workers,
                    notes=notes,
                )
            )
    return configs, info


def state_memory(config: Config) -> dict[str, Any]:
    """Bytes per instance of the torch env's state dataclass and random streams."""
    env = config.env.unwrapped
    batch = env.num_envs
    state = getattr(env, "state", None)
    rng = getattr(env, "rng", None)
    state_total = tensor_bytes(state) if state is not None else 0
    rng_total = tensor_bytes(rng) if rng is not None else 0
    return {
        "batch": batch,
        "state_bytes_per_instance": state_total / batch,
        "rng_bytes_per_instance": rng_total / batch,
        "total_bytes_per_instance": (state_total + rng_total) / batch,
        "fields_bytes_per_instance": {
            name: size / batch for name, size in field_bytes(state).items()
        },
    }


def run_scenario(
    scenario: Scenario, settings: Settings, anchor: Any, profile: bool
) -> tuple[list[Measurement], dict[str, Any]]:
    """Warm up, calibrate and measure every configuration of ``scenario`` (interleaved)."""
    clock = time.perf_counter()
    details: dict[str, Any] = {}
    configs: list[Config] = []
    warm = None
    try:
        if anchor is not None:
            sim = make_anchor(anchor, scenario)
            sim.reset(seed=0)
            for action in sample_action_batches(sim, 0, ANCHOR_WARM_UP_STEPS, None):
                sim.step(action)
            actions = sample_action_batches(sim, BASE_SEED, ANCHOR_HORIZON + 10, None)
            configs.append(Config(scenario.key, LINEFLOW, 1, 1, sim, actions))
        if settings.sync:
            torch.set_num_threads(1)
            for batch in SYNC_BATCH_SIZES:
                env = make_sync(scenario, batch)
                env.reset(seed=BASE_SEED)
                actions = sample_action_batches(env, BASE_SEED, settings.action_batches, None)
                for i in range(settings.warm_up_steps):
                    env.step(actions[i % len(actions)])
                configs.append(Config(scenario.key, SYNC, batch, 1, env, actions))
        if settings.warm_up == "tiled":
            warm, warm_s = warm_state_env(scenario, settings)
            details["warm_env"] = {
                "batch": warm.unwrapped.num_envs,
                "steps": settings.warm_up_steps,
                "seconds": warm_s,
            }
            print(
                f"  {scenario.key:<4} warm torch env: B={warm.unwrapped.num_envs}, "
                f"{settings.warm_up_steps} steps in {warm_s:.1f} s",
                flush=True,
            )
        torch_configs, details["torch_setup"] = build_torch_configs(scenario, settings, warm)
        configs += torch_configs
        if warm is not None:
            warm.close()
            warm = None
        for config in configs:
            if config.system != LINEFLOW and config.threads == 1:
                calibrate(config, settings)
        for config in configs:  # never calibrate with N threads: see contention_ratio
            if config.threads > 1:
                single = next(
                    c
                    for c in configs
                    if c.system == config.system and c.batch == config.batch and c.threads == 1
                )
                config.steps = single.steps
                config.calibration_s_per_step = None
                config.notes.append("steps per measurement from the 1-thread calibration")
        details["calibration"] = [
            {
                "system": c.system,
                "batch": c.batch,
                "threads": c.threads,
                "s_per_step": c.calibration_s_per_step,
                "steps_per_measurement": c.steps if c.system != LINEFLOW else ANCHOR_HORIZON,
                "notes": c.notes,
            }
            for c in configs
        ]
        measurements: list[Measurement] = []
        for round_index in range(settings.repeats):
            for config in configs:
                if config.system == LINEFLOW:
                    m = measure_anchor(config, round_index, settings)
                else:
                    m = measure(config, round_index, settings)
                measurements.append(m)
                log_measurement(m, settings.repeats)
        torch_rows = [c for c in configs if c.system == TORCH]
        if torch_rows:
            details["state_memory"] = state_memory(max(torch_rows, key=lambda c: c.batch))
        if profile:
            details["profile"] = profile_engine(scenario, configs, settings)
    finally:
        torch.set_num_threads(1)
        if warm is not None:
            warm.close()
        for env in {id(c.env): c.env for c in configs}.values():
            with contextlib.suppress(Exception):
                env.close()
    details["wall_s"] = time.perf_counter() - clock
    return measurements, details


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


def fmt_bytes(value: float | None) -> str:
    """Bytes as B / KiB / MiB."""
    if value is None:
        return "–"
    if abs(value) < 1024:
        return f"{value:,.0f} B"
    if abs(value) < 1024**2:
        return f"{value / 1024:,.2f} KiB"
    return f"{value / 1024**2:,.1f} MiB"


def fmt_ratio(value: float | None) -> str:
    """A ratio with precision that fits its size."""
    if value is None:
        return "–"
    if value >= 100:
        return f"{value:,.0f}×"
    if value >= 10:
        return f"{value:.1f}×"
    return f"{value:.2f}×"


def scenario_table(report: dict[str, Any], key: str) -> list[str]:
    """The speed table of one scenario, as Markdown lines."""
    summary = report["summary"]
    details = report["scenario_details"].get(key, {})
    state = details.get("state_memory")
    rss = report["memory"].get(key) if report["memory"] else None
    sync_base = median_of(summary, key, SYNC, 1)
    anchor_base = median_of(summary, key, LINEFLOW, 1)
    memory_text = "–"
    if state is not None:
        memory_text = f"state {fmt_bytes(state['total_bytes_per_instance'])}"
        if rss and rss.get("rss_after_steps_bytes_per_instance") is not None:
            memory_text += f"; RSS +{fmt_bytes(rss['rss_after_steps_bytes_per_instance'])}"
        elif rss and rss.get("cuda_after_steps_bytes_per_instance") is not None:
            memory_text += f"; CUDA +{fmt_bytes(rss['cuda_after_steps_bytes_per_instance'])}"
    lines = [
        "| system | B | CPU | env steps/s, median (min–max) | ms / vector step | "
        "sweeps / step | per-instance memory | × simpy-sync B=1 | × lineflow-rl |",
        "|---|---:|---:|---|---:|---:|---|---:|---:|",
    ]
    rows = [r for r in summary.values() if r["scenario"] == key]
    rows.sort(key=lambda r: (SYSTEM_ORDER.index(r["system"]), r["batch"], r["threads"]))
    for row in rows:
        median = row["median_env_steps_per_s"]
        sweeps = row["median_sweeps_per_step"]
        ms = row["median_ms_per_vector_step"]
        total = row["measurements"] + row["skipped"]
        canary = max(row["thread_canary_ratios"], default=None)
        skipped_text = (
            f"{row['skipped']} of {total} skipped (CPU contention: {row['threads']}-thread "
            f"canary up to {canary:.0f}× slower)"
            if row["skipped"] and canary is not None
            else (f"{row['skipped']} of {total} skipped" if row["skipped"] else "")
        )
        if median is None:
            rate = skipped_text
        else:
            rate = (
                f"{fmt_rate(median)} ({fmt_rate(row['min_env_steps_per_s'])}–"
                f"{fmt_rate(row['max_env_steps_per_s'])})"
                + (" (capped)" if row["any_capped"] else "")
                + (f"; {skipped_text}" if skipped_text else "")
            )
        lines.append(
            f"| {row['system']} | {row['batch']:,} "
            f"| {setting_label(row['system'], row['threads'], row['workers'])} | {rate} "
            f"| {'–' if ms is None else f'{ms:,.2f}'} "
            f"| {'–' if sweeps is None else f'{sweeps:.1f}'} "
            f"| {memory_text if row['system'] == TORCH else '–'} "
            f"| {fmt_ratio(None if sync_base is None or median is None else median / sync_base)} "
            f"| {fmt_ratio(None if anchor_base is None or median is None else median / anchor_base)} |"
        )
    return lines


def target_lines(report: dict[str, Any]) -> list[str]:
    """The verdict table."""
    rows = report["targets"]["scenarios"]
    if not rows:
        return ["No scenario with a target was measured."]
    lines = [
        f"| scenario | target at B={TARGET_BATCH:,} | measured (best setting) | by CPU setting | "
        "of target | speed-up needed | verdict |",
        "|---|---:|---:|---|---:|---:|---|",
    ]
    for key, row in rows.items():
        by_setting = ", ".join(
            f"{n}: {fmt_rate(v)}" for n, v in row["median_by_setting"].items() if v is not None
        )
        fraction = row["fraction_of_target"]
        best_setting = "" if row["best_setting"] is None else f" ({row['best_setting']})"
        lines.append(
            f"| {key} | {fmt_rate(row['target_env_steps_per_s'])} "
            f"| {fmt_rate(row['best_median_env_steps_per_s'])}{best_setting} "
            f"| {by_setting or '–'} "
            f"| {'–' if fraction is None else f'{fraction:.1%}'} "
            f"| {fmt_ratio(row['speed_up_needed'])} | {fmt_verdict(row['passed'])} |"
        )
    return lines


def cost_model_lines(report: dict[str, Any]) -> list[str]:
    """The fixed / per-instance split of a vector step at the target batch (``cost_model``)."""
    rows = report.get("cost_model") or {}
    if not rows:
        return []
    lines = [
        f"Where a vector step's time goes at B={TARGET_BATCH:,}: a two-point fit "
        "`t(B) = fixed + per_instance × B` through the medians at B="
        f"{TARGET_BATCH:,} and the largest B (see `cost_model` in the script). `fixed` is "
        "dispatch and Python (a cost per tensor op), `element work` the part that "
        "grows with B; `budget` is the time per vector step the target allows.",
        "",
        "| scenario | threads | ms / vector step | fixed ms | element work ms (µs / instance) "
        "| budget ms | fixed ≤ budget? | element work ≤ budget? |",
        "|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for row in rows.values():
        lines.append(
            f"| {row['scenario']} | {row['threads']} | {row['ms_per_vector_step']:.2f} "
            f"| {row['fixed_ms']:.2f} | {row['element_ms_at_target_batch']:.2f} "
            f"({row['per_instance_us']:.2f}) | {row['budget_ms']:.2f} "
            f"| {'yes' if row['fixed_ms'] <= row['budget_ms'] else 'no'} "
            f"| {'yes' if row['element_ms_at_target_batch'] <= row['budget_ms'] else 'no'} |"
        )
    return lines


def memory_lines(report: dict[str, Any]) -> list[str]:
    """Per-instance memory of the torch engine, per scenario."""
    lines = [
        "| scenario | state tensors / instance | of which RNG | RSS growth / instance after "
        f"reset | after {MEMORY_STEPS} steps | peak (VmHWM) | largest fields |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    on_cuda = report["settings"]["device"].startswith("cuda")
    for key, details in report["scenario_details"].items():
        state = details.get("state_memory")
        rss = (report["memory"] or {}).get(key) or {}
        prefix = "cuda" if on_cuda else "rss"
        peak = "cuda_peak" if on_cuda else "peak_rss"
        fields = []
        if state:
            biggest = sorted(
                state["fields_bytes_per_instance"].items(), key=lambda kv: kv[1], reverse=True
            )[:4]
            fields = [f"`{name}` {fmt_bytes(size)}" for name, size in biggest]
        lines.append(
            f"| {key} | {fmt_bytes(state['total_bytes_per_instance'] if state else None)} "
            f"| {fmt_bytes(state['rng_bytes_per_instance'] if state else None)} "
            f"| {fmt_bytes(rss.get(f'{prefix}_after_reset_bytes_per_instance'))} "
            f"| {fmt_bytes(rss.get(f'{prefix}_after_steps_bytes_per_instance'))} "
            f"| {fmt_bytes(rss.get(f'{peak}_bytes_per_instance'))} | {', '.join(fields) or '–'} |"
        )
    return lines


def profile_lines(profile: dict[str, Any]) -> list[str]:
    """The profile as Markdown lines."""
    tp, cp = profile["torch_profiler"], profile["cprofile"]
    sweeps = tp["sweeps_per_step"]
    structure = profile.get("loop_structure")
    structure_text = ""
    if structure and structure["mean_active_share_per_sweep"] is not None:
        structure_text = (
            f" Loop structure ({structure['steps']} more steps): "
            f"{structure['event_rounds_per_step']:.1f} event rounds and "
            f"{structure['sweeps_per_step']:.1f} sweeps per vector step; on average only "
            f"{structure['mean_active_share_per_sweep']:.0%} of the instances are active in a "
            f"sweep (≈ {structure['mean_events_per_instance_per_step']:.1f} event instants per "
            "instance and step), yet every sweep computes all B instances."
        )
    lines = [
        f"{profile['scenario']}, B={profile['batch']:,}, {profile['threads']} thread, "
        f"{profile['device']}, from the warmed state. `torch.profiler`: {tp['steps']} vector steps, "
        f"{tp['ms_per_step']:,.0f} ms/step, {'–' if sweeps is None else f'{sweeps:.1f}'} sweeps/step, "
        f"{tp['aten_calls_per_step']:,.0f} profiled op calls/step, nested ones included (mean "
        f"{tp['mean_us_per_op']:.1f} µs self time per call); op self time is "
        f"{tp['op_share_of_wall']:.0%} of the wall time (the rest: Python and dispatch)."
        + structure_text,
        "",
        "| op | calls / step | self ms | share of op time | µs / call |",
        "|---|---:|---:|---:|---:|",
    ]
    for row in tp["top_ops"]:
        lines.append(
            f"| `{row['op']}` | {row['calls_per_step']:,.0f} | {row['self_cpu_ms']:,.0f} "
            f"| {row['share_of_op_time']:.1%} | {row['us_per_call']:,.1f} |"
        )
    lines += [
        "",
        f"`cProfile` ({cp['steps']} steps, {cp['wall_s']:.1f} s): gymforge functions by cumulative "
        "time (share of the profiled total). A function's own time includes the tensor "
        "operators it applies (`&`, `|`, `~`, `==`, `*`, `[...]`), which cProfile does not see "
        "as calls; named torch functions (`torch.where`, `.any()`, `.gather()`) are listed "
        "separately:",
        "",
        "| function | calls | cumulative s | share | own s |",
        "|---|---:|---:|---:|---:|",
    ]
    for row in cp["gymforge_by_cumulative_time"][:12]:
        lines.append(
            f"| `{row['function']}` | {row['calls']:,} | {row['cumulative_s']:.2f} "
            f"| {row['cumulative_share']:.0%} | {row['own_s']:.2f} |"
        )
    lines += [
        "",
        "Top callables by own time:",
        "",
        "| callable | calls | own s | share |",
        "|---|---:|---:|---:|",
    ]
    for row in cp["top_by_own_time"][:10]:
        lines.append(
            f"| `{row['function']}` | {row['calls']:,} | {row['own_s']:.2f} "
            f"| {row['own_share']:.0%} |"
        )
    return lines


def render_markdown(report: dict[str, Any]) -> str:
    """The human-readable report."""
    machine, settings = report["machine"], report["settings"]
    versions = ", ".join(f"{k} {v}" for k, v in machine["versions"].items() if v is not None)
    device = settings["device"]
    load = machine["load_average_at_start"]
    lines = [
        "# LineFlow, batched: env steps per second of the torch engine, SimPy under "
        "SyncVectorEnv and lineflow-rl 0.5.0",
        "",
        f"Run {report['started_utc']} ({report['wall_s']:.0f} s) on {machine['platform']}, "
        f"{machine['cpu_count']} CPUs ({machine['cpu_model']}), Python {machine['python']}; "
        f"torch engine on `{device}`"
        + (f" ({machine['gpu']})" if machine["gpu"] else "")
        + (f"; load average at start {load[0]:.1f}" if load else "")
        + ". Aggregate env steps/s = B × vector steps / s. Random actions pre-sampled "
        f"({settings['action_batches']} batches reused cyclically); each measurement lasts about "
        f"{settings['target_seconds']:g} s (at least one vector step, stopped after "
        f"{settings['cap_seconds']:g} s); {settings['repeats']} interleaved round(s), median "
        "(min–max). Torch envs start timing from a line "
        f"{settings['warm_up_steps']} steps into its episode "
        + (
            f"(state tiled from one warmed B={settings['warm_up_batch']:,} env, see the module "
            "docstring)"
            if settings["warm_up"] == "tiled"
            else "(each warmed on its own)"
        )
        + "; lineflow-rl runs whole 4000-step episodes. A multi-thread measurement is skipped "
        f"when a thread canary (40 parallel adds) runs over {CONTENTION_RATIO:g}× slower with N "
        "threads than with 1 (other jobs on the cores: one engine step could then take "
        "minutes). `torch-workers` is the same env with `num_workers=K`: the batch split over "
        "K worker processes of one torch thread each, one CPU core each (the same results bit "
        "for bit; its engines run in the workers, so it has no sweep count or memory column). "
        "`sweeps / step` counts the engine's "
        "settle sweeps per vector step. Figures come from a noisy 2-core machine shared with "
        "other jobs: read ratios and orders of magnitude.",
        "",
        "## Targets (torch engine)",
        "",
        *target_lines(report),
        "",
    ]
    cost_lines = cost_model_lines(report)
    if cost_lines:
        lines += [*cost_lines, ""]
    for key in report["scenarios"]:
        scenario = report["scenarios"][key]
        lines += [
            f"## {key}: `{scenario['gym_id']}` (lineflow-rl `{scenario['lineflow']}`)",
            "",
            *scenario_table(report, key),
            "",
        ]
    lines += [
        "## Memory per instance (torch engine)",
        "",
        "State tensors: bytes of every tensor of the env's `state` dataclass plus its "
        "`InstanceRNG` tensors, / B. RSS growth: two fresh processes (B = "
        f"{MEMORY_SMALL_BATCH} and B = {max(settings['batch_sizes']):,}) that import gymforge, "
        f"build the env, reset it and step it {MEMORY_STEPS} times; (difference) / (difference "
        "in B)"
        + (" (CUDA: `torch.cuda.memory_allocated` instead of RSS)" if device != "cpu" else "")
        + ".",
        "",
        *memory_lines(report),
        "",
    ]
    profile = next(
        (d["profile"] for d in report["scenario_details"].values() if "profile" in d), None
    )
    if profile and "torch_profiler" in profile:
        lines += ["## Profile of the torch engine", "", *profile_lines(profile), ""]
    if report["anchor_skipped"]:
        lines += [f"Anchor skipped: {report['anchor_skipped']}.", ""]
    lines += [
        f"Versions: {versions}; git {machine['git_revision']}.",
        "",
        "Reproduce (from the repository root):",
        "",
        "```",
        report["command"],
        "```",
        "",
    ]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Entry point


def positive(kind: Callable[[str], Any]) -> Callable[[str], Any]:
    """An argparse type: ``kind`` and > 0."""

    def parse(text: str) -> Any:
        value = kind(text)
        if not value > 0 or (isinstance(value, float) and not math.isfinite(value)):
            raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
        return value

    return parse


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(
        description="Batched LineFlow env steps/s: torch engine vs. SimPy SyncVectorEnv vs. "
        "lineflow-rl 0.5.0."
    )
    parser.add_argument("--device", default="cpu", help="torch engine device: cpu or cuda[:N]")
    parser.add_argument(
        "--batch-sizes",
        nargs="+",
        type=positive(int),
        default=list(DEFAULT_BATCH_SIZES),
        metavar="B",
        help="torch engine batch sizes (default 1 64 1024 4096 16384)",
    )
    parser.add_argument(
        "--threads",
        nargs="+",
        type=positive(int),
        default=list(DEFAULT_THREADS),
        metavar="N",
        help=f"torch thread counts at B >= {MULTI_THREAD_MIN_BATCH} on CPU (default 1 2; "
        "smaller B use 1)",
    )
    parser.add_argument(
        "--workers",
        type=positive(int),
        default=DEFAULT_WORKERS,
        metavar="K",
        help=f"worker processes of the torch-workers system at B >= {MULTI_THREAD_MIN_BATCH} on "
        f"CPU, 1 thread each (default {DEFAULT_WORKERS}; 1: not measured)",
    )
    parser.add_argument(
        "--scenarios",
        nargs="+",
        default=list(SCENARIOS),
        metavar="KEY",
        help=f"subset of {', '.join(SCENARIOS)} (default: all)",
    )
    parser.add_argument("--repeats", type=positive(int), default=3, help="rounds (default 3)")
    parser.add_argument(
        "--target-seconds",
        type=positive(float),
        default=2.5,
        help="intended length of one measurement (default 2.5)",
    )
    parser.add_argument(
        "--cap-seconds",
        type=positive(float),
        default=10.0,
        help="stop a measurement after the step that passes this (default 10)",
    )
    parser.add_argument(
        "--warm-up",
        choices=("tiled", "own"),
        default="tiled",
        help="torch envs get the state of one warmed env (tiled, default) or warm up themselves",
    )
    parser.add_argument(
        "--warm-up-steps",
        type=int,
        default=150,
        help="untimed steps before timing (default 150)",
    )
    parser.add_argument(
        "--warm-up-batch",
        type=positive(int),
        default=1024,
        help="B of the warmed env whose state is tiled (default 1024)",
    )
    parser.add_argument(
        "--action-batches",
        type=positive(int),
        default=4,
        help="distinct pre-sampled action batches per env (default 4)",
    )
    parser.add_argument("--no-anchor", action="store_true", help="skip lineflow-rl")
    parser.add_argument("--no-sync", action="store_true", help="skip SimPy under SyncVectorEnv")
    parser.add_argument("--skip-memory", action="store_true", help="skip the RSS children")
    parser.add_argument("--skip-profile", action="store_true", help="skip the engine profile")
    parser.add_argument(
        "--profile-steps",
        type=positive(int),
        default=20,
        help=f"steps under torch.profiler ({PROFILE_SCENARIO}, B={PROFILE_BATCH}; default 20)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("benchmarks/results"),
        help="folder for the results (default benchmarks/results)",
    )
    args = parser.parse_args(argv)
    if not re.fullmatch(r"cpu|cuda(:\d+)?", args.device):
        parser.error(f"--device must be cpu or cuda[:N], got {args.device!r}")
    if args.warm_up_steps < 0:
        parser.error("--warm-up-steps must be >= 0")
    try:
        args.scenarios = common.parse_scenarios(args.scenarios, SCENARIOS)
    except argparse.ArgumentTypeError as error:
        parser.error(str(error))
    if not args.scenarios:
        parser.error("--scenarios selected nothing")
    args.batch_sizes = sorted(set(args.batch_sizes))
    return args


def cuda_unavailable(device: str) -> str | None:
    """Why the CUDA ``device`` cannot run the torch engine, or ``None`` (also for the CPU)."""
    if not device.startswith("cuda"):
        return None
    if not torch.cuda.is_available():
        return (
            f"torch {torch.__version__} reports no usable CUDA device (torch.version.cuda = "
            f"{torch.version.cuda})"
        )
    try:
        torch.zeros(1, device=device)
    except Exception as error:  # a bad index or a broken driver
        return f"cannot allocate on {device}: {type(error).__name__}: {error}"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, write the results and print the Markdown."""
    args = parse_args(argv)
    why = cuda_unavailable(args.device)
    if why is not None:
        print(f"Skipping the --device {args.device} measurement: {why}. Nothing written.")
        return 0
    on_cuda = args.device.startswith("cuda")
    settings = Settings(
        device=args.device,
        batch_sizes=args.batch_sizes,
        threads=[1] if on_cuda else sorted(set(args.threads)),
        workers=1 if on_cuda else args.workers,
        repeats=args.repeats,
        target_seconds=args.target_seconds,
        cap_seconds=args.cap_seconds,
        warm_up=args.warm_up,
        warm_up_steps=args.warm_up_steps,
        warm_up_batch=args.warm_up_batch,
        action_batches=args.action_batches,
        anchor=not args.no_anchor,
        sync=not args.no_sync,
        profile_steps=0 if args.skip_profile else args.profile_steps,
    )
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    clock = time.perf_counter()
    machine = machine_info(args.device)
    torch.set_num_threads(1)
    anchor, skipped = None, "disabled with --no-anchor"
    if settings.anchor:
        anchor, skipped = common.import_lineflow(single_thread=False)
        if anchor is None:
            print(f"Anchor lineflow-rl skipped: {skipped}.")
    print(
        f"Scenarios {', '.join(args.scenarios)}; torch on {args.device} at B = "
        f"{', '.join(map(str, settings.batch_sizes))} (threads {settings.threads} and "
        f"{settings.workers} worker processes at B >= "
        f"{MULTI_THREAD_MIN_BATCH}); {settings.repeats} rounds of ~{settings.target_seconds:g} s "
        "measurements.",
        flush=True,
    )
    measurements: list[Measurement] = []
    scenario_details: dict[str, Any] = {}
    memory: dict[str, Any] | None = None if args.skip_memory else {}
    for key in args.scenarios:
        scenario = SCENARIOS[key]
        profile = settings.profile_steps > 0 and key == PROFILE_SCENARIO
        rows, details = run_scenario(scenario, settings, anchor, profile)
        measurements += rows
        scenario_details[key] = details
        if memory is not None:
            memory[key] = measure_rss(scenario, settings)
    summary = summarise(measurements)
    report = {
        "benchmark": "lineflow_batched",
        "started_utc": started,
        "wall_s": time.perf_counter() - clock,
        "command": common.command_line(),
        "interpreter": common.interpreter_name(),
        "settings": asdict(settings),
        "systems": {
            TORCH: 'gym.make_vec(id, num_envs=B, vectorization_mode="vector_entry_point", '
            f'device="{args.device}")',
            SYNC: 'gym.make_vec(id, num_envs=B, vectorization_mode="sync")',
            LINEFLOW: "lineflow.simulation.LineSimulation(<line>, simulation_end=4001)",
        },
        "scenarios": {
            key: {
                "gym_id": SCENARIOS[key].gym_id,
                "lineflow": SCENARIOS[key].lineflow_text,
                "target_env_steps_per_s_at_4096": SCENARIOS[key].target,
            }
            for key in args.scenarios
        },
        "anchor_skipped": skipped if anchor is None else None,
        "machine": machine,
        "measurements": [asdict(m) for m in measurements],
        "summary": summary,
        "targets": verdicts(summary, args.scenarios, settings.threads, settings.workers),
        "cost_model": cost_model(summary, args.scenarios, settings.threads),
        "scenario_details": scenario_details,
        "memory": memory,
    }
    stem = "lineflow_batched_cuda" if on_cuda else "lineflow_batched"
    args.out.mkdir(parents=True, exist_ok=True)
    common.write_json(args.out / f"{stem}.json", report, indent=2)
    markdown = render_markdown(report)
    common.write_atomic(args.out / f"{stem}.md", markdown)
    print()
    print(markdown)
    print(f"Wrote {args.out / f'{stem}.json'} and {args.out / f'{stem}.md'}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
