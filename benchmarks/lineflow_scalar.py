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
    python -m benchmarks.lineflow_scalar [--episodes N] [--no-anchor] [--scenarios WT PD5 ...]
                                         [--skip-long] [--no-anchor-long] [--skip-memory]
                                         [--out benchmarks/results]

    Results go to ``<out>/lineflow_scalar.json`` (machine info, per-episode figures, medians,
    per-target verdicts, command) and ``<out>/lineflow_scalar.md`` (one table per target).

Figures are medians (with min and max) on a noisy 2-core machine; read the ratios, not the
absolute rates, and expect some run-to-run variation.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import gymnasium as gym

import gymforge  # noqa: F401  (registers the LineFlow ids with Gymnasium)
from benchmarks import common
from benchmarks.common import fmt_rate, fmt_verdict

SHORT_HORIZON = 4000
LONG_HORIZON = 40_000
CHUNK = 1000  # steps between two clock readings within an episode
EXTRA_ACTIONS = 10  # pre-sampled beyond the expected episode length, as a safety margin
WARM_UP_STEPS = 200
BASE_SEED = 1000
MEMORY_RUNS = 3
MEMORY_SEED = BASE_SEED
GYMFORGE = "gymforge"
LINEFLOW = "lineflow-rl"
VERSIONED_PACKAGES = ("gymforge", "lineflow-rl", "numpy", "torch", "simpy", "gymnasium", "pygame")
REPO_ROOT = Path(__file__).resolve().parent.parent

SPEED_TARGET = 5.0  # gymforge / lineflow-rl steps/s at the short horizon, at least
HORIZON_TARGET = 0.8  # gymforge steps/s at the long horizon / at the short one, at least
MEMORY_TARGET = 0.5  # gymforge / lineflow-rl peak RSS, at most

StepFn = Callable[[Any], tuple[Any, Any, bool, bool, Any]]


@dataclass(frozen=True)
class Scenario:
    """One benchmarked line: its gymforge id and the equivalent lineflow-rl construction."""

    key: str
    gym_id: str
    lineflow_class: str  # a name in lineflow.examples
    lineflow_kwargs: dict[str, Any]
    lineflow_text: str  # the constructor call as written in the report


SCENARIOS: dict[str, Scenario] = {
    s.key: s
    for s in (
        Scenario("WT", "LineFlow-WaitingTime-v0", "WaitingTime", {}, "WaitingTime()"),
        Scenario(
            "WTJ",
            "LineFlow-WaitingTimeJump-v0",
            "WaitingTime",
            {"with_jump": True, "t_jump_max": 2000},
            "WaitingTime(with_jump=True, t_jump_max=2000)",
        ),
        Scenario(
            "PD5",
            "LineFlow-PartDistribution-v0",
            "MultiProcess",
            {"alternate": False, "n_processes": 5},
            "MultiProcess(alternate=False, n_processes=5)",
        ),
        Scenario(
            "WA3",
            "LineFlow-WorkerAssignment-v0",
            "WorkerAssignment",
            {"n_assemblies": 3},
            "WorkerAssignment(n_assemblies=3)",
        ),
        Scenario(
            "CL3",
            "LineFlow-ComplexLine-v0",
            "ComplexLine",
            {"n_assemblies": 3, "n_workers": 9, "scrap_factor": 1 / 3, "alternate": False},
            "ComplexLine(n_assemblies=3, n_workers=9, scrap_factor=1/3, alternate=False)",
        ),
    )
}


@dataclass
class System:
    """One system under test on one scenario: how to build its env for a horizon (in steps)."""

    name: str
    scenario: str
    make: Callable[[int], Any]
    description: str
    envs: dict[int, Any] = field(default_factory=dict)

    def env(self, horizon: int) -> Any:
        """The env of ``horizon`` steps, built once and reused across episodes."""
        if horizon not in self.envs:
            self.envs[horizon] = self.make(horizon)
        return self.envs[horizon]

    def close(self) -> None:
        """Close and drop every env built so far."""
        for env in self.envs.values():
            with contextlib.suppress(Exception):
                env.close()
        self.envs.clear()


