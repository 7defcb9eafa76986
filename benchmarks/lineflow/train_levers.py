"""Levers on the on-device trainer's iteration, measured on WaitingTime's packaged recipe.

One iteration of ``gymforge train LineFlow-WaitingTime-v0 --backend torch`` (64 lines x 128 steps,
then 5 epochs x 16 minibatches) is timed as collect (env steps plus the policy's forward) and
update, for each lever, in one process per lever, the levers interleaved over ``--repeats``
rounds so that the host's load falls on all of them alike; 1 torch thread. Levers:

- ``baseline``: the trainer as shipped (rollouts under ``torch.no_grad``, fused Adam).
- ``compile``: ``torch.compile`` (inductor, CPU) of the network's ``heads`` (forward of actor and
  critic; the update's backward runs through the compiled graph too).
- ``inference_mode``: the rollout under ``torch.inference_mode`` instead of ``no_grad``.

The first two iterations of each process are warm-up (compilation) and not counted. The trainer's
own split (env, policy, update seconds) says how much of an iteration a lever can reach at all.

Example::

    python -m benchmarks.lineflow.train_levers --repeats 3 --out benchmarks/results/train_levers
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks.common import command_line, machine_info, write_result_files

LEVERS = ("baseline", "compile", "inference_mode")
ITERATIONS = 10  # counted, after 2 warm-up iterations


def measure(lever: str) -> dict[str, Any]:
    """Time ``ITERATIONS`` iterations of the packaged WT recipe with ``lever`` (in this process)."""
    import time

    import gymnasium as gym
    import torch

    import gymforge  # noqa: F401  (registers the ids)
    from gymforge.baselines.ondevice.config import algo_config, load_config
    from gymforge.baselines.ondevice.ppo import PPO

    torch.set_num_threads(1)
    cfg = load_config("LineFlow-WaitingTime-v0")
    env = gym.make_vec(
        "LineFlow-WaitingTime-v0", num_envs=cfg.n_envs,
        vectorization_mode="vector_entry_point", device="cpu",
    )  # fmt: skip
    trainer = PPO(env, algo_config(cfg, "ppo"), seed=0)
    if lever == "compile":
        trainer.policy.heads = torch.compile(trainer.policy.heads)
    trainer.start(0)
    context = torch.inference_mode if lever == "inference_mode" else torch.no_grad
    collect, update = [], []
    for iteration in range(2 + ITERATIONS):
        t0 = time.perf_counter()
        with context():
            trainer.collect()
        t1 = time.perf_counter()
        trainer.update(iteration / 123)
        t2 = time.perf_counter()
        if iteration >= 2:
            collect.append(t1 - t0)
            update.append(t2 - t1)
    env.close()
    split = {k: v / (2 + ITERATIONS) for k, v in trainer.timings.as_dict().items()}
    return {
        "collect_s": statistics.median(collect),
        "update_s": statistics.median(update),
        "iteration_s": statistics.median(c + u for c, u in zip(collect, update, strict=True)),
        "split_s": split,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/train_levers"))
    parser.add_argument("--lever", choices=LEVERS, help=argparse.SUPPRESS)  # a worker process
    args = parser.parse_args(argv)
    if args.lever:
        print(json.dumps(measure(args.lever)))
        return 0
    runs: dict[str, list[dict[str, Any]]] = {lever: [] for lever in LEVERS}
    for repeat in range(args.repeats):
        order = LEVERS if repeat % 2 == 0 else tuple(reversed(LEVERS))
        for lever in order:
            done = subprocess.run(
                [sys.executable, "-m", "benchmarks.lineflow.train_levers", "--lever", lever],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            runs[lever].append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(lever, runs[lever][-1], flush=True)
    summary = {}
    for lever, rows in runs.items():
        summary[lever] = {
            key: statistics.median(r[key] for r in rows)
            for key in ("collect_s", "update_s", "iteration_s")
        }
    base = summary["baseline"]["iteration_s"]
    for lever in LEVERS:
        summary[lever]["speedup_vs_baseline"] = base / summary[lever]["iteration_s"]
    split = {
        k: statistics.median(r["split_s"][k] for r in runs["baseline"])
        for k in ("env", "policy", "update")
    }
    result = {
        "command": command_line(argv),
        "machine": machine_info(["torch", "gymnasium"]),
        "repeats": args.repeats,
        "iterations_counted": ITERATIONS,
        "baseline_split_s": split,
        "summary": summary,
        "runs": runs,
    }
    lines = [
        "# On-device trainer levers: one WaitingTime iteration (64 lines x 128 steps, 5 x 16 updates)",
        "",
        f"Host: {result['machine'].get('cpu_model') or 'unknown'}, 1 torch thread, median of {args.repeats} "
        f"processes per lever (interleaved) of the median of {ITERATIONS} iterations each.",
        "",
        "| lever | collect s | update s | iteration s | speed-up vs baseline |",
        "|---|---:|---:|---:|---:|",
    ]
    for lever in LEVERS:
        row = summary[lever]
        lines.append(
            f"| {lever} | {row['collect_s']:.3f} | {row['update_s']:.3f} | {row['iteration_s']:.3f} "
            f"| {row['speedup_vs_baseline']:.2f}x |"
        )
    lines += [
        "",
        f"Baseline split of an iteration (the trainer's own timings): env {split['env']:.3f} s, "
        f"policy forward during collection {split['policy']:.3f} s, update {split['update']:.3f} s.",
        "",
        "Command:",
        "",
        f"    {result['command']}",
    ]
    write_result_files(args.out, result, "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
