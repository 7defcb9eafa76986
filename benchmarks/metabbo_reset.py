"""Reset time of the batched MetaBBO env: v1's counter draws beside v0's per-instance generators.

``MetaBBO-v0`` draws each random instance's parameters (shift, rotations, bias, Gallagher
peaks) from its own CPU ``torch.Generator``, one instance at a time on the host; ``MetaBBO-v1``
draws them for the whole batch from counter-based streams on the env's device
(``gymforge.envs.metabbo.bbob_counter``). For each version and batch size this measures a full
``reset(seed=...)`` (problem draws, initial populations and their evaluation, the first
observation), the problem draws alone (``build_instances`` of that reset's problems) and one
``step``, each the median of ``--repeats`` runs in one process, one torch thread, v0 and v1
interleaved. The rest of a reset evaluates the initial population (100 points per instance),
which every step does too.

Run: ``python -m benchmarks.metabbo_reset`` (``--quick``: B = 256 only, 2 repeats).
Writes ``benchmarks/results/metabbo_reset.{json,md}``.
"""

from __future__ import annotations

import argparse
import os
import time

import torch

import gymforge  # noqa: F401 - registers the ids
from benchmarks import common
from gymforge.envs.metabbo.problems import build_instances

RESULTS = common.REPO_ROOT / "benchmarks" / "results"
NAME = "metabbo_reset"
IDS = ("MetaBBO-v0", "MetaBBO-v1")


def measure(env_id: str, num_envs: int, repeat: int) -> dict[str, float]:
    """Median-ready seconds of one reset, its problem draws alone and one step."""
    env = common.make_vec_quietly(env_id, num_envs)
    reset = common.elapsed(lambda: env.reset(seed=repeat))
    problems = env.unwrapped.state.problems
    config = env.unwrapped.config.problem_set
    draws = common.elapsed(
        lambda: build_instances(config, problems.function_id, problems.instance_id, "cpu")
    )
    action = torch.as_tensor(env.action_space.sample())
    step = common.elapsed(lambda: env.step(action))
    env.close()
    return {"reset_s": reset, "draws_s": draws, "step_s": step}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="B = 256 only, 2 repeats")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    sizes = (256,) if args.quick else (256, 1024, 4096)
    repeats = 2 if args.quick else 3
    load = os.getloadavg()[0]
    rows = common.interleaved_medians(IDS, sizes, repeats, measure)
    by = {(r["env_id"], r["num_envs"]): r for r in rows}
    result = {
        "command": common.command_line(),
        "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_average_start": load,
        "repeats": repeats,
        "rows": rows,
        "machine": common.machine_info(["torch"]),
    }
    lines = [
        "# MetaBBO reset: v1 counter draws vs v0 per-instance generators",
        "",
        f"Command: `{result['command']}`, measured at {result['measured_at']}, one torch thread, "
        f"load average {load:.2f} at the start (a shared 2-core machine); medians of {repeats} "
        "runs, v0 and v1 interleaved.",
        "",
        "| id | B | reset (s) | problem draws alone (s) | one step (s) | v0 / v1 draws |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        v0 = by[("MetaBBO-v0", row["num_envs"])]["draws_s"]
        ratio = f"{v0 / row['draws_s']:.1f}x" if row["env_id"].endswith("v1") else "–"
        lines.append(
            f"| `{row['env_id']}` | {row['num_envs']} | {row['reset_s']:.3f} | "
            f"{row['draws_s']:.3f} | {row['step_s']:.3f} | {ratio} |"
        )
    lines += [
        "",
        "The rest of a reset draws and evaluates the initial populations (100 points per "
        "instance), batched in both versions, about what one step costs.",
    ]
    suffix = "_quick" if args.quick else ""
    common.write_json(RESULTS / f"{NAME}{suffix}.json", result, indent=2)
    common.write_atomic(RESULTS / f"{NAME}{suffix}.md", "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