@dataclass
class Episode:
    """Timings of one episode of one system."""

    scenario: str
    system: str
    horizon: int
    phase: str  # "speed" (target 1), "long" (40k) or "paired" (4k, within the long episode)
    seed: int
    steps: int
    reset_s: float
    step_s: float
    steps_per_s: float
    chunk_steps_per_s: list[float]  # rate of each consecutive block of CHUNK steps (last partial)
    first_1000_steps_per_s: float
    last_1000_steps_per_s: float
    first_tenth_steps_per_s: float  # first / last tenth of the episode (whole CHUNKs, >= 1)
    last_tenth_steps_per_s: float


# --------------------------------------------------------------------------------------------
# Systems


def gymforge_factory(scenario: Scenario) -> Callable[[int], gym.Env]:
    """``horizon -> env`` for gymforge's ``scenario`` (step size 1), as users get it."""

    def make(horizon: int) -> gym.Env:
        if horizon == SHORT_HORIZON:
            return gym.make(scenario.gym_id)  # the default horizon
        return gym.make(scenario.gym_id, horizon=horizon)

    return make


def lineflow_factory(anchor: Any, scenario: Scenario) -> Callable[[int], Any]:
    """``horizon -> env`` for lineflow-rl's equivalent of ``scenario``."""
    line_simulation, examples = anchor
    line_class = getattr(examples, scenario.lineflow_class)

    def make(horizon: int) -> Any:
        # simulation_end = horizon + 1 gives exactly `horizon` steps (reset consumes one).
        return line_simulation(line_class(**scenario.lineflow_kwargs), simulation_end=horizon + 1)

    return make


def build_systems(scenario: Scenario, anchor: Any) -> list[System]:
    """The systems to measure on ``scenario``, gymforge first (the anchor only if imported)."""
    systems = [
        System(
            GYMFORGE,
            scenario.key,
            gymforge_factory(scenario),
            f'gym.make("{scenario.gym_id}"[, horizon=H])',
        )
    ]
    if anchor is not None:
        systems.append(
            System(
                LINEFLOW,
                scenario.key,
                lineflow_factory(anchor, scenario),
                f"LineSimulation({scenario.lineflow_text}, simulation_end=H + 1)",
            )
        )
    return systems


# --------------------------------------------------------------------------------------------
# Speed measurement


def sample_actions(env: Any, seed: int, count: int) -> list[Any]:
    """``count`` random actions from ``env.action_space.sample()``, seeded with ``seed``."""
    env.action_space.seed(seed)
    return [env.action_space.sample() for _ in range(count)]


def timed_steps(
    step: StepFn, actions: Sequence[Any], must_end: bool = True
) -> tuple[int, list[tuple[int, float]], bool]:
    """Step through ``actions`` until the episode ends (or, unless ``must_end``, they run out).

    Returns the number of steps, clock readings ``(steps done, perf_counter)`` (one at the start,
    one every ``CHUNK`` steps and one at the end) and whether the episode ended.
    """
    marks = [(0, time.perf_counter())]
    steps = 0
    for steps, action in enumerate(actions, start=1):
        _, _, terminated, truncated, _ = step(action)
        if terminated or truncated:
            marks.append((steps, time.perf_counter()))
            return steps, marks, True
        if steps % CHUNK == 0:
            marks.append((steps, time.perf_counter()))
    if must_end:
        raise RuntimeError(f"episode did not end within {len(actions)} steps")
    if marks[-1][0] != steps:
        marks.append((steps, time.perf_counter()))
    return steps, marks, False


def rate_between(marks: list[tuple[int, float]], start: int, stop: int) -> float:
    """Steps per second between the clock readings taken after ``start`` and ``stop`` steps."""
    times = dict(marks)
    return (stop - start) / (times[stop] - times[start])


def chunk_rates(marks: list[tuple[int, float]]) -> list[float]:
    """Steps per second of each block between consecutive clock readings."""
    return [(n1 - n0) / (t1 - t0) for (n0, t0), (n1, t1) in pairwise(marks)]


