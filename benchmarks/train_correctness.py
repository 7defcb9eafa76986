"""Does the on-device PPO learn as well as SB3's PPO at equal steps and hyperparameters?

What it compares
    WaitingTime (``LineFlow-WaitingTime-v0``), 1M training steps, three training seeds each
    (11, 174, 2024), the hyperparameters of the stored SB3 baseline (``rl_lineflow_wt.yaml``:
    5 envs, 500-step rollouts, minibatches of 500, 5 epochs, clip 0.2, learning rate 1e-3
    constant, entropy 0.01, γ 0.999, λ 0.98, separate 64-64 tanh networks):

    * ``sb3``: the stored SB3 runs (``baselines/models/LineFlow-WaitingTime-v0/ppo-seed*``),
      trained on the exact SimPy engine;
    * ``torch``: the on-device trainer with the same settings (``train_correctness_wt.yaml``),
      trained on the batched torch engine (5 instances).

    Both runs evaluated the greedy policy every 25k steps on the held-out seed 2**62 (one SimPy
    episode), so their learning curves are comparable point by point. The score of a run is the
    mean of its evaluations over the last 200k steps (no checkpoint selection); across the three
    seeds the table gives the interquartile mean with a 95% stratified-bootstrap confidence
    interval (rliable). The torch runs' final policies are also evaluated on the held-out seeds
    2**62 + 1000 + k (k < 5), the seeds of ``rl_lineflow.md``.

How to run (from the repository root; ``pip install -e '.[stats]'``)
    for s in 11 174 2024; do gymforge train LineFlow-WaitingTime-v0 --algo ppo --backend torch \\
        --steps 1000000 --seed $s --config benchmarks/train_correctness_wt.yaml \\
        --out runs/correctness/torch-seed$s; done
    python -m benchmarks.train_correctness runs/correctness
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import common

SEEDS = (11, 174, 2024)
ENV_ID = "LineFlow-WaitingTime-v0"
SB3_MODELS = common.REPO_ROOT / "baselines" / "models" / ENV_ID
RESULTS = common.REPO_ROOT / "benchmarks" / "results"
HELD_OUT = [2**62 + 1000 + k for k in range(5)]
LAST = 200_000


def late_mean(evaluations: list[dict[str, Any]], steps: int = 1_000_000) -> float:
    """Mean periodic evaluation over the last ``LAST`` steps of a ``steps``-step run."""
    late = [e["mean_return"] for e in evaluations if e["timesteps"] > steps - LAST]
    return float(np.mean(late))


def iqm_ci(scores: dict[str, list[float]]) -> dict[str, tuple[float, float, float]]:
    """IQM and its 95% stratified-bootstrap CI per method (one task, runs as rows)."""
    from rliable import library as rly
    from rliable import metrics

    data = {name: np.array(values, dtype=float)[:, None] for name, values in scores.items()}
    point, interval = rly.get_interval_estimates(
        data, lambda x: np.array([metrics.aggregate_iqm(x)]), reps=20_000
    )
    return {
        n: (float(point[n][0]), float(interval[n][0, 0]), float(interval[n][1, 0])) for n in data
    }


def held_out(run: Path) -> list[float]:
    from gymforge.baselines.ondevice.agent import TorchPolicyAgent
    from gymforge.baselines.training.evaluation import run_episodes

    episodes = run_episodes(TorchPolicyAgent(run), ENV_ID, {}, HELD_OUT)
    return [e["return"] for e in episodes]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, help="folder with torch-seed<S> run folders")
    args = parser.parse_args()
    import gymforge  # noqa: F401

    curves: dict[str, dict[int, list[dict[str, Any]]]] = {"sb3": {}, "torch": {}}
    for seed in SEEDS:
        sb3 = json.loads((SB3_MODELS / f"ppo-seed{seed}" / "evaluations.json").read_text())
        curves["sb3"][seed] = sb3["evaluations"]
        torch_run = json.loads((args.runs / f"torch-seed{seed}" / "evaluations.json").read_text())
        curves["torch"][seed] = torch_run["evaluations"]
    late = {name: [late_mean(curves[name][s]) for s in SEEDS] for name in curves}
    stats = iqm_ci(late)
    overlap = stats["torch"][2] >= stats["sb3"][1] and stats["sb3"][2] >= stats["torch"][1]
    held = {seed: held_out(args.runs / f"torch-seed{seed}") for seed in SEEDS}
    speed = {
        seed: json.loads((args.runs / f"torch-seed{seed}" / "config.json").read_text()).get(
            "train_steps_per_s"
        )
        for seed in SEEDS
    }
    document = {
        "command": common.command_line(),
        "machine": common.machine_info(["torch", "stable_baselines3", "rliable"]),
        "late_mean": late,
        "iqm_ci": stats,
        "overlap": overlap,
        "torch_held_out": held,
        "torch_train_steps_per_s": speed,
    }
    common.write_json(RESULTS / "train_correctness.json", document, indent=1)
    lines = [
        "# On-device PPO vs SB3 PPO at equal steps and hyperparameters (WaitingTime, 1M steps)",
        "",
        "Score of a run: mean of its periodic held-out evaluations (seed 2**62, SimPy engine, "
        "greedy policy, every 25k steps) over the last 200k steps. IQM over 3 training seeds "
        "with a 95% stratified-bootstrap CI (rliable, 20,000 resamples). SB3 trained on the "
        "SimPy engine, the on-device trainer on the batched torch engine, both with "
        "5 envs x 500-step rollouts, minibatches of 500, 5 epochs, clip 0.2, lr 1e-3, "
        "entropy 0.01, gamma 0.999, lambda 0.98, separate 64-64 tanh networks.",
        "",
        "| trainer | per-seed scores (11, 174, 2024) | IQM | 95% CI |",
        "|---|---|---:|---|",
    ]
    for name in ("sb3", "torch"):
        point, low, high = stats[name]
        per_seed = ", ".join(f"{v:.1f}" for v in late[name])
        lines.append(f"| {name} | {per_seed} | {point:.1f} | [{low:.1f}, {high:.1f}] |")
    lines += [
        "",
        f"**Confidence intervals overlap: {'yes' if overlap else 'no'}.**",
        "",
        "Torch runs' final policies on the held-out seeds 2**62 + 1000 + k (k < 5): "
        + "; ".join(f"seed {s}: {np.mean(v):.1f} ± {np.std(v):.1f}" for s, v in held.items())
        + ". Training speed of these runs (5 instances, so per-step overhead dominates): "
        + ", ".join(f"{v:,.0f}" for v in speed.values())
        + " steps/s.",
        "",
        f"Command: `{document['command']}`",
        "",
    ]
    common.write_atomic(RESULTS / "train_correctness.md", "\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
