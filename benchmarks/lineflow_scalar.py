"""Scalar LineFlow speed: gymforge vs. the anchor lineflow-rl 0.5.0 on the WaitingTime line.

What it measures
    Environment steps per second of one (scalar, non-vectorised) env driven by random actions,
    on the WaitingTime line:

    * gymforge: ``gym.make("LineFlow-WaitingTime-v0")`` (the exact SimPy engine, behind the
      standard ``gym.make`` wrappers), horizon 4000 time units at step size 1 = 4000 steps.
    * anchor: lineflow-rl 0.5.0, ``LineSimulation(WaitingTime(), simulation_end=4001)`` (also
      4000 steps per episode). Optional: skipped, and said so, when ``import lineflow`` fails.

    Both systems are measured the same way: each episode is reset with the same seed for both,
    its random actions are drawn with ``env.action_space.sample()`` (action space seeded with the
    episode seed) *before* the clock starts, and only the ``step`` loop is timed (``reset`` is
    timed separately and reported on its own). Episodes are interleaved (gymforge, lineflow,
    gymforge, lineflow, ...) so machine noise hits both alike. ``torch.set_num_threads(1)`` is set
    deliberately at start-up (both packages import torch).

    With ``--long-horizon`` (the default) it also runs one episode at a 40,000-step horizon per
    system and reports the rate of the first and the last 1000 steps: gymforge's per-step cost
    stays O(1), whereas lineflow-rl's grows with the episode (O(n²) episodes, ~30 s or more).

Target
    gymforge >= 3× lineflow-rl 0.5.0 steps/s on WaitingTime (horizon 4000, median over episodes).

How to run
    python benchmarks/lineflow_scalar.py [--episodes N] [--no-anchor]
                                         [--long-horizon | --no-long-horizon]
                                         [--out benchmarks/results]

    Results go to ``<out>/lineflow_scalar.json`` (machine info, per-episode figures, medians,
    ratio, command) and ``<out>/lineflow_scalar.md`` (a short table).

Figures are medians (with min and max) on a noisy 2-core machine; read the ratio, not the
absolute rates, and expect a few percent of run-to-run variation.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib.metadata
import json
import logging
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import gymnasium as gym
import torch

import gymforge  # noqa: F401  (registers the LineFlow ids with Gymnasium)

SHORT_HORIZON = 4000
LONG_HORIZON = 40_000
CHUNK = 1000  # steps between two clock readings within an episode
EXTRA_ACTIONS = 10  # pre-sampled beyond the expected episode length, as a safety margin
BASE_SEED = 1000
GYMFORGE = "gymforge"
LINEFLOW = "lineflow-rl"
VERSIONED_PACKAGES = ("gymforge", "lineflow-rl", "numpy", "torch", "simpy", "gymnasium", "pygame")

StepFn = Callable[[Any], tuple[Any, Any, bool, bool, Any]]


@dataclass
class System:
    """One system under test: how to build its env for a horizon (in steps)."""

    name: str
    make: Callable[[int], Any]
    description: str
    envs: dict[int, Any] = field(default_factory=dict)

    def env(self, horizon: int) -> Any:
        """The env of ``horizon`` steps, built once and reused across episodes."""
        if horizon not in self.envs:
            self.envs[horizon] = self.make(horizon)
        return self.envs[horizon]


@dataclass
class Episode:
    """Timings of one episode of one system."""

    system: str
    horizon: int
    seed: int
    steps: int
    reset_s: float
    step_s: float
    steps_per_s: float
    chunk_steps_per_s: list[float]  # rate of each consecutive block of CHUNK steps (last partial)
    first_1000_steps_per_s: float
    last_1000_steps_per_s: float


# --------------------------------------------------------------------------------------------
# Systems


def make_gymforge(horizon: int) -> gym.Env:
    """gymforge's WaitingTime env of ``horizon`` steps (step size 1), as users get it."""
    if horizon == SHORT_HORIZON:
        return gym.make("LineFlow-WaitingTime-v0")
    return gym.make("LineFlow-WaitingTime-v0", horizon=horizon)


