"""LineFlow RL baselines of the on-device trainer: IQM with 95% CIs over training seeds.

What it reports
    For every sweep folder given (``gymforge sweep benchmarks/sweeps/lineflow_*.yaml``), each job
    (task x algorithm x seed, trained with ``trainer: torch``) scored by the mean return of its
    final policy over 5 held-out episodes of the exact SimPy engine (seeds 2**62 + 1000 + k,
    never seen in training or in the periodic evaluation that draws the learning curves). Per
    task, algorithm and budget: the interquartile mean over seeds with a 95% stratified-bootstrap
    confidence interval (rliable), each seed's score, and the goal of the task stated met or not.
    Beside the table, ``rl_lineflow_torch.png`` plots the learning curves (periodic held-out
    evaluation vs steps, seeds 2**62 + k, per seed and their mean).

How to run (from the repository root; ``pip install -e '.[stats]'``)
    gymforge sweep benchmarks/sweeps/lineflow_wt.yaml --workers 2 --out sweeps/lineflow_wt
    ...                                                # one sweep file per task
    python -m benchmarks.lineflow.rl_torch --store sweeps/lineflow_*   # copy, then report
    python -m benchmarks.lineflow.rl_torch                              # report what is stored

    ``--store`` copies every finished job's final policy, ``config.json``, ``evaluations.json``
    and ``result.json`` to ``benchmarks/results/rl_lineflow_torch/<sweep>/<job>/`` (the job's
    ``out`` rewritten to that folder); the report reads those copies.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import common

RESULTS = common.REPO_ROOT / "benchmarks" / "results"
STORE = RESULTS / "rl_lineflow_torch"
JOB_FILES = ("policy.pt", "config.json", "evaluations.json", "result.json")
SHORT = {
    "LineFlow-WaitingTime-v0": "WT",
    "LineFlow-WaitingTimeJump-v0": "WTJ",
    "LineFlow-PartDistribution-v0": "PD",
    "LineFlow-WorkerAssignment-v0": "WA",
    "LineFlow-ComplexLine-v0": "CL",
}
#: task -> (goal, what the goal is)
GOALS = {
    "WT": (154.0, "98% of the optimal controller"),
    "WTJ": (106.0, "upstream's best RL (RecurrentPPO); heuristic 113.6"),
    "PD": (655.0, "the greedy router's level; greedy 659.6"),
    "WA": (278.0, "upstream's A2C; best partition 285.6"),
    "CL": (205.0, "the reference heuristic; best controller found 270.9"),
}
#: task -> scenario of its best controller in ``lineflow_controllers.json``
SCENARIOS = {
    "WT": "waiting_time",
    "WTJ": "waiting_time_jump",
    "PD": "part_distribution",
    "WA": "worker_assignment",
    "CL": "complex_line",
}
#: time to score: the first periodic evaluation at or above this share of the best controller
SCORE_FRACTION = 0.95
#: task -> upstream's training budget (steps per seed), for the table's budget column
UPSTREAM_BUDGET = {"WT": "1M", "WTJ": "10M", "PD": "10M", "WA": "0.5M and 10M", "CL": "100M"}
#: sweep -> what a reader of the table must know about how it was run
NOTES = {
    "lineflow_cl": "PPO on ComplexLine at 20M steps per seed, a fifth of upstream's 100M.",
    "lineflow_cl_a2c": (
        "A2C on ComplexLine at 10M steps per seed: the largest budget that fitted the machine's "
        "time after the PPO runs (half of PPO's 20M, a tenth of upstream's 100M). No seed produced a "
        "part in any evaluation (return 0 at every 1M checkpoint), so the curriculum's scrap factor "
        "never left 0: with the packaged A2C settings (16-step rollouts, one update each) the "
        "policy did not find ComplexLine's production regime; PPO's first parts came within 2M."
    ),
    "lineflow_cl_rppo": (
        "Recurrent PPO on ComplexLine at 2M steps per seed: the largest budget that fitted the "
        "machine's time after the PPO and A2C runs (it costs ~3.5x PPO per step here; upstream's "
        "budget is 100M), so it compares with the PPO curve at 2M, not with PPO's final figure."
    ),
    "lineflow_wtj_rppo": (
        "Seed 4 of the 10M recurrent PPO sweep was run alone from the same sweep file with "
        "`seeds: [4]` after the first run was cut off (same seed and settings give the same run "
        "on CPU); its job folder is numbered 0004 like the others."
    ),
    "lineflow_wtj_rppo5m": "Recurrent PPO on WTJ at half of upstream's budget (5M), before the 10M run.",
    "lineflow_wtj": "The WaitingTimeJump recipe's revision 1.",
    "lineflow_wtj_r2": (
        "The WaitingTimeJump recipe's revision 2: PPO's policy gradient over the waiting times "
        "the line read, GAE lambda 1, entropy 0.003 (as WaitingTime's), chosen on validation "
        "seeds 100 and 101 (10M finals 112.5 and 113.5 on the trainer's 2-episode evaluation)."
    ),
    "lineflow_wt": (
        "The WaitingTime recipe's revision 1. Revision 3 (the policy gradient over the waiting "
        "times the line read, GAE lambda 1, entropy 0.003, the best-validated policy kept) is "
        "scored on the board's 20 held-out episodes in `rl_lineflow_torch_wt_seeds.md` (150.1 to "
        "154.2 over seeds 0-4, IQM 151.9 [150.4, 153.8]) and its training timed in "
        "`time_to_score_reads.md` (95% of the best controller on 5/5 validation seeds, median "
        "0.2M steps and 11 training seconds; revision 1: 1/5)."
    ),
}


def store(sweeps: list[Path]) -> None:
    """Copy the finished jobs of sweep folders into :data:`STORE` (also of a running sweep)."""
    import shutil

    for sweep in sweeps:
        for job in sorted((sweep / "jobs").glob("*/result.json")):
            target = STORE / sweep.name / job.parent.name
            target.mkdir(parents=True, exist_ok=True)
            for name in JOB_FILES:
                shutil.copyfile(job.parent / name, target / name)
            row = json.loads((target / "result.json").read_text())
            row["out"] = str(target.relative_to(common.REPO_ROOT))
            common.write_json(target / "result.json", row, indent=2)


def best_controllers() -> dict[str, float]:
    """Each task's best controller return (``benchmarks/results/lineflow_controllers.json``)."""
    findings = json.loads((RESULTS / "lineflow_controllers.json").read_text())["findings"]
    by_scenario = {f["scenario"]: float(f["best_mean_return"]) for f in findings}
    return {task: by_scenario[s] for task, s in SCENARIOS.items() if s in by_scenario}


