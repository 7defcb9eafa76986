"""Off-CMAB speed: batched cascade plays, the vector env, and CLCB on a 100,000-record dataset.

Measures, side by side in one run (1 torch thread, medians of ``--repeats`` timed blocks; the
blocks of all the measurements are interleaved round by round, so that a burst of load from other
jobs on a shared machine hits every measurement alike instead of one of them):

1. **Batched dynamics**: ``CascadeProblem.play`` (m=100, k=5) on B instances at once, in
   super-arm plays per second (B plays per call), for B ∈ {1, 64, 1024, 4096, 16384}.
2. **Vector env**: ``gym.make_vec("OffCMAB-Cascade-v0", num_envs=B,
   vectorization_mode="vector_entry_point")``, ``step`` with fixed actions (validation, decoding,
   feedback, triggered-arm and outcome tensors in ``info``, observation), both action formats.
3. **Anchor**: a per-instance numpy loop, each instance with its own ``np.random.Generator``,
   doing the same play (gather μ of the list, one uniform, first click); the ratio is
   batched / loop.
4. **CLCB on a 100,000-record cascade dataset** (uniform logging): arm statistics + LCBs +
   top-k oracle from the loaded arrays, and the same with a per-record Python loop for the
   statistics (anchor); plus loading the dataset from disk (checksum verified) and collecting it.

Targets: ≥ 1,000,000 plays/s at B = 4096; CLCB < 100 ms. Writes
``benchmarks/results/cmab_speed.{json,md}``. ``--quick``: fewer repeats and batch sizes; ``--note``:
how the machine was loaded (the 1/5/15-minute load averages at start and end are recorded too).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

import gymforge  # noqa: F401 - registers the ids
from benchmarks.common import command_line, machine_info, write_atomic, write_json
from gymforge.agents.cmab.clcb import clcb, clcb_from_statistics
from gymforge.core.instance_rng import InstanceRNG
from gymforge.envs.cmab.cascade import CascadeProblem
from gymforge.envs.cmab.collect import collect
from gymforge.envs.cmab.datasets import load_dataset
from gymforge.envs.cmab.problem import param_rng

RESULTS = Path(__file__).resolve().parents[1] / "results"


def median_seconds(fn: Callable[[], Any], calls: int, repeats: int) -> float:
    """Median over ``repeats`` blocks of the time per call of ``fn`` (``calls`` calls per block)."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


Workload = tuple[Callable[[], Any], int]  # one call, and the calls per timed block


def interleaved_medians(workloads: dict[str, Workload], repeats: int) -> dict[str, float]:
    """Median time per call of each workload: ``repeats`` rounds, each timing one block of every
    workload in turn. Each block starts with an untimed call, so that no workload pays for
    the caches the one before it left cold."""
    times: dict[str, list[float]] = {key: [] for key in workloads}
    for _ in range(repeats):
        for key, (fn, calls) in workloads.items():
            fn()
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            times[key].append((time.perf_counter() - start) / calls)
    return {key: statistics.median(value) for key, value in times.items()}


