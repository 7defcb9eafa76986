"""One GPU check of every family: agreement with the CPU, syncs, batch independence, throughput,
the on-device trainer.

Per representative id of each family (``IDS``; of MetaBBO and the confounder stream the v1 ids,
whose resets draw on the device from counter-based streams): the same batch on the CPU and on ``--device``
step by step (fraction of bit-equal values and the largest difference per field), device-to-host
synchronisations per ``step`` (CUDA only, ``torch.cuda.set_sync_debug_mode``), batch independence
on the device, and env steps/s over a range of batch sizes. Then the on-device PPO trainer on
WaitingTime, and Q-Mamba's offline training speed at the paper's shapes (trajectories of 500
steps, batch 64; timing only, on synthetic data of the Alg0 dataset's shapes), extrapolated to
an epoch of 10,000 trajectories and to the paper's 300 epochs. Writes ``gpu_check.json`` and
``gpu_check.md`` to ``--out``.

    python -m benchmarks.gpu_check --device cuda                   # ~5 minutes on a GPU
    python -m benchmarks.gpu_check --device cpu --quick --out DIR  # the dry run CI runs

``benchmarks/gpu_check.sh`` runs it on a bare GPU machine (installing carried wheels first).
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

IDS = (
    "LineFlow-WaitingTime-v0",
    "LineFlow-ComplexLine-v0",
    "MetaBBO-v1",
    "OffCMAB-Cascade-v0",
    "OffCMAB-InfluenceMax-v0",
    "MinMaxTuning-v0",
    "ConfounderStream-v1",
)
FULL = {"agreement": (256, 50), "syncs": (256, 20), "batches": (4096, 16384, 65536), "seconds": 1.5}
QUICK = {"agreement": (8, 5), "syncs": (8, 3), "batches": (16, 64), "seconds": 0.2}


def throughput(env_id: str, device: str, batch: int, seconds: float) -> float:
    """Env steps per second of ``env_id`` at ``batch`` on ``device`` (random actions, after a
    warm-up; timed until ``seconds`` have passed, synchronising at the end)."""
    import gymnasium as gym

    from gymforge.checks.golden import _actions

    env = gym.make_vec(
        env_id, num_envs=batch, vectorization_mode="vector_entry_point", device=device
    )
    try:
        env.reset(seed=0)
        actions = [
            torch.as_tensor(
                _actions(env.single_action_space, np.random.default_rng(s), batch), device=device
            )
            for s in range(4)
        ]
        for action in actions:
            env.step(action)
        _synchronize(device)
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            env.step(actions[steps % len(actions)])
            steps += 1
        _synchronize(device)
        return batch * steps / (time.perf_counter() - start)
    finally:
        env.close()


def _synchronize(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def check_id(env_id: str, device: str, sizes: dict[str, Any]) -> dict[str, Any]:
    from gymforge.checks.batch_and_device import (
        batch_independence_problem,
        device_agreement,
        syncs_per_step,
    )

    row: dict[str, Any] = {"id": env_id}
    started = time.perf_counter()
    try:
        row["agreement"] = device_agreement(env_id, device, *sizes["agreement"])
        row["syncs_per_step"] = syncs_per_step(env_id, device, *sizes["syncs"])
        row["batch_independence"] = batch_independence_problem(env_id, device) or "same"
        row["steps_per_s"] = {
            str(b): throughput(env_id, device, b, sizes["seconds"]) for b in sizes["batches"]
        }
    except Exception as error:  # (one family's failure must not hide the others' figures)
        row["error"] = f"{type(error).__name__}: {error}"
    row["seconds"] = time.perf_counter() - started
    return row


def check_trainer(device: str, quick: bool) -> dict[str, Any]:
    from gymforge.baselines.ondevice.run import train

    steps, n_envs = (2048, 64) if quick else (4_000_000, 16384)
    started = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory() as folder:
            result = train(
                "LineFlow-WaitingTime-v0", "ppo", steps, out=Path(folder) / "run", n_envs=n_envs,
                device=device, tensorboard=False, log=lambda message: None,
            )  # fmt: skip
            summary = {"trained_steps": result.steps, "steps_per_s": result.steps_per_s}
    except Exception as error:
        return {"error": f"{type(error).__name__}: {error}"}
    return {"steps": steps, "n_envs": n_envs, "seconds": time.perf_counter() - started, **summary}


#: Q-Mamba's paper-scale training: trajectories per epoch, epochs, batch, steps per trajectory
QMAMBA_PAPER = {"trajectories": 10_000, "epochs": 300, "batch_size": 64, "horizon": 500}


def check_qmamba(device: str, quick: bool) -> dict[str, Any]:
    """Seconds per minibatch of Q-Mamba training on ``device`` at the paper's shapes (Alg0: nine
    features, three action bins of 16), from one epoch over ``batches`` minibatches after a
    warm-up epoch; extrapolated to a 10,000-trajectory epoch and to 300 epochs."""
    from gymforge.agents.metabbo.train import TrainConfig, fit

    batch, horizon = QMAMBA_PAPER["batch_size"], QMAMBA_PAPER["horizon"]
    batches = 2 if quick else 20
    if quick:
        horizon = 20
    rng = np.random.default_rng(0)
    n = batch * batches
    data = {
        "observations": rng.random((n, horizon, 9), dtype=np.float32),
        "actions": rng.integers(0, 16, (n, horizon, 3)),
        "rewards": rng.random((n, horizon), dtype=np.float32) / horizon,
        "valid": np.ones((n, horizon), dtype=bool),
    }
    try:
        fit(data, train=TrainConfig(epochs=1, batch_size=batch), device=device)  # warm-up
        result = fit(data, train=TrainConfig(epochs=1, batch_size=batch), device=device)
    except Exception as error:
        return {"error": f"{type(error).__name__}: {error}"}
    per_batch = result.seconds / batches
    epoch = per_batch * math.ceil(QMAMBA_PAPER["trajectories"] / batch)
    return {
        "batch_size": batch,
        "horizon": horizon,
        "batches_timed": batches,
        "seconds_per_batch": per_batch,
        "seconds_per_paper_epoch": epoch,
        "hours_for_paper_epochs": epoch * QMAMBA_PAPER["epochs"] / 3600,
    }


def environment(device: str) -> dict[str, Any]:
    info = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "python": platform.python_version(),
        "device": device,
    }
    if device.startswith("cuda") and torch.cuda.is_available():
        info["device_name"] = torch.cuda.get_device_name(0)
    return info


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"# GPU check on `{result['environment']['device']}`",
        "",
        f"Command: `{result['command']}`. Environment: {json.dumps(result['environment'])}.",
        "",
        "| id | obs equal | reward equal | max obs diff | syncs/step | batch independence | steps/s |",
        "|---|---:|---:|---:|---:|---|---|",
    ]
    for row in result["ids"]:
        if "error" in row:
            lines.append(f"| {row['id']} | error: {row['error']} | | | | | |")
            continue
        agreement = row["agreement"]
        rates = ", ".join(f"B={b}: {r:,.0f}" for b, r in row["steps_per_s"].items())
        syncs = "–" if row["syncs_per_step"] is None else f"{row['syncs_per_step']:.1f}"
        lines.append(
            f"| {row['id']} | {agreement['obs']['equal_fraction']:.4f} | "
            f"{agreement['reward']['equal_fraction']:.4f} | {agreement['obs']['max_abs_diff']:.3g} | "
            f"{syncs} | {row['batch_independence']} | {rates} |"
        )
    lines += ["", f"Trainer: {json.dumps(result['trainer'])}", ""]
    lines += [f"Q-Mamba training: {json.dumps(result['qmamba'])}", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="one GPU check of every family")
    parser.add_argument("--device", default="cuda", help="device to check against the CPU")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (the CPU dry run)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/gpu"))
    parser.add_argument("--ids", nargs="+", default=list(IDS), help="ids to check")
    args = parser.parse_args(argv)
    from gymforge.baselines.ondevice.run import check_device

    try:
        check_device(args.device)
    except ValueError as error:
        print(f"gpu_check: {error}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    sizes = QUICK if args.quick else FULL
    result: dict[str, Any] = {
        "command": " ".join(["python", "-m", "benchmarks.gpu_check", *(argv or sys.argv[1:])]),
        "environment": environment(args.device),
        "sizes": sizes,
        "ids": [],
    }
    for env_id in args.ids:
        row = check_id(env_id, args.device, sizes)
        result["ids"].append(row)
        print(
            f"{env_id}: {'error ' + row['error'] if 'error' in row else 'done'} ({row['seconds']:.1f} s)",
            flush=True,
        )
    result["trainer"] = check_trainer(args.device, args.quick)
    result["qmamba"] = check_qmamba(args.device, args.quick)
    (args.out / "gpu_check.json").write_text(json.dumps(result, indent=1) + "\n")
    (args.out / "gpu_check.md").write_text(markdown(result))
    print(f"wrote {args.out / 'gpu_check.md'}")
    failed = (
        [row["id"] for row in result["ids"] if "error" in row]
        + (["trainer"] if "error" in result["trainer"] else [])
        + (["qmamba"] if "error" in result["qmamba"] else [])
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
