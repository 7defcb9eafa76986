"""Scalar LineFlow speed and memory: gymforge vs. the anchor lineflow-rl 0.5.0.

One run records the three speed targets of the "LineFlow complete" issue, on five scenarios:

=====  ===========================================  ===========================================
key    gymforge (``gym.make``)                       lineflow-rl 0.5.0 (``lineflow.examples``)
=====  ===========================================  ===========================================
WT     ``LineFlow-WaitingTime-v0``                   ``WaitingTime()``
WTJ    ``LineFlow-WaitingTimeJump-v0``               ``WaitingTime(with_jump=True, t_jump_max=2000)``
PD5    ``LineFlow-PartDistribution-v0`` (k=5)        ``MultiProcess(alternate=False, n_processes=5)``
WA3    ``LineFlow-WorkerAssignment-v0`` (k=3)        ``WorkerAssignment(n_assemblies=3)``
CL3    ``LineFlow-ComplexLine-v0`` (k=3)             ``ComplexLine(n_assemblies=3, n_workers=9,
                                                      scrap_factor=1/3, alternate=False)``
=====  ===========================================  ===========================================

Each lineflow-rl line is wrapped as ``lineflow.simulation.LineSimulation(line,
simulation_end=H + 1)``, which gives exactly ``H`` steps (its ``reset`` consumes one time unit);
gymforge's default horizon is 4000 time units at step size 1, i.e. 4000 steps.

Targets
    1. Speed: gymforge >= 5x lineflow-rl env steps/s on each scenario (4000-step episodes, median
       over ``--episodes`` episodes per system).
    2. Horizon: gymforge's steps/s in one 40,000-step episode (``gym.make(id, horizon=40000)``)
       >= 0.8x its 4000-step figure, per scenario (per-step cost must not grow with the episode).
       The long episode is timed in 4000-step segments with a 4000-step episode of the same env
       timed between each two (clock stopped), and compared with the median of these paired
       episodes: a lone long episode against a median measured minutes earlier is at the mercy
       of whatever else the machine runs meanwhile. The ratio to the target-1 median is reported
       too.
       The lineflow-rl 40,000-step WT episode (its per-step cost grows: O(n^2) episodes, ~45 s)
       is run for comparison unless ``--no-anchor-long``.
    3. Memory: peak RSS of a fresh process that imports gymforge and runs one WT episode
       <= 50% of a fresh process that imports lineflow-rl (``lineflow.simulation`` and
       ``lineflow.examples``) and runs one WT episode; median of 3 subprocesses each
       (``VmHWM`` from ``/proc/self/status``, KiB; see ``_PEAK_CODE`` for why not ``ru_maxrss``,
       which is recorded too). The gymforge child also reports whether ``torch`` ended up
       in ``sys.modules`` (it must not).

Method (speed)
    Each episode is reset with the same seed for both systems; its random actions are drawn with
    ``env.action_space.sample()`` (action space seeded with the episode seed) *before* the clock
    starts, and only the ``step`` loop is timed (``reset`` is timed separately). Episodes are
    interleaved (gymforge, lineflow, gymforge, lineflow, ...) so machine noise hits both alike,
    after an untimed 200-step warm-up of each env. ``torch.set_num_threads(1)`` is set
    deliberately once lineflow-rl is imported (lineflow imports torch; gymforge does not).
    lineflow-rl's WTJ draws its jump from numpy's global state, so its WTJ episodes are not
    reproducible from the seed; the others are.

How to run (from the repository root)
    python -m benchmarks.lineflow.scalar [--episodes N] [--no-anchor] [--scenarios WT PD5 ...]
                                         [--skip-long] [--no-anchor-long] [--skip-memory]
                                         [--out benchmarks/results]

    Results go to ``<out>/lineflow_scalar.json`` (machine info, per-episode figures, medians,
    per-target verdicts, command) and ``<out>/lineflow_scalar.md`` (one table per target).

Figures are medians (with min and max) on a noisy 2-core machine; read the ratios, not the
absolute rates, and expect some run-to-run variation.

Code
    This module is the command line and the run order. The work lives in
    ``scalar_setup.py`` (constants, scenarios, records, the two systems),
    ``scalar_measure.py`` (timed episodes), ``scalar_memory.py`` (peak RSS in fresh
    subprocesses), ``scalar_summary.py`` (medians, verdicts) and ``scalar_report.py``
    (machine facts, the Markdown).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import gymforge  # noqa: F401  (registers the LineFlow ids with Gymnasium)
from benchmarks import common
from benchmarks.lineflow.scalar_measure import run_scenario
from benchmarks.lineflow.scalar_memory import measure_memory, memory_child_code, summarise_memory
from benchmarks.lineflow.scalar_report import machine_info, render_markdown
from benchmarks.lineflow.scalar_setup import (
    BASE_SEED,
    CHUNK,
    GYMFORGE,
    LINEFLOW,
    LONG_HORIZON,
    MEMORY_RUNS,
    MEMORY_SEED,
    SHORT_HORIZON,
    WARM_UP_STEPS,
    Episode,
    build_systems,
)
from benchmarks.lineflow.scalar_summary import (
    horizon_verdicts,
    memory_verdict,
    speed_verdicts,
    summarise,
)
from benchmarks.lineflow.scenarios import SCENARIOS

# --------------------------------------------------------------------------------------------
# Entry point


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(
        description="Scalar LineFlow steps/s and memory: gymforge vs. lineflow-rl 0.5.0."
    )
    parser.add_argument(
        "--episodes",
        type=int,
        default=5,
        help=f"episodes per system and scenario at horizon {SHORT_HORIZON} (default 5, min 3 "
        "for the targets)",
    )
    parser.add_argument(
        "--no-anchor", action="store_true", help="measure gymforge only, skip lineflow-rl"
    )
    parser.add_argument(
        "--scenarios",
        nargs="+",
        default=list(SCENARIOS),
        metavar="KEY",
        help=f"subset of {', '.join(SCENARIOS)} (default: all)",
    )
    parser.add_argument(
        "--skip-long",
        action="store_true",
        help=f"skip the {LONG_HORIZON:,}-step episodes (target 2)",
    )
    parser.add_argument(
        "--no-anchor-long",
        action="store_true",
        help=f"skip lineflow-rl's {LONG_HORIZON:,}-step WT episode (~45 s; no target depends on it)",
    )
    parser.add_argument(
        "--skip-memory", action="store_true", help="skip the peak-RSS subprocesses (target 3)"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("benchmarks/results"),
        help="folder for lineflow_scalar.json and .md (default benchmarks/results)",
    )
    args = parser.parse_args(argv)
    if args.episodes < 1:
        parser.error("--episodes must be >= 1")
    try:
        args.scenarios = common.parse_scenarios(args.scenarios, SCENARIOS)
    except argparse.ArgumentTypeError as error:
        parser.error(str(error))
    if not args.scenarios:
        parser.error("--scenarios selected nothing")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, write the results and print the tables."""
    args = parse_args(argv)
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    clock = time.perf_counter()
    anchor, skipped = (None, "disabled with --no-anchor")
    if not args.no_anchor:
        anchor, skipped = common.import_lineflow()
    if anchor is not None:
        print("torch.set_num_threads(1) set deliberately (lineflow-rl imports torch).")
    else:
        print(f"Anchor lineflow-rl skipped: {skipped}.")
    if args.episodes < 3:
        print(f"note: {args.episodes} episode(s) per system; the targets ask for a median of >= 3.")
    print(
        f"Scenarios {', '.join(args.scenarios)}; {args.episodes} episode(s) per system at horizon "
        f"{SHORT_HORIZON}, interleaved"
        + ("" if args.skip_long else f"; one {LONG_HORIZON}-step episode each")
        + ("" if args.skip_memory else "; memory subprocesses")
        + ".",
        flush=True,
    )

    episodes: list[Episode] = []
    for key in args.scenarios:
        episodes += run_scenario(
            SCENARIOS[key],
            anchor,
            args.episodes,
            long=not args.skip_long,
            anchor_long=not args.no_anchor_long,
        )

    memory = None
    if not args.skip_memory:
        memory_systems = [GYMFORGE] if anchor is None else [GYMFORGE, LINEFLOW]
        runs = measure_memory(memory_systems, MEMORY_RUNS)
        memory = {
            "runs_per_system": MEMORY_RUNS,
            "seed": MEMORY_SEED,
            "code": {system: memory_child_code(system) for system in memory_systems},
            "runs": runs,
            "summary": summarise_memory(runs),
        }

    summary = summarise(episodes)
    targets: dict[str, Any] = {"speed": speed_verdicts(summary, args.scenarios)}
    if not args.skip_long:
        targets["horizon"] = horizon_verdicts(summary, args.scenarios)
    if memory is not None:
        targets["memory"] = memory_verdict(memory["summary"])
    all_systems = {
        key: {s.name: s.description for s in build_systems(SCENARIOS[key], anchor)}
        for key in args.scenarios
    }
    report = {
        "benchmark": "lineflow_scalar",
        "started_utc": started,
        "wall_s": time.perf_counter() - clock,
        "command": common.command_line(),
        "interpreter": common.interpreter_name(),
        "method": {
            "actions": "env.action_space.sample(), seeded with the episode seed, pre-sampled "
            "before the clock starts (same for both systems)",
            "timed": "the step loop only; reset timed separately",
            "interleaved": True,
            "episodes_per_system": args.episodes,
            "warm_up_steps_per_system": WARM_UP_STEPS,
            "chunk_steps": CHUNK,
            "seeds": f"episode i uses seed {BASE_SEED} + i for both systems; long episodes "
            f"seed {BASE_SEED}",
            "short_horizon": SHORT_HORIZON,
            "long_horizon": None if args.skip_long else LONG_HORIZON,
            "anchor_long_horizon": not args.skip_long and not args.no_anchor_long,
            "torch_num_threads": 1,
        },
        "scenarios": {
            key: {"gym_id": SCENARIOS[key].gym_id, "lineflow": SCENARIOS[key].lineflow_text}
            for key in args.scenarios
        },
        "systems": all_systems,
        "anchor_skipped": skipped,
        "machine": machine_info(),
        "episodes": [asdict(e) for e in episodes],
        "summary": summary,
        "memory": memory,
        "targets": targets,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    common.write_json(args.out / "lineflow_scalar.json", report, indent=2)
    markdown = render_markdown(report)
    common.write_atomic(args.out / "lineflow_scalar.md", markdown)

    print()
    print(markdown)
    print(f"Wrote {args.out / 'lineflow_scalar.json'} and {args.out / 'lineflow_scalar.md'}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
