"""``gymforge train ID --algo NAME [options]`` for the SB3 / sb3-contrib algorithms.

Examples::

    gymforge train LineFlow-WaitingTime-v0 --algo ppo --steps 300000 --seed 11 --out runs/wt-ppo
    gymforge train Probe-Match-v0 --algo dqn --steps 2000 --config my.yaml
    gymforge train LineFlow-WaitingTime-v0 --algo ppo --steps 600000 --resume runs/wt-ppo
    gymforge train LineFlow-WaitingTime-v0 --algo ppo --steps 100000 --vectorized --device cuda
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from gymforge.baselines.sb3.algorithms import ALGORITHMS


def build_parser(env_id: str, algo: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=f"gymforge train {env_id} --algo {algo}",
        description=f"Train {algo} (Stable-Baselines3 / sb3-contrib) on {env_id}.",
    )
    parser.add_argument("--steps", type=int, required=True, help="total environment steps")
    parser.add_argument("--seed", type=int, default=0, help="run seed (training envs: seed + i)")
    parser.add_argument("--n-envs", type=int, help="parallel training envs (default: config)")
    parser.add_argument(
        "--vectorized", action="store_true", help="train on the id's batched torch vector env"
    )
    parser.add_argument("--device", default="cpu", help="torch device of the vectorized env")
    parser.add_argument("--policy-device", default="cpu", help="torch device of the policy")
    parser.add_argument("--config", metavar="FILE", help="YAML/JSON overriding the task defaults")
    parser.add_argument("--out", metavar="DIR", help="run folder (default runs/ID/ALGO-seedS)")
    parser.add_argument("--resume", metavar="DIR", help="continue a run folder or checkpoint")
    parser.add_argument("--eval-every", type=int, metavar="N", help="held-out eval interval")
    parser.add_argument("--eval-episodes", type=int, metavar="K", help="episodes per evaluation")
    parser.add_argument("--checkpoint-every", type=int, metavar="N", help="checkpoint interval")
    parser.add_argument(
        "--progress-bar",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar (default: when stderr is a terminal)",
    )
    parser.add_argument(
        "--save-replay-buffer", action="store_true", help="DQN/SAC: keep the final replay buffer"
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--verbose", type=int, default=0, help="SB3 verbosity (0, 1, 2)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    return parser


def config_overrides(args: argparse.Namespace) -> dict:
    """The config overrides of ``--eval-every``, ``--eval-episodes`` and ``--checkpoint-every``
    (in the config-file schema); with ``--resume`` none of them, nor ``--config``/``--n-envs``,
    may be given."""
    overrides: dict = {}
    if args.eval_every is not None or args.eval_episodes is not None:
        overrides["eval"] = {
            k: v
            for k, v in (("every", args.eval_every), ("episodes", args.eval_episodes))
            if v is not None
        }
    if args.checkpoint_every is not None:
        overrides["checkpoint_every"] = args.checkpoint_every
    if args.resume is not None and (args.config is not None or overrides or args.n_envs):
        raise ValueError(
            "--resume continues a run with its own settings; drop --config, --n-envs, "
            "--eval-every, --eval-episodes and --checkpoint-every"
        )
    return overrides


def run_cli(env_id: str, algo: str, argv: list[str]) -> int:
    """Parse ``argv`` and train; prints where the agent was saved."""
    args = build_parser(env_id, algo).parse_args(argv)
    import torch

    from gymforge.baselines.sb3.run import train

    if args.threads < 1:
        raise ValueError(f"--threads must be >= 1, got {args.threads}")
    torch.set_num_threads(args.threads)
    from gymforge.baselines.ondevice.host import keep_freed_memory

    keep_freed_memory()  # large update temporaries reuse heap pages (see ondevice.host)
    overrides = config_overrides(args)
    progress = sys.stderr.isatty() if args.progress_bar is None else args.progress_bar
    result = train(
        env_id,
        algo,
        args.steps,
        seed=args.seed,
        out=args.out,
        n_envs=args.n_envs,
        vectorized=args.vectorized,
        device=args.device,
        policy_device=args.policy_device,
        config_file=args.config,
        overrides=overrides or None,
        resume=args.resume,
        progress_bar=progress,
        verbose=args.verbose,
        save_replay_buffer=args.save_replay_buffer,
        command=["gymforge", "train", env_id, "--algo", algo, *argv],
    )
    last = result.evaluations[-1] if result.evaluations else None
    summary = {
        "out": str(result.out),
        "steps": result.steps,
        "wall_s": result.wall_s,
        "last_eval": {k: last[k] for k in ("timesteps", "mean_return", "std_return")}
        if last
        else None,
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"trained {algo} on {env_id} for {result.steps} steps in {result.wall_s:.1f} s")
        if last:
            print(
                f"held-out eval at {last['timesteps']} steps: "
                f"{last['mean_return']:.2f} ± {last['std_return']:.2f}"
            )
        print(f"saved to {result.out}/model.zip (+ config.json)")
    return 0


def _trainer(algo: str) -> Callable[[str, list[str]], int]:
    def trainer(env_id: str, argv: list[str]) -> int:
        return run_cli(env_id, algo, argv)

    trainer.__name__ = f"train_{algo}"
    trainer.__doc__ = f"``gymforge train ID --algo {algo}``: see :func:`run_cli`."
    return trainer


train_ppo = _trainer("ppo")
train_a2c = _trainer("a2c")
train_dqn = _trainer("dqn")
train_sac = _trainer("sac")
train_recurrentppo = _trainer("recurrentppo")
train_trpo = _trainer("trpo")

#: ``TRAINERS`` rows of :mod:`gymforge.commands.train`.
TRAINER_ENTRY_POINTS = {name: f"gymforge.baselines.sb3.cli:train_{name}" for name in ALGORITHMS}
