"""Upstream anchor figures: upstream's own controllers on upstream's own simulator, measured.

The LineFlow reference figures that this suite compares with (the optimal waiting time, the
greedy part distribution, the best worker partition, the complex line's heuristic, ...) are
measured here against the installed ``lineflow-rl`` package (the ``anchors`` extra), not typed in:
each anchor builds upstream's line from ``lineflow.examples`` with ``random_state=seed``, runs
``line.run(4001, agent)`` as upstream's examples do, and records the return the way upstream's gym
env counts it (parts produced − scrap_factor · scrap parts), with parts and scrap, per seed.

Upstream's controllers are used as they ship (``make_optimal_agent``, ``make_agent_fixed_waiting_
time``, ``make_greedy_policy``, ComplexLine's ``make_agent``); the random and fixed-partition
controllers, which upstream has no function for, are written here. Upstream's documented optima
and where they come from are listed in ``docs/design/lineflow_upstream_figures.md``.

Run (from the repository root, after ``pip install -e .[anchors]``)::

    python -m benchmarks.lineflow.upstream_anchors            # seeds 0-2, ~5 minutes
    python -m benchmarks.lineflow.upstream_anchors --seeds 1 --only WT --out /tmp/a  # a look

Writes ``benchmarks/results/lineflow_upstream_anchors.{json,md}``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import common

RESULT_NAME = "lineflow_upstream_anchors"
RESULTS = common.REPO_ROOT / "benchmarks" / "results"
HORIZON = 4001  # upstream's paper episodes: simulation_end = 4000 + 1
PACKAGES = ("lineflow-rl", "simpy", "numpy", "gekko")

Agent = Callable[[Any, Any], dict[str, dict[str, Any]]]


@dataclass(frozen=True)
class Anchor:
    """One upstream line and controller: ``build(examples, seed)`` returns ``(line, agent)``."""

    key: str  # the id's scenario and k, as the controllers benchmark labels them
    controller: str
    build: Callable[[Any, int], tuple[Any, Agent | None]]


def _waiting_time(examples: Any, seed: int, jump: bool) -> Any:
    kwargs = {"with_jump": True, "t_jump_max": 2000, "R": 0.75} if jump else {}
    return examples.WaitingTime(processing_time_source=5, random_state=seed, **kwargs)


def _fixed_waiting_time(examples: Any, seed: int, jump: bool, value: float) -> tuple[Any, Agent]:
    line = _waiting_time(examples, seed, jump)
    return line, examples.waiting_time.make_agent_fixed_waiting_time(line, value)


def _last_observation(examples: Any, seed: int, jump: bool) -> tuple[Any, Agent]:
    line = _waiting_time(examples, seed, jump)
    return line, examples.waiting_time.make_optimal_agent(line)


def _random_routing(k: int, seed: int) -> Agent:
    """Both switches of the part-distribution line pick a uniformly random buffer every step."""
    import numpy as np

    rng = np.random.default_rng(seed)

    def agent(state: Any, env: Any) -> dict[str, dict[str, Any]]:
        return {
            "SwitchD": {"index_buffer_out": int(rng.integers(k))},
            "SwitchF": {"index_buffer_in": int(rng.integers(k))},
        }

    return agent


def _part_distribution(examples: Any, seed: int, k: int, controller: str) -> tuple[Any, Agent]:
    line = examples.MultiProcess(
        alternate=controller == "alternate", n_processes=k, random_state=seed
    )
    if controller == "greedy":
        return line, examples.multi_process.make_greedy_policy(k)
    if controller == "random":
        return line, _random_routing(k, seed)
    return line, None  # "alternate": the switches' own round robin, no agent


def _partition(counts: tuple[int, ...]) -> Agent:
    """Workers assigned in order: the first ``counts[0]`` to assembly 0, and so on."""
    stations = [i for i, count in enumerate(counts) for _ in range(count)]

    def agent(state: Any, env: Any) -> dict[str, dict[str, Any]]:
        names = [worker.name for worker in state.get_actions()["Pool"]]
        return {"Pool": dict(zip(names, stations, strict=True))}

    return agent


def _worker_assignment(examples: Any, seed: int, counts: tuple[int, ...] | None) -> tuple:
    line = examples.WorkerAssignment(n_assemblies=3, random_state=seed)
    return line, None if counts is None else _partition(counts)


def _complex_line(examples: Any, seed: int, k: int) -> tuple[Any, Agent]:
    line = examples.ComplexLine(
        alternate=False,
        n_assemblies=k,
        n_workers=3 * k,
        scrap_factor=1 / k,
        random_state=seed,
        assembly_condition=30,
    )
    agent = examples.complex_line.make_agent(
        state=line.state, n_assemblies=k, n_workers=3 * k, waiting_time=5, ramp_up_waiting_time=10
    )
    return line, agent


ANCHORS: tuple[Anchor, ...] = (
    Anchor("WT", "optimal", lambda ex, s: _last_observation(ex, s, jump=False)),
    Anchor("WT", "fixed waiting time 19", lambda ex, s: _fixed_waiting_time(ex, s, False, 19)),
    Anchor("WTJ", "heuristic", lambda ex, s: _last_observation(ex, s, jump=True)),
    Anchor("WTJ", "fixed waiting time 18.5", lambda ex, s: _fixed_waiting_time(ex, s, True, 18.5)),
    *(
        Anchor(f"PD{k}", name, lambda ex, s, k=k, name=name: _part_distribution(ex, s, k, name))
        for k in (3, 4, 5)
        for name in ("greedy", "random", "alternate")
    ),
    Anchor("WA3", "partition (2, 3, 4)", lambda ex, s: _worker_assignment(ex, s, (2, 3, 4))),
    Anchor("WA3", "round-robin workers", lambda ex, s: _worker_assignment(ex, s, None)),
    Anchor("CL3", "heuristic", lambda ex, s: _complex_line(ex, s, 3)),
    Anchor("CL5", "heuristic", lambda ex, s: _complex_line(ex, s, 5)),
)


def run_anchor(examples: Any, anchor: Anchor, seed: int) -> dict[str, float]:
    """One episode of ``anchor`` with ``seed``: return, parts, scrap and wall time."""
    start = time.perf_counter()
    line, agent = anchor.build(examples, seed)
    line.run(simulation_end=HORIZON, agent=agent, show_status=False)
    parts, scrap = line.get_n_parts_produced(), line.get_n_scrap_parts()
    return {
        "seed": seed,
        "return": parts - line.scrap_factor * scrap,
        "parts": parts,
        "scrap": scrap,
        "seconds": time.perf_counter() - start,
    }


def summarise(runs: list[dict[str, float]]) -> dict[str, Any]:
    returns = [run["return"] for run in runs]
    return {
        "mean_return": statistics.fmean(returns),
        "min_return": min(returns),
        "max_return": max(returns),
        "mean_parts": statistics.fmean(run["parts"] for run in runs),
        "mean_scrap": statistics.fmean(run["scrap"] for run in runs),
        "runs": runs,
    }


def render(document: dict[str, Any]) -> str:
    lines = [
        "# Upstream anchors: lineflow-rl's controllers on lineflow-rl's simulator",
        "",
        f"`{document['command']}` — lineflow-rl {document['machine']['versions']['lineflow-rl']}, "
        f"seeds {document['seeds']}, `line.run({HORIZON}, agent)`, total "
        f"{document['seconds']:.0f} s. Return = parts − scrap_factor · scrap, as upstream's "
        "gym env counts it. Upstream's controllers as shipped; random routing and fixed "
        "partitions are this script's.",
        "",
        "| line | controller | return (mean) | min – max | parts | scrap |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for row in document["anchors"]:
        lines.append(
            f"| {row['key']} | {row['controller']} | {row['mean_return']:.1f} | "
            f"{row['min_return']:.1f} – {row['max_return']:.1f} | {row['mean_parts']:.1f} | "
            f"{row['mean_scrap']:.1f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1 (default 3)")
    parser.add_argument(
        "--only", nargs="+", default=[], help="lines to run, e.g. WT PD5 (default: all)"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=RESULTS,
        help="folder for the results files",
    )
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error(f"--seeds must be at least 1, got {args.seeds}")
    keys = sorted({anchor.key for anchor in ANCHORS})
    unknown = sorted(set(args.only) - set(keys))
    if unknown:
        parser.error(f"--only: unknown line(s) {unknown}; choose from {keys}")
    if args.only and args.out.resolve() == RESULTS.resolve():
        parser.error("--only writes a partial results file: give --out a scratch folder")
    loaded, why_not = common.import_lineflow()
    if loaded is None:
        print(f"lineflow-rl is needed (pip install -e .[anchors]): {why_not}", file=sys.stderr)
        return 2
    examples = loaded[1]
    seeds = list(range(args.seeds))
    start = time.perf_counter()
    rows = []
    for anchor in ANCHORS:
        if args.only and anchor.key not in args.only:
            continue
        runs = [run_anchor(examples, anchor, seed) for seed in seeds]
        rows.append({"key": anchor.key, "controller": anchor.controller, **summarise(runs)})
        print(f"{anchor.key:5s} {anchor.controller:28s} {rows[-1]['mean_return']:8.1f}")
    document = {
        "command": common.command_line(),
        "seeds": seeds,
        "horizon": HORIZON,
        "seconds": time.perf_counter() - start,
        "machine": common.machine_info(PACKAGES),
        "anchors": rows,
    }
    common.write_json(args.out / f"{RESULT_NAME}.json", document, indent=1)
    common.write_atomic(args.out / f"{RESULT_NAME}.md", render(document))
    return 0


if __name__ == "__main__":
    sys.exit(main())
