"""How far a board's re-run on this CPU lands from the figures stored on another CPU.

The MetaBBO and ConfounderStream dynamics take matrix products whose BLAS kernels differ between
CPU generations in the last bits, which an episode amplifies. ``leaderboard verify`` accepts such
a difference as a note only within a bounded relative tolerance per family
(:data:`gymforge.leaderboards.verify.CROSS_MACHINE_RTOL`). This script measures the real size of
the differences: it re-runs the first ``--episodes`` episodes of every stored submission of those
boards that was recorded on another CPU, and reports per board the largest absolute and relative
difference of each episode's metric and return.

    python -m benchmarks.verify_cross_machine --episodes 2 --out benchmarks/results/verify_cross_machine.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from gymforge.baselines.agent_loader import AgentRecord
from gymforge.checks.machine import cpu_model
from gymforge.leaderboards.evaluator import run_episodes
from gymforge.leaderboards.files import read_json
from gymforge.leaderboards.protocol import list_tasks, load_protocol
from gymforge.leaderboards.roots import default_root
from gymforge.leaderboards.submission import list_submissions
from gymforge.leaderboards.verify import KERNEL_DEPENDENT_IDS


def relative(a: float, b: float) -> float:
    return abs(a - b) / max(abs(a), abs(b), 1e-12)


def measure(root: Path, episodes: int) -> dict:
    here = cpu_model()
    boards = {}
    for task in list_tasks(root):
        protocol = load_protocol(root, task)
        if not protocol.env_id.startswith(KERNEL_DEPENDENT_IDS):
            continue
        rows = []
        for folder in list_submissions(root, task):
            results = read_json(folder / "results.json", str(folder))
            recorded = results.get("provenance", {}).get("hardware", {}).get("cpu")
            if recorded == here:
                continue
            record = AgentRecord.from_json(results["agent"], str(folder))
            indices = list(range(min(episodes, len(protocol.seeds))))
            fresh = run_episodes(protocol, record, indices=indices, base=folder)
            for episode in fresh:
                old = results["episodes"][episode["index"]]
                rows.append(
                    {
                        "submission": folder.name,
                        "recorded_cpu": recorded,
                        "index": episode["index"],
                        "metric_abs": abs(episode["metric"] - old["metric"]),
                        "metric_rel": relative(episode["metric"], old["metric"]),
                        "return_abs": abs(episode["return"] - old["return"]),
                        "return_rel": relative(episode["return"], old["return"]),
                    }
                )
        if rows:
            boards[task] = {
                "episodes": len(rows),
                "max_metric_rel": max(r["metric_rel"] for r in rows),
                "max_return_rel": max(r["return_rel"] for r in rows),
                "max_metric_abs": max(r["metric_abs"] for r in rows),
                "max_return_abs": max(r["return_abs"] for r in rows),
                "rows": rows,
            }
    return {"rerun_cpu": here, "episodes_per_submission": episodes, "boards": boards}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    start = time.perf_counter()
    report = measure(default_root(), args.episodes)
    report["seconds"] = round(time.perf_counter() - start, 1)
    for task, board in report["boards"].items():
        print(
            f"{task}: {board['episodes']} episodes, max relative difference metric "
            f"{board['max_metric_rel']:.2e}, return {board['max_return_rel']:.2e}"
        )
    if args.out is not None:
        args.out.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
