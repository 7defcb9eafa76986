"""What the README's train command gives on the WaitingTime board, per training seed.

For each seed S: ``gymforge train LineFlow-WaitingTime-v0 --algo ppo --backend torch --steps
1000000 --seed S`` (the packaged recipe, nothing else), then ``gymforge evaluate --protocol
lineflow/WaitingTime`` on the run's ``policy.pt`` (the board's 20 held-out episodes: the test
split, so every run here is a recorded test evaluation). At most ``--parallel`` seeds at a time.
The IQM over seeds and its 95% interval come from rliable (20,000 bootstrap draws; numpy's global
generator is seeded first, since rliable draws from it).

Example::

    python -m benchmarks.lineflow.wt_seeds --seeds 0 1 2 3 4 --runs /tmp/wt --out /tmp/wt/seeds.json
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.lineflow.time_to_score import host_cpu, load_average

GYMFORGE = [sys.executable, "-m", "gymforge"]
STEPS = 1_000_000


def run_seed(seed: int, runs: Path) -> dict[str, Any]:
    """Train seed ``seed`` with the packaged recipe and evaluate it on the board."""
    out = runs / f"s{seed}"
    train = [
        "train", "LineFlow-WaitingTime-v0", "--algo", "ppo", "--backend", "torch",
        "--steps", str(STEPS), "--seed", str(seed), "--out", str(out), "--no-progress-bar",
    ]  # fmt: skip
    result = out.with_suffix(".r.json")
    evaluate = [
        "evaluate", "--protocol", "lineflow/WaitingTime", "--agent", str(out / "policy.pt"),
        "--out", str(result),
    ]  # fmt: skip
    timings = {}
    for name, args in (("train", train), ("evaluate", evaluate)):
        start = time.perf_counter()
        done = subprocess.run([*GYMFORGE, *args], capture_output=True, text=True)
        timings[name] = round(time.perf_counter() - start, 1)
        if done.returncode != 0:
            raise RuntimeError(f"seed {seed}: {shlex.join(args)} failed:\n{done.stderr[-2000:]}")
    config = json.loads((out / "config.json").read_text())
    board = json.loads(result.read_text())
    summary = board["aggregate"]
    return {
        "seed": seed,
        "held_out_mean": round(float(summary["mean"]), 4),
        "held_out_ci95": [round(float(x), 4) for x in summary["ci95"]],
        "train_command": "gymforge " + shlex.join(train[:-3]),
        "eval_command": "gymforge " + shlex.join(evaluate),
        "wall_s_train_command": timings["train"],
        "wall_s_evaluate": timings["evaluate"],
        "train_steps_per_s": config.get("train_steps_per_s"),
        "policy_sha256": board["agent"]["sha256"],
        "recipe_revision": config["train_config"].get("revision"),
        "final_validation": json.loads((out / "evaluations.json").read_text())["evaluations"][-1][
            "mean_return"
        ],
    }


def iqm_interval(scores: list[float]) -> tuple[float, float, float]:
    """IQM over seeds and its 95% bootstrap interval (rliable, seeded)."""
    from rliable import library as rly
    from rliable import metrics

    np.random.seed(0)  # rliable draws from numpy's global generator
    data = {"x": np.array(scores, dtype=float)[:, None]}
    point, ci = rly.get_interval_estimates(
        data, lambda x: np.array([metrics.aggregate_iqm(x)]), reps=20_000
    )
    return float(point["x"][0]), float(ci["x"][0, 0]), float(ci["x"][1, 0])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--runs", type=Path, required=True, help="folder for the run folders")
    parser.add_argument("--out", type=Path, required=True, help="JSON file to write")
    args = parser.parse_args(argv)
    args.runs.mkdir(parents=True, exist_ok=True)
    load_start = load_average()
    with ThreadPoolExecutor(args.parallel) as pool:
        seeds = list(pool.map(lambda s: run_seed(s, args.runs), args.seeds))
    scores = [s["held_out_mean"] for s in seeds]
    iqm, low, high = iqm_interval(scores)
    data = {
        "task": "LineFlow-WaitingTime-v0",
        "protocol": "lineflow/WaitingTime (20 held-out episodes)",
        "host_cpu": host_cpu(),
        "parallel": args.parallel,
        "load_start": load_start,
        "load_end": load_average(),
        "command": "python -m benchmarks.lineflow.wt_seeds " + shlex.join(argv or sys.argv[1:]),
        "seeds": seeds,
        "mean": round(float(np.mean(scores)), 4),
        "min": min(scores),
        "iqm": iqm,
        "iqm_ci95": [low, high],
    }
    args.out.write_text(json.dumps(data, indent=2) + "\n")
    print(json.dumps({k: v for k, v in data.items() if k != "seeds"}, indent=1))
    print("per seed:", scores)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
