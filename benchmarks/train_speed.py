"""End-to-end training speed: the on-device trainer against SB3 PPO on the same vector env.

What it measures
    Training env steps per second (collection + updates, wall clock, after one warm-up
    iteration) on LineFlow WaitingTime (WT), WorkerAssignment k=3 (WA3) and ComplexLine k=3 (CL3)
    at B instances, all with the same rollout and update settings (16-step rollouts, 5 epochs,
    4 minibatches, clip 0.2) and the same network (separate 64-64 tanh actor and critic,
    SB3's default MlpPolicy):

    * ``torch``          the on-device trainer (``gymforge.baselines.ondevice``), 1 torch thread;
    * ``torch-shared``   the same with one shared 64-64 trunk (the network stated in the row);
    * ``torch-workers``  the env split over 2 processes (``num_workers=2``), the learner in this
      one (CPU only);
    * ``sb3``            SB3 PPO through ``as_sb3_vec_env`` on the same vector env, 1 thread
      (``n_steps=16, batch_size=B*16/4, n_epochs=5``);
    * ``sb3-default``    today's ``gymforge train ID --algo ppo --vectorized --n-envs 256`` with
      the shipped task config (upstream's n_steps 500, batch 500): one full rollout and update.

    The split of the torch rows (env / policy in collection / update) comes from the trainer's
    own timers. Targets on the 2-core CPU: WT >= 75k steps/s, CL3 >= 30k; >= 2x SB3 at the same
    settings; >= 6x the default path. With ``--device cuda`` only the torch rows run (SB3's
    numpy rollout buffer is the host path by design).

How to run (from the repository root)
    python -m benchmarks.train_speed                    # CPU, B=4096, WT WA3 CL3 (~6 min)
    python -m benchmarks.train_speed --quick            # B=256, one iteration each (CI dry run)
    python -m benchmarks.train_speed --device cuda --batch-sizes 4096 16384 65536
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import torch

from benchmarks import common

SCENARIOS = {
    "WT": "LineFlow-WaitingTime-v0",
    "WA3": "LineFlow-WorkerAssignment-v0",
    "CL3": "LineFlow-ComplexLine-v0",
}
TARGETS = {"WT": 75_000, "CL3": 30_000}
RESULTS = common.REPO_ROOT / "benchmarks" / "results"
N_STEPS, N_EPOCHS, N_MINIBATCHES = 16, 5, 4


def _vector_env(env_id: str, batch: int, device: str, workers: int = 1) -> Any:
    kwargs = {"num_workers": workers} if workers > 1 else {}
    return gym.make_vec(
        env_id, num_envs=batch, vectorization_mode="vector_entry_point", device=device, **kwargs
    )


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def run_torch(
    env_id: str, batch: int, device: str, iterations: int, shared: bool, workers: int = 1
) -> dict[str, Any]:
    from gymforge.baselines.ondevice.host import configure
    from gymforge.baselines.ondevice.ppo import PPO, PPOConfig

    configure(device, 1)
    env = _vector_env(env_id, batch, device, workers)
    cfg = PPOConfig(n_steps=N_STEPS, n_epochs=N_EPOCHS, n_minibatches=N_MINIBATCHES, shared=shared)
    trainer = PPO(env, cfg, seed=0)
    trainer.collect()
    trainer.update(0.0)
    _sync(device)
    trainer.timings.env = trainer.timings.policy = trainer.timings.update = 0.0
    times = []
    for i in range(iterations):
        t0 = time.perf_counter()
        trainer.collect()
        trainer.update(i / iterations)
        _sync(device)
        times.append(time.perf_counter() - t0)
    env.close()
    per = N_STEPS * batch
    total = sum(times)
    split = {k: round(v / total, 3) for k, v in trainer.timings.as_dict().items()}
    return {
        "steps_per_s": per / statistics.median(times),
        "iterations": iterations,
        "seconds": total,
        "split": split,
        "network": "shared 64-64 trunk, tanh"
        if shared
        else "separate 64-64 actor and critic, tanh",
    }


def run_sb3(env_id: str, batch: int, iterations: int) -> dict[str, Any]:
    from stable_baselines3 import PPO

    from gymforge.adapters.sb3 import as_sb3_vec_env

    torch.set_num_threads(1)
    venv = as_sb3_vec_env(_vector_env(env_id, batch, "cpu"))
    model = PPO(
        "MlpPolicy",
        venv,
        n_steps=N_STEPS,
        batch_size=N_STEPS * batch // N_MINIBATCHES,
        n_epochs=N_EPOCHS,
        seed=0,
        device="cpu",
    )
    per = N_STEPS * batch
    model.learn(per)  # warm-up iteration
    times = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        model.learn(per, reset_num_timesteps=False)
        times.append(time.perf_counter() - t0)
    venv.close()
    return {
        "steps_per_s": per / statistics.median(times),
        "iterations": iterations,
        "seconds": sum(times),
        "network": "separate 64-64 actor and critic, tanh (SB3 MlpPolicy)",
    }


def run_sb3_default(env_id: str, batch: int) -> dict[str, Any]:
    """One rollout + update of `gymforge train --vectorized --n-envs B` with the task config."""
    from stable_baselines3 import PPO

    from gymforge.adapters.sb3 import as_sb3_vec_env
    from gymforge.baselines.sb3.config import load_config

    torch.set_num_threads(1)
    cfg = load_config(env_id)
    kwargs = cfg.algo_kwargs("ppo")
    venv = as_sb3_vec_env(_vector_env(env_id, batch, "cpu"))
    model = PPO("MlpPolicy", venv, seed=0, device="cpu", **kwargs)
    per = kwargs["n_steps"] * batch
    t0 = time.perf_counter()
    model.learn(per)
    seconds = time.perf_counter() - t0
    venv.close()
    return {
        "steps_per_s": per / seconds,
        "iterations": 1,
        "seconds": seconds,
        "settings": kwargs,
        "n_envs": batch,
        "network": "separate 64-64 actor and critic, tanh (SB3 MlpPolicy)",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", nargs="+", default=list(SCENARIOS))
    parser.add_argument("--batch-sizes", nargs="+", type=int, default=[4096])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--default-envs", type=int, default=256, help="B of the default-path row")
    parser.add_argument("--quick", action="store_true", help="B=256, one iteration (dry run)")
    parser.add_argument("--out", type=Path, default=None, help="results stem (default by device)")
    args = parser.parse_args()
    scenarios = common.parse_scenarios(args.scenarios, SCENARIOS)
    batch_sizes = [256] if args.quick else args.batch_sizes
    iterations = 1 if args.quick else args.iterations
    on_cpu = args.device == "cpu"
    rows: list[dict[str, Any]] = []
    for key in scenarios:
        env_id = SCENARIOS[key]
        for batch in batch_sizes:
            systems: list[tuple[str, Any, tuple]] = [
                ("torch", run_torch, (env_id, batch, args.device, iterations, False)),
                ("torch-shared", run_torch, (env_id, batch, args.device, iterations, True)),
            ]
            if on_cpu:
                systems += [
                    ("torch-workers", run_torch, (env_id, batch, "cpu", iterations, False, 2)),
                    ("sb3", run_sb3, (env_id, batch, iterations)),
                ]
            for name, fn, fn_args in systems:
                result = fn(*fn_args)
                rows.append({"scenario": key, "batch": batch, "system": name, **result})
                print(f"{key} B={batch} {name}: {result['steps_per_s']:,.0f} steps/s", flush=True)
        if on_cpu:
            result = run_sb3_default(env_id, 64 if args.quick else args.default_envs)
            rows.append(
                {"scenario": key, "batch": result["n_envs"], "system": "sb3-default", **result}
            )
            print(f"{key} default path: {result['steps_per_s']:,.0f} steps/s", flush=True)
    info = common.machine_info(["torch", "stable_baselines3", "gymnasium"])
    if args.device.startswith("cuda"):
        info["cuda_device"] = torch.cuda.get_device_name(0)
    document = {"command": common.command_line(), "machine": info, "rows": rows}
    stem = args.out or RESULTS / ("train_speed" if on_cpu else "train_speed_cuda")
    if args.quick:
        print(json.dumps(rows, indent=1)[:2000])
        return 0
    common.write_json(stem.with_suffix(".json"), document, indent=1)
    common.write_atomic(stem.with_suffix(".md"), render(document))
    print(f"written {stem}.md / .json")
    return 0


def _best(rows: list[dict[str, Any]], key: str, batch: int, systems: tuple[str, ...]) -> Any:
    found = [
        r for r in rows if r["scenario"] == key and r["batch"] == batch and r["system"] in systems
    ]
    return max(found, key=lambda r: r["steps_per_s"]) if found else None


def render(document: dict[str, Any]) -> str:
    rows = document["rows"]
    lines = [
        "# Training speed: on-device trainer vs SB3 PPO (end-to-end env steps/s)",
        "",
        f"Command: `{document['command']}`. Machine: {json.dumps(document['machine'])}.",
        "",
        f"Every row: PPO with {N_STEPS}-step rollouts, {N_EPOCHS} epochs, {N_MINIBATCHES} "
        "minibatches, clip 0.2, one warm-up iteration, median over iterations; torch threads 1.",
        "",
        "| scenario | B | system | network | steps/s | split env / policy / update |",
        "|---|---:|---|---|---:|---|",
    ]
    for r in rows:
        split = r.get("split")
        split_text = (
            f"{split['env']:.0%} / {split['policy']:.0%} / {split['update']:.0%}" if split else "—"
        )
        lines.append(
            f"| {r['scenario']} | {r['batch']} | {r['system']} | {r['network']} | "
            f"{r['steps_per_s']:,.0f} | {split_text} |"
        )
    lines += ["", "## Against the targets", ""]
    for key in sorted({r["scenario"] for r in rows}):
        for batch in sorted(
            {r["batch"] for r in rows if r["scenario"] == key and r["system"] != "sb3-default"}
        ):
            best = _best(rows, key, batch, ("torch", "torch-shared", "torch-workers"))
            same_net = _best(rows, key, batch, ("torch", "torch-workers"))
            sb3 = _best(rows, key, batch, ("sb3",))
            default = next(
                (r for r in rows if r["scenario"] == key and r["system"] == "sb3-default"), None
            )
            parts = [
                f"**{key} B={batch}**: best torch {best['steps_per_s']:,.0f} ({best['system']})"
            ]
            if key in TARGETS:
                ok = best["steps_per_s"] >= TARGETS[key]
                parts.append(f"target {TARGETS[key]:,}: {'met' if ok else 'NOT met'}")
            if sb3 is not None and same_net is not None:
                ratio = same_net["steps_per_s"] / sb3["steps_per_s"]
                parts.append(
                    f"vs SB3 at the same network {ratio:.2f}x ({same_net['system']}; >= 2x "
                    f"{'met' if ratio >= 2 else 'NOT met'})"
                )
            if default is not None:
                ratio = best["steps_per_s"] / default["steps_per_s"]
                parts.append(
                    f"vs the default path (B={default['batch']}) {ratio:.1f}x (>= 6x "
                    f"{'met' if ratio >= 6 else 'NOT met'})"
                )
            lines.append("- " + "; ".join(parts))
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