def batched_dynamics(batch: int) -> Workload:
    problem = CascadeProblem()
    params = problem.draw_params(param_rng(torch.arange(batch)))
    rng = InstanceRNG.create(list(range(batch)))
    arm = torch.topk(torch.rand(batch, 100, generator=torch.Generator().manual_seed(0)), 5).indices
    calls = max(3, min(300, 200_000 // batch))
    return (lambda: problem.play(params, arm, rng)), calls


def vector_env(batch: int, action_format: str) -> Workload:
    venv = gym.make_vec(
        "OffCMAB-Cascade-v0",
        num_envs=batch,
        vectorization_mode="vector_entry_point",
        array_backend="torch",
        action_format=action_format,
        horizon=10**9,
    )
    venv.reset(seed=0)
    ids = torch.topk(torch.rand(batch, 100, generator=torch.Generator().manual_seed(0)), 5).indices
    action = ids if action_format == "ids" else venv.encode(ids)
    calls = max(3, min(100, 100_000 // batch))
    return (lambda: venv.step(action)), calls


def numpy_loop(batch: int) -> Workload:
    """Per-instance loop: the same cascade play written for one instance at a time in numpy."""
    generators = [np.random.default_rng(i) for i in range(batch)]
    mu = np.stack([g.random(100) for g in generators])
    lists = np.stack([g.permutation(100)[:5] for g in generators])

    def step() -> None:
        for b in range(batch):
            no_click = np.cumprod(1.0 - mu[b, lists[b]])
            u = generators[b].random()
            int((u >= 1.0 - no_click).sum())

    return step, max(1, 1024 // batch)


def clcb_timings(records: int, repeats: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        path = collect("OffCMAB-Cascade-v0", "uniform", records, Path(folder) / "d", seed=0)
        collect_s = time.perf_counter() - start
        load_s = median_seconds(lambda: load_dataset(path), 1, repeats)
        dataset = load_dataset(path)
    batched_s = median_seconds(lambda: clcb(dataset), 1, repeats)
    problem = dataset.problem
    action, click = dataset["action"].tolist(), dataset["click_position"].tolist()

    def loop() -> None:
        counts = [0.0] * problem.n_items
        sums = [0.0] * problem.n_items
        for items, first in zip(action, click, strict=True):
            for position, item in enumerate(items):
                if position > first:
                    break
                counts[item] += 1
                sums[item] += position == first
        clcb_from_statistics(problem, np.array(counts), np.array(sums), records)

    loop_s = median_seconds(loop, 1, max(1, repeats // 4))
    return {
        "records": records,
        "clcb_ms": 1e3 * batched_s,
        "clcb_python_loop_ms": 1e3 * loop_s,
        "ratio": loop_s / batched_s,
        "load_ms": 1e3 * load_s,
        "collect_s": collect_s,
        "collect_records_per_s": records / collect_s,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--note", default="measured on a 2-core machine shared with other jobs (loaded)"
    )
    args = parser.parse_args(argv)
    load_start = os.getloadavg()
    torch.set_num_threads(1)
    repeats = 3 if args.quick else args.repeats
    batches = [64, 4096] if args.quick else [1, 64, 1024, 4096, 16384]
    start = time.perf_counter()
    workloads: dict[str, Workload] = {}
    for batch in batches:
        workloads[f"{batch}/dynamics"] = batched_dynamics(batch)
        workloads[f"{batch}/vector_env_ids"] = vector_env(batch, "ids")
        workloads[f"{batch}/vector_env_choice"] = vector_env(batch, "choice")
        if batch <= 4096:
            workloads[f"{batch}/numpy_loop"] = numpy_loop(batch)
    seconds = interleaved_medians(workloads, repeats)
    rows = []
    for batch in batches:
        row: dict[str, Any] = {"B": batch}
        for kind in ("dynamics", "vector_env_ids", "vector_env_choice", "numpy_loop"):
            if f"{batch}/{kind}" in seconds:
                row[kind] = batch / seconds[f"{batch}/{kind}"]
        if "numpy_loop" in row:
            row["ratio_dynamics_over_loop"] = row["dynamics"] / row["numpy_loop"]
            row["ratio_vector_env_over_loop"] = row["vector_env_choice"] / row["numpy_loop"]
        rows.append(row)
        print({k: (round(v) if isinstance(v, float) and v > 100 else v) for k, v in row.items()})
    solver = clcb_timings(100_000, repeats)
    print(solver)
    at_4096 = next(r for r in rows if r["B"] == 4096)
    meta = {
        "command": command_line(),
        "seconds": time.perf_counter() - start,
        "threads": torch.get_num_threads(),
        "repeats": repeats,
        "machine": machine_info(["torch", "numpy", "gymnasium"]),
        "note": args.note,
        "load_average_start": list(load_start),
        "load_average_end": list(os.getloadavg()),
    }
    targets = {
        "plays_per_s_B4096_dynamics": at_4096["dynamics"],
        "plays_per_s_B4096_vector_env": at_4096["vector_env_choice"],
        "dynamics_target_met": at_4096["dynamics"] >= 1e6,
        "vector_env_target_met": at_4096["vector_env_choice"] >= 1e6,
        "clcb_ms": solver["clcb_ms"],
        "clcb_target_met": solver["clcb_ms"] < 100,
    }
    data = {"meta": meta, "targets": targets, "plays": rows, "clcb": solver}
    args.out.mkdir(parents=True, exist_ok=True)
    stem = "cmab_speed_quick" if args.quick else "cmab_speed"
    write_json(args.out / f"{stem}.json", data, indent=1)
    write_atomic(args.out / f"{stem}.md", markdown(data))
    return 0


def markdown(data: dict[str, Any]) -> str:
    meta, targets, solver = data["meta"], data["targets"], data["clcb"]

    def rate(x: float | None) -> str:
        return "–" if x is None else f"{x:,.0f}"

    def load(x: list[float] | None) -> str:
        return "–" if x is None else "/".join(f"{v:.2f}" for v in x)

    def ratio(x: float) -> str:
        return f"{x:.2g}×" if x < 10 else f"{x:.0f}×"

    lines = [
        "# Off-CMAB speed (cascade, m=100, k=5)",
        "",
        f"Command: `{meta['command']}`; {meta['threads']} torch thread; {meta['note']}; "
        f"{meta['seconds']:.0f} s; load average (1/5/15 min) {load(meta.get('load_average_start'))} "
        f"at start, {load(meta.get('load_average_end'))} at end. "
        "Rates are super-arm plays per second: medians of "
        f"{meta.get('repeats', '–')} timed blocks per cell, the cells' blocks interleaved round by round.",
        "",
        "| B | batched dynamics | vector env (`ids`) | vector env (`choice`) | numpy per-instance loop | dynamics / loop | vector env / loop |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in data["plays"]:
        lines.append(
            f"| {row['B']} | {rate(row['dynamics'])} | {rate(row['vector_env_ids'])} | "
            f"{rate(row['vector_env_choice'])} | {rate(row.get('numpy_loop'))} | "
            + (
                f"{ratio(row['ratio_dynamics_over_loop'])} | {ratio(row['ratio_vector_env_over_loop'])} |"
                if "numpy_loop" in row
                else "– | – |"
            )
        )
    lines += [
        "",
        f"Target ≥ 1,000,000 plays/s at B = 4096: batched dynamics {rate(targets['plays_per_s_B4096_dynamics'])} "
        f"({'met' if targets['dynamics_target_met'] else 'not met'}), vector env "
        f"{rate(targets['plays_per_s_B4096_vector_env'])} ({'met' if targets['vector_env_target_met'] else 'not met'}).",
        "",
        f"## CLCB on a {solver['records']:,}-record cascade dataset",
        "",
        "| step | time |",
        "|---|---|",
        f"| CLCB (arm statistics with numpy bincount, LCBs, heap top-k) | {solver['clcb_ms']:.1f} ms |",
        f"| same with a per-record Python loop for the statistics (anchor) | {solver['clcb_python_loop_ms']:.0f} ms ({solver['ratio']:.0f}× slower) |",
        f"| load the dataset (sha256 verified, instance rebuilt and hash-checked) | {solver['load_ms']:.1f} ms |",
        f"| collect it (`collect`, uniform logging, written atomically) | {solver['collect_s']:.2f} s ({solver['collect_records_per_s']:,.0f} records/s) |",
        "",
        f"Target CLCB < 100 ms: {'met' if targets['clcb_target_met'] else 'not met'}.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
