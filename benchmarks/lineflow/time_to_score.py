"""Time to score: wall-clock and env steps until a recipe's validation return first reaches 95%
of the task's best controller, per training seed and as the median over seeds.

Each recipe is a ``gymforge train --config`` file layered over the packaged task recipe; every
(recipe, seed) pair is one ``gymforge train ... --backend torch`` run, at most ``--parallel`` at
a time on this host, all in one invocation so that the recipes share the host's conditions.
The score is the trainer's periodic evaluation (the validation seeds ``2**62 + k``, disjoint
from the boards' held-out episodes), read from the run's ``evaluations.json``; seconds are the
trainer's ``train_s`` (training only: evaluations excluded, since they measure rather than
train). A seed that never reaches the threshold counts as never (an infinite time), so a median
is finite only when at least half the seeds reached it.

Example (WaitingTime: 0.95 x 157.8 = 149.9)::

    python -m benchmarks.lineflow.time_to_score --env LineFlow-WaitingTime-v0 --best 157.8 \\
        --recipe packaged=benchmarks/results/time_to_score_recipes/packaged.yaml \\
        --recipe candidate=benchmarks/results/time_to_score_recipes/keep_best.yaml \\
        --seeds 100 101 --steps 1000000 --runs /tmp/tts --out benchmarks/results/time_to_score

A run folder that already holds a finished run of the same command is read, not retrained
(``--reuse``), so an interrupted invocation continues where it stopped.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

GYMFORGE = [sys.executable, "-m", "gymforge"]


def host_cpu() -> str:
    """``lscpu``'s model name (``platform.processor()`` where lscpu is missing)."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return platform.processor() or "unknown"
    for line in out.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def load_average() -> list[float]:
    """The 1, 5 and 15 minute load averages."""
    return [round(x, 2) for x in os.getloadavg()]


def train_command(env_id: str, recipe: Path, seed: int, steps: int, out: Path) -> list[str]:
    """The ``gymforge train`` command of one (recipe, seed) run."""
    return [
        *GYMFORGE, "train", env_id, "--algo", "ppo", "--backend", "torch",
        "--steps", str(steps), "--seed", str(seed), "--config", str(recipe.resolve()),
        "--threads", "1", "--out", str(out.resolve()), "--no-progress-bar",
    ]  # fmt: skip


def options(command: list[str]) -> dict[str, str]:
    """A ``gymforge train`` command's options as ``{flag: value}`` (paths resolved), so that two
    commands compare whatever the order of their options."""
    args = command[command.index("train") + 1 :]
    found: dict[str, str] = {"id": args[0]}
    for i, token in enumerate(args[1:], 1):
        if token.startswith("--"):
            value = args[i + 1] if i + 1 < len(args) and not args[i + 1].startswith("--") else ""
            found[token] = str(Path(value).resolve()) if token in ("--config", "--out") else value
    return found


def finished(out: Path, command: list[str]) -> bool:
    """Whether ``out`` holds a finished run (its final ``config.json`` has ``wall_s``) of the
    same ``command``."""
    try:
        record = json.loads((out / "config.json").read_text())
    except (OSError, json.JSONDecodeError):
        return False
    return "wall_s" in record and options(record["command"]) == options(command)


def run_all(jobs: list[dict[str, Any]], parallel: int, reuse: bool) -> None:
    """Train every job not already finished (with ``reuse``), ``parallel`` at a time."""
    todo = [j for j in jobs if not (reuse and finished(j["out"], j["command"]))]
    for job in jobs:
        job["reused"] = job not in todo
    running: list[tuple[dict[str, Any], subprocess.Popen[bytes]]] = []
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    while todo or running:
        while todo and len(running) < parallel:
            job = todo.pop(0)
            if job["out"].exists():
                raise SystemExit(f"{job['out']} exists but holds no finished run; remove it")
            log = job["out"].with_suffix(".log").open("wb")
            print("start:", " ".join(job["command"]), flush=True)
            running.append((job, subprocess.Popen(job["command"], stdout=log, stderr=log, env=env)))
        time.sleep(2)
        for pair in list(running):
            job, proc = pair
            if proc.poll() is not None:
                running.remove(pair)
                if proc.returncode != 0:
                    raise SystemExit(f"failed ({proc.returncode}): {' '.join(job['command'])}")


def time_to(rows: list[dict[str, Any]], threshold: float) -> dict[str, Any]:
    """The first evaluation at or above ``threshold``: its steps and training seconds."""
    for row in rows:
        if row["mean_return"] >= threshold:
            return {
                "steps": row["timesteps"],
                "train_s": row["train_s"],
                "return": row["mean_return"],
            }
    return {"steps": None, "train_s": None, "return": None}


def median(values: list[float | None]) -> float | None:
    """The median with ``None`` (never reached) as infinity; ``None`` when that is infinite."""
    value = statistics.median([math.inf if v is None else v for v in values])
    return None if math.isinf(value) else value


def shown_command(job: dict[str, Any]) -> str:
    """The job's ``gymforge train`` command as a reader runs it from the repository root: the
    recipe file relative to the root and the run folder as given (the trainer gets both
    resolved)."""
    root = Path(__file__).resolve().parents[2]
    shown = []
    for token in job["command"][3:]:
        path = Path(token)
        if path.is_absolute() and path == job["out"].resolve():
            token = str(job["out"])
        elif path.is_absolute() and path.is_relative_to(root):
            token = str(path.relative_to(root))
        shown.append(token)
    return "gymforge " + " ".join(shown)


