"""The quick-start demo: train PPO briefly on ``LineFlow-v0`` and compare it with reference agents.

Run it with ``make demo`` (sets everything up first) or ``python -m gymforge.demo``. It trains
SB3's PPO through gymforge's SB3 adapter on the WaitingTime line, evaluates PPO, the closed-form
optimal controller and a random agent on held-out seeds, prints a table and writes a plot.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import AutoresetMode

ENV_ID = "LineFlow-v0"


def train_ppo(timesteps: int, num_envs: int, seed: int) -> Any:
    """PPO with the reference's LineFlow settings (n_steps 500, 5 epochs, γ 0.99, clip 0.2)."""
    from stable_baselines3 import PPO

    from gymforge.core.sb3 import as_sb3_vec_env

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
    model.learn(total_timesteps=timesteps, progress_bar=False)
    return model


def evaluate(policy: Callable[[np.ndarray], Any], seeds: Sequence[int]) -> dict[str, Any]:
    """Returns, parts, scrap and the cumulative-reward curve of the first seed."""
    env = gym.make(ENV_ID)
    returns, parts, scrap, curve = [], [], [], []
    for seed in seeds:
        obs, info = env.reset(seed=seed)
        total, done, rewards = 0.0, False, []
        while not done:
            obs, reward, terminated, truncated, info = env.step(policy(obs))
            total += reward
            rewards.append(reward)
            done = terminated or truncated
        returns.append(total)
        parts.append(info["n_parts"])
        scrap.append(info["n_scrap_parts"])
        if not curve:
            curve = list(np.cumsum(rewards))
    return {"returns": returns, "parts": parts, "scrap": scrap, "curve": curve}


def plot(results: dict[str, dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for name, result in results.items():
        left.plot(result["curve"], label=name)
    left.set_xlabel("step (time units)")
    left.set_ylabel("cumulative reward (parts − scrap)")
    left.set_title(f"{ENV_ID}: one held-out episode")
    left.legend()
    names = list(results)
    means = [np.mean(results[n]["returns"]) for n in names]
    stds = [np.std(results[n]["returns"]) for n in names]
    right.bar(names, means, yerr=stds, capsize=4, color=["C0", "C1", "C2"][: len(names)])
    right.set_ylabel("episode return")
    right.set_title("mean ± std over held-out seeds")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, path)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=20_000, help="PPO training steps")
    parser.add_argument("--num-envs", type=int, default=4)
    parser.add_argument("--eval-seeds", type=int, default=3, help="held-out seeds 1000, 1001, …")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("demo_output"))
    args = parser.parse_args(argv)

    import gymforge  # noqa: F401 - registers the ids
    from gymforge.agents import RandomAgent
    from gymforge.agents.lineflow import OptimalWaitingTimeAgent

    torch.set_num_threads(1)  # one thread is fastest for small MLPs on small machines
    start = time.perf_counter()
    print(f"Training PPO on {ENV_ID} for {args.timesteps} steps ({args.num_envs} envs) …")
    model = train_ppo(args.timesteps, args.num_envs, args.seed)
    train_seconds = time.perf_counter() - start

    env = gym.make(ENV_ID)
    optimal = OptimalWaitingTimeAgent(env)
    random_agent = RandomAgent(env)
    random_agent.reset(seed=args.seed)
    policies: dict[str, Callable[[np.ndarray], Any]] = {
        "ppo": lambda obs: model.predict(obs, deterministic=True)[0],
        "optimal": optimal.act,
        "random": random_agent.act,
    }
    seeds = [1000 + i for i in range(args.eval_seeds)]
    results = {name: evaluate(policy, seeds) for name, policy in policies.items()}

    print(f"\n{ENV_ID}, held-out seeds {seeds} (PPO trained {train_seconds:.0f} s)")
    print(f"{'policy':<10}{'return':>18}{'parts':>10}{'scrap':>10}")
    for name, r in results.items():
        ret = f"{np.mean(r['returns']):.1f} ± {np.std(r['returns']):.1f}"
        print(f"{name:<10}{ret:>18}{np.mean(r['parts']):>10.1f}{np.mean(r['scrap']):>10.1f}")
    path = args.out / "lineflow_demo.png"
    plot(results, path)
    print(f"\nplot written to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