def run_episode(
    system: System, horizon: int, seed: int, phase: str = "speed", collect: bool = True
) -> Episode:
    """Reset ``system``'s env with ``seed``, then time its step loop over pre-sampled actions.

    ``collect`` runs a full garbage collection (untimed) before the episode.
    """
    env = system.env(horizon)
    actions = sample_actions(env, seed, horizon + EXTRA_ACTIONS)
    if collect:
        gc.collect()
    start = time.perf_counter()
    env.reset(seed=seed)
    reset_s = time.perf_counter() - start
    steps, marks, _ = timed_steps(env.step, actions)
    return make_episode(system, horizon, seed, phase, reset_s, steps, marks)


def run_long_paired(system: System, seed: int) -> tuple[Episode, list[Episode]]:
    """One ``LONG_HORIZON`` episode, timed in ``SHORT_HORIZON``-step segments with one untimed
    pause each, during which a ``SHORT_HORIZON``-step episode of the same system is timed.

    The long episode and its paired short episodes thus share the machine's noise (A/B
    interleaving within the long episode). Only the step loops are timed; no explicit garbage
    collection happens between segments, so collections of the long env's objects stay inside
    its own timing.
    """
    env = system.env(LONG_HORIZON)
    actions = sample_actions(env, seed, LONG_HORIZON + EXTRA_ACTIONS)
    gc.collect()
    start = time.perf_counter()
    env.reset(seed=seed)
    reset_s = time.perf_counter() - start
    stitched: list[tuple[int, float]] = [(0, 0.0)]  # (steps done, seconds of step loop so far)
    shorts: list[Episode] = []
    position, ended = 0, False
    while not ended and position < len(actions):
        segment = actions[position : position + SHORT_HORIZON]
        steps, marks, ended = timed_steps(env.step, segment, must_end=False)
        base_steps, base_s = stitched[-1]
        origin = marks[0][1]
        stitched += [(base_steps + n, base_s + t - origin) for n, t in marks[1:]]
        position += steps
        if not ended:
            paired_seed = BASE_SEED + len(shorts)
            shorts.append(
                run_episode(system, SHORT_HORIZON, paired_seed, phase="paired", collect=False)
            )
    if not ended:
        raise RuntimeError(f"episode did not end within {len(actions)} steps")
    long = make_episode(system, LONG_HORIZON, seed, "long", reset_s, position, stitched)
    return long, shorts