def import_lineflow() -> tuple[Callable[[int], Any] | None, str | None]:
    """Import the anchor quietly; return its env factory, or ``None`` and why it is skipped.

    lineflow's ``__init__`` sets the root logger to DEBUG and adds a stdout handler; both are
    undone here so the benchmark's output stays readable.
    """
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # lineflow imports pygame
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:
        from lineflow.examples import WaitingTime
        from lineflow.simulation import LineSimulation
    except Exception as error:  # any import failure means "no anchor", not a crash
        return None, f"import lineflow failed: {type(error).__name__}: {error}"
    finally:
        root.setLevel(max(level, logging.WARNING))
        for handler in list(root.handlers):
            if handler not in handlers:
                root.removeHandler(handler)

    def make(horizon: int) -> Any:
        # simulation_end = horizon + 1 gives exactly `horizon` steps (reset consumes one).
        return LineSimulation(WaitingTime(), simulation_end=horizon + 1)

    return make, None


def build_systems(anchor: bool) -> tuple[list[System], str | None]:
    """The systems to measure, gymforge first; plus the reason the anchor is skipped, if it is."""
    systems = [
        System(GYMFORGE, make_gymforge, 'gym.make("LineFlow-WaitingTime-v0"[, horizon=H])'),
    ]
    if not anchor:
        return systems, "disabled with --no-anchor"
    make, reason = import_lineflow()
    if make is None:
        return systems, reason
    systems.append(
        System(LINEFLOW, make, "LineSimulation(WaitingTime(), simulation_end=H + 1)"),
    )
    return systems, None


# --------------------------------------------------------------------------------------------
# Measurement


def sample_actions(env: Any, seed: int, count: int) -> list[Any]:
    """``count`` random actions from ``env.action_space.sample()``, seeded with ``seed``."""
    env.action_space.seed(seed)
    return [env.action_space.sample() for _ in range(count)]


def timed_steps(step: StepFn, actions: Sequence[Any]) -> tuple[int, list[tuple[int, float]]]:
    """Step through ``actions`` until the episode ends.

    Returns the number of steps and clock readings ``(steps done, perf_counter)``: one at the
    start, one every ``CHUNK`` steps and one at the end.
    """
    marks = [(0, time.perf_counter())]
    for steps, action in enumerate(actions, start=1):
        _, _, terminated, truncated, _ = step(action)
        if terminated or truncated:
            marks.append((steps, time.perf_counter()))
            return steps, marks
        if steps % CHUNK == 0:
            marks.append((steps, time.perf_counter()))
    raise RuntimeError(f"episode did not end within {len(actions)} steps")


def rate_between(marks: list[tuple[int, float]], start: int, stop: int) -> float:
    """Steps per second between the clock readings taken after ``start`` and ``stop`` steps."""
    times = dict(marks)
    return (stop - start) / (times[stop] - times[start])


def chunk_rates(marks: list[tuple[int, float]]) -> list[float]:
    """Steps per second of each block between consecutive clock readings."""
    return [(n1 - n0) / (t1 - t0) for (n0, t0), (n1, t1) in pairwise(marks)]


def run_episode(system: System, horizon: int, seed: int) -> Episode:
    """Reset ``system``'s env with ``seed``, then time its step loop over pre-sampled actions."""
    env = system.env(horizon)
    actions = sample_actions(env, seed, horizon + EXTRA_ACTIONS)
    gc.collect()
    start = time.perf_counter()
    env.reset(seed=seed)
    reset_s = time.perf_counter() - start
    steps, marks = timed_steps(env.step, actions)
    if steps != horizon:
        print(f"  note: {system.name} episode ran {steps} steps, expected {horizon}")
    step_s = marks[-1][1] - marks[0][1]
    last_start = max(0, steps - CHUNK)
    if last_start not in dict(marks):  # episode length not a multiple of CHUNK
        last_start = max(n for n, _ in marks if n <= last_start)
    return Episode(
        system=system.name,
        horizon=horizon,
        seed=seed,
        steps=steps,
        reset_s=reset_s,
        step_s=step_s,
        steps_per_s=steps / step_s,
        chunk_steps_per_s=chunk_rates(marks),
        first_1000_steps_per_s=rate_between(marks, 0, min(CHUNK, steps)),
        last_1000_steps_per_s=rate_between(marks, last_start, steps),
    )


