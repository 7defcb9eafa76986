"""MetaBBO evaluation time against the number of distinct functions in a batch.

``gym.make_vec("MetaBBO-v0", num_envs=64)`` draws its problems from the easy split's 16 train
functions, so a batch holds about four instances of each. This measures one evaluation of a
``[B, 100, 10]`` population (what every generation does once) for batches of ``B = 64`` random
instances drawn from ``k`` of those 16 functions, ``k`` in 1, 2, 4, 8, 16: the 16 functions are
shuffled (seeded) and cut into ``16 / k`` groups of ``k``, so that across one shuffle every
function fills the same share of rows whatever ``k`` (the expected work per row is the same).
Three implementations run side by side on every batch, interleaved:

- ``staged``: :func:`gymforge.envs.metabbo.bbob.evaluate`, the env's evaluation (one pass per
  shared transform, :mod:`gymforge.envs.metabbo.bbob_stages`);
- ``staged, no blocks``: the same with ``workspace.ROW_BLOCK_BYTES`` out of reach, so that every
  pass covers the whole batch at once (the evaluation before large batches ran in blocks of
  instances);
- ``by function``: the anchor, the batch grouped by function id and each group evaluated by
  its plain kernel (:data:`gymforge.envs.metabbo.bbob_functions.KERNELS`), as the first batched
  version did; the groups and their parameters are prepared once, outside the timing.

All must give the same bits on every batch (checked and recorded). One torch thread; each
figure is the median over ``--repeats`` timings of ``--calls`` evaluations. If evaluation cost
did not grow with the number of distinct functions, the staged row would be flat in ``k``.

A second table holds the default composition (all 16 functions) at larger batch sizes
(``--sizes``, default 64, 256, 1024), per instance, for users who evaluate thousands of
instances at once on a CPU. A third measures what the rest of a generation costs: default
``MetaBBO-v0`` generations at ``B = 64`` (random actions) with the real objective and with a
nearly free one put in its place (``sum(x^2) + 10^4``, one pass), interleaved, as ms per
generation and per 500-generation instance-episode, the unit of the default-split speed target.

Run: ``python -m benchmarks.metabbo.eval_mix`` (``--quick``: one shuffle, 3 repeats, 20
generations).
Writes ``benchmarks/results/metabbo_eval_mix.{json,md}``.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import torch
from torch import Tensor

from benchmarks import common
from gymforge.envs.metabbo import bbob_functions as bf
from gymforge.envs.metabbo import workspace
from gymforge.envs.metabbo.bbob import BBOBInstances, evaluate, random_instances
from gymforge.envs.metabbo.problems import split_functions

NAME = "metabbo_eval_mix"
BATCH, POPULATION, DIMENSION = 64, 100, 10
TRAIN = split_functions("easy", "train")  # the 16 functions of the default problems
KS = (1, 2, 4, 8, 16)
IMPLEMENTATIONS = ("staged", "unblocked", "by_function")


def by_function(instances: BBOBInstances) -> Callable[[Tensor], Tensor]:
    """The anchor: ``x -> f(x)`` grouping rows by function, each group by its plain kernel."""
    groups = []
    for fid in sorted(set(instances.function_id.tolist())):
        rows = torch.nonzero(instances.function_id == fid).squeeze(1)
        one = instances.select(rows)
        groups.append((rows, bf.KERNELS[fid], one.kernel_args(), one.f_opt[:, None]))

    def run(x: Tensor) -> Tensor:
        out = torch.empty(x.shape[:2], dtype=torch.float64)
        for rows, kernel, args, f_opt in groups:
            out[rows] = kernel(args, x.index_select(0, rows)) + f_opt
        return torch.nan_to_num(out, nan=math.inf, posinf=math.inf, neginf=-math.inf)

    return run


def batches(shuffles: int, seed: int) -> list[tuple[int, list[int]]]:
    """``(k, functions)`` of every batch: per shuffle of the 16 functions, its groups of ``k``."""
    rng = random.Random(seed)
    out = []
    for _ in range(shuffles):
        order = list(TRAIN)
        rng.shuffle(order)
        out += [(k, order[i : i + k]) for k in KS for i in range(0, len(order), k)]
    return out


def without_blocks(fn: Callable[[], Tensor]) -> Callable[[], Tensor]:
    """``fn`` run with every element-wise pass over the whole batch at once (one block)."""

    def run() -> Tensor:
        saved = workspace.ROW_BLOCK_BYTES
        workspace.ROW_BLOCK_BYTES = 1 << 62
        try:
            return fn()
        finally:
            workspace.ROW_BLOCK_BYTES = saved

    return run


def compare(functions: list[int], size: int, args: argparse.Namespace) -> dict[str, Any]:
    """The implementations on ``size`` random instances cycling through ``functions``: their
    median ms per evaluation (timed in turn, ``--repeats`` times) and whether the bits agree."""
    g = torch.Generator().manual_seed(args.seed)
    shape = (size, POPULATION, DIMENSION)
    x = torch.rand(shape, generator=g, dtype=torch.float64) * 10.0 - 5.0
    k = len(functions)
    inst = random_instances([functions[i % k] for i in range(size)], DIMENSION, range(size))
    runs = {
        "staged": partial(evaluate, inst, x),
        "unblocked": without_blocks(partial(evaluate, inst, x)),
        "by_function": partial(by_function(inst), x),
    }
    first, *others = (fn().view(torch.int64) for fn in runs.values())
    same = all(torch.equal(first, other) for other in others)
    calls = max(1, args.calls * BATCH // size)  # about the same work per timing at every size
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.repeats):
        for name, fn in runs.items():
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            times[name].append((time.perf_counter() - start) / calls * 1e3)
    return {"k": k, "batch": size, "functions": functions, "bits_equal": same} | {
        f"{name}_ms": statistics.median(t) for name, t in times.items()
    }


def free_objective(problems: BBOBInstances, x: Tensor) -> Tensor:
    """A stand-in objective of one pass (positive and far from every optimum, so that no
    episode ends early)."""
    return x.square().sum(-1) + 1e4


def generation_floor(args: argparse.Namespace) -> dict[str, float]:
    """Median ms per default generation at ``B = 64`` with the real and the free objective."""
    from gymforge.envs.metabbo import optimizer

    real = optimizer.evaluate_finite
    times: dict[str, list[float]] = {"real": [], "free": []}
    try:
        for r in range(args.repeats):
            for name, objective in (("real", real), ("free", free_objective)):
                optimizer.evaluate_finite = objective
                env = common.make_vec_quietly("MetaBBO-v0", BATCH)
                g = torch.Generator().manual_seed(r)
                actions = torch.randint(0, 16, (args.generations, BATCH, 3), generator=g)
                env.reset(seed=list(range(BATCH)))
                start = time.perf_counter()
                for action in actions:
                    env.step(action)
                times[name].append((time.perf_counter() - start) / args.generations * 1e3)
                env.close()
    finally:
        optimizer.evaluate_finite = real
    return {f"{name}_ms_per_generation": statistics.median(t) for name, t in times.items()}


def markdown(result: dict[str, Any]) -> str:
    rows, sizes = result["rows"], result["sizes"]
    lines = [
        "# MetaBBO evaluation time against the number of distinct functions in a batch",
        "",
        f"Command: `{result['command']}`, measured at {result['measured_at']} on "
        f"{result['machine']['cpu_model']} ({result['machine']['cpus_usable']} CPUs shared with "
        f"other jobs), one torch thread, load average {result['load_average_start']:.2f} at the "
        f"start, {result['load_average_end']:.2f} at the end. B = {BATCH} random instances, "
        f"population {POPULATION}, D = {DIMENSION}, one evaluation of the population; each "
        "batch's functions are k of the easy split's 16 train functions (every function fills "
        f"the same share of rows at every k); medians of {result['repeats']} timings of "
        f"{result['calls']} calls, then the mean over the batches of each k.",
        "",
        "| k distinct functions | batches | staged ms (env) | staged, no blocks ms | "
        "by function ms (anchor) | staged / by function | bit-identical |",
        "|---:|---:|---:|---:|---:|---:|---|",
    ]
    for k in KS:
        of_k = [r for r in rows if r["k"] == k]
        staged, unblocked, anchor = (
            statistics.mean(r[f"{name}_ms"] for r in of_k) for name in IMPLEMENTATIONS
        )
        same = "yes" if all(r["bits_equal"] for r in of_k) else "**no**"
        lines.append(
            f"| {k} | {len(of_k)} | {staged:.2f} | {unblocked:.2f} | {anchor:.2f} | "
            f"{staged / anchor:.2f} | {same} |"
        )
    lines += [
        "",
        "A flat staged column means evaluation cost does not grow with the number of distinct "
        "functions; the anchor's shows how the per-function grouping grew.",
        "",
        "All 16 functions at larger batch sizes (each on B / 16 rows; fewer calls per timing "
        "as B grows, about the same work), µs per instance:",
        "",
        "| B | staged µs/instance (env) | staged, no blocks µs/instance | by function "
        "µs/instance (anchor) | staged / by function | bit-identical |",
        "|---:|---:|---:|---:|---:|---|",
    ]
    for row in sizes:
        staged, unblocked, anchor = (
            row[f"{name}_ms"] * 1e3 / row["batch"] for name in IMPLEMENTATIONS
        )
        same = "yes" if row["bits_equal"] else "**no**"
        lines.append(
            f"| {row['batch']} | {staged:.1f} | {unblocked:.1f} | {anchor:.1f} | "
            f"{staged / anchor:.2f} | {same} |"
        )
    floor = result["generation"]
    real, free = floor["real_ms_per_generation"], floor["free_ms_per_generation"]
    per_episode = 500 / BATCH
    lines += [
        "",
        f"A default generation at B = {BATCH} (medians of {result['repeats']} runs of "
        f"{result['generations']} generations, real and free objective interleaved): "
        f"{real:.2f} ms with the real objective, {free:.2f} ms with a free one, i.e. "
        f"{real * per_episode:.1f} and {free * per_episode:.1f} ms per 500-generation "
        "instance-episode: the DE operators, crowding selection, features and reward alone "
        f"take {free / real:.0%} of a generation.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="one shuffle, 3 repeats, 20 generations"
    )
    parser.add_argument("--shuffles", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 256, 1024])
    parser.add_argument("--generations", type=int, default=100, help="per timed env run")
    args = parser.parse_args(argv)
    if args.quick:
        args.shuffles, args.repeats, args.generations = 1, 3, 20
    small = [size for size in args.sizes if size < len(TRAIN)]
    if small:
        parser.error(f"--sizes must be at least {len(TRAIN)} (a row per function), got {small}")
    torch.set_num_threads(1)
    load = os.getloadavg()[0]
    groups = batches(args.shuffles, args.seed)
    rows = [compare(functions, BATCH, args) for _, functions in groups]
    every = next(functions for k, functions in groups if k == len(TRAIN))
    sizes = [compare(every, size, args) for size in args.sizes]
    generation = generation_floor(args)
    result = {
        "command": common.command_line(),
        "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_average_start": load,
        "load_average_end": os.getloadavg()[0],
        "repeats": args.repeats,
        "calls": args.calls,
        "rows": rows,
        "sizes": sizes,
        "generations": args.generations,
        "generation": generation,
        "machine": common.machine_info(["torch"]),
    }
    suffix = "_quick" if args.quick else ""
    stem = common.REPO_ROOT / "benchmarks" / "results" / f"{NAME}{suffix}"
    common.write_result_files(stem, result, markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