def make_episode(
    system: System,
    horizon: int,
    seed: int,
    phase: str,
    reset_s: float,
    steps: int,
    marks: list[tuple[int, float]],
) -> Episode:
    """The ``Episode`` record of one timed step loop with clock readings ``marks``."""
    if steps != horizon:
        print(f"  note: {system.scenario} {system.name} episode ran {steps} steps, not {horizon}")
    step_s = marks[-1][1] - marks[0][1]
    tenth = min(steps, max(CHUNK, steps // 10 // CHUNK * CHUNK))
    return Episode(
        scenario=system.scenario,
        system=system.name,
        horizon=horizon,
        phase=phase,
        seed=seed,
        steps=steps,
        reset_s=reset_s,
        step_s=step_s,
        steps_per_s=steps / step_s,
        chunk_steps_per_s=chunk_rates(marks),
        first_1000_steps_per_s=rate_between(marks, 0, min(CHUNK, steps)),
        last_1000_steps_per_s=rate_between(marks, last_mark(marks, steps - CHUNK), steps),
        first_tenth_steps_per_s=rate_between(marks, 0, tenth),
        last_tenth_steps_per_s=rate_between(marks, last_mark(marks, steps - tenth), steps),
    )


def last_mark(marks: list[tuple[int, float]], at: int) -> int:
    """The latest clock reading taken after at most ``max(at, 0)`` steps."""
    return max(n for n, _ in marks if n <= max(at, 0))


def warm_up(systems: list[System], steps: int = WARM_UP_STEPS) -> None:
    """A short untimed episode per system: first-call costs (caches, checkers) stay out."""
    for system in systems:
        env = system.env(SHORT_HORIZON)
        env.reset(seed=0)
        for action in sample_actions(env, 0, steps):
            env.step(action)


def log_episode(episode: Episode, index: int, episodes: int) -> None:
    """One progress line."""
    print(
        f"  {episode.scenario:<4} {episode.system:<12} horizon {episode.horizon:>6}  "
        f"episode {index + 1}/{episodes}  {episode.steps_per_s:>9.0f} steps/s  "
        f"(first/last {CHUNK}: {episode.first_1000_steps_per_s:.0f}/"
        f"{episode.last_1000_steps_per_s:.0f})",
        flush=True,
    )


def run_interleaved(systems: list[System], horizon: int, episodes: int) -> list[Episode]:
    """``episodes`` rounds, each running one episode of every system in turn (A, B, A, B, ...)."""
    results = []
    for index in range(episodes):
        seed = BASE_SEED + index
        for system in systems:
            episode = run_episode(system, horizon, seed)
            results.append(episode)
            log_episode(episode, index, episodes)
    return results


def run_scenario(
    scenario: Scenario, anchor: Any, episodes: int, long: bool, anchor_long: bool
) -> list[Episode]:
    """Targets 1 and 2 for one scenario: interleaved short episodes, then the long ones."""
    systems = build_systems(scenario, anchor)
    try:
        warm_up(systems)
        results = run_interleaved(systems, SHORT_HORIZON, episodes)
        if long:
            for system in systems:
                if system.name == GYMFORGE:
                    episode, paired = run_long_paired(system, BASE_SEED)
                    results += [episode, *paired]
                    rates = [e.steps_per_s for e in paired]
                    log_episode(episode, 0, 1)
                    print(
                        f"  {scenario.key:<4} {system.name:<12} horizon {SHORT_HORIZON:>6}  "
                        f"{len(paired)} paired episodes (between its segments): median "
                        f"{statistics.median(rates):.0f} steps/s",
                        flush=True,
                    )
                elif anchor_long and scenario.key == "WT":
                    episode = run_episode(system, LONG_HORIZON, BASE_SEED, phase="long")
                    results.append(episode)
                    log_episode(episode, 0, 1)
    finally:
        for system in systems:
            system.close()
    return results


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


# --------------------------------------------------------------------------------------------
# Summary and verdicts


def summary_key(scenario: str, system: str, horizon: int, phase: str = "") -> str:
    """The key of one group of episodes in the summary (``phase`` only for "paired")."""
    return f"{scenario}/{system}@{horizon}" + ("/paired" if phase == "paired" else "")


def summarise(episodes: list[Episode]) -> dict[str, dict[str, Any]]:
    """Median, min and max steps/s per ``"scenario/system@horizon"``."""
    groups: dict[str, list[Episode]] = {}
    for episode in episodes:
        key = summary_key(episode.scenario, episode.system, episode.horizon, episode.phase)
        groups.setdefault(key, []).append(episode)
    summary = {}
    for key, group in groups.items():
        rates = [e.steps_per_s for e in group]
        summary[key] = {
            "scenario": group[0].scenario,
            "system": group[0].system,
            "horizon": group[0].horizon,
            "phase": group[0].phase,
            "episodes": len(group),
            "median_steps_per_s": statistics.median(rates),
            "min_steps_per_s": min(rates),
            "max_steps_per_s": max(rates),
            "median_reset_s": statistics.median(e.reset_s for e in group),
            "median_first_1000_steps_per_s": statistics.median(
                e.first_1000_steps_per_s for e in group
            ),
            "median_last_1000_steps_per_s": statistics.median(
                e.last_1000_steps_per_s for e in group
            ),
            "median_first_tenth_steps_per_s": statistics.median(
                e.first_tenth_steps_per_s for e in group
            ),
            "median_last_tenth_steps_per_s": statistics.median(
                e.last_tenth_steps_per_s for e in group
            ),
        }
    return summary


def median_rate(
    summary: dict[str, dict[str, Any]], scenario: str, system: str, horizon: int, phase: str = ""
) -> float | None:
    """The median steps/s of one group, or ``None`` when it was not measured."""
    row = summary.get(summary_key(scenario, system, horizon, phase))
    return None if row is None else row["median_steps_per_s"]


def speed_verdicts(summary: dict[str, dict[str, Any]], scenarios: list[str]) -> dict[str, Any]:
    """Target 1 per scenario: gymforge / lineflow-rl median steps/s at the short horizon."""
    rows = {}
    for key in scenarios:
        ours = median_rate(summary, key, GYMFORGE, SHORT_HORIZON)
        theirs = median_rate(summary, key, LINEFLOW, SHORT_HORIZON)
        ratio = None if ours is None or theirs is None else ours / theirs
        rows[key] = {
            "gymforge_median_steps_per_s": ours,
            "lineflow_median_steps_per_s": theirs,
            "ratio": ratio,
            "passed": None if ratio is None else ratio >= SPEED_TARGET,
        }
    return {"target": f">= {SPEED_TARGET:g}x", "scenarios": rows, "passed": all_passed(rows)}


def horizon_verdicts(summary: dict[str, dict[str, Any]], scenarios: list[str]) -> dict[str, Any]:
    """Target 2 per scenario: gymforge steps/s at the long horizon / at the short one.

    The verdict uses the short episodes paired with (run between the segments of) the long
    episode; the ratio to the target-1 median, measured at another time, is reported too.
    """
    rows = {}
    for key in scenarios:
        short = median_rate(summary, key, GYMFORGE, SHORT_HORIZON)
        paired = median_rate(summary, key, GYMFORGE, SHORT_HORIZON, "paired")
        long = median_rate(summary, key, GYMFORGE, LONG_HORIZON)
        ratio = None if paired is None or long is None else long / paired
        long_row = summary.get(summary_key(key, GYMFORGE, LONG_HORIZON))
        rows[key] = {
            "short_median_steps_per_s": short,
            "paired_short_median_steps_per_s": paired,
            "long_steps_per_s": long,
            "ratio_to_target1_median": None if short is None or long is None else long / short,
            "long_last_over_first_tenth": None
            if long_row is None
            else long_row["median_last_tenth_steps_per_s"]
            / long_row["median_first_tenth_steps_per_s"],
            "ratio": ratio,
            "passed": None if ratio is None else ratio >= HORIZON_TARGET,
        }
    return {"target": f">= {HORIZON_TARGET:g}", "scenarios": rows, "passed": all_passed(rows)}


def memory_verdict(summary: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Target 3: gymforge / lineflow-rl median peak RSS, and torch kept out of gymforge."""
    ours = summary.get(GYMFORGE, {}).get("median_peak_rss_kib")
    theirs = summary.get(LINEFLOW, {}).get("median_peak_rss_kib")
    ratio = None if ours is None or theirs is None else ours / theirs
    torch_imported = summary.get(GYMFORGE, {}).get("torch_imported")
    return {
        "target": f"<= {MEMORY_TARGET:g}",
        "gymforge_median_peak_rss_kib": ours,
        "lineflow_median_peak_rss_kib": theirs,
        "ratio": ratio,
        "passed": None if ratio is None else ratio <= MEMORY_TARGET,
        "gymforge_torch_imported": torch_imported,
        "torch_check_passed": None if torch_imported is None else not torch_imported,
    }


def all_passed(rows: dict[str, dict[str, Any]]) -> bool | None:
    """``False`` if any row failed, ``True`` if all passed, else ``None`` (not all measured)."""
    verdicts = [row["passed"] for row in rows.values()]
    if False in verdicts:
        return False
    if None in verdicts or not verdicts:
        return None
    return True


# --------------------------------------------------------------------------------------------
# Reporting


def machine_info() -> dict[str, Any]:
    """Platform, CPUs, interpreter, thread settings and package versions."""
    torch = sys.modules.get("torch")
    extra = {
        "python_implementation": platform.python_implementation(),
        "torch_num_threads": None if torch is None else torch.get_num_threads(),
    }
    return common.machine_info(VERSIONED_PACKAGES, extra)


def fmt_mib(kib: float | None) -> str:
    """KiB as MiB with one decimal."""
    return "–" if kib is None else f"{kib / 1024:,.1f}"


def fmt_range(row: dict[str, Any] | None) -> str:
    """``median (min–max)`` of a summary row."""
    if row is None:
        return "–"
    if row["episodes"] == 1:
        return fmt_rate(row["median_steps_per_s"])
    return (
        f"{fmt_rate(row['median_steps_per_s'])} "
        f"({fmt_rate(row['min_steps_per_s'])}–{fmt_rate(row['max_steps_per_s'])})"
    )


def speed_table(report: dict[str, Any]) -> list[str]:
    """Target 1 as Markdown lines."""
    summary = report["summary"]
    lines = [
        f"| scenario | gymforge steps/s, median (min–max) | lineflow-rl steps/s, median "
        f"(min–max) | ratio | ≥ {SPEED_TARGET:g}× |",
        "|---|---|---|---:|---|",
    ]
    for key, row in report["targets"]["speed"]["scenarios"].items():
        ratio = "–" if row["ratio"] is None else f"{row['ratio']:.1f}×"
        lines.append(
            f"| {key} | {fmt_range(summary.get(summary_key(key, GYMFORGE, SHORT_HORIZON)))} "
            f"| {fmt_range(summary.get(summary_key(key, LINEFLOW, SHORT_HORIZON)))} "
            f"| {ratio} | {fmt_verdict(row['passed'])} |"
        )
    return lines


def horizon_table(report: dict[str, Any]) -> list[str]:
    """Target 2 as Markdown lines (plus lineflow-rl's long WT episode, if run)."""
    summary = report["summary"]
    lines = [
        f"| scenario | system | {LONG_HORIZON:,}-step steps/s | paired {SHORT_HORIZON:,}-step "
        f"median steps/s | **long / paired** | ≥ {HORIZON_TARGET:g} | target-1 median steps/s "
        f"| long / target-1 | first / last {LONG_HORIZON // 10:,} steps of the long one |",
        "|---|---|---:|---:|---:|---|---:|---:|---|",
    ]

    def ratio_text(value: float | None) -> str:
        return "–" if value is None else f"{value:.2f}"

    for key, row in report["targets"]["horizon"]["scenarios"].items():
        for system in (GYMFORGE, LINEFLOW):
            long_row = summary.get(summary_key(key, system, LONG_HORIZON))
            if system == LINEFLOW and long_row is None:
                continue
            short = median_rate(summary, key, system, SHORT_HORIZON)
            long = None if long_row is None else long_row["median_steps_per_s"]
            chunks = (
                "–"
                if long_row is None
                else f"{fmt_rate(long_row['median_first_tenth_steps_per_s'])} / "
                f"{fmt_rate(long_row['median_last_tenth_steps_per_s'])}"
            )
            if system == GYMFORGE:
                paired, ratio = row["paired_short_median_steps_per_s"], row["ratio"]
                verdict = fmt_verdict(row["passed"])
            else:
                paired, ratio, verdict = None, None, "(anchor, no target)"
            unpaired = None if short is None or long is None else long / short
            lines.append(
                f"| {key} | {system} | {fmt_rate(long)} | {fmt_rate(paired)} "
                f"| {ratio_text(ratio)} | {verdict} | {fmt_rate(short)} | {ratio_text(unpaired)} "
                f"| {chunks} |"
            )
    return lines


def memory_table(report: dict[str, Any]) -> list[str]:
    """Target 3 as Markdown lines."""
    memory = report["memory"]
    lines = [
        "| system (fresh process, import + one WT episode) | runs | peak RSS MiB, median "
        "(min–max) | after import MiB | `torch` in `sys.modules` |",
        "|---|---:|---|---:|---|",
    ]
    for system, row in memory["summary"].items():
        if not row["runs"]:
            lines.append(f"| {system} | 0 ({row['errors']} failed) | – | – | – |")
            continue
        lines.append(
            f"| {system} | {row['runs']} | {fmt_mib(row['median_peak_rss_kib'])} "
            f"({fmt_mib(row['min_peak_rss_kib'])}–{fmt_mib(row['max_peak_rss_kib'])}) "
            f"| {fmt_mib(row['median_import_peak_rss_kib'])} | {row['torch_imported']} |"
        )
    return lines


def verdict_lines(report: dict[str, Any]) -> list[str]:
    """One line per target."""
    targets = report["targets"]
    lines = []
    speed = targets.get("speed")
    if speed is not None:
        why = ""
        if speed["passed"] is None:
            why = f" (anchor skipped: {report['anchor_skipped']})"
        lines.append(
            f"- Target 1, gymforge ≥ {SPEED_TARGET:g}× lineflow-rl steps/s on every scenario: "
            f"{fmt_verdict(speed['passed'])}{why}."
        )
    horizon = targets.get("horizon")
    if horizon is not None:
        lines.append(
            f"- Target 2, gymforge {LONG_HORIZON:,}-step steps/s ≥ {HORIZON_TARGET:g}× the "
            f"{SHORT_HORIZON:,}-step figure on every scenario: {fmt_verdict(horizon['passed'])}."
        )
    else:
        lines.append("- Target 2: skipped (--skip-long).")
    memory = targets.get("memory")
    if memory is not None:
        ratio = "" if memory["ratio"] is None else f" (ratio {memory['ratio']:.2f})"
        lines.append(
            f"- Target 3, gymforge peak RSS ≤ {MEMORY_TARGET:.0%} of lineflow-rl's: "
            f"{fmt_verdict(memory['passed'])}{ratio}; torch not imported by gymforge: "
            f"{fmt_verdict(memory['torch_check_passed'])}."
        )
    else:
        lines.append("- Target 3: skipped (--skip-memory).")
    return lines


def render_markdown(report: dict[str, Any]) -> str:
    """The human-readable report."""
    machine = report["machine"]
    versions = ", ".join(f"{k} {v}" for k, v in machine["versions"].items() if v is not None)
    episodes = report["method"]["episodes_per_system"]
    lines = [
        "# LineFlow, scalar env: steps per second and memory, gymforge vs. lineflow-rl 0.5.0",
        "",
        f"Run {report['started_utc']} ({report['wall_s']:.0f} s) on {machine['platform']}, "
        f"{machine['cpu_count']} CPUs, Python {machine['python']}. Random actions pre-sampled with "
        "`action_space.sample()`, step loop timed, episodes interleaved gymforge / lineflow-rl "
        f"with the same seeds, {WARM_UP_STEPS}-step warm-up, `torch.set_num_threads(1)` "
        "(lineflow-rl imports torch). Figures are medians on a noisy 2-core machine: compare "
        "ratios, not absolute rates.",
        "",
        *verdict_lines(report),
        "",
        f"## Target 1: steps/s at horizon {SHORT_HORIZON:,} ({episodes} episode(s) per system)",
        "",
        *speed_table(report),
        "",
    ]
    if report["anchor_skipped"]:
        lines += [f"Anchor skipped: {report['anchor_skipped']}.", ""]
    if "horizon" in report["targets"]:
        lines += [
            f"## Target 2: gymforge steps/s at horizon {LONG_HORIZON:,} vs. {SHORT_HORIZON:,}",
            "",
            f"One {LONG_HORIZON:,}-step episode per scenario (`gym.make(id, horizon="
            f"{LONG_HORIZON})`, seed {BASE_SEED}), timed in {SHORT_HORIZON:,}-step segments; "
            f"between two segments (clock stopped) one {SHORT_HORIZON:,}-step episode of the "
            "same scenario is timed, so the long episode and these paired short ones share the "
            "machine's noise. The verdict is long / median of the paired short episodes; the "
            "ratio to the target-1 median (measured earlier) is shown for reference.",
            "",
            *horizon_table(report),
            "",
        ]
    if report["memory"] is not None:
        lines += [
            "## Target 3: peak RSS of a fresh process",
            "",
            "Each child imports its package and runs one WT episode with random actions, then "
            "prints its peak RSS (`VmHWM` of `/proc/self/status`; `ru_maxrss` is not used because "
            "Linux carries it over from the spawning process across `execve`); median of "
            f"{report['memory']['runs_per_system']} interleaved children per system. gymforge: `import gymforge`, "
            '`gym.make("LineFlow-WaitingTime-v0")`. lineflow-rl: `import lineflow.simulation, '
            "lineflow.examples`, `LineSimulation(WaitingTime(), simulation_end=4001)`.",
            "",
            *memory_table(report),
            "",
        ]
    lines += [
        "Systems:",
        "",
        *(
            f"- {scenario}: {', '.join(f'{name} `{text}`' for name, text in systems.items())}"
            for scenario, systems in report["systems"].items()
        ),
        "",
        f"Versions: {versions}.",
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
