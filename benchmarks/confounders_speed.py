"""Speed of the confounder streams and of the R-MDN layer, each beside its anchor.

1. Stream generation, target >= 100,000 images/s: the whole default synthetic stream (5 stages of
   2N = 2048 images, batch 128, drawn, rendered and batched by ``SyntheticStream``), beside a
   NumPy per-image loop written after the reference's ``generate_data`` recipe (the anchor), and
   the batched env's ``step`` throughput (images per second over B instances).
2. R-MDN layer, target <= 1.5x BatchNorm: one training-mode forward (which includes the block RLS
   update) at batch 128 on the reference CNN's three feature shapes (16x28x28 and 32x24x24 conv
   maps, 84 fc features), against ``BatchNorm2d``/``BatchNorm1d`` training-mode forwards on the
   same tensors. Timings interleave the two layers; medians of repeated blocks.

Run: ``.venv/bin/python benchmarks/confounders_speed.py`` (``--quick``: fewer repetitions).
Writes ``benchmarks/results/confounders_speed.{json,md}``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common

from gymforge.agents.confounders.rmdn import RecursiveMetadataNorm, design_matrix
from gymforge.envs.confounders import SyntheticConfig, SyntheticStream
from gymforge.envs.confounders.gym_env import ConfounderStreamVecEnv
from gymforge.envs.confounders.synthetic import gaussian_kernel

RESULTS = common.REPO_ROOT / "benchmarks" / "results"
NAME = "confounders_speed"


def stream_images_per_second(seed: int) -> float:
    start = time.perf_counter()
    stream = SyntheticStream(SyntheticConfig(samples_per_group=1024), seed=seed, batch_size=128)
    count = 0
    for x, _c, _y, _stage in stream:
        count += x.shape[0]
    return count / (time.perf_counter() - start)


def numpy_loop_images_per_second(n_per_group: int, seed: int) -> float:
    """The anchor: one dataset of 2N images, image by image, as the reference's recipe reads."""
    kernel = gaussian_kernel(16).numpy()
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    cf = np.concatenate([rng.uniform(3, 5, n_per_group), rng.uniform(4, 6, n_per_group)])
    mf = np.concatenate([rng.uniform(3, 5, n_per_group), rng.uniform(4, 6, n_per_group)])
    x = np.zeros((2 * n_per_group, 32, 32))
    for i in range(2 * n_per_group):
        x[i, :16, :16] = kernel * mf[i]
        x[i, 16:, :16] = kernel * cf[i]
        x[i, 16:, 16:] = kernel * mf[i]
        x[i] += rng.normal(0, 0.01, size=(32, 32))
    return 2 * n_per_group / (time.perf_counter() - start)


def env_images_per_second(num_envs: int, steps: int) -> float:
    env = ConfounderStreamVecEnv(num_envs=num_envs, samples_per_group=1024, batch_size=128)
    env.reset(seed=0)
    action = torch.full((num_envs, 128), 0.5)
    start = time.perf_counter()
    for _ in range(steps):
        env.step(action)
    return num_envs * 128 * steps / (time.perf_counter() - start)


def layer_times(shape: tuple[int, ...], reps: int, blocks: int) -> dict[str, Any]:
    torch.manual_seed(0)
    batch = 128
    x = torch.randn(batch, *shape)
    y = torch.randint(0, 2, (batch,))
    design = design_matrix(y, 3 + 3 * torch.rand(batch))
    rmdn = RecursiveMetadataNorm(int(np.prod(shape))).train()
    bn = (
        torch.nn.BatchNorm2d(shape[0]) if len(shape) == 3 else torch.nn.BatchNorm1d(shape[0])
    ).train()
    for _ in range(5):  # warm-up
        rmdn(x, design)
        bn(x)
    r_times, b_times = [], []
    with torch.no_grad():
        for _ in range(blocks):
            start = time.perf_counter()
            for _ in range(reps):
                rmdn(x, design)
            r_times.append((time.perf_counter() - start) / reps)
            start = time.perf_counter()
            for _ in range(reps):
                bn(x)
            b_times.append((time.perf_counter() - start) / reps)
    r, b = statistics.median(r_times), statistics.median(b_times)
    return {
        "shape": list(shape),
        "features": int(np.prod(shape)),
        "rmdn_us": r * 1e6,
        "batchnorm_us": b * 1e6,
        "ratio": r / b,
        "pass": r / b <= 1.5,
    }


def markdown(data: dict[str, Any]) -> str:
    s = data["stream"]
    lines = [
        "# Confounder streams: generation and R-MDN layer speed",
        "",
        f"Run {data['when']} on {data['machine']['platform']}, {data['machine']['cpu_count']} CPUs, "
        f"one torch thread, **measured under load from other jobs on a shared 2-core machine**: "
        f"compare ratios, not absolute rates. Command: `{data['command']}`.",
        "",
        "## Stream generation (target >= 100,000 images/s)",
        "",
        "| what | images/s (median) | runs |",
        "|---|---:|---:|",
        f"| `SyntheticStream`, whole default stream (5 x 2048 images, batch 128) | {s['stream_median']:,.0f} | {len(s['stream_runs'])} |",
        f"| anchor: NumPy per-image loop after the reference recipe (2048 images) | {s['numpy_loop_median']:,.0f} | {len(s['numpy_loop_runs'])} |",
        f"| batched env `step`, B = {s['env_num_envs']} streams x 128 images | {s['env_median']:,.0f} | {len(s['env_runs'])} |",
        "",
        f"Target: **{'PASS' if s['pass'] else 'FAIL'}**; stream / NumPy loop = {s['stream_median'] / s['numpy_loop_median']:.1f}x.",
        "",
        "## R-MDN layer vs. BatchNorm, training-mode forward at batch 128 (target ratio <= 1.5)",
        "",
        "| features | R-MDN µs | BatchNorm µs | ratio | <= 1.5 |",
        "|---|---:|---:|---:|---|",
    ]
    for row in data["layers"]:
        shape = "x".join(str(v) for v in row["shape"])
        verdict = "PASS" if row["pass"] else "FAIL"
        lines.append(
            f"| {shape} ({row['features']:,}) | {row['rmdn_us']:,.0f} | {row['batchnorm_us']:,.0f} | {row['ratio']:.2f} | {verdict} |"
        )
    lines.append("")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    runs = 3 if args.quick else 7
    stream_runs = [stream_images_per_second(seed) for seed in range(runs)]
    numpy_runs = [numpy_loop_images_per_second(1024, seed) for seed in range(runs)]
    env_runs = [env_images_per_second(16, 20) for _ in range(runs)]
    stream_median = statistics.median(stream_runs)
    reps, blocks = (5, 5) if args.quick else (10, 11)
    layers = [layer_times(shape, reps, blocks) for shape in ((16, 28, 28), (32, 24, 24), (84,))]
    data = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": common.command_line(),
        "machine": common.machine_info(["torch", "numpy"]),
        "stream": {
            "stream_runs": stream_runs,
            "stream_median": stream_median,
            "numpy_loop_runs": numpy_runs,
            "numpy_loop_median": statistics.median(numpy_runs),
            "env_num_envs": 16,
            "env_runs": env_runs,
            "env_median": statistics.median(env_runs),
            "pass": stream_median >= 100_000,
        },
        "layers": layers,
    }
    common.write_json(RESULTS / f"{NAME}.json", data, indent=1)
    common.write_atomic(RESULTS / f"{NAME}.md", markdown(data))
    print(markdown(data))


if __name__ == "__main__":
    main()
