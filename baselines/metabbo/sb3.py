"""Online RL baseline on ``MetaBBO`` ids: PPO or A2C (Stable-Baselines3) on the batched env.

``train_sb3(env_id, argv)`` has the ``gymforge train`` trainer signature. The generic SB3 trainers
of :mod:`gymforge.baselines.sb3` already own ``--algo ppo``/``a2c`` in ``gymforge train``, so this
one is reached as ``python -m gymforge.baselines.metabbo.sb3 MetaBBO-v0 --steps 20000`` and adds
what MetaBBO needs: env keyword arguments (preset, split, dimension, ...) and training on the
train subset through the batched torch env, then a test-split evaluation with
:func:`gymforge.envs.metabbo.metrics.evaluate`. :class:`SB3PolicyAgent` plays a saved model.

A trained model can also serve as the exploitation half of an offline dataset (Q-Mamba's experts
are online-trained RL configurators): the behaviour name ``sb3`` (:data:`BEHAVIOR_NAME`) plays the
model named by the environment variable ``GYMFORGE_METABBO_SB3_EXPERT`` (algorithm from
``GYMFORGE_METABBO_SB3_ALGO``, default ``ppo``; greedy actions, sampled ones with
``GYMFORGE_METABBO_SB3_SAMPLE=1``)::

    GYMFORGE_METABBO_SB3_EXPERT=/tmp/ppo.zip gymforge dataset collect MetaBBO-v0 \
        --behavior mix --mu 0.5 --expert sb3 --episodes 512 --seed 1000 --out /tmp/ds

The name is added to :data:`gymforge.envs.metabbo.dataset.BEHAVIORS` by
:func:`~gymforge.baselines.metabbo.behaviors.register_behavior` (re-exported here), which the
MetaBBO ids' dataset collector (:func:`~gymforge.baselines.metabbo.behaviors.collect_cli`) and
the offline benchmark scripts call before looking behaviours up.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

import gymforge  # noqa: F401 - registers the ids
from gymforge.adapters.sb3 import as_sb3_vec_env
from gymforge.baselines.metabbo.behaviors import BEHAVIOR_NAME, collect_cli, register_behavior
from gymforge.baselines.metabbo.common import as_batch, unbatch

__all__ = [
    "ALGORITHMS",
    "BEHAVIOR_NAME",
    "EXPERT_ALGO_ENV",
    "EXPERT_MODEL_ENV",
    "EXPERT_SAMPLE_ENV",
    "SB3Expert",
    "SB3PolicyAgent",
    "collect_cli",
    "register_behavior",
    "train_sb3",
]

ALGORITHMS = ("ppo", "a2c")
#: environment variable with the saved model (``.zip``) the ``sb3`` behaviour plays
EXPERT_MODEL_ENV = "GYMFORGE_METABBO_SB3_EXPERT"
#: environment variable with that model's algorithm (``ppo`` or ``a2c``; default ``ppo``)
EXPERT_ALGO_ENV = "GYMFORGE_METABBO_SB3_ALGO"
#: environment variable: ``1`` samples the model's actions (seeded by ``reset(seed)``) instead of
#: playing its greedy ones
EXPERT_SAMPLE_ENV = "GYMFORGE_METABBO_SB3_SAMPLE"


def _algorithm(name: str) -> Any:
    from stable_baselines3 import A2C, PPO

    return {"ppo": PPO, "a2c": A2C}[name]


class SB3PolicyAgent:
    """Policy of a saved SB3 model (``reset``/``act`` agent protocol); greedy unless
    ``deterministic=False`` (then sampled, seeded by ``reset(seed)``)."""

    def __init__(
        self,
        path: str | Path,
        algo: str = "ppo",
        deterministic: bool = True,
        action_space: Any = None,
    ) -> None:
        from gymforge.baselines.sb3.zip_reader import load_policy

        if algo not in ALGORITHMS:
            raise ValueError(f"algo must be one of {ALGORITHMS}, got {algo!r}")
        self.model = load_policy(path, algo, action_space)  # read as data, nothing unpickled
        self.deterministic = deterministic

    def reset(self, seed: int | None = None) -> None:
        if not self.deterministic and seed is not None:
            self.model.set_random_seed(seed)  # the sampled actions' torch stream

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> np.ndarray:
        obs, single = as_batch(observation)
        action, _ = self.model.predict(obs.astype(np.float32), deterministic=self.deterministic)
        return unbatch(action, single)


class SB3Expert(SB3PolicyAgent):
    """Behaviour-policy factory ``SB3Expert(env)``: the model named by ``$GYMFORGE_METABBO_SB3_EXPERT``.

    Greedy actions, or sampled ones with ``GYMFORGE_METABBO_SB3_SAMPLE=1`` (the torch stream is
    seeded by ``reset(seed)``, so the sampled actions depend on the batch composition);
    ``path``/``algo`` override the environment variables. The model's action space must match
    the env's (same preset).
    """

    def __init__(self, env: Any = None, path: str | Path | None = None, algo: str | None = None):
        path = path if path is not None else os.environ.get(EXPERT_MODEL_ENV)
        if not path:
            raise ValueError(
                f"the {BEHAVIOR_NAME!r} behaviour needs a saved SB3 model: set {EXPERT_MODEL_ENV}"
            )
        if not Path(path).exists():
            raise FileNotFoundError(f"{EXPERT_MODEL_ENV}: no SB3 model at {str(path)!r}")
        sample = os.environ.get(EXPERT_SAMPLE_ENV, "0") not in ("", "0")
        algo = algo or os.environ.get(EXPERT_ALGO_ENV, "ppo")
        space = getattr(env, "single_action_space", getattr(env, "action_space", None))
        super().__init__(path, algo, not sample, action_space=space)
        self.path = str(path)
        #: recorded in a collected dataset's metadata (``behavior_provenance``)
        self.provenance = {
            "model": self.path,
            "model_sha256": hashlib.sha256(Path(path).read_bytes()).hexdigest(),
            "algo": algo,
            "actions": "sampled" if sample else "greedy",
        }
        if space is not None and tuple(space.shape) != tuple(self.model.action_space.shape):
            raise ValueError(
                f"SB3 model {self.path!r} acts in {self.model.action_space}, the env in {space}"
            )


ERROR_FLOOR = 1e-8


def log_error_reward_env(venv: Any, floor: float = ERROR_FLOOR) -> Any:
    """SB3 ``VecEnv`` wrapper whose reward is the log-scale improvement of the best error.

    ``(log10 e_{t-1} - log10 e_t) / (log10 e_0 - log10 floor)`` (errors floored at ``floor``),
    the same reward as Q-Mamba's ``--reward log_error`` training option: an episode's rewards
    sum to its normalised log10 error reduction, so late progress counts as much as early.
    """
    from stable_baselines3.common.vec_env import VecEnvWrapper

    class LogErrorReward(VecEnvWrapper):
        def reset(self):
            self.previous = np.full(self.num_envs, np.nan)
            return self.venv.reset()

        def step_wait(self):
            obs, _, dones, infos = self.venv.step_wait()
            reward = np.zeros(self.num_envs, dtype=np.float32)
            for i, info in enumerate(infos):
                e = np.log10(max(float(info["best_error"]), floor))
                e0 = np.log10(max(float(info["initial_error"]), floor))
                prev = e0 if np.isnan(self.previous[i]) else self.previous[i]
                span = e0 - np.log10(floor)
                reward[i] = (prev - e) / span if span > 0 else 0.0
                self.previous[i] = np.nan if dones[i] else e
            return obs, reward, dones, infos

    return LogErrorReward(venv)


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
    p.add_argument("--gamma", type=float, default=0.99, help="discount (1.0: the return is Perf)")
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--ent-coef", type=float, default=0.0, help="entropy bonus")
    p.add_argument("--n-steps", type=int, default=None, help="rollout steps per env")
    p.add_argument(
        "--reward",
        default="env",
        choices=("env", "log_error"),
        help="env: the env's Δe/e0; log_error: log-scale improvement (log_error_reward_env)",
    )
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
    sb3_venv = as_sb3_vec_env(venv)
    if args.reward == "log_error":
        sb3_venv = log_error_reward_env(sb3_venv)
    model = _algorithm(args.algo)(
        "MlpPolicy",
        sb3_venv,
        n_steps=args.n_steps or max(8, 2048 // args.num_envs),
        gamma=args.gamma,
        gae_lambda=args.gae_lambda,
        ent_coef=args.ent_coef,
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
