"""Reset time of the batched confounder stream: v1's counter draws beside v0's generators.

``ConfounderStream-v0`` draws each instance's episode from its own ``torch.Generator`` and keeps
its ``2N x 1024`` pixel noise; ``ConfounderStream-v1`` draws the whole batch from counter-based
streams and reads its noise from a shared table (``gymforge.envs.confounders.counter_draws``).
For each version and batch size this measures a full ``reset(seed=...)`` (draws plus the first
observation), the draws alone (``_reset_instances`` on every instance) and one ``step``, each
the median of ``--repeats`` runs in one process, one torch thread, v0 and v1 interleaved.
Target: v1's reset at B = 1024 <= 0.5 s on this CPU.

Run: ``python -m benchmarks.confounders_reset`` (``--quick``: B = 256 only, 2 repeats).
Writes ``benchmarks/results/confounders_reset.{json,md}``.
"""

from __future__ import annotations

import argparse
import os
import time

import torch

import gymforge  # noqa: F401 - registers the ids
from benchmarks import common

RESULTS = common.REPO_ROOT / "benchmarks" / "results"
NAME = "confounders_reset"
IDS = ("ConfounderStream-v0", "ConfounderStream-v1")
TARGET_S = 0.5


def measure(env_id: str, num_envs: int, repeat: int) -> dict[str, float]:
    """Median seconds of one reset, the draws alone and one step (run ``repeat``)."""
    env = common.make_vec_quietly(env_id, num_envs)
    everyone = torch.ones(num_envs, dtype=torch.bool)
    action = torch.full((num_envs, env.single_action_space.shape[0]), 0.5)
    reset = common.elapsed(lambda: env.reset(seed=repeat))
    draws = common.elapsed(lambda: env.unwrapped._reset_instances(everyone))
    step = common.elapsed(lambda: env.step(action))
    env.close()
    return {"reset_s": reset, "draws_s": draws, "step_s": step}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="B = 256 only, 2 repeats")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    sizes = (256,) if args.quick else (256, 1024)
    repeats = 2 if args.quick else 3
    load = os.getloadavg()[0]
    rows = common.interleaved_medians(IDS, sizes, repeats, measure)
    by = {(r["env_id"], r["num_envs"]): r for r in rows}
    v1_1024 = by.get(("ConfounderStream-v1", 1024))
    result = {
        "command": common.command_line(),
        "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_average_start": load,
        "repeats": repeats,
        "rows": rows,
        "target_s": TARGET_S,
        "target_met": None if v1_1024 is None else v1_1024["reset_s"] <= TARGET_S,
        "machine": common.machine_info(["torch"]),
    }
    lines = [
        "# Confounder stream reset: v1 counter draws vs v0 generators",
        "",
        f"Command: `{result['command']}`, measured at {result['measured_at']}, one torch thread, "
        f"load average {load:.2f} at the start (a shared 2-core machine); medians of {repeats} "
        "runs, v0 and v1 interleaved.",
        "",
        "| id | B | reset (s) | draws alone (s) | one step (s) | v0 / v1 reset |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        v0 = by[("ConfounderStream-v0", row["num_envs"])]["reset_s"]
        ratio = f"{v0 / row['reset_s']:.1f}x" if row["env_id"].endswith("v1") else "–"
        lines.append(
            f"| `{row['env_id']}` | {row['num_envs']} | {row['reset_s']:.3f} | "
            f"{row['draws_s']:.3f} | {row['step_s']:.3f} | {ratio} |"
        )
    if v1_1024 is not None:
        verdict = "met" if result["target_met"] else "not met"
        lines += [
            "",
            f"Target (v1 reset at B = 1024 <= {TARGET_S} s): **{verdict}** "
            f"({v1_1024['reset_s']:.3f} s, of which {v1_1024['draws_s']:.3f} s draws; the rest "
            "renders the first observation, as every step does).",
        ]
    common.write_json(RESULTS / f"{NAME}{'_quick' if args.quick else ''}.json", result, indent=2)
    common.write_atomic(
        RESULTS / f"{NAME}{'_quick' if args.quick else ''}.md", "\n".join(lines) + "\n"
    )
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
