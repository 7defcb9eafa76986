"""The quick-start demo: train PPO on ``LineFlow-v0`` for about a minute and compare it with the
optimal controller and a random agent.

Run it with ``make demo`` (sets everything up first) or ``python -m gymforge.demo``. By default it
trains with the on-device trainer (:mod:`gymforge.baselines.ondevice`) on the batched torch
engine, many lines at once, checks the policy every few hundred thousand steps on two
validation seeds of the exact SimPy engine and keeps the best, then evaluates PPO, the
closed-form optimal controller and a random agent on held-out seeds of the SimPy engine, prints
a table (with the training throughput) and writes a plot with the learning curve.
``--backend sb3`` trains SB3's PPO instead (the path before the on-device trainer).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import AutoresetMode

from gymforge.agents.episode import PolicyAgent, run_episode
from gymforge.core.extras import require

ENV_ID = "LineFlow-v0"
#: held-out test seeds 2**62 + 1000 + k; validation (checkpoint choice) uses 2**62 + k
TEST_SEED_BASE = 2**62 + 1000
RECORDED_SPEED = (
    Path(__file__).resolve().parent.parent / "benchmarks" / "results" / "train_speed.json"
)


def train_torch(
    timesteps: int, seed: int, device: str, out: Path, eval_every: int
) -> tuple[Callable[[np.ndarray], Any], dict[str, Any]]:
    """On-device PPO with the packaged WaitingTime settings; returns the best policy on the
    validation seeds and a summary (throughput, learning curve)."""
    from gymforge.baselines.ondevice.agent import TorchPolicyAgent
    from gymforge.baselines.ondevice.run import train

    result = train(
        ENV_ID,
        "ppo",
        timesteps,
        seed=seed,
        out=out,
        device=device,
        overrides={"eval": {"every": eval_every, "episodes": 2}, "checkpoint_every": eval_every},
        tensorboard=False,
        progress_bar=False,
        log=lambda message: None,
    )
    curve = [(e["timesteps"], e["mean_return"]) for e in result.evaluations]
    best = max(result.evaluations, key=lambda e: (e["mean_return"], e["timesteps"]))
    folder = (
        out
        if best["timesteps"] == result.steps
        else out / "checkpoints" / f"step_{best['timesteps']}"
    )
    agent = TorchPolicyAgent(folder)
    summary = {
        "steps": result.steps,
        "steps_per_s": result.steps_per_s,
        "curve": curve,
        "chosen_at": best["timesteps"],
    }
    return agent.act, summary


def train_sb3(
    timesteps: int, num_envs: int, seed: int
) -> tuple[Callable[[np.ndarray], Any], dict[str, Any]]:
    """SB3's PPO with the reference's LineFlow settings (n_steps 500, 5 epochs, γ 0.99, clip
    0.2) on ``num_envs`` SimPy envs."""
    from stable_baselines3 import PPO

    from gymforge.adapters.sb3 import as_sb3_vec_env

    vector_env = gym.make_vec(
        ENV_ID,
        num_envs=num_envs,
        vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP},
    )
    vec_env = as_sb3_vec_env(vector_env)
    vec_env.seed(seed)
    model = PPO(
        "MlpPolicy",
        vec_env,
        n_steps=500,
        batch_size=500,
        n_epochs=5,
        gamma=0.99,
        clip_range=0.2,
        seed=seed,
        device="cpu",
        verbose=0,
    )
    start = time.perf_counter()
    model.learn(total_timesteps=timesteps, progress_bar=False)
    seconds = time.perf_counter() - start
    summary = {
        "steps": model.num_timesteps,
        "steps_per_s": model.num_timesteps / seconds,
        "curve": [],
    }
    return (lambda obs: model.predict(obs, deterministic=True)[0]), summary


def evaluate(policy: Callable[[np.ndarray], Any], seeds: Sequence[int]) -> dict[str, Any]:
    """Returns, parts, scrap and the cumulative-reward curve of the first seed."""
    env = gym.make(ENV_ID)
    agent = PolicyAgent(policy)
    returns, parts, scrap, curve = [], [], [], []
    for seed in seeds:
        rewards: list[float] = []
        episode = run_episode(
            env, agent, seed, on_step=lambda *step, kept=rewards: kept.append(step[2])
        )
        returns.append(episode.total_return)
        parts.append(episode.final_info["n_parts"])
        scrap.append(episode.final_info["n_scrap_parts"])
        if not curve:
            curve = list(np.cumsum(rewards))
    return {"returns": returns, "parts": parts, "scrap": scrap, "curve": curve}


def recorded_speeds() -> dict[str, float]:
    """WaitingTime training throughput per system in the recorded benchmark (B=4096, same
    network and settings for ``torch`` and ``sb3``; ``sb3-default`` is `gymforge train
    --vectorized --n-envs 256` with the task config)."""
    try:
        rows = json.loads(RECORDED_SPEED.read_text())["rows"]
    except (OSError, ValueError, KeyError):
        return {}  # an installed package without the benchmark results
    return {r["system"]: float(r["steps_per_s"]) for r in rows if r["scenario"] == "WT"}


def plot(results: dict[str, dict[str, Any]], curve: list[tuple[int, float]], path: Path) -> None:
    matplotlib = require("matplotlib", "the demo's figure")

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (learning, episode, bars) = plt.subplots(1, 3, figsize=(15, 4))
    if curve:
        steps, values = zip(*curve, strict=True)
        learning.plot(np.array(steps) / 1e6, values, marker="o", label="ppo (validation seeds)")
    optimal = np.mean(results["optimal"]["returns"])
    learning.axhline(optimal, color="C1", linestyle="--", label="optimal")
    learning.axhline(0.95 * optimal, color="C1", linestyle=":", label="95% of optimal")
    learning.set_xlabel("training steps (millions)")
    learning.set_ylabel("episode return (SimPy engine)")
    learning.set_title("learning curve")
    learning.legend(fontsize=8)
    for name, result in results.items():
        episode.plot(result["curve"], label=name)
    episode.set_xlabel("step (time units)")
    episode.set_ylabel("cumulative reward (parts − scrap)")
    episode.set_title(f"{ENV_ID}: one held-out episode")
    episode.legend()
    names = list(results)
    means = [np.mean(results[n]["returns"]) for n in names]
    stds = [np.std(results[n]["returns"]) for n in names]
    bars.bar(names, means, yerr=stds, capsize=4, color=["C0", "C1", "C2"][: len(names)])
    bars.set_ylabel("episode return")
    bars.set_title("mean ± std over held-out seeds")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, path)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("torch", "sb3"), default="torch")
    parser.add_argument(
        "--timesteps", type=int, default=None, help="PPO training steps (torch 1M, sb3 20k)"
    )
    parser.add_argument("--device", default="cpu", help="torch backend: cpu or cuda")
    parser.add_argument("--num-envs", type=int, default=4, help="sb3 backend: SimPy envs")
    parser.add_argument(
        "--eval-every", type=int, default=250_000, help="torch: validation interval"
    )
    parser.add_argument("--eval-seeds", type=int, default=5, help="held-out test seeds")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("demo_output"))
    args = parser.parse_args(argv)

    import gymforge  # noqa: F401 - registers the ids
    from gymforge.agents import RandomAgent
    from gymforge.agents.lineflow import OptimalWaitingTimeAgent

    torch.set_num_threads(1)  # one thread is fastest for small MLPs on small machines
    timesteps = args.timesteps or (1_000_000 if args.backend == "torch" else 20_000)
    from gymforge.core.devices import check_device
    from gymforge.core.outputs import check_writable

    try:  # before any training: a bad device or folder would otherwise lose it
        check_device(args.device, "--device")
        check_writable(args.out, "--out")
    except ValueError as error:
        raise SystemExit(f"demo: {error}") from None
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    if args.backend == "torch":
        run = args.out / "run"
        if run.exists():
            import shutil

            shutil.rmtree(run)
        print(
            f"Training PPO on {ENV_ID}'s batched engine ({args.device}) for {timesteps:,} steps …"
        )
        ppo, summary = train_torch(timesteps, args.seed, args.device, run, args.eval_every)
    else:
        print(f"Training SB3 PPO on {ENV_ID} for {timesteps} steps ({args.num_envs} envs) …")
        ppo, summary = train_sb3(timesteps, args.num_envs, args.seed)
    train_seconds = time.perf_counter() - start

    env = gym.make(ENV_ID)
    optimal = OptimalWaitingTimeAgent(env)
    random_agent = RandomAgent(env)
    random_agent.reset(seed=args.seed)
    policies: dict[str, Callable[[np.ndarray], Any]] = {
        "ppo": ppo,
        "optimal": optimal.act,
        "random": random_agent.act,
    }
    seeds = [TEST_SEED_BASE + i for i in range(args.eval_seeds)]
    results = {name: evaluate(policy, seeds) for name, policy in policies.items()}

    print(
        f"\n{ENV_ID}, {len(seeds)} held-out seeds 2**62 + 1000 + k (PPO: {summary['steps']:,} "
        f"steps in {train_seconds:.0f} s with evaluations, {args.backend} backend)"
    )
    print(f"{'policy':<10}{'return':>18}{'parts':>10}{'scrap':>10}{'% of optimal':>15}")
    optimal_mean = float(np.mean(results["optimal"]["returns"]))
    for name, r in results.items():
        ret = f"{np.mean(r['returns']):.1f} ± {np.std(r['returns']):.1f}"
        share = f"{100 * np.mean(r['returns']) / optimal_mean:.1f}%"
        print(
            f"{name:<10}{ret:>18}{np.mean(r['parts']):>10.1f}{np.mean(r['scrap']):>10.1f}{share:>15}"
        )
    print(
        f"\ntraining throughput: {summary['steps_per_s']:,.0f} env steps/s ({args.backend} backend)"
    )
    recorded = recorded_speeds()
    if {"torch", "sb3", "sb3-default"} <= set(recorded):
        print(
            f"recorded (benchmarks/results/train_speed.md, WaitingTime, B=4096, same network and "
            f"settings): on-device {recorded['torch']:,.0f} vs SB3 {recorded['sb3']:,.0f} env "
            f"steps/s; SB3 with the shipped task config (256 envs) {recorded['sb3-default']:,.0f}"
        )
    if summary.get("chosen_at"):
        print(f"policy kept: the best on the validation seeds, at {summary['chosen_at']:,} steps")
    path = args.out / "lineflow_demo.png"
    plot(results, summary["curve"], path)
    print(f"plot written to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