def warm_up(systems: list[System], steps: int = 200) -> None:
    """A short untimed episode per system: first-call costs (caches, checkers) stay out."""
    for system in systems:
        env = system.env(SHORT_HORIZON)
        env.reset(seed=0)
        for action in sample_actions(env, 0, steps):
            env.step(action)


def run_interleaved(
    systems: list[System], horizon: int, episodes: int, log: Callable[[str], None]
) -> list[Episode]:
    """``episodes`` rounds, each running one episode of every system in turn (A, B, A, B, ...)."""
    results = []
    for index in range(episodes):
        seed = BASE_SEED + index
        for system in systems:
            episode = run_episode(system, horizon, seed)
            results.append(episode)
            log(
                f"  {system.name:<12} horizon {horizon:>6}  episode {index + 1}/{episodes}  "
                f"{episode.steps_per_s:>9.0f} steps/s  (first/last {CHUNK}: "
                f"{episode.first_1000_steps_per_s:.0f}/{episode.last_1000_steps_per_s:.0f})"
            )
    return results


# --------------------------------------------------------------------------------------------
# Summary and output


def summarise(episodes: list[Episode]) -> dict[str, dict[str, Any]]:
    """Median, min and max steps/s per ``"system@horizon"``."""
    groups: dict[str, list[Episode]] = {}
    for episode in episodes:
        groups.setdefault(f"{episode.system}@{episode.horizon}", []).append(episode)
    summary = {}
    for key, group in groups.items():
        rates = [e.steps_per_s for e in group]
        summary[key] = {
            "system": group[0].system,
            "horizon": group[0].horizon,
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
        }
    return summary


def package_version(name: str) -> str | None:
    """Installed version of distribution ``name``, or ``None``."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def git_revision() -> str | None:
    """``HEAD`` of the repository holding this file, with ``+dirty`` for local changes."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+dirty" if dirty else "")


def machine_info() -> dict[str, Any]:
    """Platform, CPUs, interpreter, thread settings and package versions."""
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or None,
        "cpu_count": os.cpu_count(),
        "cpus_usable": affinity,
        "python": sys.version.split()[0],
        "python_implementation": platform.python_implementation(),
        "torch_num_threads": torch.get_num_threads(),
        "versions": {name: package_version(name) for name in VERSIONED_PACKAGES},
        "git_revision": git_revision(),
    }


def command_line() -> str:
    """The command that ran this benchmark, as one would type it from the repository root."""
    script = Path(sys.argv[0])
    with contextlib.suppress(ValueError):
        script = script.resolve().relative_to(Path.cwd())
    return shlex.join(["python", str(script), *sys.argv[1:]])


def fmt_rate(value: float) -> str:
    """A steps/s figure with thousands separators."""
    return f"{value:,.0f}"


def markdown_table(summary: dict[str, dict[str, Any]]) -> list[str]:
    """The result table as Markdown lines."""
    lines = [
        "| system | horizon (steps) | episodes | median steps/s (min–max) "
        f"| first / last {CHUNK} steps, steps/s | reset (s) |",
        "|---|---:|---:|---|---|---:|",
    ]
    for row in summary.values():
        lines.append(
            f"| {row['system']} | {row['horizon']:,} | {row['episodes']} "
            f"| {fmt_rate(row['median_steps_per_s'])} "
            f"({fmt_rate(row['min_steps_per_s'])}–{fmt_rate(row['max_steps_per_s'])}) "
            f"| {fmt_rate(row['median_first_1000_steps_per_s'])} / "
            f"{fmt_rate(row['median_last_1000_steps_per_s'])} "
            f"| {row['median_reset_s']:.3f} |"
        )
    return lines


def ratio_line(ratio: float | None, skipped: str | None) -> str:
    """One line stating the speed-up over the anchor (or why there is none)."""
    if ratio is None:
        return f"Ratio: not measured — anchor skipped ({skipped})."
    verdict = "meets" if ratio >= 3 else "MISSES"
    return (
        f"Ratio gymforge / lineflow-rl 0.5.0 at horizon {SHORT_HORIZON:,} (medians): "
        f"**{ratio:.1f}×** — {verdict} the ≥ 3× target."
    )


