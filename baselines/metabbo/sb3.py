"""Online RL baseline on ``MetaBBO`` ids: PPO or A2C (Stable-Baselines3) on the batched env.

``train_sb3(env_id, argv)`` has the ``gymforge train`` trainer signature. The generic SB3 trainers
of :mod:`gymforge.baselines.sb3` already own ``--algo ppo``/``a2c`` in ``gymforge train``, so this
one is reached as ``python -m gymforge.baselines.metabbo.sb3 MetaBBO-v0 --steps 20000`` and adds
what MetaBBO needs: env keyword arguments (preset, split, dimension, ...) and training on the
train subset through the batched torch env, then a test-split evaluation with
:func:`gymforge.envs.metabbo.metrics.evaluate`. :class:`SB3PolicyAgent` plays a saved model.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

import gymforge  # noqa: F401 - registers the ids
from gymforge.baselines.metabbo.common import as_batch, unbatch
from gymforge.core.sb3 import as_sb3_vec_env

__all__ = ["ALGORITHMS", "SB3PolicyAgent", "train_sb3"]

ALGORITHMS = ("ppo", "a2c")


def _algorithm(name: str) -> Any:
    from stable_baselines3 import A2C, PPO

    return {"ppo": PPO, "a2c": A2C}[name]


class SB3PolicyAgent:
    """Deterministic policy of a saved SB3 model (``reset``/``act`` agent protocol)."""

    def __init__(self, path: str | Path, algo: str = "ppo") -> None:
        if algo not in ALGORITHMS:
            raise ValueError(f"algo must be one of {ALGORITHMS}, got {algo!r}")
        self.model = _algorithm(algo).load(str(path), device="cpu")

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> np.ndarray:
        obs, single = as_batch(observation)
        action, _ = self.model.predict(obs.astype(np.float32), deterministic=True)
        return unbatch(action, single)


def build_parser(env_id: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=f"python -m gymforge.baselines.metabbo.sb3 {env_id}",
        description=f"Train an SB3 policy online on {env_id}'s train subset, then evaluate it.",
    )
    p.add_argument("--algo", default="ppo", choices=ALGORITHMS)
    p.add_argument("--steps", type=int, default=20_000, help="total env steps (generations)")
    p.add_argument("--num-envs", type=int, default=16, help="batched training instances")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--env-kwargs", default="{}", help='JSON env kwargs, e.g. \'{"split": "difficult"}\''
    )
    p.add_argument("--out", type=Path, default=None, help="model path (.zip); default runs/...")
    p.add_argument("--eval-seeds", type=int, default=0, help="test-split seeds (0: skip)")
    p.add_argument("--threads", type=int, default=1)
    return p


def train_sb3(env_id: str, argv: list[str]) -> int:
    """Train, save, optionally evaluate; prints a JSON summary. Returns 0."""
    args = build_parser(env_id).parse_args(argv)
    if args.steps < 1 or args.num_envs < 1:
        raise ValueError(f"--steps and --num-envs must be >= 1, got {args.steps}, {args.num_envs}")
    try:
        env_kwargs = json.loads(args.env_kwargs)
    except json.JSONDecodeError as exc:
        raise ValueError(f"--env-kwargs must be a JSON object, got {args.env_kwargs!r}") from exc
    if not isinstance(env_kwargs, dict):
        raise ValueError(f"--env-kwargs must be a JSON object, got {args.env_kwargs!r}")
    torch.set_num_threads(args.threads)
    venv = gym.make_vec(
        env_id, num_envs=args.num_envs, vectorization_mode="vector_entry_point", **env_kwargs
    )
    model = _algorithm(args.algo)(
        "MlpPolicy",
        as_sb3_vec_env(venv),
        n_steps=max(8, 2048 // args.num_envs),
        seed=args.seed,
        device="cpu",
        verbose=0,
    )
    model.learn(total_timesteps=args.steps)
    out = args.out or Path("runs") / env_id / f"{args.algo}-seed{args.seed}.zip"
    out.parent.mkdir(parents=True, exist_ok=True)
    model.save(str(out))
    summary: dict[str, Any] = {"env_id": env_id, "algo": args.algo, "model": str(out)}
    if args.eval_seeds > 0:
        from gymforge.envs.metabbo.metrics import evaluate

        spec_kwargs = dict(gym.spec(env_id).kwargs)
        keep = ("preset", "split", "dimension", "population_size", "max_generations")
        eval_kwargs = {k: v for k, v in {**spec_kwargs, **env_kwargs}.items() if k in keep}
        result = evaluate(SB3PolicyAgent(out, args.algo), seeds=args.eval_seeds, **eval_kwargs)
        summary |= {k: result[k] for k in ("perf", "log10_error", "aei")}
    print(json.dumps(summary))
    return 0


def main(argv: list[str] | None = None) -> int:
    import sys

    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0].startswith("-"):
        raise SystemExit("usage: python -m gymforge.baselines.metabbo.sb3 ENV_ID [options]")
    return train_sb3(argv[0], argv[1:])


if __name__ == "__main__":
    raise SystemExit(main())