def time_to_score(rows: list[dict[str, Any]], threshold: float) -> dict[str, Any]:
    """Steps until each seed's periodic evaluation first reaches ``threshold`` (``None``: never)
    and the training seconds that took, estimated from the run's average training speed (the
    stored curves do not time each evaluation); medians over seeds with never as infinity."""
    from benchmarks.lineflow.time_to_score import median

    steps = [
        next((int(e["timesteps"]) for e in r["curve"] if e["mean_return"] >= threshold), None)
        for r in rows
    ]
    seconds = [
        None if n is None else n * float(r["train_s"]) / int(r["steps"])
        for n, r in zip(steps, rows, strict=True)
    ]
    return {
        "threshold": threshold,
        "reached": sum(n is not None for n in steps),
        "steps": steps,
        "median_steps": median(steps),
        "median_train_s_estimate": median(seconds),
    }


def _time_cell(score: dict[str, Any], seeds: int) -> str:
    if score["median_steps"] is None:
        return f"never ({score['reached']}/{seeds})"
    return (
        f"{score['median_steps'] / 1e6:.2f}M, ~{score['median_train_s_estimate']:.0f} s "
        f"({score['reached']}/{seeds})"
    )


def load_rows() -> list[dict[str, Any]]:
    rows = []
    for path in sorted(STORE.glob("*/*/result.json")):
        row = json.loads(path.read_text())
        row["curve"] = json.loads((path.parent / "evaluations.json").read_text())["evaluations"]
        rows.append(row)
    return rows


def interval(scores: list[float]) -> tuple[float, float, float]:
    from rliable import library as rly
    from rliable import metrics

    data = {"x": np.array(scores, dtype=float)[:, None]}
    point, ci = rly.get_interval_estimates(
        data, lambda x: np.array([metrics.aggregate_iqm(x)]), reps=20_000
    )
    return float(point["x"][0]), float(ci["x"][0, 0]), float(ci["x"][1, 0])