def summarize(job: dict[str, Any], threshold: float) -> dict[str, Any]:
    """One run's figures: time to threshold, the validation curve, final and best values."""
    rows = json.loads((job["out"] / "evaluations.json").read_text())["evaluations"]
    record = json.loads((job["out"] / "config.json").read_text())
    best = max(rows, key=lambda e: (e["mean_return"], e["timesteps"]))
    return {
        "recipe": job["recipe"],
        "seed": job["seed"],
        "command": shown_command(job),
        "reused": job["reused"],
        "to_threshold": time_to(rows, threshold),
        "curve": [[r["timesteps"], r["mean_return"], r["train_s"]] for r in rows],
        "final_validation": rows[-1]["mean_return"],
        "best_validation": {"timesteps": best["timesteps"], "mean_return": best["mean_return"]},
        "wall_s": record["wall_s"],
        "train_steps_per_s": record["train_steps_per_s"],
    }


def fmt(value: float | None, digits: int = 0) -> str:
    return "never" if value is None else f"{value:,.{digits}f}"


def report(data: dict[str, Any]) -> str:
    """The Markdown report."""
    lines = [
        f"# Time to score: {data['env_id']}, on-device PPO recipes",
        "",
        f"Threshold: {data['fraction']:.0%} of the best controller ({data['best']}) = "
        f"{data['threshold']:.1f} on the trainer's validation evaluations ({data['eval_note']}). "
        "Seconds are training seconds (evaluations excluded); a seed that never reaches the "
        "threshold counts as never, so a median is 'never' unless half the seeds reached it.",
        "",
        f"Host: {data['host_cpu']}, {data['cores']} cores, 1 torch thread per run, "
        f"{data['parallel']} runs at a time; load average at start {data['load_start']}, at end "
        f"{data['load_end']} (shared host: other users' jobs ran too, so seconds are contended). "
        f"{data['load_note']}",
        "",
        "| recipe | seeds reaching | median steps | median train s | per seed: steps / train s "
        "| final validation | best validation (steps) |",
        "|---|---:|---:|---:|---|---|---|",
    ]
    for name, agg in data["recipes"].items():
        runs = [r for r in data["runs"] if r["recipe"] == name]
        per_seed = "; ".join(
            f"{r['seed']}: {fmt(r['to_threshold']['steps'])} / {fmt(r['to_threshold']['train_s'])}"
            for r in runs
        )
        finals = ", ".join(f"{r['final_validation']:.1f}" for r in runs)
        bests = ", ".join(
            f"{r['best_validation']['mean_return']:.1f} ({r['best_validation']['timesteps'] // 1000}k)"
            for r in runs
        )
        lines.append(
            f"| {name} | {agg['reached']}/{len(runs)} | {fmt(agg['median_steps'])} | "
            f"{fmt(agg['median_train_s'])} | {per_seed} | {finals} | {bests} |"
        )
    lines += ["", "Recipes (config files layered over the packaged task recipe):", ""]
    lines += [f"- {name}: `{path}`" for name, path in data["recipe_files"].items()]
    lines += ["", "Command:", "", f"    {data['command']}", ""]
    lines += [data["anchor_note"], ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="LineFlow-WaitingTime-v0")
    parser.add_argument("--best", type=float, default=157.8, help="the best controller's return")
    parser.add_argument("--fraction", type=float, default=0.95)
    parser.add_argument("--recipe", action="append", required=True, metavar="NAME=FILE")
    parser.add_argument("--seeds", type=int, nargs="+", default=[100, 101])
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--runs", type=Path, required=True, help="folder for the run folders")
    parser.add_argument("--reuse", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument(
        "--anchor-note",
        default="SB3 anchor: not run (SB3 PPO steps the SimPy engine; 1M steps does not fit a "
        "20-minute run on this host).",
    )
    parser.add_argument(
        "--load-note", default="", help="what else to say about the host's load (reused runs)"
    )
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/time_to_score"))
    args = parser.parse_args(argv)
    recipes = dict(item.split("=", 1) for item in args.recipe)
    threshold = args.fraction * args.best
    args.runs.mkdir(parents=True, exist_ok=True)
    jobs = [
        {
            "recipe": name,
            "seed": seed,
            "out": args.runs / f"{name}-s{seed}",
            "command": train_command(
                args.env, Path(path), seed, args.steps, args.runs / f"{name}-s{seed}"
            ),
        }
        for seed in args.seeds
        for name, path in recipes.items()
    ]
    load_start = load_average()
    run_all(jobs, args.parallel, args.reuse)
    runs = [summarize(job, threshold) for job in jobs]
    aggregates = {}
    for name in recipes:
        mine = [r for r in runs if r["recipe"] == name]
        aggregates[name] = {
            "reached": sum(r["to_threshold"]["steps"] is not None for r in mine),
            "median_steps": median([r["to_threshold"]["steps"] for r in mine]),
            "median_train_s": median([r["to_threshold"]["train_s"] for r in mine]),
        }
    data = {
        "env_id": args.env,
        "best": args.best,
        "fraction": args.fraction,
        "threshold": threshold,
        "eval_note": "each recipe's own eval schedule; 2 episodes on seeds 2**62 + k",
        "host_cpu": host_cpu(),
        "cores": os.cpu_count(),
        "parallel": args.parallel,
        "load_start": load_start,
        "load_end": load_average(),
        "load_note": args.load_note,
        "command": "python -m benchmarks.lineflow.time_to_score "
        + shlex.join(sys.argv[1:] if argv is None else argv),
        "recipe_files": recipes,
        "recipes": aggregates,
        "runs": runs,
        "anchor_note": args.anchor_note,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(data, indent=1) + "\n")
    args.out.with_suffix(".md").write_text(report(data))
    print(report(data))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
