"""The speed measurement of ``scalar.py``: pre-sampled actions, timed episodes with clock
readings every ``CHUNK`` steps, the paired long episodes and the interleaved runs.

The timing loops live here alone so that what is timed can be read in one place.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from benchmarks.lineflow.scalar_setup import (
    BASE_SEED,
    CHUNK,
    EXTRA_ACTIONS,
    GYMFORGE,
    LONG_HORIZON,
    SHORT_HORIZON,
    WARM_UP_STEPS,
    Episode,
    StepFn,
    System,
    build_systems,
)
from benchmarks.lineflow.scenarios import Scenario

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
