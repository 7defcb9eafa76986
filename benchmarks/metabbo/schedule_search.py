"""Search of budget schedules for MetaBBO Alg0 on the easy split's *train* functions.

Evaluates uniform random configuration and a grid of :class:`Schedule` s (start bins, end bins,
jitter, power; ``gymforge.baselines.metabbo.schedule``) with the evaluation protocol of
``offline_select.py``: every train function, one instance no dataset or test run uses
(``--instance-id``, default 2), seeds ``1..--seeds``, the full 500-generation budget. The test
split is never touched. Schedules are ranked by mean Perf (ties: log10 final error); the winner is
the Alg0 entry of ``DEFAULT_SCHEDULES``.

Run from the repository root::

    .venv/bin/python -m benchmarks.metabbo.schedule_search            # 48 schedules, ~10 min
    .venv/bin/python -m benchmarks.metabbo.schedule_search --quick    # 4 schedules, 2 seeds

Writes ``benchmarks/results/metabbo_schedule_search.{json,md}`` (``--quick``: ``*_quick.*``).
"""

from __future__ import annotations

import argparse
import itertools
import os
import time
from typing import Any

import torch

from benchmarks import common
from gymforge.agents.random_agent import RandomAgent
from gymforge.baselines.metabbo.schedule import DEFAULT_SCHEDULES, Schedule, ScheduleAgent
from gymforge.envs.metabbo.metrics import evaluate
from gymforge.envs.metabbo.problems import split_functions

RESULTS = common.REPO_ROOT / "benchmarks" / "results"
NAME = "metabbo_schedule_search"

STARTS = ((15, 6, 15), (12, 8, 15), (15, 8, 15), (10, 6, 15))
ENDS = ((2, 0, 15), (3, 2, 15), (4, 2, 15))
JITTERS = (3, 5)
POWERS = (1.0, 2.0)


def candidates(quick: bool) -> list[Schedule]:
    """The searched grid (``--quick``: its first start and end with both jitters and powers)."""
    starts, ends = (STARTS[:1], ENDS[:1]) if quick else (STARTS, ENDS)
    return [
        Schedule(start=s, end=e, jitter=j, power=p)
        for s, e, j, p in itertools.product(starts, ends, JITTERS, POWERS)
    ]


def label(schedule: Schedule) -> str:
    return f"{schedule.start} -> {schedule.end}, jitter {schedule.jitter}, power {schedule.power:g}"


def markdown(data: dict[str, Any]) -> str:
    s = data["settings"]
    rows = sorted(data["schedules"], key=lambda r: (-r["perf"], r["log10_error"]))
    rnd = data["random"]
    lines = [
        "# MetaBBO Alg0: budget schedules vs uniform random configuration (train split)",
        "",
        f"Run {data['when']} ({data['wall_s']:.0f} s), `{data['command']}`; "
        f"{data['machine']['cpu_count']} CPUs, one torch thread, load average "
        f"{data['load_average']:.2f} at the start.",
        "",
        f"- Functions: the easy split's train functions {s['functions']}, instance "
        f"{s['instance_id']}, seeds 1..{s['seeds']}, D = 10, population 100, 500 generations.",
        "- Ranked by mean Perf (1 - e_T/e_0; ties: mean log10 final error).",
        f"- Uniform random configuration: Perf {rnd['perf']:.4f}, log10 final error "
        f"{rnd['log10_error']:.3f}.",
        f"- Selected (first row, the Alg0 default of `ScheduleAgent`): {rows[0]['schedule']}.",
        "",
        "| schedule | Perf | log10 final error | Perf - random "
        "| higher Perf and lower log10 error than random (means only, no paired CI) |",
        "|---|---:|---:|---:|---|",
    ]
    for r in rows:
        both = r["perf"] > rnd["perf"] and r["log10_error"] < rnd["log10_error"]
        lines.append(
            f"| {r['schedule']} | {r['perf']:.4f} | {r['log10_error']:.3f} "
            f"| {r['perf'] - rnd['perf']:+.4f} | {'yes' if both else 'no'} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--seeds", type=int, default=None, help="seeds per function (default 8; 2)")
    p.add_argument("--instance-id", type=int, default=2)
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    seeds = args.seeds or (2 if args.quick else 8)
    fids = list(split_functions("easy", "train"))
    load_average = os.getloadavg()[0]
    start = time.perf_counter()

    def run(policy: Any) -> dict[str, float]:
        out = evaluate(
            policy,
            split=fids,
            subset="train",
            seeds=seeds,
            instance_id=args.instance_id,
            with_random_search=False,
        )
        return {"perf": out["perf"], "log10_error": out["log10_error"]}

    random_row = run(RandomAgent)
    print(f"{'uniform random':>50}: {random_row}", flush=True)
    rows = []
    for schedule in candidates(args.quick):
        row = {"schedule": label(schedule), **run(lambda env, s=schedule: ScheduleAgent(env, s))}
        row["parameters"] = {
            "start": list(schedule.start),
            "end": list(schedule.end),
            "jitter": schedule.jitter,
            "power": schedule.power,
        }
        rows.append(row)
        print(f"{row['schedule']:>50}: Perf {row['perf']:.4f} log10 {row['log10_error']:.3f}")
    best = max(rows, key=lambda r: (r["perf"], -r["log10_error"]))
    data = {
        "benchmark": NAME,
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "wall_s": time.perf_counter() - start,
        "load_average": load_average,
        "command": common.command_line(),
        "machine": common.machine_info(["torch", "numpy"]),
        "settings": {"functions": fids, "instance_id": args.instance_id, "seeds": seeds},
        "random": random_row,
        "schedules": rows,
        "selected": best["parameters"],
        "default_matches_selected": best["schedule"] == label(DEFAULT_SCHEDULES["alg0"]),
    }
    suffix = "_quick" if args.quick else ""
    common.write_json(RESULTS / f"{NAME}{suffix}.json", data, indent=1)
    common.write_atomic(RESULTS / f"{NAME}{suffix}.md", markdown(data))
    print(markdown(data))
    if not data["default_matches_selected"] and not args.quick:
        print(f"note: DEFAULT_SCHEDULES['alg0'] differs from the selected {best['schedule']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