def render_markdown(report: dict[str, Any]) -> str:
    """The human-readable report."""
    machine = report["machine"]
    versions = ", ".join(f"{k} {v}" for k, v in machine["versions"].items() if v is not None)
    lines = [
        "# LineFlow WaitingTime, scalar env: steps per second",
        "",
        f"Random actions (pre-sampled with `action_space.sample()`), step loop timed, "
        f"episodes interleaved, `torch.set_num_threads(1)`. Run {report['started_utc']} on "
        f"{machine['platform']}, {machine['cpu_count']} CPUs, Python {machine['python']}.",
        "Figures are medians on a noisy 2-core machine; compare the ratio, not absolute rates.",
        "",
        *markdown_table(report["summary"]),
        "",
        ratio_line(report["ratio"], report["anchor_skipped"]),
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


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file in the same folder and ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", delete=False
    ) as handle:
        handle.write(text)
        temporary = Path(handle.name)
    try:
        os.chmod(temporary, 0o644)  # NamedTemporaryFile creates 0600
        os.replace(temporary, path)
    except OSError:
        temporary.unlink(missing_ok=True)
        raise


def ratio_of(summary: dict[str, dict[str, Any]]) -> float | None:
    """gymforge median / lineflow-rl median at the short horizon, if both were measured."""
    ours = summary.get(f"{GYMFORGE}@{SHORT_HORIZON}")
    anchor = summary.get(f"{LINEFLOW}@{SHORT_HORIZON}")
    if ours is None or anchor is None:
        return None
    return ours["median_steps_per_s"] / anchor["median_steps_per_s"]


# --------------------------------------------------------------------------------------------
# Entry point


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(
        description="Scalar LineFlow WaitingTime steps/s: gymforge vs. lineflow-rl 0.5.0."
    )
    parser.add_argument(
        "--episodes", type=int, default=5, help="episodes per system at horizon 4000 (default 5)"
    )
    parser.add_argument(
        "--no-anchor", action="store_true", help="measure gymforge only, skip lineflow-rl"
    )
    parser.add_argument(
        "--long-horizon",
        action=argparse.BooleanOptionalAction,
        default=True,
        help=f"also run one {LONG_HORIZON:,}-step episode per system (default: on)",
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
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, write the results and print the table."""
    args = parse_args(argv)
    torch.set_num_threads(1)  # deliberate: both systems import torch; keep it off the 2nd core
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    systems, skipped = build_systems(anchor=not args.no_anchor)
    print(f"torch.set_num_threads(1) set deliberately (now {torch.get_num_threads()} thread).")
    if skipped:
        print(f"Anchor lineflow-rl skipped: {skipped}.")
    print(
        f"Systems: {', '.join(s.name for s in systems)}; "
        f"{args.episodes} episode(s) per system at horizon {SHORT_HORIZON}, interleaved."
    )

    warm_up(systems)
    episodes = run_interleaved(systems, SHORT_HORIZON, args.episodes, print)
    if args.long_horizon:
        episodes += run_interleaved(systems, LONG_HORIZON, 1, print)

    summary = summarise(episodes)
    ratio = ratio_of(summary)
    report = {
        "benchmark": "lineflow_scalar",
        "started_utc": started,
        "command": command_line(),
        "interpreter": sys.executable,
        "method": {
            "actions": "env.action_space.sample(), seeded with the episode seed, pre-sampled "
            "before the clock starts (same for both systems)",
            "timed": "the step loop only; reset timed separately",
            "interleaved": True,
            "warm_up_steps_per_system": 200,
            "chunk_steps": CHUNK,
            "seeds": f"episode i uses seed {BASE_SEED} + i for both systems",
            "torch_num_threads": 1,
        },
        "systems": {s.name: s.description for s in systems},
        "anchor_skipped": skipped,
        "machine": machine_info(),
        "episodes": [asdict(e) for e in episodes],
        "summary": summary,
        "ratio": ratio,
        "target_ratio": 3.0,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out / "lineflow_scalar.json", json.dumps(report, indent=2) + "\n")
    write_atomic(args.out / "lineflow_scalar.md", render_markdown(report))

    print()
    print("\n".join(markdown_table(summary)))
    print()
    print(ratio_line(ratio, skipped))
    print(f"Wrote {args.out / 'lineflow_scalar.json'} and {args.out / 'lineflow_scalar.md'}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
