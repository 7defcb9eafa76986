"""``gymforge train ID --algo NAME [options]`` for the SB3 / sb3-contrib algorithms.

Examples::

    gymforge train LineFlow-WaitingTime-v0 --algo ppo --steps 300000 --seed 11 --out runs/wt-ppo
    gymforge train Probe-Match-v0 --algo dqn --steps 2000 --config my.yaml
    gymforge train LineFlow-WaitingTime-v0 --algo ppo --steps 600000 --resume runs/wt-ppo
    gymforge train LineFlow-WaitingTime-v0 --algo ppo --steps 100000 --vectorized --device cuda
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from gymforge.baselines.sb3.algorithms import ALGORITHMS
from gymforge.baselines.training.cli import add_run_options, report, run_options

#: the options of this trainer that ``train`` takes as they are (the shared ones: ``run_options``)
SB3_OPTIONS = ("vectorized", "device", "policy_device", "verbose", "save_replay_buffer")


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
    add_run_options(parser, "runs/ID/ALGO-seedS", "held-out eval interval")
    parser.add_argument(
        "--save-replay-buffer", action="store_true", help="DQN/SAC: keep the final replay buffer"
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--verbose", type=int, default=0, help="SB3 verbosity (0, 1, 2)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    return parser


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
    command = ["gymforge", "train", env_id, "--algo", algo, *argv]
    sb3_options = {name: getattr(args, name) for name in SB3_OPTIONS}
    result = train(**run_options(args, env_id, algo, command), **sb3_options)
    report(
        result,
        args.json,
        f"trained {algo} on {env_id} for {result.steps} steps in {result.wall_s:.1f} s",
        f"saved to {result.out}/model.zip (+ config.json)",
    )
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
