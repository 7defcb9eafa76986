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
               anchor, built as in ``scalar.py``), B = 1
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
      deterministic) and copies the slice of its own instances (``warm.warm_shard``).
      ``--warm-up own`` warms every env itself instead (slow at large B). The SimPy envs get an
      untimed warm-up of ``--warm-up-steps`` steps too; lineflow-rl a 200-step one.
    * Each torch/SimPy configuration is then calibrated (untimed steps, >= 1 and >= 0.3 s) to
      pick ``N`` vector steps per measurement so that one measurement lasts about
      ``--target-seconds`` (2.5 s); a measurement stops early after ``--cap-seconds`` (10 s) and
      its rate comes from the steps completed. lineflow-rl is measured as in
      ``scalar.py``: one whole 4000-step episode per measurement (reset untimed).
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
    python -m benchmarks.lineflow.batched               # everything, CPU (about 9 minutes)
    python -m benchmarks.lineflow.batched --scenarios WT --batch-sizes 1 64 4096 --repeats 1
    python -m benchmarks.lineflow.batched --no-anchor --no-sync --skip-memory --skip-profile
    python -m benchmarks.lineflow.batched --out /tmp/results

    Results go to ``<out>/lineflow_batched.json`` (machine info, versions, every measurement,
    medians, verdicts, memory, profile, the exact command) and ``<out>/lineflow_batched.md``.

GPU
    ``--device cuda`` runs the torch engine on CUDA (SimPy and lineflow-rl stay on the CPU;
    thread count fixed at 1; timing ends with ``torch.cuda.synchronize()``), and writes
    ``<out>/lineflow_batched_cuda.{json,md}`` so the CPU results are not overwritten. Without a
    usable CUDA device it prints why and exits with status 0, writing nothing. On a GPU machine:

        bash benchmarks/lineflow/batched_gpu.sh OUT_DIR     # or, by hand:
        python -m benchmarks.lineflow.batched --device cuda --batch-sizes 1 1024 4096 16384 65536 \\
            --out OUT_DIR

    The shell script picks an interpreter (``$PYTHON``, ``.venv/bin/python``, ``python3``),
    records ``nvidia-smi`` and runs the measurement within a few minutes of device time.

Figures are medians on a noisy 2-core machine that other jobs share: read the ratios and the
orders of magnitude, not the last digit.

Code
    This module is the command line and the run order. The work lives in
    ``batched_setup.py`` (constants, scenarios, records, env constructors),
    ``batched_measure.py`` (timed steps, calibration, one scenario's run),
    ``batched_profile.py``, ``batched_memory.py``, ``batched_summary.py``
    (medians, verdicts, cost model) and ``batched_report.py`` (the Markdown).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

import gymforge  # noqa: F401  (registers the LineFlow ids with Gymnasium)
from benchmarks import common
from benchmarks.lineflow.batched_measure import run_scenario
from benchmarks.lineflow.batched_memory import measure_rss
from benchmarks.lineflow.batched_report import render_markdown
from benchmarks.lineflow.batched_setup import (
    DEFAULT_BATCH_SIZES,
    DEFAULT_THREADS,
    DEFAULT_WORKERS,
    LINEFLOW,
    MULTI_THREAD_MIN_BATCH,
    PROFILE_BATCH,
    PROFILE_SCENARIO,
    SCENARIOS,
    SYNC,
    TORCH,
    Measurement,
    Settings,
)
from benchmarks.lineflow.batched_summary import cost_model, machine_info, summarise, verdicts

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