def plot(groups: dict[tuple[str, str, int, str], list[dict[str, Any]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = sorted({key[0] for key in groups}, key=list(GOALS).index)
    fig, axes = plt.subplots(1, len(tasks), figsize=(4.2 * len(tasks), 3.6), squeeze=False)
    for ax, task in zip(axes[0], tasks, strict=True):
        for color, (key, rows) in enumerate(sorted(k for k in groups.items() if k[0][0] == task)):
            label = f"{key[1]} {key[2] / 1e6:.1f}M ({key[3]})"
            for i, row in enumerate(rows):
                steps = [e["timesteps"] / 1e6 for e in row["curve"]]
                values = [e["mean_return"] for e in row["curve"]]
                ax.plot(
                    steps, values, color=f"C{color}", alpha=0.35, label=label if i == 0 else None
                )
        ax.axhline(GOALS[task][0], color="k", linestyle=":", linewidth=1, label="goal")
        ax.set_title(task)
        ax.set_xlabel("training steps (millions)")
        ax.set_ylabel("held-out return")
        ax.legend(fontsize=7)
    fig.tight_layout()
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=100)
    tmp.replace(path)
    plt.close(fig)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", nargs="+", type=Path, default=[], help="sweep folders to copy")
    args = parser.parse_args()
    store(args.store)
    rows = load_rows()
    groups: dict[tuple[str, str, int, str], list[dict[str, Any]]] = {}
    for row in rows:
        sweep = Path(row["out"]).parent.name
        key = (SHORT.get(row["task"], row["task"]), row["algo"], int(row["steps"]), sweep)
        groups.setdefault(key, []).append(row)
    lines = [
        "# LineFlow RL baselines: on-device trainer, IQM over training seeds",
        "",
        "Score of a training seed: mean return of its final greedy policy over 5 held-out "
        "episodes of the SimPy engine (seeds 2**62 + 1000 + k). IQM over seeds with a 95% "
        "stratified-bootstrap CI (rliable, 20,000 resamples). Learning curves: "
        "`rl_lineflow_torch.png`. Time to score: the median over seeds of the steps until the "
        f"periodic evaluation (2 validation episodes, seeds 2**62 + k) first reached "
        f"{SCORE_FRACTION:.0%} of the task's best controller (`lineflow_controllers.md`), with the "
        "training seconds estimated from each run's average speed on this host, and how many seeds "
        "reached it; the evaluations come every 0.1M (WT) to 2M (CL) steps, so the figure is as "
        "coarse as that.",
        "",
        "| task | algo | steps | upstream's budget | sweep | seeds | IQM | 95% CI | per seed | goal "
        f"| met | time to {SCORE_FRACTION:.0%} of best |",
        "|---|---|---:|---|---|---:|---:|---|---|---|---|---|",
    ]
    best = best_controllers()
    # The report reads only the stored copies, so the command that reproduces it takes no
    # arguments (the sweep folders given to --store may lie outside the repository).
    document: dict[str, Any] = {"command": "python -m benchmarks.lineflow.rl_torch", "groups": []}
    order = list(GOALS)
    for key in sorted(
        groups, key=lambda k: (order.index(k[0]) if k[0] in order else 99, k[1], k[2])
    ):
        task, algo, steps, sweep = key
        scores = [float(r["mean_return"]) for r in sorted(groups[key], key=lambda r: r["seed"])]
        point, low, high = interval(scores)
        goal, what = GOALS.get(task, (float("nan"), ""))
        met = point >= goal
        ordered = sorted(groups[key], key=lambda r: r["seed"])
        score = time_to_score(ordered, SCORE_FRACTION * best[task]) if task in best else None
        lines.append(
            f"| {task} | {algo} | {steps:,} | {UPSTREAM_BUDGET.get(task, '–')} | `{sweep}` | "
            f"{len(scores)} | {point:.1f} | "
            f"[{low:.1f}, {high:.1f}] | {', '.join(f'{s:.1f}' for s in scores)} | "
            f">= {goal:g} ({what}) | {'yes' if met else 'no'} | "
            f"{'–' if score is None else _time_cell(score, len(scores))} |"
        )
        document["groups"].append(
            {
                "task": task,
                "algo": algo,
                "steps": steps,
                "sweep": sweep,
                "scores": scores,
                "seeds": sorted(r["seed"] for r in groups[key]),
                "iqm": point,
                "ci95": [low, high],
                "goal": goal,
                "met": met,
                "train_s": [r["train_s"] for r in groups[key]],
                "time_to_score": score,
            }
        )
    sweeps = sorted({Path(r["out"]).parent.name for r in rows})
    notes = [f"- `{sweep}`: {NOTES[sweep]}" for sweep in sweeps if sweep in NOTES]
    lines += ["", "Budgets and runs:", "", *notes] if notes else []
    if "PD" in best:
        lines += [
            "",
            f"PD's threshold ({SCORE_FRACTION * best['PD']:.1f}) lies below random routing's return "
            "(644.4 on seeds 0-4 in `lineflow_controllers.md`), so reaching it on PD says nothing about "
            "learning.",
        ]
    lines += [
        "",
        f"Stored jobs: `benchmarks/results/rl_lineflow_torch/` ({', '.join(sweeps)}).",
        "",
    ]
    plot(groups, RESULTS / "rl_lineflow_torch.png")
    common.write_json(RESULTS / "rl_lineflow_torch.json", document, indent=1)
    common.write_atomic(RESULTS / "rl_lineflow_torch.md", "\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
